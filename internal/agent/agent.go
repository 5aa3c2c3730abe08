// Package agent is ultra's loop: it builds each request from the run's
// history, the phase's tools and a reminder, streams the model's answer,
// guards and runs the tool calls, records events and persists every step.
// Phase changes happen only through the phase machine.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/hooks"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/mcp"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/rules"
	"github.com/ultra-dev/ultra/internal/sandbox"
	"github.com/ultra-dev/ultra/internal/skills"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Options wire a run to the world.
type Options struct {
	Provider     llm.Provider
	ProviderName string
	Model        string
	BaseURL      string // recorded with the run so that resume talks to the same server
	ProviderHint string // added to the reason when a request fails for want of a server or key
	// Models routes model modes (fast, smart, deep) to model names; a
	// mode missing from it uses Model.
	Models map[string]string
	// Pricing overrides the built-in pricing table (llm.Prices).
	Pricing map[string]llm.Price
	// ContextWindow is the model's window in tokens (0: 128k).
	ContextWindow int
	// ThinkingBudget lets the model think (tokens) in deep mode; 0: off.
	ThinkingBudget int
	Store          *store.Store
	StateRoot      string // .ultra/state of the repository
	Verifier       verify.Verifier
	VerifyCommands []string // explicit test commands (verify.command); empty: detect
	// DeclaredCode and DeclaredSupport are a person's declarations of
	// what files are to the tests (verify.code, verify.test_support).
	DeclaredCode, DeclaredSupport []string
	VerifyTimeout                 time.Duration // per command
	BashTimeout                   time.Duration
	Sinks                         []event.Sink // surfaces: JSONL, human log, …
	Now                           func() time.Time
	MaxIdle                       int // answers in a row without a tool call before escalating (default 5)
	MaxRepeats                    int // identical failing calls before escalating (default 3)
	MaxTokens                     int // max output tokens per request (0: provider default)
	// Git says what runs may do in git and how ultra commits.
	Git Git
	// ModelRetries is how often a failed model request that retrying can
	// fix is retried (negative: never; 0: llm.DefaultRetries).
	ModelRetries int
	// Sandbox is what contains the model's commands and the tests (nil:
	// sandbox.Probe()).
	Sandbox *sandbox.Status
	// Ultra is ultra's own program: in the gate's sandbox, Go test
	// binaries run through it (sandbox.ExecName) so that they cannot
	// touch the go command's work directory; it also supervises the
	// criteria's checks. "": test binaries run as go starts them.
	Ultra string
	// GateUnixSockets lets the tests the gate runs create Unix domain
	// sockets (verify.unix_sockets): off by default, since a socket file
	// the tests can see would connect them to a service outside.
	GateUnixSockets bool
	// NoGateCache: every verification runs the tests, even of a tree the
	// repository's gate cache has (verify.cache = false).
	NoGateCache bool
	// NoTestsAhead: the tests run only when the model calls verify, not
	// as soon as its calls leave the tree changed (early.go).
	NoTestsAhead bool
	// NoCleanup: a final gate that passes goes straight to the review,
	// without the cleanup pass (goals.cleanup = false).
	NoCleanup bool
	// Snapshots: the run is a fleet's (its store is shared): every saved
	// step keeps a snapshot of the worktree with it, from which another
	// machine takes the run over if this one dies.
	Snapshots bool
	// GoalFailure is what a run does when a goal fails its caps:
	// "continue" moves on to the next goal; anything else escalates
	// (goals.on_failure).
	GoalFailure string
	// Checker runs one criterion's check (nil: check.Runner, ultra's own
	// program supervising the check in the sandbox). Tests inject one.
	Checker func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result
	// NoWait: a run that needs a person (a manual approval, an assisted
	// pause) ends with that status instead of waiting for one.
	NoWait bool
	// OneUnit: the run goes on for one unit (a phase), then pauses
	// (ultra next on a run no process drives).
	OneUnit bool
	// OtherStates lists other repositories' .ultra/state directories (the
	// ones ultra knows, that exist): hidden from the run's contained
	// commands, like its own. Asked again for every command, so that a
	// repository first used while the run goes on is hidden from the next
	// command on.
	OtherStates func() []string
	// Surface, when set, is the surface a person follows a new run on
	// (tui for the runs the TUI starts), whatever the spec says.
	Surface string
	// MCP are the person's MCP servers (package mcp): their tools are
	// offered by the phase table's MCP classes.
	MCP []mcp.Server
	// Rules are the person's permission rules (settings.json files).
	Rules rules.Set
	// Hooks are the person's hooks (settings.json files).
	Hooks hooks.Config
	// Skills are the Agent Skills found for the run.
	Skills []skills.Skill
	// Hide are more paths no contained command of the run sees: the
	// skills' eval cases (their hidden answers), and what ULTRA_HIDE
	// names.
	Hide []string
	// Version is ultra's, as MCP servers are told.
	Version string
	// Health is doctor's check of what blocks verified work (nil: none):
	// a repair-mode run's verification passes only when it finds nothing.
	Health func(ctx context.Context, workdir string) []string
	// PollEvery is how often a live run looks for requests from other
	// processes (default 200ms).
	PollEvery time.Duration
	// Secrets are values the model must never read (the provider key,
	// header values): a tool result that contains one, by whatever route,
	// has it replaced before the model, the events or the store see it.
	// The environment's credentials (proc.IsSecret) are added.
	Secrets []string
	// coord and pool are a parallel run's, for its workers (worker.go):
	// what lands their goals, and the budgets they share.
	coord *coordinator
	pool  *budgetPool
}

