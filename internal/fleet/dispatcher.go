// Package fleet runs many runs: the dispatcher that turns schedules into
// runs (what `ultra worker` and `ultra serve` run), beside the command
// line. A worker starts each run as a person would, with ultra's own
// `ultra run` in its own process, so every rule of a run holds for it.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/schedule"
	"github.com/ultra-dev/ultra/internal/store"
)

// Beat is how often a worker records its heartbeat and looks at the
// schedules; a worker whose heartbeat is older than StaleAfter is
// judged gone, and its claims that made no run yet are taken back.
const (
	Beat       = time.Second
	StaleAfter = 15 * time.Second
)

// Starter starts the run of a claimed dispatch (ultra run with the
// schedule's arguments and --dispatch) and returns its run id and a wait
// for its process's end; an error when the process ended before naming
// a run (its output says why).
type Starter func(ctx context.Context, sc *store.Schedule, claim store.DispatchClaim) (run string, wait func() (string, int), err error)

// Dispatcher turns a store's due schedules into runs.
type Dispatcher struct {
	Store  *store.Store
	Worker store.Worker
	Start  Starter
	// MaxRuns is how many runs this worker's schedules may have going at
	// once (at least 1).
	MaxRuns int
	Now     func() time.Time
	// Log receives one line per thing the worker does.
	Log func(format string, args ...any)

	mu      sync.Mutex
	running map[string]string // run id → schedule, of the runs this worker started and waits on
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Dispatcher) logf(format string, args ...any) {
	if d.Log != nil {
		d.Log(format, args...)
	}
}

// NewWorker is this process's worker row, serving what serves says.
func NewWorker(serves string, now time.Time) store.Worker {
	host := agent.Hostname()
	return store.Worker{ID: fmt.Sprintf("w-%s-%d-%s", host, os.Getpid(), now.UTC().Format("150405.000")),
		Host: host, PID: os.Getpid(), Serves: serves, StartedAt: now, Heartbeat: now}
}

