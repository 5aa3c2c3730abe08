package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// evalSkill is a skill with two eval cases on calcProject: case-1's
// grader (a shell script) passes when Add adds and the grader reads the
// case's hidden answer; case-2's (grader.js, run with node) wants an
// answer.json no run writes.
func evalSkill(orig string) map[string]string {
	const sk = ".agents/skills/go-fix/"
	files := map[string]string{
		sk + "SKILL.md":                       "---\nname: go-fix\ndescription: Fix a failing Go test by changing the code, never the test\n---\nRead the failing test, fix the code it tests.\n",
		sk + "evals/case-1/task.md":           "Make the failing test in calc pass.\n",
		sk + "evals/case-1/hidden/answer.txt": "the reference answer\n",
		sk + "evals/case-1/grader": "#!/bin/sh\n" +
			"touch " + orig + "/grader-was-here 2>/dev/null\n" +
			"grep -q 'a + b' calc/calc.go || { echo 'Add does not add'; exit 1; }\n" +
			"test \"$(cat \"$ULTRA_EVAL_HIDDEN/answer.txt\")\" = 'the reference answer' || { echo 'no hidden answer'; exit 1; }\n" +
			"grep -q '\"run_finished\"' \"$ULTRA_EVAL_TRACE\" || { echo 'no trace'; exit 1; }\n" +
			"echo graded in \"$1\"\n",
		sk + "evals/case-2/task.md":   "Fix calc and write answer.json with the sum of 2 and 3.\n",
		sk + "evals/case-2/grader.js": "const fs = require('fs');\nif (!fs.existsSync('answer.json')) { console.log('no answer.json'); process.exit(1); }\n",
	}
	for name, body := range calcProject {
		files[sk+"evals/case-1/work/"+name] = body
		files[sk+"evals/case-2/work/"+name] = body
	}
	return files
}

