package e2e

import (
	"encoding/base64"
	"os/exec"
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

// goals.on_failure = continue: a worker claims what another goal needs,
// then fails its goal (three identical failures of its criterion). Its
// goal never lands and its worker never comes back, so what it claimed
// is free: the other worker, waiting for the claim, gets it and lands;
// the run escalates at its end naming the failed goal.
func TestParallelFailedGoalReleasesItsClaims(t *testing.T) {
	t.Parallel()
	files := map[string]string{".ultra/config": "[goals]\non_failure = \"continue\"\n"}
	for k, v := range opsProject {
		files[k] = v
	}
	dir := repo(t, files)
	doomed := []step{claimCall("calc/calc.go", "cmd/calc/main.go", "calc/notes.txt"),
		calls(call("write", map[string]any{"file_path": "calc/notes.txt", "content": "Mul is hard\n"}))}
	for range 3 {
		doomed = append(doomed, verifySteps()...)
	}
	wait := claimCall("calc/calc.go", "cmd/calc/main.go")
	wait["delay_ms"] = 1500 // the doomed worker claims first
	sub := append([]step{wait}, addOpEdits("sub", "Sub", "a - b")...)
	res, _ := parallelRun(t, dir, 2, []any{opGoal("mul", "Mul", "6", "-6"), opGoal("sub", "Sub", "-1", "-5")},
		lane("G001", doomed...), lane("G002", append(sub, verifySteps()...)...))
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	if got := workerEvents(evs, id, "landed"); len(got) != 1 || got[0] != "G002-the-calculator-subs" {
		for _, e := range ofType(evs, "tool_result") {
			t.Log(e["run"], data(e)["output"])
		}
		t.Fatalf("landed %v\n%s", got, res.stderr)
	}
	if calc := git(t, dir, "show", "ultra/"+id+":calc/calc.go"); !strings.Contains(calc, "func Sub") {
		t.Fatalf("calc.go on the run's branch:\n%s", calc)
	}
	r := data(ofType(evs, "run_finished")[len(ofType(evs, "run_finished"))-1])["reason"].(string)
	if !strings.Contains(r, "G001-the-calculator-muls") {
		t.Fatalf("the run finished: %q", r)
	}
}

// A worker's shell reaches for what is not its own: it moves the run's
// and the other workers' branches, commits, writes into the other
// worktrees (the run's too), directly and through a link, and into
// ultra's records. Nothing of it happens: the sandbox holds the git
// directory and every other worktree read-only; the run's branch holds
// only ultra's commits, the goals land.
func TestParallelWorkerCannotReachOutOfItsWorktree(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	probe := `G=$(command -v git); u=.ul; u=${u}tra
wts=$("$G" worktree list --porcelain | sed -n 's/^worktree //p')
for b in $("$G" for-each-ref --format='%(refname)' refs/heads/); do "$G" update-ref "$b" HEAD 2>/dev/null && echo "MOVED $b"; done
"$G" commit --allow-empty -qm evil 2>/dev/null && echo COMMITTED
for d in $wts; do
  [ "$d" -ef "$PWD" ] && continue
  echo evil > "$d/EVIL.txt" 2>/dev/null && echo "WROTE $d"
  echo evil > "$d/calc/calc.go" 2>/dev/null && echo "WROTE $d/calc/calc.go"
  ln -s "$d" other && { echo evil > other/EVIL2.txt 2>/dev/null && echo "LINKED $d"; }; rm -f other
  for f in "$d"/$u/runs/*/goals.json; do echo '{}' > "$f" 2>/dev/null && echo "WROTE $f"; done
done
for f in $u/runs/*/goals.json; do echo '{}' > "$f" 2>/dev/null && echo "WROTE own $f"; done
echo probed`
	// The text guards refuse what they read; the sandbox is the rule,
	// so the probe goes where they cannot read it.
	hidden := "echo " + base64.StdEncoding.EncodeToString([]byte(probe)) + " | base64 -d | sh"
	mul := append([]step{claimCall("calc/calc.go", "cmd/calc/main.go")}, addOpEdits("mul", "Mul", "a * b")...)
	nap := calls(call("bash", map[string]any{"command": "sleep 1"})) // the other worker's worktree exists
	res, _ := parallelRun(t, dir, 2, []any{opGoal("mul", "Mul", "6", "-6"), helloGoal()},
		lane("G001", append(mul, verifySteps()...)...), helloLane(nap, calls(call("bash", map[string]any{"command": hidden}))))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	probed := false
	for _, e := range ofType(evs, "tool_result") {
		out, _ := data(e)["output"].(string)
		if strings.Contains(out, "probed") {
			probed = true
			// (A write into the person's checkout, which lies under /tmp
			// here, lands in the sandbox's own /tmp: judged on disk below.)
			for _, bad := range []string{"MOVED", "COMMITTED", "WROTE own"} {
				if strings.Contains(out, bad) {
					t.Errorf("the worker's shell reached out:\n%s", out)
				}
			}
		}
	}
	if !probed {
		for _, e := range ofType(evs, "tool_result") {
			t.Log(data(e)["output"])
		}
		t.Fatal("the probe did not run")
	}
	for _, l := range strings.Split(strings.TrimSpace(git(t, dir, "log", "--format=%s", "main..ultra/"+id)), "\n") {
		if !strings.HasPrefix(l, "ultra: ") {
			t.Fatalf("the run's branch holds %q", l)
		}
	}
	if got := workerEvents(evs, id, "landed"); len(got) != 2 {
		t.Fatalf("landed %v", got)
	}
	out, _ := exec.Command("sh", "-c", "grep -rl evil "+dir+" --exclude-dir=.git --exclude-dir=state; find "+dir+" -path '*/.ultra/state' -prune -o -name 'EVIL*' -print").Output()
	if strings.TrimSpace(string(out)) != "" {
		t.Fatalf("files written from the worker's shell:\n%s", out)
	}
	for _, ref := range strings.Fields(git(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads/")) {
		if got, _ := exec.Command("git", "-C", dir, "grep", "-l", "evil", ref).Output(); len(got) > 0 {
			t.Fatalf("%s holds what the worker's shell wrote elsewhere:\n%s", ref, got)
		}
	}
}
