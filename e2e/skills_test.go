package e2e

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

var skillFiles = map[string]string{
	".claude/skills/go-fix/SKILL.md":                       "---\nname: go-fix\ndescription: Fix a failing Go test by changing the code, never the test\nallowed-tools: Read, Glob, Grep, Edit\n---\n# Go fix\n\nRead the failing test, fix the code it tests, run scripts/check.sh.\n",
	".claude/skills/go-fix/scripts/check.sh":               "#!/bin/sh\ngo test ./...\n",
	".claude/skills/go-fix/evals/case-1/hidden/answer.txt": "the reference answer\n",
	".agents/skills/deploy-prod/SKILL.md":                  "---\nname: deploy-prod\ndescription: Deploy to production\nside-effects: production-mutation\n---\nkubectl apply\n",
	".ultra/skills/broken/SKILL.md":                        "---\nname: broken\n---\n",
}

// Skills in the places people keep them: the model sees the names and
// descriptions of those it may load, loads one and its files (never an
// eval's hidden answers, never a file outside it), never one that mutates
// production; a broken one is skipped with its file and line.
func TestSkillsInARun(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	maps.Copy(files, skillFiles)
	dir := repo(t, files)
	m := newModel(t, append([]step{
		calls(call("skill", map[string]any{"name": "go-fix"}),
			call("skill", map[string]any{"name": "go-fix", "resource": "scripts/check.sh"}),
			call("skill", map[string]any{"name": "go-fix", "resource": "evals/case-1/hidden/answer.txt"}),
			call("skill", map[string]any{"name": "go-fix", "resource": "../../../go.mod"}),
			call("skill", map[string]any{"name": "deploy-prod"})),
	}, fixSteps()...)...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "a skill is skipped: "+dir+"/.ultra/skills/broken/SKILL.md:2: no description") {
		t.Fatalf("stderr does not name the broken skill:\n%s", res.stderr)
	}
	var outs []string
	for _, e := range ofType(res.events(t), "tool_result") {
		if data(e)["tool"] == "skill" {
			outs = append(outs, data(e)["output"].(string))
		}
	}
	for i, want := range []string{"Read the failing test, fix the code", "go test ./...", "has no file", "has no file", `no skill "deploy-prod" is offered`} {
		if !strings.Contains(outs[i], want) {
			t.Fatalf("skill result %d lacks %q: %q", i, want, outs[i])
		}
	}
	if strings.Contains(outs[0], "hidden") {
		t.Fatalf("the skill's listing shows an eval's hidden answers: %s", outs[0])
	}
	sys := m.srv.Requests()[0].System
	if !strings.Contains(sys, "- go-fix: Fix a failing Go test") || strings.Contains(sys, "deploy-prod") || strings.Contains(sys, "broken") {
		t.Fatalf("the skills in the prompt:\n%s", sys)
	}
	if l := ultra(t, dir, "skills", "lint"); l.code != 1 || !strings.Contains(l.stdout, "broken/SKILL.md:2: no description") {
		t.Fatalf("skills lint: exit %d\n%s", l.code, l.stdout)
	}
}

// A skill a person invokes leads the task, and its allowed-tools narrow
// the run's tools: a tool it leaves out is neither offered nor run.
func TestInvokedSkillNarrowsTools(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	maps.Copy(files, skillFiles)
	dir := repo(t, files)
	steps := fixSteps()
	steps = append(steps[:3:3], append([]step{calls(call("bash", map[string]any{"command": "go vet ./..."}))}, steps[3:]...)...)
	m := newModel(t, steps...)
	// No task: the skill's name and description are the task (as /go-fix
	// alone in the TUI).
	res := ultra(t, dir, runArgs(m, "--skill", "go-fix")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if st := ofType(res.events(t), "run_started"); len(st) != 1 || data(st[0])["task"] != "go-fix: Fix a failing Go test by changing the code, never the test" {
		t.Fatalf("the run's task: %v", st)
	}
	reqs := m.srv.Requests()
	if !strings.Contains(reqs[0].LastUser+string(reqs[0].Body), "The person invoked the skill go-fix") {
		t.Fatal("the skill's instructions do not lead the task")
	}
	building := reqs[2].Tools
	if slices.Contains(building, "bash") || slices.Contains(building, "write") || !slices.Contains(building, "edit") || !slices.Contains(building, "phase") {
		t.Fatalf("building offered %v", building)
	}
	for _, e := range ofType(res.events(t), "tool_result") {
		if data(e)["tool"] == "bash" && !strings.Contains(data(e)["output"].(string), "not among the allowed-tools of the skill") {
			t.Fatalf("bash: %v", data(e)["output"])
		}
	}
	if r := ultra(t, dir, runArgs(m, "--skill", "nope", "x")...); r.code != 2 || !strings.Contains(r.stderr, `no skill "nope" (skills here: deploy-prod, go-fix`) {
		t.Fatalf("--skill nope: exit %d %s", r.code, r.stderr)
	}
}

// A skill's scoped entry (Bash(go vet:*)) lets through the commands it
// names and refuses the others; lint warns of an entry naming no tool.
func TestInvokedSkillScopesBash(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	files[".claude/skills/vet-fix/SKILL.md"] = "---\nname: vet-fix\ndescription: Fix calc, checking with go vet only\nallowed-tools: Read, Glob, Edit, Bash(go vet:*), Bsh\n---\nRun go vet, then fix.\n"
	dir := repo(t, files)
	steps := fixSteps()
	steps = append(steps[:3:3], append([]step{calls(call("bash", map[string]any{"command": "go vet ./..."}),
		call("bash", map[string]any{"command": "rm -f calc/calc_test.go"}))}, steps[3:]...)...)
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "--skill", "vet-fix")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var outs []string
	for _, e := range ofType(res.events(t), "tool_result") {
		if data(e)["tool"] == "bash" {
			outs = append(outs, data(e)["output"].(string))
		}
	}
	if len(outs) != 2 || strings.Contains(outs[0], "Refused") || !strings.Contains(outs[1], "allows bash only as: Bash(go vet:*)") {
		t.Fatalf("bash results: %q", outs)
	}
	lint := ultra(t, dir, "skills", "lint")
	if lint.code != 1 || !strings.Contains(lint.stdout, `SKILL.md:4: allowed-tools: "Bsh": unknown tool "Bsh"`) {
		t.Fatalf("lint: exit %d\n%s\n%s", lint.code, lint.stdout, lint.stderr)
	}
}
