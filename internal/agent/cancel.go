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
	if reason == "" {
		reason = "cancelled by a person"
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
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on %s", os.Getpid(), host)
}
