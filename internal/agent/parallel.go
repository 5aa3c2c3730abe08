package agent

// A parallel run (ultra run --parallel N) plans and accepts its goals as
// every run does. Then, instead of building them one after another in
// its own worktree, it gives each goal whose dependencies have landed to
// a worker (worker.go): a run of its own, with its own worktree and
// branch cut from the run's branch, whose one goal is the run's goal. A
// worker builds, verifies and commits its goal through the same path as
// every run; its commit reaches the run's branch only through integrate
// (integrate.go), which merges it, verifies the merged tree and commits
// the merge. When every goal has landed, the run verifies its branch as
// every run does after its last goal: the final gate, the cleanup pass
// and the review, in its own worktree.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/claim"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
)

// parallelState is what a parallel run keeps beside its goals.
type parallelState struct {
	// Workers is how many workers work at once, at most.
	Workers int `json:"workers"`
	// Dir is where the workers' worktrees go; Setup and SetupTimeout
	// are the workspace.setup commands each new worktree runs.
	Dir          string        `json:"dir"`
	Setup        []string      `json:"setup,omitempty"`
	SetupTimeout time.Duration `json:"setup_timeout,omitempty"`
	// ByGoal names each goal's worker (its run id): the one it was last
	// given to.
	ByGoal map[string]string `json:"by_goal,omitempty"`
}

// coordinator is a parallel run's side of its workers in this process:
// it starts them, takes their goal commits one at a time (integrate),
// and hears when they end.
type coordinator struct {
	run    *runner
	pool   *budgetPool
	merges chan *mergeRequest
	ended  chan workerEnd
	// active are the goals a worker of this process works now, by goal
	// (written under mu: workers read it).
	active map[string]string
	mu     sync.Mutex
	// waits are the workers waiting for claims, and on whom.
	waits map[string][]string
}

// mergeRequest is a worker's goal commit, to land on the run's branch.
type mergeRequest struct {
	worker, goal string
	commit       string // the worker's commit of its goal
	from         string // the run's commit the worker's work starts from
	reply        chan mergeVerdict
}

// mergeVerdict is what became of a mergeRequest.
type mergeVerdict struct {
	merged string // the run's commit that took the goal; "" when it did not land
	tip    string // the run's branch tip, which the worker's work goes on from
	reason string // why the goal did not land: what its worker reads
	// evidence is what failed, at length: the other side of a conflict,
	// the gate's summary, the criteria's results.
	evidence string
}

// workerEnd is a worker's run ending in this process.
type workerEnd struct {
	goal, worker string
	out          *Outcome
	err          error
}

// parallelNow reports that the run's goals are for its workers now: a
// parallel run whose plan is accepted, not yet at its final gate.
func (r *runner) parallelNow() bool {
	if !r.hasGoals() || r.st.Goals.Parallel == nil || r.goals.file == nil || r.goals.file.Accepted == nil || r.st.Goals.Final {
		return false
	}
	p := r.st.Phase.Phase
	return p == phase.Building || p == phase.Iterating
}

