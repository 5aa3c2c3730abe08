// Package tasks decides how the tasks surface shows each run or session:
// its class (running, waiting for a person, stuck, resumable, finished)
// and the next action a person would take, as an exact ultra command. It
// is pure: the caller says whether a task's process is alive and what
// time it is.
package tasks

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Classes, in the order the view lists them.
const (
	Waiting   = "waiting"   // needs a person: a plan to accept, a call to approve, a question
	Stuck     = "stuck"     // says running, its process alive (or on another host) but silent
	Running   = "running"   // a live process drives it
	Queued    = "queued"    // submitted to a fleet: no worker has taken it yet
	Paused    = "paused"    // a person paused or stopped it; resume goes on
	Resumable = "resumable" // stopped for a reason a person can act on: interrupted, escalated, out of budget
	Failed    = "failed"    // ultra or the model provider failed; resumable once the cause is fixed
	Done      = "done"
	Cancelled = "cancelled"
)

// Waiting kinds: what a waiting task needs from a person.
const (
	ForPlan     = "plan"     // plan (goals) acceptance
	ForApproval = "approval" // a tool call waits for approval
	ForQuestion = "question" // the model asked something
	ForNext     = "next"     // an assisted run waits for ultra next at the end of a unit
)

// A live run writes its heartbeat every BeatEvery; one older than
// StaleAfter means its process is stuck or gone. Every surface judges by
// these (ultra tasks, ultra doctor), and the runner beats by BeatEvery.
const (
	BeatEvery  = 2 * time.Second
	StaleAfter = 15 * time.Second
)

// Process says what the caller knows of a task's process.
type Process int

const (
	// ProcessUnknown: the process cannot be checked from here (another
	// host); only the heartbeat tells.
	ProcessUnknown Process = iota
	ProcessAlive
	ProcessDead
)

// Input is what classifying a task needs.
type Input struct {
	ID         string
	Status     string // the run's status: running, complete, escalated, budget_exhausted, needs_approval, interrupted, failed, cancelled, paused, stopped
	TaskStatus string // todo|running|verifying|reviewing|done|blocked|paused|failed|cancelled|retrying
	Reason     string
	Waiting    string // what a person must do, as the run recorded it
	Process    Process
	PID        int
	Heartbeat  time.Time // zero when the process never beat
	Branch     string    // the run's branch; "" when it has none
	Landed     bool
	Undone     bool
	Removed    bool // its worktree was removed: nothing to resume
	// Parent is the parallel run a worker works for ("" for any other
	// run): a worker goes on, or lands, only with its run.
	Parent string
}

// Class is a task's place in the view.
type Class struct {
	Class  string `json:"class"`
	For    string `json:"waiting_for,omitempty"` // for Waiting: plan, approval, question
	Why    string `json:"why,omitempty"`         // a short reason
	Next   string `json:"next,omitempty"`        // the exact command a person would run next, "" when nothing is left to do
	Active bool   `json:"active"`                // still in play (not done, failed or cancelled)
}

// Classify places a task in the view as of now. A worker of a parallel
// run is classed as any run, but what a person does next is done to its
// run: resume the run (which resumes its workers), and nothing to land
// (its goal landed on the run's branch).
func Classify(in Input, now time.Time) Class {
	c := classify(in, now)
	if in.Parent == "" {
		return c
	}
	switch {
	case c.Class == Done:
		c.Next = ""
	case strings.HasPrefix(c.Next, "ultra resume "+in.ID), strings.HasPrefix(c.Next, "ultra next "+in.ID):
		c.Next = "ultra resume " + in.Parent
	}
	return c
}

func classify(in Input, now time.Time) Class {
	id := in.ID
	resume := "ultra resume " + id
	if in.Status == "running" && in.Process == ProcessDead {
		// Classified as what every surface calls it (Shown).
		in.Status, in.Reason = Interrupted, Interrupted+": "+deadWhy(in)
	}
	switch in.Status {
	case "running":
		if stale(in, now) {
			why := fmt.Sprintf("no heartbeat for %s", Age(now.Sub(in.Heartbeat)))
			if in.PID > 0 && in.Process == ProcessAlive {
				why += fmt.Sprintf(" (pid %d alive)", in.PID)
			}
			return Class{Class: Stuck, Why: why, Next: "ultra status " + id, Active: true}
		}
		if in.Waiting != "" {
			kind, cmd := waitingFor(in.Waiting, id)
			return Class{Class: Waiting, For: kind, Why: in.Waiting, Next: cmd, Active: true}
		}
		return Class{Class: Running, Why: in.TaskStatus, Active: true}
	case "needs_approval":
		kind, cmd := ForPlan, "ultra approve "+id
		if in.Waiting != "" {
			kind, cmd = waitingFor(in.Waiting, id)
		}
		return Class{Class: Waiting, For: kind, Why: pick(in.Waiting, in.Reason), Next: cmd, Active: true}
	case "paused":
		return Class{Class: Paused, Why: pick(in.Reason, in.Status), Next: "ultra next " + id, Active: true}
	case "stopped":
		return Class{Class: Paused, Why: pick(in.Reason, in.Status), Next: resume, Active: true}
	case "interrupted", "escalated", "budget_exhausted":
		if in.Undone {
			return Class{Class: Cancelled, Why: in.Status + "; its work was undone", Active: false}
		}
		if in.Removed {
			// Nothing to resume in: ultra resume would refuse.
			return Class{Class: Cancelled, Why: in.Status + "; its worktree was removed, so it cannot go on", Active: false}
		}
		next := resume
		if strings.Contains(in.Reason, "needs a person's waiver") {
			// Resuming would only escalate again: a person accepts the
			// tests' verdict first.
			next = "ultra gate waive " + id + ` --reason "…"`
		}
		return Class{Class: Resumable, Why: pick(in.Reason, in.Status), Next: next, Active: true}
	case "complete":
		c := Class{Class: Done, Why: pick(in.Reason, "complete")}
		if in.Branch != "" && !in.Landed && !in.Undone {
			c.Next = "ultra land " + id
		}
		return c
	case "cancelled":
		return Class{Class: Cancelled, Why: in.Reason}
	case "queued":
		return Class{Class: Queued, Why: pick(in.Reason, "waiting for a fleet's worker (ultra worker --db)"), Next: "ultra cancel " + id, Active: true}
	case "failed":
		if in.Undone || in.Removed {
			return Class{Class: Failed, Why: pick(in.Reason, "failed")}
		}
		return Class{Class: Failed, Why: pick(in.Reason, "failed"), Next: resume}
	}
	// A status this view does not know: show it as it is, with the
	// command that tells more.
	return Class{Class: pick(in.Status, "unknown"), Why: in.Reason, Next: "ultra status " + id, Active: true}
}

