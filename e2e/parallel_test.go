package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A Go project with a calculator program: it adds; the goals of the
// parallel tests teach it more operations.
var opsProject = map[string]string{
	"go.mod":            "module example.com/ops\n\ngo 1.21\n",
	"calc/calc.go":      "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
	"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
	"cmd/calc/main.go": `package main

import (
	"fmt"
	"os"
	"strconv"

	"example.com/ops/calc"
)

func main() {
	a, _ := strconv.Atoi(os.Args[2])
	b, _ := strconv.Atoi(os.Args[3])
	switch os.Args[1] {
	case "add":
		fmt.Println(calc.Add(a, b))
	default:
		fmt.Fprintln(os.Stderr, "unknown operation", os.Args[1])
		os.Exit(2)
	}
}
`,
}

// opGoal is the goal of teaching the calculator op (name: Mul), which
// computes want for 2 and 3 and wantNeg for -2 and 3.
func opGoal(op, name, want, wantNeg string, deps ...string) map[string]any {
	g := map[string]any{"title": "The calculator " + op + "s", "objective": "calc " + op + " A B prints the result of " + name + "(A, B)", "criteria": []any{
		crit("happy", "command", op+" of 2 and 3", map[string]any{"run": "go run ./cmd/calc " + op + " 2 3", "expect_stdout": "^" + want + "$"}),
		crit("edge", "command", op+" with a negative number", map[string]any{"run": "go run ./cmd/calc " + op + " -2 3", "expect_stdout": "^" + wantNeg + "$"}),
		crit("regression", "command", "addition still works", map[string]any{"run": "go run ./cmd/calc add 2 3", "expect_stdout": "^5$"}),
	}}
	if len(deps) > 0 {
		g["depends_on"] = deps
	}
	return g
}

// opFunc is Go source of calc's function name, computing expr.
func opFunc(name, expr string) string {
	return fmt.Sprintf("\n// %s computes %s.\nfunc %s(a, b int) int {\n\treturn %s\n}\n", name, expr, name, expr)
}

// opCase is the program's case for op.
func opCase(op, name string) string {
	return fmt.Sprintf("\tcase %q:\n\t\tfmt.Println(calc.%s(a, b))\n", op, name)
}

// addOpEdits are a worker's edits that teach the calculator op: its
// function after Add, its case after add's (each anchored on add's, which
// no other goal changes).
func addOpEdits(op, name, expr string) []step {
	addFunc := "func Add(a, b int) int {\n\treturn a + b\n}\n"
	addCase := opCase("add", "Add")
	return []step{
		calls(call("read", map[string]any{"file_path": "calc/calc.go"}), call("read", map[string]any{"file_path": "cmd/calc/main.go"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": addFunc, "new_string": addFunc + opFunc(name, expr)})),
		calls(call("edit", map[string]any{"file_path": "cmd/calc/main.go", "old_string": addCase, "new_string": addCase + opCase(op, name)})),
	}
}

func claimCall(paths ...any) step {
	var cs []any
	for _, p := range paths {
		switch p := p.(type) {
		case string:
			cs = append(cs, map[string]any{"path": p})
		default:
			cs = append(cs, p)
		}
	}
	return calls(call("claim", map[string]any{"claims": cs, "reason": "the goal's change"}))
}

func verifySteps() []step {
	return []step{calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{}))}
}

// lane is a worker's script: the requests of the conversation whose first
// message gives it goal id.
func lane(id string, steps ...step) map[string]any {
	return map[string]any{"match": "Your goal is " + id + "-", "steps": steps}
}

// parallelScript is the model of a parallel brief: the main script plans
// goals (and ends the cleanup pass and approves the review), the lanes
// work them; and the brief, in a file of its own.
func parallelScript(t *testing.T, goals []any, lanes ...map[string]any) (*model, string) {
	t.Helper()
	brief := filepath.Join(t.TempDir(), "BRIEF.md")
	os.WriteFile(brief, []byte("# More operations\n\nThe calculator learns more operations.\n\n## Definition of done\n- each operation works as its criteria show\n"), 0o644)
	m := newScript(t, map[string]any{
		"steps": []step{calls(call("goals", map[string]any{"goals": goals})), endCleanup(), approve()},
		"lanes": lanes,
	})
	return m, brief
}

// parallelRun runs a parallel brief in dir with workers (and extra
// arguments), and waits for it.
func parallelRun(t *testing.T, dir string, workers int, goals []any, lanes ...map[string]any) (result, string) {
	t.Helper()
	return parallelRunWith(t, dir, workers, nil, goals, lanes...)
}

func parallelRunWith(t *testing.T, dir string, workers int, extra []string, goals []any, lanes ...map[string]any) (result, string) {
	t.Helper()
	m, brief := parallelScript(t, goals, lanes...)
	// Bounded: a run whose workers wait for each other forever fails the
	// test with its log rather than hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	args := runArgs(m, append([]string{"--parallel", fmt.Sprint(workers), "--brief-file", brief}, extra...)...)
	res := ultraCmd(t, exec.CommandContext(ctx, ultraBin, args...), dir, ultraEnv(t))
	if ctx.Err() != nil {
		t.Fatalf("the parallel run did not end in time\n%s\n%s", res.stdout, res.stderr)
	}
	return res, brief
}

// workerEvents are the goals of the run's worker events of kind ev, in order.
func workerEvents(evs []map[string]any, run, ev string) []string {
	var out []string
	for _, e := range ofType(evs, "worker") {
		if e["run"] == run && data(e)["event"] == ev {
			out = append(out, data(e)["goal"].(string))
		}
	}
	return out
}

// sentBack is the reasons the run gave its workers' goals back, joined.
func sentBack(evs []map[string]any, run string) string {
	back := ""
	for _, e := range ofType(evs, "worker") {
		if d := data(e); e["run"] == run && d["event"] == "sent_back" {
			back += d["reason"].(string)
		}
	}
	return back
}

// ledgerKinds counts the entries of each kind in a run's ledger.
func ledgerKinds(t *testing.T, path string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		var e struct{ Kind string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("ledger line %q: %v", line, err)
		}
		out[e.Kind]++
	}
	return out
}

