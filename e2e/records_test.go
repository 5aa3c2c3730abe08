package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each run keeps its records (brief, goals, ledger) in a directory of its
// own: two runs landed one after the other leave both on main, each still
// verifiable once its worktree is gone, and ultra diff and land show the
// code with the records summed up in one line.
func TestRecordsPerRunSurviveLanding(t *testing.T) {
	t.Parallel()
	dir := repo(t, greenProject)
	idA, idB := docAndNoteRuns(t, dir,
		crit("regression", "command", "the module is still there", map[string]any{"run": "grep -c '^module ' go.mod", "expect_stdout": "^1$"}))

	// The diff is the code; the records are one line, shown on request.
	d := ultra(t, dir, "diff", idA)
	if d.code != 0 || !strings.Contains(d.stdout, "+// Add returns the sum of a and b.") || strings.Contains(d.stdout, "goals.json") ||
		strings.Contains(d.stdout, `"kind"`) || !strings.Contains(d.stdout, "# ultra's records of runs: 2 files") {
		t.Fatalf("ultra diff: %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if s := ultra(t, dir, "diff", idA, "--stat"); s.code != 0 || strings.Contains(s.stdout, ".ultra/runs/"+idA+"/") || !strings.Contains(s.stdout, "calc/calc.go") {
		t.Fatalf("ultra diff --stat: %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	if r := ultra(t, dir, "diff", idA, "--records"); r.code != 0 || !strings.Contains(r.stdout, ".ultra/runs/"+idA+"/ledger.jsonl") || !strings.Contains(r.stdout, "calc/calc.go") {
		t.Fatalf("ultra diff --records: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	la := ultra(t, dir, "land", idA)
	if la.code != 0 || !strings.Contains(la.stdout, "the code: 1 file, +1 −1; ultra's records: 2 files") {
		t.Fatalf("land A: %d\n%s%s", la.code, la.stdout, la.stderr)
	}
	if lb := ultra(t, dir, "land", idB); lb.code != 0 {
		t.Fatalf("land B (main moved: merged and verified): %d\n%s%s", lb.code, lb.stdout, lb.stderr)
	}
	// Both runs' records are on main, each its own.
	for _, id := range []string{idA, idB} {
		var f struct{ Run string }
		if err := json.Unmarshal([]byte(git(t, dir, "show", "main:.ultra/runs/"+id+"/goals.json")), &f); err != nil || f.Run != id {
			t.Fatalf("main's records of %s: %+v %v", id, f, err)
		}
		if !strings.Contains(git(t, dir, "show", "main:.ultra/runs/"+id+"/ledger.jsonl"), `"kind":"plan_accepted"`) {
			t.Fatalf("main's ledger of %s lacks the plan's acceptance", id)
		}
	}
	if top := git(t, dir, "ls-tree", "--name-only", "main", ".ultra/"); strings.TrimSpace(top) != ".ultra/runs" {
		t.Fatalf("main's .ultra holds %q, want only the runs' records", top)
	}

	// With its worktree gone, a landed run's records are verified as they
	// landed.
	wtA := strings.TrimSpace(git(t, dir, "worktree", "list", "--porcelain"))
	for _, blk := range strings.Split(wtA, "\n\n") {
		if strings.Contains(blk, "branch refs/heads/ultra/"+idA) {
			git(t, dir, "worktree", "remove", "--force", strings.TrimPrefix(strings.SplitN(blk, "\n", 2)[0], "worktree "))
		}
	}
	v := ultra(t, dir, "goals", "ledger", "--verify", "--run", idA)
	if v.code != 0 || !strings.Contains(v.stderr, "its records as main at ") || !strings.Contains(v.stdout, "match it") {
		t.Fatalf("verify after landing: %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	if g := ultra(t, dir, "goals", idA); g.code != 0 || !strings.Contains(g.stdout, "Add says sum") {
		t.Fatalf("goals after landing: %d\n%s%s", g.code, g.stdout, g.stderr)
	}
	// What main holds is what is verified: a later commit that changes
	// the landed ledger is found.
	ledger := filepath.Join(dir, ".ultra", "runs", idA, "ledger.jsonl")
	b, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(ledger, []byte(strings.Replace(string(b), "plan_accepted", "plan_accepteD", 1)), 0o644)
	git(t, dir, "commit", "-qam", "tamper with a landed ledger")
	if v := ultra(t, dir, "goals", "ledger", idA, "--verify"); v.code != 1 {
		t.Fatalf("verify of a ledger changed on main after landing: %d\n%s%s", v.code, v.stdout, v.stderr)
	}
}
