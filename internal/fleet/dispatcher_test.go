package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/schedule"
	"github.com/ultra-dev/ultra/internal/store"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// runs is what a test's starter made: the runs, in order, and how to
// end each (its process exits, its row says so).
type runs struct {
	mu    sync.Mutex
	ids   []string
	sched []string
	done  map[string]chan struct{}
	fail  error // the next start fails with it
}

// starter creates the run in the store with its claim, as `ultra run
// --dispatch` does, with its process "alive" until end is called.
func (r *runs) starter(st *store.Store, c *clock) Starter {
	return func(ctx context.Context, sc *store.Schedule, claim store.DispatchClaim) (string, func() (string, int), error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.fail != nil {
			err := r.fail
			r.fail = nil
			return "", nil, err
		}
		id := fmt.Sprintf("run-%02d", len(r.ids)+1)
		now := c.now()
		row := &store.Run{ID: id, Task: sc.Task, Repo: "/r", Workdir: "/r", Phase: "building", Status: "running",
			Axes: axes.Default, State: json.RawMessage(`{}`), PID: os.Getpid(), CreatedAt: now, UpdatedAt: now, Dispatch: &claim}
		if err := st.CreateRun(ctx, row); err != nil {
			return "", nil, err
		}
		r.ids = append(r.ids, id)
		r.sched = append(r.sched, sc.ID)
		if r.done == nil {
			r.done = map[string]chan struct{}{}
		}
		ch := make(chan struct{})
		r.done[id] = ch
		return id, func() (string, int) { <-ch; return "", 0 }, nil
	}
}

// end ends run id: its row says complete and its process exits.
func (r *runs) end(t *testing.T, st *store.Store, id string) {
	t.Helper()
	row, err := st.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	row.Status, row.PID = "complete", 0
	if err := st.SaveStep(context.Background(), row, nil, nil); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	close(r.done[id])
	r.mu.Unlock()
}

func (r *runs) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.ids) }

type fixture struct {
	st   *store.Store
	path string
	c    *clock
	r    *runs
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "ultra.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fixture{st: st, path: path, c: &clock{t: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}, r: &runs{}}
}

