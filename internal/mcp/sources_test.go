package mcp

import (
	"slices"
	"strings"
	"testing"
)

func TestParseOpenCode(t *testing.T) {
	text := `{
  // opencode's own settings are left alone
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "mem": {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-memory"], "environment": {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}},
    "gh": {"type": "remote", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer {env:GH_TOKEN}"}, "timeout": 5000,},
    /* off */ "old": {"type": "local", "command": ["old-server"], "enabled": false},
  },
}`
	got, err := ParseOpenCode("opencode.jsonc", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	if m := got["mem"]; m.Command != "npx" || !slices.Equal(m.Args, []string{"-y", "@modelcontextprotocol/server-memory"}) || m.Env["MEMORY_FILE_PATH"] != "/tmp/m.jsonl" {
		t.Fatalf("mem: %+v", m)
	}
	if g := got["gh"]; g.Type != HTTP || g.Headers["Authorization"] != "Bearer ${GH_TOKEN}" || g.Timeout != "5000ms" {
		t.Fatalf("gh: %+v", g)
	}
	for _, c := range []struct{ text, want string }{
		{`{"mcp": {"x": {"type": "local"}}}`, `o.json:1: server "x": a local server needs "command"`},
		{`{"mcp": {"x": {"type": "stdio", "command": ["a"]}}}`, `unknown type "stdio" (local or remote)`},
		{"{\n \"mcp\": {\"x\" 1}\n}", "o.json:2:14: invalid character '1'"},
	} {
		if _, err := ParseOpenCode("o.json", []byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}

func TestParseClaudeJSON(t *testing.T) {
	text := `{"numStartups": 3, "mcpServers": {"u": {"command": "user-server"}},
 "projects": {"/w/p": {"mcpServers": {"l": {"type": "http", "url": "https://x.example/mcp"}}, "disabledMcpjsonServers": ["noisy"], "history": []},
              "/w/other": {"mcpServers": {"o": {"command": "other"}}}}}`
	got, err := ParseClaudeJSON("/h/.claude.json", []byte(text), "/w/p")
	if err != nil {
		t.Fatal(err)
	}
	if got.User["u"].Command != "user-server" || got.Local["l"].URL != "https://x.example/mcp" || len(got.Local) != 1 || !slices.Equal(got.Disabled, []string{"noisy"}) {
		t.Fatalf("%+v", got)
	}
	if _, err := ParseClaudeJSON("/h/.claude.json", []byte(`{"mcpServers": {"u": {"cmd": "x"}}}`), "/w/p"); err == nil || !strings.Contains(err.Error(), `/h/.claude.json:1: server "u": unknown field "cmd"`) {
		t.Fatalf("%v", err)
	}
}

func TestStripJSONC(t *testing.T) {
	in := "{\"a\": \"// not a comment\", /* x */ \"b\": [1, 2,], // end\n}"
	want := "{\"a\": \"// not a comment\",         \"b\": [1, 2 ]        \n}"
	if got := string(StripJSONC([]byte(in))); got != want {
		t.Fatalf("%q\nwant %q", got, want)
	}
}
