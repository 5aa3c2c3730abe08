package agent

// Landing a worker's goal on a parallel run's branch. The run's own
// worktree holds its branch; a worker's commit lands there only when, in
// this order:
//
//  1. what it changes (from the run's commit the worker started from)
//     lies inside the claims its worker holds now (claim.Outside): the
//     rule behind the claim tool, whatever the worker ran to change it;
//  2. it merges with the branch as it stands, without a conflict;
//  3. the merged tree passes the gate, judged as every tree of the run
//     (against the run's baseline, the run's own original tests);
//  4. every essential criterion of every goal landed so far, and of this
//     goal, passes on the merged tree.
//
// Then ultra commits the merge (its parents: the branch's tip and the
// worker's commit; its tree: the merged code with the run's records) as
// the goal's commit, and releases the worker's claims. Anything else
// sends the goal back to its worker with what failed as the evidence,
// and the branch does not move.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/claim"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// workerCommit is a worker's goal commit that a goal's commit merges.
type workerCommit struct{ worker, commit string }

// maxConflictText bounds the changes shown for a conflict.
const maxConflictText = 6 << 10

// integrate lands q's goal commit on the run's branch, or says why not.
func (r *runner) integrate(ctx context.Context, q *mergeRequest) mergeVerdict {
	dir := r.row.Workdir
	tip := workspace.BranchTip(ctx, dir, r.row.Workspace.Branch)
	g := r.goals.file.Goal(q.goal)
	if g == nil || g.Status != goal.InProgress || r.st.Goals.Parallel.ByGoal[q.goal] != q.worker {
		return mergeVerdict{tip: tip, reason: fmt.Sprintf("goal %s is not in progress with worker %s in run %s", q.goal, q.worker, r.row.ID)}
	}
	// Each merge the run tries has evidence of its own.
	label := fmt.Sprintf("merge-%d", r.mergeAttempts()+1)
	back := func(why, evidence string) mergeVerdict {
		e := ledger.Entry{Kind: ledger.KindMergeRejected, Goal: g.ID, Text: oneLine(why, 600),
			Data: jsonData(map[string]any{"worker": q.worker, "commit": q.commit, "tip": tip})}
		if evidence != "" {
			if f, err := r.writeMergeEvidence(g.ID, label, evidence); err == nil {
				e.Evidence, e.Digest = []goal.EvidenceFile{f}, f.SHA256
			}
		}
		r.recordGoal(e)
		r.emit(event.Worker, event.WorkerData{Worker: q.worker, Goal: g.ID, Event: "sent_back", Commit: q.commit, Reason: why})
		return mergeVerdict{tip: tip, reason: why, evidence: evidence}
	}
	// 1. Inside the worker's claims.
	diff, err := workspace.DiffLines(ctx, dir, q.from, q.commit, ".ultra")
	var diffs []claim.FileDiff
	if err == nil {
		diffs, err = claim.ParseDiff(diff)
	}
	if err != nil {
		return back("ultra could not read what the commit changes, so it cannot tell it stays inside the worker's claims: "+err.Error(), "")
	}
	held, err := r.o.Store.WorkerClaims(ctx, q.worker)
	if err != nil {
		return back("ultra could not read the worker's claims: "+err.Error(), "")
	}
	if out := claim.Outside(diffs, held); len(out) > 0 {
		return back("the commit changes what the worker's claims do not hold: "+strings.Join(out, "; ")+
			". Claim what you change (claim tool), or undo those changes, then verify again.", "")
	}
	// 2. The merge.
	code, err := workspace.TreeOf(ctx, dir, q.commit)
	if err == nil && tip != q.from {
		var conflicts []string
		if code, conflicts, err = workspace.MergeMarked(ctx, dir, tip, q.commit); err == nil && len(conflicts) > 0 {
			return back(fmt.Sprintf("the commit conflicts with what landed on the run's branch since the worker started (%s): %s. Your work is moved onto the branch with the conflicts marked: resolve them, then verify again.",
				workspace.Short(q.from), strings.Join(conflicts, ", ")), r.landedSince(ctx, q.from, tip, conflicts))
		}
	}
	if err == nil {
		code, err = workspace.WithoutPaths(ctx, dir, code, goal.RunRecords(q.worker).Paths())
	}
	if err != nil {
		return back("ultra could not merge the commit: "+err.Error(), "")
	}
	// 3. and 4. The merged tree, in the run's worktree (its records stay
	// as they are on disk: the merge does not touch them).
	if err := workspace.CheckoutTree(ctx, dir, code); err != nil {
		return back("ultra could not put the merged tree in the run's worktree: "+err.Error(), "")
	}
	undo := func() {
		if err := workspace.CheckoutTree(context.Background(), dir, treeOrEmpty(dir, tip)); err != nil {
			r.emit(event.Warning, event.WarningData{Message: "could not put the run's worktree back at its branch: " + err.Error()})
		}
	}
	tree, err := workspace.TreeHash(ctx, dir)
	if err != nil {
		undo()
		return back("ultra could not read the merged tree: "+err.Error(), "")
	}
	start := r.o.Now()
	d, res, path, err := r.gateVerify(ctx, tree, nil)
	if err != nil {
		d = gate.Decision{Status: gate.NotEvaluated, Reasons: []string{"the gate could not record its decision: " + err.Error()}}
	}
	ev := verifyEvent(d, path)
	ev.Duration = r.o.Now().Sub(start).Round(time.Millisecond).String()
	r.emit(event.VerifyResult, ev)
	if ctx.Err() != nil {
		undo()
		return mergeVerdict{tip: tip, reason: "the run was interrupted while it verified the merged tree"}
	}
	if o := d.Outcome(); !d.Status.Advances() || (d.NeedsWaiver && d.Waiver == nil) {
		undo()
		return back(fmt.Sprintf("the merged tree does not pass the gate (%s): the commit, merged with what landed since the worker started, breaks the tests.", o),
			gateSummary(d, res, path))
	}
	ts := landedTargets(r.goals.file, g)
	text := r.runCriteria(ctx, d.Tree, ts, label)
	var failing []string
	for gi := range r.goals.file.Goals {
		x := &r.goals.file.Goals[gi]
		if x != g && x.Status != goal.Complete {
			continue
		}
		if v := x.Judge(true); !v.Complete {
			failing = append(failing, x.ID+": "+strings.Join(v.Missing, "; "))
		}
	}
	if len(failing) > 0 || ctx.Err() != nil {
		undo()
		if ctx.Err() != nil {
			return mergeVerdict{tip: tip, reason: "the run was interrupted while it ran the criteria on the merged tree"}
		}
		return back("on the merged tree, criteria fail: "+strings.Join(failing, "; "), text)
	}
	reason := fmt.Sprintf("merged from worker %s (%s): the tests and every essential criterion of %d landed goals pass on the merged tree", q.worker, workspace.Short(q.commit), countLanded(r.goals.file, g))
	done, err := r.completeGoal(ctx, g, d, reason, workerCommit{worker: q.worker, commit: q.commit})
	if err != nil {
		undo()
		return back("ultra could not commit the merge: "+err.Error(), "")
	}
	if n, err := r.o.Store.ReleaseClaims(ctx, q.worker, "goal "+g.ID+" landed as "+g.Commit, r.o.Now()); err != nil {
		r.emit(event.Warning, event.WarningData{Message: "the worker's claims were not released: " + err.Error()})
	} else if n > 0 {
		r.emit(event.Worker, event.WorkerData{Worker: q.worker, Goal: g.ID, Event: "released", Reason: fmt.Sprintf("%d claims released", n)})
	}
	r.emit(event.Worker, event.WorkerData{Worker: q.worker, Goal: g.ID, Event: "landed", Commit: g.Commit, Reason: strings.TrimSpace(done)})
	return mergeVerdict{merged: g.Commit, tip: g.Commit}
}

