package phase

import "slices"

// Work modes: each has its own phase table (phases, tools, exits), moved
// by the same State methods and enforced by the same three layers.
const (
	Chat     = "chat"
	Plan     = "plan"
	Build    = "build"
	Review   = "review"
	Repair   = "repair"
	Research = "research"
)

// Modes lists the work modes.
var Modes = []string{Chat, Plan, Build, Review, Repair, Research}

// modeTable is one work mode's phase table.
type modeTable struct {
	name   string
	start  Phase
	phases map[Phase]spec
	edges  []edge
	// answerEnds: an answer without a tool call is the run's result and
	// completes it (chat); elsewhere only the phase machine ends a run.
	answerEnds bool
	// worktree: the mode changes code, so a run of it works on its own
	// branch and worktree; read-only modes work where they are.
	worktree bool
}

var (
	chatSet     = []string{"read", "glob", "grep", "bash", "webfetch", "skill", MCPRead}
	researchSet = []string{"read", "glob", "grep", "bash", "todo", "task", "report", "webfetch", "skill", MCPRead}
	inspectSet  = []string{"read", "glob", "grep", "bash", "review", MCPRead}
	// terminals are the read-only rows every mode shares.
	terminals = map[Phase]spec{
		Complete:  {tools: []string{"read"}, purpose: "the run is complete."},
		Escalated: {tools: []string{"read"}, purpose: "the run waits for a person."},
		Cancelled: {tools: []string{"read"}, purpose: "the run was cancelled."},
	}
)

func withTerminals(m map[Phase]spec) map[Phase]spec {
	for p, s := range terminals {
		m[p] = s
	}
	return m
}

var buildTable = &modeTable{name: Build, start: Planning, phases: table, edges: edges, worktree: true}

var modeTables = map[string]*modeTable{
	Build: buildTable,
	// plan: the build table; the run stops at the acceptance point of its
	// goals, and accepting it "to run autonomously" moves it to build.
	Plan: {name: Plan, start: Planning, phases: table, edges: edges, worktree: true},
	// repair: the build table with repair's purpose: what doctor and the
	// gate found broken is fixed, and verified by both.
	Repair: {name: Repair, start: Planning, phases: repairTable(), edges: edges, worktree: true},
	Chat: {name: Chat, start: Answering, answerEnds: true, phases: withTerminals(map[Phase]spec{
		Answering: {tools: chatSet, readOnlyShell: true, purpose: "answer the person's question; read what you need (nothing may change). Your answer without a tool call is the result."},
	}), edges: []edge{
		{Answering, Complete, []Actor{ByModel}},
		{Complete, Answering, []Actor{ByPerson}}, // the chat goes on with the next question
		{Escalated, Answering, []Actor{ByPerson}},
		{Escalated, Cancelled, []Actor{ByPerson}},
	}},
	Research: {name: Research, start: Researching, phases: withTerminals(map[Phase]spec{
		Researching: {tools: researchSet, readOnlyShell: true, purpose: "investigate the question in the code, its dependencies and design (nothing may change); task{...} starts a read-only helper with a fresh context. End with report{title, body}: ultra writes it to .ultra/research/."},
	}), edges: []edge{
		{Researching, Complete, []Actor{ByModel}}, // the report tool
		{Complete, Researching, []Actor{ByPerson}},
		{Escalated, Researching, []Actor{ByPerson}},
		{Escalated, Cancelled, []Actor{ByPerson}},
	}},
	Review: {name: Review, start: Reviewing, phases: withTerminals(map[Phase]spec{
		Reviewing: {tools: inspectSet, readOnlyShell: true, purpose: "review the diff: tests, risks, regressions, security, missing evidence (nothing may change). Answer with review{verdict, findings:[{severity, file, line, reason, fix}]}."},
	}), edges: []edge{
		{Reviewing, Complete, []Actor{ByReviewer}},
		{Escalated, Reviewing, []Actor{ByPerson}},
		{Escalated, Cancelled, []Actor{ByPerson}},
	}},
}

func repairTable() map[Phase]spec {
	m := map[Phase]spec{}
	for p, s := range table {
		m[p] = s
	}
	pl := m[Planning]
	pl.purpose = "find the cause of what ultra doctor and the gate found broken (the task names it) and plan the fix; nothing may change. Leave with goals{goals:[...]}."
	m[Planning] = pl
	return m
}

// modeKey is the stored form of a mode: "" for build.
func modeKey(mode string) string {
	if mode == Build {
		return ""
	}
	return mode
}

// tableOf is mode's table; "" and unknown modes are build.
func tableOf(mode string) *modeTable {
	if t, ok := modeTables[mode]; ok {
		return t
	}
	return buildTable
}

// Start is the first phase of a run of mode.
func Start(mode string) Phase { return tableOf(mode).start }

// ToolsIn returns the tools phase p of mode offers, in order.
func ToolsIn(mode string, p Phase) []string { return slices.Clone(tableOf(mode).phases[p].tools) }

// AllowsIn reports whether p of mode offers the tool name.
func AllowsIn(mode string, p Phase, name string) bool {
	return slices.Contains(tableOf(mode).phases[p].tools, name)
}

