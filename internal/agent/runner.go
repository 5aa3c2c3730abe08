package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tool"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// runner drives one run in this process.
type runner struct {
	o        Options
	lastSnap *workspace.Snapshot // the worktree as the last saved step kept it (Options.Snapshots)
	shared   sharedHeads         // what of the run's records the store holds (Options.Snapshots)
	row      *store.Run
	st       runState
	history  []llm.Message
	secrets  []string             // values no tool result may carry (redact)
	tools    map[string]tool.Tool // every tool ultra has, by name
	order    []string             // registry order
	env      *tool.Env
	bus      *event.Bus
	model    llm.Provider // o.Provider with retries

	// What the current step adds, saved together at its end.
	pendingMsgs  []llm.Message
	pendingTrans []store.Transition
	stop         *Outcome // set when the step ended the run
	// madeNothing: the run failed before any progress, and its branch
	// and worktree go when it ends (discardWorkspace).
	madeNothing   bool
	mark          time.Time
	baselineDone  chan struct{} // closed when the baseline is measured
	stopBaseline  func()        // cancels the baseline
	baselineStamp atomic.Value  // string: statStamp of the baseline.json ultra wrote
	// baselineBeside: a call of the model's that runs code or writes
	// files ran while the baseline was measured (taintAhead): it is
	// not kept in the gate cache for other runs.
	baselineBeside atomic.Bool
	// baselineMu makes writing baseline.json and noting its stamp one
	// step for stateFingerprint, which takes it too.
	baselineMu sync.Mutex
	// early are the tests run ahead of verify (early.go).
	early     earlyRuns
	askedWith []string // the tools the current request offered
	callID    string   // the call running now (serial calls only)
	// planAllowed is the call proposing a plan that a person allowed,
	// having read the plan: its plan needs no second answer.
	planAllowed string

	goals       *goalRecorder // goals.json and the ledger (runs with goals)
	goalsBroken error         // ultra could not write its goal records
	// landFailed: a worker's verification passed, but its goal could not
	// be handed to its run (landWork): it decides nothing.
	landFailed error
	// claimText is a worker's claims as its task row shows them.
	claimText string
	// inReview: the current step belongs to the final reviewer, whose
	// messages go to its own context (runState.Goals.Review).
	inReview bool
	// pendingMain are messages for the run's own history that arise in
	// the reviewer's step (its blockers), added after the step.
	pendingMain []llm.Message
	ctl         control // requests from other processes
	// notes are messages for the model held until its next request (a
	// change of axes made between tool calls).
	notes []string
	// waitingOn says what the live run waits on a person for.
	waitingOn string
	// seenCalls are the call ids the run has used (callIDs).
	seenCalls map[string]bool
	// mcp are the person's MCP servers and their tools (mcp.go).
	mcp mcpState
	// hookSays is what PreToolUse hooks decided of calls: ask or allow.
	hookSays map[string]string
	hookMu   sync.Mutex // making the hooks' project checkout
	// toolchainEnv pins the hooks' interpreters (toolchains), found once.
	toolchainOnce sync.Once
	toolchainEnv  []string
	// baseRuns are the checks this process ran on the run's base code
	// (measureBase), by channel and check: a refused proposal's criteria
	// proposed again are not run again.
	baseRuns map[string]check.Result
}