// treeOrEmpty is commit's tree ("" when git cannot say, which CheckoutTree
// then refuses).
func treeOrEmpty(dir, commit string) string {
	t, _ := workspace.TreeOf(context.Background(), dir, commit)
	return t
}

// mergeAttempts counts the merges the run's ledger recorded, landed or
// sent back.
func (r *runner) mergeAttempts() int {
	n := 0
	for _, e := range r.goals.ledger.Entries() {
		if e.Kind == ledger.KindMergeRejected || e.Kind == ledger.KindGoalCompleted {
			n++
		}
	}
	return n
}

// landedTargets are the criteria a merge runs: every live one of every
// goal landed so far and of g.
func landedTargets(f *goal.File, g *goal.Goal) []target {
	var ts []target
	for gi := range f.Goals {
		if x := &f.Goals[gi]; x == g || x.Status == goal.Complete {
			ts = append(ts, cycleTargets(x)...)
		}
	}
	return ts
}

func countLanded(f *goal.File, g *goal.Goal) int {
	n := 0
	for _, x := range f.Goals {
		if x.Status == goal.Complete || x.ID == g.ID {
			n++
		}
	}
	return n
}

// landedSince is what the run's branch changed in paths from the
// worker's start to tip: the other side of a conflict, as the worker
// reads it.
func (r *runner) landedSince(ctx context.Context, from, tip string, paths []string) string {
	out, err := workspace.Git(ctx, r.row.Workdir, append([]string{"diff", "--no-color", "--no-ext-diff", from, tip, "--"}, paths...)...)
	if err != nil || out == "" {
		return ""
	}
	return "What landed on the run's branch in those files since the worker started:\n" + event.Truncate(out, maxConflictText)
}

// writeMergeEvidence keeps what a rejected merge found as evidence of the
// run, under its state's evidence directory, and describes it for the
// ledger (its path relative to the repository, its sha256).
func (r *runner) writeMergeEvidence(goalID, label, text string) (goal.EvidenceFile, error) {
	dir := filepath.Join(r.o.StateRoot, "evidence", r.row.ID, goalID, label)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return goal.EvidenceFile{}, err
	}
	p := filepath.Join(dir, "merge.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		return goal.EvidenceFile{}, err
	}
	rel, err := filepath.Rel(r.row.Repo, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = p
	}
	return goal.EvidenceFile{Name: "merge.txt", Path: filepath.ToSlash(rel), SHA256: goal.Digest([]byte(text)), Bytes: int64(len(text))}, nil
}
