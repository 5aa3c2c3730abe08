package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
)

// ErrNotLive is returned when a request needs a live run and no process
// drives the run.
var ErrNotLive = errors.New("no process drives the run")

// Asked is what became of a request made of a run.
type Asked struct {
	Run     string
	Request int64  // 0 when the run was not live and the change was made at once
	Outcome string // applied, pending (its scope has not come), refused: why
	Live    bool
	Waited  time.Duration // from the request to its outcome
}

// ask records q for the live run row and waits up to wait for the run to
// take it.
func ask(ctx context.Context, o Options, row *store.Run, q store.Request, wait time.Duration) (*Asked, error) {
	q.Run = row.ID
	if q.Who == "" {
		q.Who = "person"
	}
	if q.Session == "" {
		q.Session = session()
	}
	start := time.Now()
	id, err := o.Store.AddRequest(ctx, q)
	if err != nil {
		return nil, err
	}
	a := &Asked{Run: row.ID, Request: id, Outcome: "pending", Live: true}
	deadline := start.Add(wait)
	for {
		// The run (and its process) is looked at before the request: a
		// run that takes the request and then ends has marked it taken
		// by the time it is seen ended, so an ended run's request read
		// after it is final.
		cur, err := o.Store.GetRun(ctx, row.ID)
		if err != nil {
			return nil, err
		}
		live := Live(cur)
		got, err := o.Store.Request(ctx, id)
		if err != nil {
			return nil, err
		}
		if !got.DoneAt.IsZero() {
			a.Outcome, a.Waited = got.Outcome, time.Since(start)
			return a, nil
		}
		if !live {
			// The run ended without taking it: the request stays for
			// whoever resumes it.
			a.Live = false
			return a, nil
		}
		if time.Now().After(deadline) {
			return a, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openRun finds a run that can still take requests.
func openRun(ctx context.Context, o Options, id string) (*store.Run, error) {
	row, err := o.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if p := phase.Phase(row.Phase); p == phase.Cancelled || (p == phase.Complete && row.Axes.Mode != phase.Chat) {
		return nil, fmt.Errorf("run %s is %s", row.ID, p)
	}
	return row, nil
}

// SteerRequest is a person's steering of a run's axes.
type SteerRequest struct {
	Axes   map[string]string // axis → value
	Scope  string            // one of axes.Scopes ("" is now)
	Reason string
	Who    string
	Wait   time.Duration // how long to wait for a live run to take it
}

// Steer changes axes of run id. A live run takes the request from the
// store and applies it at its scope; a run no process drives is changed
// at once. Either way every change is recorded with its scope, reason and
// who asked.
func Steer(ctx context.Context, o Options, id string, s SteerRequest) (*Asked, error) {
	o = o.withDefaults()
	row, err := openRun(ctx, o, id)
	if err != nil {
		return nil, err
	}
	if err := axes.CheckScope(s.Scope); err != nil {
		return nil, err
	}
	next, err := row.Axes.Steer(s.Axes)
	if err != nil {
		return nil, err
	}
	st, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	// An impossible change is refused here, before anything is recorded
	// (a live run checks again when it applies it).
	if err := o.steerPossible(row.Axes, next, st.Phase); err != nil {
		return &Asked{Run: row.ID, Outcome: "refused: " + err.Error(), Live: Live(row)}, nil
	}
	if Live(row) {
		return ask(ctx, o, row, store.Request{Kind: store.ReqSteer, Axes: s.Axes, Scope: s.Scope, Reason: s.Reason, Who: s.Who}, s.Wait)
	}
	err = withIdleRun(ctx, o, row, func(r *runner) error {
		if err := r.setAxes(ctx, next, firstNonEmpty(s.Reason, "steered by a person"), firstNonEmpty(s.Scope, axes.ScopeNow), firstNonEmpty(s.Who, "person"), session()); err != nil {
			return err
		}
		r.flushNotes()
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrBusy) {
			return nil, err
		}
		return &Asked{Run: row.ID, Outcome: "refused: " + err.Error()}, nil
	}
	return &Asked{Run: row.ID, Outcome: "applied"}, nil
}

// withIdleRun changes the record of a run no process drives: it takes the
// run (as a resume would, so that a resume starting meanwhile is refused,
// and this change is refused if a resume took it first), applies fn, and
// saves the run as it was but for fn's change, which releases it.
func withIdleRun(ctx context.Context, o Options, row *store.Run, fn func(*runner) error) error {
	if RunLocked(o.StateRoot, row.ID) {
		return fmt.Errorf("%w: %s is being landed, undone or collected", ErrBusy, row.ID)
	}
	// Everything that can fail before the run is taken: once taken, it is
	// saved back whatever happens.
	st, err := decodeState(row)
	if err != nil {
		return err
	}
	r, err := newRunner(ctx, o, row, st, nil)
	if err != nil {
		return err
	}
	if ok, err := o.Store.Claim(ctx, row.ID, row.PID, row.Status, os.Getpid()); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%w: run %s was just resumed by another process", ErrBusy, row.ID)
	}
	ferr := fn(r)
	// Saved whatever fn did: the row gets back its status and pid.
	if err := r.save(); err != nil {
		return err
	}
	return ferr
}

// Control asks a live run to pause, stop or go on for one unit (next).
// Stopping a run no process drives marks it stopped at once; pausing or
// nexting one is ErrNotLive (ultra next resumes it for one unit).
func Control(ctx context.Context, o Options, id, kind, reason string, wait time.Duration) (*Asked, error) {
	o = o.withDefaults()
	row, err := openRun(ctx, o, id)
	if err != nil {
		return nil, err
	}
	if Live(row) {
		if kind == store.ReqNext && row.Axes.Control != "assisted" {
			return &Asked{Run: row.ID, Live: true, Outcome: fmt.Sprintf("refused: run %s is under %s control: it does not pause between units (ultra steer %s --control assisted)", row.ID, row.Axes.Control, row.ID)}, nil
		}
		return ask(ctx, o, row, store.Request{Kind: kind, Reason: reason}, wait)
	}
	if kind != store.ReqStop {
		return nil, fmt.Errorf("%w %s (it is %s)", ErrNotLive, row.ID, ShownStatus(row))
	}
	if p := phase.Phase(row.Phase); p == phase.Complete {
		return nil, fmt.Errorf("run %s is complete", row.ID)
	}
	err = withIdleRun(ctx, o, row, func(r *runner) error {
		r.finish(StatusStopped, firstNonEmpty(reason, "stopped by a person")+fmt.Sprintf(" (ultra resume %s continues it)", row.ID))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Asked{Run: row.ID, Outcome: "applied"}, nil
}

// Decide allows or denies a tool call that waits for a person (manual
// control). scope says what else the answer allows for the rest of the
// run: "" nothing, ApproveForRun the call's tool, ApproveReadOnly every
// read-only call. A run
// no process drives keeps the decision for its resume (ultra approve
// then continues it).
func Decide(ctx context.Context, o Options, id, callID string, allow bool, scope, reason string, wait time.Duration) (*Asked, error) {
	o = o.withDefaults()
	row, err := openRun(ctx, o, id)
	if err != nil {
		return nil, err
	}
	q := store.Request{Kind: store.ReqApprove, CallID: callID, Reason: reason}
	if !allow {
		q.Kind = store.ReqDeny
	}
	switch scope {
	case "", ApproveForRun, ApproveReadOnly:
	default:
		return nil, fmt.Errorf("unknown scope %q of an approval: want %s or %s", scope, ApproveForRun, ApproveReadOnly)
	}
	if allow || scope == ApproveForRun {
		// A denial for the run refuses the tool from then on.
		q.Scope = scope
	}
	st, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	c := st.AwaitingCall
	switch {
	case c == nil:
		return &Asked{Run: row.ID, Live: Live(row), Outcome: fmt.Sprintf("refused: run %s has no tool call waiting for a person's approval (run control %s)", row.ID, row.Axes.Control)}, nil
	case callID != "" && callID != c.ID:
		return &Asked{Run: row.ID, Live: Live(row), Outcome: fmt.Sprintf("refused: run %s waits on call %s (%s), not %s", row.ID, c.ID, c.Name, callID)}, nil
	}
	q.CallID = c.ID // never an empty id another call could take
	if q.Scope == ApproveReadOnly && !builtinReadOnly(c.Name) && !Live(row) {
		// Kept for the resume, it would allow the call itself: the live
		// run applies the scope and keeps this call waiting; here it is
		// refused outright.
		return &Asked{Run: row.ID, Outcome: fmt.Sprintf("refused: call %s (%s) is not read-only, and --read-only allows only read-only calls: allow it with ultra approve %s --call %s, or deny it with --deny REASON",
			c.ID, c.Name, row.ID, c.ID)}, nil
	}
	if Live(row) {
		return ask(ctx, o, row, q, wait)
	}
	q.Run, q.Who, q.Session = row.ID, "person", session()
	if _, err := o.Store.AddRequest(ctx, q); err != nil {
		return nil, err
	}
	return &Asked{Run: row.ID, Outcome: "pending"}, nil
}

// WaitsForCall reports that run row waits for a person's decision on a
// tool call (live, or stopped to wait with --no-wait).
func WaitsForCall(row *store.Run) bool {
	st, err := decodeState(row)
	return err == nil && st.AwaitingCall != nil
}