// Serve looks at the schedules every Beat until ctx ends, then records
// that the worker stopped. The runs it started go on (each in its own
// process); a worker that starts later marks them consumed when they end.
func (d *Dispatcher) Serve(ctx context.Context) error {
	defer func() {
		w := d.Worker
		w.Heartbeat, w.StoppedAt = d.now(), d.now()
		_ = d.Store.BeatWorker(context.WithoutCancel(ctx), w)
	}()
	t := time.NewTicker(Beat)
	defer t.Stop()
	for {
		if err := d.Tick(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			d.logf("%v", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick is one look: the heartbeat, every schedule's due and missed
// times, claims left by workers that are gone, runs that ended, and the
// due dispatches this worker claims and starts.
func (d *Dispatcher) Tick(ctx context.Context) error {
	now := d.now()
	d.Worker.Heartbeat = now
	if err := d.Store.BeatWorker(ctx, d.Worker); err != nil {
		return err
	}
	scheds, err := d.Store.Schedules(ctx, false)
	if err != nil {
		return err
	}
	byID := map[string]*store.Schedule{}
	for _, sc := range scheds {
		byID[sc.ID] = sc
		if sc.Paused {
			continue
		}
		if err := d.decide(ctx, sc, now); err != nil {
			d.logf("schedule %s: %v", sc.ID, err)
		}
	}
	if err := d.takeBackClaims(ctx, now); err != nil {
		return err
	}
	inFlight, err := d.consume(ctx, now)
	if err != nil {
		return err
	}
	due, err := d.Store.DispatchesIn(ctx, string(schedule.Due))
	if err != nil {
		return err
	}
	for _, ds := range due {
		sc := byID[ds.Schedule]
		if sc == nil || sc.Paused || inFlight[ds.Schedule] {
			// A schedule's runs never overlap: the next waits for the
			// one going on (and missed ones meanwhile collapse into it).
			continue
		}
		if d.busy() >= max(1, d.MaxRuns) {
			break
		}
		ok, err := d.Store.ClaimDispatch(ctx, ds.Schedule, ds.Due, d.Worker.ID, now)
		if err != nil {
			return err
		}
		if !ok {
			continue // another worker claimed it first
		}
		inFlight[ds.Schedule] = true
		d.dispatch(ctx, sc, store.DispatchClaim{Schedule: ds.Schedule, Due: ds.Due, Worker: d.Worker.ID})
	}
	return nil
}

// decide records a schedule's due and missed times, and its next one
// ahead, as queued.
func (d *Dispatcher) decide(ctx context.Context, sc *store.Schedule, now time.Time) error {
	var spec schedule.Spec
	if err := json.Unmarshal(sc.Spec, &spec); err != nil {
		return fmt.Errorf("corrupt spec: %w", err)
	}
	if err := spec.Check(); err != nil {
		return err
	}
	from, err := d.Store.LatestDue(ctx, sc.ID)
	if err != nil {
		return err
	}
	if from.IsZero() || from.Before(sc.CreatedAt) {
		from = sc.CreatedAt
	}
	policy, _ := schedule.ParseCatchUp(sc.CatchUp)
	dec := schedule.Decide(spec, policy, from, now)
	if !dec.Due.IsZero() || len(dec.Expire) > 0 {
		if err := d.Store.MarkDue(ctx, sc.ID, dec.Due, dec.Expire, schedule.MissedReason(policy), schedule.ReasonSuperseded, now); err != nil {
			return err
		}
		if dec.Missed > 0 {
			d.logf("schedule %s: %s while no worker ran (catch_up=%s)", sc.ID, missed(dec.Missed), policy)
		}
	}
	if !dec.Next.IsZero() {
		return d.Store.QueueDispatch(ctx, sc.ID, dec.Next)
	}
	return nil
}

// missed is how many due times were missed, for the log.
func missed(n int) string {
	if n == 1 {
		return "1 due time missed"
	}
	return fmt.Sprintf("%d due times missed", n)
}

// waitingFor is what a stopping worker says of the n runs it waits for.
func waitingFor(n int) string {
	if n == 1 {
		return "waiting for the run going on to end (signal again to stop it at its next safe point)"
	}
	return fmt.Sprintf("waiting for the %d runs going on to end (signal again to stop them at their next safe point)", n)
}

// dueIn is a due time for the worker's log: in its schedule's zone (the
// one ultra schedule shows it in), to the second.
func dueIn(spec json.RawMessage, t time.Time) string {
	var sp schedule.Spec
	loc := time.UTC
	if json.Unmarshal(spec, &sp) == nil {
		if l, err := time.LoadLocation(sp.Zone); err == nil && sp.Zone != "" {
			loc = l
		}
	}
	return t.In(loc).Format("2006-01-02 15:04:05 MST")
}

// takeBackClaims makes due again the dispatches claimed by a worker that
// stopped beating before their run began.
func (d *Dispatcher) takeBackClaims(ctx context.Context, now time.Time) error {
	claimed, err := d.Store.DispatchesIn(ctx, string(schedule.Claimed))
	if err != nil || len(claimed) == 0 {
		return err
	}
	live, err := d.Store.Workers(ctx, now.Add(-StaleAfter))
	if err != nil {
		return err
	}
	alive := map[string]bool{d.Worker.ID: true}
	for _, w := range live {
		alive[w.ID] = true
	}
	for _, c := range claimed {
		if alive[c.ClaimedBy] {
			continue
		}
		ok, err := d.Store.ReleaseClaim(ctx, c.Schedule, c.Due, c.ClaimedBy, "worker "+c.ClaimedBy+" stopped before its run began")
		if err != nil {
			return err
		}
		if ok {
			d.logf("schedule %s: took back the dispatch due %s from worker %s, which is gone", c.Schedule, c.Due.Format(time.RFC3339), c.ClaimedBy)
		}
	}
	return nil
}

// consume marks consumed the dispatches whose run is no longer running
// (in a live process), and returns the schedules with a run going on.
func (d *Dispatcher) consume(ctx context.Context, now time.Time) (map[string]bool, error) {
	inFlight := map[string]bool{}
	open, err := d.Store.DispatchesIn(ctx, string(schedule.Claimed), string(schedule.Dispatched))
	if err != nil {
		return nil, err
	}
	for _, ds := range open {
		if ds.Status == string(schedule.Claimed) {
			inFlight[ds.Schedule] = true
			continue
		}
		row, err := d.Store.GetRun(ctx, ds.Run)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			return nil, err
		}
		if d.waitsOn(ds.Run) {
			inFlight[ds.Schedule] = true
			continue
		}
		status := agent.ShownStatus(row)
		if status == agent.StatusRunning || status == store.StatusQueued {
			inFlight[ds.Schedule] = true
			continue
		}
		ok, err := d.Store.MoveDispatch(ctx, ds.Schedule, ds.Due, string(schedule.Dispatched), string(schedule.Consumed), "run "+row.ID+" ended "+status, now)
		if err != nil {
			return nil, err
		}
		if ok {
			d.logf("schedule %s: run %s ended %s", ds.Schedule, row.ID, status)
		}
	}
	return inFlight, nil
}

// Running is how many runs this worker started are still going on.
func (d *Dispatcher) Running() int { return d.busy() }

func (d *Dispatcher) busy() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.running)
}

func (d *Dispatcher) waitsOn(run string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.running[run]
	return ok
}

// MaxFailedStarts is how many due times in a row of a schedule may fail
// to start their run before the schedule is paused: what stops it (a
// model server that does not answer, a missing key) will not go away by
// itself, and a person has to look.
const MaxFailedStarts = 3

// failedStart is the reason of a dispatch whose run could not start.
const failedStart = "the run could not start: "

// dispatch starts the claimed dispatch's run and waits for its process in
// the background. A run that cannot start expires its dispatch with the
// reason; after MaxFailedStarts of them in a row the schedule is paused.
func (d *Dispatcher) dispatch(ctx context.Context, sc *store.Schedule, claim store.DispatchClaim) {
	run, wait, err := d.Start(ctx, sc, claim)
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
		reason := failedStart + event.OneLine(first, 1000)
		ctx := context.WithoutCancel(ctx)
		if ok, _ := d.Store.MoveDispatch(ctx, claim.Schedule, claim.Due, string(schedule.Claimed), string(schedule.Expired), reason, d.now()); ok {
			d.logf("schedule %s: %s", sc.ID, reason)
			d.pauseFailing(ctx, sc)
		}
		if wait != nil {
			go wait()
		}
		return
	}
	d.logf("schedule %s: due %s, started run %s", sc.ID, dueIn(sc.Spec, claim.Due), run)
	d.mu.Lock()
	if d.running == nil {
		d.running = map[string]string{}
	}
	d.running[run] = sc.ID
	d.mu.Unlock()
	go func() {
		wait()
		d.mu.Lock()
		delete(d.running, run)
		d.mu.Unlock()
	}()
}

