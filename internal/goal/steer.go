package goal

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The steering kinds: the only ways an accepted plan changes.
const (
	// AddSubgoal adds a goal (Title, Objective, Criteria) after Goal, or
	// at the end when Goal is empty.
	AddSubgoal = "add_subgoal"
	// SplitSubgoal replaces pending goal Goal by the goals in Split (two
	// or more); the original is kept, blocked, with reason "split into …".
	SplitSubgoal = "split_subgoal"
	// ReorderPending puts the pending goals in the order Order lists
	// (exactly the pending goals' ids).
	ReorderPending = "reorder_pending"
	// RevisePendingWording rewrites the Title or Objective of pending goal
	// Goal, or the Scenario of Criterion of a pending goal; never a check.
	RevisePendingWording = "revise_pending_wording"
	// ReviseCriterion replaces Criterion's definition: the single entry of
	// Criteria (scenario, user_model, channel, check, expected_evidence,
	// essential), or just Check and/or Essential.
	ReviseCriterion = "revise_criterion"
	// AnnotateLedger changes no goal: Note is only recorded.
	AnnotateLedger = "annotate_ledger"
	// MarkBlockedSuperseded takes Criterion (or, without one, Goal) out of
	// the run with Note as the reason.
	MarkBlockedSuperseded = "mark_blocked_superseded"
)

// SteerKinds lists every steering kind.
var SteerKinds = []string{AddSubgoal, SplitSubgoal, ReorderPending, RevisePendingWording, ReviseCriterion, AnnotateLedger, MarkBlockedSuperseded}

// Who may steer.
const (
	ByPerson = "person"
	ByModel  = "model"
)

// ErrNeedsPerson is wrapped by Apply's error when a change weakens or
// removes an accepted essential criterion (or takes a goal out of the
// run) and the steer is not by a person.
var ErrNeedsPerson = errors.New("needs a person")

// Steer is one structured change to an accepted plan. Which fields apply
// depends on Kind (see the kind constants). Evidence (what was observed)
// and Rationale (why this change) are always required.
type Steer struct {
	Kind      string `json:"kind"`
	Goal      string `json:"goal,omitempty"`
	Criterion string `json:"criterion,omitempty"`
	Title     string `json:"title,omitempty"`
	Objective string `json:"objective,omitempty"`
	Scenario  string `json:"scenario,omitempty"`
	// Criteria: the new goal's criteria (add_subgoal), or the one
	// replacement criterion (revise_criterion).
	Criteria []ProposedCriterion `json:"criteria,omitempty"`
	// Split: the goals that replace the split goal (split_subgoal).
	Split     []ProposedGoal `json:"split,omitempty"`
	Order     []string       `json:"order,omitempty"`
	Check     *Check         `json:"check,omitempty"`
	Essential *bool          `json:"essential,omitempty"`
	Note      string         `json:"note,omitempty"`
	Evidence  string         `json:"evidence"`
	Rationale string         `json:"rationale"`
	By        string         `json:"by"` // "person" or "model"
}

// Apply returns a new File with steer s applied, or an error explaining
// the refusal. The input File is not changed (nor anything it shares).
// Refused: an unknown or empty kind (natural-language steering is not
// accepted), a plan not yet accepted, missing evidence or rationale, a
// target not found, a target not in a status the kind allows (a complete
// goal never changes), and an invalid new goal or criterion. A change
// that weakens or removes an accepted essential criterion, or takes a
// goal out of the run, needs s.By == "person": otherwise the error wraps
// ErrNeedsPerson. Apply does not touch Accepted: the caller records the
// new PlanDigest with the steer in the ledger.
func Apply(f File, s Steer, now time.Time) (File, error) {
	if !slices.Contains(SteerKinds, s.Kind) {
		what := "empty steering kind"
		if strings.TrimSpace(s.Kind) != "" {
			what = fmt.Sprintf("unknown steering kind %q", s.Kind)
		}
		return File{}, fmt.Errorf("%s: natural-language steering is not accepted: use one of %s", what, strings.Join(SteerKinds, ", "))
	}
	fail := func(format string, args ...any) (File, error) {
		return File{}, fmt.Errorf("%s: %s", s.Kind, fmt.Sprintf(format, args...))
	}
	if f.Accepted == nil {
		return fail("the plan is not accepted yet: change the proposal instead")
	}
	if s.By != ByPerson && s.By != ByModel {
		return fail("by must be %q or %q, got %q", ByPerson, ByModel, s.By)
	}
	if strings.TrimSpace(s.Evidence) == "" {
		return fail("evidence is required: what was observed that calls for this change")
	}
	if strings.TrimSpace(s.Rationale) == "" {
		return fail("rationale is required: why this change and not another")
	}
	out := cloneFile(f)
	st := steering{f: &out, s: s, now: now}
	if err := appliers[s.Kind](st); err != nil {
		return File{}, fmt.Errorf("%s: %w", s.Kind, err)
	}
	return out, nil
}

