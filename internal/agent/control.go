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
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
	"github.com/ultra-dev/ultra/internal/tool"
)

// Approval scopes: what one answer of a person on a waiting call covers
// beyond the call itself, for the rest of the run. Only a person's
// request (ultra approve, from any surface) carries one; no tool of the
// model's can.
const (
	ApproveForRun   = "run"       // the call's tool
	ApproveReadOnly = "read_only" // every read-only call (read, glob, grep)
)

// control is the runner's side of the requests other processes make of
// a live run (internal/store requests): steering, approvals, next,
// pause, stop and cancel.
type control struct {
	mu          sync.Mutex
	modelCancel context.CancelFunc // set while a model answer streams
	activity    string
	since       time.Time // when activity began
	// partial is the answer streaming in; dirty says the store has not
	// seen its latest fragment. poke wakes the watcher to record a change
	// of activity at once (attached surfaces read it from the store).
	partial []byte
	// thinking is the model's readable thinking streaming in before it.
	thinking []byte
	dirty    bool
	poke     chan struct{}
	live     func(event.Live)    // the bus's passing-state stream
	redact   func(string) string // the run's credentials out of stored text
	// units and milestones count phase changes and milestones; a deferred
	// request remembers the counts when it was first seen.
	units, milestones int
	deferred          map[int64][2]int
	unitCredit        int // next requests taken ahead of the pause they release
	pausedUnit        int // the unit count at the last assisted pause
}

// setActivity says what the run does now: surfaces in this process see
// it at once, attached ones through the store within a poll.
func (c *control) setActivity(a string) {
	c.mu.Lock()
	changed := a != c.activity
	if changed {
		c.activity, c.since = a, time.Now()
	}
	if changed && (len(c.partial) > 0 || len(c.thinking) > 0) {
		c.partial, c.thinking = c.partial[:0], c.thinking[:0]
		c.dirty = true
	}
	since, live := c.since, c.live
	c.mu.Unlock()
	if !changed {
		return
	}
	if live != nil {
		live(event.Live{Activity: a, Since: since})
	}
	c.wake()
}

func (c *control) wake() {
	if c.poke == nil {
		return
	}
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// begin starts an activity anew: its time and its streamed text, even
// when it is the same as the last one (a second request to the model).
func (c *control) begin(a string) {
	c.mu.Lock()
	c.activity, c.since = a, time.Now()
	c.partial, c.thinking, c.dirty = c.partial[:0], c.thinking[:0], true
	since, live := c.since, c.live
	c.mu.Unlock()
	if live != nil {
		live(event.Live{Activity: a, Since: since})
	}
	c.wake()
}

// newAnswer starts the streamed text of a new answer.
func (c *control) newAnswer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.partial) > 0 || len(c.thinking) > 0 {
		c.partial, c.thinking, c.dirty = c.partial[:0], c.thinking[:0], true
	}
}

// delta takes one streamed fragment of an answer: its text or its
// readable thinking, each kept apart for attached surfaces (bounded).
func (c *control) delta(d llm.Delta) {
	if (d.Kind != llm.DeltaText && d.Kind != llm.DeltaThinking) || d.Text == "" {
		return
	}
	thinking := d.Kind == llm.DeltaThinking
	c.mu.Lock()
	if thinking {
		// Its newest part is what a surface shows moving.
		c.thinking = keepTail(append(c.thinking, d.Text...))
	} else if room := maxPartial - len(c.partial); room > 0 {
		c.partial = append(c.partial, d.Text[:min(room, len(d.Text))]...)
	}
	c.dirty = true
	live := c.live
	c.mu.Unlock()
	if live != nil {
		live(event.Live{Text: d.Text, Thinking: thinking})
	}
}

// Write takes a running command's output as it is produced (tool.Env's
// Output): its tail is kept for attached surfaces, which read it from the
// store (redacted, see runtime). It never waits on a surface: the
// command's output pump calls it.
func (c *control) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.partial = keepTail(append(c.partial, p...))
	c.dirty = true
	c.mu.Unlock()
	return len(p), nil
}

