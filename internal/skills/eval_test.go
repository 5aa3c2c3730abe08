package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCases(t *testing.T) {
	dir := t.TempDir()
	s := Skill{Name: "x", Dir: dir}
	put := func(name, body string, mode os.FileMode) {
		p := filepath.Join(dir, "evals", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	put("case-10/task.md", "ten", 0o644)
	put("case-10/grader.js", "", 0o644)
	put("case-2/task.md", "two", 0o644)
	put("case-2/grader", "#!/bin/sh\n", 0o755)
	os.MkdirAll(filepath.Join(dir, "evals", "case-2", "hidden"), 0o755)
	os.MkdirAll(filepath.Join(dir, "evals", "case-2", "work"), 0o755)
	put("case-3/task.md", "three", 0o644)
	put("case-3/grader", "#!/bin/sh\n", 0o644) // not executable
	put("case-4/grader.py", "", 0o644)         // no task
	put("case-5/task.md", "  \n", 0o644)       // empty task
	put("case-5/grader.sh", "", 0o644)
	put("case-6/task.md", "six", 0o644) // no grader
	put("notes.md", "not a case", 0o644)
	cs, probs := Cases(s)
	if len(cs) != 2 || cs[0].Name != "case-2" || cs[1].Name != "case-10" {
		t.Fatalf("cases %+v", cs)
	}
	if cs[0].Grader[0] != filepath.Join(dir, "evals/case-2/grader") || cs[0].Hidden == "" || cs[0].Work == "" || cs[0].Task != "two" {
		t.Fatalf("case-2 %+v", cs[0])
	}
	if cs[1].Grader[0] != "node" || cs[1].Hidden != "" || cs[1].Work != "" {
		t.Fatalf("case-10 %+v", cs[1])
	}
	var whys []string
	for _, p := range probs {
		whys = append(whys, p.Error())
	}
	got := strings.Join(whys, "\n")
	for _, want := range []string{"case-3/grader: the grader is not executable", "case-4/task.md: no task.md", "case-5/task.md:1: task.md is empty", "case-6: no grader"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}

func TestTable(t *testing.T) {
	for _, c := range []struct {
		name     string
		trials   []Trial
		baseline bool
		want     string
	}{
		{"with and without", []Trial{{Case: "case-1", WithSkill: true, Pass: true}, {Case: "case-1"}, {Case: "case-2", WithSkill: true}, {Case: "case-2", Error: "boom"}}, true,
			"CASE    WITH SKILL  WITHOUT\ncase-1  pass        fail\ncase-2  fail        error\nwith the skill: 1 of 2 passed; without it: 0 of 2\n"},
		{"no baseline", []Trial{{Case: "case-1", WithSkill: true, Pass: true}}, false,
			"CASE    WITH SKILL\ncase-1  pass\nwith the skill: 1 of 1 passed\n"},
	} {
		if got := Table(c.trials, c.baseline); got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