func newRunner(ctx context.Context, o Options, row *store.Run, st runState, history []llm.Message) (*runner, error) {
	runDir := RunDir(o.StateRoot, row.ID)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	env, err := tool.NewEnv(row.Workdir, runDir)
	if err != nil {
		return nil, err
	}
	env.BashTimeout = o.BashTimeout
	if env.Sandbox, err = bashSandbox(ctx, o, row, st.DepDirs); err != nil {
		return nil, fmt.Errorf("preparing the run's sandbox: %w", err)
	}
	env.Files.Restore(st.Files)
	env.Todos.Set(st.Todos)
	r := &runner{o: o, row: row, st: st, history: history, env: env, tools: map[string]tool.Tool{}, mark: o.Now(), secrets: secretValues(o.Secrets)}
	if st.Goals != nil {
		// A run whose records cannot be opened stops at its next step (and
		// can still be cancelled).
		if r.goals, err = openRecorder(row.Workdir, st.Goals.records(), row.ID); err != nil {
			r.goals, r.goalsBroken = nil, err
		}
	}
	for _, t := range append(tool.Builtins(), r.phaseTool(), r.verifyTool(), r.goalsTool(), r.reviewTool(), r.steerTool(), r.taskTool(), r.reportTool()) {
		name := t.Spec().Name
		r.tools[name] = t
		r.order = append(r.order, name)
	}
	if len(o.Skills) > 0 {
		r.tools["skill"] = r.skillTool()
	}
	if st.Goals != nil && st.Goals.Worker != nil {
		r.tools["claim"] = r.claimTool()
		r.order = append(r.order, "claim")
		r.noteClaims(ctx)
	}
	r.startMCP(ctx)
	last, err := o.Store.LastSeq(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	storeSink := event.SinkFunc(func(e event.Event) {
		data, _ := json.Marshal(e.Data)
		_ = o.Store.AppendEvent(context.Background(), e.Run, e.Seq, e.Time, string(e.Type), e.Phase, data)
	})
	r.bus = event.NewBus(row.ID, last, o.Now, append([]event.Sink{storeSink}, o.Sinks...)...)
	r.ctl.poke, r.ctl.live, r.ctl.redact = make(chan struct{}, 1), r.bus.Live, r.redact
	env.Output = &r.ctl
	retries := o.ModelRetries
	if retries == 0 {
		retries = llm.DefaultRetries
	}
	r.model = llm.Retrying(o.Provider, llm.RetryPolicy{Retries: max(retries, 0),
		OnRetry: func(attempt int, err error, wait time.Duration) {
			r.emit(event.ModelRetry, event.ModelRetryData{Turn: r.st.Phase.Used.Turns + 1, Attempt: attempt,
				Error: err.Error(), Wait: wait.Round(time.Millisecond).String()})
		}})
	return r, nil
}

func (r *runner) emit(t event.Type, data any) {
	r.bus.Emit(t, string(r.st.Phase.Phase), data)
}

func (r *runner) appendMessage(m llm.Message) {
	if r.inReview && r.st.Goals != nil {
		r.st.Goals.Review = append(r.st.Goals.Review, m)
		return
	}
	r.history = append(r.history, m)
	r.pendingMsgs = append(r.pendingMsgs, m)
}

// tick adds the wall time since the last tick to the run's counters.
func (r *runner) tick() {
	now := r.o.Now()
	r.st.Phase.Used.Wall += now.Sub(r.mark)
	r.mark = now
}

// transition moves the run through the phase machine and records it.
func (r *runner) transition(to phase.Phase, by phase.Actor, reason, plan string) error {
	next, tr, err := r.st.Phase.Transition(to, by, reason, plan)
	if err != nil {
		return err
	}
	r.applyTransition(next, tr)
	return nil
}

func (r *runner) applyTransition(next phase.State, tr phase.Transition) {
	if tr.To == phase.Escalated {
		r.st.EscalatedFrom = tr.From
	}
	r.st.Phase = next
	r.noteTransition(tr)
	r.pendingTrans = append(r.pendingTrans, store.Transition{Kind: "phase", From: string(tr.From), To: string(tr.To),
		By: string(tr.By), Reason: tr.Reason, At: r.o.Now()})
	r.bus.Emit(event.PhaseChanged, string(tr.To), event.PhaseChangedData{From: string(tr.From), To: string(tr.To), By: string(tr.By), Reason: tr.Reason})
}

// escalate moves the run to escalated and ends it with status.
func (r *runner) escalate(by phase.Actor, status, reason string) {
	if !r.st.Phase.Phase.Terminal() {
		next, tr, err := r.st.Phase.Escalate(by, reason)
		if err == nil {
			r.applyTransition(next, tr)
		}
	}
	r.finish(status, reason)
}

func (r *runner) finish(status, reason string) {
	r.stop = &Outcome{RunID: r.row.ID, Status: status, Phase: r.st.Phase.Phase, Reason: reason, ExitCode: ExitCode(status)}
}

// save persists the step: run row, new messages, transitions.
func (r *runner) save() error {
	r.tick()
	r.st.Todos = r.env.Todos.Items()
	r.st.Files = r.env.Files.Snapshot()
	state, err := json.Marshal(r.st)
	if err != nil {
		return err
	}
	now := r.o.Now()
	r.row.Phase = string(r.st.Phase.Phase)
	r.row.State = state
	r.row.UpdatedAt = now
	if r.stop != nil {
		r.row.Status, r.row.Reason, r.row.PID = r.stop.Status, r.stop.Reason, 0
		if r.stop.Status == StatusComplete || r.stop.Status == StatusCancelled {
			r.row.FinishedAt = now
		}
	}
	r.row.TaskRow = r.taskRow()
	raw := make([]json.RawMessage, len(r.pendingMsgs))
	for i, m := range r.pendingMsgs {
		raw[i], _ = json.Marshal(m)
	}
	snap, snapped := r.snapshot()
	heads := r.shared
	if snapped {
		// Never records the snapshot does not hold: see shared.go.
		r.row.Records, heads = r.sharedRecords()
	}
	// A cancelled ctx must not stop the final save.
	err = r.o.Store.SaveStep(context.Background(), r.row, raw, r.pendingTrans)
	r.row.Snapshot, r.row.Records = nil, nil
	if err != nil {
		return err
	}
	if snap != nil {
		r.lastSnap = snap
	}
	r.shared = heads
	r.pendingMsgs, r.pendingTrans = nil, nil
	return nil
}

// snapshot puts on the row the worktree's snapshot for the step being
// saved, when the run keeps them and its worktree changed since the
// last one (nil when it did not); ok says the store will hold the
// worktree as it is now. A snapshot that cannot be made is a warning:
// the run goes on, and a machine taking it over starts from the one
// before.
func (r *runner) snapshot() (snap *workspace.Snapshot, ok bool) {
	ws := r.row.Workspace
	if !r.o.Snapshots || ws.Worktree == "" {
		return nil, false
	}
	snap, err := workspace.TakeSnapshot(context.Background(), ws.Worktree, r.row.ID, ws.BaseCommit, r.lastSnap)
	if err != nil {
		r.emit(event.Warning, event.WarningData{Message: "the worktree's snapshot for another machine could not be made: " + err.Error()})
		return nil, false
	}
	if snap != nil {
		r.row.Snapshot = &store.Snapshot{Commit: snap.Commit, Tree: snap.Tree, Head: snap.Head, Bundle: snap.Bundle, At: r.o.Now()}
	}
	return snap, true
}

// loop runs steps until the run stops.
func (r *runner) loop(ctx context.Context) (*Outcome, error) {
	wctx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); r.watch(wctx) }()
	defer func() { stopWatch(); <-watched }()
	if r.stop != nil {
		// Stopped before a step here (on resume, the call a person
		// allowed ended the run): its row says so too.
		if err := r.save(); err != nil {
			return nil, err
		}
	}
	for r.stop == nil {
		r.safePoint(ctx)
		if r.stop == nil {
			// Only here, between steps: a unit never ends inside an
			// answer's calls.
			r.assistedPause(ctx)
		}
		if r.stop != nil {
			if err := r.save(); err != nil {
				return nil, err
			}
			break
		}
		r.inReview = r.st.Phase.Phase == phase.Reviewing && r.hasGoals()
		if err := r.step(ctx); err != nil {
			return nil, err
		}
		if r.stop != nil && r.stop.Status == StatusInterrupted {
			// ultra cancel (or stop, pause) interrupts a live run: what
			// it asked decides how the run ends.
			r.endingRequests()
		}
		r.inReview = false
		for _, m := range r.pendingMain {
			r.appendMessage(m)
		}
		r.pendingMain = nil
		if r.goalsBroken != nil && r.stop == nil {
			r.escalate(phase.BySystem, StatusEscalated, "ultra could not write the run's goal records: "+r.goalsBroken.Error())
		}
		if err := r.save(); err != nil {
			return nil, err
		}
	}
	r.abandonTestsAhead()
	r.abandonBaseline()
	if r.madeNothing {
		r.discardWorkspace()
	}
	o := r.stop
	if o.Status == StatusComplete && !phase.AnswerEnds(r.st.Phase.Mode) || o.Status == StatusCancelled {
		// A chat goes on with the next question; a finished run takes
		// no more requests.
		closeRequests(context.Background(), r.o.Store, r.row.ID, o.Status)
	}
	u := r.st.Phase.Used
	r.emit(event.RunFinished, event.RunFinishedData{Status: o.Status, Reason: o.Reason, ExitCode: o.ExitCode,
		Turns: u.Turns, Usage: event.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadTokens: r.st.Usage.CacheReadTokens, CacheWriteTokens: r.st.Usage.CacheWriteTokens},
		Wall: u.Wall.Round(time.Millisecond).String(), Cost: u.Cost})
	return o, nil
}

