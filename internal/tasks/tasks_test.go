package tasks

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fresh, stale := now.Add(-2*time.Second), now.Add(-40*time.Second)
	cases := []struct {
		name  string
		in    Input
		class string
		for_  string
		next  string
		why   string
		alive bool
	}{
		{"live run", Input{Status: "running", TaskStatus: "verifying", Process: ProcessAlive, PID: 7, Heartbeat: fresh}, Running, "", "", "verifying", true},
		{"live run before heartbeats", Input{Status: "running", TaskStatus: "running", Process: ProcessAlive, PID: 7}, Running, "", "", "", true},
		{"other host, fresh beat", Input{Status: "running", Process: ProcessUnknown, PID: 7, Heartbeat: fresh}, Running, "", "", "", true},
		{"dead process", Input{Status: "running", Process: ProcessDead, PID: 7, Heartbeat: fresh}, Resumable, "", "ultra resume R1", "interrupted: its process (pid 7) is gone", true},
		{"no process at all", Input{Status: "running", Process: ProcessDead}, Resumable, "", "ultra resume R1", "interrupted: no process", true},
		{"silent process", Input{Status: "running", Process: ProcessAlive, PID: 7, Heartbeat: stale}, Stuck, "", "ultra status R1", "no heartbeat for 40s (pid 7 alive)", true},
		{"other host, stale beat", Input{Status: "running", Process: ProcessUnknown, PID: 7, Heartbeat: stale}, Stuck, "", "ultra status R1", "no heartbeat for 40s", true},
		{"call waits for approval", Input{Status: "running", Process: ProcessAlive, Heartbeat: fresh, Waiting: "approval of call call_3: ultra approve R1 --call call_3"}, Waiting, ForApproval, "ultra approve R1 --call call_3", "approval of call", true},
		{"assisted pause", Input{Status: "running", Process: ProcessAlive, Heartbeat: fresh, Waiting: "the unit ended: the run is in verifying (run control assisted); waiting for ultra next R1"}, Waiting, ForNext, "ultra next R1", "unit ended", true},
		{"live call waits", Input{Status: "running", Process: ProcessAlive, Heartbeat: fresh, Waiting: "call call_3 (bash) waits for a person's approval: ultra approve R1 --call call_3 (or --deny REASON)"}, Waiting, ForApproval, "ultra approve R1 --call call_3", "call call_3", true},
		{"question", Input{Status: "running", Process: ProcessAlive, Heartbeat: fresh, Waiting: "question: which database?"}, Waiting, ForQuestion, "ultra status R1", "which database", true},
		{"plan waits", Input{Status: "needs_approval", Waiting: "plan acceptance: ultra approve R1"}, Waiting, ForPlan, "ultra approve R1", "plan acceptance", true},
		{"plan waits, old run", Input{Status: "needs_approval", Reason: "the plan waits for a person: ultra approve R1"}, Waiting, ForPlan, "ultra approve R1", "the plan waits", true},
		{"paused", Input{Status: "paused"}, Paused, "", "ultra next R1", "paused", true},
		{"stopped", Input{Status: "stopped"}, Paused, "", "ultra resume R1", "stopped", true},
		{"needs a waiver", Input{Status: "escalated", Reason: "verification passed, but needs a person's waiver: existing tests or what they load were changed"}, Resumable, "", `ultra gate waive R1 --reason "…"`, "needs a person's waiver", true},
		{"stopped", Input{Status: "stopped", Reason: "a person stopped it"}, Paused, "", "ultra resume R1", "a person stopped it", true},
		{"interrupted", Input{Status: "interrupted", Reason: "interrupted"}, Resumable, "", "ultra resume R1", "interrupted", true},
		{"escalated", Input{Status: "escalated", Reason: "retries exhausted"}, Resumable, "", "ultra resume R1", "retries exhausted", true},
		{"out of budget", Input{Status: "budget_exhausted", Reason: "turn budget exhausted"}, Resumable, "", "ultra resume R1", "turn budget", true},
		{"escalated, then undone", Input{Status: "escalated", Undone: true}, Cancelled, "", "", "undone", false},
		{"interrupted, its worktree removed", Input{Status: "interrupted", Removed: true}, Cancelled, "", "", "worktree was removed", false},
		{"killed, its worktree removed", Input{Status: "running", Process: ProcessDead, Removed: true}, Cancelled, "", "", "interrupted; its worktree was removed", false},
		{"complete, not landed", Input{Status: "complete", Branch: "ultra/R1"}, Done, "", "ultra land R1", "complete", false},
		{"complete, landed", Input{Status: "complete", Branch: "ultra/R1", Landed: true}, Done, "", "", "", false},
		{"complete without a branch", Input{Status: "complete"}, Done, "", "", "", false},
		{"failed", Input{Status: "failed", Reason: "model request failed"}, Failed, "", "ultra resume R1", "model request failed", false},
		{"failed, having made nothing", Input{Status: "failed", Reason: "model request failed (the run made nothing, so its branch and worktree are removed", Branch: "ultra/R1", Removed: true}, Failed, "", "", "made nothing", false},
		{"cancelled", Input{Status: "cancelled", Reason: "by a person"}, Cancelled, "", "", "by a person", false},
		{"queued for a fleet", Input{Status: "queued"}, Queued, "", "ultra cancel R1", "waiting for a fleet's worker (ultra worker --db)", true},
		{"unknown status", Input{Status: "levitating"}, "levitating", "", "ultra status R1", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.ID = "R1"
			got := Classify(c.in, now)
			if got.Class != c.class || got.For != c.for_ || got.Next != c.next || got.Active != c.alive {
				t.Fatalf("Classify = %+v, want class %s for %q next %q active %v", got, c.class, c.for_, c.next, c.alive)
			}
			if !strings.Contains(got.Why, c.why) {
				t.Fatalf("why %q lacks %q", got.Why, c.why)
			}
		})
	}
}