// appliers apply each kind of steer.
var appliers = map[string]func(steering) error{
	AddSubgoal:            steering.addSubgoal,
	SplitSubgoal:          steering.splitSubgoal,
	ReorderPending:        steering.reorderPending,
	RevisePendingWording:  steering.revisePendingWording,
	ReviseCriterion:       steering.reviseCriterion,
	AnnotateLedger:        steering.annotate,
	MarkBlockedSuperseded: steering.markBlockedSuperseded,
}

// steering applies one steer to a copy of the file.
type steering struct {
	f   *File
	s   Steer
	now time.Time
}

// needsPerson refuses a change a model may not make, unless by a person.
func (st steering) needsPerson(target, why string) error {
	if st.s.By == ByPerson {
		return nil
	}
	return fmt.Errorf("%s: %w (by %q): %s", target, ErrNeedsPerson, ByPerson, why)
}

// goal finds goal id; the error names it.
func (st steering) goal(id string) (*Goal, error) {
	if id == "" {
		return nil, errors.New("goal is required: the id of the goal to change")
	}
	g := st.f.Goal(id)
	if g == nil {
		return nil, fmt.Errorf("goal %q not found (goals: %s)", id, strings.Join(goalIDs(st.f.Goals), ", "))
	}
	return g, nil
}

// criterion finds criterion id (in goal s.Goal when given) and its goal.
func (st steering) criterion(id string) (*Goal, *Criterion, error) {
	for i := range st.f.Goals {
		g := &st.f.Goals[i]
		if st.s.Goal != "" && g.ID != st.s.Goal {
			continue
		}
		if c := g.Criterion(id); c != nil {
			return g, c, nil
		}
	}
	if st.s.Goal != "" {
		if _, err := st.goal(st.s.Goal); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("criterion %q not found in goal %s", id, st.s.Goal)
	}
	return nil, nil, fmt.Errorf("criterion %q not found", id)
}

// pending refuses a goal that is not pending.
func pending(g *Goal, what string) error {
	if g.Status != Pending {
		return fmt.Errorf("goal %s is %s: only a pending goal's %s can change", g.ID, g.Status, what)
	}
	return nil
}

func goalIDs(goals []Goal) []string {
	ids := make([]string, len(goals))
	for i, g := range goals {
		ids[i] = g.ID
	}
	return ids
}

var goalNumber = regexp.MustCompile(`^G(\d+)`)

// nextNumber is the number the next new goal takes: one more than the
// highest in use.
func nextNumber(goals []Goal) int {
	n := 0
	for _, g := range goals {
		if m := goalNumber.FindStringSubmatch(g.ID); m != nil {
			if k, err := strconv.Atoi(m[1]); err == nil {
				n = max(n, k)
			}
		}
	}
	return n + 1
}

// insertAfter puts goals after index i (at the end when i < 0).
func (st steering) insertAfter(i int, goals ...Goal) {
	if i < 0 {
		st.f.Goals = append(st.f.Goals, goals...)
		return
	}
	st.f.Goals = slices.Insert(st.f.Goals, i+1, goals...)
}

func (st steering) index(id string) int {
	return slices.IndexFunc(st.f.Goals, func(g Goal) bool { return g.ID == id })
}