// Spec is what a new run is asked to do.
type Spec struct {
	Task    string
	Repo    string // repository root
	Workdir string // where the run works, when it has no worktree of its own
	Cwd     string // where the person started it (for nested AGENTS.md); "" means Workdir
	Axes    axes.Axes
	Budgets phase.Budgets
	// AllowTestChanges lets the run change the project's existing tests
	// without a person's waiver at the gate (the decision records it).
	AllowTestChanges bool
	// Brief is the brief's text (ultra run --brief-file): written to
	// the run's brief.md in the run's worktree and given to the planner.
	Brief string
	// BriefFile is where the brief came from, relative to the repository
	// ("" when it lies outside, or there is none): an untracked file the
	// run does not see, but whose text it has.
	BriefFile string
	// PlanOnly stops the run at the acceptance point of its goals, whatever
	// its run control (ultra plan).
	PlanOnly bool
	// Refactor: a person declared that the task asks for no change of
	// behaviour (ultra run --refactor): the planner may propose refactor
	// goals, whose criteria are all pass-to-pass.
	Refactor bool
	// Review is what a review-mode run inspects.
	Review *ReviewSpec
	// SkillTools are what a skill the person invoked (--skill) leaves
	// of the run's tools (nil: all).
	SkillTools []string
	// SkillScopes: see agent.SkillScopes.
	SkillScopes []string
	// Adopt is the id of a queued run (submitted to a fleet) that this run
	// takes over: its row becomes this run's, only while still queued.
	Adopt string
	// Dispatch is the schedule's dispatch a worker starts the run for:
	// the run takes it when it is created, or is not created.
	Dispatch *store.DispatchClaim
	// Message, when set, is the run's first message in place of the
	// task's (a review's diff); the task stays the run's one-line name.
	Message string
	// RepairFirst, when set, is why the health check before the run
	// turned it to repair mode (repair.on_unhealthy = auto): the run
	// starts in repair and the change of mode is recorded as ultra's.
	RepairFirst string
	// Worktree, when set, gives the run its own git worktree and branch
	// (ultra/<run-id>) cut from Repo's base: Workdir and Cwd are then
	// mapped into it.
	Worktree *WorktreeSpec
	// Parallel, above 1, has up to that many workers work the accepted
	// goals at once, each in its own worktree (parallel.go); it needs
	// Worktree.
	Parallel int
}

// Outcome is how a run (or this part of it) ended.
type Outcome struct {
	RunID    string
	Status   string
	Phase    phase.Phase
	Reason   string
	ExitCode int
	// Answer is a chat's answer (its result).
	Answer string
}

