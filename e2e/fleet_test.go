package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/store/pgtest"
)

// fleet is a shared store, a bare repository standing in for the
// remote, and a scripted model with one lane per submitted job.
type fleet struct {
	db     string
	remote string
	model  *model
	env    []string // a person's environment on yet another machine
}

// newFleet makes the remote from calcProject and a model whose lanes
// answer the runs whose task names them ("job 1" … "job n").
func newFleet(t testing.TB, jobs int) *fleet {
	t.Helper()
	return newFleetWith(t, jobs, func(int) []step { return fleetSteps() })
}

// newFleetWith is newFleet whose lane i answers with lane(i).
func newFleetWith(t testing.TB, jobs int, lane func(i int) []step) *fleet {
	t.Helper()
	return newFleetOn(t, pgtest.URL(t), jobs, lane)
}

// newFleetOn is newFleetWith on the database db.
func newFleetOn(t testing.TB, db string, jobs int, lane func(i int) []step) *fleet {
	t.Helper()
	src := repo(t, pyCalc)
	remote := filepath.Join(t.TempDir(), "calc.git")
	git(t, "", "clone", "--quiet", "--bare", src, remote)
	var lanes []map[string]any
	for i := 1; i <= jobs; i++ {
		lanes = append(lanes, map[string]any{"match": fmt.Sprintf("(job %d)", i), "steps": lane(i)})
	}
	m := newScript(t, map[string]any{"steps": []step{text("no lane matched this conversation")}, "lanes": lanes})
	env := append(ultraEnv(t), "ULTRA_DB="+db)
	return &fleet{db: db, remote: remote, model: m, env: env}
}

// pyCalc is the fleet's project: Python, whose tests start in a moment,
// so that many runs fit in a test.
var pyCalc = map[string]string{
	"calc.py":      "def add(a, b):\n    return a - b\n",
	"test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
	"pytest.ini":   "[pytest]\n",
}

// fleetSteps is a model's fix of pyCalc, with its goal and criteria.
func fleetSteps() []step {
	return withCleanupEnds([]step{
		calls(call("read", map[string]any{"file_path": "calc.py"})),
		calls(call("goals", goalsOf("add adds",
			crit("happy", "command", "add adds, as its test shows", map[string]any{"run": "python3 -c 'from calc import add; assert add(2, 3) == 5'", "expect_exit": 0}),
			crit("edge", "command", "no subtraction is left in add", map[string]any{"run": "grep -q 'return a - b' calc.py", "expect_exit": 1}),
			crit("regression", "command", "both tests are still there", map[string]any{"run": "grep -c '^def test_' test_calc.py", "expect_stdout": "^2\\s*$"})))),
		calls(call("edit", map[string]any{"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		endCleanup(),
		approve(),
	})
}

// machine is the environment of one worker's machine: its own state and
// cache directories.
func (f *fleet) machine(t testing.TB) []string {
	env := []string{}
	for _, kv := range ultraEnv(t) {
		if !strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir(), "ULTRA_DB="+f.db)
}

// submit submits job (with the run flags extra) and returns its run's id.
func (f *fleet) submit(t testing.TB, job int, extra ...string) string {
	t.Helper()
	args := append([]string{"submit", "--json", "--repo", f.remote, "--provider", "openai", "--base-url", f.model.url, "--model", "scripted"}, extra...)
	r := ultraRun(t, t.TempDir(), f.env, append(args, fmt.Sprintf("fix the calculator's Add (job %d)", job))...)
	if r.code != 0 {
		t.Fatalf("submit: %d %s", r.code, r.stderr)
	}
	var v struct{ Run string }
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Run == "" {
		t.Fatalf("submit printed %q", r.stdout)
	}
	return v.Run
}

type fleetTask struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Why        string `json:"why"`
	Checkpoint string `json:"checkpoint"`
}

func (f *fleet) tasks(t testing.TB) []fleetTask {
	t.Helper()
	r := ultraRun(t, t.TempDir(), f.env, "tasks", "--all", "--json")
	if r.code != 0 {
		t.Fatalf("tasks: %d %s", r.code, r.stderr)
	}
	var v struct{ Tasks []fleetTask }
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, r.stdout)
	}
	return v.Tasks
}