// Two goals that change the same two files: the second worker's claim
// waits for the first's, which names its holder; when the first goal
// lands, the second worker's work moves onto the run's branch, so its
// edits build on the first goal's and its merge is clean. Both goals land
// as merge commits, the final gate passes on the run's branch.
func TestParallelClaimsWait(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	wait := claimCall("calc/calc.go", "cmd/calc/main.go")
	wait["delay_ms"] = 800 // the first worker claims first
	res, _ := parallelRun(t, dir, 2,
		[]any{opGoal("mul", "Mul", "6", "-6"), opGoal("sub", "Sub", "-1", "-5")},
		lane("G001", append(append([]step{claimCall("calc/calc.go", "cmd/calc/main.go")}, addOpEdits("mul", "Mul", "a * b")...), verifySteps()...)...),
		lane("G002", append(append([]step{wait}, addOpEdits("sub", "Sub", "a - b")...), verifySteps()...)...))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	if got := workerEvents(evs, id, "landed"); !slices.Equal(got, []string{"G001-the-calculator-muls", "G002-the-calculator-subs"}) {
		t.Fatalf("landed %v", got)
	}
	if got := workerEvents(evs, id, "sent_back"); len(got) != 0 {
		t.Fatalf("sent back %v", got)
	}
	// The second worker's claim waited, naming the first as the holder.
	waited := false
	for _, e := range ofType(evs, "tool_result") {
		if out, _ := data(e)["output"].(string); strings.Contains(out, "Waited: calc/calc.go overlaps calc/calc.go, held by worker") && strings.Contains(out, "for goal G001-") {
			waited = e["run"] != id
		}
	}
	if !waited {
		t.Fatalf("no claim waited for the first worker's\n%s", res.stdout)
	}
	// The branch: two merges (each of a worker's commit), then the final
	// gate's and the review's commits.
	log := git(t, dir, "log", "--format=%s|%P", "main..ultra/"+id, "--first-parent")
	var merges int
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		subject, parents, _ := strings.Cut(l, "|")
		if len(strings.Fields(parents)) == 2 {
			merges++
			if !strings.HasPrefix(subject, "ultra: G00") {
				t.Fatalf("merge %q", subject)
			}
		}
	}
	if merges != 2 {
		t.Fatalf("%d merges on the run's branch:\n%s", merges, log)
	}
	calc := git(t, dir, "show", "ultra/"+id+":calc/calc.go")
	if !strings.Contains(calc, "func Mul") || !strings.Contains(calc, "func Sub") {
		t.Fatalf("calc.go on the run's branch:\n%s", calc)
	}
	wt := workdirOf(t, evs)
	kinds := ledgerKinds(t, filepath.Join(recordsIn(t, wt), "ledger.jsonl"))
	if kinds["goal_dispatched"] != 2 || kinds["goal_completed"] != 2 || kinds["merge_rejected"] != 0 || kinds["final_gate"] != 1 {
		t.Fatalf("ledger kinds %v", kinds)
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 {
		t.Fatalf("ledger --verify: %d %s %s", v.code, v.stdout, v.stderr)
	}
	if s := ultra(t, dir, "status", id); s.code != 0 || !strings.Contains(s.stdout, "G002-the-calculator-subs") {
		t.Fatalf("status: %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	// Without a run id, the commands mean the run a person started, not
	// the worker that ended last.
	if g := ultra(t, dir, "goals"); g.code != 0 || !strings.Contains(g.stdout, "run "+id) || !strings.Contains(g.stdout, "G001-") || !strings.Contains(g.stdout, "G002-") {
		t.Fatalf("goals without a run: %d\n%s%s", g.code, g.stdout, g.stderr)
	}
	// A worker lands with its run, never alone; the run lands whole.
	var worker string
	for _, e := range ofType(evs, "worker") {
		worker = data(e)["worker"].(string)
	}
	if l := ultra(t, dir, "land", worker); l.code == 0 || !strings.Contains(l.stderr, "is a worker of the parallel run "+id) {
		t.Fatalf("land of a worker: %d %s %s", l.code, l.stdout, l.stderr)
	}
	if l := ultra(t, dir, "land", id); l.code != 0 {
		t.Fatalf("land: %d %s %s", l.code, l.stdout, l.stderr)
	}
	if calc := git(t, dir, "show", "main:calc/calc.go"); !strings.Contains(calc, "func Mul") || !strings.Contains(calc, "func Sub") {
		t.Fatalf("main after land:\n%s", calc)
	}
}

// Two goals whose workers claim apart (other lines of the same files)
// but insert their code at the same places: both work at once, the goal
// that lands second conflicts at its merge and goes back to its worker
// with the conflict as evidence, its work moved onto the run's branch
// with the conflicts marked; it resolves them, claims the files whole
// (the first worker's claims are released) and lands. Each lane holds
// the re-work, for whichever worker lands second.
func TestParallelConflictReworks(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	work := func(id, op, name, expr string, calcLines, mainLines [2]int) map[string]any {
		steps := []step{claimCall(
			map[string]any{"path": "calc/calc.go", "start_line": calcLines[0], "end_line": calcLines[1]},
			map[string]any{"path": "cmd/calc/main.go", "start_line": mainLines[0], "end_line": mainLines[1]})}
		steps = append(steps, addOpEdits(op, name, expr)...)
		steps = append(steps, verifySteps()...)
		// The re-work: the files as they must be, with both operations.
		steps = append(steps, claimCall("calc/calc.go", "cmd/calc/main.go"),
			calls(call("read", map[string]any{"file_path": "calc/calc.go"}), call("read", map[string]any{"file_path": "cmd/calc/main.go"})),
			calls(call("write", map[string]any{"file_path": "calc/calc.go", "content": opsProject["calc/calc.go"] + opFunc("Mul", "a * b") + opFunc("Sub", "a - b")})),
			calls(call("write", map[string]any{"file_path": "cmd/calc/main.go", "content": strings.Replace(opsProject["cmd/calc/main.go"], opCase("add", "Add"), opCase("add", "Add")+opCase("mul", "Mul")+opCase("sub", "Sub"), 1)})))
		return lane(id, append(steps, verifySteps()...)...)
	}
	res, _ := parallelRun(t, dir, 2,
		[]any{opGoal("mul", "Mul", "6", "-6"), opGoal("sub", "Sub", "-1", "-5")},
		work("G001", "mul", "Mul", "a * b", [2]int{3, 6}, [2]int{15, 16}),
		work("G002", "sub", "Sub", "a - b", [2]int{7, 7}, [2]int{17, 18}))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	landed, back := workerEvents(evs, id, "landed"), workerEvents(evs, id, "sent_back")
	if len(landed) != 2 || len(back) != 1 || back[0] != landed[1] {
		t.Fatalf("landed %v, sent back %v", landed, back)
	}
	for _, e := range ofType(evs, "worker") {
		if d := data(e); d["event"] == "sent_back" && !strings.Contains(d["reason"].(string), "conflicts with what landed") {
			t.Fatalf("sent back for %q", d["reason"])
		}
	}
	// The worker of the later goal read the conflict, with what landed.
	var told string
	for _, e := range ofType(evs, "tool_result") {
		if out, _ := data(e)["output"].(string); e["run"] != id && strings.Contains(out, "The run did not land the goal") {
			told = out
		}
	}
	if !strings.Contains(told, "hold git's conflict markers") || !strings.Contains(told, "What landed on the run's branch") {
		t.Fatalf("the worker read:\n%s", told)
	}
	calc := git(t, dir, "show", "ultra/"+id+":calc/calc.go")
	main := git(t, dir, "show", "ultra/"+id+":cmd/calc/main.go")
	if !strings.Contains(calc, "func Mul") || !strings.Contains(calc, "func Sub") || strings.Contains(calc, "<<<<") || !strings.Contains(main, `case "sub"`) || !strings.Contains(main, `case "mul"`) {
		t.Fatalf("the run's branch holds:\n%s\n%s", calc, main)
	}
	// Both landings are merges of a worker's commit; the branch never held
	// the conflicted tree.
	log := git(t, dir, "log", "--format=%H %P", "main..ultra/"+id, "--first-parent")
	merges := 0
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 {
			merges++
		}
		if strings.Contains(git(t, dir, "show", f[0]+":calc/calc.go"), "<<<<") {
			t.Fatalf("commit %s holds conflict markers", f[0])
		}
	}
	if merges != 2 {
		t.Fatalf("%d merges:\n%s", merges, log)
	}
	kinds := ledgerKinds(t, filepath.Join(recordsIn(t, workdirOf(t, evs)), "ledger.jsonl"))
	if kinds["merge_rejected"] != 1 || kinds["goal_completed"] != 2 || kinds["goal_dispatched"] != 2 {
		t.Fatalf("ledger kinds %v", kinds)
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 {
		t.Fatalf("ledger --verify: %d %s %s", v.code, v.stdout, v.stderr)
	}
}

// helloGoal is the goal of a greeting program, which no other goal
// touches.
func helloGoal() map[string]any {
	return map[string]any{"title": "A greeting program", "objective": "cmd/hello prints hello", "criteria": []any{
		crit("happy", "command", "it greets", map[string]any{"run": "go run ./cmd/hello", "expect_stdout": "^hello$"}),
		crit("edge", "command", "it greets once", map[string]any{"run": "go run ./cmd/hello | wc -l", "expect_stdout": "^1$"}),
		crit("regression", "command", "addition still works", map[string]any{"run": "go run ./cmd/calc add 2 3", "expect_stdout": "^5$"}),
	}}
}

const helloMain = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"

func helloLane(first ...step) map[string]any {
	steps := append(first, claimCall("cmd/hello/main.go"),
		calls(call("write", map[string]any{"file_path": "cmd/hello/main.go", "content": helloMain})))
	return lane("G002", append(steps, verifySteps()...)...)
}

// A hostile worker: the guard refuses its edit of a file it did not
// claim, so it changes the file through the shell; its goal passes its
// own gate and criteria, but the run does not land a commit that reaches
// outside its claims: it goes back to the worker, which claims the file,
// and lands.
func TestParallelWorkerOutsideItsClaims(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	sneak := `sed -i 's/^\tcase "add":/\tcase "mul":\n\t\tfmt.Println(calc.Mul(a, b))\n\tcase "add":/' cmd/calc/main.go`
	edits := addOpEdits("mul", "Mul", "a * b")
	// It hoards first: 60 files, then 41 more and the other worker's file,
	// which would hold more than a worker may (refused: nothing of it is
	// taken, and the other worker is not kept waiting).
	var hoard, more []any
	for i := range 60 {
		hoard = append(hoard, fmt.Sprintf("hoard/a%02d.go", i))
	}
	for i := range 41 {
		more = append(more, fmt.Sprintf("hoard/b%02d.go", i))
	}
	steps := []step{claimCall(hoard...), claimCall(append(more, "cmd/hello/main.go")...),
		claimCall("calc/calc.go"), edits[0], edits[1], edits[2],
		calls(call("bash", map[string]any{"command": sneak}))}
	steps = append(steps, verifySteps()...)
	steps = append(steps, claimCall("cmd/calc/main.go"))
	steps = append(steps, verifySteps()...)
	res, _ := parallelRun(t, dir, 2, []any{opGoal("mul", "Mul", "6", "-6"), helloGoal()}, lane("G001", steps...), helloLane())
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	refused, hoardRefused := false, 0
	for _, e := range ofType(evs, "refusal") {
		d := data(e)
		refused = refused || e["run"] != id && d["tool"] == "edit" && d["layer"] == "claims" && strings.Contains(d["reason"].(string), "cmd/calc/main.go is not claimed")
		if e["run"] != id && d["tool"] == "claim" && d["layer"] == "claims" && strings.Contains(d["reason"].(string), "would have you hold 102 files, and a worker holds at most 100") {
			hoardRefused++
		}
	}
	if !refused {
		t.Fatal("the edit of an unclaimed file was not refused by the claims layer")
	}
	if hoardRefused != 1 {
		t.Fatalf("the hoarding claim was refused %d times, want 1", hoardRefused)
	}
	if back := sentBack(evs, id); !strings.Contains(back, "the worker's claims do not hold: cmd/calc/main.go (not claimed)") {
		t.Fatalf("sent back for %q", back)
	}
	if got := workerEvents(evs, id, "landed"); len(got) != 2 {
		t.Fatalf("landed %v", got)
	}
	kinds := ledgerKinds(t, filepath.Join(recordsIn(t, workdirOf(t, evs)), "ledger.jsonl"))
	if kinds["merge_rejected"] != 1 || kinds["goal_completed"] != 2 {
		t.Fatalf("ledger kinds %v", kinds)
	}
	// No commit on the run's branch holds the change before its claim.
	for _, l := range strings.Split(strings.TrimSpace(git(t, dir, "log", "--format=%H %P", "main..ultra/"+id, "--first-parent")), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && strings.Contains(git(t, dir, "show", f[0]+":cmd/calc/main.go"), `"mul"`) {
			if body := git(t, dir, "log", "-1", "--format=%B", f[0]); !strings.Contains(body, "Ultra-Goal: G001-") {
				t.Fatalf("%s holds the mul case but is not G001's merge:\n%s", f[0], body)
			}
		}
	}
}

// One turn budget across the run and its workers: the workers stop when
// their sum reaches it, and the run ends out of budget.
func TestParallelSharedBudget(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	slow := func() []step {
		var steps []step
		for range 8 {
			steps = append(steps, calls(call("glob", map[string]any{"pattern": "**/*.go"})))
		}
		return steps
	}
	res, _ := parallelRunWith(t, dir, 2, []string{"--max-turns", "7"}, []any{opGoal("mul", "Mul", "6", "-6"), helloGoal()},
		lane("G001", slow()...), lane("G002", slow()...))
	if res.code != 4 {
		t.Fatalf("exit %d, want 4 (out of budget)\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	turns := 0
	for _, e := range ofType(evs, "model_response") {
		_ = e
		turns++
	}
	if turns > 7+1 { // the workers check before each request: at most one in flight beyond
		t.Fatalf("%d model requests for a budget of 7", turns)
	}
	var finished []map[string]any
	for _, e := range ofType(evs, "run_finished") {
		finished = append(finished, data(e))
		if data(e)["status"] != "budget_exhausted" {
			t.Fatalf("run %s finished %v", e["run"], data(e))
		}
	}
	if len(finished) != 3 {
		t.Fatalf("%d runs finished, want the run and its two workers", len(finished))
	}
	last := ofType(evs, "run_finished")[2]
	if last["run"] != id || !strings.Contains(data(last)["reason"].(string), "turn budget exhausted") {
		t.Fatalf("the run finished %v", last)
	}
}

// One ultra stop stops the run and every worker at their safe points;
// ultra resume of the run resumes them, and the run completes.
func TestParallelStopAndResume(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	nap := calls(call("bash", map[string]any{"command": "sleep 2"}))
	edits := addOpEdits("mul", "Mul", "a * b")
	mul := append([]step{claimCall("calc/calc.go", "cmd/calc/main.go"), nap}, edits...)
	m, brief := parallelScript(t, []any{opGoal("mul", "Mul", "6", "-6"), helloGoal()},
		lane("G001", append(mul, verifySteps()...)...), helloLane(nap))
	l := startLive(t, dir, runArgs(m, "--parallel", "2", "--brief-file", brief)...)
	started := func(e map[string]any) bool {
		return e["type"] == "worker" && data(e)["event"] == "started" && data(e)["goal"] != nil
	}
	first := l.waitEvent(t, "a worker", started)
	id := first["run"].(string)
	l.waitEvent(t, "the second worker", func(e map[string]any) bool {
		return started(e) && data(e)["goal"] != data(first)["goal"]
	})
	if s := ultra(t, dir, "stop", id, "--reason", "lunch"); s.code != 0 {
		t.Fatalf("stop: exit %d %s %s", s.code, s.stdout, s.stderr)
	}
	if code := l.wait(t); code != 3 {
		t.Fatalf("the stopped run exited %d\n%s", code, l.stderr.String())
	}
	stopped := 0
	for _, e := range l.events() {
		if e["type"] == "run_finished" {
			if data(e)["status"] != "stopped" {
				t.Fatalf("run %s finished %v", e["run"], data(e))
			}
			stopped++
		}
	}
	if stopped != 3 {
		t.Fatalf("%d runs stopped, want the run and its two workers", stopped)
	}
	// ultra tasks lists each worker under its run, with its goal, its
	// claims and the run's resume as its next step.
	tv := ultra(t, dir, "tasks", "--json")
	var view struct {
		Tasks []struct {
			ID, Parent, Goal, Claims, Next string
		}
	}
	if err := json.Unmarshal([]byte(tv.stdout), &view); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, tv.stdout)
	}
	var order []string
	claims := ""
	for _, r := range view.Tasks {
		order = append(order, r.Parent)
		if r.Parent == id {
			if r.Next != "ultra resume "+id || !strings.HasPrefix(r.Goal, "G00") {
				t.Fatalf("worker row %+v", r)
			}
			claims += r.Claims
		}
	}
	if len(order) < 3 || order[0] != "" || order[1] != id || order[2] != id || claims != "calc/calc.go, cmd/calc/main.go" {
		t.Fatalf("tasks:\n%s", tv.stdout)
	}
	// A worker does not go on alone.
	var worker string
	for _, e := range l.events() {
		if e["type"] == "worker" && e["run"] == id {
			worker = data(e)["worker"].(string)
		}
	}
	if r := ultra(t, dir, "resume", worker); r.code == 0 || !strings.Contains(r.stderr, "is a worker of the parallel run "+id) {
		t.Fatalf("resume of a worker alone: exit %d %s", r.code, r.stderr)
	}
	res := ultra(t, dir, "resume", id, "--output", "jsonl")
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	if got := workerEvents(evs, id, "resumed"); len(got) != 2 {
		t.Fatalf("resumed workers %v", got)
	}
	if got := workerEvents(evs, id, "landed"); len(got) != 2 {
		t.Fatalf("landed %v", got)
	}
}

// A goal that depends on another starts only when that one has landed,
// from the run's branch holding it, although a worker is free.
func TestParallelDependsOn(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	work := func(id, op, name, expr string) map[string]any {
		steps := append([]step{claimCall("calc/calc.go", "cmd/calc/main.go")}, addOpEdits(op, name, expr)...)
		return lane(id, append(steps, verifySteps()...)...)
	}
	res, _ := parallelRun(t, dir, 2, []any{opGoal("mul", "Mul", "6", "-6"), opGoal("sub", "Sub", "-1", "-5", "G001")},
		work("G001", "mul", "Mul", "a * b"), work("G002", "sub", "Sub", "a - b"))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	var order []string
	landedAs := ""
	for _, e := range ofType(evs, "worker") {
		if d := data(e); e["run"] == id && (d["event"] == "started" || d["event"] == "landed") {
			order = append(order, d["event"].(string)+" "+d["goal"].(string)[:4])
			if d["event"] == "landed" && landedAs == "" {
				landedAs = d["commit"].(string)
			}
		}
	}
	if strings.Join(order, ", ") != "started G001, landed G001, started G002, landed G002" {
		t.Fatalf("order: %v", order)
	}
	for _, e := range ofType(evs, "run_started") {
		if d := data(e); strings.HasPrefix(d["task"].(string), "G002-") && d["start"] != landedAs {
			t.Fatalf("G002's worker started from %v, not from G001's landing %s", d["start"], landedAs)
		}
	}
	if got := workerEvents(evs, id, "sent_back"); len(got) != 0 {
		t.Fatalf("sent back %v", got)
	}
}

// Two goals that merge without a conflict but break together: each
// worker's own tree passes, the merged one does not build (both define
// calc.Mul). The goal that lands second goes back with the gate's
// verdict; the run's branch and worktree stay as the first landing left
// them; the worker drops its copy and lands. Each lane holds the re-work.
func TestParallelRedMergeReworks(t *testing.T) {
	t.Parallel()
	dir := repo(t, opsProject)
	util := "package calc\n\n// Mul multiplies, for the greeting's count.\nfunc Mul(a, b int) int {\n\treturn a * b\n}\n"
	hello := "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/ops/calc\"\n)\n\nfunc main() {\n\tfor i := 0; i < calc.Mul(1, 1); i++ {\n\t\tfmt.Println(\"hello\")\n\t}\n}\n"
	// G001 teaches the calculator Mul (in calc.go); when it lands second
	// it drops its Mul: G002's does the same.
	mul := append([]step{claimCall("calc/calc.go", "cmd/calc/main.go")}, addOpEdits("mul", "Mul", "a * b")...)
	mul = append(mul, verifySteps()...)
	mul = append(mul, calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("write", map[string]any{"file_path": "calc/calc.go", "content": opsProject["calc/calc.go"]})))
	mul = append(mul, verifySteps()...)
	// G002 greets, with a Mul of its own in calc/util.go; when it lands
	// second it drops it.
	greet := []step{claimCall("calc/util.go", "cmd/hello/main.go"),
		calls(call("write", map[string]any{"file_path": "calc/util.go", "content": util})),
		calls(call("write", map[string]any{"file_path": "cmd/hello/main.go", "content": hello}))}
	greet = append(greet, verifySteps()...)
	greet = append(greet, calls(call("bash", map[string]any{"command": "rm calc/util.go"})))
	greet = append(greet, verifySteps()...)
	res, _ := parallelRun(t, dir, 2, []any{opGoal("mul", "Mul", "6", "-6"), helloGoal()}, lane("G001", mul...), lane("G002", greet...))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	if back := sentBack(evs, id); !strings.Contains(back, "the merged tree does not pass the gate") {
		t.Fatalf("sent back for %q", back)
	}
	if got := workerEvents(evs, id, "landed"); len(got) != 2 {
		t.Fatalf("landed %v", got)
	}
	// Every commit on the run's branch builds: none holds two Mul.
	for _, c := range strings.Fields(git(t, dir, "log", "--format=%H", "main..ultra/"+id, "--first-parent")) {
		n := 0
		for _, f := range []string{"calc/calc.go", "calc/util.go"} {
			if out, err := exec.Command("git", "-C", dir, "show", c+":"+f).Output(); err == nil {
				n += strings.Count(string(out), "func Mul(")
			}
		}
		if n > 1 {
			t.Fatalf("commit %s holds Mul %d times", c, n)
		}
	}
	kinds := ledgerKinds(t, filepath.Join(recordsIn(t, workdirOf(t, evs)), "ledger.jsonl"))
	if kinds["merge_rejected"] != 1 || kinds["goal_completed"] != 2 || kinds["final_gate"] != 1 {
		t.Fatalf("ledger kinds %v", kinds)
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 {
		t.Fatalf("ledger --verify: %d %s %s", v.code, v.stdout, v.stderr)
	}
}
