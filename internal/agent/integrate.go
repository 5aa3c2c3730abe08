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
	"slices"
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

// integrate lands the goal commits of qs on the run's branch, or says for
// each why not. Commits handed in at the same time land together, as one
// merge whose tree is verified once; when that tree conflicts or fails,
// each lands alone, in turn, so that only the one that breaks goes back.
func (r *runner) integrate(ctx context.Context, qs []*mergeRequest) []mergeVerdict {
	out := make([]mergeVerdict, len(qs))
	var batch []int
	tip := workspace.BranchTip(ctx, r.row.Workdir, r.row.Workspace.Branch)
	for i, q := range qs {
		if v, ok := r.admit(ctx, q, tip); !ok {
			out[i] = v
			continue
		}
		batch = append(batch, i)
	}
	if len(batch) == 0 {
		return out
	}
	var land []*mergeRequest
	for _, i := range batch {
		land = append(land, qs[i])
	}
	if len(land) > 1 {
		if v, ok := r.landTogether(ctx, land, false); ok {
			for _, i := range batch {
				out[i] = v
			}
			return out
		}
	}
	for _, i := range batch {
		// Each alone, on the branch as the ones before it left it.
		out[i], _ = r.landTogether(ctx, []*mergeRequest{qs[i]}, true)
	}
	return out
}

// admit checks what a goal commit needs before any merge: its goal is in
// progress with its worker, and what it changes lies inside the claims
// the worker holds.
func (r *runner) admit(ctx context.Context, q *mergeRequest, tip string) (mergeVerdict, bool) {
	g := r.goals.file.Goal(q.goal)
	if g == nil || g.Status != goal.InProgress || r.st.Goals.Parallel.ByGoal[q.goal] != q.worker {
		return mergeVerdict{tip: tip, reason: fmt.Sprintf("goal %s is not in progress with worker %s in run %s", q.goal, q.worker, r.row.ID)}, false
	}
	diff, err := workspace.DiffLines(ctx, r.row.Workdir, q.from, q.commit, ".ultra")
	var diffs []claim.FileDiff
	if err == nil {
		diffs, err = claim.ParseDiff(diff)
	}
	if err != nil {
		return r.sendBack(q, tip, "ultra could not read what the commit changes, so it cannot tell it stays inside the worker's claims: "+err.Error(), ""), false
	}
	held, err := r.o.Store.WorkerClaims(ctx, q.worker)
	if err != nil {
		return r.sendBack(q, tip, "ultra could not read the worker's claims: "+err.Error(), ""), false
	}
	if out := claim.Outside(diffs, held); len(out) > 0 {
		return r.sendBack(q, tip, "the commit changes what the worker's claims do not hold: "+strings.Join(out, "; ")+
			". Claim what you change (claim tool), or undo those changes, then verify again.", ""), false
	}
	return mergeVerdict{}, true
}

// sendBack records that q's goal commit did not land, with what failed
// (evidence, kept as a file of the run's evidence), and is what its
// worker reads.
func (r *runner) sendBack(q *mergeRequest, tip, why, evidence string) mergeVerdict {
	e := ledger.Entry{Kind: ledger.KindMergeRejected, Goal: q.goal, Text: oneLine(why, 600),
		Data: jsonData(map[string]any{"worker": q.worker, "commit": q.commit, "tip": tip})}
	if evidence != "" {
		if f, err := r.writeMergeEvidence(q.goal, fmt.Sprintf("merge-%d", r.goals.ledger.Len()+1), evidence); err == nil {
			e.Evidence, e.Digest = []goal.EvidenceFile{f}, f.SHA256
		}
	}
	r.recordGoal(e)
	r.emit(event.Worker, event.WorkerData{Worker: q.worker, Goal: q.goal, Event: "sent_back", Commit: q.commit, Reason: why})
	return mergeVerdict{tip: tip, reason: why, evidence: evidence}
}

// settleWorktree puts the run's worktree back at its branch's tip when a
// landing was cut short (the process ended with a merged tree checked
// out): what its index holds beyond the tip goes; ultra's records, which
// no merge touches, stay as they are on disk.
func (r *runner) settleWorktree(ctx context.Context) {
	dir := r.row.Workdir
	idx, err := workspace.IndexTree(ctx, dir)
	tip := treeOrEmpty(dir, workspace.BranchTip(ctx, dir, r.row.Workspace.Branch))
	if err != nil || tip == "" || idx == tip {
		return
	}
	if err := workspace.SwitchTree(ctx, dir, idx, tip); err != nil {
		r.emit(event.Warning, event.WarningData{Message: "could not put the run's worktree back at its branch: " + err.Error()})
	}
}

