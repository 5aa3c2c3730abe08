package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/tool"
)

// steer applies one structured change to the run's accepted goals and
// records it in the ledger, accepted or rejected.
func (r *runner) steer(ctx context.Context, s goal.Steer) error {
	if r.goals == nil || r.goals.file == nil {
		return errors.New("the run has no goals yet: they are proposed in planning")
	}
	const maxText = 4 << 10
	for name, v := range map[string]string{"note": s.Note, "evidence": s.Evidence, "rationale": s.Rationale, "title": s.Title, "objective": s.Objective, "scenario": s.Scenario} {
		if len(v) > maxText {
			// The ledger is committed: it takes a short account, not a dump.
			return fmt.Errorf("%s is %d bytes; at most %d are recorded (summarise it; long material belongs in a file)", name, len(v), maxText)
		}
	}
	data := jsonData(s)
	if len(data) > 16<<10 {
		return fmt.Errorf("the steering change is %d bytes; at most %d are recorded in the ledger", len(data), 16<<10)
	}
	next, err := goal.Apply(*r.goals.file, s, r.o.Now().UTC())
	if err == nil {
		err = r.steerBase(ctx, *r.goals.file, &next, s)
	}
	if err != nil {
		r.recordGoal(ledger.Entry{Kind: ledger.KindSteeringRejected, Goal: s.Goal, Criterion: s.Criterion, Text: s.Kind + " by " + s.By + ": " + err.Error(), Data: data})
		return err
	}
	r.goals.file = &next
	r.recordGoal(ledger.Entry{Kind: ledger.KindSteeringAccepted, Goal: s.Goal, Criterion: s.Criterion, Digest: goal.PlanDigest(next.Goals),
		Text: s.Kind + " by " + s.By + ": " + oneLine(s.Rationale, 200), Data: data})
	r.recordBase(r.goals.file.Goals)
	if r.goalsBroken != nil {
		return r.goalsBroken
	}
	// A goal added (or split off) after the last one was done is worked
	// on like any other: the final gate waits for it, and it starts now
	// (its change counted from here).
	if next.Current() != nil {
		// A cleanup pass in hand is over: its edits, if any, are
		// verified with the new goal's work.
		r.st.Goals.Final, r.st.Goals.Cleanup = false, nil
		r.startGoal()
	}
	return nil
}

// steerBase judges the criteria a steering change brings (new goals, a
// revised check) against the base tree as a proposal's are: the model's
// must discriminate (baseProblems) and may not declare a refactor the
// person did not; a person's are recorded as not run on the base.
func (r *runner) steerBase(ctx context.Context, old goal.File, next *goal.File, s goal.Steer) error {
	var touched []int
	for i := range next.Goals {
		g := &next.Goals[i]
		prev := old.Goal(g.ID)
		for j := range g.SuccessCriteria {
			c := &g.SuccessCriteria[j]
			if c.Base != nil || c.Superseded != "" {
				continue
			}
			if prev != nil {
				if pc := prev.Criterion(c.ID); pc != nil && pc.Base == nil && pc.Channel == c.Channel && sameChecks(pc.Check, c.Check) {
					continue // a run from before base results: nothing new
				}
			}
			touched = append(touched, i)
			break
		}
	}
	if len(touched) == 0 {
		return nil
	}
	if s.By == "person" {
		for _, i := range touched {
			sub := goal.File{Goals: next.Goals[i : i+1]}
			notRunOnBase(&sub, "a person")
		}
		return nil
	}
	where := func(i int) string { return fmt.Sprintf("goal %s", next.Goals[i].ID) }
	ps := r.refactorProblems(s.Split, func(i int) string { return fmt.Sprintf("split[%d]", i) })
	ps = append(ps, essentialProblems(s.Split, func(i int) string { return fmt.Sprintf("split[%d]", i) })...)
	ps = append(ps, essentialProblems([]goal.ProposedGoal{{Criteria: s.Criteria}}, func(int) string { return "new" })...)
	for _, i := range touched {
		if next.Goals[i].Refactor && (r.st.Goals == nil || !r.st.Goals.Refactor) {
			ps = append(ps, goal.Problem{Where: where(i), What: "only a person declares a refactor"})
		}
	}
	if len(ps) == 0 {
		label := fmt.Sprintf("base-%d", r.goals.ledger.Len()+1)
		for _, i := range touched {
			ps = append(ps, r.baseProblems(ctx, next.Goals[i:i+1], label, func(int) string { return where(i) })...)
		}
	}
	if len(ps) > 0 {
		var texts []string
		for _, p := range ps {
			texts = append(texts, p.String())
		}
		return fmt.Errorf("the new criteria were run on the code the run started from and do not discriminate: %s", strings.Join(texts, "; "))
	}
	return nil
}