func (st steering) addSubgoal() error {
	pg := ProposedGoal{Title: st.s.Title, Objective: st.s.Objective, Criteria: st.s.Criteria}
	if err := Problems(validateGoal("goal", pg)); err != nil {
		return err
	}
	at := -1
	if st.s.Goal != "" {
		if _, err := st.goal(st.s.Goal); err != nil {
			return err
		}
		at = st.index(st.s.Goal)
	}
	st.insertAfter(at, newGoal(nextNumber(st.f.Goals), pg, st.now))
	return nil
}

func (st steering) splitSubgoal() error {
	g, err := st.goal(st.s.Goal)
	if err != nil {
		return err
	}
	if err := pending(g, "split"); err != nil {
		return err
	}
	if len(st.s.Split) < 2 {
		return fmt.Errorf("split needs two or more goals to replace %s, got %d", g.ID, len(st.s.Split))
	}
	var ps []Problem
	for i, pg := range st.s.Split {
		ps = append(ps, validateGoal(fmt.Sprintf("split[%d]", i), pg)...)
		if len(pg.DependsOn) > 0 {
			ps = append(ps, Problem{fmt.Sprintf("split[%d].depends_on", i), "the goals of a split take their place in the list: they carry no dependencies of their own"})
		}
	}
	if err := Problems(ps); err != nil {
		return err
	}
	var dropped []string
	for _, c := range g.SuccessCriteria {
		if live(c) && c.Essential && !carried(c, st.s.Split) {
			dropped = append(dropped, c.ID)
		}
	}
	if len(dropped) > 0 {
		if err := st.needsPerson(g.ID, fmt.Sprintf("the split drops essential criteria %s (no new goal keeps the same channel and check as an essential criterion)", strings.Join(dropped, ", "))); err != nil {
			return err
		}
	}
	n := nextNumber(st.f.Goals)
	var goals []Goal
	for i, pg := range st.s.Split {
		goals = append(goals, newGoal(n+i, pg, st.now))
	}
	at := st.index(g.ID)
	g.Status = Blocked
	g.Reason = "split into " + strings.Join(goalIDs(goals), ", ")
	if st.s.Note != "" {
		g.Reason += ": " + st.s.Note
	}
	g.UpdatedAt = st.now
	st.insertAfter(at, goals...)
	return nil
}

// live reports that a criterion still decides its goal.
func live(c Criterion) bool { return c.Superseded == "" }

// carried reports that some essential criterion of the new goals keeps
// c's channel and check.
func carried(c Criterion, goals []ProposedGoal) bool {
	for _, g := range goals {
		for _, pc := range g.Criteria {
			if pc.Channel == c.Channel && (pc.Essential == nil || *pc.Essential) && sameCheck(c.Channel, pc.Check, c.Check) {
				return true
			}
		}
	}
	return false
}

// sameCheck compares checks as they are stored (an empty HTTP method is
// GET).
func sameCheck(ch Channel, a, b Check) bool {
	if ch == ChannelHTTP {
		if a.Method == "" {
			a.Method = "GET"
		}
		if b.Method == "" {
			b.Method = "GET"
		}
	}
	return checksEqual(a, b)
}

func (st steering) reorderPending() error {
	var slots []int
	want := map[string]bool{}
	for i, g := range st.f.Goals {
		if g.Status == Pending {
			slots = append(slots, i)
			want[g.ID] = true
		}
	}
	seen := map[string]bool{}
	for _, id := range st.s.Order {
		switch {
		case seen[id]:
			return fmt.Errorf("order names %s twice", id)
		case !want[id]:
			if g := st.f.Goal(id); g != nil {
				return fmt.Errorf("order names %s, which is %s: only pending goals can be reordered", id, g.Status)
			}
			return fmt.Errorf("order names %q, which is not a goal", id)
		}
		seen[id] = true
	}
	var missing []string
	for _, i := range slots {
		if id := st.f.Goals[i].ID; !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("order must list every pending goal exactly once; it leaves out %s", strings.Join(missing, ", "))
	}
	byID := map[string]Goal{}
	for _, i := range slots {
		byID[st.f.Goals[i].ID] = st.f.Goals[i]
	}
	for k, i := range slots {
		st.f.Goals[i] = byID[st.s.Order[k]]
	}
	return nil
}

