package agent

import (
	"fmt"
	"time"

	"github.com/ultra-dev/ultra/internal/gate"
)

// A run of the failing tests alone first (the focused pass) saves the
// rest of the suite when they still fail, and costs its own time when
// they pass, since the whole suite runs after it. It is worth trying only
// when the measured durations say it can save something.
const (
	// minFocusSaving: a whole suite that took less than this is run
	// whole; the focused pass compiles and starts as much and could
	// save less than its own cost.
	minFocusSaving = time.Second
	// focusedShare: a focused pass of this run that took this share of
	// the whole suite's time or more saved too little to try again.
	focusedShare = 0.7
)

// focusOn is the decision whose failing tests the next verification runs
// first, from the run's decisions prev (oldest first), or nil: the last
// full run did not fail (why is ""), or the durations measured say a
// focused pass cannot save time (why says which: a short suite, or a
// focused pass of this run that cost about as much as the whole suite).
// The whole suite runs in every case unless the focused pass fails.
func focusOn(prev []gate.Decision) (*gate.Decision, string) {
	last := lastFull(prev)
	if last == nil || last.Status != gate.Fail || len(last.Failing) == 0 {
		return nil, ""
	}
	full := duration(last.Commands)
	if full <= 0 {
		// Not measured (a decision written before durations were kept):
		// try it, as ever.
		return last, ""
	}
	if full < minFocusSaving {
		return nil, fmt.Sprintf("the whole suite took %s: running its failing tests first could save less than it costs", full.Round(time.Millisecond))
	}
	// The latest focused pass since that full run: what another one
	// would cost.
	for i := len(prev) - 1; i >= 0 && &prev[i] != last; i-- {
		if !prev[i].Focused {
			continue
		}
		if f := duration(prev[i].Commands); f > 0 && float64(f) >= focusedShare*float64(full) {
			return nil, fmt.Sprintf("the failing tests alone took %s, the whole suite %s", f.Round(time.Millisecond), full.Round(time.Millisecond))
		}
		break
	}
	return last, ""
}

// duration is how long cmds took, one after the other.
func duration(cmds []gate.Command) time.Duration {
	var d time.Duration
	for _, c := range cmds {
		d += c.Duration
	}
	return d
}