// pauseFailing pauses sc when its last MaxFailedStarts due times all
// failed to start their runs.
func (d *Dispatcher) pauseFailing(ctx context.Context, sc *store.Schedule) {
	ds, err := d.Store.Dispatches(ctx, sc.ID, MaxFailedStarts+4)
	if err != nil {
		return
	}
	n := 0
	for _, x := range ds {
		if x.Status == string(schedule.Queued) || x.Status == string(schedule.Due) {
			continue // the time ahead, not a start
		}
		if x.Status != string(schedule.Expired) || !strings.HasPrefix(x.Reason, failedStart) {
			return
		}
		if n++; n == MaxFailedStarts {
			break
		}
	}
	if n < MaxFailedStarts {
		return
	}
	why := fmt.Sprintf("paused by ultra: %d due times in a row could not start their runs (ultra schedule show %s says why; ultra schedule resume %s once it is fixed)", MaxFailedStarts, sc.ID, sc.ID)
	if err := d.Store.SetSchedulePaused(ctx, sc.ID, true, why, d.now()); err == nil {
		d.logf("schedule %s: %s", sc.ID, why)
	}
}

// Wait waits for the runs this worker started to end, at most until ctx
// does.
func (d *Dispatcher) Wait(ctx context.Context) {
	for d.busy() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
