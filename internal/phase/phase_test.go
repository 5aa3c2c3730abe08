package phase

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestToolTable(t *testing.T) {
	cases := []struct {
		p     Phase
		tools []string
		roSh  bool
	}{
		{Planning, []string{"read", "glob", "grep", "bash", "todo", "goals", "phase", "skill", MCPRead}, true},
		{Building, []string{"read", "write", "edit", "bash", "glob", "grep", "todo", "steer", "claim", "phase", "skill", MCPAll}, false},
		{Verifying, []string{"read", "glob", "grep", "verify"}, false},
		{Iterating, []string{"read", "write", "edit", "bash", "glob", "grep", "todo", "steer", "claim", "phase", "skill", MCPAll}, false},
		{Cleaning, []string{"read", "glob", "grep", "edit", "phase"}, false},
		{Reviewing, []string{"read", "glob", "grep", "review", MCPRead}, false},
		{Complete, []string{"read"}, false},
		{Escalated, []string{"read"}, false},
		{Cancelled, []string{"read"}, false},
	}
	for _, c := range cases {
		if got := Tools(c.p); !slices.Equal(got, c.tools) {
			t.Errorf("Tools(%s) = %v, want %v", c.p, got, c.tools)
		}
		if got := ShellReadOnly(c.p); got != c.roSh {
			t.Errorf("ShellReadOnly(%s) = %v", c.p, got)
		}
		for _, name := range []string{"read", "write", "edit", "bash", "glob", "grep", "todo", "phase", "verify", "goals", "review", "steer"} {
			if Allows(c.p, name) != slices.Contains(c.tools, name) {
				t.Errorf("Allows(%s, %s) disagrees with Tools", c.p, name)
			}
		}
	}
	// verify is offered only in verifying; write/edit never in planning.
	for _, p := range All {
		if Allows(p, "verify") != (p == Verifying) {
			t.Errorf("verify offered in %s", p)
		}
		if Allows(p, "goals") != (p == Planning) || Allows(p, "review") != (p == Reviewing) {
			t.Errorf("goals or review offered in %s", p)
		}
	}
}