// runParallel works the run's goals with its workers until every goal has
// landed, a worker ends without its goal, a budget runs out or a person
// stops the run; then the run goes on as after its last goal. It is one
// step of the run's loop: it returns with the run stopped, or verifying
// its branch (finishParallel).
func (r *runner) runParallel(ctx context.Context) error {
	c := &coordinator{run: r, pool: newBudgetPool(r.st.Phase, r.o.Now), merges: make(chan *mergeRequest),
		ended: make(chan workerEnd, len(r.goals.file.Goals)+1), active: map[string]string{}, waits: map[string][]string{}}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.settleWorktree(ctx)
	r.freeClaims(ctx)
	r.ctl.setActivity(fmt.Sprintf("working %d goals with up to %d workers", len(r.goals.file.Goals), r.st.Goals.Parallel.Workers))
	var asked *store.Request // a person's pause, stop or cancel of the run, passed on to its workers
	var failed *workerEnd    // the first worker that ended without its goal
	failure := ""            // why no more goals start
	for {
		r.tick()
		c.pool.fold(&r.st.Phase)
		if asked == nil {
			if asked = r.endingAsked(ctx); asked != nil {
				c.passOn(ctx, *asked)
			}
		}
		if asked == nil && failure == "" {
			if why, ok := c.pool.exhausted(); ok {
				failure = why // each worker stops at its next step
			} else if err := c.dispatch(wctx); err != nil {
				failure = err.Error()
			}
		}
		if len(c.active) == 0 {
			break
		}
		if err := r.save(); err != nil {
			return err
		}
		select {
		case q := <-c.merges:
			// The commits handed in meanwhile land with it.
			qs := []*mergeRequest{q}
			for more := true; more; {
				select {
				case q := <-c.merges:
					qs = append(qs, q)
				default:
					more = false
				}
			}
			for i, v := range r.integrate(ctx, qs) {
				qs[i].reply <- v
			}
		case e := <-c.ended:
			// A worker whose goal failed for good never lands: its claims
			// go before it counts as ended, so that a worker waiting for
			// them, which reads them first, finds them free.
			lost := r.goalFailedBy(e)
			r.freeClaims(ctx)
			c.end(e)
			switch {
			case e.err == nil && e.out != nil && e.out.Status == StatusComplete:
			case lost:
				// goals.on_failure = continue: the others go on.
			case failed == nil:
				failed = &e
				failure = workerFailure(e)
			}
		case <-time.After(r.o.pollEvery()):
		}
	}
	c.pool.fold(&r.st.Phase)
	switch {
	case ctx.Err() != nil:
		r.finish(StatusInterrupted, "interrupted")
	case asked != nil:
		// The run's own safe point takes the person's request next.
	case r.allLanded():
		r.finishParallel(ctx)
	case failure == "" && len(r.failedGoals()) > 0:
		r.escalate(phase.BySystem, StatusEscalated, "goals failed: "+strings.Join(r.failedGoals(), "; ")+"; "+strings.Join(r.stuckGoals(), "; ")+" (a person decides how to go on)")
	case failed != nil && failed.out != nil && failed.out.Status == StatusBudgetExhausted:
		r.escalate(phase.ByBudget, StatusBudgetExhausted, failure)
	case failure != "" && strings.HasPrefix(failure, "the parallel run's "):
		r.escalate(phase.ByBudget, StatusBudgetExhausted, failure)
	case failed != nil && failed.out != nil && (failed.out.Status == StatusStopped || failed.out.Status == StatusPaused):
		r.finish(failed.out.Status, failure+fmt.Sprintf(" (ultra resume %s goes on with every worker)", r.row.ID))
	case failure != "":
		r.escalate(phase.BySystem, StatusEscalated, failure+fmt.Sprintf(" (ultra resume %s goes on with every worker)", r.row.ID))
	default:
		r.escalate(phase.BySystem, StatusEscalated, "no goal left can start: "+strings.Join(r.stuckGoals(), "; "))
	}
	return nil
}

// dispatch gives the goals that may start to workers, in the goals'
// order, while fewer than the run's workers work: a goal in progress
// whose worker is not working in this process (the run was stopped or
// resumed) gets its worker back; a pending goal whose dependencies have
// all landed gets a new one.
func (c *coordinator) dispatch(ctx context.Context) error {
	r := c.run
	f := r.goals.file
	for _, i := range goal.Order(f.Goals) {
		if len(c.active) >= r.st.Goals.Parallel.Workers {
			return nil
		}
		g := &f.Goals[i]
		if _, busy := c.active[g.ID]; busy || len(f.Waiting(g)) > 0 {
			continue
		}
		switch g.Status {
		case goal.InProgress:
			if id := r.st.Goals.Parallel.ByGoal[g.ID]; id != "" {
				if err := c.resumeWorker(ctx, g, id); err == nil {
					continue
				} else if !workerGone(err) {
					return fmt.Errorf("goal %s: its worker %s cannot go on: %w", g.ID, id, err)
				}
			}
		case goal.Pending:
		default:
			continue
		}
		if err := c.startWorker(ctx, g); err != nil {
			return fmt.Errorf("goal %s: ultra could not start a worker for it: %w", g.ID, err)
		}
		r.freeClaims(ctx) // a worker that could not be resumed gave its goal to this one
	}
	return nil
}

