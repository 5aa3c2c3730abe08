package agent

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/ultra-dev/ultra/internal/check"
)

// ahead are the checks a verification of a run with goals will run
// should its tests let the tree through, started beside the tests
// instead of after them: the criteria of the goal (or of the final gate)
// on the tree being verified, and the final gate's second look at the
// base tree. Each runs in a checkout and sandbox of its own, as it would
// after the tests. Their results count only for that same tree, the same
// criteria and the same evidence label, and only once the gate has let
// the tree through: they are recorded then, in the order of the
// criteria, as if they had run after the tests. Otherwise they are
// stopped, and their evidence removed.
type ahead struct {
	tree, label string
	keys        []string // of the criteria run (targetKeys)
	run         []target // copies of them
	results     []check.Result
	done        chan struct{}
	ctx         context.Context
	cancel      context.CancelFunc
	used        bool
	started     bool
	warmKey     string // the tree whose warm step the checks wait for
	drift       *driftRun
}

// startAhead starts the checks of the verification about to run on the
// worktree's tree, when the machine has more than one CPU to run them on
// beside the tests; nil when there is nothing to start.
// tree is the worktree's tree the verification judges; drift is a look
// at the base tree already started (by the tests ahead of verify), taken
// when it is the one wanted.
func (r *runner) startAhead(ctx context.Context, tree string, drift *driftRun) *ahead {
	if tree == "" {
		r.dropDrift(drift)
		return nil
	}
	a := r.planAhead(ctx, drift, true)
	if a != nil {
		// As the final gate will choose them (passedOnCode).
		if ts, n := r.passedOnCode(ctx, tree, a.run); n > 0 {
			a.run, a.keys = ts, targetKeys(ts)
		}
		a.start(r, tree)
	}
	return a
}

// planAhead makes the checks of the next verification, not started yet
// (start), nil when there is nothing to run or one CPU to run it on.
// With withDrift, the final gate's look at the base tree that goes with
// them starts now (drift, when it is that one, is taken instead);
// drift is dropped otherwise.
func (r *runner) planAhead(ctx context.Context, drift *driftRun, withDrift bool) *ahead {
	if runtime.NumCPU() < 2 || r.goals == nil || r.goals.file == nil || r.goals.file.Accepted == nil {
		r.dropDrift(drift)
		return nil
	}
	ts, label, driftLabel := r.nextCriteria()
	if !withDrift {
		driftLabel = ""
	}
	if len(ts) == 0 && driftLabel == "" {
		r.dropDrift(drift)
		return nil
	}
	actx, cancel := context.WithCancel(ctx)
	a := &ahead{label: label, keys: targetKeys(ts), run: copies(ts), done: make(chan struct{}), ctx: actx, cancel: cancel}
	if driftLabel != "" {
		// Not under actx: it may go on after the criteria are taken.
		a.drift = r.wantedDrift(ctx, driftLabel, drift)
	} else {
		r.dropDrift(drift)
	}
	return a
}

// start runs a's checks on tree, once the gate's warm step compiled
// that tree (warmWaits: whoever ends a verification or a run of the
// tests ahead without one releases them).
func (a *ahead) start(r *runner, tree string) {
	a.tree, a.warmKey, a.started = tree, tree, true
	warm := awaitWarm(RunDir(r.o.StateRoot, r.row.ID), tree)
	go func() {
		defer close(a.done)
		select {
		case <-warm:
		case <-a.ctx.Done():
		}
		a.results = r.runChecks(a.ctx, tree, a.run, a.label, "check", nil)
	}()
}

// wantedDrift is drift when it is the look at the base tree labelled
// label with the criteria wanted now, started with the inputs of now (a
// look started ahead of verify may be taken many calls of the model's
// later), else a new one (drift dropped).
func (r *runner) wantedDrift(ctx context.Context, label string, drift *driftRun) *driftRun {
	if drift != nil && drift.label == label && slices.Equal(targetKeys(drift.live), targetKeys(r.driftTargets())) && drift.key == r.driftInputs() {
		return drift
	}
	r.dropDrift(drift)
	return r.startDrift(ctx, label)
}

