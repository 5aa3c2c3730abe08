package e2e

import (
	"fmt"
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

// negTest is a test the run adds in building.
const negTest = "package calc\n\nimport \"testing\"\n\nfunc TestAddNegative(t *testing.T) {\n\tif got := Add(-2, -3); got != -5 {\n\t\tt.Fatalf(\"Add(-2, -3) = %d, want -5\", got)\n\t}\n}\n\nfunc TestAddOne(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal(\"one\")\n\t}\n}\n"

// A cleanup may not weaken, skip or delete a test the run added (no
// guard of the original tests covers it) to slip a change of behaviour
// in: the test is not the cleanup's to edit, and the change it would
// have hidden fails the tests, so the cleanup is reverted. The reviewer
// reads what the cleanup was.
func TestCleanupCannotWeakenARunAddedTest(t *testing.T) {
	t.Parallel()
	breakAdd := call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "\treturn a + b", "new_string": "\tif a < 0 {\n\t\treturn 0\n\t}\n\treturn a + b"})
	for name, weaken := range map[string]map[string]any{
		"assertion removed": {"file_path": "calc/neg_test.go", "old_string": "\tif got := Add(-2, -3); got != -5 {\n\t\tt.Fatalf(\"Add(-2, -3) = %d, want -5\", got)\n\t}\n", "new_string": "\t_ = Add(-2, -3)\n"},
		"skipped":           {"file_path": "calc/neg_test.go", "old_string": "func TestAddNegative(t *testing.T) {\n", "new_string": "func TestAddNegative(t *testing.T) {\n\tt.Skip(\"flaky\")\n"},
		"deleted":           {"file_path": "calc/neg_test.go", "old_string": "func TestAddNegative(t *testing.T) {\n\tif got := Add(-2, -3); got != -5 {\n\t\tt.Fatalf(\"Add(-2, -3) = %d, want -5\", got)\n\t}\n}\n", "new_string": ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newModel(t,
				fixSteps()[0], fixSteps()[1],
				calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"}),
					call("write", map[string]any{"file_path": "calc/neg_test.go", "content": negTest})),
				calls(call("phase", map[string]any{"to": "verifying"})),
				calls(call("verify", map[string]any{})),
				calls(call("read", map[string]any{"file_path": "calc/neg_test.go"})),
				calls(call("edit", weaken), breakAdd),
				endCleanup(),
				approve(),
			)
			dir := repo(t, calcProject)
			res := ultra(t, dir, runArgs(m, "fix calc")...)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stderr)
			}
			evs := res.events(t)
			id := runID(t, evs)
			if got := git(t, dir, "show", "ultra/"+id+":calc/calc.go"); strings.Contains(got, "return 0") {
				t.Fatalf("the broken Add is on the branch:\n%s", got)
			}
			if got := git(t, dir, "show", "ultra/"+id+":calc/neg_test.go"); got != negTest {
				t.Fatalf("the run's test changed on the branch:\n%s", got)
			}
			// No commit of the branch holds a weakened test.
			for _, c := range strings.Fields(git(t, dir, "rev-list", "main..ultra/"+id)) {
				if got := git(t, dir, "show", c+":calc/neg_test.go"); got != negTest {
					t.Fatalf("commit %s holds another calc/neg_test.go:\n%s", c, got)
				}
			}
			var refused bool
			for _, e := range ofType(evs, "refusal") {
				r := data(e)["reason"].(string)
				refused = refused || (data(e)["layer"] == "cleanup-files" && strings.HasPrefix(r, "calc/neg_test.go is a test: ") &&
					strings.Contains(r, "tests and test support are not the cleanup's to change"))
			}
			if !refused || !slices.Equal(cleanupResults(evs), []string{"started", "reverted"}) {
				t.Fatalf("refused %v, cleanup %v", refused, cleanupResults(evs))
			}
			// The pass's files leave the test out, and the model is told so.
			if f := data(ofType(evs, "cleanup")[0])["files"]; fmt.Sprint(f) != "[calc/calc.go]" {
				t.Fatalf("the cleanup may edit %v", f)
			}
			var told bool
			for _, rq := range m.srv.Requests() {
				told = told || strings.Contains(string(rq.Body), "not the cleanup's to change (a pass that changes no behaviour has no reason to touch them); the run also changed these, which stay as they are:\\n  - calc/neg_test.go (a test)")
			}
			if !told {
				t.Fatal("the cleanup's prompt does not set the run's test aside")
			}
			if led := readFile(t, filepath.Join(recordsIn(t, workdirOf(t, evs)), "ledger.jsonl")); !strings.Contains(led, `"tests_aside":{"calc/neg_test.go":"a test"}`) {
				t.Fatalf("the ledger's cleanup_started does not set the test aside:\n%s", led)
			}
			var reviewer string
			for _, rq := range m.srv.Requests() {
				if slices.Contains(rq.Tools, "review") {
					reviewer = string(rq.Body)
				}
			}
			if !strings.Contains(reviewer, "A cleanup pass was reverted") {
				t.Fatal("the reviewer is not told of the reverted cleanup")
			}
		})
	}
}