// step makes one model request and handles its answer. The error is for
// the store only: everything else ends the run with a status.
func (r *runner) step(ctx context.Context) error {
	r.tick()
	if ctx.Err() != nil {
		r.finish(StatusInterrupted, "interrupted")
		return nil
	}
	switch p := r.st.Phase.Phase; {
	case p == phase.Complete:
		r.finish(StatusComplete, "verification passed")
		return nil
	case p.Terminal():
		r.finish(StatusEscalated, "the run is "+string(p))
		return nil
	case r.st.PendingPlan != "":
		r.finish(StatusNeedsApproval, "the plan waits for a person: ultra approve "+r.row.ID)
		return nil
	}
	if _, reason, ok := r.st.Phase.Exhausted(); ok {
		r.escalate(phase.ByBudget, StatusBudgetExhausted, reason)
		return nil
	}
	if reason, ok := r.o.pool.exhaustedBy(); ok {
		// A worker of a parallel run: the run's budgets are shared.
		r.escalate(phase.ByBudget, StatusBudgetExhausted, reason)
		return nil
	}
	if r.parallelNow() {
		return r.runParallel(ctx)
	}
	if r.st.Phase.Phase == phase.Cleaning && r.hasGoals() && r.st.Goals.Cleanup != nil {
		if lim := r.cleanupLimit(); lim.Left() == 0 {
			// The pass is bounded: ultra ends it as the phase call would.
			res := r.endCleanup(ctx, phase.ByBudget, fmt.Sprintf("the cleanup pass used its turns (%s)", lim))
			r.appendMessage(llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("ultra ended the cleanup pass: its %d turns are used.\n\n", lim.Max) + res.Output})
			return nil
		}
	}

	r.noteRedBase()
	r.flushNotes()
	req := r.compact(ctx, r.request())
	r.askedWith = toolNames(req.Tools)
	turn := r.st.Phase.Used.Turns + 1
	r.emit(event.ModelRequest, event.ModelRequestData{Turn: turn, Model: req.Model, Tools: toolNames(req.Tools), Messages: len(req.Messages)})
	start := r.o.Now()
	resp, aside, err := r.streamModel(ctx, req)
	took := r.o.Now().Sub(start)
	if aside {
		// A person's request could not wait for this answer: it is
		// taken at the next safe point and the model asked again. What
		// the request cost is counted (estimated: the answer never came).
		r.st.Phase.Used.InputTokens += estimateUsage(req, &llm.Response{}).InputTokens
		return nil
	}
	if err != nil && ctx.Err() != nil {
		// Interrupted: the request's error is the interruption itself.
		r.finish(StatusInterrupted, "interrupted")
		return nil
	}
	if err != nil {
		me := &event.ModelError{Provider: r.o.ProviderName, Message: err.Error()}
		var le *llm.Error
		if errors.As(err, &le) {
			me = &event.ModelError{Provider: le.Provider, StatusCode: le.StatusCode, Message: le.Message, Retryable: le.Retryable}
		}
		r.emit(event.ModelResponse, event.ModelResponseData{Turn: turn, Model: req.Model, Duration: took.String(), Error: me})
		reason := fmt.Sprintf("model request failed: %v", err)
		if r.o.ProviderHint != "" && (le == nil || le.StatusCode == 0 || le.StatusCode == 401 || le.StatusCode == 403) {
			reason += "; " + r.o.ProviderHint
		}
		if r.madeNothing = r.nothingMade(); r.madeNothing {
			r.finish(StatusFailed, reason+" (the run made nothing, so its branch and worktree are removed: fix it, then start the run again)")
			return nil
		}
		r.finish(StatusFailed, reason+fmt.Sprintf(" (fix it, then: ultra resume %s)", r.row.ID))
		return nil
	}
	// A server that reports no usage still spends tokens: countUsage
	// estimates them, so the token budgets hold.
	model, cost := r.countUsage(req, resp, turn)
	r.emit(event.ModelResponse, event.ModelResponseData{Turn: turn, Model: model, Usage: event.Usage(resp.Usage), Cost: cost,
		StopReason: resp.StopReason, ToolCalls: len(resp.ToolCalls), Duration: took.String()})
	if thinking := thinkingText(resp.Thinking); strings.TrimSpace(resp.Text) != "" || thinking != "" {
		r.emit(event.AssistantText, event.AssistantTextData{Text: resp.Text, Thinking: thinking})
	}
	calls := normaliseCalls(resp.ToolCalls, turn, r.callIDs())
	r.appendMessage(llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: historyCalls(calls), Thinking: resp.Thinking})

	if len(calls) == 0 {
		r.idle(resp.Text)
		return nil
	}
	r.st.IdleAnswers = 0
	// Record the answer before its calls run: if the process dies in
	// them, the resumed run knows what it asked for.
	if err := r.save(); err != nil {
		return err
	}
	if r.wantsTestsAhead(r.runCalls(ctx, calls)) {
		r.startTestsAhead(ctx)
	}
	r.ctl.setActivity("")
	return nil
}