// keepTail bounds b by its newest half of maxPartial once it grows past
// maxPartial.
func keepTail(b []byte) []byte {
	if len(b) > maxPartial {
		b = append(b[:0], b[len(b)-maxPartial/2:]...)
	}
	return b
}

// maxPartial bounds the streamed answer (or output) kept for attached
// surfaces.
const maxPartial = 64 << 10

// runtime is what the store's task_runtime row says of the run now.
func (c *control) runtime() (activity string, since time.Time, partial, thinking string) {
	// Copied under the lock, cleaned after it: the output pump and the
	// stream wait on the lock.
	c.mu.Lock()
	c.dirty = false
	partial, thinking, activity, since = string(c.partial), string(c.thinking), c.activity, c.since
	c.mu.Unlock()
	partial, thinking = strings.ToValidUTF8(partial, ""), strings.ToValidUTF8(thinking, "")
	if c.redact != nil {
		// A command can print a credential, a model repeat one; the store
		// never keeps one.
		partial, thinking = c.redact(partial), c.redact(thinking)
	}
	return activity, since, partial, thinking
}

// partialDirty says a fragment arrived that the store has not seen.
func (c *control) partialDirty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dirty
}

// pollEvery is how often a live run looks for requests.
func (o Options) pollEvery() time.Duration {
	if o.PollEvery > 0 {
		return o.PollEvery
	}
	return 200 * time.Millisecond
}

// watch runs beside the loop until ctx ends: it keeps the run's
// heartbeat, and sets aside a model answer in flight when a request that
// cannot wait for it arrives (cancel, stop, pause, steering now).
func (r *runner) watch(ctx context.Context) {
	tick := time.NewTicker(r.o.pollEvery())
	defer tick.Stop()
	host, _ := os.Hostname()
	var last time.Time
	beat := func() {
		a, since, partial, thinking := r.ctl.runtime()
		_ = r.o.Store.Beat(context.Background(), r.row.ID, store.Runtime{PID: os.Getpid(), Host: host, Worktree: r.row.Workspace.Worktree,
			Model: r.o.Model, ContextWindow: r.o.ContextWindow, Activity: a, ActivitySince: since, Partial: partial, Thinking: thinking})
		last = time.Now()
	}
	beat()
	// The streamed answer reaches the store at most this often.
	const partialEvery = 150 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			// The run's process stops driving it: nothing is under way.
			r.ctl.setActivity("")
			r.ctl.newAnswer()
			beat()
			return
		case <-r.ctl.poke:
			beat()
			continue
		case <-tick.C:
		}
		if time.Since(last) >= tasks.BeatEvery || (r.ctl.partialDirty() && time.Since(last) >= partialEvery) {
			beat()
		}
		r.ctl.mu.Lock()
		cancel := r.ctl.modelCancel
		r.ctl.mu.Unlock()
		if cancel == nil {
			continue
		}
		qs, err := r.o.Store.OpenRequests(ctx, r.row.ID)
		if err != nil {
			continue
		}
		for _, q := range qs {
			if urgent(q) {
				cancel()
				break
			}
		}
	}
}

func urgent(q store.Request) bool {
	switch q.Kind {
	case store.ReqCancel, store.ReqStop, store.ReqPause:
		return true
	case store.ReqSteer:
		return q.Scope == axes.ScopeNow
	}
	return false
}

// streamModel asks the model with a context the watcher may cancel; a
// cancelled answer is set aside (ok false, no error) and asked again
// after the request that cancelled it was taken.
func (r *runner) streamModel(ctx context.Context, req llm.Request) (resp *llm.Response, setAside bool, err error) {
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.ctl.mu.Lock()
	r.ctl.modelCancel = cancel
	r.ctl.mu.Unlock()
	r.ctl.begin("waiting for the model")
	resp, err = r.model.Stream(mctx, req, r.ctl.delta)
	// The answer is whole now: its events say it.
	r.ctl.newAnswer()
	r.ctl.mu.Lock()
	r.ctl.modelCancel = nil
	r.ctl.mu.Unlock()
	// Set aside: this stream was cancelled (by the watcher), the run was
	// not. An answer that came whole is kept.
	if err != nil && mctx.Err() != nil && ctx.Err() == nil {
		return nil, true, nil
	}
	return resp, false, err
}

