package mcp

import (
	"strings"
	"testing"
)

func TestStrayPolicies(t *testing.T) {
	servers := []Server{
		{Name: "mem", Tools: map[string]string{"open_node": "deny", "read_graph": "ask", "*": "allow"}},
		{Name: "down", Tools: map[string]string{"anything": "deny"}},
	}
	got := StrayPolicies(servers, map[string][]string{"mem": {"open_nodes", "read_graph"}})
	if len(got) != 1 || !strings.Contains(got[0], `no tool "open_node"`) || !strings.Contains(got[0], `did you mean "open_nodes"?`) {
		t.Fatalf("%q", got)
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		t     string
		names []string
		want  string
	}{
		{"delete_entites", []string{"delete_entities", "read_graph"}, `did you mean "delete_entities"?`},
		{"zzz", []string{"b", "a"}, "it offers [a b]"},
		{"x", nil, "it offers no tools"},
	} {
		if got := Suggest(c.t, c.names); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.t, got, c.want)
		}
	}
}