// activityOf says what running a call means to a person watching:
// the command of a bash call, the tests for verify.
func activityOf(c llm.ToolCall) string {
	switch c.Name {
	case "verify":
		return "running the tests"
	case "bash":
		var a struct {
			Command string `json:"command"`
		}
		if json.Unmarshal([]byte(c.Arguments), &a) == nil && strings.TrimSpace(a.Command) != "" {
			return "running `" + event.Printable(event.OneLine(a.Command, 60)) + "`"
		}
	}
	return "running " + c.Name
}

// thinkingText is the readable part of a model's thinking, bounded for
// an event (redacted blocks have none).
func thinkingText(th []llm.Thinking) string {
	var parts []string
	for _, t := range th {
		if s := strings.TrimSpace(t.Text); s != "" {
			parts = append(parts, s)
		}
	}
	return event.Truncate(strings.Join(parts, "\n\n"), 16<<10)
}

// idle handles an answer without a tool call: only the phase machine ends a
// run, so the model is reminded, and a model that keeps idling escalates.
func (r *runner) idle(text string) {
	empty := strings.TrimSpace(text) == ""
	if !empty && phase.AnswerEnds(r.st.Phase.Mode) {
		// A chat's answer is its result.
		if next, tr, err := r.st.Phase.Answered(); err == nil {
			r.applyTransition(next, tr)
			r.emit(event.Answer, event.AnswerData{Text: text})
			r.finish(StatusComplete, "answered")
			r.stop.Answer = text
			return
		}
	}
	r.st.IdleAnswers++
	what := "Your answer called no tool."
	if empty {
		r.st.Malformed++
		what = "Your answer was empty."
	}
	if r.st.IdleAnswers >= r.o.MaxIdle {
		r.escalate(phase.BySystem, StatusEscalated, fmt.Sprintf("the model answered %d times in a row without calling a tool", r.st.IdleAnswers))
		return
	}
	r.appendMessage(llm.Message{Role: llm.RoleUser, Content: what + " The run is not finished: it is in phase " +
		string(r.st.Phase.Phase) + ", and " + finishRule(r.st.Phase.ModeName()) + ". Continue with a tool call: " +
		r.st.Phase.Purpose()})
}

