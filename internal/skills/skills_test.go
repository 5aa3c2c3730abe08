package skills

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := "---\nname: go-fix\ndescription: \"Fix a failing Go test: read the failure, fix the code, run the test\"\nallowed-tools: Read, Grep, Bash\nmetadata:\n  owner: platform\nside-effects: code-edits\npermission-profile: normal\n---\n# Go fix\n\nSteps.\n"
	s, err := Parse("x/go-fix/SKILL.md", "x/go-fix", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "go-fix" || !strings.HasPrefix(s.Description, "Fix a failing") || strings.Join(s.AllowedTools, ",") != "Read,Grep,Bash" ||
		s.Metadata["owner"] != "platform" || s.SideEffects != "code-edits" || s.Body != "# Go fix\n\nSteps." || !s.Offered() {
		t.Fatalf("%+v", s)
	}
	list := "---\nname: a\ndescription: d\nallowed-tools:\n  - Read\n  - Glob\nmodel-invocable: false\n---\n"
	if s, err := Parse("a/SKILL.md", "a", []byte(list)); err != nil || strings.Join(s.AllowedTools, ",") != "Read,Glob" || s.Offered() {
		t.Fatalf("%+v %v", s, err)
	}
	for _, c := range []struct{ text, dir, want string }{
		{"# no front matter", "a", ":1: no front matter"},
		{"---\nname: a\n", "a", ":1: the front matter has no closing"},
		{"---\nname: A_b\ndescription: d\n---\n", "A_b", ":2: name \"A_b\": 1 to 64 lowercase"},
		{"---\nname: a\ndescription: d\n---\n", "b", ":2: name \"a\" is not its folder's (b)"},
		{"---\nname: a\n---\n", "a", ":2: no description"},
		{"---\nname: a\ndescription: d\nmodel-invocable: maybe\n---\n", "a", ":4: model-invocable must be true or false"},
		{"---\nname: a\ndescription: d\nside-effects: lots\n---\n", "a", ":4: side-effects \"lots\""},
		{"---\nname: a\nname: b\ndescription: d\n---\n", "a", ":3: name is given twice"},
		{"---\nname: a\ndescription: " + strings.Repeat("x", 1100) + "\n---\n", "a", ":3: the description has 1100 characters"},
	} {
		_, err := Parse("SKILL.md", c.dir, []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "pkg")
	home := t.TempDir()
	write := func(dir, name, text string) {
		p := filepath.Join(dir, name, "SKILL.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	write(filepath.Join(sub, ".claude", "skills"), "near", "---\nname: near\ndescription: the nearest\n---\nbody")
	write(filepath.Join(root, ".agents", "skills"), "near", "---\nname: near\ndescription: shadowed\n---\n")
	write(filepath.Join(root, ".ultra", "skills"), "bad", "---\nname: bad\n---\n")
	write(filepath.Join(home, ".claude", "skills"), "mine", "---\nname: mine\ndescription: the person's\n---\n")
	all, probs := Discover(Dirs(sub, root, home))
	var names []string
	for _, s := range all {
		names = append(names, s.Name+"="+s.Description)
	}
	if strings.Join(names, ";") != "mine=the person's;near=the nearest" {
		t.Fatalf("skills %v", names)
	}
	if len(probs) != 1 || !strings.Contains(probs[0].Error(), "bad/SKILL.md:2: no description") {
		t.Fatalf("problems %v", probs)
	}
	idx := Index(all, 1000)
	if !strings.Contains(idx, "- near: the nearest") || !strings.Contains(idx, "- mine:") {
		t.Fatalf("index %q", idx)
	}
	if small := Index(all, 30); !strings.Contains(small, "1 more skills") {
		t.Fatalf("a small budget: %q", small)
	}
}

func TestDirsOutsideTheCheckout(t *testing.T) {
	got := Dirs("/state/worktrees/run1/pkg", "/repo", "")
	for _, d := range got {
		if strings.HasPrefix(d, "/state") {
			t.Fatalf("a directory outside the checkout is searched: %v", got)
		}
	}
	if len(got) != 3 || got[0] != "/repo/.agents/skills" {
		t.Fatalf("%v", got)
	}
}

func TestResourcesLeaveOutLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "scripts", "a.sh"), []byte("x"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "passwd"))
	if got := Resources(Skill{Dir: dir}); strings.Join(got, ",") != "scripts/a.sh" {
		t.Fatalf("%v", got)
	}
}

func TestSplitTools(t *testing.T) {
	for _, c := range []struct {
		v    string
		want []string
	}{
		{"Read, Grep", []string{"Read", "Grep"}},
		{"Read Grep", []string{"Read", "Grep"}},
		{"[Read, 'Grep']", []string{"Read", "Grep"}},
		{"Bash(git diff:*), Bash(go test ./...) Read", []string{"Bash(git diff:*)", "Bash(go test ./...)", "Read"}},
	} {
		if got := splitTools(c.v); !slices.Equal(got, c.want) {
			t.Errorf("splitTools(%q) = %q, want %q", c.v, got, c.want)
		}
	}
}

// Every problem of a file is reported, each with its line.
func TestParseReportsEveryProblem(t *testing.T) {
	text := "---\nname: Bad_Name\ndescription: x\nside-effects: lots\nfoo: bar\nuser-invocable: maybe\nx: [\n---\nbody\n"
	_, err := Parse("s/SKILL.md", "", []byte(text))
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 3 {
		t.Fatalf("%v", err)
	}
	for i, line := range []int{2, 4, 6} {
		if ps[i].Line != line {
			t.Errorf("problem %d on line %d, want %d: %v", i, ps[i].Line, line, ps[i])
		}
	}
}

// Claude Code's own keys load: disable-model-invocation is
// model-invocable false; an unknown key is a warning, not a skip.
func TestParseClaudeCodeKeys(t *testing.T) {
	s, err := Parse("d/SKILL.md", "deploy", []byte("---\nname: deploy\ndescription: Deploy\ndisable-model-invocation: true\nargument-hint: [env]\nmodel: sonnet\nfoo: bar\n---\nbody\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.ModelInvocable || s.Metadata["argument-hint"] != "[env]" || len(s.Warnings) != 1 || s.Warnings[0].Line != 7 {
		t.Fatalf("%+v", s)
	}
}
