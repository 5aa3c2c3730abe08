// Package phase is ultra's phase machine: the phases of a run, the legal
// transitions between them and who may ask for each, the tools every phase
// offers, and the retry and budget counters. It is pure: no I/O, no clock.
// Every phase change of a run goes through State.Transition or
// State.AfterVerify; nothing else moves a run.
package phase

import (
	"fmt"
	"slices"
	"strings"
)

// Phase is where a run stands.
type Phase string

const (
	Planning  Phase = "planning"
	Building  Phase = "building"
	Verifying Phase = "verifying"
	Iterating Phase = "iterating"
	// Cleaning: the cleanup pass of the final gate in a run with goals:
	// after the final gate passed, the model may edit only the files the
	// run changed (debugging leftovers, dead or duplicated code, comments
	// that narrate the change); the gate then judges the cleaned tree
	// again before the review.
	Cleaning Phase = "cleaning"
	// Reviewing: the final review of a run with goals, by a reviewer in a
	// fresh context with read-only tools.
	Reviewing Phase = "reviewing"
	// Answering: a chat answers a person's question (chat mode).
	Answering Phase = "answering"
	// Researching: a longer read-only investigation that ends with a
	// report ultra writes (research mode).
	Researching Phase = "researching"
	Complete    Phase = "complete"
	Escalated   Phase = "escalated"
	Cancelled   Phase = "cancelled"
)

// All lists every phase in flow order.
var All = []Phase{Planning, Building, Verifying, Iterating, Cleaning, Reviewing, Answering, Researching, Complete, Escalated, Cancelled}