// request builds the model request for the current phase: layer 1 (only
// the phase's tools) and layer 3 (the reminder).
func (r *runner) request() llm.Request {
	r.mcpWait()
	var specs []llm.ToolSpec
	for _, name := range r.offered() {
		specs = append(specs, r.tools[name].Spec())
	}
	history, system := r.history, systemPrompt(r.st.Phase.ModeName(), r.row.Workdir, r.st.Instructions)
	if r.st.SkillIndex != "" && r.tools["skill"] != nil {
		system += "\n\n" + r.st.SkillIndex
	}
	if r.inReview {
		history, system = r.st.Goals.Review, reviewPrompt
	}
	msgs := make([]llm.Message, 0, len(history)+1)
	msgs = append(msgs, history...)
	where := strings.TrimSpace("axes: " + r.row.Axes.String() + "\n" + r.sandboxNote())
	if g := r.goalReminder(); g != "" && !r.inReview {
		where = strings.TrimSpace(where + "\n" + g)
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "<ultra-reminder>\n" + r.st.Phase.ReminderWith(r.offered(), where, r.cycleLimit()) + "\n</ultra-reminder>"})
	budget := 0
	if ModeFor(r.row.Axes.ModelMode, r.st.Phase.Phase) == "deep" {
		budget = r.o.ThinkingBudget
	}
	return llm.Request{ThinkingBudget: budget, Model: r.modelFor(), System: system, Messages: msgs, Tools: specs, MaxTokens: r.o.MaxTokens}
}

// offered lists the tools offered now: the registry ∩ the phase table ∩ the
// permission profile.
func (r *runner) offered() []string {
	var out []string
	for _, name := range r.st.Phase.Tools() {
		if name == phase.MCPAll || name == phase.MCPRead {
			out = append(out, r.mcpOfferedNow(name)...)
			continue
		}
		if _, ok := r.tools[name]; ok && permits(r.row.Axes, name) && !r.narrowed(name) {
			out = append(out, name)
		}
	}
	return out
}