// A cleanup that skips a test the run added through the code it may edit
// (the test skips when the code says so) is reverted, though the gate
// only has concerns about a skipped test: a test that passed at the final
// gate must still run on the cleaned tree. The ledger says which.
func TestCleanupThatSkipsAPassingTestIsReverted(t *testing.T) {
	t.Parallel()
	skippable := strings.Replace(negTest, "func TestAddNegative(t *testing.T) {\n", "func TestAddNegative(t *testing.T) {\n\tif !negatives {\n\t\tt.Skip(\"negatives off\")\n\t}\n", 1)
	fix := "return a + b\n}\n\nconst negatives = true"
	dir, evs, id, wt := cleanupRun(t, []step{
		fixSteps()[0], fixSteps()[1],
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b\n}", "new_string": fix}),
			call("write", map[string]any{"file_path": "calc/neg_test.go", "content": skippable})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": fix, "new_string": "if a < 0 {\n\t\treturn 0\n\t}\n\treturn a + b\n}\n\nconst negatives = false"})),
		endCleanup(),
		approve(),
	})
	if got := cleanupResults(evs); !slices.Equal(got, []string{"started", "reverted"}) {
		t.Fatalf("cleanup events %v", got)
	}
	if got := git(t, dir, "show", "ultra/"+id+":calc/calc.go"); strings.Contains(got, "return 0") || !strings.Contains(got, "negatives = true") {
		t.Fatalf("calc.go at the tip:\n%s", got)
	}
	if got := readFile(t, filepath.Join(wt, "calc/calc.go")); strings.Contains(got, "return 0") {
		t.Fatalf("calc.go in the worktree:\n%s", got)
	}
	why := data(ofType(evs, "cleanup")[1])["reason"].(string)
	led := readFile(t, filepath.Join(recordsIn(t, wt), "ledger.jsonl"))
	for _, s := range []string{why, led} {
		if !strings.Contains(s, "tests that passed at the final gate do not run on the cleaned tree: 1 skipped (") || !strings.Contains(s, "TestAddNegative") {
			t.Fatalf("the revert does not name the skipped test: %s", s)
		}
	}
}

// A helper the run's tests load and its code does not is test support,
// as the gate tells it: the cleanup may not edit it either (an assertion
// helper made to check nothing weakens every test that uses it).
func TestCleanupCannotEditTestSupport(t *testing.T) {
	t.Parallel()
	const helper = "package checks\n\nimport \"testing\"\n\n// Eq fails t when got is not want.\nfunc Eq(t *testing.T, got, want int) {\n\tt.Helper()\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n"
	const test = "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/calc/internal/checks\"\n)\n\nfunc TestAddNegative(t *testing.T) {\n\tchecks.Eq(t, Add(-2, -3), -5)\n}\n"
	dir, evs, id, _ := cleanupRun(t, []step{
		fixSteps()[0], fixSteps()[1],
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"}),
			call("write", map[string]any{"file_path": "calc/internal/checks/checks.go", "content": helper}),
			call("write", map[string]any{"file_path": "calc/neg_test.go", "content": test})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		calls(call("edit", map[string]any{"file_path": "calc/internal/checks/checks.go", "old_string": "\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n", "new_string": ""}),
			call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "\treturn a + b", "new_string": "\tif a < 0 {\n\t\treturn 0\n\t}\n\treturn a + b"})),
		endCleanup(),
		approve(),
	})
	if f := data(ofType(evs, "cleanup")[0])["files"]; fmt.Sprint(f) != "[calc/calc.go]" {
		t.Fatalf("the cleanup may edit %v", f)
	}
	var refused string
	for _, e := range ofType(evs, "refusal") {
		if data(e)["layer"] == "cleanup-files" {
			refused = data(e)["reason"].(string)
		}
	}
	if !strings.HasPrefix(refused, "calc/internal/checks/checks.go is test support: ") || !strings.Contains(refused, "not the cleanup's to change") {
		t.Fatalf("the helper's edit: %q", refused)
	}
	if got := git(t, dir, "show", "ultra/"+id+":calc/internal/checks/checks.go"); got != helper {
		t.Fatalf("the helper at the tip:\n%s", got)
	}
	if got := git(t, dir, "show", "ultra/"+id+":calc/calc.go"); strings.Contains(got, "return 0") {
		t.Fatalf("the broken Add is on the branch:\n%s", got)
	}
	if got := cleanupResults(evs); !slices.Equal(got, []string{"started", "reverted"}) {
		t.Fatalf("cleanup events %v", got)
	}
}