// NewRunID returns a sortable, unique run id such as 20261122-020815-a3f9c1.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Start creates a run for spec and drives it until it completes, needs a
// person, runs out of budget, fails or ctx is cancelled.
func Start(ctx context.Context, o Options, spec Spec) (*Outcome, error) {
	o = o.withDefaults()
	if o.Surface != "" {
		spec.Axes.Surface = o.Surface
	}
	if err := spec.Axes.Validate(); err != nil {
		return nil, err
	}
	if err := o.checkContainment(spec.Axes.Permission); err != nil {
		return nil, err
	}
	now := o.Now()
	id := NewRunID(now)
	if spec.Adopt != "" {
		id = spec.Adopt
	}
	asked := spec.Axes
	if spec.RepairFirst != "" {
		spec.Axes.Mode = phase.Repair
	}
	mode := spec.Axes.Mode
	if !phase.Worktree(mode) {
		// Read-only modes (chat, research, review) work where they are:
		// no branch, no worktree, no goals.
		spec.Worktree = nil
	}
	cwd := spec.Cwd
	if cwd == "" {
		cwd = spec.Workdir
	}
	var ws store.Workspace
	var snapshot, untracked, modified []string
	marker := "" // removed once the run is stored
	defer func() {
		if marker != "" {
			os.Remove(marker)
		}
	}()
	if spec.Worktree != nil {
		// Until the run is stored, its worktree belongs to no run: the
		// marker tells ultra gc that a live process is still making it.
		m := StartingMarker(o.StateRoot, id)
		if err := os.MkdirAll(filepath.Dir(m), 0o755); err != nil {
			return nil, err
		}
		// A run refused before it is stored (no commit yet, a protected
		// branch) leaves no directory behind: removed when empty.
		defer os.Remove(filepath.Dir(m))
		if err := os.WriteFile(m, []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
			return nil, err
		}
		marker = m
		wt, err := makeWorktree(ctx, o, spec, id)
		if err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(spec.Workdir, cwd); err == nil && !strings.HasPrefix(rel, "..") {
			cwd = filepath.Join(wt.Path, rel)
		} else {
			cwd = wt.Path
		}
		spec.Workdir = wt.Path
		ws = store.Workspace{Branch: wt.Branch, Base: wt.Base, BaseCommit: wt.BaseCommit, StartCommit: wt.StartCommit, Worktree: wt.Path}
		snapshot, untracked, modified = wt.Snapshot, wt.Untracked, wt.Modified
		if spec.BriefFile != "" && slices.Contains(untracked, spec.BriefFile) {
			// Not in the run as a file, but its text is the run's brief.
			untracked = slices.DeleteFunc(untracked, func(p string) bool { return p == spec.BriefFile })
		} else {
			spec.BriefFile = ""
		}
	}
	deps, _ := workspace.IgnoredDirs(ctx, spec.Workdir, depDirs...)
	st := runState{Phase: phase.NewIn(mode, spec.Budgets), VerifyCommands: o.VerifyCommands, AllowTestChanges: spec.AllowTestChanges, DepDirs: deps,
		DeclaredCode: o.DeclaredCode, DeclaredSupport: o.DeclaredSupport,
		Instructions: LoadInstructions(spec.Workdir, cwd), Models: o.Models, Review: spec.Review,
		SkillIndex: skillIndex(o), SkillTools: spec.SkillTools, SkillScopes: spec.SkillScopes}
	if phase.Worktree(mode) {
		st.Goals = &goalState{Brief: strings.TrimSpace(spec.Brief), PlanOnly: spec.PlanOnly || mode == phase.Plan, Continue: o.GoalFailure == "continue", Refactor: spec.Refactor, NoCleanup: o.NoCleanup,
			Records: goal.RunRecords(id).Dir}
		if spec.Parallel > 1 && spec.Worktree != nil {
			st.Goals.Parallel = &parallelState{Workers: spec.Parallel, Dir: spec.Worktree.Dir, Setup: spec.Worktree.Setup, SetupTimeout: spec.Worktree.SetupTimeout}
		}
		if err := prepareRecords(spec.Workdir, st.Goals.records(), st.Goals.Brief); err != nil {
			return nil, err
		}
	}
	stateJSON, _ := json.Marshal(st)
	row := &store.Run{
		ID: id, Task: spec.Task, Repo: spec.Repo, Workdir: spec.Workdir,
		Phase: string(st.Phase.Phase), Status: StatusRunning, Axes: spec.Axes,
		Provider: o.ProviderName, Model: o.Model, BaseURL: o.BaseURL, State: stateJSON, PID: os.Getpid(),
		CreatedAt: now, UpdatedAt: now, Workspace: ws, Dispatch: spec.Dispatch, Adopt: spec.Adopt != "",
	}
	if err := o.Store.CreateRun(ctx, row); err != nil {
		return nil, err
	}
	if marker != "" {
		// Stored: the run accounts for its worktree now, and a kill from
		// here on leaves no marker for doctor to find.
		os.Remove(marker)
		marker = ""
	}
	r, err := newRunner(ctx, o, row, st, nil)
	if err != nil {
		return nil, err
	}
	defer r.closeSandbox()
	r.emit(event.RunStarted, event.RunStartedData{
		Task: spec.Task, Repo: spec.Repo, Workdir: spec.Workdir, Axes: spec.Axes,
		Branch: ws.Branch, Base: ws.Base, Start: ws.StartCommit, Snapshot: snapshot,
		Untracked: untracked, Modified: modified, BriefFile: spec.BriefFile, BriefRecord: briefRecord(st.Goals),
		Provider: o.ProviderName, Model: o.Model, Budgets: st.Phase.Budgets,
		Contained: o.sandboxStatus().Available, Sandbox: o.sandboxStatus().Summary(),
	})
	r.warnUncontained()
	if len(modified) > 0 {
		r.emit(event.Warning, event.WarningData{Message: fmt.Sprintf("the run does not see your uncommitted changes to %d tracked file(s) (%s): "+
			"commit them, or pass --include-uncommitted to start from them", len(modified), workspace.ListSome(modified, 5))})
	}
	for _, c := range axes.Diff(axes.Axes{}, asked) {
		r.pendingTrans = append(r.pendingTrans, store.Transition{Kind: "axis", Axis: c.Axis, From: c.From, To: c.To, By: "person", Reason: "run started", At: now})
	}
	for _, c := range axes.Diff(asked, spec.Axes) {
		reason := "the health check before the run: " + spec.RepairFirst
		r.pendingTrans = append(r.pendingTrans, store.Transition{Kind: "axis", Axis: c.Axis, From: c.From, To: c.To, By: "system", Reason: reason, At: now})
		r.emit(event.AxisChanged, event.AxisChangedData{Axis: c.Axis, From: c.From, To: c.To, Reason: reason, By: "system", Axes: spec.Axes})
	}
	first := taskMessage(mode, firstNonEmpty(spec.Message, spec.Task), spec.Brief, goal.RunRecords(id).Brief())
	if spec.BriefFile != "" {
		first = fmt.Sprintf("(The person's %s is not in your worktree: its text is this brief.)\n", spec.BriefFile) + first
	}
	if spec.RepairFirst != "" {
		first = "ultra's health check before this run found what blocks verified work here; this run repairs it first (it is in repair mode):\n" +
			spec.RepairFirst + "\n\nThe task asked for, which a person runs again once the repair is done:\n" + first
	}
	r.appendMessage(llm.Message{Role: llm.RoleUser, Content: first})
	defer func() { r.sessionEnd(r.endReason()) }()
	r.sessionStart(ctx, "startup")
	if r.promptHooks(ctx, firstNonEmpty(spec.Message, spec.Task)) {
		return r.loop(ctx)
	}
	if phase.Worktree(mode) {
		r.startBaseline(ctx)
	}
	return r.loop(ctx)
}

