package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// sharedGates are the numbers of run id's gate decisions, as another
// machine reads them from the shared store (ultra gate show).
func (f *fleet) sharedGates(t testing.TB, id string) []int {
	t.Helper()
	r := ultraRun(t, t.TempDir(), f.env, "gate", "show", id, "--json")
	var v struct {
		Decisions []struct{ N int }
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &v) != nil {
		t.Fatalf("gate show on another machine: %d %s %s", r.code, r.stdout, r.stderr)
	}
	var ns []int
	for _, d := range v.Decisions {
		ns = append(ns, d.N)
	}
	return ns
}

// sameSharedLedger checks that another machine reads run id's ledger from
// the shared store as the run's branch holds it (ledger), and verifies
// it: chain, signatures, the head ultra recorded, goals.json.
func (f *fleet) sameSharedLedger(t testing.TB, id, ledger string) {
	t.Helper()
	type entry struct {
		Seq  int
		Kind string
		Prev string
	}
	r := ultraRun(t, t.TempDir(), f.env, "goals", "ledger", id, "--json")
	var shared []entry
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &shared) != nil {
		t.Fatalf("ledger on another machine: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The branch's last commit holds the ledger up to it; what the run
	// recorded after (the commit itself) follows in the store.
	lines := strings.Split(strings.TrimSpace(ledger), "\n")
	if len(shared) < len(lines) {
		t.Fatalf("the shared ledger has %d entries, the branch's %d", len(shared), len(lines))
	}
	for i, l := range lines {
		var e entry
		if json.Unmarshal([]byte(l), &e) != nil || e != shared[i] {
			t.Fatalf("ledger entry %d: the branch's %+v, the shared store's %+v", i+1, e, shared[i])
		}
	}
	if r := ultraRun(t, t.TempDir(), f.env, "goals", "ledger", id, "--verify"); r.code != 0 || !strings.Contains(r.stdout, "shared store") {
		t.Fatalf("ledger --verify on another machine: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = ultraRun(t, t.TempDir(), f.env, "goals", id, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"status": "complete"`) {
		t.Fatalf("goals on another machine: %d %.600s %s", r.code, r.stdout, r.stderr)
	}
}

// landElsewhere lands run id, which a worker pushed at sha, from a
// person's checkout (on the workers' machine: the run is still not this
// checkout's): only once its branch is fetched, only a tree the run's
// shared gate decisions passed, once.
func (f *fleet) landElsewhere(t testing.TB, id, sha string) {
	t.Helper()
	person := filepath.Join(t.TempDir(), "calc")
	git(t, "", "clone", "--quiet", f.remote, person)
	env := f.env
	if r := ultraRun(t, person, env, "land", id); r.code == 0 || !strings.Contains(r.stderr, "git fetch origin ultra/"+id) {
		t.Fatalf("land without the branch: %d %s %s", r.code, r.stdout, r.stderr)
	}
	git(t, person, "fetch", "--quiet", "origin", "ultra/"+id+":ultra/"+id)
	// A commit added to the branch by hand is no tree the gate passed.
	git(t, person, "checkout", "--quiet", "ultra/"+id)
	if err := os.WriteFile(filepath.Join(person, "calc.py"), []byte("def add(a, b):\n    return 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, person, "commit", "--quiet", "-am", "a hand edit")
	git(t, person, "checkout", "--quiet", "main")
	if r := ultraRun(t, person, env, "land", id); r.code == 0 || !strings.Contains(r.stderr, "never passed") {
		t.Fatalf("land of a hand-edited branch: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if got := git(t, person, "show", "main:calc.py"); !strings.Contains(got, "return a - b") {
		t.Fatalf("main moved on a refused landing:\n%s", got)
	}
	git(t, person, "branch", "--force", "ultra/"+id, sha)
	if r := ultraRun(t, person, env, "land", id); r.code != 0 {
		t.Fatalf("land: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if tip := strings.TrimSpace(git(t, person, "rev-parse", "main")); tip != sha {
		t.Fatalf("main is at %s, the run's green commit %s", tip, sha)
	}
	if r := ultraRun(t, t.TempDir(), f.env, "land", id); r.code == 0 {
		t.Fatalf("land outside a checkout: %d %s", r.code, r.stdout)
	}
	if r := ultraRun(t, person, env, "land", id); r.code == 0 || !strings.Contains(r.stderr, "already landed") {
		t.Fatalf("a second landing: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// A complete run has nothing to go on with: a refusal that says so.
	if r := ultraRun(t, person, env, "resume", id); r.code != 2 || !strings.Contains(r.stderr, "is complete: a fleet's run goes on only once it stopped short") {
		t.Fatalf("resume in a person's checkout: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// A fleet's run that stopped short (its turns' budget spent) goes on when
// a person asks on any machine: ultra resume queues the ask, a worker
// takes the run over from its last saved step and resumes it, once (two
// asks at once, two workers: one resume); it completes and its branch is
// pushed, every step of the script used once.
func TestFleetResumeGoesThroughTheQueue(t *testing.T) {
	// The budget runs out as the model asks to verify; resumed, the run
	// is iterating, and the model asks again.
	steps := fleetSteps()
	lane := append(append(append([]step{}, steps[:4]...), calls(call("phase", map[string]any{"to": "verifying"}))), steps[4:]...)
	f := newFleetWith(t, 1, func(int) []step { return lane })
	id := f.submit(t, 1, "--max-turns", "4")
	first, out := startFleetWorker(t, f.machine(t), 1, "ULTRA_HOSTNAME=machine-a")
	f.waitTask(t, id, "budget_exhausted", 2*time.Minute, out)
	for !strings.Contains(out.String(), "run "+id+" ended") {
		time.Sleep(100 * time.Millisecond) // its job done: nothing green to push
	}
	first.Process.Kill()
	first.Wait()
	before := len(f.model.srv.Requests())
	// Two people ask while no worker runs: the second is told, where it
	// typed it, that the first ask waits (its guidance would be lost).
	r := ultraRun(t, t.TempDir(), append(f.env, "ULTRA_HOSTNAME=laptop"), "resume", id, "go on")
	if r.code != 0 || !strings.Contains(r.stdout, "resume queued") {
		t.Fatalf("resume on another machine: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = ultraRun(t, t.TempDir(), append(f.env, "ULTRA_HOSTNAME=desk"), "resume", id, "go on, but differently")
	if r.code != 2 || !strings.Contains(r.stderr, "a person asked to go on with it") || !strings.Contains(r.stderr, `with the guidance "go on"`) {
		t.Fatalf("a second ask while the first waits: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// Two asks in the queue at once all the same (as an older ultra
	// queued them); two workers start at once and take an ask each: one
	// goes on with the run.
	copyAsk(t, f.db, id)
	_, outA := startFleetWorker(t, f.machine(t), 1, "ULTRA_HOSTNAME=machine-a")
	_, outB := startFleetWorker(t, f.machine(t), 1, "ULTRA_HOSTNAME=machine-b")
	tk := f.waitTask(t, id, "complete", 2*time.Minute, outA, outB)
	// The other worker left the run alone: it took nothing over (which
	// would have moved the run's row to its clone) and started nothing.
	logs := outA.String() + outB.String()
	if n := strings.Count(logs, "run "+id+" resumed, as a person asked"); n != 1 || strings.Contains(logs, "did not start") {
		t.Fatalf("the run was resumed %d times:\n%s\n%s", n, outA, outB)
	}
	f.pushedFix(t, id, tk)
	if n, want := len(f.model.srv.Requests()), len(lane); n != want || before != 4 {
		t.Fatalf("the model answered %d requests (%d before the resume), want %d", n, before, want)
	}
	st := ultraRun(t, t.TempDir(), f.env, "status", id, "--json", "-n", "1000")
	if n := strings.Count(st.stdout, `"type": "run_resumed"`); n != 1 {
		t.Fatalf("%d run_resumed events", n)
	}
}

// copyAsk queues a copy of run id's waiting ask to go on, as a second
// job of River's.
func copyAsk(t *testing.T, db, id string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, priority, queue, state, scheduled_at)
		SELECT jsonb_set(args, '{resume,at}', '"a copy"'), kind, max_attempts, priority, queue, 'available', now()
		FROM river_job WHERE args->>'run'=$1 AND args ? 'resume'`, id)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("copying the ask: %v (%d rows)", err, tag.RowsAffected())
	}
}

// A fleet's run submitted for its plan (--mode plan) stops with the plan
// waiting; a person accepts it from another machine (ultra approve
// --autonomous), a worker takes the run over and builds it to the end.
func TestFleetPlanAcceptedElsewhere(t *testing.T) {
	f := newFleet(t, 1)
	id := f.submit(t, 1, "--mode", "plan")
	_, out := startFleetWorker(t, f.machine(t), 1, "ULTRA_HOSTNAME=machine-a")
	f.waitTask(t, id, "needs_approval", 2*time.Minute, out)
	if n := len(f.model.srv.Requests()); n != 2 {
		t.Fatalf("%d model requests before the plan's acceptance, want 2", n)
	}
	r := ultraRun(t, t.TempDir(), append(f.env, "ULTRA_HOSTNAME=laptop"), "approve", id, "--autonomous")
	if r.code != 0 || !strings.Contains(r.stdout, "acceptance of its plan queued") {
		t.Fatalf("approve on another machine: %d %s %s", r.code, r.stdout, r.stderr)
	}
	tk := f.waitTask(t, id, "complete", 2*time.Minute, out)
	f.pushedFix(t, id, tk)
	if n, want := len(f.model.srv.Requests()), len(fleetSteps()); n != want {
		t.Fatalf("the model answered %d requests, want %d", n, want)
	}
}
