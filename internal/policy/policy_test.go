package policy

import (
	"strings"
	"testing"
)

func TestCleanRel(t *testing.T) {
	const root = "/work/repo"
	cases := []struct {
		p, want string
		err     string // substring of the error; "" means success
	}{
		{p: "main.go", want: "main.go"},
		{p: "./internal/x.go", want: "internal/x.go"},
		{p: "internal//policy/../tool/", want: "internal/tool"},
		{p: ".", want: "."},
		{p: "./", want: "."},
		{p: "a/..", want: "."},
		{p: ".ultra/state/x", want: ".ultra/state/x"},
		{p: "/work/repo", want: "."},
		{p: "/work/repo/", want: "."},
		{p: "/work/repo/cmd/ultra/main.go", want: "cmd/ultra/main.go"},
		{p: "/work/repo/a/../b", want: "b"},
		{p: "..", err: `".." escapes`},
		{p: "../other/x", err: `"../other/x" escapes`},
		{p: "a/../../x", err: `"a/../../x" escapes`},
		{p: "/etc/passwd", err: `"/etc/passwd" is outside the workspace`},
		{p: "/work/repository/x", err: "is outside the workspace"},
		{p: "/work/repo/../x", err: "is outside the workspace"},
		{p: "", err: "empty path"},
	}
	for _, tc := range cases {
		got, err := CleanRel(root, tc.p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CleanRel(%q) = %q, %v; want error containing %q", tc.p, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CleanRel(%q) = %q, %v; want %q", tc.p, got, err, tc.want)
		}
	}
	if got, err := CleanRel("/", "/etc/hosts"); err != nil || got != "etc/hosts" {
		t.Errorf("CleanRel(/, /etc/hosts) = %q, %v", got, err)
	}
	if got, err := CleanRel("/work/repo/", "/work/repo/x"); err != nil || got != "x" {
		t.Errorf("CleanRel with a trailing slash on root = %q, %v", got, err)
	}
}

func TestIsStatePath(t *testing.T) {
	cases := []struct {
		rel  string
		want bool
	}{
		{".ultra", true},
		{".ultra/", true},
		{".ultra/state/run-1/out.log", true},
		{"./.ultra/plan.md", true},
		{"a/../.ultra/x", true},
		{".ULTRA/x", true},
		{".Ultra", true},
		{".ultra./x", true},
		{"", false},
		{".", false},
		{"..", false},
		{".ultrafoo", false},
		{".ultra-old/x", false},
		{"ultra", false},
		{"src/.ultra/x", false},
		{"internal/policy/paths.go", false},
		{"../.ultra", false},
	}
	for _, tc := range cases {
		if got := IsStatePath(tc.rel); got != tc.want {
			t.Errorf("IsStatePath(%q) = %v, want %v", tc.rel, got, tc.want)
		}
	}
}

// TestCleanRelThenIsStatePath checks the way the two are meant to be used
// together: clean first, then ask.
func TestCleanRelThenIsStatePath(t *testing.T) {
	for p, want := range map[string]bool{
		"/work/repo/.ultra/state/x": true,
		"sub/../.ultra":             true,
		"/work/repo/src/main.go":    false,
	} {
		rel, err := CleanRel("/work/repo", p)
		if err != nil {
			t.Fatalf("CleanRel(%q): %v", p, err)
		}
		if got := IsStatePath(rel); got != want {
			t.Errorf("IsStatePath(CleanRel(%q) = %q) = %v, want %v", p, rel, got, want)
		}
	}
}