// freeClaims releases what the run's workers claimed and will never
// land: a worker holds claims only while it is the worker of a goal in
// progress. The worker of a goal that landed (a process that ended
// between the merge and the release), that failed for good (goals.on_failure
// = continue) or that was given to another worker loses them.
func (r *runner) freeClaims(ctx context.Context) {
	held, err := r.o.Store.HeldClaims(ctx, r.row.ID)
	if err != nil || len(held) == 0 {
		return
	}
	current := map[string]bool{}
	for _, g := range r.goals.file.Goals {
		if g.Status == goal.InProgress {
			current[r.st.Goals.Parallel.ByGoal[g.ID]] = true
		}
	}
	done := map[string]bool{}
	for _, h := range held {
		if current[h.Worker] || done[h.Worker] {
			continue
		}
		done[h.Worker] = true
		why := "its goal " + h.Goal + " will not land with it"
		if g := r.goals.file.Goal(h.Goal); g != nil {
			why = fmt.Sprintf("its goal %s is %s", h.Goal, g.Status)
			if g.Status == goal.InProgress {
				why += " with another worker"
			}
		}
		if n, err := r.o.Store.ReleaseClaims(ctx, h.Worker, why, r.o.Now()); err != nil {
			r.emit(event.Warning, event.WarningData{Message: "the worker's claims were not released: " + err.Error()})
		} else if n > 0 {
			r.emit(event.Worker, event.WorkerData{Worker: h.Worker, Goal: h.Goal, Event: "released", Reason: fmt.Sprintf("%d claims released: %s", n, why)})
		}
	}
}

// end takes a worker's end in this process.
func (c *coordinator) end(e workerEnd) {
	c.mu.Lock()
	delete(c.active, e.goal)
	delete(c.waits, e.worker)
	c.mu.Unlock()
	status, reason := "", ""
	if e.out != nil {
		status, reason = e.out.Status, e.out.Reason
	}
	if e.err != nil {
		status, reason = StatusFailed, e.err.Error()
	}
	c.run.emit(event.Worker, event.WorkerData{Worker: e.worker, Goal: e.goal, Event: "ended", Status: status, Reason: reason})
}

// workerFailure says why a worker's end stops the run from starting more
// goals.
func workerFailure(e workerEnd) string {
	if e.err != nil {
		return fmt.Sprintf("the worker %s of goal %s failed: %v", e.worker, e.goal, e.err)
	}
	if e.out == nil {
		return fmt.Sprintf("the worker %s of goal %s ended", e.worker, e.goal)
	}
	return fmt.Sprintf("the worker %s of goal %s ended %s: %s", e.worker, e.goal, e.out.Status, e.out.Reason)
}

// goalFailedBy reports that worker e ended because its goal used up its
// caps, in a run that goes on past a failed goal (goals.on_failure =
// continue): the run's goal is then failed too, and the others go on
// (the goals that depend on it never start).
func (r *runner) goalFailedBy(e workerEnd) bool {
	if !r.st.Goals.Continue || e.err != nil || e.out == nil || e.out.Status != StatusEscalated {
		return false
	}
	row, err := r.o.Store.GetRun(context.Background(), e.worker)
	if err != nil {
		return false
	}
	f, err := ReadGoals(row.Workdir, RecordsOf(row))
	if err != nil || f == nil || len(f.Goals) != 1 || f.Goals[0].Status != goal.Failed {
		return false
	}
	g := r.goals.file.Goal(e.goal)
	if g == nil {
		return false
	}
	g.Status, g.Reason, g.UpdatedAt = goal.Failed, f.Goals[0].Reason, r.o.Now().UTC()
	r.recordGoal(ledger.Entry{Kind: ledger.KindGoalFailed, Goal: g.ID, Text: g.Reason + fmt.Sprintf(" (worker %s; goals.on_failure = continue: the run goes on)", e.worker)})
	return true
}

// endingAsked is a person's pause, stop or cancel of the run that its
// safe point has not taken yet (it is left for it).
func (r *runner) endingAsked(ctx context.Context) *store.Request {
	qs, err := r.o.Store.OpenRequests(ctx, r.row.ID)
	if err != nil {
		return nil
	}
	for _, q := range qs {
		switch q.Kind {
		case store.ReqPause, store.ReqStop, store.ReqCancel:
			return &q
		}
	}
	return nil
}

// passOn asks every working worker what a person asked of the run: each
// stops (pauses, is cancelled) at its own next safe point.
func (c *coordinator) passOn(ctx context.Context, q store.Request) {
	for g, w := range c.active {
		reason := fmt.Sprintf("the run %s was asked to %s", c.run.row.ID, q.Kind)
		if q.Reason != "" {
			reason += ": " + q.Reason
		}
		if _, err := c.run.o.Store.AddRequest(ctx, store.Request{Run: w, Kind: q.Kind, Reason: reason, Who: q.Who, Session: q.Session}); err != nil {
			c.run.emit(event.Warning, event.WarningData{Message: fmt.Sprintf("could not pass the %s on to the worker %s of goal %s: %v", q.Kind, w, g, err)})
		}
	}
}

