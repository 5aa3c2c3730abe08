package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Evidence turns a verification into what the gate judges. The
// fake-result constructs of the tested tree (Evidence.Fakes) are the
// caller's to add: it scans the tree once (fakesOf).
func Evidence(res *verify.Result) gate.Evidence {
	var ev gate.Evidence
	if res == nil {
		return ev
	}
	if len(res.Commands) == 0 {
		ev.NoCommand = res.Reason
	}
	for _, c := range res.Commands {
		ev.Commands = append(ev.Commands, gate.Command{
			Command: c.Command, Source: c.Source, ExitCode: c.ExitCode, TimedOut: c.TimedOut, NotFound: c.NotFound,
			Parsed: c.ReportOK || c.Passed+c.Failed+c.Errors+c.Skipped > 0 || len(c.Formats) > 0, Format: c.Format,
			LogPath: c.LogPath, Duration: c.Duration, Passed: c.Passed, Failed: c.Failed, Errors: c.Errors, Skipped: c.Skipped,
			HasTests: len(c.Tests) > 0, ReportMissing: c.ReportMissing, Runner: c.Runner,
			RerunPassed: c.Rerun != nil && c.Rerun.ExitCode == 0 && !c.Rerun.TimedOut, Lines: c.OutputLines, Cause: c.Cause,
		})
		ev.Tests = append(ev.Tests, c.Tests...)
	}
	ev.Flaky = res.Flaky
	if len(ev.Tests) == 0 {
		ev.Failing = res.Failing
	}
	return ev
}

// startBaseline measures the tests of the tree the run starts from. The
// tree is fixed now, before the model can act; the suite runs on ultra's
// own checkout of it, so the run goes on planning and building meanwhile:
// only the first verification waits for it. A base already measured with
// the same commands and environment (gate cache) is not run again.
func (r *runner) startBaseline(ctx context.Context) {
	if r.st.BaseTree == "" {
		r.st.BaseTree, _ = workspace.TreeHash(ctx, r.row.Workdir)
	}
	r.measureBaseline(ctx, r.st.BaseTree)
}

// measureBaseline measures the baseline of tree in the background.
func (r *runner) measureBaseline(ctx context.Context, tree string) {
	done := make(chan struct{})
	r.baselineDone = done
	ctx, r.stopBaseline = context.WithCancel(ctx)
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	go func() {
		defer close(done)
		start := time.Now()
		m, err := r.o.measure(ctx, runDir, r.row.Workdir, r.st.DepDirs, tree, verify.Request{Commands: r.o.VerifyCommands,
			Timeout: r.o.VerifyTimeout, LogDir: filepath.Join(runDir, "verify", "baseline")}, r.row.ID, "baseline",
			func() bool { return !r.baselineBeside.Load() })
		if ctx.Err() != nil {
			return // measured again when the run resumes
		}
		var b gate.Baseline
		if err != nil {
			b = gate.Baseline{Tree: tree, Reason: "the tests could not be run: " + err.Error()}
		} else {
			ev := Evidence(m.Result)
			ev.Fakes = m.Fakes
			b = gate.NewBaseline(tree, ev)
		}
		r.baselineMu.Lock()
		err = gatefile.WriteBaseline(runDir, b)
		if err == nil {
			r.noteBaseline()
		}
		r.baselineMu.Unlock()
		if err != nil {
			r.emit(event.Warning, event.WarningData{Message: "baseline not recorded: " + err.Error()})
			return
		}
		r.bus.Emit(event.Baseline, "", event.BaselineData{Tree: b.Tree, Evaluated: b.Evaluated, Reason: b.Reason,
			Executed: b.Executed, Failed: b.Failed, Errors: b.Errors, Skipped: b.Skipped, Sources: b.Sources, Reused: m.reused(),
			Duration: time.Since(start).Round(time.Millisecond).String()})
	}()
}

// noteBaseline records the stamp of the run's baseline.json as ultra
// wrote it (or found it when the run resumed): see stateFingerprint.
func (r *runner) noteBaseline() {
	if info, err := os.Lstat(gatefile.BaselinePath(RunDir(r.o.StateRoot, r.row.ID))); err == nil {
		r.baselineStamp.Store(statStamp(info))
	}
}

// ownBaseline is the stamp noteBaseline recorded, "" before.
func (r *runner) ownBaseline() string {
	s, _ := r.baselineStamp.Load().(string)
	return s
}