// safePoint takes the run's open requests at a point between tool calls
// and model requests: cancel, stop and pause end the run here; steering
// whose scope has come is applied; a request whose scope has not come
// waits. It returns once nothing of a person's holds the run.
func (r *runner) safePoint(ctx context.Context) {
	if r.stop != nil {
		return
	}
	qs, err := r.o.Store.OpenRequests(ctx, r.row.ID)
	if err != nil {
		return
	}
	for _, q := range qs {
		if r.stop != nil {
			return
		}
		r.take(ctx, q)
	}
}

// endingRequests decides how an interrupted run ends: ultra cancel
// interrupts a live run (a tool call that runs is cut short), and what it
// asked is taken here. Pause and stop do not interrupt: they wait for
// the next safe point (a long tool call finishes first).
func (r *runner) endingRequests() {
	qs, err := r.o.Store.OpenRequests(context.Background(), r.row.ID)
	if err != nil {
		return
	}
	for _, q := range qs {
		switch q.Kind {
		case store.ReqCancel, store.ReqStop, store.ReqPause:
			r.stop = nil
			r.take(context.Background(), q)
			return
		}
	}
}

// take handles one open request at a safe point.
func (r *runner) take(ctx context.Context, q store.Request) {
	switch q.Kind {
	case store.ReqCancel:
		r.done(q, "applied")
		r.cancelHere(firstNonEmpty(q.Reason, "cancelled by a person"))
	case store.ReqStop:
		r.done(q, "applied")
		r.finish(StatusStopped, firstNonEmpty(q.Reason, "stopped by a person")+fmt.Sprintf(" (ultra resume %s continues it)", r.row.ID))
	case store.ReqPause:
		r.done(q, "applied")
		r.finish(StatusPaused, firstNonEmpty(q.Reason, "paused by a person")+fmt.Sprintf(" (ultra next %s or ultra resume %s goes on)", r.row.ID, r.row.ID))
	case store.ReqNext:
		r.ctl.unitCredit++
		r.done(q, "applied")
	case store.ReqSteer:
		if err := r.checkSteer(q); err != nil {
			r.done(q, "refused: "+err.Error())
			return
		}
		if !r.scopeCame(q) {
			if _, seen := r.ctl.deferred[q.ID]; !seen {
				if r.ctl.deferred == nil {
					r.ctl.deferred = map[int64][2]int{}
				}
				r.ctl.deferred[q.ID] = [2]int{r.ctl.units, r.ctl.milestones}
				r.emit(event.Control, event.ControlData{Request: q.ID, Kind: q.Kind, Outcome: "pending", Scope: q.Scope, Who: q.Who})
			}
			return
		}
		if err := r.applySteer(ctx, q); err != nil {
			r.done(q, "refused: "+err.Error())
			return
		}
		delete(r.ctl.deferred, q.ID)
		// Every surface sees the new axes at once, not at the step's end.
		_ = r.save()
		r.done(q, "applied")
	case store.ReqApprove, store.ReqDeny:
		// Only a call that waits takes these (waitApproval).
		r.done(q, "refused: no tool call waits for a person's approval now")
	default:
		r.done(q, "refused: unknown request "+q.Kind)
	}
}

// done marks a request taken, with its outcome, and says so on the
// event stream.
func (r *runner) done(q store.Request, outcome string) {
	if err := r.o.Store.FinishRequest(context.Background(), q.ID, outcome); err != nil {
		return // another process took it
	}
	r.emit(event.Control, event.ControlData{Request: q.ID, Kind: q.Kind, Outcome: outcome, Scope: q.Scope, Who: q.Who})
}

// scopeCame reports that a steering request's scope has come.
func (r *runner) scopeCame(q store.Request) bool {
	switch q.Scope {
	case "", axes.ScopeNow, axes.ScopeAfterTool:
		return true
	}
	at, seen := r.ctl.deferred[q.ID]
	if !seen {
		return false
	}
	if q.Scope == axes.ScopeAfterUnit {
		return r.ctl.units > at[0]
	}
	return r.ctl.milestones > at[1]
}

