package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/rules"
	"github.com/ultra-dev/ultra/internal/store"
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
	r.notifyHooks("ultra: run " + r.row.ID + " waits for a person: " + why)
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
	return r.whyAsks(c) != ""
}

// whyAsks is why call c waits for a person ("" when it does not; see
// asksAPerson).
func (r *runner) whyAsks(c llm.ToolCall) string {
	d := r.ruleDecision(c)
	allowed := d.Kind == rules.Allow || r.hookSays[c.ID] == "allow"
	switch {
	case r.mcpPolicyAsks(c.Name):
		return "your configuration's policy for " + c.Name + " is \"ask\""
	case d.Kind == rules.Ask:
		return "your permission rule " + d.Rule.Text + " (" + d.Rule.Source + ") asks"
	case r.hookSays[c.ID] == "ask":
		return "a PreToolUse hook of yours asks"
	case r.mcpDestructive(c.Name) && !allowed:
		// A destructive tool the person said nothing of: a person
		// confirms it under every run control.
		return "its MCP server marks " + c.Name + " destructive, and nothing of yours allows it (an allow rule, or tools." + mcpToolOf(c.Name) + " = \"allow\", spares the wait)"
	case r.row.Axes.Control != "manual", allowed:
		// A person's allow rule is their approval, given ahead.
		return ""
	case r.st.AllowReadOnly && r.readOnly(c):
		return ""
	case slices.Contains(r.st.AllowedTools, c.Name):
		// A tool a person allowed for the run spares manual control's
		// wait, never what their rules, policies, hooks or a destructive
		// tool ask: one harmless call's answer is no blanket allowance.
		return ""
	}
	return "run control is manual"
}

// readOnly says call c's tool only reads (Tool.ReadOnly: read, glob, grep;
// never bash, whatever its command).
func (r *runner) readOnly(c llm.ToolCall) bool {
	t, ok := r.tools[c.Name]
	return ok && t.ReadOnly()
}

// builtinReadOnly says the built-in tool named name only reads (what a
// run's readOnly says of it, for callers without the run).
func builtinReadOnly(name string) bool {
	for _, t := range tool.Builtins() {
		if t.Spec().Name == name {
			return t.ReadOnly()
		}
	}
	return false
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
		why := r.whyAsks(c)
		r.finish(StatusNeedsApproval, fmt.Sprintf("call %s (%s) waits for a person's approval (%s): %s", c.ID, c.Name, why, how))
		return tool.Result{IsError: true, Output: "not run yet: this call waits for a person's approval (" + why + ")"}, false
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
		if q.Kind == store.ReqApprove && q.Scope == ApproveReadOnly && !r.readOnly(c) {
			// "Read-only calls" never allows a call that writes: the
			// answer holds for the read-only calls to come, and this one
			// still waits for its own.
			r.st.AllowReadOnly = true
			r.emit(event.Approval, event.ApprovalData{Tool: "read, glob, grep", State: "allowed_read_only_for_run", Reason: q.Reason, Axes: r.row.Axes})
			r.done(q, fmt.Sprintf("applied: read-only calls are allowed for the rest of the run; call %s (%s) is not read-only and still waits: ultra approve %s --call %s (or --deny REASON)", c.ID, c.Name, r.row.ID, c.ID))
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
		state := "denied"
		if q.Scope == ApproveForRun {
			// The tool is refused for the rest of the run, by the guard,
			// whatever the run control becomes.
			state = "denied_for_run"
			if r.st.DeniedTools == nil {
				r.st.DeniedTools = map[string]string{}
			}
			r.st.DeniedTools[c.Name] = reason
		}
		r.emit(event.Approval, event.ApprovalData{CallID: c.ID, Tool: c.Name, State: state, Reason: reason, Axes: r.row.Axes})
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