// sameChecks compares two checks as stored.
func sameChecks(a, b goal.Check) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// SteerGoals applies a person's structured change to the accepted goals
// of a run no process is driving (ultra goals steer). A refused change is
// recorded in the ledger too, and returned.
func SteerGoals(ctx context.Context, o Options, id string, s goal.Steer) (*goal.File, error) {
	o = o.withDefaults()
	row, err := o.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if Live(row) {
		return nil, fmt.Errorf("%w: run %s (pid %d); steer it when it stops", ErrBusy, row.ID, row.PID)
	}
	unlock, err := LockRun(o.StateRoot, row.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	if st.Goals == nil {
		return nil, fmt.Errorf("run %s has no goals (it was started before goals existed)", row.ID)
	}
	if why := worktreeGone(ctx, row); why != "" {
		return nil, fmt.Errorf("%s; its goals can no longer change", why)
	}
	if err := CheckGoals(row.Workdir, st.Goals.records(), st.Goals.LedgerSeq, st.Goals.LedgerHash); err != nil {
		return nil, fmt.Errorf("run %s's goal records do not check out: %w", row.ID, err)
	}
	r, err := newRunner(ctx, o, row, st, nil)
	if err != nil {
		return nil, err
	}
	if r.goalsBroken != nil {
		return nil, r.goalsBroken
	}
	s.By = "person"
	serr := r.steer(ctx, s)
	if err := r.save(); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, &SteerRefused{Err: serr}
	}
	return r.goals.file, nil
}

// SteerRefused is a steering change the goal rules refused (and the
// ledger recorded).
type SteerRefused struct{ Err error }

func (e *SteerRefused) Error() string { return e.Err.Error() }
func (e *SteerRefused) Unwrap() error { return e.Err }

var steerSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"kind":{"type":"string","enum":["add_subgoal","split_subgoal","reorder_pending","revise_pending_wording","revise_criterion","annotate_ledger","mark_blocked_superseded"]},` +
	`"goal":{"type":"string"},"criterion":{"type":"string"},"title":{"type":"string"},"objective":{"type":"string"},"scenario":{"type":"string"},` +
	`"criteria":{"type":"array","items":{"type":"object"},"description":"add_subgoal: the new goal's criteria, shaped as in goals"},` +
	`"split":{"type":"array","items":{"type":"object"},"description":"split_subgoal: the goals that replace it, shaped as in goals"},` +
	`"order":{"type":"array","items":{"type":"string"}},"check":{"type":"object"},"essential":{"type":"boolean"},"note":{"type":"string"},` +
	`"evidence":{"type":"string","description":"what you observed that calls for the change"},"rationale":{"type":"string"}},` +
	`"required":["kind","evidence","rationale"],"additionalProperties":false}`)

func (r *runner) steerTool() tool.Tool {
	return funcTool{
		spec: llm.ToolSpec{Name: "steer", Parameters: steerSchema,
			Description: "Change the accepted goals in a structured way, with evidence and rationale (recorded in the ledger). Weakening or removing an essential criterion needs a person: asking for it escalates the run."},
		run: r.runSteer,
	}
}

func (r *runner) runSteer(ctx context.Context, args json.RawMessage) tool.Result {
	var s goal.Steer
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return tool.Result{IsError: true, Malformed: true, Output: "invalid arguments for steer: " + err.Error()}
	}
	s.By = "model"
	if w := r.worker(); w != nil {
		return r.refuse(llm.ToolCall{ID: r.callID, Name: "steer"}, &refusal{layer: LayerPhaseGuard,
			reason: fmt.Sprintf("a worker's goal is its run's (%s): the run's plan changes only by a person's steering (ultra goals steer %s) when it stands", w.Run, w.Run)})
	}
	err := r.steer(ctx, s)
	switch {
	case errors.Is(err, goal.ErrNeedsPerson):
		r.escalate(phase.BySystem, StatusEscalated, "the model asked to weaken or remove an accepted essential criterion, which needs a person: "+err.Error())
		return tool.Result{IsError: true, Output: "Refused: " + err.Error() + ". Only a person may weaken an accepted essential criterion; the run is escalated to one."}
	case err != nil:
		return tool.Result{IsError: true, Output: "Steering refused: " + err.Error()}
	}
	out := fmt.Sprintf("Steering accepted (%s) and recorded in the ledger.", s.Kind)
	if g := r.goals.file.Current(); g != nil {
		out += fmt.Sprintf("\nGoal in hand: %s: %s\n%s", g.ID, g.Title, criteriaList(g))
	}
	return tool.Result{Output: out}
}