func (st steering) revisePendingWording() error {
	s := st.s
	if s.Check != nil || s.Essential != nil || len(s.Criteria) > 0 || len(s.Split) > 0 || len(s.Order) > 0 {
		return errors.New("rewording changes only title, objective and scenario texts, never a check: use revise_criterion")
	}
	title, objective, scenario := strings.TrimSpace(s.Title), strings.TrimSpace(s.Objective), strings.TrimSpace(s.Scenario)
	if title == "" && objective == "" && scenario == "" {
		return errors.New("nothing to reword: give a new title, objective or scenario")
	}
	ps := bounded(nil, "title", title, MaxTitle)
	ps = bounded(ps, "objective", objective, MaxObjective)
	ps = bounded(ps, "scenario", scenario, MaxText)
	if strings.ContainsAny(title, "\r\n") {
		ps = append(ps, Problem{"title", "a title is one line: put the rest in the objective"})
	}
	if err := Problems(ps); err != nil {
		return err
	}
	var g *Goal
	var c *Criterion
	var err error
	if s.Criterion != "" {
		g, c, err = st.criterion(s.Criterion)
	} else {
		if scenario != "" {
			return errors.New("a scenario is a criterion's wording: name the criterion")
		}
		g, err = st.goal(s.Goal)
	}
	if err != nil {
		return err
	}
	if err := pending(g, "wording"); err != nil {
		return err
	}
	if title != "" {
		g.Title = title
	}
	if objective != "" {
		g.Objective = objective
	}
	if scenario != "" {
		c.Scenario = scenario
	}
	// New words may describe an endpoint, a page, a screen or a window
	// that no criterion of the goal proves.
	if err := Problems(goalSurfaceProblems(g.ID, proposedGoalOf(*g))); err != nil {
		return err
	}
	g.UpdatedAt = st.now
	return nil
}

// proposedGoalOf is goal g as a proposal would state it, with its live
// criteria.
func proposedGoalOf(g Goal) ProposedGoal {
	pg := ProposedGoal{Title: g.Title, Objective: g.Objective, Refactor: g.Refactor}
	for _, c := range g.SuccessCriteria {
		if live(c) {
			pg.Criteria = append(pg.Criteria, proposedOf(c))
		}
	}
	return pg
}

func (st steering) reviseCriterion() error {
	s := st.s
	if s.Criterion == "" {
		return errors.New("criterion is required: the id of the criterion to revise")
	}
	g, c, err := st.criterion(s.Criterion)
	if err != nil {
		return err
	}
	if g.Status != Pending && g.Status != InProgress {
		return fmt.Errorf("goal %s is %s: only the criteria of a pending or in-progress goal can be revised", g.ID, g.Status)
	}
	if !live(*c) {
		return fmt.Errorf("criterion %s is superseded (%s): it cannot be revised", c.ID, c.Superseded)
	}
	next := proposedOf(*c)
	switch {
	case len(s.Criteria) > 1:
		return fmt.Errorf("criteria must hold exactly one replacement for %s, got %d", c.ID, len(s.Criteria))
	case len(s.Criteria) == 1 && (s.Check != nil || s.Essential != nil):
		return errors.New("give either criteria[0] (the whole replacement) or check/essential, not both")
	case len(s.Criteria) == 1:
		next = s.Criteria[0]
	case s.Check == nil && s.Essential == nil:
		return errors.New("nothing to revise: give criteria[0], check or essential")
	default:
		if s.Check != nil {
			next.Check = cloneCheck(*s.Check)
		}
		if s.Essential != nil {
			next.Essential = boolPtr(*s.Essential)
		}
	}
	if err := Problems(validateCriterion("criterion", next)); err != nil {
		return err
	}
	revised := newCriterion(c.ID, next, g.Refactor)
	if c.Essential {
		if why := weakens(*c, revised); why != "" {
			if err := st.needsPerson(c.ID, why); err != nil {
				return err
			}
		}
	}
	if revised.Channel == c.Channel && checksEqual(revised.Check, c.Check) {
		// the same check: its last result still stands
		revised.Status, revised.CapturedEvidence, revised.CapturedAt = c.Status, c.CapturedEvidence, c.CapturedAt
		revised.LastFailure, revised.SameFailures = c.LastFailure, c.SameFailures
	}
	if revised.Channel == c.Channel && checksEqual(revised.Check, c.Check) && revised.Expect == c.Expect {
		// the same check, asked the same of the base: its base result stands
		revised.Base = c.Base
	}
	*c = revised
	g.UpdatedAt = st.now
	return nil
}

