package hooks

import (
	"slices"
	"testing"
)

func TestScripts(t *testing.T) {
	for _, c := range []struct {
		command string
		want    []string
	}{
		{"python3 .claude/hooks/guard.py", []string{".claude/hooks/guard.py"}},
		{"sh scripts/lint.sh", []string{"scripts/lint.sh"}},
		{"bash -e ./check.sh --fast", []string{"check.sh"}},
		{"./scripts/check.sh", []string{"scripts/check.sh"}},
		{"scripts/check.sh && echo ok", []string{"scripts/check.sh"}},
		{"node hooks/fmt.js; python3 guard.py", []string{"hooks/fmt.js", "guard.py"}},
		{"FOO=1 exec python3 'hooks/a b.py'", []string{"hooks/a b.py"}},
		{"env -i PATH=/bin sh lint.sh", []string{"lint.sh"}},
		{"deno run hooks/x.ts", []string{"hooks/x.ts"}},
		{". scripts/env.sh", []string{"scripts/env.sh"}},
		{"cat | jq -r .tool_input.command | grep -q rm && exit 2", nil},
		{"jq . < .claude/input.json", nil}, // a redirection's target
		{"npx prettier --write .claude/notes.md", []string{".claude/notes.md"}},
		// Nothing a hook reads through an expansion, an absolute path,
		// an inline program or a module.
		{`"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh`, nil},
		{"python3 $DIR/guard.py", nil},
		{"/usr/local/bin/guard", nil},
		{"python3 -c 'import sys' hooks/x.py", nil},
		{"python3 -m black .", nil},
		{"go vet ./...", nil},
		{"npm test", nil},
		{"gofmt -w main.go", nil},
		{"sh ../outside.sh", nil},
		{"~/bin/guard.sh", nil},
		{"sh hooks/*.sh", nil},
		{"# a comment naming x/y.sh\nsh a.sh", []string{"a.sh"}},
		{"timeout 20 python3 scripts/guard_a.py", []string{"scripts/guard_a.py"}},
		{"nice -n 5 sh g.sh", []string{"g.sh"}},
		{"sudo -u a env -u X python3 g.py", []string{"g.py"}},
		{"if python3 g.py; then echo ok; fi", []string{"g.py"}},
		{"{ sh g.sh; } || ! python3 h.py", []string{"g.sh", "h.py"}},
		{"python3 -X utf8 scripts/guard_b.py", []string{"scripts/guard_b.py"}},
		{"python3 -W ignore g.py", []string{"g.py"}},
		{"node -r dotenv/config hooks/g.js", []string{"hooks/g.js"}},
		{"bash -o pipefail hooks/g.sh", []string{"hooks/g.sh"}},
		{"uv run --with requests hooks/g.py", []string{"hooks/g.py"}},
		{"perl -I lib hooks/g.pl", []string{"hooks/g.pl"}},
		{"cat | xargs -I {} sh g.sh {}", []string{"g.sh"}},
	} {
		if got := Scripts(c.command); !slices.Equal(got, c.want) {
			t.Errorf("Scripts(%q) = %q, want %q", c.command, got, c.want)
		}
	}
}

func TestRebase(t *testing.T) {
	for _, c := range []struct{ command, want string }{
		{"python3 .claude/hooks/guard.py", "python3 '/p/.claude/hooks/guard.py'"},
		{"./check.sh && sh 'a b.sh' x", "'/p/check.sh' && sh '/p/a b.sh' x"},
		{"npm test", "npm test"},
		{"sh it's.sh", "sh it's.sh"}, // an unclosed quote: not plain
	} {
		if got := Rebase(c.command, "/p"); got != c.want {
			t.Errorf("Rebase(%q) = %q, want %q", c.command, got, c.want)
		}
	}
}

func TestPythonInline(t *testing.T) {
	for _, c := range []struct {
		command string
		want    bool
	}{
		{"python3 -m guard", true},
		{"PYTHONPATH=x python3 -I -c 'import g'", true},
		{"python3 .claude/hooks/g.py -m x", false},
		{"python3 g.py", false},
		{"echo python3 -m x", true}, // a word ultra cannot tell from a command: the safe side
		{"node -e 1", false},
	} {
		if got := PythonInline(c.command); got != c.want {
			t.Errorf("PythonInline(%q) = %v, want %v", c.command, got, c.want)
		}
	}
}
