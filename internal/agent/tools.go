package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/tool"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// funcTool is a tool whose behaviour belongs to the runner.
type funcTool struct {
	spec llm.ToolSpec
	run  func(ctx context.Context, args json.RawMessage) tool.Result
}

func (f funcTool) Spec() llm.ToolSpec { return f.spec }
func (f funcTool) ReadOnly() bool     { return false }
func (f funcTool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	return f.run(ctx, args)
}

var phaseSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"to":{"type":"string","enum":["building","verifying"]},` +
	`"reason":{"type":"string","description":"Why, one line"},` +
	`"plan":{"type":"string","description":"Required to leave planning: short numbered steps"}},` +
	`"required":["to"],"additionalProperties":false}`)

func (r *runner) phaseTool() tool.Tool {
	return funcTool{
		spec: llm.ToolSpec{Name: "phase", Parameters: phaseSchema,
			Description: "Move to the next phase: planning→building (with a plan); building/iterating→verifying when the change is ready; cleaning→verifying ends the cleanup pass. Only a passing verify completes the run."},
		run: r.runPhase,
	}
}

func (r *runner) runPhase(ctx context.Context, args json.RawMessage) tool.Result {
	var a struct {
		To     string `json:"to"`
		Reason string `json:"reason"`
		Plan   string `json:"plan"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return tool.Result{IsError: true, Malformed: true, Output: "invalid arguments for phase: " + err.Error()}
	}
	if strings.TrimSpace(a.To) == "" {
		return tool.Result{IsError: true, Malformed: true, Output: `missing required argument "to"`}
	}
	to, err := phase.Parse(a.To)
	if err != nil {
		return tool.Result{IsError: true, Malformed: true, Output: err.Error()}
	}
	from := r.st.Phase.Phase
	if to == phase.Complete {
		return r.refuseTransition("complete", "only a passing verification completes a run: call phase{to:\"verifying\"}, then verify")
	}
	if from == phase.Planning && to == phase.Building && r.hasGoals() {
		return r.refuseTransition(a.To, "this run works through goals: propose them with goals{goals:[...]} (each with success criteria ultra runs itself); accepting them leaves planning")
	}
	if from == phase.Planning && to == phase.Building {
		plan := strings.TrimSpace(a.Plan)
		if plan == "" {
			return r.refuseTransition(a.To, "leaving planning needs a non-empty plan argument")
		}
		if r.planAllowedNow() {
			r.st.PendingPlan = plan
			r.acceptPlan(phase.ByPerson, "accepted by a person, who allowed the phase call that proposed it")
			return tool.Result{Output: "Plan accepted by a person. Phase is now building: make the change, then call phase{to:\"verifying\"}."}
		}
		if !r.row.Axes.AcceptsPlanWithoutPerson() {
			r.st.PendingPlan = plan
			r.emit(event.PlanProposed, event.PlanProposedData{Plan: plan, Accepted: false, By: r.row.Axes.Control})
			return tool.Result{Output: fmt.Sprintf("Plan recorded. Run control is %s: a person must approve it (ultra approve %s). The run pauses until then.",
				r.row.Axes.Control, r.row.ID)}
		}
		r.st.PendingPlan = plan
		r.acceptPlan(phase.ByModel, firstNonEmpty(a.Reason, "plan accepted (autonomous)"))
		return tool.Result{Output: "Plan accepted. Phase is now building: make the change, then call phase{to:\"verifying\"}."}
	}
	if from == phase.Cleaning && to == phase.Verifying && r.hasGoals() {
		return r.endCleanup(ctx, phase.ByModel, firstNonEmpty(a.Reason, "the model ended the cleanup pass"))
	}
	if err := r.transition(to, phase.ByModel, firstNonEmpty(a.Reason, "requested by the model"), a.Plan); err != nil {
		return r.refuseTransition(a.To, err.Error())
	}
	return tool.Result{Output: fmt.Sprintf("Phase is now %s. %s", to, r.st.Phase.Purpose())}
}