// proposedOf is criterion c as a proposal would state it.
func proposedOf(c Criterion) ProposedCriterion {
	return ProposedCriterion{
		Scenario:         c.Scenario,
		UserModel:        c.UserModel,
		Surface:          c.SurfaceOf(),
		Channel:          c.Channel,
		Check:            cloneCheck(c.Check),
		ExpectedEvidence: c.ExpectedEvidence,
		Essential:        boolPtr(c.Essential),
		StopCondition:    c.StopCondition,
	}
}

func boolPtr(b bool) *bool { return &b }

// weakens says how revised asserts less than the essential criterion old,
// or "".
func weakens(old, revised Criterion) string {
	if !revised.Essential {
		return "it makes an essential criterion non-essential"
	}
	if revised.Channel != old.Channel {
		return fmt.Sprintf("it moves an essential criterion from the %s channel to %s, which cannot be shown to assert as much", old.Channel, revised.Channel)
	}
	if revised.SurfaceOf() != old.SurfaceOf() {
		return fmt.Sprintf("it moves an essential criterion from the %s surface to %s, which the goal may need it to prove", old.SurfaceOf(), revised.SurfaceOf())
	}
	if why := weakerCheck(old.Check, revised.Check); why != "" {
		return why
	}
	// What a check runs decides what its assertions mean (another command,
	// other inputs, another expected value): no code can tell a stricter
	// check from a weaker one, so any change of an accepted essential
	// criterion's check is a person's to make.
	if !checksEqual(old.Check, revised.Check) {
		return "it changes what an accepted essential criterion's check runs or expects, which code cannot tell from weakening it"
	}
	return ""
}

// weakerCheck says how check b asserts less than check a (same channel),
// or "": an assertion removed, or a pattern made a part of the old one
// or one that matches anything. Changing an expected value (an exit
// status, an HTTP status) is not weakening.
func weakerCheck(a, b Check) string {
	pa, pb := assertions(a), assertions(b)
	for _, name := range sortedKeys(pa) {
		x := pa[name]
		y, ok := pb[name]
		switch {
		case !ok:
			return fmt.Sprintf("it removes %s (%d assertions instead of %d)", name, len(pb), len(pa))
		case !x.pattern || y.value == x.value:
		case y.value == "" || strings.Contains(x.value, y.value):
			return fmt.Sprintf("it loosens %s from %q to %q", name, x.value, y.value)
		case MatchesEverything(y.value):
			return fmt.Sprintf("it loosens %s to %q, which matches anything", name, y.value)
		}
	}
	return ""
}

// assertion is one thing a check asserts: a pattern, or an exact value.
type assertion struct {
	value   string
	pattern bool
}

// assertions lists what a check asserts, by place. Step assertions are
// numbered by their order among assertions, so that adding a step that
// only types keys changes none of them.
func assertions(c Check) map[string]assertion {
	m := map[string]assertion{}
	pattern := func(name, re string) {
		if re != "" {
			m[name] = assertion{re, true}
		}
	}
	if c.ExpectExit != nil {
		m["expect_exit"] = assertion{value: strconv.Itoa(*c.ExpectExit)}
	}
	if c.ExpectStatus != 0 {
		m["expect_status"] = assertion{value: strconv.Itoa(c.ExpectStatus)}
	}
	pattern("expect_stdout", c.ExpectStdout)
	pattern("expect_stderr", c.ExpectStderr)
	pattern("expect_body", c.ExpectBody)
	for k, v := range c.ExpectJSON {
		m["expect_json["+strconv.Quote(k)+"]"] = assertion{v, true}
	}
	pattern("expect_text", c.ExpectText)
	pattern("expect_selector", c.ExpectSelector)
	n := 0
	for _, s := range c.Steps {
		if s.Expect != "" {
			n++
			pattern(fmt.Sprintf("steps expect #%d", n), s.Expect)
		}
		if s.WaitText != "" {
			n++
			pattern(fmt.Sprintf("steps wait_text #%d", n), s.WaitText)
		}
	}
	return m
}