// noteTransition counts units and milestones for the scopes.
func (r *runner) noteTransition(tr phase.Transition) {
	r.ctl.units++
	if tr.By == phase.ByPerson {
		// A person moved the run: they are here, nothing to pause for.
		r.ctl.pausedUnit = r.ctl.units
	}
	switch {
	case tr.By == phase.ByGate, tr.By == phase.ByReviewer,
		tr.From == phase.Planning && tr.To == phase.Building:
		r.ctl.milestones++
	}
}

// checkSteer refuses an impossible steering request with the reason.
func (r *runner) checkSteer(q store.Request) error {
	next, err := r.row.Axes.Steer(q.Axes)
	if err != nil {
		return err
	}
	if err := axes.CheckScope(q.Scope); err != nil {
		return err
	}
	return r.o.steerPossible(r.row.Axes, next, r.st.Phase)
}

// steerPossible refuses a change of axes from cur to next that a run in
// state st cannot take: a mode whose table differs in kind, a profile
// that needs a sandbox this machine does not have.
func (o Options) steerPossible(cur, next axes.Axes, st phase.State) error {
	if next.Mode != cur.Mode {
		if _, _, err := st.SwitchMode(next.Mode); err != nil {
			var re *phase.RefusedError
			if errors.As(err, &re) && re.Why != "" {
				return errors.New(re.Why)
			}
			return err
		}
	}
	if next.Permission != cur.Permission {
		if err := o.checkContainment(next.Permission); err != nil {
			return err
		}
	}
	return nil
}

// applySteer changes the run's axes: every change is recorded (from, to,
// reason, scope, who, session, time) and the tools, the sandbox and the
// model follow from the new values at the next request.
func (r *runner) applySteer(ctx context.Context, q store.Request) error {
	next, err := r.row.Axes.Steer(q.Axes)
	if err != nil {
		return err
	}
	return r.setAxes(ctx, next, firstNonEmpty(q.Reason, "steered by a person"), q.Scope, q.Who, q.Session)
}

// setAxes moves the run to axes next.
func (r *runner) setAxes(ctx context.Context, next axes.Axes, reason, scope, who, session string) error {
	changes := axes.Diff(r.row.Axes, next)
	if len(changes) == 0 {
		return nil
	}
	if next.Mode != r.row.Axes.Mode {
		ns, tr, err := r.st.Phase.SwitchMode(next.Mode)
		if err != nil {
			return err
		}
		if tr.To != "" {
			r.applyTransition(ns, tr)
		} else {
			r.st.Phase = ns
		}
	}
	prev := r.row.Axes
	r.row.Axes = next
	if r.st.Goals != nil && next.Mode != prev.Mode {
		r.st.Goals.PlanOnly = next.Mode == phase.Plan
	}
	if next.Permission != prev.Permission || next.Mode != prev.Mode {
		sb, err := bashSandbox(ctx, r.o, r.row, r.st.DepDirs)
		if err != nil {
			r.row.Axes = prev
			return fmt.Errorf("preparing the sandbox of the %s profile: %w", next.Permission, err)
		}
		r.env.Sandbox = sb
	}
	if who == "" {
		who = "person"
	}
	now := r.o.Now()
	for _, c := range changes {
		r.pendingTrans = append(r.pendingTrans, store.Transition{Kind: "axis", Axis: c.Axis, From: c.From, To: c.To, By: who,
			Reason: reason, Scope: scope, Session: session, At: now})
		r.emit(event.AxisChanged, event.AxisChangedData{Axis: c.Axis, From: c.From, To: c.To, Reason: reason, Scope: scope, By: who, Axes: next})
	}
	// Told before the next request: a message may not come between an
	// answer's calls and their results.
	r.notes = append(r.notes, "A person changed this run's axes ("+axesChangeText(changes)+"): "+reason+
		". The tools and rules of the reminder below now apply.")
	return nil
}

func axesChangeText(cs []axes.Change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %s → %s", c.Axis, c.From, c.To)
	}
	return strings.Join(parts, ", ")
}

// cancelHere ends the run for good from inside its own process.
func (r *runner) cancelHere(reason string) {
	if !r.st.Phase.Phase.Terminal() || r.st.Phase.Phase == phase.Escalated {
		if err := r.transition(phase.Cancelled, phase.ByPerson, reason, ""); err != nil {
			r.emit(event.Warning, event.WarningData{Message: "cancel: " + err.Error()})
		}
	}
	r.finish(StatusCancelled, reason)
	r.releaseGoals(reason)
}

