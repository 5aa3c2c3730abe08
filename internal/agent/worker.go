package agent

// A worker of a parallel run is a run of its own: a row in the store, a
// worktree and a branch cut from the run's branch, its own conversation,
// gate decisions, records and ledger. Its one goal is the run's goal,
// copied with its criteria (and their results on the run's base tree)
// when the run gives it. It works as every run works a goal (the same
// tools, guards, sandbox, gate and criteria), with two differences: it
// claims what it changes (claimtool.go), and its goal completes only
// when the run has landed its commit on the run's branch (landWork).

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// workerState is what a worker keeps beside its goal.
type workerState struct {
	Run  string `json:"run"`  // the parallel run it works for
	Goal string `json:"goal"` // the run's goal it works
}

//go:embed prompts/worker.md
var workerPrompt string

// errWorkerGone: a worker cannot be resumed (its worktree or run is
// gone); its goal gets a new worker.
var errWorkerGone = errors.New("the worker cannot be resumed")

func workerGone(err error) bool { return errors.Is(err, errWorkerGone) }

// worker is the worker state of a worker's run, nil for any other run.
func (r *runner) worker() *workerState {
	if r.st.Goals == nil {
		return nil
	}
	return r.st.Goals.Worker
}

// workerOptions are the run's options for its workers: the same model,
// store, sandbox and rules; only the machine-readable surfaces (JSONL),
// which name each event's run, hear the workers' events, the others the
// run's worker events; the run's coordinator and budget pool.
func (c *coordinator) workerOptions() Options {
	o := c.run.o
	o.Sinks = nil
	for _, s := range c.run.o.Sinks {
		if _, ok := s.(*event.JSONL); ok {
			o.Sinks = append(o.Sinks, s)
		}
	}
	o.coord, o.pool, o.OneUnit = c, c.pool, false
	return o
}

// startWorker makes a worker for goal g and starts it: its worktree and
// branch off the run's branch as it stands, its run in the store, its
// records with the goal accepted and started.
func (c *coordinator) startWorker(ctx context.Context, g *goal.Goal) error {
	p := c.run
	o := c.workerOptions()
	ps := p.st.Goals.Parallel
	now := o.Now()
	id := NewRunID(now)
	marker := StartingMarker(o.StateRoot, id)
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		return err
	}
	defer os.Remove(marker)
	if err := os.WriteFile(marker, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	spec := Spec{Repo: p.row.Repo, Workdir: p.row.Repo, Worktree: &WorktreeSpec{Dir: ps.Dir, Base: p.row.Workspace.Branch, Setup: ps.Setup, SetupTimeout: ps.SetupTimeout}}
	wt, err := makeWorktree(ctx, o, spec, id)
	if err != nil {
		return err
	}
	deps, _ := workspace.IgnoredDirs(ctx, wt.Path, depDirs...)
	st := runState{Phase: phase.NewIn(phase.Build, p.st.Phase.Budgets), VerifyCommands: p.st.VerifyCommands, AllowTestChanges: p.st.AllowTestChanges,
		DepDirs: deps, DeclaredCode: p.st.DeclaredCode, DeclaredSupport: p.st.DeclaredSupport, Instructions: p.st.Instructions,
		Models: p.st.Models, SkillIndex: p.st.SkillIndex, SkillTools: p.st.SkillTools, SkillScopes: p.st.SkillScopes,
		Goals: &goalState{NoCleanup: true, Refactor: p.st.Goals.Refactor, Records: goal.RunRecords(id).Dir, Worker: &workerState{Run: p.row.ID, Goal: g.ID}}}
	by := phase.ByModel
	acc := p.goals.file.Accepted
	if acc != nil && acc.By == string(phase.ByPerson) {
		by = phase.ByPerson
	}
	next, tr, err := st.Phase.Transition(phase.Building, by, "the plan was accepted in run "+p.row.ID, firstNonEmpty(p.st.Phase.Plan, g.Title))
	if err != nil {
		return err
	}
	st.Phase = next
	if err := prepareRecords(wt.Path, st.Goals.records(), ""); err != nil {
		return err
	}
	state, _ := json.Marshal(st)
	ws := store.Workspace{Branch: wt.Branch, Base: wt.Base, BaseCommit: wt.BaseCommit, StartCommit: wt.StartCommit, Worktree: wt.Path}
	row := &store.Run{ID: id, Task: g.ID + " " + g.Title, Repo: p.row.Repo, Workdir: wt.Path, Phase: string(st.Phase.Phase), Status: StatusRunning,
		Axes: p.row.Axes, Provider: o.ProviderName, Model: o.Model, BaseURL: o.BaseURL, State: state, PID: os.Getpid(),
		CreatedAt: now, UpdatedAt: now, Workspace: ws, TaskRow: store.Task{Status: "running", Parent: p.row.ID, Goal: g.ID}}
	if err := o.Store.CreateRun(ctx, row); err != nil {
		return err
	}
	p.recordDispatch(g, id, wt.Branch, wt.StartCommit)
	r, err := newRunner(ctx, o, row, st, nil)
	if err != nil {
		return err
	}
	r.pendingTrans = append(r.pendingTrans, store.Transition{Kind: "phase", From: string(tr.From), To: string(tr.To), By: string(tr.By), Reason: tr.Reason, At: now})
	r.emit(event.RunStarted, event.RunStartedData{Task: row.Task, Repo: row.Repo, Workdir: row.Workdir, Axes: row.Axes,
		Branch: ws.Branch, Base: ws.Base, Start: ws.StartCommit, Provider: o.ProviderName, Model: o.Model, Budgets: st.Phase.Budgets,
		Contained: o.sandboxStatus().Available, Sandbox: o.sandboxStatus().Summary()})
	r.takeGoal(g, acc)
	r.appendMessage(llm.Message{Role: llm.RoleUser, Content: p.workerTask(g)})
	c.pool.join(id, r.st.Phase.Used)
	p.emit(event.Worker, event.WorkerData{Worker: id, Goal: g.ID, Event: "started", Branch: wt.Branch})
	c.setActive(g.ID, id)
	go func() {
		defer r.closeSandbox()
		defer func() { r.sessionEnd(r.endReason()) }()
		r.sessionStart(ctx, "startup")
		r.startBaseline(ctx)
		out, err := r.loop(ctx)
		c.ended <- workerEnd{goal: g.ID, worker: id, out: out, err: err}
	}()
	return nil
}