// measurement is a full verification of a tree, run now or found in the
// gate cache (Cached).
type measurement struct {
	Result *verify.Result
	Fakes  []string
	Cached *cachedRun
}

func (m measurement) reused() string {
	if m.Cached == nil {
		return ""
	}
	return m.Cached.String()
}

// measure runs the whole suite on tree, hermetically, unless the gate
// cache has it; what it runs is remembered there when keep says so at
// the end. who says which measurement of which run this is ("baseline",
// "decision 3").
//
// The failed tests are not run again: a baseline keeps every test's
// first outcome alone (a test that failed at the start and passes only
// on a re-run later still counts as failing), so the re-run would serve
// only a later verification of the same tree that finds the measurement
// in the gate cache. Such a verification judges every failure of it as
// real (no test is flaky without a re-run): never more leniently than a
// run of its own would.
func (o Options) measure(ctx context.Context, runDir, workdir string, deps []string, tree string, req verify.Request, run, who string, keep func() bool) (measurement, error) {
	key := o.cacheKey(workdir, deps, tree, req)
	if c := o.cached(key); c != nil {
		return measurement{Result: c.Result, Fakes: c.Fakes, Cached: c}, nil
	}
	req, cleanup, err := o.hermetic(ctx, runDir, workdir, deps, tree, req)
	if err != nil {
		return measurement{}, err
	}
	defer cleanup()
	// Before the tests run: they can write their checkout.
	fakes := fakesOf(req.Dir)
	req.Rerun = false
	res, err := o.Verifier.Verify(ctx, req)
	if err != nil {
		return measurement{}, err
	}
	m := measurement{Result: res, Fakes: fakes}
	if !keep() {
		return m, nil
	}
	o.remember(key, cachedRun{Tree: tree, Run: run, From: who, Time: o.Now(), Sandbox: o.sandboxStatus().Summary(), Fakes: m.Fakes, Result: res})
	return m, nil
}

// ensureBaseline measures the baseline of a resumed run that has none
// (the run stopped while it was measured), from the tree the run started
// with.
func (r *runner) ensureBaseline(ctx context.Context) {
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	if b, err := gatefile.ReadBaseline(runDir); b != nil || err != nil {
		r.noteBaseline()
		return
	}
	if r.st.BaseTree != "" || r.st.Phase.Phase == "planning" {
		r.startBaseline(ctx)
		return
	}
	_ = gatefile.WriteBaseline(runDir, gate.Baseline{Reason: "the run was interrupted before its baseline was measured"})
	r.noteBaseline()
}

// abandonBaseline stops a baseline still being measured when the run
// stops (it is measured again when the run resumes in planning) and waits
// for it to clean up.
func (r *runner) abandonBaseline() {
	if r.baselineDone == nil {
		return
	}
	select {
	case <-r.baselineDone:
	default:
		r.stopBaseline()
		<-r.baselineDone
	}
}

// waitBaseline blocks until the baseline is measured.
func (r *runner) waitBaseline() {
	if r.baselineDone != nil {
		<-r.baselineDone
	}
}

// gateInput is what the gate judges a run's next verification against:
// its earlier decisions, its baseline and the tree now in workdir.
func gateInput(ctx context.Context, runDir, runID, workdir string, now time.Time) (gate.Input, error) {
	tree, err := workspace.TreeHash(ctx, workdir)
	if err != nil && ctx.Err() != nil {
		return gate.Input{}, ctx.Err()
	}
	return gateInputOf(runDir, runID, tree, now)
}

// gateInputOf is gateInput of tree, already hashed ("": it could not be).
func gateInputOf(runDir, runID, tree string, now time.Time) (gate.Input, error) {
	prev, err := gatefile.Read(runDir)
	if err != nil {
		return gate.Input{}, err
	}
	base, err := gatefile.ReadBaseline(runDir)
	if err != nil {
		return gate.Input{}, err
	}
	return gate.Input{Run: runID, Tree: tree, N: gatefile.Next(prev), Time: now, Baseline: base, Previous: prev}, nil
}

