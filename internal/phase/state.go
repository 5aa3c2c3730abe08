package phase

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Budgets are the limits of one run. Zero means the default.
type Budgets struct {
	MaxRetries      int           `json:"max_retries"`        // failed verifications before escalating
	MaxTurns        int           `json:"max_turns"`          // model requests
	MaxInputTokens  int64         `json:"max_input_tokens"`   // summed over requests
	MaxOutputTokens int64         `json:"max_output_tokens"`  // summed over requests
	MaxWall         time.Duration `json:"max_wall"`           // active wall time
	MaxCost         float64       `json:"max_cost,omitempty"` // US dollars; 0: no limit
}

// DefaultBudgets are used for every zero field of a run's Budgets.
var DefaultBudgets = Budgets{
	MaxRetries:      10,
	MaxTurns:        200,
	MaxInputTokens:  20_000_000,
	MaxOutputTokens: 1_000_000,
	MaxWall:         2 * time.Hour,
}

// WithDefaults fills zero fields from DefaultBudgets.
func (b Budgets) WithDefaults() Budgets {
	d := DefaultBudgets
	if b.MaxRetries <= 0 {
		b.MaxRetries = d.MaxRetries
	}
	if b.MaxTurns <= 0 {
		b.MaxTurns = d.MaxTurns
	}
	if b.MaxInputTokens <= 0 {
		b.MaxInputTokens = d.MaxInputTokens
	}
	if b.MaxOutputTokens <= 0 {
		b.MaxOutputTokens = d.MaxOutputTokens
	}
	if b.MaxWall <= 0 {
		b.MaxWall = d.MaxWall
	}
	return b
}

// Counters are what a run has used so far.
type Counters struct {
	Turns          int           `json:"turns"`
	InputTokens    int64         `json:"input_tokens"`
	OutputTokens   int64         `json:"output_tokens"`
	Wall           time.Duration `json:"wall"`
	Cost           float64       `json:"cost,omitempty"`  // US dollars, from the pricing table
	FailedVerifies int           `json:"failed_verifies"` // since the run started or a person resumed it
	Verifies       int           `json:"verifies"`
}

// State is the phase machine's view of one run. It is a value: methods
// return a new State and never change the receiver.
type State struct {
	// Mode is the work mode whose phase table moves the run ("" is
	// build, for runs stored before modes had tables).
	Mode    string  `json:"mode,omitempty"`
	Phase   Phase   `json:"phase"`
	Plan    string  `json:"plan,omitempty"`
	Budgets Budgets `json:"budgets"`
	// Allotment is what the run was given at its start; exhausted
	// budgets are extended by it when a person resumes the run.
	Allotment Budgets  `json:"allotment"`
	Used      Counters `json:"used"`
}

// New is the state of a build-mode run that has just started.
func New(b Budgets) State { return NewIn(Build, b) }

// NewIn is the state of a run of mode that has just started, in the
// mode's first phase.
func NewIn(mode string, b Budgets) State {
	b = b.WithDefaults()
	return State{Mode: modeKey(mode), Phase: tableOf(mode).start, Budgets: b, Allotment: b}
}

// Transition moves s to phase to on behalf of by. Leaving planning needs a
// non-empty plan, which is stored with the state.
func (s State) Transition(to Phase, by Actor, reason, plan string) (State, Transition, error) {
	if !tableOf(s.Mode).allowed(s.Phase, to, by) {
		return s, Transition{}, &RefusedError{Mode: s.Mode, From: s.Phase, To: to, By: by}
	}
	if s.Phase == Planning && to == Building {
		plan = strings.TrimSpace(plan)
		if plan == "" && s.Plan == "" {
			return s, Transition{}, &RefusedError{From: s.Phase, To: to, By: by,
				Why: "leaving planning needs a non-empty plan (pass it as the plan argument)"}
		}
		if plan != "" {
			s.Plan = plan
		}
	}
	t := Transition{From: s.Phase, To: to, By: by, Reason: reason}
	s.Phase = to
	return s, t, nil
}

// Outcome is the verdict of one verification, as the gate reports it.
type Outcome string