func startFleetWorker(t *testing.T, env []string, maxRuns int, extra ...string) (*exec.Cmd, *lockedBuffer) {
	return startFleetWorkerB(t, env, maxRuns, extra...)
}

func startFleetWorkerB(t testing.TB, env []string, maxRuns int, extra ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := execCmd(t.TempDir(), append(env, extra...), ultraBin, "worker", "--max-runs", fmt.Sprint(maxRuns))
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out
}

// Ten runs submitted to two workers (two machines: their own state and
// clones) each complete exactly once: one row each, complete; one branch
// each on the remote, pushed at the run's last green commit, with the
// fix; each lane of the script used once.
func TestFleetRunsEachSubmittedRunOnce(t *testing.T) {
	jobs := 10
	if n, err := strconv.Atoi(os.Getenv("ULTRA_FLEET_JOBS")); err == nil {
		jobs = n
	}
	f := newFleet(t, jobs)
	var runs []string
	for i := 1; i <= jobs; i++ {
		runs = append(runs, f.submit(t, i))
	}
	queued := f.tasks(t)
	if len(queued) != jobs {
		t.Fatalf("%d tasks listed after submitting %d: %+v", len(queued), jobs, queued)
	}
	_, outA := startFleetWorker(t, f.machine(t), 2)
	_, outB := startFleetWorker(t, f.machine(t), 2)
	deadline := time.Now().Add(6 * time.Minute)
	for {
		done := 0
		for _, tk := range f.tasks(t) {
			if tk.Status == "complete" {
				done++
			}
		}
		if done == jobs {
			break
		}
		if time.Now().After(deadline) || failed(f.tasks(t)) {
			for _, tk := range f.tasks(t) {
				if tk.Status == "failed" {
					t.Logf("%s", ultraRun(t, t.TempDir(), f.env, "status", tk.ID, "-n", "40").stdout)
					break
				}
			}
			t.Fatalf("%d of %d runs complete: %+v\nworker a:\n%s\nworker b:\n%s", done, jobs, f.tasks(t), outA, outB)
		}
		time.Sleep(time.Second)
	}
	all := f.tasks(t)
	for _, tk := range all {
		f.pushed(t, tk.ID)
	}
	if len(all) != jobs {
		t.Fatalf("%d runs, want %d: %+v", len(all), jobs, all)
	}
	// Each run was started by exactly one worker, and both worked.
	logs := outA.String() + outB.String()
	for _, id := range runs {
		if n := strings.Count(logs, "run "+id+" started"); n != 1 {
			t.Errorf("run %s started %d times\nworker a:\n%s\nworker b:\n%s", id, n, outA, outB)
		}
	}
	if !strings.Contains(outA.String(), " started (") || !strings.Contains(outB.String(), " started (") {
		t.Logf("one worker took every run (allowed, but unusual)\nworker a:\n%s\nworker b:\n%s", outA, outB)
	}
	// The remote has exactly the runs' branches, each at the run's green
	// commit, each with the fix and nothing else changed.
	heads := git(t, f.remote, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/")
	byRef := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(heads), "\n") {
		ref, sha, _ := strings.Cut(l, " ")
		byRef[ref] = sha
	}
	if len(byRef) != jobs+1 {
		t.Fatalf("the remote's branches:\n%s", heads)
	}
	for _, tk := range all {
		sha := byRef["refs/heads/ultra/"+tk.ID]
		if sha == "" || !strings.HasPrefix(sha, tk.Checkpoint) || tk.Checkpoint == "" {
			t.Errorf("run %s: remote branch at %q, its green commit %q", tk.ID, sha, tk.Checkpoint)
			continue
		}
		if got := git(t, f.remote, "show", sha+":calc.py"); !strings.Contains(got, "return a + b") {
			t.Errorf("run %s's branch lacks the fix:\n%s", tk.ID, got)
		}
		if diff := git(t, f.remote, "diff", "--name-only", "main", sha, "--", ".", ":!.ultra"); strings.TrimSpace(diff) != "calc.py" {
			t.Errorf("run %s changed %q", tk.ID, diff)
		}
	}
	// Another machine reads a run's records from the shared store: its
	// goals, its ledger (as its branch holds it), its gate decisions, and
	// its status with its last verification.
	one := all[0].ID
	f.sameSharedLedger(t, one, git(t, f.remote, "show", byRef["refs/heads/ultra/"+one]+":.ultra/runs/"+one+"/ledger.jsonl"))
	if gates := f.sharedGates(t, one); len(gates) == 0 {
		t.Fatalf("run %s has no gate decision in the shared store", one)
	}
	if r := ultraRun(t, t.TempDir(), f.env, "status", one, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"last_verify"`) {
		t.Fatalf("status on another machine: %d %.800s %s", r.code, r.stdout, r.stderr)
	}
	// main itself is untouched.
	if got := git(t, f.remote, "show", "main:calc.py"); !strings.Contains(got, "return a - b") {
		t.Fatalf("main changed:\n%s", got)
	}
	f.landElsewhere(t, one, byRef["refs/heads/ultra/"+one])
	if n, want := len(f.model.srv.Requests()), jobs*len(fleetSteps()); n != want {
		t.Fatalf("the model answered %d requests, want %d", n, want)
	}
}

func failed(ts []fleetTask) bool {
	for _, t := range ts {
		if t.Status == "failed" {
			return true
		}
	}
	return false
}

// waitTask waits until run id's status is want.
func (f *fleet) waitTask(t testing.TB, id, want string, within time.Duration, logs ...*lockedBuffer) fleetTask {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, tk := range f.tasks(t) {
			if tk.ID == id && tk.Status == want {
				return tk
			}
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, l := range logs {
				b.WriteString(l.String())
			}
			t.Fatalf("run %s is not %s after %s: %+v\n%s", id, want, within, f.tasks(t), b.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// ultra cancel, from a machine that is neither worker's (no repository,
// only the shared store), reaches a queued run (River's job is
// cancelled: no worker ever starts it) and a run that a worker on
// another machine drives (it stops at its next safe point, cancelled).
// Neither leaves a branch on the remote.
func TestFleetCancelAcrossWorkers(t *testing.T) {
	slow := withCleanupEnds([]step{{"delay_ms": 120000, "text": "thinking for a long time"}})
	f := newFleetWith(t, 2, func(i int) []step {
		if i == 2 {
			return slow
		}
		return fleetSteps()
	})
	queued := f.submit(t, 1)
	r := ultraRun(t, t.TempDir(), f.env, "cancel", queued, "--reason", "not needed after all")
	if r.code != 0 || !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("cancel of a queued run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	_, out := startFleetWorker(t, f.machine(t), 2, "ULTRA_HOSTNAME=machine-a")
	running := f.submit(t, 2)
	f.waitTask(t, running, "running", 60*time.Second, out)
	start := time.Now()
	r = ultraRun(t, t.TempDir(), append(f.env, "ULTRA_HOSTNAME=machine-c"), "cancel", running)
	if r.code != 0 || !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("cancel of a run on another machine: %d %s %s\n%s", r.code, r.stdout, r.stderr, out)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Fatalf("the cancel took %s", d)
	}
	f.waitTask(t, running, "cancelled", 30*time.Second, out)
	f.waitTask(t, queued, "cancelled", time.Second, out)
	time.Sleep(2 * time.Second) // a worker that would take the cancelled job would have by now
	if strings.Contains(out.String(), "run "+queued+" started") {
		t.Fatalf("the cancelled queued run was started:\n%s", out)
	}
	if heads := git(t, f.remote, "for-each-ref", "refs/heads/ultra/"); heads != "" {
		t.Fatalf("branches on the remote:\n%s", heads)
	}
}

// runPID is the pid of the process driving run id, as ultra tasks shows.
func (f *fleet) runPID(t *testing.T, id string) int {
	t.Helper()
	r := ultraRun(t, t.TempDir(), f.env, "tasks", "--json")
	var v struct {
		Tasks []struct {
			ID       string `json:"id"`
			PID      int    `json:"pid"`
			Activity string `json:"activity"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatal(err)
	}
	for _, tk := range v.Tasks {
		if tk.ID == id {
			return tk.PID
		}
	}
	return 0
}