// releaseGoals releases the goal in progress of a cancelled run and
// records the cancel in its ledger.
func (r *runner) releaseGoals(reason string) {
	if r.goals == nil || r.goals.file == nil {
		return
	}
	for i := range r.goals.file.Goals {
		if g := &r.goals.file.Goals[i]; g.Status == goal.InProgress {
			g.Status, g.Reason = goal.Pending, "released: the run was cancelled"
		}
	}
	r.recordGoal(ledger.Entry{Kind: ledger.KindCancelled, Text: reason})
}

// assistedPause holds an assisted run at the end of each unit (a phase)
// until a person says next; with NoWait the run pauses instead.
func (r *runner) assistedPause(ctx context.Context) {
	assisted := r.row.Axes.Control == "assisted" || r.o.OneUnit
	if !assisted || r.ctl.units <= r.ctl.pausedUnit || r.st.Phase.Phase.Terminal() {
		return
	}
	r.ctl.pausedUnit = r.ctl.units
	if r.ctl.unitCredit > 0 {
		r.ctl.unitCredit--
		return
	}
	why := fmt.Sprintf("the unit ended: the run is in %s (run control %s)", r.st.Phase.Phase, r.row.Axes.Control)
	if r.o.OneUnit {
		why = fmt.Sprintf("one unit done: the run is in %s", r.st.Phase.Phase)
	}
	if r.o.NoWait || r.o.OneUnit {
		r.finish(StatusPaused, why+fmt.Sprintf("; ultra next %s goes on", r.row.ID))
		return
	}
	r.waitFor(ctx, "next", fmt.Sprintf("%s; waiting for ultra next %s", why, r.row.ID), func(q store.Request) bool {
		if q.Kind != store.ReqNext {
			return false
		}
		r.done(q, "applied")
		return true
	}, func() bool { return r.row.Axes.Control != "assisted" })
}

