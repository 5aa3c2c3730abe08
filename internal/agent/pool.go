package agent

import (
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/phase"
)

// budgetPool is the budgets a parallel run shares with its workers: one
// count of model turns, tokens and cost across all of them, against the
// run's budgets, and one wall clock (the run's). Each worker reports its
// counters after every answer; every worker and the run look here before
// each step, so a budget that runs out stops them all at their next
// safe point.
type budgetPool struct {
	mu      sync.Mutex
	budgets phase.Budgets
	used    phase.Counters            // the run's own and every worker's since
	seen    map[string]phase.Counters // each worker's counters as last reported
	wall    time.Duration             // the run's wall time when the pool was made
	since   time.Time
	now     func() time.Time
}

func newBudgetPool(st phase.State, now func() time.Time) *budgetPool {
	return &budgetPool{budgets: st.Budgets, used: st.Used, seen: map[string]phase.Counters{}, wall: st.Used.Wall, since: now(), now: now}
}

// join starts counting worker from its counters now (a resumed worker's
// earlier answers are in the run's counters already).
func (p *budgetPool) join(worker string, used phase.Counters) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[worker] = used
}

// report adds what worker used since its last report (nil: no pool).
func (p *budgetPool) report(worker string, used phase.Counters) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	last := p.seen[worker]
	p.used.Turns += max(0, used.Turns-last.Turns)
	p.used.InputTokens += max(0, used.InputTokens-last.InputTokens)
	p.used.OutputTokens += max(0, used.OutputTokens-last.OutputTokens)
	p.used.Cost += max(0, used.Cost-last.Cost)
	p.seen[worker] = used
}

// state is the run's budgets with everything used so far.
func (p *budgetPool) state() phase.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.used
	u.Wall = p.wall + p.now().Sub(p.since)
	return phase.State{Budgets: p.budgets, Used: u}
}

// exhausted names the first shared budget that ran out, with the reason,
// as phase.State.Exhausted does for one run.
func (p *budgetPool) exhausted() (string, bool) {
	_, reason, ok := p.state().Exhausted()
	if ok {
		reason = "the parallel run's " + reason
	}
	return reason, ok
}

// exhaustedBy is exhausted of a pool that may be nil (a run that is no
// worker's).
func (p *budgetPool) exhaustedBy() (string, bool) {
	if p == nil {
		return "", false
	}
	return p.exhausted()
}

// fold puts what the workers used into the run's counters (its wall time
// is its own).
func (p *budgetPool) fold(st *phase.State) {
	s := p.state()
	st.Used.Turns, st.Used.InputTokens, st.Used.OutputTokens, st.Used.Cost = s.Used.Turns, s.Used.InputTokens, s.Used.OutputTokens, s.Used.Cost
}
