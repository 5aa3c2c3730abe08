package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/sandbox"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// target is one criterion a verification runs.
type target struct {
	g *goal.Goal
	c *goal.Criterion
}

// judgeGoals runs the criteria this verification decides on, on the tree
// the gate judged (only when the gate let it through: a red suite decides
// already), records every result and says what it means for the goal.
// The text is what the model reads.
func (r *runner) judgeGoals(ctx context.Context, d gate.Decision) (phase.GoalResult, string) {
	f := r.goals.file
	// The criteria run when the tests let the tree through by themselves
	// (a decision that needs a person's waiver does not, yet).
	o := d.Outcome()
	advanced := o == phase.Pass || o == phase.Concerns
	if r.cleanupJudged() {
		// The cleanup's verification: the final gate again, on the
		// cleaned tree; it is not one of the final gate's attempts.
		return r.finalGate(ctx, d, nil, r.cleanupLabel(), nil)
	}
	if r.st.Goals.Final {
		r.st.Goals.FinalAttempts++
		return r.finalGate(ctx, d, nil, fmt.Sprintf("final-%d", r.st.Goals.FinalAttempts), nil)
	}
	g := f.Current()
	if g == nil {
		// Nothing left to build: the final gate, unless a goal failed.
		if failed := r.failedGoals(); len(failed) > 0 {
			return phase.GoalResult{Final: true, Failed: true, Reason: "goals failed: " + strings.Join(failed, "; ") + " (a person decides how to go on)"}, ""
		}
		r.st.Goals.Final = true
		r.st.Goals.FinalAttempts++
		return r.finalGate(ctx, d, nil, fmt.Sprintf("final-%d", r.st.Goals.FinalAttempts), nil)
	}
	g.Attempt++
	g.UpdatedAt = r.o.Now().UTC()
	var b strings.Builder
	var drift *driftRun
	if advanced {
		if r.nextGoal(g) == nil && len(r.failedGoals()) == 0 && r.worker() == nil {
			// The last goal: should its criteria pass, the final gate
			// looks at the base tree again; that starts now, beside them
			// (or started beside the tests: takeDrift).
			drift = r.takeDrift(ctx, "base-final-1")
			defer drift.abandon()
		}
		fmt.Fprintf(&b, "criteria of %s (cycle %d of %d), run by ultra on tree %s:\n", g.ID, g.Attempt, goal.MaxCycles, workspace.Short(d.Tree))
		b.WriteString(r.runCriteria(ctx, d.Tree, cycleTargets(g), fmt.Sprintf("cycle-%d", g.Attempt)))
	} else {
		fmt.Fprintf(&b, "criteria of %s not run: the tests must pass first (cycle %d of %d)\n", g.ID, g.Attempt, goal.MaxCycles)
	}
	v := g.Judge(advanced)
	if start := r.st.Goals.StartCode[g.ID]; v.Complete && (start == "" || r.codeOf(ctx, d.Tree) == "") {
		// Fail closed: without the code the goal started from, or the
		// code now, ultra cannot tell that anything changed.
		v.Complete = false
		v.Reason = "ultra could not tell the code the goal started from or the code now (git failed), so it cannot see a change: verify again"
	} else if v.Complete && r.codeOf(ctx, d.Tree) == start {
		// Criteria that pass on the very code the goal started from show
		// nothing about the goal: no work, no completion.
		v.Complete = false
		v.Reason = "nothing in the code changed since the goal started, so its criteria passing shows nothing about it: make the change the goal asks for (a goal already met needs a person: ultra goals steer --kind mark_blocked_superseded)"
		if g.Attempt >= goal.MaxCycles {
			v.Failed = true
		}
	}
	if v.Complete && r.worker() != nil {
		// A worker's goal is complete only once it landed on the run's
		// branch; sent back, it goes on with what failed.
		landed, text, err := r.landWork(ctx, g, d)
		b.WriteString(text)
		if err != nil {
			r.landFailed = err
			return phase.GoalResult{Goal: g.ID}, b.String()
		}
		if !landed {
			v.Complete, v.Reason = false, oneLine(text, 600)
			v.Failed = g.Attempt >= goal.MaxCycles
		}
	}
	res := phase.GoalResult{Goal: g.ID, Complete: v.Complete, Failed: v.Failed, Reason: v.Reason, Continue: r.st.Goals.Continue,
		More: r.nextGoal(g) != nil, Cycles: r.cycleLimit()}
	if r.worker() != nil && v.Complete {
		return res, b.String() // the run's final gate is the run's
	}
	if v.Complete {
		res.Reason = fmt.Sprintf("every essential criterion passed (%d)", essentialCount(g))
		if failed := r.failedGoals(); !res.More && len(failed) > 0 {
			// goals.on_failure = continue: the last goal is done, but not
			// the brief.
			res.Failed, res.Final = true, true
			res.Reason = fmt.Sprintf("%s; but goals failed earlier: %s (a person decides how to go on)", res.Reason, strings.Join(failed, "; "))
			return res, b.String()
		}
		if !res.More {
			// The last goal: the final gate runs now, on this same tree.
			fmt.Fprintf(&b, "%s is the last goal: the final gate runs every criterion of every goal on this tree.\n", g.ID)
			r.st.Goals.FinalAttempts = 1
			fin, text := r.finalGate(ctx, d, g, "final-1", drift)
			fin.Goal = g.ID
			b.WriteString(text)
			return fin, b.String()
		}
	}
	return res, b.String()
}

