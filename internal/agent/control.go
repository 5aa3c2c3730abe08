package agent

import (
	"context"
	"fmt"
	"os"
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
	host := Hostname()
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

// cancelHere ends the run for good from inside its own process.
func (r *runner) cancelHere(reason string) {
	if !r.st.Phase.Phase.Terminal() || r.st.Phase.Phase == phase.Escalated {
		if err := r.transition(phase.Cancelled, phase.ByPerson, reason, ""); err != nil {
			r.emit(event.Warning, event.WarningData{Message: "cancel: " + err.Error()})
		}
	}
	r.finish(StatusCancelled, reason)
	r.releaseGoals(reason)
	if r.worker() != nil {
		// A cancelled worker never lands: what it claimed is free.
		_, _ = r.o.Store.ReleaseClaims(context.Background(), r.row.ID, "the worker was cancelled", r.o.Now())
	}
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
