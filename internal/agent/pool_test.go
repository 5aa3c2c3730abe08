package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/phase"
)

// One cost budget across a parallel run's workers: each worker's
// answers count once, a resumed worker's earlier ones not again, and the
// pool runs out for all when their sum reaches the run's budget.
func TestBudgetPool(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := phase.NewIn(phase.Build, phase.Budgets{MaxCost: 1.0, MaxWall: time.Hour})
	st.Used = phase.Counters{Turns: 2, Cost: 0.1, Wall: time.Minute}
	p := newBudgetPool(st, clock)
	p.join("w1", phase.Counters{})
	p.join("w2", phase.Counters{Turns: 5, Cost: 0.5}) // resumed: counted already
	p.report("w1", phase.Counters{Turns: 1, Cost: 0.2, InputTokens: 100})
	p.report("w1", phase.Counters{Turns: 2, Cost: 0.3, InputTokens: 150})
	p.report("w2", phase.Counters{Turns: 6, Cost: 0.6})
	s := p.state()
	if s.Used.Turns != 5 || s.Used.InputTokens != 150 || s.Used.Cost < 0.499 || s.Used.Cost > 0.501 {
		t.Fatalf("used %+v", s.Used)
	}
	if _, ok := p.exhausted(); ok {
		t.Fatal("exhausted at $0.50 of $1")
	}
	p.report("w2", phase.Counters{Turns: 7, Cost: 1.1})
	why, ok := p.exhausted()
	if !ok || !strings.Contains(why, "the parallel run's cost budget exhausted") {
		t.Fatalf("exhausted %v %q", ok, why)
	}
	run := st
	p.fold(&run)
	if run.Used.Cost < 0.999 || run.Used.Wall != time.Minute {
		t.Fatalf("folded %+v", run.Used)
	}
	// The wall clock is the run's.
	now = now.Add(time.Hour)
	if why, ok := p.exhausted(); !ok || !strings.Contains(why, "cost") {
		t.Fatalf("%q", why)
	}
	var none *budgetPool
	none.report("w", phase.Counters{Turns: 1})
	if _, ok := none.exhaustedBy(); ok {
		t.Fatal("no pool ran out")
	}
}