// nextCriteria are the criteria the next verification runs if its tests
// pass (as judgeGoals chooses them), the label of their evidence, and
// the label of the final gate's look at the base tree that goes with
// them ("": none).
func (r *runner) nextCriteria() (ts []target, label, drift string) {
	f := r.goals.file
	g := f.Current()
	switch {
	case r.st.Goals.Cleanup != nil:
		label = r.cleanupLabel()
		return finalTargets(f, nil), label, "base-" + label
	case r.st.Goals.Final || g == nil && len(r.failedGoals()) == 0:
		label = fmt.Sprintf("final-%d", r.st.Goals.FinalAttempts+1)
		return finalTargets(f, nil), label, "base-" + label
	case g == nil:
		return nil, "", ""
	}
	if r.nextGoal(g) == nil && len(r.failedGoals()) == 0 && r.worker() == nil {
		drift = "base-final-1" // a worker's run has no final gate: its run's has
	}
	return cycleTargets(g), fmt.Sprintf("cycle-%d", g.Attempt+1), drift
}

// targetKeys say what each of ts runs: its goal, its criterion and its
// check.
func targetKeys(ts []target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.g.ID + "\x00" + t.c.ID + "\x00" + baseKey(*t.c)
	}
	return out
}

// criteriaChecks runs the checks of ts on tree (runChecks), or takes the
// results of the same checks started beside the tests of this
// verification; each is called in the order of ts.
func (r *runner) criteriaChecks(ctx context.Context, tree string, ts []target, label string, each func(i int, res check.Result)) {
	a := r.goals.ahead
	if a == nil || a.used || a.tree != tree || a.label != label || !slices.Equal(a.keys, targetKeys(ts)) {
		// Not these checks: they stop first (they use the same slots).
		a.stopChecks(r)
		r.runChecks(ctx, tree, ts, label, "check", each)
		return
	}
	a.used = true
	// The gate has judged the tree: if it compiled nothing (its cache
	// had the tree), the criteria need not wait for it.
	warmed(RunDir(r.o.StateRoot, r.row.ID), a.warmKey)
	<-a.done
	for i, res := range a.results {
		if ctx.Err() != nil || a.ctx.Err() != nil {
			return
		}
		each(i, res)
	}
}

// takeDrift is the final gate's look at the base tree started beside
// the tests when it is the one wanted (the same label and criteria), or
// a new one.
func (r *runner) takeDrift(ctx context.Context, label string) *driftRun {
	var dr *driftRun
	if a := r.goals.ahead; a != nil {
		dr, a.drift = a.drift, nil
	}
	return r.wantedDrift(ctx, label, dr)
}

// stopChecks stops the criteria of a that were not used and removes
// their evidence (nothing was recorded of them).
func (a *ahead) stopChecks(r *runner) {
	if a == nil || a.used {
		return
	}
	a.used = true
	a.cancel()
	if !a.started {
		return
	}
	<-a.done
	for _, t := range a.run {
		_ = removeAll(r.evidenceDir(t, a.label))
	}
}

// dropDrift stops a look at the base tree whose results are not wanted
// and removes its evidence.
func (r *runner) dropDrift(dr *driftRun) {
	if dr == nil {
		return
	}
	dr.abandon()
	for _, t := range dr.live {
		_ = removeAll(r.evidenceDir(t, dr.label))
	}
}

// finish ends what the verification did not use of a.
func (a *ahead) finish(r *runner) {
	if a == nil {
		return
	}
	a.stopChecks(r)
	if a.drift != nil {
		r.dropDrift(a.drift)
		a.drift = nil
	}
	a.cancel()
	warmed(RunDir(r.o.StateRoot, r.row.ID), a.warmKey)
}