// gateVerify runs the tests (failed ones first when iterating and that
// can save time: focusOn), judges them and records the decision file.
// tree is the worktree's tree, hashed by the caller ("": it could not be).
func (r *runner) gateVerify(ctx context.Context, tree string, ahead *cachedRun) (gate.Decision, *verify.Result, string, error) {
	r.waitBaseline()
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	input, err := gateInputOf(runDir, r.row.ID, tree, r.o.Now())
	if err != nil {
		return gate.Decision{}, nil, "", err
	}
	hit := gate.CachedPass(input.Previous, input.Tree)
	if hit == nil && r.hasGoals() {
		hit = sameCode(ctx, r.row.Workdir, input.Previous, input.Tree)
	}
	if hit != nil {
		d := gate.FromCache(*hit, input.N, r.o.Now())
		path, err := gatefile.Write(runDir, d)
		return d, nil, path, err
	}
	logDir := filepath.Join(runDir, "verify", fmt.Sprint(input.N))
	req := verify.Request{Commands: r.o.VerifyCommands, Timeout: r.o.VerifyTimeout, LogDir: logDir}
	// The failing tests run first only when the durations measured say
	// it can save time; the whole suite runs unless they still fail.
	focus, why := focusOn(input.Previous)
	if ahead != nil {
		focus, why = nil, "" // the whole suite ran
	}
	d, res, err := r.o.judgeTree(ctx, r.row, r.st, req, input, focus, ahead)
	if err != nil {
		return d, res, "", err
	}
	if why != "" && d.Reused == "" && res != nil {
		d.Reasons = append(d.Reasons, "the whole suite ran without its failing tests first: "+why)
	}
	path, err := gatefile.Write(runDir, d)
	return d, res, path, err
}

// sameCode is the latest decision that passed (or a person waived) a tree
// with the same code as tree: the two differ only in ultra's own records
// of the run (goals.json, the ledger), which every step of a run with
// goals changes.
func sameCode(ctx context.Context, workdir string, prev []gate.Decision, tree string) *gate.Decision {
	code, err := workspace.WithoutPaths(ctx, workdir, tree, goalArtifacts)
	if err != nil {
		return nil
	}
	for i := len(prev) - 1; i >= 0; i-- {
		d := prev[i]
		if !d.Valid(d.Tree) || d.Status == gate.Concerns {
			continue
		}
		if c, err := workspace.WithoutPaths(ctx, workdir, d.Tree, goalArtifacts); err == nil && c == code {
			return &prev[i]
		}
	}
	return nil
}

// judgeTree verifies the tree of input hermetically (see hermetic) and
// judges it; a tree that cannot be checked out is not evaluated. When the
// run changed the project's existing tests, the original tests are run
// against the new code too (protectTests).
func (o Options) judgeTree(ctx context.Context, row *store.Run, st runState, req verify.Request, in gate.Input, last *gate.Decision, ahead *cachedRun) (gate.Decision, *verify.Result, error) {
	runDir, workdir := RunDir(o.StateRoot, row.ID), row.Workdir
	d, res, err := o.judgeHermetic(ctx, runDir, workdir, st.DepDirs, true, req, in, last, ahead)
	if err == nil && d.Status.Advances() {
		d = o.protectTests(ctx, row, st, req, in, d, commandsOf(res))
	}
	if err == nil && in.Tree != "" {
		d = refuseCaseVariants(ctx, workdir, in.Tree, d)
	}
	return d, res, err
}

// refuseCaseVariants fails a decision whose tree holds another spelling
// of .ultra or .git at its top (workspace.CaseVariant): on a
// case-insensitive checkout it would land as ultra's records or git's
// own files, so ultra never commits it.
func refuseCaseVariants(ctx context.Context, workdir, tree string, d gate.Decision) gate.Decision {
	vs, err := workspace.CaseVariants(ctx, workdir, tree)
	switch {
	case err != nil:
		d.Status = gate.NotEvaluated
		d.Reasons = append([]string{"ultra could not list the tree's top to look for other spellings of .ultra and .git: " + err.Error()}, d.Reasons...)
	case len(vs) > 0:
		d.Status = gate.Fail
		d.Reasons = append([]string{fmt.Sprintf("the tree holds %s: another spelling of .ultra or .git, which on a case-insensitive checkout is ultra's records or git's own directory; remove it",
			strings.Join(vs, ", "))}, d.Reasons...)
	}
	return d
}