// Words Shown uses for a run recorded as running that no live process
// drives.
const (
	Interrupted = "interrupted" // its process is gone: ultra resume goes on
	StuckStatus = Stuck         // its process is alive but has not beaten for StaleAfter
)

// Shown is the status word every surface shows for a task (ultra runs,
// status, tasks, doctor, the TUI): the recorded status, except that a run
// recorded as running whose process is gone is interrupted, and one whose
// process has not beaten for StaleAfter is stuck.
func Shown(in Input, now time.Time) string {
	if in.Status != "running" {
		return in.Status
	}
	switch {
	case in.Process == ProcessDead:
		return Interrupted
	case stale(in, now):
		return StuckStatus
	}
	return in.Status
}

// stale: the task's heartbeat is older than StaleAfter.
func stale(in Input, now time.Time) bool {
	return !in.Heartbeat.IsZero() && now.Sub(in.Heartbeat) > StaleAfter
}

func deadWhy(in Input) string {
	if in.PID > 0 {
		return fmt.Sprintf("its process (pid %d) is gone", in.PID)
	}
	return "no process drives it"
}

// waitingFor reads a run's waiting note ("plan acceptance: ultra approve
// RUN", "approval of call X: ultra approve RUN --call X", "question: …")
// into its kind and the command it names.
func waitingFor(w, id string) (kind, cmd string) {
	lw := strings.ToLower(w)
	switch {
	case strings.HasPrefix(lw, "plan"):
		kind = ForPlan
	case strings.HasPrefix(lw, "approval") || strings.Contains(lw, "--call"):
		kind = ForApproval
	case strings.Contains(lw, "ultra next"):
		kind = ForNext
	default:
		kind = ForQuestion
	}
	if i := strings.Index(w, "ultra "); i >= 0 {
		cmd, _, _ = strings.Cut(w[i:], " (") // the command, not the note after it
		cmd = strings.TrimSpace(cmd)
	}
	if cmd == "" {
		switch kind {
		case ForPlan, ForApproval:
			cmd = "ultra approve " + id
		default:
			cmd = "ultra status " + id
		}
	}
	return kind, cmd
}

// rank orders classes in the view: what needs a person first, then what
// runs, then what can go on, then what is over.
var rank = map[string]int{Waiting: 0, Stuck: 1, Running: 2, Queued: 2, Paused: 3, Resumable: 4, Failed: 5, Done: 6, Cancelled: 7}

// Rank is a class's place in the view (lower first).
func Rank(class string) int {
	if r, ok := rank[class]; ok {
		return r
	}
	return 3
}

// Sort orders rows for the view: by class, then the most recently
// updated first. A finished run whose next step is a person's (ultra land)
// goes before every run that needs nobody.
func Sort(rows []Row) {
	place := func(r Row) int {
		if r.Class.Next != "" && (r.Class.Class == Done || r.Class.Class == Failed) {
			return 2*Rank(Stuck) + 1
		}
		return 2 * Rank(r.Class.Class)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		ri, rj := place(rows[i]), place(rows[j])
		if ri != rj {
			return ri < rj
		}
		return rows[i].Updated.After(rows[j].Updated)
	})
	underParents(rows)
}

// underParents moves each worker's row right after its run's row, when
// the view shows that run, keeping the workers' own order.
func underParents(rows []Row) {
	shown := map[string]bool{}
	for _, r := range rows {
		shown[r.ID] = true
	}
	var top []Row
	workers := map[string][]Row{}
	for _, r := range rows {
		if r.Parent != "" && shown[r.Parent] {
			workers[r.Parent] = append(workers[r.Parent], r)
			continue
		}
		top = append(top, r)
	}
	out := rows[:0]
	for _, r := range top {
		out = append(out, r)
		out = append(out, workers[r.ID]...)
	}
}

// Age is a duration in the view's short form: 42s, 5m, 3h, 2d.
func Age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