// takeGoal writes the worker's records: goal g of the run, accepted as
// the run's plan was (acc), and started.
func (r *runner) takeGoal(g *goal.Goal, acc *goal.Acceptance) {
	mine := *g
	mine.SuccessCriteria = slices.Clone(g.SuccessCriteria)
	mine.Status, mine.Attempt, mine.StartedAt, mine.CompletedAt, mine.Commit, mine.Reason = goal.Pending, 0, nil, nil, "", ""
	mine.DependsOn = nil // landed before the worker started
	now := r.o.Now().UTC()
	f := &goal.File{Version: goal.SchemaVersion, Run: r.row.ID, Goals: []goal.Goal{mine}}
	by := "autonomous run control"
	if acc != nil {
		by = acc.By
	}
	f.Accepted = &goal.Acceptance{By: by, At: now, Digest: goal.PlanDigest(f.Goals), Ledger: 1}
	r.goals.file = f
	r.recordGoal(ledger.Entry{Kind: ledger.KindPlanAccepted, Digest: f.Accepted.Digest,
		Text: fmt.Sprintf("goal %s of run %s, whose plan was accepted by %s", g.ID, r.worker().Run, by)})
	r.startGoal()
}

// workerTask is the first message of goal g's worker.
func (r *runner) workerTask(g *goal.Goal) string {
	brief := r.briefText()
	return strings.NewReplacer("{{run}}", r.row.ID, "{{workers}}", strconv.Itoa(r.st.Goals.Parallel.Workers), "{{goal}}", g.ID,
		"{{title}}", g.Title, "{{objective}}", g.Objective, "{{criteria}}", criteriaList(g), "{{brief}}", strings.TrimSpace(brief)).Replace(strings.TrimSpace(workerPrompt))
}

// resumeWorker resumes goal g's worker id in this process (the run was
// stopped, or its process ended). A worker that cannot be resumed
// (errWorkerGone) leaves its goal to a new one.
func (c *coordinator) resumeWorker(ctx context.Context, g *goal.Goal, id string) error {
	p := c.run
	row, err := p.o.Store.GetRun(ctx, id)
	if err != nil {
		return fmt.Errorf("%w: %v", errWorkerGone, err)
	}
	if row.Status == StatusComplete || row.Status == StatusCancelled || worktreeGone(ctx, row) != "" {
		return fmt.Errorf("%w: it is %s", errWorkerGone, row.Status)
	}
	st, err := decodeState(row)
	if err != nil || st.Goals == nil || st.Goals.Worker == nil || st.Goals.Worker.Run != p.row.ID {
		return fmt.Errorf("%w: its state is not a worker's of this run", errWorkerGone)
	}
	c.pool.join(id, st.Phase.Used)
	c.setActive(g.ID, id)
	p.emit(event.Worker, event.WorkerData{Worker: id, Goal: g.ID, Event: "resumed", Branch: row.Workspace.Branch})
	o := c.workerOptions()
	go func() {
		out, err := Resume(ctx, o, id, ResumeOptions{})
		c.ended <- workerEnd{goal: g.ID, worker: id, out: out, err: err}
	}()
	return nil
}

