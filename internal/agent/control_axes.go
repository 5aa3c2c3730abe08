package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
)

// checkSteer refuses an impossible steering request with the reason.
func (r *runner) checkSteer(q store.Request) error {
	next, err := r.row.Axes.Steer(q.Axes)
	if err != nil {
		return err
	}
	if err := axes.CheckScope(q.Scope); err != nil {
		return err
	}
	return r.o.steerPossible(r.row.Axes, next, r.st.Phase)
}

// steerPossible refuses a change of axes from cur to next that a run in
// state st cannot take: a mode whose table differs in kind, a profile
// that needs a sandbox this machine does not have.
func (o Options) steerPossible(cur, next axes.Axes, st phase.State) error {
	if next.Mode != cur.Mode {
		if _, _, err := st.SwitchMode(next.Mode); err != nil {
			var re *phase.RefusedError
			if errors.As(err, &re) && re.Why != "" {
				return errors.New(re.Why)
			}
			return err
		}
	}
	if next.Permission != cur.Permission {
		if err := o.checkContainment(next.Permission); err != nil {
			return err
		}
	}
	return nil
}

// applySteer changes the run's axes: every change is recorded (from, to,
// reason, scope, who, session, time) and the tools, the sandbox and the
// model follow from the new values at the next request.
func (r *runner) applySteer(ctx context.Context, q store.Request) error {
	next, err := r.row.Axes.Steer(q.Axes)
	if err != nil {
		return err
	}
	return r.setAxes(ctx, next, firstNonEmpty(q.Reason, "steered by a person"), q.Scope, q.Who, q.Session)
}

// setAxes moves the run to axes next.
func (r *runner) setAxes(ctx context.Context, next axes.Axes, reason, scope, who, session string) error {
	changes := axes.Diff(r.row.Axes, next)
	if len(changes) == 0 {
		return nil
	}
	if next.Mode != r.row.Axes.Mode {
		ns, tr, err := r.st.Phase.SwitchMode(next.Mode)
		if err != nil {
			return err
		}
		if tr.To != "" {
			r.applyTransition(ns, tr)
		} else {
			r.st.Phase = ns
		}
	}
	prev := r.row.Axes
	r.row.Axes = next
	if r.st.Goals != nil && next.Mode != prev.Mode {
		r.st.Goals.PlanOnly = next.Mode == phase.Plan
	}
	if next.Permission != prev.Permission || next.Mode != prev.Mode {
		sb, err := bashSandbox(ctx, r.o, r.row, r.st.DepDirs)
		if err != nil {
			r.row.Axes = prev
			return fmt.Errorf("preparing the sandbox of the %s profile: %w", next.Permission, err)
		}
		r.closeSandbox() // its spare has the profile's layout before
		r.env.Sandbox = sb
	}
	if who == "" {
		who = "person"
	}
	now := r.o.Now()
	for _, c := range changes {
		r.pendingTrans = append(r.pendingTrans, store.Transition{Kind: "axis", Axis: c.Axis, From: c.From, To: c.To, By: who,
			Reason: reason, Scope: scope, Session: session, At: now})
		r.emit(event.AxisChanged, event.AxisChangedData{Axis: c.Axis, From: c.From, To: c.To, Reason: reason, Scope: scope, By: who, Axes: next})
	}
	// Told before the next request: a message may not come between an
	// answer's calls and their results.
	r.notes = append(r.notes, "A person changed this run's axes ("+axesChangeText(changes)+"): "+reason+
		". The tools and rules of the reminder below now apply.")
	return nil
}

func axesChangeText(cs []axes.Change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %s → %s", c.Axis, c.From, c.To)
	}
	return strings.Join(parts, ", ")
}
