package skills

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	fix := func(id, task string, cmds ...string) RunEvidence {
		return RunEvidence{Run: id, Task: task, Commands: cmds, Changed: []string{"calc/calc.go", "README.md"},
			Failing: []string{"TestAdd: calc_test.go:6: Add(2, 3) = -1, want 5"}, Gate: []string{"go test ./..."}}
	}
	for _, c := range []struct {
		name     string
		runs     []RunEvidence
		existing []string
		want     []string // the drafts' names
		has      []string // in the first draft's SKILL.md
	}{
		{"one run is not a pattern", []RunEvidence{fix("r1", "t", "go vet ./calc/")}, nil, nil, nil},
		{"two runs of calc with a repeated check",
			[]RunEvidence{fix("r1", "fix add", "go vet ./calc/", "ls"), fix("r2", "fix add again", "go  vet ./calc/", "cat calc/calc.go")}, nil,
			[]string{"calc-changes"}, []string{"name: calc-changes", "`calc/calc.go` (2 runs)", "`go vet ./calc/` (the runs ran it 2 times)", "`go test ./...` (ultra's gate)", "TestAdd failed in 2 runs: calc_test.go:6: Add(2, 3) = -1, want 5"}},
		{"only looking around: the gate is the check",
			[]RunEvidence{fix("r1", "t", "ls", "cat x"), fix("r2", "t", "grep -r x")}, nil,
			[]string{"calc-changes"}, []string{"- `go test ./...` (ultra's gate)"}},
		{"an existing skill of the name", []RunEvidence{fix("r1", "t"), fix("r2", "t")}, []string{"calc-changes"}, nil, nil},
		{"nothing to check with", []RunEvidence{{Run: "r1", Changed: []string{"docs/a.md"}}, {Run: "r2", Changed: []string{"docs/b.md"}}}, nil, nil, nil},
		{"root files and ultra's records are no area",
			[]RunEvidence{{Run: "r1", Changed: []string{"a.go", ".ultra/goals.json"}, Gate: []string{"go test ./..."}}, {Run: "r2", Changed: []string{"a.go", ".ultra/goals.json"}, Gate: []string{"go test ./..."}}}, nil, nil, nil},
	} {
		got := Suggest(c.runs, c.existing, 2)
		var names []string
		for _, d := range got {
			names = append(names, d.Name)
		}
		if strings.Join(names, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: drafts %v, want %v", c.name, names, c.want)
			continue
		}
		if len(got) == 0 {
			continue
		}
		d := got[0]
		for _, h := range c.has {
			if !strings.Contains(d.SkillMD, h) {
				t.Errorf("%s: SKILL.md lacks %q:\n%s", c.name, h, d.SkillMD)
			}
		}
		// What it drafts reads as a skill, and its grader runs the check.
		dir := filepath.Join("x", d.Name)
		if _, err := Parse(filepath.Join(dir, "SKILL.md"), dir, []byte(d.SkillMD)); err != nil {
			t.Errorf("%s: the draft does not read: %v\n%s", c.name, err, d.SkillMD)
		}
		if d.Task != c.runs[len(c.runs)-1].Task || !strings.HasPrefix(d.Grader, "#!/bin/sh\n") {
			t.Errorf("%s: the eval case: %q %q", c.name, d.Task, d.Grader)
		}
	}
}

func TestDraftName(t *testing.T) {
	for in, want := range map[string]string{"calc": "calc-changes", "internal/agent": "internal-agent-changes", "web/UI_kit": "web-ui-kit-changes", "日本": "area-changes"} {
		if got := draftName(in); got != want || !nameRe.MatchString(got) {
			t.Errorf("draftName(%q) = %q, want %q", in, got, want)
		}
	}
}