func toolNames(specs []llm.ToolSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// normaliseCalls gives every call an id (some servers omit them).
func normaliseCalls(calls []llm.ToolCall, turn int, seen map[string]bool) []llm.ToolCall {
	out := make([]llm.ToolCall, len(calls))
	if seen == nil {
		seen = map[string]bool{}
	}
	for i, c := range calls {
		// The model names its calls, and a call's id is shown to people
		// in commands to paste (ultra approve RUN --call ID): an id that is
		// not a plain word is replaced.
		if c.ID == "" || seen[c.ID] || !plainID(c.ID) || strings.HasPrefix(c.ID, "ultra_") {
			c.ID = fmt.Sprintf("ultra_%d_%d", turn, i+1)
			for n := 2; seen[c.ID]; n++ {
				c.ID = fmt.Sprintf("ultra_%d_%d_%d", turn, i+1, n)
			}
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out
}

// callIDs are the ids of every call the run has had: an id is one call's
// for the whole run (a person's approval names it), so a model reusing
// one gets ultra's instead.
func (r *runner) callIDs() map[string]bool {
	if r.seenCalls == nil {
		r.seenCalls = map[string]bool{}
		for _, m := range r.history {
			for _, c := range m.ToolCalls {
				r.seenCalls[c.ID] = true
			}
		}
		if r.st.Goals != nil {
			for _, m := range r.st.Goals.Review {
				for _, c := range m.ToolCalls {
					r.seenCalls[c.ID] = true
				}
			}
		}
	}
	return r.seenCalls
}

// plainID says id is letters, digits, _ and - only, at most 64 of them,
// not starting with a dash (it would read as a flag).
func plainID(id string) bool {
	if len(id) > 64 || strings.HasPrefix(id, "-") {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// historyCalls is how an answer's calls are kept in the conversation:
// arguments that are not a JSON object become {} (their text stays in the
// error result), because servers that parse the history reject a request
// whose earlier calls carry broken arguments, and the run could never
// recover.
func historyCalls(calls []llm.ToolCall) []llm.ToolCall {
	out := make([]llm.ToolCall, len(calls))
	for i, c := range calls {
		var obj map[string]any
		if json.Unmarshal([]byte(c.Arguments), &obj) != nil || obj == nil {
			var inner string // arguments encoded twice
			if json.Unmarshal([]byte(c.Arguments), &inner) == nil && json.Unmarshal([]byte(inner), &obj) == nil && obj != nil {
				c.Arguments = inner
			} else {
				c.Arguments = "{}"
			}
		}
		out[i] = c
	}
	return out
}

func resultText(res tool.Result) string {
	if res.IsError && !strings.HasPrefix(res.Output, "Error") && !strings.HasPrefix(res.Output, "Refused") {
		return "Error: " + res.Output
	}
	return res.Output
}

func rawArgs(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func canonicalArgs(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// estimateUsage approximates the tokens of a request and its answer (about
// four bytes a token) for servers that report none.
func estimateUsage(req llm.Request, resp *llm.Response) llm.Usage {
	out := len(resp.Text)
	for _, c := range resp.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	return llm.Usage{InputTokens: int64(requestBytes(req)/4 + 1), OutputTokens: int64(out/4 + 1)}
}

// ModeFor is the model mode a phase uses: with the default mode (smart),
// planning thinks harder (deep); fast and deep apply to every phase.
func ModeFor(mode string, p phase.Phase) string {
	if p == phase.Reviewing {
		return "deep" // the final review: the deep model mode chooses the reviewer
	}
	if mode == "smart" && p == phase.Planning {
		return "deep"
	}
	return mode
}

// modelFor picks the model of the next request from the routing table.
func (r *runner) modelFor() string {
	if m := r.o.Models[ModeFor(r.row.Axes.ModelMode, r.st.Phase.Phase)]; m != "" {
		return m
	}
	return r.o.Model
}

// redact replaces the run's secret values in text (see Options.Secrets).
func (r *runner) redact(text string) string {
	for _, s := range r.secrets {
		if strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, "[redacted: a credential of ultra's]")
		}
	}
	return text
}

// secretValues are the values redact hides: the options' and the
// environment's credentials, long enough not to be ordinary words.
func secretValues(extra []string) []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= 8 && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, v := range extra {
		add(v)
	}
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); proc.IsSecret(k) {
			add(v)
		}
	}
	return out
}