const (
	Pass         Outcome = "pass"
	Concerns     Outcome = "concerns" // passed; the concerns are deferred work
	Fail         Outcome = "fail"
	NotEvaluated Outcome = "not_evaluated"
	// NeedsPerson: the tests passed, but what was changed to get there
	// (existing tests) is for a person to accept or refuse.
	NeedsPerson Outcome = "needs_person"
)

// AfterVerify applies the result of a verification made in verifying. A
// pass completes the run; a failure re-loops to iterating while retries
// remain and escalates when they run out; a verification that proved
// nothing escalates at once. The model has no say in it.
func (s State) AfterVerify(o Outcome, reason string) (State, Transition, error) {
	if s.Phase != Verifying {
		return s, Transition{}, &RefusedError{From: s.Phase, To: s.Phase, By: ByGate,
			Why: "verify runs only in verifying"}
	}
	s.Used.Verifies++
	switch o {
	case Pass:
		return s.Transition(Complete, ByGate, "verification passed: "+reason, "")
	case Concerns:
		return s.Transition(Complete, ByGate, "verification passed with concerns (deferred): "+reason, "")
	case NeedsPerson:
		return s.Transition(Escalated, ByGate, "verification passed, but needs a person's waiver: "+reason, "")
	case Fail:
		return s.afterFail(reason, Limit{})
	default:
		return s.Transition(Escalated, ByGate, "verification proved nothing: "+reason, "")
	}
}

// afterFail counts a failed verification: iterating while retries
// remain, escalated when they run out. The reason names the limit that
// ends the run first: the retries, or cycles (a goal's, which end it
// through the goal's verdict).
func (s State) afterFail(reason string, cycles Limit) (State, Transition, error) {
	s.Used.FailedVerifies++
	if s.Used.FailedVerifies >= s.Budgets.MaxRetries {
		return s.Transition(Escalated, ByGate, fmt.Sprintf(
			"verification failed %s (retry limit %d): %s", times(s.Used.FailedVerifies), s.Budgets.MaxRetries, reason), "")
	}
	return s.Transition(Iterating, ByGate, fmt.Sprintf(
		"verification failed (%s): %s", Binding(s.RetryLimit(), cycles), reason), "")
}

// times is "once", "2 times", ….
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// RetriesLeft is how many more failed verifications the run may have.
func (s State) RetriesLeft() int {
	return max(0, s.Budgets.MaxRetries-s.Used.FailedVerifies)
}

// Exhausted names the first budget that ran out, with a reason a person
// can act on, or returns ok=false.
func (s State) Exhausted() (name, reason string, ok bool) {
	b, u := s.Budgets, s.Used
	switch {
	case u.Turns >= b.MaxTurns:
		return "turns", fmt.Sprintf("turn budget exhausted: %d of %d model requests used (raise --max-turns)", u.Turns, b.MaxTurns), true
	case u.InputTokens >= b.MaxInputTokens:
		return "input_tokens", fmt.Sprintf("input token budget exhausted: %d of %d (raise --max-input-tokens)", u.InputTokens, b.MaxInputTokens), true
	case u.OutputTokens >= b.MaxOutputTokens:
		return "output_tokens", fmt.Sprintf("output token budget exhausted: %d of %d (raise --max-output-tokens)", u.OutputTokens, b.MaxOutputTokens), true
	case b.MaxCost > 0 && u.Cost >= b.MaxCost:
		return "cost", fmt.Sprintf("cost budget exhausted: $%.4f of $%.2f (raise --max-cost)", u.Cost, b.MaxCost), true
	case u.Wall >= b.MaxWall:
		return "wall", fmt.Sprintf("wall time budget exhausted: %s of %s (raise --max-wall)", u.Wall.Round(time.Second), b.MaxWall), true
	}
	return "", "", false
}

// Escalate moves a non-terminal run to escalated because of by.
func (s State) Escalate(by Actor, reason string) (State, Transition, error) {
	return s.Transition(Escalated, by, reason, "")
}