// finalGate runs every criterion of every goal on the tree d judged
// (those of skip, just run on it, are not run again) and says whether the
// run may go to its review. drift is the look at the base tree again
// that the caller started (nil: finalGate starts it, beside the
// criteria).
func (r *runner) finalGate(ctx context.Context, d gate.Decision, skip *goal.Goal, label string, drift *driftRun) (phase.GoalResult, string) {
	f := r.goals.file
	res := phase.GoalResult{Final: true, Cycles: r.cycleLimit()}
	if o := d.Outcome(); o != phase.Pass && o != phase.Concerns {
		res.Reason = "the tests must pass first"
		if r.st.Goals.FinalAttempts >= goal.MaxCycles {
			res.Failed, res.Reason = true, fmt.Sprintf("the final gate did not pass in %d verifications", r.st.Goals.FinalAttempts)
		}
		return res, "final gate: criteria not run: the tests must pass first\n"
	}
	if drift == nil {
		drift = r.takeDrift(ctx, "base-"+label)
		defer drift.abandon()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "final gate on tree %s: every criterion of every goal:\n", workspace.Short(d.Tree))
	ts, done := r.passedOnCode(ctx, d.Tree, finalTargets(f, skip))
	if done > 0 {
		fmt.Fprintf(&b, "(%d criteria passed on this same code when the last goal landed: not run again)\n", done)
	}
	b.WriteString(r.runCriteria(ctx, d.Tree, ts, label))
	var missing []string
	for gi := range f.Goals {
		g := &f.Goals[gi]
		if g.Status == goal.Blocked {
			continue
		}
		if g != skip && (g.Status == goal.Pending || g.Status == goal.InProgress) {
			// Not worked through the goal loop: its criteria passing on
			// this tree says nothing of a change made for it.
			missing = append(missing, g.ID+": not worked on yet ("+string(g.Status)+")")
			continue
		}
		if v := g.Judge(true); !v.Complete {
			missing = append(missing, g.ID+": "+v.Reason)
		}
	}
	if len(missing) == 0 && ctx.Err() == nil {
		// The criteria that showed the change must still fail on the code
		// the run started from: one that passes there now depends on
		// something else (the time, the machine, chance).
		if drift := r.baseDrift(ctx, drift); len(drift) > 0 && ctx.Err() == nil {
			res.Failed = true
			res.Reason = "criteria that failed on the base tree pass there now, so their result does not depend on the change (the time, the machine, chance): " +
				strings.Join(drift, "; ") + "; a person decides (ultra goals steer --kind revise_criterion, then ultra resume)"
			r.recordGoal(ledger.Entry{Kind: ledger.KindFinalGate, Text: "fail: " + oneLine(res.Reason, 600), Data: jsonData(map[string]any{"tree": d.Tree, "gate": d.N})})
			return res, b.String() + "final gate: " + res.Reason + "\n"
		}
	}
	if len(missing) == 0 {
		res.Complete = true
		res.Reason = fmt.Sprintf("the tests and every essential criterion of %d goals pass on tree %s", len(f.Goals), workspace.Short(d.Tree))
		r.recordGoal(ledger.Entry{Kind: ledger.KindFinalGate, Text: "pass: " + res.Reason, Data: jsonData(map[string]any{"tree": d.Tree, "gate": d.N})})
		return res, b.String()
	}
	res.Reason = "the final gate found criteria failing on the final tree (a later change broke them): " + strings.Join(missing, "; ")
	if r.st.Goals.FinalAttempts >= goal.MaxCycles {
		res.Failed = true
		res.Reason = fmt.Sprintf("the final gate failed %d times: %s", r.st.Goals.FinalAttempts, strings.Join(missing, "; "))
	}
	r.recordGoal(ledger.Entry{Kind: ledger.KindFinalGate, Text: "fail: " + strings.Join(missing, "; "), Data: jsonData(map[string]any{"tree": d.Tree, "gate": d.N})})
	return res, b.String()
}