func TestTransitions(t *testing.T) {
	cases := []struct {
		from, to Phase
		by       Actor
		ok       bool
	}{
		{Planning, Building, ByModel, true},
		{Planning, Verifying, ByModel, false},
		{Planning, Complete, ByModel, false},
		{Planning, Iterating, ByModel, false},
		{Building, Verifying, ByModel, true},
		{Building, Complete, ByModel, false},
		{Building, Planning, ByModel, false},
		{Verifying, Complete, ByModel, false},
		{Verifying, Complete, ByGate, true},
		{Verifying, Iterating, ByModel, false},
		{Verifying, Iterating, ByGate, true},
		{Verifying, Escalated, ByGate, true},
		{Iterating, Verifying, ByModel, true},
		{Iterating, Complete, ByModel, false},
		{Building, Escalated, ByModel, false},
		{Building, Escalated, ByBudget, true},
		{Planning, Escalated, BySystem, true},
		{Iterating, Cancelled, ByPerson, true},
		{Iterating, Cancelled, ByModel, false},
		{Escalated, Building, ByPerson, true},
		{Escalated, Building, ByModel, false},
		{Escalated, Iterating, ByPerson, true},
		{Escalated, Complete, ByPerson, true},
		{Escalated, Complete, ByModel, false},
		{Escalated, Cancelled, ByPerson, true},
		{Complete, Cancelled, ByPerson, false},
		{Escalated, Verifying, ByPerson, false},
		{Complete, Building, ByPerson, false},
		{Complete, Escalated, ByBudget, false},
		{Cancelled, Building, ByPerson, false},
		{Building, Complete, ByGate, false},
		{Verifying, Building, ByGate, true},
		{Verifying, Building, ByModel, false},
		{Verifying, Reviewing, ByGate, true},
		{Verifying, Reviewing, ByModel, false},
		{Building, Reviewing, ByModel, false},
		{Iterating, Reviewing, ByModel, false},
		{Reviewing, Complete, ByReviewer, true},
		{Reviewing, Complete, ByModel, false},
		{Reviewing, Complete, ByGate, false},
		{Reviewing, Iterating, ByReviewer, true},
		{Reviewing, Iterating, ByModel, false},
		{Reviewing, Escalated, BySystem, true},
		{Escalated, Reviewing, ByPerson, true},
		{Escalated, Reviewing, ByModel, false},
		{Verifying, Cleaning, ByGate, true},
		{Verifying, Cleaning, ByModel, false},
		{Iterating, Cleaning, ByModel, false},
		{Cleaning, Verifying, ByModel, true},
		{Cleaning, Verifying, ByBudget, true},
		{Cleaning, Verifying, BySystem, true},
		{Cleaning, Complete, ByModel, false},
		{Cleaning, Complete, ByGate, false},
		{Cleaning, Reviewing, ByModel, false},
		{Cleaning, Reviewing, ByGate, false},
		{Cleaning, Building, ByModel, false},
		{Cleaning, Iterating, ByModel, false},
		{Cleaning, Escalated, ByBudget, true},
		{Cleaning, Cancelled, ByPerson, true},
	}
	for _, c := range cases {
		s := State{Phase: c.from, Plan: "p", Budgets: DefaultBudgets}
		got, tr, err := s.Transition(c.to, c.by, "why", "")
		if c.ok != (err == nil) {
			t.Errorf("%s → %s by %s: err=%v, want ok=%v", c.from, c.to, c.by, err, c.ok)
			continue
		}
		if err != nil {
			var re *RefusedError
			if !errors.As(err, &re) || got.Phase != c.from {
				t.Errorf("refusal must keep the phase and be a RefusedError: %v", err)
			}
			continue
		}
		if got.Phase != c.to || tr.From != c.from || tr.To != c.to || tr.By != c.by {
			t.Errorf("bad transition %+v", tr)
		}
	}
}

func TestLeavingPlanningNeedsPlan(t *testing.T) {
	s := New(Budgets{})
	if _, _, err := s.Transition(Building, ByModel, "", "  "); err == nil || !strings.Contains(err.Error(), "plan") {
		t.Fatalf("want plan refusal, got %v", err)
	}
	s2, _, err := s.Transition(Building, ByModel, "", "1. fix add")
	if err != nil || s2.Plan != "1. fix add" || s2.Phase != Building {
		t.Fatalf("got %+v %v", s2, err)
	}
	if s.Phase != Planning || s.Plan != "" {
		t.Fatal("Transition changed its receiver")
	}
}

func TestAfterVerify(t *testing.T) {
	s := State{Phase: Verifying, Budgets: Budgets{MaxRetries: 3}.WithDefaults()}
	if _, _, err := (State{Phase: Building}).AfterVerify(Pass, ""); err == nil {
		t.Fatal("verify outside verifying must be refused")
	}
	p, tr, err := s.AfterVerify(Pass, "2 passed")
	if err != nil || p.Phase != Complete || tr.By != ByGate {
		t.Fatalf("pass: %+v %v", p, err)
	}
	c, tr, _ := s.AfterVerify(Concerns, "1 flaky")
	if c.Phase != Complete || !strings.Contains(tr.Reason, "concerns") {
		t.Fatalf("concerns: %+v %+v", c, tr)
	}
	n, _, _ := s.AfterVerify(NotEvaluated, "no tests")
	if n.Phase != Escalated {
		t.Fatalf("not evaluated must escalate, got %s", n.Phase)
	}
	w, tr, _ := s.AfterVerify(NeedsPerson, "tests changed")
	if w.Phase != Escalated || !strings.Contains(tr.Reason, "waiver") || w.Used.FailedVerifies != 0 {
		t.Fatalf("needs a person: %+v %+v", w, tr)
	}
	// Three failures with MaxRetries 3: iterate, iterate, escalate.
	want := []Phase{Iterating, Iterating, Escalated}
	for i, w := range want {
		s, _, err = s.AfterVerify(Fail, "1 failed")
		if err != nil || s.Phase != w {
			t.Fatalf("failure %d: phase %s err %v, want %s", i+1, s.Phase, err, w)
		}
		if s.Phase == Iterating {
			s, _, _ = s.Transition(Verifying, ByModel, "", "")
		}
	}
	if s.RetriesLeft() != 0 {
		t.Fatalf("retries left %d", s.RetriesLeft())
	}
	if e := s.Resume(Budgets{}, false); e.RetriesLeft() != 0 {
		t.Fatalf("resuming a run that was not escalated must not reset retries, left %d", e.RetriesLeft())
	}
	if e := s.Resume(Budgets{}, true); e.RetriesLeft() != 3 {
		t.Fatalf("resuming an escalated run must reset retries, left %d", e.RetriesLeft())
	}
	if e := s.Resume(Budgets{MaxRetries: 5}, true); e.RetriesLeft() != 5 {
		t.Fatalf("--max-retries on resume sets the limit, left %d", e.RetriesLeft())
	}
}