// Resume applies a person's resume to the budgets. Every budget given in
// more (a non-zero field) grants that much from now on: its limit becomes
// what was used plus the value. When the run was escalated, every budget
// that ran out is also extended by the run's original allotment, and the
// retries start again (MaxRetries of more, when given, replaces the limit).
func (s State) Resume(more Budgets, escalated bool) State {
	b, u := &s.Budgets, s.Used
	orig := s.Allotment.WithDefaults()
	grant := func(limit *int64, used, extra, original int64) {
		switch {
		case extra > 0:
			*limit = used + extra
		case escalated && used >= *limit:
			*limit = used + original
		}
	}
	turns, maxTurns := int64(u.Turns), int64(b.MaxTurns)
	grant(&maxTurns, turns, int64(more.MaxTurns), int64(orig.MaxTurns))
	b.MaxTurns = int(maxTurns)
	grant(&b.MaxInputTokens, u.InputTokens, more.MaxInputTokens, orig.MaxInputTokens)
	grant(&b.MaxOutputTokens, u.OutputTokens, more.MaxOutputTokens, orig.MaxOutputTokens)
	wall := int64(b.MaxWall)
	grant(&wall, int64(u.Wall), int64(more.MaxWall), int64(orig.MaxWall))
	b.MaxWall = time.Duration(wall)
	switch {
	case more.MaxCost > 0:
		b.MaxCost = u.Cost + more.MaxCost
	case escalated && b.MaxCost > 0 && u.Cost >= b.MaxCost && orig.MaxCost > 0:
		b.MaxCost = u.Cost + orig.MaxCost
	}
	if more.MaxRetries > 0 {
		b.MaxRetries = more.MaxRetries
	}
	if escalated {
		s.Used.FailedVerifies = 0
	}
	return s
}

// Reminder is the short, current statement of where the run stands that
// accompanies every request to the model.
func (s State) Reminder() string { return s.ReminderWith(s.Tools(), "") }

// ReminderWith is Reminder with the tools actually offered (the phase's,
// less what the permission profile withholds) and a line about where the
// model's commands run ("" for none).
//
// The reminder states the limit that ends the run first: the retries, or
// one of limits (a goal's cycles) when fewer of it are left.
func (s State) ReminderWith(tools []string, where string, limits ...Limit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[ultra] phase: %s. %s\n", s.Phase, s.Purpose())
	fmt.Fprintf(&b, "tools now: %s", strings.Join(tools, ", "))
	if s.ShellReadOnly() && slices.Contains(tools, "bash") {
		b.WriteString(" (bash: read-only commands only)")
	}
	b.WriteString("\n")
	if next := NextIn(s.Mode, s.Phase, ByModel); len(next) > 0 {
		fmt.Fprintf(&b, "you may move to: %s\n", join(next))
	}
	if where != "" {
		b.WriteString(where + "\n")
	}
	u, bu := s.Used, s.Budgets
	lim := Binding(append([]Limit{s.RetryLimit()}, limits...)...)
	fmt.Fprintf(&b, "%s left: %d of %d; turns left: %d; tokens left: %d in, %d out; time left: %s",
		lim.What, lim.Left(), lim.Max, max(0, bu.MaxTurns-u.Turns),
		max(0, bu.MaxInputTokens-u.InputTokens), max(0, bu.MaxOutputTokens-u.OutputTokens),
		max(0, bu.MaxWall-u.Wall).Round(time.Second))
	if bu.MaxCost > 0 {
		fmt.Fprintf(&b, "; cost left: $%.2f", max(0, bu.MaxCost-u.Cost))
	}
	return b.String()
}

func join(ps []Phase) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// GoalResult is what a verification found for the run's goals, beside
// the gate's verdict on the tests.
type GoalResult struct {
	Goal string // the goal verified ("" in the final gate)
	// Complete: every essential criterion of the goal (in the final gate:
	// of every goal) passed on the tree the gate judged.
	Complete bool
	// Failed: the goal used up its caps (cycles, identical failures).
	Failed bool
	More   bool // another goal is left after this one
	Final  bool // this was the final gate
	// Continue: a failed goal does not stop the run; it moves on to the
	// next goal (goals.on_failure = continue).
	Continue bool
	Reason   string
	// Cycles is the goal's limit of build/verify cycles, this one counted
	// (none in the final gate).
	Cycles Limit
	// Cleanup: a final gate that passes goes to its cleanup pass
	// (cleaning) rather than straight to the review.
	Cleanup bool
	// Cleaned: this verification judged a cleanup pass. Whatever it found,
	// the run goes on to its review: a cleanup that passed is kept, one
	// that broke a test or a criterion is reverted (the caller's part), and
	// the tree before it had passed the final gate already.
	Cleaned bool
}