// landTogether merges the commits of qs into the run's branch, in order,
// verifies the merged tree (the gate, then every criterion of every goal
// landed and of theirs) and lands them as one merge commit. Alone (a
// single commit), what fails sends it back; with others, nothing is
// recorded against any of them and ok is false: the caller lands each
// alone.
func (r *runner) landTogether(ctx context.Context, qs []*mergeRequest, alone bool) (mergeVerdict, bool) {
	dir := r.row.Workdir
	tip := workspace.BranchTip(ctx, dir, r.row.Workspace.Branch)
	fail := func(why, evidence string) (mergeVerdict, bool) {
		if !alone {
			return mergeVerdict{}, false
		}
		return r.sendBack(qs[0], tip, why, evidence), false
	}
	// The merge, one commit after another, none touching a worktree.
	cur, code := tip, ""
	var records []string
	for _, q := range qs {
		records = append(records, goal.RunRecords(q.worker).Paths()...)
		if cur == q.from {
			cur = q.commit
			continue
		}
		merged, conflicts, err := workspace.MergeMarked(ctx, dir, cur, q.commit)
		switch {
		case err != nil:
			return fail("ultra could not merge the commit: "+err.Error(), "")
		case len(conflicts) > 0:
			return fail(fmt.Sprintf("the commit conflicts with what landed on the run's branch since the worker started (%s): %s. Your work is moved onto the branch with the conflicts marked: resolve them, then verify again.",
				workspace.Short(q.from), strings.Join(conflicts, ", ")), r.landedSince(ctx, q.from, tip, conflicts))
		}
		if cur, err = workspace.CommitOf(ctx, dir, merged, "ultra: merged", r.o.Git.Identity, cur, q.commit); err != nil {
			return fail("ultra could not merge the commit: "+err.Error(), "")
		}
	}
	code, err := workspace.TreeOf(ctx, dir, cur)
	if err == nil {
		code, err = workspace.WithoutPaths(ctx, dir, code, records)
	}
	if err != nil {
		return fail("ultra could not merge the commit: "+err.Error(), "")
	}
	// The merged tree, in the run's worktree (its records stay as they
	// are on disk: the merge does not touch them).
	if err := workspace.CheckoutTree(ctx, dir, code); err != nil {
		return fail("ultra could not put the merged tree in the run's worktree: "+err.Error(), "")
	}
	undo := func() {
		if err := workspace.SwitchTree(context.Background(), dir, code, treeOrEmpty(dir, tip)); err != nil {
			r.emit(event.Warning, event.WarningData{Message: "could not put the run's worktree back at its branch: " + err.Error()})
		}
	}
	tree, err := workspace.TreeHash(ctx, dir)
	if err != nil {
		undo()
		return fail("ultra could not read the merged tree: "+err.Error(), "")
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
		return mergeVerdict{tip: tip, reason: "the run was interrupted while it verified the merged tree"}, false
	}
	if !d.Status.Advances() || (d.NeedsWaiver && d.Waiver == nil) {
		undo()
		return fail(fmt.Sprintf("the merged tree does not pass the gate (%s): the commit, merged with what landed since the worker started, breaks the tests.", d.Outcome()),
			gateSummary(d, res, path))
	}
	var gs []*goal.Goal
	for _, q := range qs {
		gs = append(gs, r.goals.file.Goal(q.goal))
	}
	text := r.runCriteria(ctx, d.Tree, landedTargets(r.goals.file, gs), fmt.Sprintf("merge-%d", r.goals.ledger.Len()+1))
	var failing []string
	for gi := range r.goals.file.Goals {
		x := &r.goals.file.Goals[gi]
		if x.Status != goal.Complete && !slices.Contains(gs, x) {
			continue
		}
		if v := x.Judge(true); !v.Complete {
			failing = append(failing, x.ID+": "+strings.Join(v.Missing, "; "))
		}
	}
	if ctx.Err() != nil {
		undo()
		return mergeVerdict{tip: tip, reason: "the run was interrupted while it ran the criteria on the merged tree"}, false
	}
	if len(failing) > 0 {
		undo()
		return fail("on the merged tree, criteria fail: "+strings.Join(failing, "; "), text)
	}
	commit, err := r.landGoals(ctx, gs, qs, d)
	if err != nil {
		undo()
		return fail("ultra could not commit the merge: "+err.Error(), "")
	}
	for _, q := range qs {
		if n, err := r.o.Store.ReleaseClaims(ctx, q.worker, "goal "+q.goal+" landed as "+commit, r.o.Now()); err != nil {
			r.emit(event.Warning, event.WarningData{Message: "the worker's claims were not released: " + err.Error()})
		} else if n > 0 {
			r.emit(event.Worker, event.WorkerData{Worker: q.worker, Goal: q.goal, Event: "released", Reason: fmt.Sprintf("%d claims released", n)})
		}
		r.emit(event.Worker, event.WorkerData{Worker: q.worker, Goal: q.goal, Event: "landed", Commit: commit})
	}
	return mergeVerdict{merged: commit, tip: commit}, true
}