func (st steering) annotate() error {
	if strings.TrimSpace(st.s.Note) == "" {
		return errors.New("note is required: the text to record")
	}
	if st.s.Criterion != "" {
		_, _, err := st.criterion(st.s.Criterion)
		return err
	}
	if st.s.Goal != "" {
		_, err := st.goal(st.s.Goal)
		return err
	}
	return nil
}

func (st steering) markBlockedSuperseded() error {
	note := strings.TrimSpace(st.s.Note)
	if note == "" {
		return errors.New("note is required: why it is blocked or superseded")
	}
	if st.s.Criterion != "" {
		g, c, err := st.criterion(st.s.Criterion)
		if err != nil {
			return err
		}
		if g.Status == Complete {
			return fmt.Errorf("goal %s is complete: its criteria cannot change", g.ID)
		}
		if !live(*c) {
			return fmt.Errorf("criterion %s is already superseded (%s)", c.ID, c.Superseded)
		}
		if c.Essential {
			if err := st.needsPerson(c.ID, "superseding an essential criterion removes it from what decides the goal"); err != nil {
				return err
			}
		}
		c.Superseded = note
		g.UpdatedAt = st.now
		return nil
	}
	g, err := st.goal(st.s.Goal)
	if err != nil {
		return err
	}
	switch g.Status {
	case Complete:
		return fmt.Errorf("goal %s is complete: it cannot change", g.ID)
	case Blocked:
		return fmt.Errorf("goal %s is already blocked (%s)", g.ID, g.Reason)
	}
	if err := st.needsPerson(g.ID, "blocking a goal takes all its criteria out of the run"); err != nil {
		return err
	}
	g.Status = Blocked
	g.Reason = note
	g.UpdatedAt = st.now
	return nil
}

// cloneFile is a deep copy of f.
func cloneFile(f File) File {
	out := f
	if f.Accepted != nil {
		a := *f.Accepted
		out.Accepted = &a
	}
	if f.Review != nil {
		r := *f.Review
		r.Blockers = slices.Clone(f.Review.Blockers)
		r.ArchitectureReasons = slices.Clone(f.Review.ArchitectureReasons)
		out.Review = &r
	}
	if f.Goals != nil {
		out.Goals = make([]Goal, len(f.Goals))
		for i, g := range f.Goals {
			out.Goals[i] = cloneGoal(g)
		}
	}
	return out
}

// cloneGoal is a deep copy of g.
func cloneGoal(g Goal) Goal {
	g.StartedAt = clonePtr(g.StartedAt)
	g.CompletedAt = clonePtr(g.CompletedAt)
	if g.SuccessCriteria != nil {
		cs := make([]Criterion, len(g.SuccessCriteria))
		for i, c := range g.SuccessCriteria {
			c.Check = cloneCheck(c.Check)
			c.CapturedAt = clonePtr(c.CapturedAt)
			if c.CapturedEvidence != nil {
				e := *c.CapturedEvidence
				e.Files = slices.Clone(e.Files)
				c.CapturedEvidence = &e
			}
			cs[i] = c
		}
		g.SuccessCriteria = cs
	}
	return g
}

// cloneCheck is a deep copy of c.
func cloneCheck(c Check) Check {
	c.ExpectExit = clonePtr(c.ExpectExit)
	c.Headers = maps.Clone(c.Headers)
	c.ExpectJSON = maps.Clone(c.ExpectJSON)
	if c.Steps != nil {
		steps := make([]Step, len(c.Steps))
		for i, s := range c.Steps {
			s.Type = clonePtr(s.Type)
			s.ClickAt = clonePtr(s.ClickAt)
			steps[i] = s
		}
		c.Steps = steps
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// checksEqual reports that two checks say the same (nil and empty maps and
// slices alike).
func checksEqual(a, b Check) bool {
	return reflect.DeepEqual(normalCheck(a), normalCheck(b))
}

// normalCheck makes empty maps and slices nil.
func normalCheck(c Check) Check {
	if len(c.Headers) == 0 {
		c.Headers = nil
	}
	if len(c.ExpectJSON) == 0 {
		c.ExpectJSON = nil
	}
	if len(c.Steps) == 0 {
		c.Steps = nil
	}
	return c
}