// briefRecord is where a run with goals keeps its brief ("" without).
func briefRecord(g *goalState) string {
	if g == nil || g.Brief == "" {
		return ""
	}
	return g.records().Brief()
}

// prepareRecords makes the run's records directory before anything of
// the model's runs (the sandbox shows .ultra/ read-only) and writes the
// brief. Runs landed before this one keep theirs beside it.
func prepareRecords(workdir string, rec goal.Records, brief string) error {
	if _, err := recordsDir(workdir, rec); err != nil {
		return fmt.Errorf("the run's records directory %s: %w", rec.Dir, err)
	}
	if brief != "" {
		if err := writeArtifact(workdir, rec, path.Base(rec.Brief()), []byte(brief+"\n")); err != nil {
			return fmt.Errorf("writing %s: %w", rec.Brief(), err)
		}
	}
	return nil
}

// ResumeOptions say how a person continues a run.
type ResumeOptions struct {
	Guidance string
	Approve  bool // accept the pending plan
	// Steer changes axes as the run resumes (ultra approve --autonomous:
	// the accepted plan runs autonomously), recorded as a person's.
	Steer   map[string]string
	Budgets phase.Budgets // budgets granted from now on (see phase.State.Resume)
	// Rescue: a fleet's worker goes on with a run whose machine stopped
	// mid-run, and no person asked.
	Rescue bool
}

// ErrBusy is returned when another live process is driving the run.
var ErrBusy = errors.New("run is in progress in another process")