func TestExhausted(t *testing.T) {
	b := Budgets{MaxTurns: 5, MaxInputTokens: 100, MaxOutputTokens: 50, MaxWall: time.Minute, MaxCost: 2}.WithDefaults()
	cases := []struct {
		used Counters
		name string
	}{
		{Counters{}, ""},
		{Counters{Turns: 5}, "turns"},
		{Counters{InputTokens: 100}, "input_tokens"},
		{Counters{OutputTokens: 51}, "output_tokens"},
		{Counters{Wall: time.Minute}, "wall"},
		{Counters{Cost: 2.5}, "cost"},
		{Counters{Cost: 1.99}, ""},
		{Counters{Turns: 4, InputTokens: 99, OutputTokens: 49, Wall: time.Second}, ""},
	}
	for _, c := range cases {
		s := State{Phase: Building, Budgets: b, Used: c.used}
		name, reason, ok := s.Exhausted()
		if name != c.name || ok != (c.name != "") || (ok && reason == "") {
			t.Errorf("used %+v: got %q %q %v", c.used, name, reason, ok)
		}
		if ok {
			s.Allotment = b
			if _, _, still := s.Resume(Budgets{}, true).Exhausted(); still {
				t.Errorf("resume left %s exhausted", name)
			}
			if _, _, still := s.Resume(Budgets{}, false).Exhausted(); !still {
				t.Errorf("resuming a run that was not escalated must not extend %s", name)
			}
		}
	}
}

func TestReminder(t *testing.T) {
	s := New(Budgets{MaxRetries: 4, MaxTurns: 10})
	s.Used.Turns = 3
	r := s.Reminder()
	for _, want := range []string{"phase: planning", "read-only", "retries left: 4 of 4", "turns left: 7", "building"} {
		if !strings.Contains(r, want) {
			t.Errorf("reminder lacks %q:\n%s", want, r)
		}
	}
}

func TestParse(t *testing.T) {
	if p, err := Parse(" Building "); err != nil || p != Building {
		t.Fatal(p, err)
	}
	if _, err := Parse("done"); err == nil || !strings.Contains(err.Error(), "planning") {
		t.Fatal(err)
	}
}

func TestResumeGrantsFromNow(t *testing.T) {
	s := New(Budgets{MaxTurns: 10})
	s.Used.Turns = 10
	r := s.Resume(Budgets{MaxTurns: 3}, true)
	if r.Budgets.MaxTurns != 13 {
		t.Fatalf("max turns %d, want 13", r.Budgets.MaxTurns)
	}
	r = s.Resume(Budgets{}, true)
	if r.Budgets.MaxTurns != 20 {
		t.Fatalf("max turns %d, want the original allotment on top (20)", r.Budgets.MaxTurns)
	}
	if s.Budgets.MaxTurns != 10 {
		t.Fatal("Resume changed its receiver")
	}
}