// passedOnCode leaves out of ts, in a parallel run, the criteria whose
// last result is a pass ultra captured on a tree with the same code as
// tree: the merge that landed the last goal ran every goal's criteria on
// it (integrate.go), and the final gate that follows at once need not
// run them again. It returns the rest and how many it left out.
func (r *runner) passedOnCode(ctx context.Context, tree string, ts []target) ([]target, int) {
	if r.st.Goals.Parallel == nil {
		return ts, 0
	}
	code := r.codeOf(ctx, tree)
	codes := map[string]string{}
	var out []target
	for _, t := range ts {
		ev := t.c.CapturedEvidence
		if code != "" && t.c.Status == goal.CriterionPass && ev != nil && ev.Tree != "" {
			c, ok := codes[ev.Tree]
			if !ok {
				c = r.codeOf(ctx, ev.Tree)
				codes[ev.Tree] = c
			}
			if c == code {
				continue
			}
		}
		out = append(out, t)
	}
	return out, len(ts) - len(out)
}

// cycleTargets are the criteria a verification of goal g runs.
func cycleTargets(g *goal.Goal) []target {
	var ts []target
	for i := range g.SuccessCriteria {
		if g.SuccessCriteria[i].Superseded == "" {
			ts = append(ts, target{g, &g.SuccessCriteria[i]})
		}
	}
	return ts
}

// finalTargets are the criteria the final gate runs: every live one of
// every goal but skip's and the blocked goals'.
func finalTargets(f *goal.File, skip *goal.Goal) []target {
	var ts []target
	for gi := range f.Goals {
		if g := &f.Goals[gi]; g != skip && g.Status != goal.Blocked {
			ts = append(ts, cycleTargets(g)...)
		}
	}
	return ts
}

// failedGoals lists the goals that failed, with why.
func (r *runner) failedGoals() []string {
	var out []string
	for _, g := range r.goals.file.Goals {
		if g.Status == goal.Failed {
			out = append(out, g.ID+": "+g.Reason)
		}
	}
	return out
}

func essentialCount(g *goal.Goal) int {
	n := 0
	for _, c := range g.SuccessCriteria {
		if c.Essential && c.Superseded == "" {
			n++
		}
	}
	return n
}

