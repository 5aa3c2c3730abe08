package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
		got, err := o.Store.Request(ctx, id)
		if err != nil {
			return nil, err
		}
		if !got.DoneAt.IsZero() {
			a.Outcome, a.Waited = got.Outcome, time.Since(start)
			return a, nil
		}
		cur, err := o.Store.GetRun(ctx, row.ID)
		if err != nil {
			return nil, err
		}
		if !Live(cur) {
			// The run ended meanwhile: the request stays for whoever
			// resumes it.
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
	if _, err := steerAxes(row.Axes, s.Axes); err != nil {
		return nil, err
	}
	q := store.Request{Kind: store.ReqSteer, Axes: s.Axes, Scope: s.Scope, Reason: s.Reason, Who: s.Who}
	if Live(row) {
		// An impossible change is refused here, before the run sees it
		// (the run checks again when it applies it).
		if err := checkSteerOf(o, row, s.Axes); err != nil {
			return &Asked{Run: row.ID, Outcome: "refused: " + err.Error(), Live: true}, nil
		}
		return ask(ctx, o, row, q, s.Wait)
	}
	if RunLocked(o.StateRoot, row.ID) {
		return nil, fmt.Errorf("%w: %s is being landed, undone or collected", ErrBusy, row.ID)
	}
	r, err := idleRunner(ctx, o, row)
	if err != nil {
		return nil, err
	}
	q.Run, q.Session = row.ID, session()
	if err := r.checkSteer(q); err != nil {
		return &Asked{Run: row.ID, Outcome: "refused: " + err.Error()}, nil
	}
	next, _ := steerAxes(row.Axes, s.Axes)
	if err := r.setAxes(ctx, next, firstNonEmpty(s.Reason, "steered by a person"), firstNonEmpty(s.Scope, axes.ScopeNow), firstNonEmpty(s.Who, "person"), q.Session); err != nil {
		return &Asked{Run: row.ID, Outcome: "refused: " + err.Error()}, nil
	}
	r.flushNotes()
	if err := r.save(); err != nil {
		return nil, err
	}
	return &Asked{Run: row.ID, Outcome: "applied"}, nil
}

// idleRunner is a runner for a run no process drives, to change its
// record (steer, stop) without stepping it.
func idleRunner(ctx context.Context, o Options, row *store.Run) (*runner, error) {
	st, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	return newRunner(ctx, o, row, st, nil)
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
	r, err := idleRunner(ctx, o, row)
	if err != nil {
		return nil, err
	}
	r.finish(StatusStopped, firstNonEmpty(reason, "stopped by a person")+fmt.Sprintf(" (ultra resume %s continues it)", row.ID))
	if err := r.save(); err != nil {
		return nil, err
	}
	return &Asked{Run: row.ID, Outcome: "applied"}, nil
}

// Decide allows or denies a tool call that waits for a person (manual
// control). forRun allows the call's tool for the rest of the run. A run
// no process drives keeps the decision for its resume (ultra approve
// then continues it).
func Decide(ctx context.Context, o Options, id, callID string, allow, forRun bool, reason string, wait time.Duration) (*Asked, error) {
	o = o.withDefaults()
	row, err := openRun(ctx, o, id)
	if err != nil {
		return nil, err
	}
	q := store.Request{Kind: store.ReqApprove, CallID: callID, Reason: reason}
	if !allow {
		q.Kind = store.ReqDeny
	}
	if forRun {
		q.Scope = approveForRun
	}
	if Live(row) {
		waiting, ok := waitingCall(row.TaskRow.Waiting)
		switch {
		case !ok:
			return &Asked{Run: row.ID, Live: true, Outcome: fmt.Sprintf("refused: run %s has no tool call waiting for a person's approval (run control %s)", row.ID, row.Axes.Control)}, nil
		case callID != "" && callID != waiting:
			return &Asked{Run: row.ID, Live: true, Outcome: fmt.Sprintf("refused: run %s waits on call %s, not %s", row.ID, waiting, callID)}, nil
		}
		q.CallID = waiting
		return ask(ctx, o, row, q, wait)
	}
	st, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	if st.AwaitingCall == nil {
		return nil, fmt.Errorf("run %s has no tool call waiting for a person's approval", row.ID)
	}
	if callID != "" && callID != st.AwaitingCall.ID {
		return nil, fmt.Errorf("run %s waits on call %s (%s), not %s", row.ID, st.AwaitingCall.ID, st.AwaitingCall.Name, callID)
	}
	q.Run, q.Who, q.Session = row.ID, "person", session()
	if _, err := o.Store.AddRequest(ctx, q); err != nil {
		return nil, err
	}
	return &Asked{Run: row.ID, Outcome: "pending"}, nil
}

// checkSteerOf refuses an impossible steering of row by its stored state.
func checkSteerOf(o Options, row *store.Run, want map[string]string) error {
	st, err := decodeState(row)
	if err != nil {
		return err
	}
	next, err := steerAxes(row.Axes, want)
	if err != nil {
		return err
	}
	return o.steerPossible(row.Axes, next, st.Phase)
}

// waitingCall reads the call a live run waits on from its task row's
// waiting note ("call ID (tool) waits for a person's approval: …").
func waitingCall(waiting string) (string, bool) {
	rest, ok := strings.CutPrefix(waiting, "call ")
	if !ok || !strings.Contains(waiting, "waits for a person's approval") {
		return "", false
	}
	id, _, _ := strings.Cut(rest, " ")
	return id, id != ""
}

// WaitsForCall reports that run row waits for a person's decision on a
// tool call (live, or stopped to wait with --no-wait).
func WaitsForCall(row *store.Run) bool {
	if Live(row) {
		_, ok := waitingCall(row.TaskRow.Waiting)
		return ok
	}
	st, err := decodeState(row)
	return err == nil && st.AwaitingCall != nil
}
