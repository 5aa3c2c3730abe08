package schedule

import (
	"fmt"
	"slices"
	"time"
)

// State is where one dispatch of a schedule stands. The states are the
// scheduler's own, apart from the lifecycle of the run a dispatch makes.
type State string

const (
	// Queued: the next due time, recorded ahead.
	Queued State = "queued"
	// Due: its time has come; a worker may claim it.
	Due State = "due"
	// Claimed: one worker took it (only one can) and starts its run.
	Claimed State = "claimed"
	// Dispatched: its run exists (the run's task row names the schedule).
	Dispatched State = "dispatched"
	// Consumed: its run came to an end (whatever the outcome).
	Consumed State = "consumed"
	// Expired: it will never run: missed under the catch-up policy, the
	// schedule was paused or removed, or its run could not start.
	Expired State = "expired"
)

// States lists every state in the order a dispatch goes through them.
var States = []State{Queued, Due, Claimed, Dispatched, Consumed, Expired}

// moves are the legal moves of a dispatch; a move not here is refused.
var moves = map[State][]State{
	Queued:  {Due, Expired},
	Due:     {Claimed, Expired},
	Claimed: {Dispatched, Due, Expired}, // back to due: its worker died before the run began
	// Dispatched ends when its run does.
	Dispatched: {Consumed},
}

// CanMove reports whether a dispatch may go from one state to another.
func CanMove(from, to State) bool { return slices.Contains(moves[from], to) }

// Open reports whether a dispatch in this state may still make a run.
func (s State) Open() bool { return s == Queued || s == Due || s == Claimed }

// CatchUp is what a worker does about due times it missed (no worker ran
// when they came): run the latest of them once, or skip them all.
type CatchUp string

const (
	CatchUpOnce CatchUp = "once"
	CatchUpSkip CatchUp = "skip"
)

// ParseCatchUp checks a --catch-up value.
func ParseCatchUp(v string) (CatchUp, error) {
	switch CatchUp(v) {
	case "", CatchUpOnce:
		return CatchUpOnce, nil
	case CatchUpSkip:
		return CatchUpSkip, nil
	}
	return "", fmt.Errorf("--catch-up %q: once (run the latest missed dispatch once) or skip", v)
}

// Grace is how late a worker may see a due time and still count it as
// on time: under catch_up=skip, a due time older than this is missed.
const Grace = time.Minute

// lookBack bounds how far back a worker walks a schedule's missed due
// times; older ones are neither run nor listed.
const lookBack = 366 * 24 * time.Hour

// maxExpired is how many missed due times are recorded one by one; the
// count says how many more there were.
const maxExpired = 20

// Decision is what a worker does about one schedule now.
type Decision struct {
	// Due is the dispatch to make due now (zero: none).
	Due time.Time
	// Expire are missed due times to record as expired, oldest first
	// (the latest maxExpired of them).
	Expire []time.Time
	// Missed is how many due times were missed in all, those listed in
	// Expire and those older.
	Missed int
	// Next is the first due time after now (zero: none).
	Next time.Time
}

// Decide is what a worker does about a schedule at now, from being the
// latest due time already recorded (or the moment the schedule was made,
// when none is): every due time in (from, now] is either the one to run
// (the latest; under catch_up=skip only when it is within Grace) or
// missed.
func Decide(s Spec, policy CatchUp, from, now time.Time) Decision {
	var d Decision
	start := from
	if now.Sub(start) > lookBack {
		start = now.Add(-lookBack)
	}
	var due []time.Time // the latest maxExpired+1 due times in (start, now]
	count := 0
	if s.Every > 0 {
		first, _ := s.Next(start)
		if !first.After(now) {
			every := time.Duration(s.Every)
			count = int(now.Sub(first)/every) + 1
			last := first.Add(time.Duration(count-1) * every)
			for i := min(count, maxExpired+1) - 1; i >= 0; i-- {
				due = append(due, last.Add(-time.Duration(i)*every))
			}
		}
	} else {
		for t, ok := s.Next(start); ok && !t.After(now); t, ok = s.Next(t) {
			count++
			due = append(due, t)
			if len(due) > maxExpired+1 {
				due = due[1:]
			}
		}
	}
	d.Next, _ = s.Next(now)
	if count == 0 {
		return d
	}
	latest := due[len(due)-1]
	d.Expire = due[:len(due)-1]
	d.Missed = count - 1
	if policy == CatchUpSkip && now.Sub(latest) > Grace {
		d.Expire = due
		d.Missed = count
		return d
	}
	d.Due = latest
	return d
}

// Reasons a dispatch expires, as recorded on it.
const (
	ReasonMissed  = "missed while no worker ran; catch_up=once runs only the latest"
	ReasonSkipped = "missed while no worker ran; catch_up=skip"
	ReasonPaused  = "the schedule was paused"
	// ReasonSuperseded: it waited on a run of the schedule that was
	// still going on, and a later due time came.
	ReasonSuperseded = "a later due time came while the schedule's previous run was still going on"
	ReasonRemoved    = "the schedule was removed"
)

// MissedReason is the reason recorded on a missed dispatch.
func MissedReason(policy CatchUp) string {
	if policy == CatchUpSkip {
		return ReasonSkipped
	}
	return ReasonMissed
}