// A worker's machine dies (the worker and its run killed with SIGKILL)
// mid-run, after the run edited a file and verified it, while it waits
// for the model: another worker takes the run over from its last saved
// step, with the edit (from the step's snapshot in the shared store) and
// the gate's decisions (from the records the run shared), and finishes
// it. Nothing is lost or done twice: one edit, one commit, one end, each
// gate decision made once, a ledger whose entries follow each other and
// that the shared store holds line for line.
func TestFleetTakesOverARunWhoseMachineDied(t *testing.T) {
	steps := fleetSteps()
	// After the edit and its verification, the model takes its time: the
	// machine dies then.
	slow := append(append(append([]step{}, steps[:5]...), step{"delay_ms": 30000, "text": "a long thought"}), steps[5:]...)
	f := newFleetWith(t, 1, func(int) []step { return slow })
	workerA, outA := startFleetWorker(t, f.machine(t), 1, "ULTRA_HOSTNAME=machine-a")
	id := f.submit(t, 1)
	deadline := time.Now().Add(90 * time.Second)
	for {
		if reqs := f.model.srv.Requests(); len(reqs) >= 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not reach its slow step:\n%s", outA)
		}
		time.Sleep(200 * time.Millisecond)
	}
	pid := f.runPID(t, id)
	if pid == 0 {
		t.Fatalf("no pid for run %s", id)
	}
	workerA.Process.Signal(syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
	workerA.Wait()
	before := f.sharedGates(t, id)
	if len(before) == 0 {
		t.Fatalf("the dead machine's verification is not in the shared store")
	}
	_, outB := startFleetWorker(t, f.machine(t), 1, "ULTRA_HOSTNAME=machine-b")
	tk := f.waitTask(t, id, "complete", 3*time.Minute, outA, outB)
	if !strings.Contains(outB.String(), "run "+id+" taken over") {
		t.Fatalf("worker b did not take the run over:\n%s", outB)
	}
	sha := f.pushedFix(t, id, tk)
	// As an uninterrupted run's: the goal's commit and the final one.
	if log := strings.TrimSpace(git(t, f.remote, "log", "--format=%s", "main.."+sha)); log != "ultra: final review approved\nultra: G001-add-adds add adds" {
		t.Fatalf("the run's commits:\n%s", log)
	}
	// The run's events: the edit made once, one end.
	r := ultraRun(t, t.TempDir(), f.env, "status", id, "--json", "-n", "1000")
	var st struct {
		Events []struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%.300s", err, r.stdout)
	}
	edits, ends := 0, 0
	var gates []int
	for _, e := range st.Events {
		var d struct {
			Tool string
			Gate int
			By   string
		}
		if e.Type == "tool_call" && json.Unmarshal(e.Data, &d) == nil && d.Tool == "edit" {
			edits++
		}
		// No person asked: the run says a fleet's worker took it over.
		if e.Type == "run_resumed" && (json.Unmarshal(e.Data, &d) != nil || d.By != "fleet") {
			t.Fatalf("the take-over's run_resumed: %s", e.Data)
		}
		if e.Type == "run_finished" {
			ends++
		}
		if e.Type == "verify_result" && json.Unmarshal(e.Data, &d) == nil {
			gates = append(gates, d.Gate)
		}
	}
	if edits != 1 || ends != 1 {
		t.Fatalf("%d edits and %d ends among %d events", edits, ends, len(st.Events))
	}
	// Each gate decision was made once: the new machine got the dead
	// one's back from the store and numbered on from them; the store
	// holds every one, in order.
	shared := f.sharedGates(t, id)
	if len(shared) <= len(before) || !slices.Equal(shared[:len(before)], before) {
		t.Fatalf("the shared store's decisions %v, before the take-over %v", shared, before)
	}
	for i, n := range shared {
		if n != i+1 {
			t.Fatalf("the shared store's decisions %v: a number made twice or skipped", shared)
		}
	}
	seen := map[int]bool{}
	for _, n := range gates {
		if seen[n] || !slices.Contains(shared, n) {
			t.Fatalf("verifications %v, the shared store's decisions %v", gates, shared)
		}
		seen[n] = true
	}
	// The ledger on the branch: each entry follows the one before, one
	// goal completes once, and the shared store holds it line for line.
	ledger := git(t, f.remote, "show", sha+":.ultra/runs/"+id+"/ledger.jsonl")
	for i, l := range strings.Split(strings.TrimSpace(ledger), "\n") {
		var e struct{ Seq int }
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq != i+1 {
			t.Fatalf("ledger line %d: seq %d (%v)\n%s", i+1, e.Seq, err, ledger)
		}
	}
	if n := strings.Count(ledger, `"kind":"goal_completed"`); n != 1 {
		t.Fatalf("%d goal_completed entries:\n%s", n, ledger)
	}
	if !strings.Contains(ledger, "taken over by a fleet worker from ") || strings.Contains(ledger, "resumed by a person") {
		t.Fatalf("the ledger does not say a fleet worker took the run over:\n%s", ledger)
	}
	f.sameSharedLedger(t, id, ledger)
}

