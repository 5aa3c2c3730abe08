package mcp

import (
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParseClaude(t *testing.T) {
	for _, c := range []struct {
		name, text, err string
		servers         int
	}{
		{"stdio and http", `{"mcpServers": {"a": {"command": "x", "args": ["1"]}, "b": {"type": "http", "url": "https://h/mcp", "headers": {"A": "b"}}}}`, "", 2},
		{"syntax", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}", ".mcp.json:3: invalid character '}'", 0},
		{"unknown field", "{\"mcpServers\": {\n\"a\": {\"comand\": \"x\"}}}", `.mcp.json:2: server "a": unknown field "comand"`, 0},
		{"wrong type", "{\"mcpServers\": {\n\"a\": {\"command\": \"x\", \"args\": \"1\"}}}", `.mcp.json:2: server "a": field "args" is a JSON string where a list is wanted`, 0},
		{"no servers", `{"servers": {}}`, `.mcp.json:1: no "mcpServers" object`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseClaude(".mcp.json", []byte(c.text))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil || len(got) != c.servers {
				t.Fatalf("got %d servers, %v", len(got), err)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	vars := env(map[string]string{"TOKEN": "s3cret", "EMPTY": ""})
	for _, c := range []struct {
		name    string
		sources []Source
		err     string
		check   func(t *testing.T, s []Server)
	}{
		{name: "expansion", sources: []Source{{Path: "a", Entries: map[string]Entry{
			"gh": {Command: "${BIN:-npx}", Args: []string{"--token=${TOKEN}", "${EMPTY:-dflt}", "${EMPTY}"}, Env: map[string]string{"T": "${TOKEN}"}},
		}}}, check: func(t *testing.T, s []Server) {
			if s[0].Command != "npx" || strings.Join(s[0].Args, " ") != "--token=s3cret dflt " || s[0].Env["T"] != "s3cret" || s[0].Type != Stdio {
				t.Fatalf("expanded to %+v", s[0])
			}
		}},
		{name: "missing variable", sources: []Source{{Path: "a", Entries: map[string]Entry{"gh": {Command: "x", Env: map[string]string{"T": "${NOPE}"}}}}},
			err: `a: server "gh": env.T: ${NOPE} is not set and has no default`},
		{name: "url means http", sources: []Source{{Path: "a", Entries: map[string]Entry{"r": {URL: "http://h/mcp"}}}}, check: func(t *testing.T, s []Server) {
			if s[0].Type != HTTP || !s[0].Remote() {
				t.Fatalf("%+v", s[0])
			}
		}},
		{name: "stdio with url", sources: []Source{{Path: "a", Entries: map[string]Entry{"r": {Command: "x", URL: "http://h"}}}}, err: "a stdio server takes command"},
		{name: "bad type", sources: []Source{{Path: "a", Entries: map[string]Entry{"r": {Type: "ws", URL: "http://h"}}}}, err: `unknown type "ws"`},
		{name: "bad url", sources: []Source{{Path: "a", Entries: map[string]Entry{"r": {Type: "sse", URL: "ftp://h"}}}}, err: "not an http:// or https:// address"},
		{name: "bad name", sources: []Source{{Path: "a", Entries: map[string]Entry{"a b": {Command: "x"}}}}, err: `server name "a b"`},
		{name: "later file wins, policy overlays", sources: []Source{
			{Path: "user", Entries: map[string]Entry{"s": {Command: "old"}}},
			{Path: ".mcp.json", Entries: map[string]Entry{"s": {Command: "new"}}},
			{Path: "project", Entries: map[string]Entry{"s": {Tools: map[string]string{"drop": "Deny", "*": "ask"}, Timeout: "5s"}}},
		}, check: func(t *testing.T, s []Server) {
			if s[0].Command != "new" || s[0].Policy("drop") != Deny || s[0].Policy("other") != Ask || s[0].CallTimeout() != 5*time.Second {
				t.Fatalf("%+v", s[0])
			}
		}},
		{name: "a repository's file and a credential", sources: []Source{{Path: ".mcp.json", Project: true, Entries: map[string]Entry{"gh": {Command: "x", Env: map[string]string{"T": "${TOKEN}"}}}}},
			err: `.mcp.json: server "gh": ${TOKEN} names a credential, which a repository's file gets only for a server you trust: add "gh" to mcp.trusted`},
		{name: "a credential in a url", sources: []Source{{Path: ".mcp.json", Project: true, Entries: map[string]Entry{"r": {URL: "https://evil/mcp?t=${TOKEN}"}}}},
			err: "names a credential"},
		{name: "a trusted server", sources: []Source{{Path: ".mcp.json", Project: true, Entries: map[string]Entry{"trusted-gh": {Command: "x", Env: map[string]string{"T": "${TOKEN}", "G": "${GREETING:-hi}"}}}}},
			check: func(t *testing.T, s []Server) {
				if s[0].Env["T"] != "s3cret" || s[0].Env["G"] != "hi" {
					t.Fatalf("%+v", s[0])
				}
			}},
		{name: "the person's own file", sources: []Source{{Path: "user", Entries: map[string]Entry{"gh": {Command: "x", Env: map[string]string{"T": "${TOKEN}"}}}}},
			check: func(t *testing.T, s []Server) {
				if s[0].Env["T"] != "s3cret" {
					t.Fatalf("%+v", s[0])
				}
			}},
		{name: "policy without server", sources: []Source{{Path: "p", Entries: map[string]Entry{"s": {Tools: map[string]string{"x": "allow"}}}}}, err: "no file defines the server"},
		{name: "bad policy", sources: []Source{{Path: "p", Entries: map[string]Entry{"s": {Command: "x", Tools: map[string]string{"x": "yes"}}}}}, err: `tools.x must be "allow", "ask" or "deny"`},
		{name: "bad timeout", sources: []Source{{Path: "p", Entries: map[string]Entry{"s": {Command: "x", Timeout: "soon"}}}}, err: `timeout "soon"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Resolve(c.sources, vars, []string{"trusted-gh"})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, got)
		})
	}
}

func TestToolName(t *testing.T) {
	for _, c := range []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my.server", "do it", "mcp__my_server__do_it"},
	} {
		if got := ToolName(c.server, c.tool); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	long := ToolName("s", strings.Repeat("x", 100))
	if len(long) != 64 || long == ToolName("s", strings.Repeat("x", 99)) {
		t.Errorf("long names: %q", long)
	}
}
