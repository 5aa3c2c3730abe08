package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// The tests ahead of verify: as soon as a step's calls may have left the
// worktree's code changed (a call that runs code or writes files: acts),
// in building, iterating or verifying, unless the verification would run
// the failing tests of the last full run first (focusOn), the
// whole suite starts on ultra's checkout of that tree, in the gate's
// sandbox, while the model thinks about its next step (usually: ask to
// verify, then verify). When the model calls verify and the worktree's
// tree is still that tree, and nothing else the tests depend on changed
// (inputsKey: commands, toolchain, environment, dependency directories,
// sandbox), the gate judges that run's results as if they had run then;
// otherwise they are dropped and the verification runs the tests itself.
// Whatever the model does meanwhile, the checkout holds exactly the tree
// that was hashed, so the evidence is of that tree alone. A run that
// changes the tree again stops the run ahead and starts another.
//
// Only with more than one CPU (the tests share the machine with the
// model's own commands) and unless verify.ahead = false.

// early is one run of the tests ahead of verify.
type early struct {
	seq    int
	tree   string
	code   string // tree without ultra's records of the run (codeOf)
	key    string // inputsKey when it started
	logDir string
	cancel context.CancelFunc
	done   chan struct{}
	run    *cachedRun // what it measured; nil: nothing usable
	// ahead are the criteria of the verification to come, started on
	// the same tree beside the tests (nil: none).
	ahead *ahead
	// tainted: a call of the model's that runs code or writes files ran
	// while these tests or criteria still ran (taintAhead).
	tainted atomic.Bool
}

// earlyRuns are the runs ahead of verify of one runner: at most one
// holds the gate's checkout at a time.
type earlyRuns struct {
	mu  sync.Mutex
	seq int    // of the latest request; older ones give way
	cur *early // the run ahead now, or the last one
	wg  sync.WaitGroup
	// drift is the final gate's look at the base tree, started with the
	// tests ahead of the last goal's verification (the base does not
	// change: it serves every run ahead). Only the run's own goroutine
	// touches it.
	drift *driftRun
}

// wantsTestsAhead says whether the calls of the step just ended may have
// left a tree worth testing ahead of verify.
func (r *runner) wantsTestsAhead(changed bool) bool {
	if !changed || r.o.NoTestsAhead || r.o.Verifier == nil || runtime.NumCPU() < 2 || r.stop != nil {
		return false
	}
	switch r.st.Phase.ModeName() {
	case phase.Build, phase.Repair:
	default:
		return false
	}
	switch r.st.Phase.Phase {
	case phase.Building, phase.Iterating, phase.Verifying, phase.Cleaning:
	default:
		return false
	}
	// When the last full run failed and its failing tests alone can be
	// run first (focusOn), the verification does that: cheap already,
	// and a failing full run is not repeated.
	prev, err := gatefile.Read(RunDir(r.o.StateRoot, r.row.ID))
	if err != nil {
		return false
	}
	last, _ := focusOn(prev)
	return last == nil
}