func TestAfterGoalVerify(t *testing.T) {
	cases := []struct {
		name   string
		o      Outcome
		g      GoalResult
		failed int // failed verifications before
		want   Phase
		fails  int // failed verifications after
		reason string
	}{
		{"goal done, more left", Pass, GoalResult{Goal: "G001-a", Complete: true, More: true, Reason: "3 of 3"}, 0, Building, 0, "goal G001-a complete"},
		{"last goal done without final gate", Pass, GoalResult{Goal: "G001-a", Complete: true}, 0, Complete, 0, "goal G001-a complete"},
		{"final gate passed", Concerns, GoalResult{Complete: true, Final: true, Reason: "9 of 9"}, 0, Reviewing, 0, "final gate passed"},
		{"tests pass, criterion fails", Pass, GoalResult{Goal: "G001-a", Reason: "C2 failed"}, 0, Iterating, 1, "C2 failed"},
		{"tests fail", Fail, GoalResult{Goal: "G001-a"}, 0, Iterating, 1, "1 failed"},
		// The reason names the limit that ends the run first.
		{"cycles bind", Fail, GoalResult{Goal: "G001-a", Cycles: Limit{What: "cycles of goal G001-a", Used: 2, Max: 5}}, 1, Iterating, 2, "verification failed (2 of 5 cycles of goal G001-a used)"},
		{"retries bind", Fail, GoalResult{Goal: "G001-a", Cycles: Limit{What: "cycles of goal G001-a", Used: 2, Max: 5}}, 7, Iterating, 8, "verification failed (8 of 10 retries used)"},
		{"tests and criterion fail", Fail, GoalResult{Goal: "G001-a", Reason: "C1 failed"}, 0, Iterating, 1, "1 failed; C1 failed"},
		{"goal caps", Pass, GoalResult{Goal: "G001-a", Failed: true, Reason: "C1 failed 3 times"}, 0, Escalated, 1, "goal G001-a failed: C1 failed 3 times"},
		{"retries run out", Fail, GoalResult{Goal: "G001-a"}, 9, Escalated, 10, "retry limit"},
		{"proved nothing", NotEvaluated, GoalResult{Goal: "G001-a", Complete: true}, 0, Escalated, 0, "proved nothing"},
		{"needs a person", NeedsPerson, GoalResult{Goal: "G001-a", Complete: true}, 0, Escalated, 0, "waiver"},
		{"final gate fails", Pass, GoalResult{Final: true, Reason: "G001-a C1 failed"}, 0, Iterating, 1, "G001-a C1 failed"},
		{"failed goal, the run goes on", Pass, GoalResult{Goal: "G001-a", Failed: true, Continue: true, More: true, Reason: "C1 failed 3 times"}, 0, Building, 1, "moves on to the next goal"},
		{"last goal done, an earlier one failed", Pass, GoalResult{Goal: "G002-b", Complete: true, Failed: true, Final: true, Continue: true, Reason: "G001-a failed"}, 0, Escalated, 1, "G001-a failed"},
		{"final gate passed, its cleanup follows", Pass, GoalResult{Complete: true, Final: true, Cleanup: true, Reason: "9 of 9"}, 0, Cleaning, 0, "its cleanup pass follows"},
		{"final gate fails, no cleanup", Pass, GoalResult{Final: true, Cleanup: true, Reason: "G001-a C1 failed"}, 0, Iterating, 1, "G001-a C1 failed"},
		{"cleanup kept", Pass, GoalResult{Complete: true, Final: true, Cleaned: true, Reason: "9 of 9"}, 0, Reviewing, 0, "the cleanup pass is done"},
		{"cleanup broke a test", Fail, GoalResult{Final: true, Cleaned: true}, 0, Reviewing, 0, "the cleanup pass reverted: 1 failed"},
		{"cleanup broke a criterion", Pass, GoalResult{Final: true, Cleaned: true, Reason: "G001-a C1 failed"}, 3, Reviewing, 3, "reverted: G001-a C1 failed"},
		{"cleanup changed a test", NeedsPerson, GoalResult{Final: true, Cleaned: true, Complete: true}, 0, Reviewing, 0, "reverted"},
		{"cleanup at the retry limit", Fail, GoalResult{Final: true, Cleaned: true, Failed: true}, 9, Reviewing, 9, "reverted"},
		{"failed last goal escalates even so", Pass, GoalResult{Goal: "G001-a", Failed: true, Continue: true, Reason: "C1 failed 3 times"}, 0, Escalated, 1, "goal G001-a failed"},
	}
	for _, c := range cases {
		s := New(Budgets{})
		s.Phase = Verifying
		s.Used.FailedVerifies = c.failed
		got, tr, err := s.AfterGoalVerify(c.o, c.g, "1 failed")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Phase != c.want || got.Used.FailedVerifies != c.fails || !strings.Contains(tr.Reason, c.reason) {
			t.Errorf("%s: got %s (%d failed), reason %q; want %s (%d failed), reason with %q", c.name, got.Phase, got.Used.FailedVerifies, tr.Reason, c.want, c.fails, c.reason)
		}
		if got.Used.Verifies != 1 {
			t.Errorf("%s: verifies = %d, want 1", c.name, got.Used.Verifies)
		}
	}
	if _, _, err := New(Budgets{}).AfterGoalVerify(Pass, GoalResult{Complete: true}, ""); err == nil {
		t.Error("a verification outside verifying must be refused")
	}
}