// landGoals records the goals of qs complete and commits the tree d
// judged, with ultra's records, as one merge of their workers' commits
// (its first parent the branch's tip). No goal is complete without the
// commit: when it fails, they go back in progress (checkpoint_failed).
func (r *runner) landGoals(ctx context.Context, gs []*goal.Goal, qs []*mergeRequest, d gate.Decision) (string, error) {
	now := r.o.Now().UTC()
	var trailers, titles, commits []string
	seq := 0
	for i, g := range gs {
		q := qs[i]
		g.Status, g.CompletedAt, g.UpdatedAt = goal.Complete, &now, now
		reason := fmt.Sprintf("merged from worker %s (%s): the tests and every essential criterion of %d landed goals pass on the merged tree", q.worker, workspace.Short(q.commit), countLanded(r.goals.file))
		e := r.recordGoal(ledger.Entry{Kind: ledger.KindGoalCompleted, Goal: g.ID, Text: reason,
			Data: jsonData(map[string]any{"tree": d.Tree, "gate": d.N, "worker": q.worker, "worker_commit": q.commit})})
		seq = e.Seq
		trailers = append(trailers, "Ultra-Goal: "+g.ID, "Ultra-Worker: "+q.worker)
		titles = append(titles, g.ID+" "+g.Title)
		commits = append(commits, q.commit)
	}
	body := gs[0].Objective
	if len(gs) > 1 {
		body = "The goals landed together: their merged tree passed the tests and every essential criterion of every goal landed."
	}
	commit, err := r.commitGoal(ctx, d, strings.Join(titles, "; "), body, append(trailers, fmt.Sprintf("Ultra-Ledger: %d", seq)), commits...)
	if err == nil && commit == "" {
		err = fmt.Errorf("git made no commit")
	}
	if err == nil && r.goalsBroken != nil {
		err = fmt.Errorf("its records could not be written: %w", r.goalsBroken)
	}
	for _, g := range gs {
		if err != nil {
			g.Status, g.CompletedAt, g.UpdatedAt = goal.InProgress, nil, r.o.Now().UTC()
			r.recordGoal(ledger.Entry{Kind: ledger.KindCheckpointFailed, Goal: g.ID, Text: oneLine(err.Error(), 300)})
			continue
		}
		g.Commit = commit
		r.recordGoal(ledger.Entry{Kind: ledger.KindCheckpoint, Goal: g.ID, Text: "merged as " + workspace.Short(commit) + " on " + r.row.Workspace.Branch,
			Data: jsonData(map[string]any{"commit": commit})})
	}
	return commit, err
}

// treeOrEmpty is commit's tree ("" when git cannot say, which git then
// refuses).
func treeOrEmpty(dir, commit string) string {
	t, _ := workspace.TreeOf(context.Background(), dir, commit)
	return t
}

// landedTargets are the criteria a merge runs: every live one of every
// goal landed so far and of gs.
func landedTargets(f *goal.File, gs []*goal.Goal) []target {
	var ts []target
	for gi := range f.Goals {
		if x := &f.Goals[gi]; x.Status == goal.Complete || slices.Contains(gs, x) {
			ts = append(ts, cycleTargets(x)...)
		}
	}
	return ts
}

func countLanded(f *goal.File) int {
	n := 0
	for _, x := range f.Goals {
		if x.Status == goal.Complete {
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
