package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// debugFix is the fix of calcProject with a debugging print left in it.
const debugFix = "println(\"DEBUG add\", a, b)\n\treturn a + b"

// cleanupSteps are a model's fix of calcProject that leaves a debugging
// print in calc.go, its verification, then the cleanup pass's calls and
// the review's approval: a script that scripts its own cleanup pass.
func cleanupSteps(cleanup ...step) []step {
	steps := []step{
		fixSteps()[0], fixSteps()[1],
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": debugFix})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
	}
	return append(append(steps, cleanup...), approve())
}

// cleanupRun runs steps on calcProject; it returns the events, the run's
// id and its worktree.
func cleanupRun(t *testing.T, steps []step) (string, []map[string]any, string, string) {
	t.Helper()
	dir := repo(t, calcProject)
	res := ultra(t, dir, runArgs(newModel(t, steps...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	return dir, evs, runID(t, evs), workdirOf(t, evs)
}

// phasesOf are the phases the run went through, in order.
func phasesOf(evs []map[string]any) []string {
	var out []string
	for _, e := range ofType(evs, "phase_changed") {
		out = append(out, data(e)["to"].(string))
	}
	return out
}

func cleanupResults(evs []map[string]any) []string {
	var out []string
	for _, e := range ofType(evs, "cleanup") {
		out = append(out, data(e)["result"].(string))
	}
	return out
}

// (a) A cleanup that removes the debugging print the fix left stays
// green and is committed on its own, after the goal's commit.
func TestCleanupRemovesADebugPrint(t *testing.T) {
	t.Parallel()
	dir, evs, id, wt := cleanupRun(t, cleanupSteps(
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "println(\"DEBUG add\", a, b)\n\t", "new_string": ""})),
		calls(call("phase", map[string]any{"to": "verifying", "reason": "removed the debugging print"})),
	))
	if got := phasesOf(evs); !slices.Equal(got[len(got)-4:], []string{"cleaning", "verifying", "reviewing", "complete"}) {
		t.Fatalf("phases %v", got)
	}
	if got := cleanupResults(evs); !slices.Equal(got, []string{"started", "committed"}) {
		t.Fatalf("cleanup events %v", got)
	}
	branch := "ultra/" + id
	// The goal's commit, the cleanup's, then the records of the review.
	subjects := strings.Split(strings.TrimSpace(git(t, dir, "log", "--format=%s", "main.."+branch)), "\n")
	if len(subjects) != 3 || subjects[1] != "ultra: cleanup pass" || !strings.HasPrefix(subjects[2], "ultra: G001") {
		t.Fatalf("commits on the run's branch: %q", subjects)
	}
	if msg := git(t, dir, "log", "-1", "--format=%B", branch+"~1"); !strings.Contains(msg, "Ultra-Final: cleanup") {
		t.Errorf("the cleanup's commit message:\n%s", msg)
	}
	if got := git(t, dir, "show", branch+":calc/calc.go"); strings.Contains(got, "DEBUG") || !strings.Contains(got, "return a + b") {
		t.Errorf("calc.go at the tip:\n%s", got)
	}
	if got := git(t, dir, "show", branch+"~2:calc/calc.go"); !strings.Contains(got, "DEBUG") {
		t.Errorf("calc.go in the goal's commit:\n%s", got)
	}
	if got := readFile(t, filepath.Join(wt, "calc/calc.go")); strings.Contains(got, "DEBUG") {
		t.Errorf("calc.go in the worktree:\n%s", got)
	}
	// ultra goals shows the final gate's steps with their results.
	g := ultra(t, dir, "goals", id)
	for _, want := range []string{"final gate:", "final gate: pass:", "cleanup started:", "cleanup committed:", "review verdict: round 1: approve"} {
		if !strings.Contains(g.stdout, want) {
			t.Errorf("ultra goals lacks %q:\n%s", want, g.stdout)
		}
	}
}

// (b) A cleanup that breaks a test is reverted: the tip and the worktree
// hold the code before it, the ledger records the revert with what
// failed, and the run still completes after its review.
func TestCleanupThatBreaksATestIsReverted(t *testing.T) {
	t.Parallel()
	dir, evs, id, wt := cleanupRun(t, cleanupSteps(
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": debugFix, "new_string": "return a * b"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
	))
	if got := cleanupResults(evs); !slices.Equal(got, []string{"started", "reverted"}) {
		t.Fatalf("cleanup events %v", got)
	}
	fin := ofType(evs, "run_finished")
	if len(fin) != 1 || data(fin[0])["status"] != "complete" {
		t.Fatalf("run_finished %v", fin)
	}
	branch := "ultra/" + id
	if got := git(t, dir, "show", branch+":calc/calc.go"); !strings.Contains(got, debugFix) {
		t.Errorf("calc.go at the tip:\n%s", got)
	}
	if got := readFile(t, filepath.Join(wt, "calc/calc.go")); !strings.Contains(got, debugFix) || strings.Contains(got, "a * b") {
		t.Errorf("calc.go in the worktree:\n%s", got)
	}
	if log := git(t, dir, "log", "--format=%B", "main.."+branch); strings.Contains(log, "Ultra-Final: cleanup") {
		t.Errorf("the reverted cleanup was committed:\n%s", log)
	}
	if st := git(t, wt, "status", "--porcelain", "--", "calc"); strings.TrimSpace(st) != "" {
		t.Errorf("the worktree's code differs from its tip:\n%s", st)
	}
	led := readFile(t, filepath.Join(wt, ".ultra", "runs", id, "ledger.jsonl"))
	if !strings.Contains(led, `"kind":"cleanup_reverted"`) || !strings.Contains(led, "broke the tests") {
		t.Errorf("the ledger lacks the revert:\n%s", led)
	}
	if len(ofType(evs, "review")) != 1 {
		t.Error("no review after the revert")
	}
}

// (c) In the cleanup pass, an edit of a file the run did not change is
// refused and the file stays as it was.
func TestCleanupCannotEditOtherFiles(t *testing.T) {
	t.Parallel()
	_, evs, _, wt := cleanupRun(t, cleanupSteps(
		calls(call("read", map[string]any{"file_path": "calc/calc_test.go"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc_test.go", "old_string": "want 5", "new_string": "want five"})),
		endCleanup(),
	))
	refused := false
	for _, e := range ofType(evs, "refusal") {
		if d := data(e); d["tool"] == "edit" && d["layer"] == "cleanup-files" {
			refused = true
		}
	}
	if !refused {
		t.Fatal("the edit of calc_test.go was not refused")
	}
	if got := readFile(t, filepath.Join(wt, "calc/calc_test.go")); got != calcProject["calc/calc_test.go"] {
		t.Errorf("calc_test.go changed:\n%s", got)
	}
	if got := cleanupResults(evs); !slices.Equal(got, []string{"started", "unchanged"}) {
		t.Errorf("cleanup events %v", got)
	}
}
