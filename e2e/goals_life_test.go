package e2e

// A goal's life after planning: acceptance, review, kills and resumes,
// failures, cancels, goals that change nothing, landing, goals added late.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ultra plan proposes goals and stops at the acceptance point; ultra
// approve goes on to build.
func TestPlanStopsAtAcceptance(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	brief := filepath.Join(t.TempDir(), "BRIEF.md")
	os.WriteFile(brief, []byte("# Fix calc\n\nAdd must add.\n"), 0o644)
	m := newModel(t, fixSteps()[:2]...)
	res := ultra(t, dir, append([]string{"plan", "--output", "jsonl", "--provider", "openai", "--base-url", m.url, "--model", "scripted"}, "--brief-file", brief)...)
	if res.code != 3 || !strings.Contains(res.stderr, "needs_approval") {
		t.Fatalf("plan: exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	g := ultra(t, dir, "goals", id)
	if !strings.Contains(g.stdout, "proposed, not accepted") || !strings.Contains(g.stdout, "G001-add-adds") {
		t.Fatalf("goals:\n%s%s", g.stdout, g.stderr)
	}
	// A person sends the proposal back with guidance; the planner proposes
	// again, and the run waits for a person again.
	back := newModel(t, fixSteps()[1])
	if r := ultra(t, dir, "resume", id, "--output", "jsonl", "--base-url", back.url, "name the goal after Add"); r.code != 3 || !strings.Contains(r.stderr, "needs_approval") {
		t.Fatalf("resume with guidance: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(string(back.srv.Requests()[0].Body), "name the goal after Add") {
		t.Fatal("the guidance did not reach the planner")
	}
	m2 := newModel(t, fixSteps()[2:]...)
	a := ultra(t, dir, "approve", id, "--output", "jsonl", "--base-url", m2.url)
	if a.code != 0 {
		t.Fatalf("approve: %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	if l := ultra(t, dir, "goals", "ledger", "--run", id); !strings.Contains(l.stdout, "accepted by person") || !strings.Contains(l.stdout, "sent back by a person") {
		t.Fatalf("ledger:\n%s", l.stdout)
	}
}

// A brief whose definition of done is undecided is refused before any
// branch is made.
func TestUndecidedBriefRefused(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	brief := filepath.Join(t.TempDir(), "BRIEF.md")
	os.WriteFile(brief, []byte("# Fix calc\n\n## Definition of done\n- TBD\n\n## Open questions\n- which rounding?\n"), 0o644)
	res := ultra(t, dir, "run", "--base-url", "http://127.0.0.1:9/v1", "--brief-file", brief)
	if res.code != 2 || !strings.Contains(res.stderr, "which rounding?") || !strings.Contains(res.stderr, "TBD") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if out := git(t, dir, "branch", "--list", "ultra/*"); strings.TrimSpace(out) != "" {
		t.Fatalf("a branch was made: %s", out)
	}
}

// The final reviewer's blockers send the run back to iterating; after
// the fix the final gate runs again and a new review approves.
func TestReviewBlockersThenApprove(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m, res := reviseAfterReview(t, dir, calls(call("review", map[string]any{"verdict": "REQUEST_CHANGES", "architecture": architecture("CLEAR"),
		"blockers": []any{map[string]any{"file": "calc/calc.go", "line": 3, "reason": "the comment still says 'a plus b' loosely; say it returns the sum"}}})))
	evs := res.events(t)
	checkPhases(t, evs, "building", "verifying", "cleaning", "verifying", "reviewing", "iterating", "verifying", "cleaning", "verifying", "reviewing", "complete")
	// The blockers reached the builder's context, not the reviewer's.
	reqs := m.srv.Requests()
	if b := string(reqs[7].Body); !strings.Contains(b, "the comment still says") || strings.Contains(b, "final reviewer of ultra") {
		t.Fatal("the builder did not get the blockers in its own context")
	}
	if b := string(reqs[len(reqs)-1].Body); !strings.Contains(b, "review round 2") {
		t.Fatal("the second review does not know it is round 2")
	}
	if l := ultra(t, dir, "goals", "ledger", "--run", runID(t, evs)); strings.Count(l.stdout, "review_verdict") != 2 {
		t.Fatalf("ledger:\n%s", l.stdout)
	}
}

// kill -9 while a criterion runs, then resume: the ledger's chain holds,
// nothing is recorded twice, and the goal completes.
func TestKill9DuringCriteriaThenResume(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	slow := goalsOf("Add adds",
		crit("happy", "command", "Add adds (slowly)", map[string]any{"run": "sleep 3; go test -count=1 -run '^TestAdd$' ./calc", "expect_exit": 0}),
		crit("edge", "command", "no subtraction is left in Add", map[string]any{"run": "grep -q 'return a - b' calc/calc.go", "expect_exit": 1}),
		crit("regression", "command", "both tests are still there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2"}))
	steps := []step{calls(call("read", map[string]any{"file_path": "calc/calc.go"})), calls(call("goals", slow)),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		calls(call("verify", map[string]any{})), approve()}
	m := newModel(t, steps...)
	cmd := exec.Command(ultraBin, runArgs(m, "fix calc")...)
	cmd.Dir, cmd.Env = dir, ultraEnv(t)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), `"type":"verify_result"`) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run never verified:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // inside the slow criterion
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	evs := result{stdout: out.String()}.events(t)
	id := runID(t, evs)
	if n := len(judged(evs)); n != 0 {
		t.Fatalf("the kill came after %d criteria", n)
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 {
		t.Fatalf("after kill -9: %s%s", v.stdout, v.stderr)
	}
	res := ultra(t, dir, "resume", id, "--output", "jsonl", "--base-url", m.url)
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	l := ultra(t, dir, "goals", "ledger", "--run", id, "--json")
	var entries []struct {
		Seq             int
		Kind, Criterion string
	}
	if err := json.Unmarshal([]byte(l.stdout), &entries); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for i, e := range entries {
		if e.Seq != i+1 {
			t.Fatalf("entry %d has seq %d", i+1, e.Seq)
		}
		count[e.Kind+" "+e.Criterion]++
	}
	for _, k := range []string{"plan_created ", "plan_accepted ", "goal_started ", "evidence_captured G001-C1", "evidence_captured G001-C2", "goal_completed "} {
		if count[k] != 1 {
			t.Fatalf("%q recorded %d times:\n%s", k, count[k], l.stdout)
		}
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 {
		t.Fatalf("after resume: %s%s", v.stdout, v.stderr)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// goals.on_failure = continue: a goal that fails its caps does not stop
// the run; the next goal is built, and the run escalates at the end with
// the failed goal named.
func TestFailedGoalContinues(t *testing.T) {
	t.Parallel()
	files := map[string]string{".ultra/config": "[goals]\non_failure = \"continue\"\n"}
	for k, v := range greenProject {
		files[k] = v
	}
	dir := repo(t, files)
	doomed := map[string]any{"title": "Sub exists", "objective": "a Sub function", "criteria": []any{
		crit("happy", "command", "Sub subtracts, as its test shows", map[string]any{"run": "go test -count=1 -v -run '^TestSub$' ./calc", "expect_stdout": "--- PASS: TestSub"}),
		crit("edge", "command", "Sub subtracts", map[string]any{"run": "grep -q 'return a - b' calc/calc.go", "expect_exit": 0}),
		crit("regression", "command", "Add still adds", map[string]any{"run": "grep -c 'return a + b' calc/calc.go", "expect_stdout": "^1"}),
	}}
	doc := map[string]any{"title": "Add is documented", "objective": "the doc says sum", "refactor": true, "criteria": []any{
		crit("happy", "command", "the doc says sum", map[string]any{"run": "grep -c 'the sum' calc/calc.go", "expect_stdout": "^1"}),
		crit("edge", "command", "the old doc is gone", map[string]any{"run": "grep -q 'a plus b' calc/calc.go", "expect_exit": 1}),
		crit("regression", "command", "the package still says calc", map[string]any{"run": "grep -c '^package calc' calc/calc.go", "expect_stdout": "^1"}),
	}}
	steps := []step{calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("goals", map[string]any{"goals": []any{doomed, doc}})),
		calls(call("write", map[string]any{"file_path": "calc/notes.txt", "content": "Sub is hard\n"}))}
	for range 3 {
		steps = append(steps, calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))
	}
	steps = append(steps,
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "// Add returns a plus b.", "new_string": "// Add returns the sum of a and b."})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))
	res := ultra(t, dir, runArgs(newModel(t, steps...), "add Sub and document Add")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	r := data(ofType(evs, "run_finished")[0])["reason"].(string)
	if !strings.Contains(r, "goals failed earlier") || !strings.Contains(r, "G001-sub-exists") {
		t.Fatalf("reason %q", r)
	}
	id := runID(t, evs)
	g := ultra(t, dir, "goals", id, "--json")
	var f struct{ Goals []struct{ ID, Status string } }
	json.Unmarshal([]byte(g.stdout), &f)
	if len(f.Goals) != 2 || f.Goals[0].Status != "failed" || f.Goals[1].Status != "complete" {
		t.Fatalf("goals %+v", f.Goals)
	}
	if log := git(t, dir, "log", "--format=%s", "main..ultra/"+id); !strings.Contains(log, "G002-add-is-documented") || strings.Contains(log, "G001") {
		t.Fatalf("commits:\n%s", log)
	}
}

// ultra cancel releases the goal in progress and records it; the run
// never resumes.
func TestCancelReleasesTheGoal(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()[:2]...)
	res := ultra(t, dir, runArgs(m, "--max-turns", "2", "fix calc")...)
	if res.code != 4 {
		t.Fatalf("exit %d, want 4\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	if c := ultra(t, dir, "cancel", id, "--reason", "not now"); c.code != 0 {
		t.Fatalf("cancel: %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	g := ultra(t, dir, "goals", id, "--json")
	if !strings.Contains(g.stdout, `"status": "pending"`) || !strings.Contains(g.stdout, "released: the run was cancelled") {
		t.Fatalf("goals after cancel:\n%s", g.stdout)
	}
	if l := ultra(t, dir, "goals", "ledger", "--run", id); !strings.Contains(l.stdout, "cancelled") {
		t.Fatalf("ledger:\n%s", l.stdout)
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 {
		t.Fatalf("verify: %s%s", v.stdout, v.stderr)
	}
	if r := ultra(t, dir, "resume", id); r.code == 0 || !strings.Contains(r.stderr, "cancelled") {
		t.Fatalf("resume of a cancelled run: %d %s", r.code, r.stderr)
	}
}

// Criteria that pass without any change of the code complete nothing: a
// goal needs work, whatever its checks say. In a run that asks for new
// behaviour such criteria are refused before anything is accepted (they
// pass on the base tree: TestCriteriaMustFailOnTheBase); a refactor, whose
// criteria all pass before and after, still needs a change of the code.
func TestNoChangeNoGoal(t *testing.T) {
	t.Parallel()
	dir := repo(t, greenProject)
	lazy := goalsOf("Add is fine",
		crit("happy", "command", "Add adds", map[string]any{"run": "go test -count=1 -run '^TestAdd$' ./calc", "expect_exit": 0}),
		crit("edge", "command", "zero adds nothing", map[string]any{"run": "go test -count=1 -run '^TestAddZero$' ./calc", "expect_exit": 0}),
		crit("regression", "command", "both tests are there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2"}))
	records := crit("regression", "command", "the records are not the code", map[string]any{"run": "test -e .ultra/runs", "expect_exit": 1})
	g := lazy["goals"].([]any)[0].(map[string]any)
	g["criteria"] = append(g["criteria"].([]map[string]any), records)
	g["refactor"] = true
	steps := []step{calls(call("goals", lazy))}
	for range 5 {
		steps = append(steps, calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))
	}
	res := ultra(t, dir, runArgs(newModel(t, append(steps, approve())...), "make sure Add adds")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	for _, e := range ofType(evs, "phase_changed") {
		if to := data(e)["to"]; to == "reviewing" || to == "complete" {
			t.Fatalf("a goal without a change went on: %v", data(e))
		}
	}
	// The checks judge the code, not ultra's records of the run (on the
	// base tree and after).
	if len(ofType(evs, "criterion")) < 8 {
		t.Fatalf("criteria run: %v", ofType(evs, "criterion"))
	}
	for _, e := range ofType(evs, "criterion") {
		if d := data(e); d["status"] != "pass" {
			t.Fatalf("a check saw ultra's records: %v", d)
		}
	}
	if r := data(ofType(evs, "run_finished")[0])["reason"].(string); !strings.Contains(r, "nothing in the code changed") {
		t.Fatalf("reason %q", r)
	}
}

// Landing a run whose base moved verifies the merge with the run's goals
// as well as the tests: a change landed meanwhile that breaks one of its
// criteria keeps it from landing.
func TestLandChecksTheGoalsOnTheMerge(t *testing.T) {
	t.Parallel()
	dir := repo(t, greenProject)
	idA, idB := docAndNoteRuns(t, dir,
		crit("regression", "command", "the note agrees with the code's doc", map[string]any{"run": "grep -c 'Add returns a plus b' calc/calc.go", "expect_stdout": "^1$"}))
	if l := ultra(t, dir, "land", idA); l.code != 0 {
		t.Fatalf("land A: %d\n%s%s", l.code, l.stdout, l.stderr)
	}
	base := head(t, dir, "main")
	l := ultra(t, dir, "land", idB)
	if l.code != 3 || !strings.Contains(l.stderr, "the run's goals do not") || !strings.Contains(l.stderr, "G001-C3") {
		t.Fatalf("land B: %d\n%s%s", l.code, l.stdout, l.stderr)
	}
	if head(t, dir, "main") != base {
		t.Fatal("main moved although the merge broke a goal")
	}
}

// A goal the model adds after the final gate began is worked on like any
// other: it starts, needs its own change, and the run cannot complete
// while it is pending.
func TestGoalAddedDuringReviewIsWorkedOn(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	extra := map[string]any{"kind": "add_subgoal", "title": "Docs", "objective": "Add is documented", "evidence": "the reviewer asked", "rationale": "in scope",
		"criteria": calcGoals()["goals"].([]any)[0].(map[string]any)["criteria"]}
	steps := append(fixSteps()[:5:5],
		calls(call("review", map[string]any{"verdict": "REQUEST_CHANGES", "architecture": architecture("CLEAR"), "blockers": []any{map[string]any{"file": "calc/calc.go", "reason": "docs missing"}}})),
		calls(call("steer", extra)))
	for range 5 {
		steps = append(steps, calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))
	}
	res := ultra(t, dir, runArgs(newModel(t, append(steps, approve())...), "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	if r := data(ofType(evs, "run_finished")[0])["reason"].(string); !strings.Contains(r, "G002-docs failed") || !strings.Contains(r, "nothing in the code changed") {
		t.Fatalf("reason %q", r)
	}
	if l := ultra(t, dir, "goals", "ledger", "--run", runID(t, evs)); !regexp.MustCompile(`goal_started\s+G002-docs`).MatchString(l.stdout) {
		t.Fatalf("ledger:\n%s", l.stdout)
	}
}

// A run whose every proposal was refused has no goals; ultra goals says
// so with the last refusal, not only that there are none yet.
func TestGoalsShowsTheLastRefusal(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	bad := goalsOf("Add adds",
		crit("happy", "command", "the machine runs Linux", map[string]any{"run": "uname -s", "expect_stdout": "^Linux"}),
		crit("regression", "command", "both tests are still there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2\\s*$"}))
	res := ultra(t, dir, runArgs(newModel(t, calls(call("goals", bad)), text("done"), text("done"), text("done"), text("done"), text("done")), "fix calc")...)
	if res.code == 0 {
		t.Fatalf("a run without goals completed:\n%s", res.stdout)
	}
	g := ultra(t, dir, "goals", runID(t, res.events(t)))
	if g.code == 0 || !strings.Contains(g.stderr, "refused the planner's 1 proposal(s)") || !strings.Contains(g.stderr, "already passes on the base tree") {
		t.Fatalf("ultra goals: exit %d\n%s%s", g.code, g.stdout, g.stderr)
	}
}

// docAndNoteRuns runs two runs from dir's main, each with a goal: A
// rewrites Add's doc comment, B writes NOTES.md, with its third criterion
// noteRegression. Both complete; neither lands.
func docAndNoteRuns(t *testing.T, dir string, noteRegression map[string]any) (idA, idB string) {
	t.Helper()
	doc := refactorOf(goalsOf("Add says sum",
		crit("happy", "command", "the doc says sum", map[string]any{"run": "grep -c 'the sum' calc/calc.go", "expect_stdout": "^1$"}),
		crit("edge", "command", "the old doc is gone", map[string]any{"run": "grep -q 'a plus b' calc/calc.go", "expect_exit": 1}),
		crit("regression", "command", "Add still adds", map[string]any{"run": "grep -c 'return a + b' calc/calc.go", "expect_stdout": "^1$"})))
	runA := newModel(t, calls(call("read", map[string]any{"file_path": "calc/calc.go"})), calls(call("goals", doc)),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "// Add returns a plus b.", "new_string": "// Add returns the sum of a and b."})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})), approve())
	notes := goalsOf("A note on Add",
		crit("happy", "command", "the note is there", map[string]any{"run": "cat NOTES.md", "expect_stdout": "^Add: a plus b$"}),
		crit("edge", "command", "the note names Add", map[string]any{"run": "grep -c 'Add' NOTES.md", "expect_stdout": "^1$"}),
		noteRegression)
	runB := newModel(t, calls(call("goals", notes)),
		calls(call("write", map[string]any{"file_path": "NOTES.md", "content": "Add: a plus b\n"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})), approve())
	a := ultra(t, dir, runArgs(runA, "document Add")...)
	b := ultra(t, dir, runArgs(runB, "note Add")...)
	if a.code != 0 || b.code != 0 {
		t.Fatalf("runs: %d %d\n%s\n%s", a.code, b.code, a.stderr, b.stderr)
	}
	return runID(t, a.events(t)), runID(t, b.events(t))
}