// worker is a dispatcher on its own connection to the store.
func (f *fixture) worker(t *testing.T, name string) *Dispatcher {
	t.Helper()
	st, err := store.Open(f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := store.Worker{ID: name, Host: "h", PID: 1, Serves: "schedules", StartedAt: f.c.now()}
	return &Dispatcher{Store: st, Worker: w, Start: f.r.starter(st, f.c), MaxRuns: 4, Now: f.c.now}
}

func (f *fixture) add(t *testing.T, id string, in schedule.Input, catchUp string) {
	t.Helper()
	spec, err := schedule.Parse(in, f.c.now())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(spec)
	now := f.c.now()
	if err := f.st.AddSchedule(context.Background(), &store.Schedule{ID: id, Spec: b, Args: []string{"--", "task " + id}, Task: "task " + id,
		CatchUp: catchUp, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) states(t *testing.T, id string) []string {
	t.Helper()
	ds, err := f.st.Dispatches(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(ds) - 1; i >= 0; i-- {
		out = append(out, ds[i].Due.Format("15:04")+" "+ds[i].Status)
	}
	return out
}

func tick(t *testing.T, ds ...*Dispatcher) {
	t.Helper()
	for _, d := range ds {
		if err := d.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// Two workers looking at the same due schedule at once start one run.
func TestTwoWorkersDispatchOnce(t *testing.T) {
	f := newFixture(t)
	f.add(t, "s1", schedule.Input{Every: "1h"}, "once")
	a, b := f.worker(t, "wa"), f.worker(t, "wb")
	tick(t, a, b)
	if got := fmt.Sprint(f.states(t, "s1")); got != "[11:00 queued]" {
		t.Fatalf("before: %s", got)
	}
	f.c.add(time.Hour + time.Second)
	var wg sync.WaitGroup
	for range 5 {
		for _, d := range []*Dispatcher{a, b} {
			wg.Add(1)
			go func() { defer wg.Done(); _ = d.Tick(context.Background()) }()
		}
	}
	wg.Wait()
	if n := f.r.count(); n != 1 {
		t.Fatalf("%d runs started", n)
	}
	if got := fmt.Sprint(f.states(t, "s1")); got != "[11:00 dispatched 12:00 queued]" {
		t.Fatalf("after: %s", got)
	}
	row, _ := f.st.GetRun(context.Background(), "run-01")
	if row.Schedule != "s1" || !row.ScheduleDue.Equal(time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("the run's task row: %q %s", row.Schedule, row.ScheduleDue)
	}
	// While the run goes on, the next due time waits for it; when it came
	// twice, the earlier is superseded.
	f.c.add(2 * time.Hour)
	tick(t, a, b)
	if got := fmt.Sprint(f.states(t, "s1")); got != "[11:00 dispatched 12:00 expired 13:00 due 14:00 queued]" {
		t.Fatalf("while running: %s", got)
	}
	f.r.end(t, f.st, "run-01")
	a.Wait(context.Background())
	tick(t, a, b)
	if got := fmt.Sprint(f.states(t, "s1")); got != "[11:00 consumed 12:00 expired 13:00 dispatched 14:00 queued]" {
		t.Fatalf("after the run: %s", got)
	}
	if n := f.r.count(); n != 2 {
		t.Fatalf("%d runs started", n)
	}
}

// Due times missed while no worker ran: once runs the latest, skip none.
func TestCatchUp(t *testing.T) {
	for _, tt := range []struct {
		policy string
		want   string
		runs   int
	}{
		{"once", "[11:00 expired 12:00 expired 13:00 dispatched 14:00 queued]", 1},
		{"skip", "[11:00 expired 12:00 expired 13:00 expired 14:00 queued]", 0},
	} {
		t.Run(tt.policy, func(t *testing.T) {
			f := newFixture(t)
			f.add(t, "s1", schedule.Input{Every: "1h"}, tt.policy)
			f.c.add(3*time.Hour + 10*time.Minute)
			a := f.worker(t, "wa")
			tick(t, a)
			if got := fmt.Sprint(f.states(t, "s1")); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
			if n := f.r.count(); n != tt.runs {
				t.Fatalf("%d runs", n)
			}
			ds, _ := f.st.Dispatches(context.Background(), "s1", 0)
			if r := ds[len(ds)-1].Reason; r != schedule.MissedReason(schedule.CatchUp(tt.policy)) {
				t.Fatalf("reason %q", r)
			}
		})
	}
}

// A worker that claimed a dispatch and died before its run began: another
// takes it back once the first's heartbeat is stale, and runs it.
func TestClaimOfADeadWorkerIsTakenBack(t *testing.T) {
	f := newFixture(t)
	f.add(t, "s1", schedule.Input{Every: "1h"}, "once")
	a, b := f.worker(t, "wa"), f.worker(t, "wb")
	tick(t, a, b)
	f.c.add(time.Hour)
	f.r.fail = nil
	// wa claims but its process is gone before starting the run.
	ctx := context.Background()
	if err := a.Store.BeatWorker(ctx, store.Worker{ID: "wa", Host: "h", PID: 1, StartedAt: f.c.now(), Heartbeat: f.c.now()}); err != nil {
		t.Fatal(err)
	}
	due := time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)
	if err := a.Store.MarkDue(ctx, "s1", due, nil, "", "", f.c.now()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.Store.ClaimDispatch(ctx, "s1", due, "wa", f.c.now()); !ok {
		t.Fatal("claim")
	}
	tick(t, b)
	if n := f.r.count(); n != 0 {
		t.Fatal("a live worker's claim was taken")
	}
	f.c.add(StaleAfter + time.Second)
	tick(t, b) // takes it back
	tick(t, b) // runs it
	if n := f.r.count(); n != 1 {
		t.Fatalf("%d runs", n)
	}
	ds, _ := f.st.Dispatches(ctx, "s1", 0)
	var got *store.Dispatch
	for i := range ds {
		if ds[i].Due.Equal(due) {
			got = &ds[i]
		}
	}
	if got == nil || got.Status != "dispatched" || got.ClaimedBy != "wb" {
		t.Fatalf("dispatch %+v", got)
	}
	// The dead worker's child, had it lived, cannot take it any more.
	err := f.st.CheckDispatch(ctx, store.DispatchClaim{Schedule: "s1", Due: due, Worker: "wa"})
	if !errors.Is(err, store.ErrDispatchTaken) {
		t.Fatalf("CheckDispatch = %v", err)
	}
}

// A run that cannot start expires its dispatch with the reason; a
// paused schedule dispatches nothing; a one-off is done after its run.
func TestFailedStartPausedAndOneOff(t *testing.T) {
	f := newFixture(t)
	f.add(t, "s1", schedule.Input{At: "10:30"}, "once")
	f.add(t, "s2", schedule.Input{Every: "10m"}, "once")
	a := f.worker(t, "wa")
	ctx := context.Background()
	if err := f.st.SetSchedulePaused(ctx, "s2", true, schedule.ReasonPaused, f.c.now()); err != nil {
		t.Fatal(err)
	}
	f.c.add(31 * time.Minute)
	f.r.fail = errors.New("ultra run: the brief file is gone\nmore")
	tick(t, a)
	if got := fmt.Sprint(f.states(t, "s1")); got != "[10:30 expired]" {
		t.Fatalf("s1: %s", got)
	}
	ds, _ := f.st.Dispatches(ctx, "s1", 1)
	if ds[0].Reason != "the run could not start: ultra run: the brief file is gone" {
		t.Fatalf("reason %q", ds[0].Reason)
	}
	if got := f.states(t, "s2"); len(got) != 0 {
		t.Fatalf("a paused schedule was dispatched: %v", got)
	}
	if n := f.r.count(); n != 0 {
		t.Fatalf("%d runs", n)
	}
}

// A schedule whose runs cannot start is paused after MaxFailedStarts due
// times in a row, with the whole reason kept, and dispatches nothing
// more.
func TestFailingScheduleIsPaused(t *testing.T) {
	f := newFixture(t)
	f.add(t, "s1", schedule.Input{Every: "10m"}, "skip")
	a := f.worker(t, "wa")
	ctx := context.Background()
	failing := func() {
		f.c.add(10 * time.Minute)
		f.r.fail = errors.New("no model server answers at http://127.0.0.1:1/v1 (start it, or pass --base-url URL)")
		tick(t, a)
	}
	for i := 0; i < MaxFailedStarts-1; i++ {
		failing()
	}
	if sc, _ := f.st.GetSchedule(ctx, "s1"); sc.Paused {
		t.Fatalf("paused after %d failed starts", MaxFailedStarts-1)
	}
	failing()
	if sc, _ := f.st.GetSchedule(ctx, "s1"); !sc.Paused {
		t.Fatalf("not paused after %d failed starts: %v", MaxFailedStarts, f.states(t, "s1"))
	}
	ds, _ := f.st.Dispatches(ctx, "s1", 1)
	if !strings.Contains(ds[0].Reason, "pass --base-url URL") {
		t.Fatalf("the reason is cut: %q", ds[0].Reason)
	}
	before := len(f.states(t, "s1"))
	f.c.add(30 * time.Minute)
	tick(t, a)
	if got := len(f.states(t, "s1")); got != before {
		t.Fatalf("a paused schedule dispatched: %v", f.states(t, "s1"))
	}
}