// nextGoal is the first pending goal other than g, wherever steering put
// it, or nil: the final gate starts only when no goal is left pending.
func (r *runner) nextGoal(g *goal.Goal) *goal.Goal {
	f := r.goals.file
	for i := range f.Goals {
		if f.Goals[i].Status == goal.Pending && f.Goals[i].ID != g.ID {
			return &f.Goals[i]
		}
	}
	return nil
}

// runCriteria runs each target's check on tree and records the results;
// it returns one line per criterion for the model.
func (r *runner) runCriteria(ctx context.Context, tree string, ts []target, label string) string {
	var b strings.Builder
	r.criteriaChecks(ctx, tree, ts, label, func(i int, res check.Result) {
		t := ts[i]
		now := r.o.Now().UTC()
		ev := &goal.Evidence{Summary: res.Summary, Files: res.Files, Receipt: res.Receipt, Tree: tree, Ledger: r.goals.ledger.Len() + 1}
		sig := ""
		if res.Status != goal.CriterionPass {
			sig = goal.FailureSignature(res.Status, firstNonEmpty(res.Signature, res.Reason))
		}
		t.g.Record(t.c.ID, res.Status, sig, ev, now)
		r.recordGoal(ledger.Entry{Kind: ledger.KindEvidenceCaptured, Goal: t.g.ID, Criterion: t.c.ID, Digest: evidenceDigest(res),
			Evidence: res.Files, Text: string(res.Status) + ": " + oneLine(res.Summary, 200)})
		switch res.Status {
		case goal.CriterionFail:
			r.recordGoal(ledger.Entry{Kind: ledger.KindCriterionFailed, Goal: t.g.ID, Criterion: t.c.ID, Digest: sig, Text: oneLine(res.Reason, 300)})
		case goal.CriterionBlocked:
			r.recordGoal(ledger.Entry{Kind: ledger.KindCriterionBlocked, Goal: t.g.ID, Criterion: t.c.ID, Digest: sig, Text: oneLine(res.Reason, 300)})
		}
		r.emit(event.Criterion, event.CriterionData{Goal: t.g.ID, Criterion: t.c.ID, Surface: string(t.c.SurfaceOf()), Channel: string(t.c.Channel), Status: string(res.Status),
			Summary: res.Summary, Reason: res.Reason, Receipt: res.Receipt, Evidence: evidencePaths(res.Files), Duration: res.Duration.Round(time.Millisecond).String()})
		fmt.Fprintf(&b, "- %s [%s, %s] %s: %s\n", t.c.ID, t.c.UserModel, t.c.Channel, strings.ToUpper(string(res.Status)), oneLine(res.Summary, 600))
		if res.Status != goal.CriterionPass && res.Reason != "" {
			fmt.Fprintf(&b, "    why: %s\n", oneLine(res.Reason, 400))
		}
		if c := t.g.Criterion(t.c.ID); c != nil && c.SameFailures > 1 {
			fmt.Fprintf(&b, "    the same failure %d times in a row (limit %d)\n", c.SameFailures, goal.MaxSameFailures)
		}
	})
	return b.String()
}

