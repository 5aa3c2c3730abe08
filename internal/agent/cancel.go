package agent

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// Cancel stops a run for good. A run driven by a live process on this
// machine is interrupted first (SIGTERM, as Ctrl-C would).
func Cancel(ctx context.Context, o Options, id, reason string) (*Outcome, error) {
	o = o.withDefaults()
	row, err := o.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if p := phase.Phase(row.Phase); p == phase.Complete || p == phase.Cancelled {
		return nil, fmt.Errorf("run %s is already %s", row.ID, p)
	}
	if reason == "" {
		reason = "cancelled by a person"
	}
	if row.Status == store.StatusQueued {
		// Submitted to a fleet, taken by no worker yet: it never starts.
		ok, err := o.Store.CancelQueued(ctx, row.ID, reason, o.Now())
		if err != nil {
			return nil, err
		}
		if ok {
			return &Outcome{RunID: row.ID, Status: StatusCancelled, Phase: phase.Cancelled, Reason: reason, ExitCode: ExitCode(StatusCancelled)}, nil
		}
		// A worker took it meanwhile: it is cancelled as a live run.
		if row, err = o.Store.GetRun(ctx, id); err != nil {
			return nil, err
		}
	}
	if host, elsewhere := drivenElsewhere(ctx, o.Store, row, o.Now()); elsewhere {
		// A live run on another machine (a fleet's worker): it takes the
		// request at its next safe point.
		if _, err := o.Store.AddRequest(ctx, store.Request{Run: row.ID, Kind: store.ReqCancel, Reason: reason, Who: "person", Session: session()}); err != nil {
			return nil, err
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			if row, err = o.Store.GetRun(ctx, row.ID); err != nil {
				return nil, err
			}
			if row.Status != StatusRunning {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%w: run %s on %s did not stop within 60s; it stops at its next safe point (the request is recorded)", ErrBusy, row.ID, host)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if Live(row) {
		// The live process takes the request when the signal interrupts
		// it, and ends the run as cancelled itself (its terminal says so).
		if _, err := o.Store.AddRequest(ctx, store.Request{Run: row.ID, Kind: store.ReqCancel, Reason: reason, Who: "person", Session: session()}); err != nil {
			return nil, err
		}
		if err := syscall.Kill(row.PID, syscall.SIGTERM); err != nil {
			return nil, fmt.Errorf("interrupting run %s (pid %d): %w", row.ID, row.PID, err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if row, err = o.Store.GetRun(ctx, row.ID); err != nil {
				return nil, err
			}
			if row.Status != StatusRunning || !ProcessAlive(row.PID) {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%w: run %s (pid %d) did not stop within 20s", ErrBusy, row.ID, row.PID)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if row.Status == StatusCancelled {
		return &Outcome{RunID: row.ID, Status: row.Status, Phase: phase.Phase(row.Phase), Reason: row.Reason, ExitCode: ExitCode(row.Status)}, nil
	}
	st, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	r, err := newRunner(ctx, o, row, st, nil)
	if err != nil {
		return nil, err
	}
	if err := r.transition(phase.Cancelled, phase.ByPerson, reason, ""); err != nil {
		return nil, err
	}
	r.finish(StatusCancelled, reason)
	// In-progress goals are released; the run never resumes.
	r.releaseGoals(reason)
	closeRequests(ctx, o.Store, row.ID, StatusCancelled)
	if err := r.save(); err != nil {
		return nil, err
	}
	u := r.st.Phase.Used
	r.emit(event.RunFinished, event.RunFinishedData{Status: StatusCancelled, Reason: reason, ExitCode: ExitCode(StatusCancelled),
		Turns: u.Turns, Wall: u.Wall.String()})
	return r.stop, nil
}

// session names the process a request comes from, for the record.
func session() string {
	host := Hostname()
	return fmt.Sprintf("pid %d on %s", os.Getpid(), host)
}

// drivenElsewhere reports whether a running run is driven by a live
// process on another machine (its runtime names another host, and its
// heartbeat is fresh), and which.
func drivenElsewhere(ctx context.Context, st *store.Store, row *store.Run, now time.Time) (string, bool) {
	if row.Status != StatusRunning {
		return "", false
	}
	rt, err := st.RuntimeOf(ctx, row.ID)
	if err != nil || rt.Host == "" {
		return "", false
	}
	if host := Hostname(); host == rt.Host {
		return "", false
	}
	return rt.Host, now.Sub(rt.Heartbeat) < tasks.StaleAfter
}