// startTestsAhead hashes the worktree's tree and, unless the tests of
// that tree already run ahead, starts them (stopping the run ahead of an
// older tree first).
func (r *runner) startTestsAhead(ctx context.Context) {
	r.early.mu.Lock()
	r.early.seq++
	seq := r.early.seq
	r.early.mu.Unlock()
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	workdir, deps, runID, baseline := r.row.Workdir, slices.Clone(r.st.DepDirs), r.row.ID, r.baselineDone
	records := r.st.Goals.records().Paths()
	req := verify.Request{Commands: r.o.VerifyCommands, Timeout: r.o.VerifyTimeout, LogDir: filepath.Join(runDir, "verify", fmt.Sprintf("ahead-%d", seq))}
	o := r.o
	// The criteria go with the tests; the look at the base tree serves
	// every run ahead, so it starts once.
	a := r.planAhead(ctx, nil, false)
	if a != nil {
		if _, _, label := r.nextCriteria(); label != "" {
			r.early.drift = r.wantedDrift(ctx, label, r.early.drift)
		}
	}
	r.early.wg.Add(1)
	go func() {
		defer r.early.wg.Done()
		tree, err := workspace.TreeHash(ctx, workdir)
		var code string
		if err == nil {
			code, err = workspace.WithoutPaths(ctx, workdir, tree, records)
		}
		if err != nil || ctx.Err() != nil {
			a.stopChecks(r)
			return
		}
		ectx, cancel := context.WithCancel(ctx)
		e := &early{seq: seq, tree: tree, code: code, logDir: req.LogDir, cancel: cancel, done: make(chan struct{}), ahead: a}
		r.early.mu.Lock()
		old := r.early.cur
		// Every step changes ultra's records of the run in the tree;
		// only a change of the code starts the tests again.
		if seq != r.early.seq || old != nil && old.code == code && !old.stopped() {
			// A later request came, or these tests already run.
			r.early.mu.Unlock()
			cancel()
			a.stopChecks(r)
			return
		}
		r.early.cur = e
		r.early.mu.Unlock()
		defer close(e.done)
		defer cancel()
		if old != nil {
			old.cancel()
			<-old.done
			old.drop(r)
		}
		if a != nil {
			a.start(r, tree)
		}
		e.run = o.testAhead(ectx, e, runDir, workdir, deps, runID, req, baseline)
	}()
}

// stopped says whether the run ahead cannot give a usable result: it
// ended without one, or a call of the model's ran beside it.
func (e *early) stopped() bool {
	if e.tainted.Load() {
		return true
	}
	select {
	case <-e.done:
		return e.run == nil
	default:
		return false
	}
}

// ended says whether the tests and the criteria of e have all ended.
func (e *early) ended() bool {
	for _, ch := range []chan struct{}{e.done, e.aheadDone()} {
		select {
		case <-ch:
		default:
			return false
		}
	}
	return true
}

