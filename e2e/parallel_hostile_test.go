package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// Hostile workers of a parallel run: what they try, and what the run's
// branch ends up holding.

// A worker writes into a file another worker holds (cmd/calc/main.go,
// G001's), through the shell, with a line that reads like a diff's
// header: an added "++ b/cmd/hello/main.go" shows as "+++ b/…" in the
// change ultra reads at landing, the name of the file the worker does
// hold. The run reads it as the content it is: the goal goes back, the
// change named; no commit of the run's branch holds it; the worker drops
// it and lands.
func TestParallelHeaderLikeLineDoesNotLand(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	sneak := `{ printf '/*\n++ b/cmd/hello/main.go\n*/\n'; cat cmd/calc/main.go; } > /tmp/m.go && cp /tmp/m.go cmd/calc/main.go`
	mul := append([]step{claimCall("calc/calc.go", "cmd/calc/main.go")}, addOpEdits("mul", "Mul", "a * b")...)
	hello := []step{claimCall("cmd/hello/main.go"),
		calls(call("write", map[string]any{"file_path": "cmd/hello/main.go", "content": helloMain})),
		calls(call("bash", map[string]any{"command": sneak}))}
	hello = append(hello, verifySteps()...)
	hello = append(hello, calls(call("bash", map[string]any{"command": `sed -i '1,3d' cmd/calc/main.go`})))
	hello = append(hello, verifySteps()...)
	res, _ := parallelRun(t, dir, 2, []any{opGoal("mul", "Mul", "6", "-6"), helloGoal()},
		lane("G001", append(mul, verifySteps()...)...), lane("G002", hello...))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	if back := sentBack(evs, id); !strings.Contains(back, "cmd/calc/main.go (not claimed)") {
		t.Fatalf("sent back for %q", back)
	}
	for _, c := range strings.Fields(git(t, dir, "log", "--format=%H", "main..ultra/"+id, "--first-parent")) {
		if strings.Contains(git(t, dir, "show", c+":cmd/calc/main.go"), "++ b/") {
			t.Fatalf("commit %s of the run's branch holds the unclaimed change:\n%s", c, git(t, dir, "log", "-1", "--format=%B", c))
		}
	}
	kinds := ledgerKinds(t, filepath.Join(recordsIn(t, workdirOf(t, evs)), "ledger.jsonl"))
	if kinds["merge_rejected"] != 1 || kinds["goal_completed"] != 2 {
		t.Fatalf("ledger kinds %v", kinds)
	}
}