// TestCleaningExits: from the cleanup pass, no actor reaches the review
// or completion without verifying (the gate) first.
func TestCleaningExits(t *testing.T) {
	for _, by := range []Actor{ByModel, ByGate, ByBudget, ByPerson, ByReviewer, BySystem} {
		for _, to := range Next(Cleaning, by) {
			if to != Verifying && to != Escalated && to != Cancelled {
				t.Errorf("the %s may move cleaning to %s", by, to)
			}
		}
	}
	if got := Next(Cleaning, ByModel); !slices.Equal(got, []Phase{Verifying}) {
		t.Errorf("the model may move cleaning to %v, want [verifying]", got)
	}
	for _, p := range All {
		if Allows(p, "edit") && Allows(p, "write") != (p != Cleaning) {
			t.Errorf("%s: edit without write is only the cleanup pass's", p)
		}
	}
	if Allows(Cleaning, "bash") || Allows(Cleaning, "write") || Allows(Cleaning, "verify") {
		t.Error("cleaning offers bash, write or verify")
	}
}

func TestAfterReview(t *testing.T) {
	s := New(Budgets{})
	s.Phase = Reviewing
	cases := []struct {
		clean bool
		round int
		want  Phase
		by    Actor
	}{
		{true, 1, Complete, ByReviewer},
		{false, 1, Iterating, ByReviewer},
		{false, 2, Iterating, ByReviewer},
		{false, 3, Escalated, BySystem},
		{true, 3, Complete, ByReviewer},
	}
	for _, c := range cases {
		got, tr, err := s.AfterReview(c.clean, c.round, 2, "why")
		if err != nil || got.Phase != c.want || tr.By != c.by {
			t.Errorf("clean=%v round %d: %s by %s (%v), want %s by %s", c.clean, c.round, got.Phase, tr.By, err, c.want, c.by)
		}
		// The round is counted of the reviews there may be, as the model
		// and the reviewer read it, whether the run iterates or escalates.
		if want := fmt.Sprintf("(round %d of 3): why", c.round); !c.clean && !strings.HasSuffix(tr.Reason, want) {
			t.Errorf("round %d: reason %q, want it to end %q", c.round, tr.Reason, want)
		}
	}
	if _, _, err := New(Budgets{}).AfterReview(true, 1, 2, ""); err == nil {
		t.Error("a verdict outside reviewing must be refused")
	}
}