// allLanded reports that every goal that is to land has: complete, or
// taken out of the plan by steering (blocked).
func (r *runner) allLanded() bool {
	for _, g := range r.goals.file.Goals {
		if g.Status != goal.Complete && g.Status != goal.Blocked {
			return false
		}
	}
	return true
}

// stuckGoals says why the goals that did not land could not start.
func (r *runner) stuckGoals() []string {
	var out []string
	f := r.goals.file
	for i := range f.Goals {
		g := &f.Goals[i]
		switch {
		case g.Status == goal.Complete || g.Status == goal.Blocked:
		case len(f.Waiting(g)) > 0:
			out = append(out, fmt.Sprintf("%s waits for %s", g.ID, strings.Join(f.Waiting(g), ", ")))
		default:
			out = append(out, fmt.Sprintf("%s is %s", g.ID, g.Status))
		}
	}
	return out
}

// finishParallel goes on after every goal landed: the run verifies its
// branch as every run does after its last goal (the tests, then the
// final gate: every criterion of every goal on the tree), and its model
// takes the cleanup pass and hears the review as in any run.
func (r *runner) finishParallel(ctx context.Context) {
	var b strings.Builder
	fmt.Fprintf(&b, "Every goal was worked by a worker of this run and landed on its branch %s:\n", r.row.Workspace.Branch)
	for _, g := range r.goals.file.Goals {
		fmt.Fprintf(&b, "- %s (%s): %s, by worker %s, merged as %s\n", g.ID, g.Title, g.Status, r.st.Goals.Parallel.ByGoal[g.ID], shortOr(g.Commit, "-"))
	}
	if err := r.transition(phase.Verifying, phase.BySystem, "every goal landed on the run's branch", ""); err != nil {
		r.escalate(phase.BySystem, StatusEscalated, "the run could not go on to verify its branch: "+err.Error())
		return
	}
	res := r.runVerify(ctx, nil)
	b.WriteString("\nultra verified the run's branch (the final gate):\n")
	b.WriteString(res.Output)
	r.appendMessage(llm.Message{Role: llm.RoleUser, Content: b.String()})
}

func shortOr(hash, none string) string {
	if hash == "" {
		return none
	}
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// waitFor registers that worker waits for holders' claims, unless that
// would close a cycle of waits (then nothing is registered and the cycle
// is returned).
func (c *coordinator) waitFor(worker string, holders []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cycle := claim.WaitCycle(c.waits, worker, holders); cycle != nil {
		return cycle
	}
	c.waits[worker] = holders
	return nil
}

// notWorking are those of workers that no worker of c works as now
// (they ended, or belong to no process): their claims are not released
// while the run waits. A nil c works none.
func (c *coordinator) notWorking(workers []string) []string {
	var out []string
	for _, w := range workers {
		working := false
		if c != nil {
			c.mu.Lock()
			for _, a := range c.active {
				working = working || a == w
			}
			c.mu.Unlock()
		}
		if !working {
			out = append(out, w)
		}
	}
	return out
}

// setActive says worker id works goal in this process.
func (c *coordinator) setActive(goal, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active[goal] = id
}

// waited says worker no longer waits for claims.
func (c *coordinator) waited(worker string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.waits, worker)
}

// recordDispatch records that goal g was given to worker id, starting
// from the run's commit from.
func (r *runner) recordDispatch(g *goal.Goal, id, branch, from string) {
	now := r.o.Now().UTC()
	if g.Status == goal.Pending {
		g.Status, g.StartedAt = goal.InProgress, &now
	}
	g.UpdatedAt = now
	ps := r.st.Goals.Parallel
	if ps.ByGoal == nil {
		ps.ByGoal = map[string]string{}
	}
	ps.ByGoal[g.ID] = id
	r.recordGoal(ledger.Entry{Kind: ledger.KindGoalDispatched, Goal: g.ID, Text: fmt.Sprintf("given to worker %s on %s, from %s", id, branch, shortOr(from, "-")),
		Data: jsonData(map[string]any{"worker": id, "branch": branch, "from": from})})
}