// Resume continues an escalated, interrupted, failed or waiting run from its
// persisted phase and history.
func Resume(ctx context.Context, o Options, id string, ro ResumeOptions) (*Outcome, error) {
	o = o.withDefaults()
	row, err := o.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if Live(row) {
		return nil, fmt.Errorf("%w: run %s (pid %d)", ErrBusy, row.ID, row.PID)
	}
	if why := worktreeGone(ctx, row); why != "" {
		return nil, fmt.Errorf("%s; it cannot be resumed", why)
	}
	if RunLocked(o.StateRoot, row.ID) {
		return nil, fmt.Errorf("%w: %s is being landed, undone or collected", ErrBusy, row.ID)
	}
	st, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	if err := o.checkContainment(row.Axes.Permission); err != nil {
		return nil, err
	}
	if st.Goals != nil && st.Goals.Worker != nil && o.coord == nil {
		return nil, fmt.Errorf("run %s is a worker of the parallel run %s: resume that run (ultra resume %s), which resumes its workers", row.ID, st.Goals.Worker.Run, st.Goals.Worker.Run)
	}
	if st.Goals != nil {
		// Resume reads goals.json and the ledger, checked against the head
		// ultra last recorded: a hand edit stops the run until repaired.
		if err := CheckGoals(row.Workdir, st.Goals.records(), st.Goals.LedgerSeq, st.Goals.LedgerHash); err != nil {
			return nil, fmt.Errorf("run %s cannot resume: its goal records do not check out: %w (a person must repair them; ultra goals ledger --verify says where)", row.ID, err)
		}
	}
	reopen := st.Phase.Phase == phase.Complete && strings.TrimSpace(ro.Guidance) != "" &&
		slices.Contains(phase.NextIn(st.Phase.Mode, phase.Complete, phase.ByPerson), phase.Start(st.Phase.ModeName()))
	switch {
	case st.Phase.Phase == phase.Complete && !reopen:
		return nil, fmt.Errorf("run %s is already complete", row.ID)
	case st.Phase.Phase == phase.Cancelled:
		return nil, fmt.Errorf("run %s was cancelled", row.ID)
	case ro.Approve && st.PendingPlan == "":
		return nil, fmt.Errorf("run %s has no plan waiting for approval", row.ID)
	}
	// The test command is the one the run started with, whatever the
	// configuration says now.
	o.VerifyCommands = st.VerifyCommands
	if len(o.Models) == 0 && o.Model == row.Model {
		o.Models = st.Models // the same model as before: keep the run's routing
	}
	raw, err := o.Store.Messages(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	history := make([]llm.Message, 0, len(raw))
	for i, m := range raw {
		var msg llm.Message
		if err := json.Unmarshal(m, &msg); err != nil {
			return nil, fmt.Errorf("run %s: corrupt message %d: %w", row.ID, i+1, err)
		}
		history = append(history, msg)
	}
	history = repairHistory(history)
	if st.AwaitingCall != nil {
		// Checked before the run is taken: a run that cannot go on stays
		// as it was.
		if _, err := awaitingDecision(ctx, o.Store, row.ID, *st.AwaitingCall); err != nil {
			return nil, err
		}
	}
	if ok, err := o.Store.Claim(ctx, row.ID, row.PID, row.Status, os.Getpid()); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: run %s was just resumed by another process", ErrBusy, row.ID)
	}
	from := row.Status
	row.Status, row.Reason, row.PID = StatusRunning, "", os.Getpid()
	row.Provider, row.Model, row.BaseURL = o.ProviderName, o.Model, o.BaseURL
	r, err := newRunner(ctx, o, row, st, history)
	if err != nil {
		return nil, err
	}
	defer r.closeSandbox()
	defer func() { r.sessionEnd(r.endReason()) }()
	by, resumed := "person", "resumed by a person from "+from
	if ro.Rescue {
		by, resumed = "fleet", "taken over by a fleet worker from "+from+": its machine stopped mid-run"
	}
	r.emit(event.RunResumed, event.RunResumedData{Guidance: ro.Guidance, From: from, By: by})
	r.sessionStart(ctx, "resume")
	if r.goals != nil && r.goals.ledger.Len() > 0 {
		r.recordGoal(ledger.Entry{Kind: ledger.KindResumed, Text: resumed})
	}
	r.warnUncontained()
	if row.Workspace.Worktree != "" {
		// The run was the only user of its worktree's index; a lock left by
		// a git it ran when it was killed would block every git command.
		if cleared, err := workspace.ClearStaleLock(ctx, row.Workdir); cleared {
			r.emit(event.Warning, event.WarningData{Message: "removed a stale git index lock in the run's worktree, left when the run was stopped"})
		} else if err != nil {
			r.emit(event.Warning, event.WarningData{Message: "checking the worktree's git lock: " + err.Error()})
		}
	}
	if phase.Worktree(st.Phase.ModeName()) {
		r.ensureBaseline(ctx)
	}
	if err := r.resumeAwaiting(ctx); err != nil {
		return nil, err
	}
	if len(ro.Steer) > 0 {
		next, err := r.row.Axes.Steer(ro.Steer)
		if err == nil {
			err = r.setAxes(ctx, next, firstNonEmpty(ro.Guidance, "set by a person as the run resumed"), axes.ScopeNow, "person", session())
		}
		if err != nil {
			return nil, err
		}
	}
	if ro.Approve && r.row.Axes.Mode == phase.Plan {
		// The plan is accepted: the run builds it.
		next, _ := r.row.Axes.Set("mode", phase.Build)
		if err := r.setAxes(ctx, next, "the plan was accepted", axes.ScopeNow, "person", session()); err != nil {
			return nil, err
		}
	}
	if reopen {
		// A chat (or research) goes on with the person's next question.
		if err := r.transition(phase.Start(st.Phase.ModeName()), phase.ByPerson, "the next question", ""); err != nil {
			return nil, err
		}
		r.appendMessage(llm.Message{Role: llm.RoleUser, Content: "Question:\n" + strings.TrimSpace(ro.Guidance)})
		ro.Guidance = ""
	}
	escalated := st.Phase.Phase == phase.Escalated
	r.st.Phase = r.st.Phase.Resume(ro.Budgets, escalated)
	// A person acted: the stuck-model counters start again.
	r.st.IdleAnswers, r.st.LastFailure = 0, failureStreak{}
	if escalated {
		back := st.EscalatedFrom
		switch {
		case back == phase.Planning:
		case back == phase.Building && st.Phase.Used.FailedVerifies == 0:
		default:
			back = phase.Iterating
		}
		if err := r.transition(back, phase.ByPerson, "resumed by a person", ""); err != nil {
			return nil, err
		}
	}
	if r.hasGoals() {
		r.resumeGoals(escalated)
		if !ro.Approve && strings.TrimSpace(ro.Guidance) != "" && r.st.PendingPlan != "" {
			// A person sends the proposal back: the planner revises it
			// with the guidance and proposes again.
			r.st.PendingPlan = ""
			r.recordGoal(ledger.Entry{Kind: ledger.KindSteeringRejected, Text: "the proposal was sent back by a person: " + oneLine(ro.Guidance, 300)})
		}
	}
	if ro.Approve {
		r.acceptPlan(phase.ByPerson, "approved by a person")
	}
	if ro.Guidance != "" {
		r.appendMessage(llm.Message{Role: llm.RoleUser, Content: "A person resumed this run with guidance:\n" + ro.Guidance})
	} else if len(r.history) > 0 && r.history[len(r.history)-1].Role == llm.RoleAssistant {
		r.appendMessage(llm.Message{Role: llm.RoleUser, Content: "The run was resumed. Continue from where it stood."})
	}
	return r.loop(ctx)
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxIdle <= 0 {
		o.MaxIdle = 5
	}
	if o.MaxRepeats <= 0 {
		o.MaxRepeats = 3
	}
	if o.Verifier == nil {
		o.Verifier = verify.New()
	}
	return o
}

