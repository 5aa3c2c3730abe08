package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Criteria must discriminate: before a plan (or a steering change that
// brings new checks) is accepted, every new criterion's check runs on
// the code the run started from, contained and exactly as it will run
// later (runCriterion), and goal.BaseProblems refuses the criteria whose
// result there is not what they claim (a happy, edge or adversarial
// criterion that already passes; a regression one that does not).

// baseCode is the code the run started from: its base tree without
// ultra's records ("" when git cannot say).
func (r *runner) baseCode(ctx context.Context) string {
	tree := r.st.BaseTree
	if tree == "" && r.row.Workspace.StartCommit != "" {
		tree, _ = workspace.TreeOf(ctx, r.row.Workdir, r.row.Workspace.StartCommit)
	}
	if tree == "" {
		return ""
	}
	return r.codeOf(ctx, tree)
}

// measureBase runs, on the base code, the check of every live criterion
// of goals that has no base result yet, and keeps the result in the
// criterion (Base); the ledger records them once the goals are accepted
// (recordBase). label names the evidence directory ("base", or
// "base-N" for a steering change). A check already run on the base in
// this process is not run again: the base does not change.
func (r *runner) measureBase(ctx context.Context, goals []goal.Goal, label string) {
	code := r.baseCode(ctx)
	now := r.o.Now().UTC()
	var todo, run []target
	for gi := range goals {
		g := &goals[gi]
		for ci := range g.SuccessCriteria {
			if c := &g.SuccessCriteria[ci]; c.Superseded == "" && c.Base == nil {
				todo = append(todo, target{g, c})
			}
		}
	}
	results := make([]check.Result, len(todo))
	var where []int
	for i, t := range todo {
		switch cached, ok := r.baseRuns[baseKey(*t.c)]; {
		case code == "":
			results[i] = check.Result{Status: goal.CriterionBlocked, Summary: "not run: ultra could not tell the code the run started from (git failed)", Reason: "no base tree"}
		case ok:
			results[i] = cached
		default:
			run, where = append(run, t), append(where, i)
		}
	}
	for j, res := range r.runOnBase(ctx, code, run, label, "check-base") {
		results[where[j]] = res
	}
	if ctx.Err() != nil {
		return
	}
	for i, t := range todo {
		res := results[i]
		if code != "" {
			if r.baseRuns == nil {
				r.baseRuns = map[string]check.Result{}
			}
			r.baseRuns[baseKey(*t.c)] = res
		}
		t.c.Base = baseResult(res, code, now)
	}
}

// runOnBase runs the checks of ts on code, the base tree's code (see
// runChecks), in the slots named slot: the base does not change under
// them.
func (r *runner) runOnBase(ctx context.Context, code string, ts []target, label, slot string) []check.Result {
	return r.runChecks(ctx, code, ts, label, slot, nil)
}

// runChecks runs the check of each target on tree, side by side when
// each has a sandbox of its own (its own network and processes), each in
// its own slot of the run's sandbox directory (slot-0, slot-1, …). each,
// when set, is called in the order of ts as soon as a result and those
// before it are in; checks that did not run (ctx ended) are left out.
func (r *runner) runChecks(ctx context.Context, tree string, ts []target, label, slot string, each func(i int, res check.Result)) []check.Result {
	results := make([]check.Result, len(ts))
	done := make([]chan struct{}, len(ts))
	for i := range done {
		done[i] = make(chan struct{})
	}
	workers := 1
	if r.o.sandboxStatus().Available {
		workers = min(max(runtime.NumCPU(), 2), 4)
	}
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for w := range min(workers, len(ts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(ts) {
					return
				}
				if ctx.Err() == nil {
					results[i] = r.runCriterionIn(ctx, tree, ts[i], label, fmt.Sprintf("%s-%d", slot, w))
				}
				close(done[i])
			}
		}()
	}
	for i := range ts {
		<-done[i]
		if ctx.Err() != nil {
			break
		}
		if each != nil {
			each(i, results[i])
		}
	}
	wg.Wait()
	return results
}

// driftRun is the final gate's second look at the base tree (baseDrift),
// started while the final tree's criteria still run.
type driftRun struct {
	code, label string
	key         string   // the inputs its checks ran with (driftInputs)
	live        []target // the criteria to record into
	results     []check.Result
	done        chan struct{}
	cancel      context.CancelFunc
}