// acceptPlan takes the pending plan out of planning into building.
func (r *runner) acceptPlan(by phase.Actor, reason string) {
	plan := r.st.PendingPlan
	if err := r.transition(phase.Building, by, reason, plan); err != nil {
		r.emit(event.Warning, event.WarningData{Message: "plan not accepted: " + err.Error()})
		return
	}
	r.st.PendingPlan = ""
	who := string(by)
	if by == phase.ByModel {
		who = "autonomous run control"
	}
	if r.hasGoals() {
		r.acceptGoals(who)
	}
	r.emit(event.PlanProposed, event.PlanProposedData{Plan: plan, Accepted: true, By: who})
}

func (r *runner) refuseTransition(to, why string) tool.Result {
	return r.refuse(llm.ToolCall{ID: r.callID, Name: "phase"}, &refusal{layer: LayerTransition,
		reason: fmt.Sprintf("the phase machine does not allow %s → %s: %s", r.st.Phase.Phase, to, why)})
}

var verifySchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

func (r *runner) verifyTool() tool.Tool {
	return funcTool{
		spec: llm.ToolSpec{Name: "verify", Parameters: verifySchema,
			Description: "Run the project's tests (ultra finds them). Pass completes the run; fail goes to iterating."},
		run: r.runVerify,
	}
}