// Parse turns a name into a Phase.
func Parse(s string) (Phase, error) {
	p := Phase(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(All, p) {
		return p, nil
	}
	return "", fmt.Errorf("unknown phase %q (phases: %s)", s, join(All))
}

// Terminal reports that no model step happens in p until a person acts.
func (p Phase) Terminal() bool {
	return p == Complete || p == Escalated || p == Cancelled
}

// Actor is who asks for a transition.
type Actor string

const (
	ByModel  Actor = "model"  // the phase tool
	ByGate   Actor = "gate"   // the result of verify
	ByBudget Actor = "budget" // a budget or the retry limit ran out
	ByPerson Actor = "person" // resume, approve, cancel
	// ByReviewer: the final review's verdict (the review tool).
	ByReviewer Actor = "reviewer"
	BySystem   Actor = "system" // ultra itself: a run that cannot go on
)

// edge is one legal transition and who may take it.
type edge struct {
	from, to Phase
	by       []Actor
}

// spec is the row of the phase table for one phase.
type spec struct {
	tools []string // tools offered, in the order they are offered
	// readOnlyShell: bash is offered, but only commands a parser proves
	// read-only may run.
	readOnlyShell bool
	purpose       string // one line for the reminder
}

var (
	readOnly = []string{"read", "glob", "grep"}
	// claim: offered only to the workers of a parallel run (the only
	// runs that have the tool).
	buildSet  = []string{"read", "write", "edit", "bash", "glob", "grep", "todo", "steer", "claim", "phase", "skill", MCPAll}
	planSet   = []string{"read", "glob", "grep", "bash", "todo", "goals", "phase", "skill", MCPRead}
	verifySet = []string{"read", "glob", "grep", "verify"}
	reviewSet = []string{"read", "glob", "grep", "review", MCPRead}
	// cleanSet: edit, but no write (the pass creates no file) and no bash
	// (a command could touch any file; edit is held to the files the run
	// changed by the guard). phase ends the pass.
	cleanSet = []string{"read", "glob", "grep", "edit", "phase"}
)

// table is the build mode's phase table (DESIGN.md): tools per phase.
var table = map[Phase]spec{
	Planning:  {tools: planSet, readOnlyShell: true, purpose: "read the code and propose the goals, each with success criteria that ultra will run itself; nothing may change. Leave with goals{goals:[...]}."},
	Building:  {tools: buildSet, purpose: "make the change. When it is ready, call phase{to:\"verifying\"}."},
	Verifying: {tools: verifySet, purpose: "call verify: ultra runs the tests itself and its result decides what happens next."},
	Iterating: {tools: buildSet, purpose: "fix what the last verification found, then call phase{to:\"verifying\"}."},
	Cleaning:  {tools: cleanSet, purpose: "the cleanup pass: edit only the files the run changed, to remove debugging leftovers, dead or duplicated code and comments that narrate the change (no behaviour may change). End the pass with phase{to:\"verifying\"}, with or without a change: ultra runs the tests and every criterion again, and reverts a cleanup that breaks one."},
	Reviewing: {tools: reviewSet, purpose: "review the change against the brief, the goals and the evidence; answer with review{verdict, blockers}."},
	Complete:  {tools: []string{"read"}, purpose: "the run is complete."},
	Escalated: {tools: []string{"read"}, purpose: "the run waits for a person."},
	Cancelled: {tools: []string{"read"}, purpose: "the run was cancelled."},
}

// edges are the legal transitions. Budget and system escalations and a
// person's cancel are allowed from every non-terminal phase (see allowed).
var edges = []edge{
	{Planning, Building, []Actor{ByModel, ByPerson}},
	// ultra moves a parallel run to verifying once every goal landed.
	{Building, Verifying, []Actor{ByModel, BySystem}},
	{Iterating, Verifying, []Actor{ByModel, BySystem}},
	{Verifying, Complete, []Actor{ByGate}},
	{Verifying, Iterating, []Actor{ByGate}},
	{Verifying, Escalated, []Actor{ByGate}},
	{Verifying, Building, []Actor{ByGate}},  // a goal completed: the next one
	{Verifying, Reviewing, []Actor{ByGate}}, // the final gate passed (and its cleanup was judged)
	{Verifying, Cleaning, []Actor{ByGate}},  // the final gate passed: its cleanup pass
	// The cleanup pass ends only in verifying (the model's phase call, its
	// turns running out, or ultra when it has no commit to revert to):
	// nothing leaves it for the review or completion without the gate
	// judging the cleaned tree.
	{Cleaning, Verifying, []Actor{ByModel, ByBudget, BySystem}},
	{Reviewing, Complete, []Actor{ByReviewer}},
	{Reviewing, Iterating, []Actor{ByReviewer}},
	{Escalated, Reviewing, []Actor{ByPerson}},
	{Escalated, Planning, []Actor{ByPerson}},
	{Escalated, Building, []Actor{ByPerson}},
	{Escalated, Iterating, []Actor{ByPerson}},
	{Escalated, Complete, []Actor{ByPerson}},  // a person's waiver of the gate
	{Escalated, Cancelled, []Actor{ByPerson}}, // a person closes the run
}

// Tools returns the tools phase p of the build mode offers, in order.
func Tools(p Phase) []string { return ToolsIn(Build, p) }

// Allows reports whether p of the build mode offers the tool name.
func Allows(p Phase, name string) bool { return AllowsIn(Build, p, name) }

// ShellReadOnly reports that bash in p of the build mode may only run
// read-only commands.
func ShellReadOnly(p Phase) bool { return ShellReadOnlyIn(Build, p) }

// Purpose is a one-line description of what p of the build mode is for.
func Purpose(p Phase) string { return PurposeIn(Build, p) }

// Next lists the phases by may move a build-mode run to from p.
func Next(p Phase, by Actor) []Phase { return NextIn(Build, p, by) }

// NextIn lists the phases by may move a run of mode to from p.
func NextIn(mode string, p Phase, by Actor) []Phase {
	t := tableOf(mode)
	var out []Phase
	for _, to := range All {
		if t.allowed(p, to, by) {
			out = append(out, to)
		}
	}
	return out
}

// Transition is one recorded phase change.
type Transition struct {
	From   Phase  `json:"from"`
	To     Phase  `json:"to"`
	By     Actor  `json:"by"`
	Reason string `json:"reason"`
}

// RefusedError is a transition the table does not allow.
type RefusedError struct {
	Mode     string // "" for build
	From, To Phase
	By       Actor
	Why      string
}

func (e *RefusedError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("transition %s → %s refused: %s", e.From, e.To, e.Why)
	}
	next := NextIn(e.Mode, e.From, e.By)
	legal := "none"
	if len(next) > 0 {
		legal = join(next)
	}
	return fmt.Sprintf("transition %s → %s is not allowed for the %s (from %s it may go to: %s)",
		e.From, e.To, e.By, e.From, legal)
}
