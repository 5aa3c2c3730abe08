package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Waive records a person's waiver of a run's gate: a WAIVED decision for
// the run's current tree. An escalated run is completed by it; any other
// stopped run carries the waiver into its next verification of that tree.
func Waive(ctx context.Context, o Options, id, by, reason string) (*Outcome, gate.Decision, error) {
	o = o.withDefaults()
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, gate.Decision{}, fmt.Errorf("a waiver needs a reason (--reason)")
	}
	row, err := o.Store.GetRun(ctx, id)
	if err != nil {
		return nil, gate.Decision{}, err
	}
	if why := worktreeGone(ctx, row); why != "" {
		return nil, gate.Decision{}, fmt.Errorf("%s: there is no tree to waive", why)
	}
	if Live(row) {
		return nil, gate.Decision{}, fmt.Errorf("%w: run %s (pid %d); waive it when it stops", ErrBusy, row.ID, row.PID)
	}
	if row.Phase == string(phase.Complete) {
		return nil, gate.Decision{}, fmt.Errorf("run %s is already complete", row.ID)
	}
	runDir := RunDir(o.StateRoot, row.ID)
	prev, err := gatefile.Read(runDir)
	if err != nil {
		return nil, gate.Decision{}, err
	}
	var latest *gate.Decision
	if len(prev) > 0 {
		latest = &prev[len(prev)-1]
	}
	tree, err := workspace.TreeHash(ctx, row.Workdir)
	if err != nil {
		return nil, gate.Decision{}, fmt.Errorf("identifying the run's tree: %w", err)
	}
	d := gate.Waive(latest, row.ID, tree, gatefile.Next(prev), gate.Waiver{By: by, Reason: reason, Time: o.Now().UTC()})
	path, err := gatefile.Write(runDir, d)
	if err != nil {
		return nil, gate.Decision{}, err
	}
	st, err := decodeState(row)
	if err != nil {
		return nil, d, err
	}
	r, err := newRunner(ctx, o, row, st, nil)
	if err != nil {
		return nil, d, err
	}
	r.emit(event.VerifyResult, verifyEvent(d, path))
	if r.hasGoals() {
		// A waiver of the gate waives the tests' verdict, not the goals:
		// their criteria and the final review still decide. The run goes
		// on when the person resumes it, and the next verification of
		// this tree uses the waiver.
		r.recordGoal(ledger.Entry{Kind: ledger.KindCheckpoint, Text: fmt.Sprintf("gate decision %d waived by %s: %s", d.N, by, reason)})
		r.row.Status = row.Status
		if err := r.save(); err != nil {
			return nil, d, err
		}
		return &Outcome{RunID: row.ID, Status: row.Status, Phase: r.st.Phase.Phase, ExitCode: ExitCode(row.Status),
			Reason: "waiver recorded; the goals' criteria and the final review still decide: ultra resume " + row.ID + " goes on"}, d, nil
	}
	if r.st.Phase.Phase != phase.Escalated {
		r.row.Status = row.Status
		if err := r.save(); err != nil {
			return nil, d, err
		}
		return &Outcome{RunID: row.ID, Status: row.Status, Phase: r.st.Phase.Phase, Reason: "waiver recorded", ExitCode: ExitCode(row.Status)}, d, nil
	}
	if err := r.transition(phase.Complete, phase.ByPerson, "gate waived by "+by+": "+reason, ""); err != nil {
		return nil, d, err
	}
	r.finish(StatusComplete, "gate waived by "+by+": "+reason)
	r.commitGreen(ctx, d)
	if err := r.save(); err != nil {
		return nil, d, err
	}
	u := r.st.Phase.Used
	r.emit(event.RunFinished, event.RunFinishedData{Status: r.stop.Status, Reason: r.stop.Reason, ExitCode: 0,
		Turns: u.Turns, Wall: u.Wall.String()})
	return r.stop, d, nil
}