// runCriterionIn runs one check on a fresh checkout of tree, contained
// like the gate's tests (the programs it starts are the model's), with
// the checkout, home and /tmp of the check in the run's sandbox
// directory slot (checks that run at the same time each have their own).
func (r *runner) runCriterionIn(ctx context.Context, tree string, t target, label, slot string) check.Result {
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	evDir := r.evidenceDir(t, label)
	rel, err := filepath.Rel(r.row.Repo, evDir)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = evDir
	}
	_ = removeAll(evDir) // a killed attempt's files
	blocked := func(why string) check.Result {
		return check.Result{Status: goal.CriterionBlocked, Summary: "not run: " + why, Reason: why, Signature: why}
	}
	if r.o.Ultra == "" && r.o.Checker == nil {
		return blocked("ultra's own program is unknown, so it cannot supervise the check")
	}
	dest := filepath.Join(runDir, "sandbox", slot, "tree")
	_ = removeAll(dest)
	// The code, without ultra's records of the run: a check judges what
	// the run made, never what ultra wrote about it.
	code := r.codeOf(ctx, tree)
	if code == "" {
		return blocked("ultra could not make the tree without its records to check")
	}
	tree = code
	if err := workspace.ExportTree(ctx, r.row.Workdir, tree, dest); err != nil {
		return blocked("checking out the tree: " + err.Error())
	}
	// Nothing the check's programs leave (in its checkout, home or /tmp)
	// stays in ultra's state after it.
	defer removeAll(filepath.Dir(dest))
	for _, d := range r.st.DepDirs {
		p := filepath.Join(dest, filepath.FromSlash(d))
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.Symlink(filepath.Join(r.row.Workdir, filepath.FromSlash(d)), p)
		}
	}
	run := check.Runner{Dir: dest, Program: []string{r.o.Ultra, check.SupervisorArg}, EvidenceDir: evDir, EvidenceRel: filepath.ToSlash(rel),
		Sandbox: func(ch goal.Channel) (*proc.Sandbox, error) { return r.checkSandbox(ctx, dest, ch) }}
	if r.o.Checker != nil {
		return r.o.Checker(ctx, run, *t.c)
	}
	return run.Run(ctx, *t.c)
}

// evidenceDir is where the check of t keeps its evidence of the run
// named label.
func (r *runner) evidenceDir(t target, label string) string {
	return filepath.Join(r.o.StateRoot, "evidence", r.row.ID, t.g.ID, t.c.ID, label)
}

// checkSandbox contains a check's programs as the gate contains the
// tests: the checkout writable, a fresh home and /tmp, ultra's state and
// the person's secrets hidden, no network beyond the sandbox's own
// loopback. tmux, browser and desktop checks may create Unix sockets
// (tmux, chromium and the X server need them).
func (r *runner) checkSandbox(ctx context.Context, dest string, ch goal.Channel) (*proc.Sandbox, error) {
	st := r.o.sandboxStatus()
	if !st.Available {
		// Uncontained, git must still not find the person's repository
		// above the checkout (the state directory lies inside it), as in
		// the gate's uncontained test runs.
		return &proc.Sandbox{Env: func(env []string) []string {
			return append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(dest))
		}}, nil
	}
	slot := filepath.Dir(dest)
	l := sandbox.Layout{
		Work: dest, WorkAt: r.o.checkoutAt(), Hide: append(append(r.o.hidden(), personsCheckout(ctx, r.row.Workdir)...), gateHiddenGit(ctx, r.row.Workdir)...),
		Home: filepath.Join(slot, "home"), Tmp: filepath.Join(slot, "tmp"),
		NoUnixSockets: ch != goal.ChannelTmux && ch != goal.ChannelBrowser && ch != goal.ChannelDesktop,
	}
	for _, p := range depPaths(r.row.Workdir, r.st.DepDirs) {
		l.Deps = append(l.Deps, sandbox.Bind{Src: p, Path: p})
	}
	// ultra's own program supervises the check inside (wherever it lies,
	// /tmp included).
	l.Deps = append(l.Deps, sandbox.Bind{Src: r.o.Ultra, Path: r.o.Ultra})
	for _, d := range []string{l.Home, l.Tmp} {
		if err := removeAll(d); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	sb := contained(st, l)
	env := sb.Env
	sb.Env = func(base []string) []string { return r.o.goCacheEnv(noVCSStamp(pinGoEnv(env(base))), goCacheStore) }
	return sb, nil
}

// evidencePaths are the repository paths of a check's artifacts.
func evidencePaths(files []goal.EvidenceFile) []string {
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	return paths
}