// AfterGoalVerify applies a verification of a run with goals. The gate
// decides first: a verification that proved nothing or needs a person
// escalates as AfterVerify does. A gate that advanced with the goal
// complete moves to the next goal (building) or, after the final gate,
// to its cleanup pass (cleaning) or to reviewing; the verification of a
// cleanup pass goes to reviewing whatever it found. Anything else is a failed attempt: iterating while
// retries remain, escalated when they or the goal's caps run out.
func (s State) AfterGoalVerify(o Outcome, g GoalResult, reason string) (State, Transition, error) {
	if s.Phase != Verifying {
		return s, Transition{}, &RefusedError{From: s.Phase, To: s.Phase, By: ByGate,
			Why: "verify runs only in verifying"}
	}
	if g.Cleaned {
		// The cleanup's verification: it neither fails the run nor counts
		// a retry; what it found decides whether the cleanup is kept.
		s.Used.Verifies++
		if (o == Pass || o == Concerns) && g.Complete && !g.Failed {
			return s.Transition(Reviewing, ByGate, "the cleanup pass is done: "+g.Reason, "")
		}
		why := g.Reason
		if o != Pass && o != Concerns {
			why = strings.TrimSuffix(reason+"; "+g.Reason, "; ")
		}
		return s.Transition(Reviewing, ByGate, "the cleanup pass reverted: "+why, "")
	}
	switch o {
	case Pass, Concerns:
	case Fail:
	default:
		return s.AfterVerify(o, reason)
	}
	advanced := o != Fail
	if advanced && g.Complete && !g.Failed {
		s.Used.Verifies++
		switch {
		case g.Final && g.Cleanup:
			return s.Transition(Cleaning, ByGate, "final gate passed: "+g.Reason+"; its cleanup pass follows", "")
		case g.Final:
			return s.Transition(Reviewing, ByGate, "final gate passed: "+g.Reason, "")
		case g.More:
			return s.Transition(Building, ByGate, fmt.Sprintf("goal %s complete: %s", g.Goal, g.Reason), "")
		}
		return s.Transition(Complete, ByGate, fmt.Sprintf("goal %s complete: %s", g.Goal, g.Reason), "")
	}
	why := reason
	if advanced {
		why = g.Reason
	} else if g.Reason != "" {
		why = reason + "; " + g.Reason
	}
	if g.Failed {
		s.Used.Verifies++
		s.Used.FailedVerifies++
		if g.Continue && g.More && !g.Final {
			return s.Transition(Building, ByGate, fmt.Sprintf("goal %s failed: %s; the run moves on to the next goal", g.Goal, why), "")
		}
		return s.Transition(Escalated, ByGate, fmt.Sprintf("goal %s failed: %s", g.Goal, why), "")
	}
	s.Used.Verifies++
	return s.afterFail(why, g.Cycles)
}

// AfterReview applies the final review's verdict: a clean review (it
// approves and its architecture status is CLEAR) completes the run; any
// other sends it back to iterating, at most maxRounds times (round counts
// this one), then it escalates. reason is what must change.
func (s State) AfterReview(clean bool, round, maxRounds int, reason string) (State, Transition, error) {
	if s.Phase != Reviewing {
		return s, Transition{}, &RefusedError{From: s.Phase, To: s.Phase, By: ByReviewer,
			Why: "a review verdict is given only in reviewing"}
	}
	switch {
	case clean:
		return s.Transition(Complete, ByReviewer, strings.TrimSuffix("the final review approved: "+reason, ": "), "")
	case round > maxRounds:
		return s.Transition(Escalated, BySystem, fmt.Sprintf("the final review still asks for changes in its last round (round %d of %d): %s", round, maxRounds+1, reason), "")
	}
	return s.Transition(Iterating, ByReviewer, fmt.Sprintf("the final review asks for changes (round %d of %d): %s", round, maxRounds+1, reason), "")
}