// startDrift starts running again, on the base tree, every essential
// fail-to-pass criterion the model proposed (of the goals that are not
// refactors), on copies of them: the final tree's criteria may run at
// the same time. label names the evidence directory.
func (r *runner) startDrift(ctx context.Context, label string) *driftRun {
	dctx, cancel := context.WithCancel(ctx)
	dr := &driftRun{code: r.baseCode(ctx), label: label, key: r.driftInputs(), live: r.driftTargets(), done: make(chan struct{}), cancel: cancel}
	run := copies(dr.live)
	go func() {
		defer close(dr.done)
		if dr.code != "" {
			// Slots of its own: it may run while a steering's new
			// criteria run on the base (measureBase).
			dr.results = r.runOnBase(dctx, dr.code, run, label, "check-drift")
		}
	}()
	return dr
}

// driftInputs is what a look at the base tree depends on besides its
// criteria (inputsKey of the base tree: the dependency directories, live
// in the checks' checkouts, the toolchain, the environment).
func (r *runner) driftInputs() string {
	return r.o.inputsKey(r.row.Workdir, r.st.DepDirs, r.st.BaseTree, verify.Request{Commands: r.o.VerifyCommands, Timeout: r.o.VerifyTimeout})
}

// driftTargets are the criteria the final gate runs on the base tree
// again: every essential fail-to-pass criterion the model proposed that
// ran there, of the goals that are not refactors.
func (r *runner) driftTargets() []target {
	var ts []target
	for gi := range r.goals.file.Goals {
		g := &r.goals.file.Goals[gi]
		if g.Refactor || g.Status == goal.Blocked {
			continue
		}
		for ci := range g.SuccessCriteria {
			c := &g.SuccessCriteria[ci]
			if c.Superseded == "" && c.Essential && c.Expect == goal.FailToPass && c.Base != nil && c.Base.NotRun == "" {
				ts = append(ts, target{g, c})
			}
		}
	}
	return ts
}

// copies are ts with copies of their criteria, to run while the
// criteria themselves may be recorded into.
func copies(ts []target) []target {
	out := make([]target, len(ts))
	for i, t := range ts {
		c := *t.c
		out[i] = target{&goal.Goal{ID: t.g.ID}, &c}
	}
	return out
}

// abandon stops a drift run whose results are not wanted (the final
// gate did not get that far) and waits for its checks to end.
func (dr *driftRun) abandon() {
	if dr == nil {
		return
	}
	dr.cancel()
	<-dr.done
}

// baseDrift waits for dr and records what each criterion showed on the
// base tree again; it returns those that pass there now: they never
// depended on the change (the time, the machine, chance).
func (r *runner) baseDrift(ctx context.Context, dr *driftRun) []string {
	<-dr.done
	defer dr.cancel()
	if dr.code == "" {
		return []string{"ultra could not tell the code the run started from (git failed), so it could not check that the criteria still fail there"}
	}
	var drift []string
	now := r.o.Now().UTC()
	for i, res := range dr.results {
		if ctx.Err() != nil {
			return nil
		}
		t := dr.live[i]
		t.c.Recheck = baseResult(res, dr.code, now)
		t.c.Recheck.Ledger = r.goals.ledger.Len() + 1
		r.recordGoal(ledger.Entry{Kind: ledger.KindCriterionBase, Goal: t.g.ID, Criterion: t.c.ID,
			Digest: evidenceDigest(res), Evidence: res.Files,
			Text: fmt.Sprintf("%s on the base tree again at the final gate (it must still fail there): %s", res.Status, oneLine(res.Summary, 200)),
			Data: jsonData(map[string]any{"tree": dr.code, "expect": t.c.Expect, "status": res.Status, "final": dr.label})})
		r.emit(event.Criterion, event.CriterionData{Goal: t.g.ID, Criterion: t.c.ID, Surface: string(t.c.SurfaceOf()), Channel: string(t.c.Channel), Status: string(res.Status),
			Summary: res.Summary, Reason: res.Reason, Evidence: evidencePaths(res.Files), Base: t.c.Expect})
		if res.Status == goal.CriterionPass {
			drift = append(drift, fmt.Sprintf("%s (%s)", t.c.ID, oneLine(res.Summary, 200)))
		}
	}
	return drift
}

// baseResult is what a check showed on the base tree, as a criterion
// keeps it.
func baseResult(res check.Result, tree string, at time.Time) *goal.BaseResult {
	return &goal.BaseResult{Status: res.Status, Summary: oneLine(res.Summary, 600), Reason: oneLine(res.Reason, 400),
		Tree: tree, Files: res.Files, At: at}
}

// baseKey identifies a check for the base runs of one process: the
// same channel and check give the same result on the same tree.
func baseKey(c goal.Criterion) string {
	b, _ := json.Marshal(struct {
		Channel goal.Channel
		Check   goal.Check
	}{c.Channel, c.Check})
	return string(b)
}