// RunDir is where a run keeps its files under the state root.
func RunDir(stateRoot, id string) string { return filepath.Join(stateRoot, "runs", id) }

func taskMessage(mode, task, brief, briefPath string) string {
	switch {
	case brief != "":
		return "Brief (also in " + briefPath + "):\n" + strings.TrimSpace(brief)
	case mode == phase.Chat || mode == phase.Research:
		return "Question:\n" + task
	case mode == phase.Review:
		return "Review request:\n" + task
	}
	return "Task:\n" + task
}

// repairHistory makes a history loaded after a crash valid for providers:
// every tool call of an assistant message gets a result.
func repairHistory(h []llm.Message) []llm.Message {
	var out []llm.Message
	for i := 0; i < len(h); i++ {
		m := h[i]
		out = append(out, m)
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		j := i + 1
		for ; j < len(h) && h[j].Role == llm.RoleTool; j++ {
			answered[h[j].ToolCallID] = true
			out = append(out, h[j])
		}
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
					Content: "interrupted: this call did not finish; check its effect before repeating it"})
			}
		}
		i = j - 1
	}
	return out
}

func decodeState(row *store.Run) (runState, error) {
	var st runState
	if err := json.Unmarshal(row.State, &st); err != nil {
		return st, fmt.Errorf("run %s: corrupt state: %w", row.ID, err)
	}
	return st, nil
}