// judgeHermetic verifies in.Tree, a tree of workdir's repository, in a
// checkout of its own, contained, unless the gate cache has a full
// verification of it (then the tests do not run, and the recorded evidence
// is judged). own says the tree is the worktree's (else: no check that
// the worktree stayed as it was, no look for fake-result constructs).
func (o Options) judgeHermetic(ctx context.Context, runDir, workdir string, deps []string, own bool, req verify.Request, in gate.Input, last *gate.Decision, ahead *cachedRun) (gate.Decision, *verify.Result, error) {
	recorded := func(c *cachedRun) gate.Decision {
		in.Evidence = Evidence(c.Result)
		if own {
			in.Evidence.Fakes = c.Fakes
		}
		d := gate.Judge(in)
		d.Sandbox = c.Sandbox
		return d
	}
	if ahead != nil && ahead.Tree == in.Tree && in.Tree != "" {
		// The run's own tests of this very code, ahead of verify
		// (early.go): judged as if they had run now.
		d := recorded(ahead)
		if !o.sandboxStatus().Available {
			d.Reasons = append(d.Reasons, "UNCONTAINED: the tests ran without a sandbox ("+o.sandboxStatus().Problem+")")
		}
		d.Reasons = append(d.Reasons, aheadReason(ahead, o.Now()))
		return d, ahead.Result, nil
	}
	key := o.cacheKey(workdir, deps, in.Tree, req)
	if c := o.cached(key); c != nil {
		d := recorded(c)
		d.Reused = c.String()
		d.Reasons = append(d.Reasons, "not run again: "+c.String())
		return d, c.Result, nil
	}
	req, cleanup, err := o.hermetic(ctx, runDir, workdir, deps, in.Tree, req)
	if err != nil {
		in.Evidence = Evidence(&verify.Result{Status: verify.StatusNotEvaluated, Reason: err.Error()})
		return gate.Judge(in), nil, nil
	}
	defer cleanup()
	// The tree does not change while it is tested: one scan serves the
	// focused and the full run, and the cache.
	fakes := fakesOf(req.Dir)
	var judged []string
	repo := workdir
	if own {
		judged = fakes
	} else {
		workdir = ""
	}
	d, res, err := judgeVerification(ctx, o.Verifier, req, workdir, judged, in, last)
	d.Sandbox = o.sandboxStatus().Summary()
	if !o.sandboxStatus().Available {
		d.Reasons = append(d.Reasons, "UNCONTAINED: the tests ran without a sandbox ("+o.sandboxStatus().Problem+")")
	}
	// The verdict is for the tree ultra checked out: tests that changed
	// its files (one package's tests rewriting another's code before it
	// was compiled) tested something else.
	changed := false
	if err == nil && in.Tree != "" {
		if cs, cerr := workspace.CheckoutChanged(ctx, repo, in.Tree, req.Dir); cerr != nil || len(cs) > 0 {
			changed = true
			why := fmt.Sprintf("the tests changed files of the checkout they ran in (%s): the code that passed is not the tree that was judged", strings.Join(firstN(cs, 5), ", "))
			if cerr != nil {
				why = "ultra could not tell whether the tests changed the checkout they ran in: " + cerr.Error()
			}
			if d.Status.Advances() {
				d.Status = gate.Fail
			}
			d.Reasons = append([]string{why}, d.Reasons...)
		}
	}
	if err == nil && !d.Focused && res != nil && !changed {
		o.remember(key, cachedRun{Tree: in.Tree, Run: in.Run, From: fmt.Sprintf("decision %d", in.N), Time: in.Time, Sandbox: d.Sandbox, Fakes: fakes, Result: res})
	}
	return d, res, err
}

// VerifyOnce is one verification judged by the gate, outside any run (as
// `ultra verify` does): tree is the tree being verified, last the previous
// decision whose failing tests run first.
func VerifyOnce(ctx context.Context, v verify.Verifier, req verify.Request, tree string, last *gate.Decision) (gate.Decision, *verify.Result, error) {
	// Outside a run there is no baseline to tell new constructs that can
	// fake results from the project's own: none are looked for.
	return judgeVerification(ctx, v, req, req.Dir, nil, gate.Input{Tree: tree, N: 1, Time: time.Now().UTC()}, last)
}