// baseProblems runs the base checks of goals (see measureBase) and lists
// the criteria that do not discriminate, each at its place: where names
// goal i as the planner sent it (goals[i], split[i]).
func (r *runner) baseProblems(ctx context.Context, goals []goal.Goal, label string, where func(i int) string) []goal.Problem {
	r.measureBase(ctx, goals, label)
	var ps []goal.Problem
	for i, g := range goals {
		ps = append(ps, goal.BaseProblems(where(i), g)...)
	}
	return ps
}

// validBaseProblems runs on the base tree the criteria of goals that
// the problems found so far do not name, and returns what their results
// say of each of them (a goal's own rules wait for a valid proposal).
func (r *runner) validBaseProblems(ctx context.Context, goals []goal.Goal, probs []goal.Problem, at func(i int) string) []goal.Problem {
	for i := range goals {
		for j := range goals[i].SuccessCriteria {
			where := fmt.Sprintf("%s.criteria[%d]", at(i), j)
			for _, p := range probs {
				if p.Where == where || strings.HasPrefix(p.Where, where+".") {
					goals[i].SuccessCriteria[j].Superseded = "invalid"
				}
			}
		}
	}
	r.measureBase(ctx, goals, "base")
	var out []goal.Problem
	for i, g := range goals {
		for _, p := range goal.BaseProblems(at(i), g) {
			if strings.Contains(p.Where, ".criteria[") {
				out = append(out, p)
			}
		}
	}
	return out
}

// refactorProblems refuses refactor goals in a run a person did not
// declare a refactor: only a person says that a task asks for no change
// of behaviour.
func (r *runner) refactorProblems(goals []goal.ProposedGoal, where func(i int) string) []goal.Problem {
	if r.st.Goals != nil && r.st.Goals.Refactor {
		return nil
	}
	var ps []goal.Problem
	for i, g := range goals {
		if g.Refactor {
			ps = append(ps, goal.Problem{Where: where(i) + ".refactor", What: "only a person declares a refactor, by starting the run with ultra run --refactor, and this run was not: each goal needs a criterion that fails on the base tree and passes after the change (if the task is a refactor, say so in your answer: the person can start it again with --refactor)"})
		}
	}
	return ps
}

// essentialProblems refuses criteria the model proposes as not
// essential: a criterion that fails at the end would not keep its goal
// from completing, so a model could make the checks that show the goal
// optional. Only a person makes a criterion non-essential (ultra goals
// steer --kind revise_criterion --essential=false).
func essentialProblems(goals []goal.ProposedGoal, where func(i int) string) []goal.Problem {
	var ps []goal.Problem
	for i, g := range goals {
		for j, c := range g.Criteria {
			if c.Essential != nil && !*c.Essential {
				ps = append(ps, goal.Problem{Where: fmt.Sprintf("%s.criteria[%d].essential", where(i), j),
					What: "a criterion the planner proposes decides its goal: only a person makes one non-essential"})
			}
		}
	}
	return ps
}

// recordBase appends a criterion_base entry for every criterion of goals
// whose base result the ledger does not hold yet.
func (r *runner) recordBase(goals []goal.Goal) {
	for gi := range goals {
		g := &goals[gi]
		for ci := range g.SuccessCriteria {
			c := &g.SuccessCriteria[ci]
			if c.Base == nil || c.Base.Ledger != 0 || c.Base.NotRun != "" {
				continue
			}
			c.Base.Ledger = r.goals.ledger.Len() + 1
			r.recordGoal(ledger.Entry{Kind: ledger.KindCriterionBase, Goal: g.ID, Criterion: c.ID,
				Digest: evidenceDigest(check.Result{Files: c.Base.Files, Summary: c.Base.Summary}), Evidence: c.Base.Files,
				Text: fmt.Sprintf("%s on the base tree (%s): %s", c.Base.Status, strings.ReplaceAll(c.Expect, "_", " "), oneLine(c.Base.Summary, 200)),
				Data: jsonData(map[string]any{"tree": c.Base.Tree, "expect": c.Expect, "status": c.Base.Status})})
			r.emit(event.Criterion, event.CriterionData{Goal: g.ID, Criterion: c.ID, Surface: string(c.SurfaceOf()), Channel: string(c.Channel), Status: string(c.Base.Status),
				Summary: c.Base.Summary, Reason: c.Base.Reason, Evidence: evidencePaths(c.Base.Files), Base: c.Expect})
		}
	}
}

// notRunOnBase marks the criteria a person added or changed by steering
// a stopped run: they are a person's, not judged against the base.
func notRunOnBase(f *goal.File, by string) {
	for gi := range f.Goals {
		for ci := range f.Goals[gi].SuccessCriteria {
			c := &f.Goals[gi].SuccessCriteria[ci]
			if c.Base == nil {
				c.Base = &goal.BaseResult{Status: goal.CriterionPending, NotRun: "given by " + by + " while the run stood; a person's criterion is not judged against the base"}
			}
		}
	}
}
