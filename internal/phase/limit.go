package phase

import "fmt"

// Limit is a count a run uses up, and escalates when it is gone: the
// failed verifications it may have (Budgets.MaxRetries), or a goal's
// build/verify cycles (goal.MaxCycles).
type Limit struct {
	What string `json:"what"` // what is counted: "retries", "cycles of goal G001"
	Used int    `json:"used"`
	Max  int    `json:"max"`
}

// Left is how many more the run may use.
func (l Limit) Left() int { return max(0, l.Max-l.Used) }

// String is "2 of 5 cycles of goal G001 used".
func (l Limit) String() string { return fmt.Sprintf("%d of %d %s used", l.Used, l.Max, l.What) }

// Binding is the limit of ls that ends the run first: the one with the
// fewest left, the first of equals. A limit with no Max is none; with
// none, Binding is the zero Limit.
func Binding(ls ...Limit) Limit {
	var b Limit
	for _, l := range ls {
		if l.Max > 0 && (b.Max == 0 || l.Left() < b.Left()) {
			b = l
		}
	}
	return b
}

// RetryLimit is the run's limit of failed verifications.
func (s State) RetryLimit() Limit {
	return Limit{What: "retries", Used: s.Used.FailedVerifies, Max: s.Budgets.MaxRetries}
}

// CleanupTurns is how many model requests one cleanup pass may make;
// when they are used, ultra ends the pass itself.
const CleanupTurns = 8

// CleanupLimit is a cleanup pass's limit of turns, used of them so far.
func CleanupLimit(used int) Limit {
	return Limit{What: "cleanup turns", Used: used, Max: CleanupTurns}
}