// landWork hands the tree the gate and the criteria let through (d) to
// the run: ultra commits it on the worker's branch, and the run lands
// the commit on its own branch (integrate). Landed, the goal is
// complete; sent back, the worker's work moves onto the run's branch
// (refork) and the goal goes on, with the reason as what failed. An
// error says nothing was decided (the run stopped, or ultra failed).
func (r *runner) landWork(ctx context.Context, g *goal.Goal, d gate.Decision) (landed bool, text string, err error) {
	w := r.worker()
	commit, err := r.commitGoal(ctx, d, g.ID+" "+g.Title, g.Objective, []string{"Ultra-Goal: " + g.ID, "Ultra-Worker-Of: " + w.Run})
	if err != nil {
		return false, "", fmt.Errorf("ultra could not commit the goal's tree: %w", err)
	}
	if commit == "" {
		commit = workspace.BranchTip(ctx, r.row.Workdir, r.row.Workspace.Branch)
	}
	if r.o.coord == nil {
		return false, "", fmt.Errorf("no process of run %s takes this worker's goal (resume the run, not its worker)", w.Run)
	}
	r.ctl.setActivity("waiting for run " + w.Run + " to land the goal")
	v, err := r.o.coord.land(ctx, &mergeRequest{worker: r.row.ID, goal: g.ID, commit: commit, from: r.row.Workspace.From()})
	r.ctl.setActivity("")
	if err != nil {
		return false, "", err
	}
	if v.merged != "" {
		r.claimText = "" // released as the goal landed
		now := r.o.Now().UTC()
		g.Status, g.CompletedAt, g.UpdatedAt, g.Commit = goal.Complete, &now, now, commit
		r.recordGoal(ledger.Entry{Kind: ledger.KindGoalCompleted, Goal: g.ID, Text: fmt.Sprintf("landed on %s as %s: the merged tree passed the tests and the criteria", r.row.Workspace.Base, workspace.Short(v.merged)),
			Data: jsonData(map[string]any{"tree": d.Tree, "gate": d.N, "commit": commit, "merge": v.merged})})
		r.recordGoal(ledger.Entry{Kind: ledger.KindCheckpoint, Goal: g.ID, Text: "committed " + workspace.Short(commit) + " on " + r.row.Workspace.Branch + ", merged as " + workspace.Short(v.merged),
			Data: jsonData(map[string]any{"commit": commit, "merge": v.merged})})
		return true, fmt.Sprintf("ultra committed the goal as %s and the run landed it on %s as %s.\n", workspace.Short(commit), r.row.Workspace.Base, workspace.Short(v.merged)), nil
	}
	moved, err := r.refork(ctx, v.tip)
	if err != nil {
		return false, "", fmt.Errorf("ultra could not move the work onto the run's branch: %w", err)
	}
	text = "The run did not land the goal: " + v.reason + "\n"
	if moved != "" {
		text += moved + "\n"
	}
	if v.evidence != "" {
		text += v.evidence + "\n"
	}
	return false, text, nil
}

// refork moves the worker's work (its tree as it is, committed or not)
// onto the run's branch at tip: its branch goes to tip, its files are the
// merge of its work with tip, conflicts marked. The goal's start is tip's
// code, so the work carried over counts as the goal's change. It returns
// what the model reads.
func (r *runner) refork(ctx context.Context, tip string) (string, error) {
	ws := r.row.Workspace
	if tip == "" || tip == ws.From() {
		return "", nil
	}
	dir := r.row.Workdir
	cur, err := workspace.TreeHash(ctx, dir)
	if err != nil {
		return "", err
	}
	head := workspace.BranchTip(ctx, dir, ws.Branch)
	work, err := workspace.CommitOf(ctx, dir, cur, "ultra: the worker's work as it stood", r.o.Git.Identity, head)
	if err != nil {
		return "", err
	}
	merged, conflicts, err := workspace.MergeMarked(ctx, dir, tip, work)
	if err != nil {
		return "", err
	}
	if err := workspace.MoveWorktree(ctx, dir, ws.Branch, head, tip, merged); err != nil {
		return "", err
	}
	ws.BaseCommit, ws.StartCommit = tip, tip
	if err := r.o.Store.SetWorkspace(ctx, r.row.ID, ws); err != nil {
		return "", err
	}
	r.row.Workspace = ws
	if g := r.goals.file.Current(); g != nil {
		if t, err := workspace.TreeOf(ctx, dir, tip); err == nil {
			if code := r.codeOf(ctx, t); code != "" {
				r.st.Goals.StartCode[g.ID] = code
			}
		}
	}
	text := fmt.Sprintf("ultra moved your work onto the run's branch at %s: your files are your work merged with what landed there since you started; read a file again before you edit it.", workspace.Short(tip))
	if len(conflicts) > 0 {
		text += fmt.Sprintf(" These files conflict and hold git's conflict markers (<<<<<<< the run's branch, >>>>>>> your work): %s. Resolve them.", strings.Join(conflicts, ", "))
	}
	return text, nil
}

// land hands a worker's goal commit to the run and waits for its verdict.
func (c *coordinator) land(ctx context.Context, q *mergeRequest) (mergeVerdict, error) {
	q.reply = make(chan mergeVerdict, 1)
	select {
	case c.merges <- q:
	case <-ctx.Done():
		return mergeVerdict{}, ctx.Err()
	}
	select {
	case v := <-q.reply:
		return v, nil
	case <-ctx.Done():
		return mergeVerdict{}, ctx.Err()
	}
}