// evidenceDigest is one digest of a check's artifacts.
func evidenceDigest(res check.Result) string {
	var parts []string
	for _, f := range res.Files {
		parts = append(parts, f.Name+":"+f.SHA256)
	}
	if len(parts) == 0 {
		parts = append(parts, res.Summary)
	}
	return goal.Digest([]byte(strings.Join(parts, "\n")))
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return event.Truncate(s, n)
}

// commitGoal commits the tree the gate and the criteria let through, with
// ultra's records of it (goals.json, the ledger), on the run's branch.
// Nothing but those records may differ from the tree the gate judged.
// merged are the commits the commit merges (a worker's goal commit,
// landing on a parallel run's branch).
func (r *runner) commitGoal(ctx context.Context, d gate.Decision, subject, body string, trailers []string, merged ...string) (string, error) {
	ws := r.row.Workspace
	if ws.Branch == "" {
		return "", nil
	}
	if d.Tree == "" {
		return r.commitFailed(fmt.Errorf("the gate's decision names no tree"))
	}
	tree, err := workspace.TreeHash(ctx, r.row.Workdir)
	if err != nil {
		return r.commitFailed(err)
	}
	if vs, err := workspace.CaseVariants(ctx, r.row.Workdir, tree); err != nil || len(vs) > 0 {
		if err == nil {
			err = fmt.Errorf("the tree holds %s, another spelling of .ultra or .git: ultra does not commit it", strings.Join(vs, ", "))
		}
		return r.commitFailed(err)
	}
	if err := r.foreignRecords(ctx, tree); err != nil {
		return r.commitFailed(err)
	}
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	if tree != d.Tree {
		changes, err := workspace.DiffTrees(ctx, r.row.Workdir, d.Tree, tree)
		if err != nil {
			return r.commitFailed(err)
		}
		var paths []string
		for _, c := range changes {
			if !slices.Contains(r.st.Goals.records().Paths(), c.Path) {
				return r.commitFailed(fmt.Errorf("the worktree changed beyond ultra's records since the gate judged it (%s)", c.Path))
			}
			paths = append(paths, c.Path)
		}
		prev, err := gatefile.Read(runDir)
		if err != nil {
			return r.commitFailed(err)
		}
		if _, err := gatefile.Write(runDir, gate.WithArtifacts(d, gatefile.Next(prev), tree, r.o.Now().UTC(), paths)); err != nil {
			return r.commitFailed(err)
		}
	}
	var m strings.Builder
	fmt.Fprintf(&m, "ultra: %s\n\n", subject)
	if body != "" {
		m.WriteString(strings.TrimSpace(body) + "\n")
	}
	fmt.Fprintf(&m, "Gate decision %d: %s (%d passed, %d failed, %d skipped).\n", d.N, d.Status, d.Counts.Passed, d.Counts.Failed+d.Counts.Errors, d.Counts.Skipped)
	if d.Waiver != nil {
		fmt.Fprintf(&m, "Waived by %s: %s\n", d.Waiver.By, d.Waiver.Reason)
	}
	m.WriteString("\n")
	fmt.Fprintf(&m, "Ultra-Run: %s\n", r.row.ID)
	for _, t := range trailers {
		m.WriteString(t + "\n")
	}
	fmt.Fprintf(&m, "Ultra-Gate: %d %s\n", d.N, d.Status)
	commit, err := workspace.CommitTree(ctx, r.row.Workdir, ws.Branch, tree, m.String(), r.o.Git.Identity, r.o.Git.protected(), merged...)
	if err != nil {
		return r.commitFailed(err)
	}
	if commit == "" {
		return "", nil
	}
	r.st.Checkpoint = commit
	r.emit(event.Commit, event.CommitData{Commit: commit, Branch: ws.Branch, Tree: tree, Gate: d.N, Status: string(d.Status)})
	return commit, nil
}

func (r *runner) commitFailed(err error) (string, error) {
	r.emit(event.Warning, event.WarningData{Message: "ultra could not commit the goal: " + err.Error()})
	return "", err
}