// TestShownAgreesWithClassify: the status word ultra runs and status show
// and the class ultra tasks shows come from one reading of the run.
func TestShownAgreesWithClassify(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fresh, stale := now.Add(-2*time.Second), now.Add(-40*time.Second)
	cases := []struct {
		name  string
		in    Input
		shown string
		class string
	}{
		{"killed", Input{Status: "running", Process: ProcessDead, PID: 7, Heartbeat: fresh}, Interrupted, Resumable},
		{"killed before its first beat", Input{Status: "running", Process: ProcessDead}, Interrupted, Resumable},
		{"recorded interrupted", Input{Status: "interrupted"}, Interrupted, Resumable},
		{"alive, silent", Input{Status: "running", Process: ProcessAlive, PID: 7, Heartbeat: stale}, StuckStatus, Stuck},
		{"another host, silent", Input{Status: "running", Process: ProcessUnknown, Heartbeat: stale}, StuckStatus, Stuck},
		{"another host, beating", Input{Status: "running", Process: ProcessUnknown, Heartbeat: fresh}, "running", Running},
		{"alive", Input{Status: "running", Process: ProcessAlive, Heartbeat: fresh}, "running", Running},
		{"alive, waiting", Input{Status: "running", Process: ProcessAlive, Heartbeat: fresh, Waiting: "question: which?"}, "running", Waiting},
		{"complete", Input{Status: "complete"}, "complete", Done},
		{"escalated", Input{Status: "escalated"}, "escalated", Resumable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.ID = "R1"
			if got := Shown(c.in, now); got != c.shown {
				t.Errorf("Shown = %q, want %q", got, c.shown)
			}
			if got := Classify(c.in, now); got.Class != c.class {
				t.Errorf("Classify = %q, want %q", got.Class, c.class)
			}
		})
	}
}

func TestSortPutsPeopleFirst(t *testing.T) {
	now := time.Now()
	rows := []Row{
		{ID: "done", Class: Class{Class: Done}, Updated: now},
		{ID: "run-old", Class: Class{Class: Running}, Updated: now.Add(-time.Hour)},
		{ID: "esc", Class: Class{Class: Resumable}, Updated: now},
		{ID: "run-new", Class: Class{Class: Running}, Updated: now},
		{ID: "wait", Class: Class{Class: Waiting}, Updated: now.Add(-time.Hour)},
		{ID: "stuck", Class: Class{Class: Stuck}, Updated: now},
		{ID: "to-land", Class: Class{Class: Done, Next: "ultra land to-land"}, Updated: now.Add(-2 * time.Hour)},
	}
	Sort(rows)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != "wait stuck to-land run-new run-old esc done" {
		t.Fatalf("order %s", got)
	}
}

func TestTable(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rows := []Row{{
		Repo: "/src/calc", ID: "R1", Task: "fix the   calculator\nplease", Mode: "build", Axes: axes.Default,
		Status: "running", Class: Class{Class: Waiting, For: ForPlan, Next: "ultra approve R1", Active: true},
		Phase: "planning", Retries: 1, MaxRetries: 10, InputTokens: 12345, OutputTokens: 678, Cost: 0.5, BudgetCost: 5,
		Created: now.Add(-3 * time.Minute), Heartbeat: now.Add(-2 * time.Second), Checkpoint: "0123456789abcdef",
	}}
	var b bytes.Buffer
	if err := Table(&b, rows, now, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"REPO", "NEXT", "calc", "waiting:plan", "build | autonomous | normal | smart | headless",
		"fix the calculator please", "1/10", "12.3k/678", "$0.50/$5.00", "3m", "2s", "0123456789 ", "ultra approve R1"} {
		if !strings.Contains(out, want) {
			t.Fatalf("table lacks %q:\n%s", want, out)
		}

	}
	// The limit that ends the run first, not the retries, when a goal's
	// cycles bind.
	rows[0].Limit = Limit{What: "cycles of goal G001", Used: 3, Max: 5}
	b.Reset()
	if err := Table(&b, rows, now, true); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "3/5 cycles") || strings.Contains(out, "1/10") {
		t.Fatalf("table shows the retries, not the binding limit:\n%s", out)
	}
	rows[0].Limit = Limit{}
	// A run no process drives has no live beat to show, whatever its
	// last process wrote.
	rows[0].Status = "needs_approval"
	b.Reset()
	if err := Table(&b, rows, now, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	head, row := regexp.MustCompile(`\s{2,}`).Split(lines[0], -1), regexp.MustCompile(`\s{2,}`).Split(lines[1], -1)
	if i := slices.Index(head, "BEAT"); i < 0 || len(row) != len(head) || row[i] != "-" {
		t.Fatalf("a run without a process shows a beat:\n%s", b.String())
	}
}