// aheadDone is closed when e's criteria have ended (or there are none).
func (e *early) aheadDone() chan struct{} {
	if e.ahead == nil || !e.ahead.started {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return e.ahead.done
}

// taintAhead is called before a call of the model's that runs code or
// writes files (bash, edit, write, …). What ultra runs ahead shares the
// run's dependency directories with the worktree (node_modules, .venv:
// ignored by git, so not in ultra's checkouts, and shown read-only
// inside, but live): a call running beside the tests or the checks could
// change what they load while they run and put it back before verify.
// Nothing else of the model's reaches them (their checkouts are ultra's
// own, their home, /tmp, network and processes their own), so without
// dependency directories nothing is tainted. So whatever of them has not ended counts for nothing;
// the tests start again after the call if the code is still the same.
// The final gate's look at the base tree, if it still runs, is dropped
// too (it is started again when wanted); a baseline still measured is
// not kept in the gate cache for other runs.
func (r *runner) taintAhead() {
	if len(r.st.DepDirs) == 0 {
		// Nothing of the model's is live in what ultra runs: the
		// checkouts are ultra's, home and /tmp their own.
		return
	}
	r.early.mu.Lock()
	// Tests asked for before this call that have not taken the gate's
	// checkout yet (their tree still being hashed) would run beside it
	// as much as those running now: they give way (the tests start
	// again after the call).
	r.early.seq++
	e := r.early.cur
	r.early.mu.Unlock()
	if e != nil && !e.ended() {
		e.tainted.Store(true)
	}
	if b := r.baselineDone; b != nil {
		select {
		case <-b:
		default:
			r.baselineBeside.Store(true)
		}
	}
	if dr := r.early.drift; dr != nil {
		select {
		case <-dr.done:
		default:
			r.dropDrift(dr)
			r.early.drift = nil
		}
	}
}

// drop stops what an unused run ahead started and removes what it left
// (its criteria's evidence, and its logs unless it measured the tests:
// the gate cache keeps that measurement, and a decision judged from it
// later names them). Called once e has ended.
func (e *early) drop(r *runner) {
	e.ahead.stopChecks(r)
	if e.run == nil {
		_ = removeAll(e.logDir)
	}
}

// testAhead runs the whole suite on e.tree in the gate's checkout once
// the baseline no longer needs it; nil when the result cannot stand for
// a verification of that tree (stopped, the runner could not run, the
// tests changed their checkout, an input changed meanwhile).
func (o Options) testAhead(ctx context.Context, e *early, runDir, workdir string, deps []string, runID string, req verify.Request, baseline chan struct{}) *cachedRun {
	// The criteria beside them wait for the warm step of e.tree
	// (hermetic); without one they need not wait.
	defer warmed(runDir, e.tree)
	e.key = o.inputsKey(workdir, deps, e.tree, req)
	if e.key == "" || o.cached(o.cacheKey(workdir, deps, e.tree, req)) != nil {
		return nil // the verification finds it in the gate cache
	}
	if baseline != nil {
		select {
		case <-baseline:
		case <-ctx.Done():
			return nil
		}
	}
	start := o.Now()
	hreq, cleanup, err := o.hermetic(ctx, runDir, workdir, deps, e.tree, req)
	if err != nil {
		return nil
	}
	defer cleanup()
	fakes := fakesOf(hreq.Dir)
	hreq.Rerun = true
	res, err := o.Verifier.Verify(ctx, hreq)
	if err != nil || ctx.Err() != nil || !cacheable(res) {
		return nil
	}
	if cs, err := workspace.CheckoutChanged(ctx, workdir, e.tree, hreq.Dir); err != nil || len(cs) > 0 {
		return nil
	}
	if o.inputsKey(workdir, deps, e.tree, req) != e.key || e.tainted.Load() {
		// A call of the model's ran beside them: not kept, not even in
		// the gate cache.
		return nil
	}
	c := &cachedRun{Tree: e.tree, Run: runID, From: "the tests ahead of verify", Time: start, Sandbox: o.sandboxStatus().Summary(), Fakes: fakes, Result: res}
	o.remember(o.cacheKey(workdir, deps, e.tree, req), *c)
	return c
}

// takeTestsAhead ends the tests ahead of verify for a verification of
// tree: their measurement when it is of that tree's code (the tree but
// for ultra's records of the run, as the gate cache keys it) and its
// inputs are unchanged (waiting for them to finish), else nil (they are
// stopped), and the criteria started beside them on that code (the
// verification checks that they are the ones it wants). Either way the
// gate's checkout and the checks' slots are free for what the
// verification starts itself when it returns. The look at the base tree
// started with them is the caller's too (r.early.drift).
func (r *runner) takeTestsAhead(tree string) (*cachedRun, *ahead) {
	r.early.mu.Lock()
	r.early.seq++ // requests not yet started give way
	e := r.early.cur
	r.early.cur = nil
	r.early.mu.Unlock()
	if e == nil {
		return nil, nil
	}
	code := ""
	if tree != "" {
		code = r.codeOf(context.Background(), tree)
	}
	if e.code != code || code == "" || e.tainted.Load() {
		e.cancel()
		<-e.done
		e.drop(r)
		return nil, nil
	}
	<-e.done
	if r.o.inputsKey(r.row.Workdir, r.st.DepDirs, tree, verify.Request{Commands: r.o.VerifyCommands, Timeout: r.o.VerifyTimeout}) != e.key {
		// The criteria ran with those inputs too (the dependency
		// directories are live in their checkouts): neither counts.
		e.drop(r)
		return nil, nil
	}
	a := e.ahead
	e.ahead = nil
	if a != nil {
		a.tree = tree // its checks ran on this code
	}
	if e.run == nil {
		e.drop(r)
		return nil, a
	}
	run := *e.run
	run.Tree = tree
	return &run, a
}

// abandonTestsAhead stops the tests ahead of verify when the run ends.
func (r *runner) abandonTestsAhead() {
	r.early.mu.Lock()
	r.early.seq++
	e := r.early.cur
	r.early.cur = nil
	r.early.mu.Unlock()
	if e != nil {
		e.cancel()
		<-e.done
		e.drop(r)
	}
	r.early.wg.Wait()
	r.dropDrift(r.early.drift)
	r.early.drift = nil
}

// aheadReason is what a decision judged from the tests ahead says of
// them.
func aheadReason(c *cachedRun, now time.Time) string {
	return fmt.Sprintf("the tests ran on this same tree ahead of verify, while the model worked (started %s before the verification)", now.Sub(c.Time).Round(time.Millisecond))
}