// judgeVerification runs the tests and judges them. When the last full
// verification failed, its failing tests run first and, if they still
// fail, that is the verdict; otherwise the whole suite runs, with failed
// tests re-run once to tell flaky from failing.
// workdir is the working tree whose tree in.Tree is ("": none, the tree
// is ultra's own making); fakeKeys are the constructs that can fake
// results in the tested tree, judged inside a run, where a baseline tells
// the project's own from new ones (nil: none looked for).
func judgeVerification(ctx context.Context, v verify.Verifier, req verify.Request, workdir string, fakeKeys []string, in gate.Input, last *gate.Decision) (gate.Decision, *verify.Result, error) {
	if last != nil && last.Status == gate.Fail && len(last.Failing) > 0 {
		focused := req
		for _, f := range last.Failing {
			focused.Only = append(focused.Only, verify.SelectName(f.Name, f.Suite, f.File))
		}
		// When no runner can select, everything runs: that is the full
		// run, failed tests re-run once, and it is not repeated.
		focused.RerunWhenAll = true
		res, err := v.Verify(ctx, focused)
		if err == nil && !res.AnySelected() && len(res.Commands) > 0 {
			return judgeFull(ctx, res, nil, workdir, fakeKeys, in)
		}
		// A selection that ran nothing (the runner matched no test) says
		// nothing: the full suite decides.
		if err == nil && res.Selected && res.Passed+res.Failed+res.Errors > 0 {
			fin := in
			fin.Evidence = Evidence(res)
			fin.Evidence.Fakes = fakeKeys
			fin.Evidence.Focused = true
			if d := gate.Judge(fin); d.Status == gate.Fail {
				d.Reasons = append(d.Reasons, "previously failing tests ran first and still fail; the full suite was not run")
				return d, res, nil
			}
		}
		if ctx.Err() != nil {
			return gate.Decision{}, nil, ctx.Err()
		}
	}
	full := req
	full.Rerun = true
	res, err := v.Verify(ctx, full)
	return judgeFull(ctx, res, err, workdir, fakeKeys, in)
}

// judgeFull judges a run of the whole suite (err: ultra could not run it).
func judgeFull(ctx context.Context, res *verify.Result, err error, workdir string, fakeKeys []string, in gate.Input) (gate.Decision, *verify.Result, error) {
	if err != nil {
		if ctx.Err() != nil {
			return gate.Decision{}, nil, ctx.Err()
		}
		res = &verify.Result{Status: verify.StatusNotEvaluated, Reason: "ultra could not run the tests: " + err.Error()}
	}
	in.Evidence = Evidence(res)
	in.Evidence.Fakes = fakeKeys
	d := gate.Judge(in)
	if in.Tree != "" && workdir != "" {
		// A verdict is for the tree that was tested: tests that change the
		// tree leave one that was not, so nothing is proven about it.
		if after, _ := workspace.TreeHash(ctx, workdir); after != "" && after != in.Tree {
			if d.Status.Advances() {
				d.Status = gate.Fail
				d.Reasons = append([]string{"the tests changed files of the working tree while they ran: the tree on disk is not the one that was tested (make them write only to ignored paths)"}, d.Reasons...)
			} else {
				d.Reasons = append(d.Reasons, "the tests also changed files of the working tree while they ran")
			}
		}
	}
	return d, res, nil
}

// fakesOf are the keys of the constructs in the tree at dir that can fake
// test results (verify.FakeResults).
func fakesOf(dir string) []string { return verify.FindingKeys(verify.FakeResults(dir)) }

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// lastFull is the latest decision of a full (not focused, not cached) run.
func lastFull(ds []gate.Decision) *gate.Decision {
	for i := len(ds) - 1; i >= 0; i-- {
		if !ds[i].Focused && ds[i].CachedFrom == 0 && ds[i].Waiver == nil {
			return &ds[i]
		}
	}
	return nil
}

// gateSummary is what the model reads after verify: the tests' compact
// summary and the gate's verdict.
func gateSummary(d gate.Decision, res *verify.Result, path string) string {
	var b strings.Builder
	if d.Reused != "" {
		// The logs named below belong to that measurement.
		fmt.Fprintf(&b, "tests not run again: %s\n", d.Reused)
	}
	if res != nil {
		b.WriteString(res.Summary())
		b.WriteString("\n")
	} else if d.CachedFrom != 0 {
		fmt.Fprintf(&b, "tests not run again: this exact tree passed in gate decision %d\n", d.CachedFrom)
	}
	fmt.Fprintf(&b, "gate: %s\n", d.Status)
	for _, reason := range d.Reasons {
		fmt.Fprintf(&b, "  - %s\n", reason)
	}
	fmt.Fprintf(&b, "decision file: %s (written by ultra; read-only)", path)
	return b.String()
}