// waitFor holds the run until accept takes a request, released says the
// wait is over (a person changed the run control), a request ends the
// run (cancel, stop, pause), or ctx ends. Steering is taken meanwhile;
// a decision or next meant for another wait is refused at once.
func (r *runner) waitFor(ctx context.Context, what, why string, accept func(store.Request) bool, released func() bool) {
	r.waitingOn = why
	r.ctl.setActivity(why)
	r.emit(event.Control, event.ControlData{Kind: what, Outcome: "waiting: " + why})
	_ = r.save()
	defer func() { r.waitingOn = "" }()
	tick := time.NewTicker(r.o.pollEvery())
	defer tick.Stop()
	for {
		qs, _ := r.o.Store.OpenRequests(ctx, r.row.ID)
		for _, q := range qs {
			if accept(q) {
				return
			}
			switch q.Kind {
			case store.ReqApprove, store.ReqDeny, store.ReqNext:
				r.done(q, "refused: the run waits for something else: "+why)
				continue
			}
			r.take(ctx, q)
			if r.stop != nil || released() {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// asksAPerson says call c waits for a person before it runs: manual
// control, unless a person's earlier answer covers it (its tool, or every
// read-only call, for the rest of the run). A call that proposes the plan
// waits too (a goals call runs its criteria on the base tree): shown as
// the plan, and a person's allowing it accepts the plan it proposes.
func (r *runner) asksAPerson(c llm.ToolCall) bool {
	switch {
	case r.row.Axes.Control != "manual", slices.Contains(r.st.AllowedTools, c.Name):
		return false
	case r.st.AllowReadOnly:
		return !r.readOnly(c)
	}
	return true
}

// readOnly says call c's tool only reads (Tool.ReadOnly: read, glob, grep;
// never bash, whatever its command).
func (r *runner) readOnly(c llm.ToolCall) bool {
	t, ok := r.tools[c.Name]
	return ok && t.ReadOnly()
}

// proposesPlan says call c can only propose a plan a person then accepts
// (and a person's allowing it is that acceptance):
// a goals call, or a phase call from planning to building, under a run
// control that never accepts a plan without a person. Whatever its
// arguments, such a call ends with the plan waiting (or refused).
func (r *runner) proposesPlan(c llm.ToolCall) bool {
	if r.row.Axes.AcceptsPlanWithoutPerson() || r.st.Phase.Phase != phase.Planning {
		return false
	}
	if c.Name == "goals" {
		return true
	}
	var a struct {
		To string `json:"to"`
	}
	return c.Name == "phase" && json.Unmarshal([]byte(c.Arguments), &a) == nil && strings.TrimSpace(a.To) == string(phase.Building)
}

// planAllowedNow says a person allowed the running call, which proposes
// a plan (proposesPlan), having read it.
func (r *runner) planAllowedNow() bool {
	return r.planAllowed != "" && r.planAllowed == r.callID
}

// approved holds a call of a manual run until a person allows or denies
// it. ok false: the call does not run, and res says why.
func (r *runner) approved(ctx context.Context, c llm.ToolCall) (res tool.Result, ok bool) {
	if !r.asksAPerson(c) {
		return tool.Result{}, true
	}
	r.emit(event.Approval, event.ApprovalData{CallID: c.ID, Tool: c.Name, Args: rawArgs(c.Arguments), State: "waiting", ReadOnly: r.readOnly(c), Axes: r.row.Axes})
	how := fmt.Sprintf("ultra approve %s --call %s (or --deny REASON)", r.row.ID, c.ID)
	if r.readOnly(c) {
		how = fmt.Sprintf("ultra approve %s --call %s (--read-only: every read-only call for the rest of the run; or --deny REASON)", r.row.ID, c.ID)
	}
	call := c
	if r.o.NoWait {
		r.st.AwaitingCall = &call
		r.finish(StatusNeedsApproval, fmt.Sprintf("call %s (%s) waits for a person's approval: %s", c.ID, c.Name, how))
		return tool.Result{IsError: true, Output: "not run yet: run control is manual and this call waits for a person's approval"}, false
	}
	var decision *store.Request
	r.st.AwaitingCall = &call // saved by waitFor: every surface reads the waiting call from it
	defer func() {
		if ok || decision != nil || (r.stop == nil && ctx.Err() == nil) {
			r.st.AwaitingCall = nil
		}
	}()
	r.waitFor(ctx, "approval", fmt.Sprintf("call %s (%s) waits for a person's approval: %s", c.ID, c.Name, how), func(q store.Request) bool {
		if (q.Kind != store.ReqApprove && q.Kind != store.ReqDeny) || (q.CallID != "" && q.CallID != c.ID) {
			return false
		}
		decision = &q
		r.done(q, "applied")
		return true
	}, func() bool { return r.row.Axes.Control != "manual" })
	switch {
	case decision != nil:
		return r.decide(c, *decision)
	case r.stop == nil && ctx.Err() == nil:
		// A person changed the run control: the call needs no approval.
		r.emit(event.Approval, event.ApprovalData{CallID: c.ID, Tool: c.Name, State: "allowed",
			Reason: "run control is now " + r.row.Axes.Control, Axes: r.row.Axes})
		return tool.Result{}, true
	case ctx.Err() != nil:
		return tool.Result{IsError: true, Output: "interrupted while this call waited for a person's approval"}, false
	}
	// Paused, stopped or interrupted while it waited: the call still
	// waits (AwaitingCall), for the person who resumes the run.
	return tool.Result{IsError: true, Output: "not run yet: the run stopped while this call waited for a person's approval (" + r.stop.Reason + ")"}, false
}

// decide applies a person's decision on call c.
func (r *runner) decide(c llm.ToolCall, q store.Request) (tool.Result, bool) {
	if q.Kind == store.ReqDeny {
		reason := firstNonEmpty(q.Reason, "no reason given")
		r.emit(event.Approval, event.ApprovalData{CallID: c.ID, Tool: c.Name, State: "denied", Reason: reason, Axes: r.row.Axes})
		return tool.Result{IsError: true, Output: "Denied by a person: " + reason}, false
	}
	state := "allowed"
	switch q.Scope {
	case ApproveForRun:
		state = "allowed_for_run"
		if !slices.Contains(r.st.AllowedTools, c.Name) {
			r.st.AllowedTools = append(r.st.AllowedTools, c.Name)
		}
	case ApproveReadOnly:
		state = "allowed_read_only_for_run"
		r.st.AllowReadOnly = true
	}
	if r.proposesPlan(c) {
		// The person read the plan and allowed it: the plan it makes is
		// accepted, not asked for again.
		r.planAllowed = c.ID
	}
	r.emit(event.Approval, event.ApprovalData{CallID: c.ID, Tool: c.Name, State: state, Reason: q.Reason, Axes: r.row.Axes})
	return tool.Result{}, true
}

// resumeAwaiting settles the call a manual run stopped on (NoWait): the
// person's decision is among the run's open requests; an allowed call is
// guarded again and run, and the model reads what became of it.
func (r *runner) resumeAwaiting(ctx context.Context) error {
	c := r.st.AwaitingCall
	if c == nil {
		return nil
	}
	decision, err := awaitingDecision(ctx, r.o.Store, r.row.ID, *c)
	if err != nil {
		return err
	}
	r.done(*decision, "applied")
	r.st.AwaitingCall = nil
	res, ok := r.decide(*c, *decision)
	if ok {
		if ref := r.check(*c); ref != nil {
			res = r.refuse(*c, ref)
		} else {
			r.callID = c.ID
			res = r.runOne(ctx, *c)
		}
		res.Output = r.redact(res.Output)
	}
	r.record(*c, res, 0)
	r.appendMessage(llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("Your call %s (%s %s) waited for a person. %s\n%s",
		c.ID, c.Name, oneLine(c.Arguments, 200), map[bool]string{true: "It was approved and ran:", false: "It did not run:"}[ok], resultText(res))})
	return nil
}

// waiting says what the run waits on a person for ("" for nothing).
func (r *runner) waiting() string {
	switch {
	case r.waitingOn != "":
		return r.waitingOn
	case r.st.AwaitingCall != nil:
		c := r.st.AwaitingCall
		w := fmt.Sprintf("approval of call %s (%s): ultra approve %s --call %s", c.ID, c.Name, r.row.ID, c.ID)
		if r.readOnly(*c) {
			w += " (--read-only: every read-only call for the rest of the run)"
		}
		return w
	case r.st.PendingPlan != "":
		return "plan acceptance: ultra approve " + r.row.ID
	case r.stop != nil && r.stop.Status == StatusPaused:
		return "next: ultra next " + r.row.ID
	}
	return ""
}

// closeRequests takes every request still open for a run that has ended
// for good: none of them can be applied any more.
func closeRequests(ctx context.Context, st *store.Store, run, status string) {
	qs, err := st.OpenRequests(ctx, run)
	if err != nil {
		return
	}
	for _, q := range qs {
		_ = st.FinishRequest(ctx, q.ID, "not applied: the run is "+status)
	}
}

// flushNotes adds what the model must be told before its next request.
func (r *runner) flushNotes() {
	for _, n := range r.notes {
		r.appendMessage(llm.Message{Role: llm.RoleUser, Content: n})
	}
	r.notes = nil
}

// awaitingDecision finds a person's decision on call c of run among its
// open requests, or says how to give one.
func awaitingDecision(ctx context.Context, st *store.Store, run string, c llm.ToolCall) (*store.Request, error) {
	qs, err := st.OpenRequests(ctx, run)
	if err != nil {
		return nil, err
	}
	for _, q := range qs {
		if (q.Kind == store.ReqApprove || q.Kind == store.ReqDeny) && (q.CallID == "" || q.CallID == c.ID) {
			return &q, nil
		}
	}
	return nil, fmt.Errorf("run %s waits for a person's decision on call %s (%s): ultra approve %s --call %s (or --deny REASON)", run, c.ID, c.Name, run, c.ID)
}

// checkAgain judges a call that waited for a person again, by the axes
// that hold now (they may have changed while it waited); a call that did
// not wait was judged a moment ago.
func (r *runner) checkAgain(c llm.ToolCall, waited bool) *refusal {
	if !waited {
		return nil
	}
	return r.check(c)
}