// The shared store's server restarts while a run goes on, down for ten
// seconds while the model's answer comes: the run waits for the store and
// finishes, and none of its events is lost.
func TestFleetRidesOutAPostgresRestart(t *testing.T) {
	pg := pgtest.NewPrivate(t)
	steps := fleetSteps()
	slow := append(append(append([]step{}, steps[:3]...), step{"delay_ms": 8000, "text": "a long thought"}), steps[3:]...)
	f := newFleetOn(t, pg.URL(), 1, func(int) []step { return slow })
	_, out := startFleetWorker(t, f.machine(t), 1)
	id := f.submit(t, 1)
	deadline := time.Now().Add(90 * time.Second)
	for len(f.model.srv.Requests()) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not reach its slow step:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	pg.Restart(t, 10*time.Second) // the answer comes while it is down
	tk := f.waitTask(t, id, "complete", 3*time.Minute, out)
	if sha := f.pushed(t, id); !strings.HasPrefix(sha, tk.Checkpoint) {
		t.Fatalf("the remote's branch %s, the run's green commit %s\n%s", sha, tk.Checkpoint, out)
	}
	r := ultraRun(t, t.TempDir(), f.env, "status", id, "--json", "-n", "1000")
	var st struct {
		Events []struct {
			Seq  int64  `json:"seq"`
			Type string `json:"type"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%.300s", err, r.stdout)
	}
	ends := 0
	for i, e := range st.Events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: one was lost", i+1, e.Seq)
		}
		if e.Type == "run_finished" {
			ends++
		}
	}
	if ends != 1 {
		t.Fatalf("%d ends", ends)
	}
}

// pushed waits for the worker to push run id's branch to the remote (it
// does once the run's process has ended) and returns its commit.
func (f *fleet) pushed(t testing.TB, id string) string {
	t.Helper()
	for range 300 {
		if sha := strings.TrimSpace(git(t, f.remote, "for-each-ref", "--format=%(objectname)", "refs/heads/ultra/"+id)); sha != "" {
			return sha
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run %s's branch never reached the remote", id)
	return ""
}

// pushedFix waits for run id's branch on the remote and checks it: at the
// run's green commit (tk's checkpoint), with the fix.
func (f *fleet) pushedFix(t testing.TB, id string, tk fleetTask) string {
	t.Helper()
	sha := f.pushed(t, id)
	if !strings.HasPrefix(sha, tk.Checkpoint) {
		t.Fatalf("the remote's branch %s, the run's green commit %s", sha, tk.Checkpoint)
	}
	if got := git(t, f.remote, "show", sha+":calc.py"); !strings.Contains(got, "return a + b") {
		t.Fatalf("the branch lacks the fix:\n%s", got)
	}
	return sha
}

// A fleet's schedule (in the shared store, for a repository's URL) is
// dispatched once however many workers serve the fleet: River's periodic
// look runs on the elected leader, each due time is claimed once, and
// its run, submitted to the queue, completes and is pushed.
func TestFleetScheduleDispatchesOnce(t *testing.T) {
	f := newFleet(t, 1)
	at := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	r := ultraRun(t, t.TempDir(), f.env, "schedule", "add", "--at", at, "--repo", f.remote, "--provider", "openai", "--base-url", f.model.url,
		"--model", "scripted", "fix the calculator's Add (job 1)")
	if r.code != 0 {
		t.Fatalf("schedule add: %d %s %s", r.code, r.stdout, r.stderr)
	}
	id := scheduleIDRe.FindStringSubmatch(r.stdout)[1]
	_, outA := startFleetWorker(t, f.machine(t), 1)
	_, outB := startFleetWorker(t, f.machine(t), 1)
	deadline := time.Now().Add(2 * time.Minute)
	var v scheduleShown
	for {
		v = showSchedule(t, t.TempDir(), f.env, id)
		if len(v.Dispatches) > 0 && v.Dispatches[0].Status == "consumed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dispatch was not consumed: %+v\nworker a:\n%s\nworker b:\n%s", v, outA, outB)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(v.Dispatches) != 1 {
		t.Fatalf("dispatches %+v", v.Dispatches)
	}
	run := v.Dispatches[0].Run
	all := f.tasks(t)
	if len(all) != 1 || all[0].ID != run || all[0].Status != "complete" {
		t.Fatalf("tasks: %+v", all)
	}
	if sha := f.pushed(t, run); !strings.HasPrefix(sha, all[0].Checkpoint) {
		t.Fatalf("the remote's branch %s, the run's green commit %s", sha, all[0].Checkpoint)
	}
	if n := strings.Count(outA.String()+outB.String(), "run "+run+" started"); n != 1 {
		t.Fatalf("the run started %d times\nworker a:\n%s\nworker b:\n%s", n, outA, outB)
	}
}

// A fleet's run never sees the shared store's socket: with trust or peer
// authentication the socket alone would let its commands into every
// run's rows and the fleet's key.
func TestFleetRunCannotSeeTheStoresSocket(t *testing.T) {
	// A server whose socket is outside /tmp (which every sandbox has a
	// private one of), where a command could otherwise see it.
	t.Setenv("TMPDIR", "/var/tmp")
	pg := pgtest.NewPrivate(t)
	u, err := url.Parse(pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	dir := u.Query().Get("host")
	probe := call("bash", map[string]any{"command": "ls -a " + dir + " /var/run/postgresql 2>&1; echo PROBE-END"})
	f := newFleetOn(t, pg.URL(), 1, func(int) []step { return append([]step{calls(probe)}, fleetSteps()...) })
	_, out := startFleetWorker(t, f.machine(t), 1)
	id := f.submit(t, 1)
	f.waitTask(t, id, "complete", 2*time.Minute, out)
	seen := false
	for _, r := range f.model.srv.Requests() {
		if strings.Contains(string(r.Body), "PROBE-END") {
			seen = true
			if strings.Contains(string(r.Body), ".s.PGSQL") {
				t.Fatalf("the run's command saw the store's socket in %s", dir)
			}
		}
	}
	if !seen {
		t.Fatal("the probe's output never reached the model")
	}
}

// ultra submit checks what a worker would only find out later, on
// another machine: nothing is queued for a repository that does not
// answer or a branch it lacks.
func TestFleetSubmitRefusals(t *testing.T) {
	f := newFleet(t, 1)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--repo", filepath.Join(t.TempDir(), "nosuch.git")}, "does not answer from here"},
		{[]string{"--repo", f.remote, "--base", "nosuch"}, "--base nosuch"},
		{[]string{}, "--repo is required"},
		{[]string{"--repo", f.remote, "--mode", "chat"}, "works on a branch"},
	} {
		r := ultraRun(t, t.TempDir(), f.env, append(append([]string{"submit"}, tt.args...), "fix it")...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("submit %v: exit %d %q, want 2 naming %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	if ts := f.tasks(t); len(ts) != 0 {
		t.Fatalf("queued: %+v", ts)
	}
	id := f.submit(t, 1)
	r := ultraRun(t, t.TempDir(), f.env, "diff", id)
	if r.code != 2 || !strings.Contains(r.stderr, "is no repository") {
		t.Fatalf("diff outside a repository: %d %q", r.code, r.stderr)
	}
	if r := ultraRun(t, t.TempDir(), f.env, "undo", id); r.code != 2 || !strings.Contains(r.stderr, "worker's machine") {
		t.Fatalf("undo outside a repository: %d %q", r.code, r.stderr)
	}
	// No worker runs: the queue's runs wait, and the views say so.
	// Each run names the repository it was submitted for.
	if r := ultraRun(t, t.TempDir(), f.env, "tasks"); r.code != 0 || !strings.Contains(r.stdout, "no fleet worker is running") ||
		!regexp.MustCompile(`(?m)^REPO\s+ID\s`).MatchString(r.stdout) || !regexp.MustCompile(`(?m)^calc\s+`+id+`\s`).MatchString(r.stdout) {
		t.Fatalf("tasks with a queued run and no worker: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := ultraRun(t, t.TempDir(), f.env, "tasks", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"repo": "`+f.remote+`"`) {
		t.Fatalf("tasks --json of a queued run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := ultraRun(t, t.TempDir(), f.env, "status", id); r.code != 0 || !strings.Contains(r.stdout, "submitted to the fleet") || !strings.Contains(r.stdout, f.remote) || strings.Contains(r.stdout, "budgets") {
		t.Fatalf("status of a queued run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := ultraRun(t, t.TempDir(), f.env, "resume", id); r.code != 2 || !strings.Contains(r.stderr, "queued for the fleet's workers") {
		t.Fatalf("resume of a queued run: %d %q", r.code, r.stderr)
	}
	// ULTRA_DB names a PostgreSQL database or nothing: never a file made
	// where it points.
	repoDir := repo(t, pyCalc)
	if r := ultraRun(t, repoDir, append(ultraEnv(t), "ULTRA_DB=fleet.db"), "tasks"); r.code != 2 || !strings.Contains(r.stderr, "no postgres:// URL") {
		t.Fatalf("tasks with ULTRA_DB=fleet.db: %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(repoDir, "fleet.db")); err == nil {
		t.Fatal("ULTRA_DB=fleet.db made a file")
	}
	// A run the fleet does not have: the message says which store was read.
	if r := ultraRun(t, t.TempDir(), f.env, "status", "20261129-000000-aaaaaa"); r.code != 2 || !strings.Contains(r.stderr, "ULTRA_DB is set") {
		t.Fatalf("status of an unknown run: %d %q", r.code, r.stderr)
	}
}