func (r *runner) runVerify(ctx context.Context, _ json.RawMessage) tool.Result {
	if r.st.Phase.Phase != phase.Verifying {
		return r.refuse(llm.ToolCall{ID: r.callID, Name: "verify"}, &refusal{layer: LayerVerifyPhase,
			reason: fmt.Sprintf("verify runs only in verifying; the run is in %s", r.st.Phase.Phase)})
	}
	start := r.o.Now()
	// One hash of the tree for the gate and the checks started beside it.
	tree, _ := workspace.TreeHash(ctx, r.row.Workdir)
	// What ran ahead while the model worked, when it is of this tree.
	tested, a := r.takeTestsAhead(tree)
	drift := r.early.drift
	r.early.drift = nil
	if a != nil && a.drift == nil && drift != nil {
		if _, _, label := r.nextCriteria(); label != "" {
			a.drift, drift = r.wantedDrift(ctx, label, drift), nil
		}
	}
	if a == nil {
		a = r.startAhead(ctx, tree, drift)
	} else {
		r.dropDrift(drift)
	}
	if a != nil {
		r.goals.ahead = a
		defer func() { r.goals.ahead = nil; a.finish(r) }()
	}
	d, res, path, err := r.gateVerify(ctx, tree, tested)
	if ctx.Err() != nil {
		return tool.Result{IsError: true, Output: "verification interrupted"}
	}
	if err != nil {
		// Fail closed: a gate that cannot record its decision proves nothing.
		d = gate.Decision{Status: gate.NotEvaluated, Reasons: []string{"the gate could not record its decision: " + err.Error()}}
	}
	if d.Status.Advances() && r.st.Phase.ModeName() == phase.Repair && r.o.Health != nil {
		// A repair is verified by the gate and by doctor: the tests pass
		// and nothing that blocks verified work is left.
		if probs := r.o.Health(ctx, r.row.Workdir); len(probs) > 0 {
			d.Status = gate.Fail
			d.Reasons = append([]string{"the tests pass, but ultra doctor still finds what blocks verified work: " + strings.Join(probs, "; ")}, d.Reasons...)
		}
	}
	ev := verifyEvent(d, path)
	ev.Duration = r.o.Now().Sub(start).Round(time.Millisecond).String()
	r.emit(event.VerifyResult, ev)
	if d.NeedsWaiver && d.Waiver == nil {
		// The escalation says what a person does next.
		ev.Reason += fmt.Sprintf(" (to accept it: ultra gate waive %s --reason \"…\", then ultra resume %s; a role declared in .ultra/config counts from the next run)", r.row.ID, r.row.ID)
	}
	if r.hasGoals() && r.goals.file != nil && r.goals.file.Accepted != nil {
		return r.afterGoalVerify(ctx, d, res, path, ev)
	}

	next, tr, terr := r.st.Phase.AfterVerify(d.Outcome(), ev.Reason)
	if terr != nil {
		return tool.Result{IsError: true, Output: terr.Error()}
	}
	r.applyTransition(next, tr)
	out := gateSummary(d, res, path) + "\n\n"
	switch next.Phase {
	case phase.Complete:
		if d.Status == gate.Concerns {
			r.st.Deferred = append(r.st.Deferred, d.Reasons[1:]...)
		}
		r.finish(StatusComplete, tr.Reason)
		out += "The gate passed. The run is complete."
		out += r.commitGreen(ctx, d)
	case phase.Iterating:
		out += fmt.Sprintf("Phase is now iterating (%d retries left): fix the failures, then call phase{to:\"verifying\"}.", next.RetriesLeft())
	case phase.Escalated:
		r.finish(StatusEscalated, tr.Reason)
		out += "The run is escalated to a person: " + tr.Reason
	}
	return tool.Result{Output: out, IsError: !d.Status.Advances(), Data: map[string]any{"gate_status": string(d.Status), "gate_file": path}}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// finishRule is how a run of mode ends, for the model's reminders.
func finishRule(mode string) string {
	switch mode {
	case phase.Chat:
		return "your answer without a tool call is the result"
	case phase.Research:
		return "only report{title, body} ends it"
	case phase.Review:
		return "only review{verdict, findings} ends it"
	}
	return "only a passing verification completes it"
}

// systemPrompt is the stable prefix of every request: nothing in it
// changes from step to step.
func systemPrompt(mode, workdir, instructions string) string {
	p := buildPrompt(workdir)
	switch mode {
	case phase.Chat:
		p = `You are ultra, a coding agent, answering a person's questions about the repository at ` + workdir + `.
Read what you need with read, glob, grep and read-only bash (ls, cat, git log, …); nothing may change here.
When you know the answer, answer in plain text without calling a tool: that answer is the result. Be concise and exact; cite files and lines.`
	case phase.Research:
		p = `You are ultra, a coding agent, researching a question about the repository at ` + workdir + `.
Investigate the code, its dependencies and its design with read, glob, grep and read-only bash; nothing may change here.
task{prompt} starts a read-only helper with a fresh context and returns its report: use it for independent sub-questions.
End with report{title, body}: a markdown report with findings, evidence (files, lines, commands) and open questions. ultra writes it to .ultra/research/.`
	case phase.Review:
		p = reviewModePrompt(workdir)
	}
	if instructions != "" {
		p += "\n\nThe project's instructions for agents follow. They cannot change ultra's workflow or its rules.\n" + instructions
	}
	return p
}

func buildPrompt(workdir string) string {
	p := `You are ultra, an autonomous coding agent working in the repository at ` + workdir + `.
Nobody is watching: work until the task is done, without asking questions.

ultra enforces a fixed workflow in code:
1. planning: read the code (read, glob, grep, read-only bash). Then propose the goals with goals{goals:[...]}: each with success criteria that ultra runs itself, first on the code as it is now (each must fail there and pass after your change; a regression criterion must pass before and after), so at least one essential criterion per goal must run the program or its tests, not only grep the source. Acceptance moves the run to building.
2. building: make the change with edit, write and bash. Read a file before you edit or overwrite it. Then call phase{to:"verifying"}.
3. verifying: call verify. ultra runs the project's tests and the goal's criteria itself; when they pass, the goal is committed and the next one starts; a failure sends the run to iterating.
   After the last goal and the final gate: cleaning, a short cleanup pass where you may edit only the files the run changed (debugging leftovers, dead or duplicated code, comments that narrate the change), ended by phase{to:"verifying"}; ultra verifies it again and reverts a cleanup that breaks anything. Then a reviewer decides.
4. iterating: fix what failed, then phase{to:"verifying"} again.
Only a passing verify completes the run; saying you are done does not. Tools outside the current phase are refused.
Each request ends with an <ultra-reminder> that states the phase, the tools allowed now and the budgets left.
Paths are relative to the repository root. .ultra/ is ultra's own state: never write it.
Git: you work in your own worktree and branch. ultra commits your work itself each time the gate passes; do not commit, push, switch branches, reset to other commits or rewrite history (ultra's git guard refuses it).
Be concise. Prefer small, focused changes and keep the project's style.`
	return p
}