// ultra skills eval runs each case as a real run in a scratch repository,
// with the skill and without it, grades it in a sandbox with the case's
// hidden answers (which the run never sees), prints pass or fail per
// case, keeps a failed trial's workspace and removes a passed one.
func TestSkillsEval(t *testing.T) {
	t.Parallel()
	dir := repoOutsideTmp(t, map[string]string{"README.md": "eval home\n"})
	files := evalSkill(dir)
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "/grader") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "the skill")
	// The person's secret, beside the scratch repositories of the trials.
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("PERSON_SECRET=hunter2-parent-env\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hidden := filepath.Join(dir, ".agents/skills/go-fix/evals/case-1/hidden/answer.txt")
	peek := calls(call("bash", map[string]any{"command": "cat " + hidden + "; ls " + filepath.Dir(filepath.Dir(hidden)) + "; cat " + filepath.Join(dir, ".env")}),
		call("skill", map[string]any{"name": "go-fix"}),
		call("skill", map[string]any{"name": "go-fix", "resource": "evals/case-1/hidden/answer.txt"}))
	refuse := step{"status": 400, "error": "no model today"}
	steps := append([]step{peek}, fixSteps()...) // case-1 with the skill
	steps = append(steps, refuse)                // case-1 without
	steps = append(steps, fixSteps()...)         // case-2 with
	steps = append(steps, refuse)                // case-2 without
	m := newModel(t, steps...)
	res := ultra(t, dir, "skills", "eval", "go-fix", "--provider", "openai", "--base-url", m.url, "--model", "scripted")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1 (case-2 fails with the skill)\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	logs := func() string {
		var b strings.Builder
		for _, l := range strings.Split(res.stdout, "\n") {
			if _, path, ok := strings.Cut(l, "kept: "); ok {
				_, path, _ = strings.Cut(path, ": ")
				lg, _ := os.ReadFile(filepath.Join(path, "log.txt"))
				b.WriteString(path + ":\n" + lastN(string(lg), 15) + "\n")
			}
		}
		return b.String()
	}
	for _, want := range []string{"case-1  pass        fail", "case-2  fail        fail", "with the skill: 1 of 2 passed; without it: 0 of 2"} {
		if !strings.Contains(res.stdout, want) {
			t.Fatalf("stdout lacks %q:\n%s\n%s\n%s", want, res.stdout, res.stderr, logs())
		}
	}
	// What the model received: never the hidden answer, nor the evals.
	var outs []string
	for _, r := range m.srv.Requests() {
		outs = append(outs, toolResults(t, r)...)
	}
	all := strings.Join(outs, "\n")
	if !strings.Contains(outs[0], "No such file or directory") {
		t.Fatalf("the bash call's result: %s", outs[0])
	}
	if strings.Contains(all, "hunter2-parent-env") {
		t.Fatalf("a trial's model read the person's checkout:\n%s", outs[0])
	}
	if strings.Contains(all, "the reference answer") || !strings.Contains(all, "Read the failing test, fix the code") || !strings.Contains(all, "has no file") {
		t.Fatalf("what the model received:\n%s", all)
	}
	// Request i answers step i: the runs with the skill have it in
	// their prompt, the runs without it do not.
	reqs := m.srv.Requests()
	first2 := len(fixSteps()) + 2
	for i, with := range map[int]bool{0: true, first2 - 1: false, first2: true, len(steps) - 1: false} {
		if got := strings.Contains(reqs[i].System, "- go-fix: Fix a failing Go test"); got != with {
			t.Fatalf("request %d has the skill in its prompt: %v, want %v", i, got, with)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "grader-was-here")); err == nil {
		t.Fatal("the grader wrote into the person's checkout")
	}
	// Kept: the three failed trials, each with its trace, result and grade.
	kept := map[string]string{}
	for _, l := range strings.Split(res.stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "kept: "); ok {
			what, path, _ := strings.Cut(rest, ": ")
			kept[what] = path
		}
	}
	if len(kept) != 3 || kept["case-2 with the skill"] == "" {
		t.Fatalf("kept %v\n%s", kept, res.stdout)
	}
	k := kept["case-2 with the skill"]
	for _, f := range []string{"trace.jsonl", "result.json", "graded/calc/calc.go"} {
		if _, err := os.Stat(filepath.Join(k, f)); err != nil {
			t.Fatalf("the kept trial lacks %s: %v", f, err)
		}
	}
	if g, _ := os.ReadFile(filepath.Join(k, "grade.txt")); !strings.Contains(string(g), "no answer.json") {
		t.Fatalf("grade.txt: %q", g)
	}
	var r map[string]any
	if b, _ := os.ReadFile(filepath.Join(k, "result.json")); json.Unmarshal(b, &r) != nil || r["status"] != "complete" {
		t.Fatalf("result.json: %v", r)
	}
	passed := filepath.Join(filepath.Dir(filepath.Dir(k)), "case-1", "with")
	if _, err := os.Stat(passed); !os.IsNotExist(err) {
		t.Fatalf("the passed trial's workspace is still there: %v", err)
	}
	// --json, one case, with the skill only.
	m2 := newModel(t, fixSteps()...)
	j := ultra(t, dir, "skills", "eval", "go-fix", "--case", "case-1", "--no-baseline", "--json", "--provider", "openai", "--base-url", m2.url, "--model", "scripted")
	var out struct {
		Trials []map[string]any `json:"trials"`
	}
	if j.code != 0 || json.Unmarshal([]byte(j.stdout), &out) != nil || len(out.Trials) != 1 || out.Trials[0]["pass"] != true {
		t.Fatalf("--json: exit %d\n%s\n%s", j.code, j.stdout, j.stderr)
	}
	if l := ultra(t, dir, "skills", "lint"); l.code != 0 || !strings.Contains(l.stdout, "1 skill and 2 eval cases, all read") {
		t.Fatalf("skills lint: exit %d\n%s", l.code, l.stdout)
	}
	os.MkdirAll(filepath.Join(dir, ".agents/skills/go-fix/evals/case-3"), 0o755)
	os.WriteFile(filepath.Join(dir, ".agents/skills/go-fix/evals/case-3/task.md"), []byte("x\n"), 0o644)
	if l := ultra(t, dir, "skills", "lint"); l.code != 1 || !strings.Contains(l.stdout, "evals/case-3: no grader") {
		t.Fatalf("skills lint of a case without a grader: exit %d\n%s", l.code, l.stdout)
	}
	if bad := ultra(t, dir, "skills", "eval", "go-fix", "--case", "case-9"); bad.code != 2 || !strings.Contains(bad.stderr, `no eval case "case-9" (its cases: case-1, case-2)`) {
		t.Fatalf("--case case-9: exit %d %s", bad.code, bad.stderr)
	}
}