// MCP tools in the phase tables: a row names a class, not the tools,
// since the servers bring them. MCPAll offers every tool of the
// configured servers (phases that change code), MCPRead only the tools a
// server marks read-only (readOnlyHint); in those phases the servers run
// with the work tree read-only, so that a hint that lies changes nothing.
const (
	MCPAll  = "mcp"
	MCPRead = "mcp-read"
)

// AllowsMCPIn reports whether p of mode offers an MCP tool that is
// read-only (readOnlyHint) or not.
func AllowsMCPIn(mode string, p Phase, readOnly bool) bool {
	t := tableOf(mode).phases[p].tools
	return slices.Contains(t, MCPAll) || (readOnly && slices.Contains(t, MCPRead))
}

// MCPWritableIn reports whether MCP servers may write the work tree in
// p of mode: the phase offers every MCP tool, and writes.
func MCPWritableIn(mode string, p Phase) bool {
	t := tableOf(mode).phases[p].tools
	return slices.Contains(t, MCPAll) && slices.Contains(t, "write")
}

// ShellReadOnlyIn reports that bash in p of mode may only run read-only
// commands.
func ShellReadOnlyIn(mode string, p Phase) bool { return tableOf(mode).phases[p].readOnlyShell }

// PurposeIn is a one-line description of what p of mode is for.
func PurposeIn(mode string, p Phase) string { return tableOf(mode).phases[p].purpose }

// HasPhase reports that mode's table has phase p.
func HasPhase(mode string, p Phase) bool {
	_, ok := tableOf(mode).phases[p]
	return ok
}

// AnswerEnds reports that in mode an answer without a tool call is the
// result and completes the run.
func AnswerEnds(mode string) bool { return tableOf(mode).answerEnds }

// Worktree reports that a run of mode changes code and so works on its
// own branch and worktree.
func Worktree(mode string) bool { return tableOf(mode).worktree }

// allowed reports whether by may move a run from one phase to another.
func (t *modeTable) allowed(from, to Phase, by Actor) bool {
	if _, ok := t.phases[to]; !ok {
		return false
	}
	if !from.Terminal() {
		if to == Escalated && (by == ByBudget || by == BySystem || by == ByPerson) {
			return true
		}
		if to == Cancelled && by == ByPerson {
			return true
		}
	}
	for _, e := range t.edges {
		if e.from == from && e.to == to && slices.Contains(e.by, by) {
			return true
		}
	}
	return false
}

// Tools returns the tools the state's phase offers, in order.
func (s State) Tools() []string { return ToolsIn(s.Mode, s.Phase) }

// Allows reports whether the state's phase offers the tool name.
func (s State) Allows(name string) bool { return AllowsIn(s.Mode, s.Phase, name) }

// ShellReadOnly reports that bash may only run read-only commands now.
func (s State) ShellReadOnly() bool { return ShellReadOnlyIn(s.Mode, s.Phase) }

// Purpose is what the state's phase is for.
func (s State) Purpose() string { return PurposeIn(s.Mode, s.Phase) }

// ModeName is the state's work mode (build for "").
func (s State) ModeName() string { return tableOf(s.Mode).name }

// Answered applies an answer without a tool call in a mode where that
// is the result: the run completes.
func (s State) Answered() (State, Transition, error) {
	if !tableOf(s.Mode).answerEnds {
		return s, Transition{}, &RefusedError{Mode: s.Mode, From: s.Phase, To: Complete, By: ByModel,
			Why: "only the phase machine ends a " + tableOf(s.Mode).name + " run: an answer is not its result"}
	}
	return s.Transition(Complete, ByModel, "answered", "")
}

// SwitchMode moves a live run to another work mode (a person's
// steering), into the phase of the new mode's table that corresponds to
// where it stands. Switches between modes whose tables differ in kind (a
// read-only mode and one that changes code) are refused with the reason:
// a chat has no branch to build on, and a build run is not a chat.
func (s State) SwitchMode(mode string) (State, Transition, error) {
	from, to := tableOf(s.Mode), tableOf(mode)
	if _, ok := modeTables[mode]; !ok {
		return s, Transition{}, &RefusedError{Mode: s.Mode, From: s.Phase, To: s.Phase, By: ByPerson, Why: "unknown work mode " + mode}
	}
	if from.name == to.name {
		return s, Transition{}, nil
	}
	refuse := func(why string) (State, Transition, error) {
		return s, Transition{}, &RefusedError{Mode: s.Mode, From: s.Phase, To: s.Phase, By: ByPerson, Why: why}
	}
	switch {
	case from.worktree != to.worktree && from.worktree:
		return refuse("a " + from.name + " run has a branch and a worktree; it cannot become " + to.name + " (start ultra " + to.name + " for that)")
	case from.worktree != to.worktree:
		return refuse("a " + from.name + " session has no branch or worktree to change code in; start ultra run (or ultra plan) for " + to.name)
	case !from.worktree && (from.name == Review || to.name == Review):
		return refuse("a review inspects one diff from its start; start ultra review for that")
	}
	s.Mode = modeKey(mode)
	if !s.Phase.Terminal() && !to.hasPhase(s.Phase) {
		p := s.Phase
		s.Phase = to.start
		return s, Transition{From: p, To: s.Phase, By: ByPerson, Reason: "work mode " + from.name + " → " + to.name}, nil
	}
	return s, Transition{}, nil
}

func (t *modeTable) hasPhase(p Phase) bool {
	_, ok := t.phases[p]
	return ok
}