func TestShortForms(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 12345: "12.3k", 4_100_000: "4.1M"} {
		if got := Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %s, want %s", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{-time.Second: "0s", 59 * time.Second: "59s", 5 * time.Minute: "5m", 3 * time.Hour: "3h", 72 * time.Hour: "3d"} {
		if got := Age(d); got != want {
			t.Errorf("Age(%s) = %s, want %s", d, got, want)
		}
	}
}

// A worker's next step is its run's: resume the run, nothing to land;
// the view lists each worker under its run.
func TestWorkers(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		in   Input
		next string
	}{
		{Input{ID: "w", Parent: "p", Status: "stopped"}, "ultra resume p"},
		{Input{ID: "w", Parent: "p", Status: "escalated", Reason: "goal failed"}, "ultra resume p"},
		{Input{ID: "w", Parent: "p", Status: "complete", Branch: "ultra/w"}, ""},
		{Input{ID: "w", Parent: "p", Status: "needs_approval", Waiting: "approval of call c1: ultra approve w --call c1"}, "ultra approve w --call c1"},
		{Input{ID: "r", Status: "complete", Branch: "ultra/r"}, "ultra land r"},
	} {
		if got := Classify(c.in, now).Next; got != c.next {
			t.Errorf("%+v: next %q, want %q", c.in, got, c.next)
		}
	}
	rows := []Row{
		{ID: "w1", Parent: "p", Class: Class{Class: Running}, Updated: now},
		{ID: "other", Class: Class{Class: Waiting}, Updated: now},
		{ID: "p", Class: Class{Class: Running}, Updated: now.Add(-time.Hour)},
		{ID: "w2", Parent: "p", Class: Class{Class: Paused}, Updated: now},
		{ID: "orphan", Parent: "gone", Class: Class{Class: Done}, Updated: now},
	}
	Sort(rows)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, " ") != "other p w1 w2 orphan" {
		t.Fatalf("order %v", ids)
	}
	var b strings.Builder
	rows[2].Goal, rows[2].Claims = "G001-x", "calc.go:1-9"
	Table(&b, rows, now, false)
	if !strings.Contains(b.String(), "↳ G001-x of p claims calc.go:1-9") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// A run a schedule started names it in a SCHEDULE column, which shows
// only when some run has a schedule; a run a person started has "-".
func TestTableSchedule(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rows := []Row{
		{ID: "R1", Task: "nightly", Mode: "build", Axes: axes.Default, Class: Class{Class: Done}, Schedule: "s-abc123", Created: now},
		{ID: "R2", Task: "by hand", Mode: "build", Axes: axes.Default, Class: Class{Class: Done}, Created: now},
	}
	var b bytes.Buffer
	Table(&b, rows, now, false)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	split := regexp.MustCompile(`\s{2,}`).Split
	head, r1, r2 := split(lines[0], -1), split(lines[1], -1), split(lines[2], -1)
	i := slices.Index(head, "SCHEDULE")
	if i != 1 || len(r1) != len(head) || r1[i] != "s-abc123" || r2[i] != "-" {
		t.Fatalf("table:\n%s", b.String())
	}
	b.Reset()
	Table(&b, rows[1:], now, false)
	if strings.Contains(b.String(), "SCHEDULE") {
		t.Fatalf("a SCHEDULE column without a scheduled run:\n%s", b.String())
	}
}

// A repository in the REPO column is its last element without .git,
// whether a checkout's root or a fleet run's URL.
func TestRepoCell(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"/home/me/shop", "shop"},
		{"/srv/git/shop.git", "shop"},
		{"/srv/git/shop.git/", "shop"},
		{"file:///tmp/remote.git", "remote"},
		{"https://github.com/team/shop.git", "shop"},
		{"git@github.com:team/shop.git", "shop"},
		{"git@host:shop.git", "shop"},
		{"ssh://git@host:2222/srv/shop", "shop"},
	} {
		if got := repoCell(c.in); got != c.want {
			t.Errorf("repoCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