// repoOutsideTmp is repo made in /var/tmp: a sandbox gives every
// contained command a /tmp of its own, so a path below the host's /tmp
// could not show that ultra hides it.
func repoOutsideTmp(t *testing.T, files map[string]string) string {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "ultra-e2e-")
	if err != nil {
		t.Skipf("no /var/tmp to make a repository outside /tmp in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return repoIn(t, base, files)
}

func lastN(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// ultra skills suggest drafts a skill from what two runs repeated (the
// folder they changed, the check they ran), writes nothing until a
// person accepts a draft, and the accepted draft reads as a skill.
func TestSkillsSuggest(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	vet := calls(call("bash", map[string]any{"command": "go vet ./calc/"}))
	withVet := func() []step {
		s := fixSteps()
		return append(s[:3:3], append([]step{vet}, s[3:]...)...)
	}
	if none := ultra(t, dir, "skills", "suggest"); none.code != 0 || !strings.Contains(none.stdout, "no draft: of the last 0 runs") {
		t.Fatalf("suggest before any run: exit %d\n%s%s", none.code, none.stdout, none.stderr)
	}
	var latest string
	for range 2 {
		m := newModel(t, withVet()...)
		res := ultra(t, dir, runArgs(m, "fix calc")...)
		if res.code != 0 {
			t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
		}
		latest = runID(t, res.events(t))
	}
	// status and diff without a run show the latest run.
	if st := ultra(t, dir, "status"); st.code != 0 || !strings.Contains(st.stdout, latest) {
		t.Fatalf("status without a run: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	if d := ultra(t, dir, "diff"); d.code != 0 || !strings.Contains(d.stdout, "+\treturn a + b") || !strings.Contains(d.stdout, latest) {
		t.Fatalf("diff without a run: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	// After a chat, diff and goals still show the latest run with a
	// branch (a chat has none), status the chat.
	chat := newModel(t, text("Add adds."))
	if c := ultra(t, dir, chatArgs(chat, "what does Add do?")...); c.code != 0 {
		t.Fatalf("chat: exit %d\n%s", c.code, c.stderr)
	}
	if d := ultra(t, dir, "diff"); d.code != 0 || !strings.Contains(d.stdout, latest) {
		t.Fatalf("diff after a chat: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if g := ultra(t, dir, "goals"); g.code != 0 || !strings.Contains(g.stdout, "Add adds") {
		t.Fatalf("goals after a chat: exit %d\n%s%s", g.code, g.stdout, g.stderr)
	}
	s := ultra(t, dir, "skills", "suggest")
	for _, want := range []string{"calc-changes: Use when changing calc/", "ran `go vet ./calc/` in 2 runs", "changed calc/calc.go in 2 runs", "accept it: ultra skills suggest --accept calc-changes", "nothing was written"} {
		if !strings.Contains(s.stdout, want) {
			t.Fatalf("suggest lacks %q: exit %d\n%s%s", want, s.code, s.stdout, s.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".agents")); !os.IsNotExist(err) {
		t.Fatalf("suggest wrote before anyone accepted: %v", err)
	}
	a := ultra(t, dir, "skills", "suggest", "--accept", "calc-changes")
	skill := filepath.Join(dir, ".agents/skills/calc-changes")
	if a.code != 0 || !strings.Contains(a.stdout, "wrote "+skill) {
		t.Fatalf("accept: exit %d\n%s%s", a.code, a.stdout, a.stderr)
	}
	if fi, err := os.Stat(filepath.Join(skill, "evals/case-1/grader")); err != nil || fi.Mode()&0o100 == 0 {
		t.Fatalf("the eval case's grader: %v", err)
	}
	if task, _ := os.ReadFile(filepath.Join(skill, "evals/case-1/task.md")); strings.TrimSpace(string(task)) != "fix calc" {
		t.Fatalf("the eval case's task: %q", task)
	}
	if l := ultra(t, dir, "skills", "lint"); l.code != 0 || !strings.Contains(l.stdout, "1 skill and 1 eval case, all read") {
		t.Fatalf("lint of the accepted draft: exit %d\n%s", l.code, l.stdout)
	}
	if again := ultra(t, dir, "skills", "suggest", "--accept", "calc-changes"); again.code != 2 || !strings.Contains(again.stderr, `no draft "calc-changes"`) {
		t.Fatalf("accepting a draft a skill now has: exit %d\n%s", again.code, again.stderr)
	}
}

// A case without work/ starts from the repository's HEAD, and a trial
// whose run cannot start says why and is no verdict on the skill.
func TestSkillsEvalTrialThatCannotStart(t *testing.T) {
	t.Parallel()
	dir := repoOutsideTmp(t, map[string]string{
		"README.md":                              "home\n",
		".agents/skills/s1/SKILL.md":             "---\nname: s1\ndescription: A skill to try\n---\nDo it.\n",
		".agents/skills/s1/evals/case-1/task.md": "do it\n",
	})
	if err := os.WriteFile(filepath.Join(dir, ".agents/skills/s1/evals/case-1/grader.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "grader")
	res := ultra(t, dir, "skills", "eval", "s1", "--no-baseline", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "x")
	if res.code != 1 || !strings.Contains(res.stdout, "case-1  error") ||
		!strings.Contains(res.stderr, "case-1 could not be tried with skill s1: the run did not start (exit 1): cannot reach the model server") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}
