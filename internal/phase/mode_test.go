package phase

import (
	"errors"
	"slices"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
)

func TestModesAreTheAxisValues(t *testing.T) {
	if !slices.Equal(Modes, axes.Values[axes.Mode]) {
		t.Fatalf("phase.Modes %v, axes %v", Modes, axes.Values[axes.Mode])
	}
}

func TestModeTables(t *testing.T) {
	cases := []struct {
		mode     string
		p        Phase
		tools    []string
		roShell  bool
		start    bool
		worktree bool
	}{
		{Build, Planning, []string{"read", "glob", "grep", "bash", "todo", "goals", "phase", "skill", MCPRead}, true, true, true},
		{Build, Building, []string{"read", "write", "edit", "bash", "glob", "grep", "todo", "steer", "claim", "phase", "skill", MCPAll}, false, false, true},
		{Build, Verifying, []string{"read", "glob", "grep", "verify"}, false, false, true},
		{Plan, Planning, []string{"read", "glob", "grep", "bash", "todo", "goals", "phase", "skill", MCPRead}, true, true, true},
		{Repair, Planning, []string{"read", "glob", "grep", "bash", "todo", "goals", "phase", "skill", MCPRead}, true, true, true},
		{Repair, Iterating, []string{"read", "write", "edit", "bash", "glob", "grep", "todo", "steer", "claim", "phase", "skill", MCPAll}, false, false, true},
		{Chat, Answering, []string{"read", "glob", "grep", "bash", "webfetch", "skill", MCPRead}, true, true, false},
		{Research, Researching, []string{"read", "glob", "grep", "bash", "todo", "task", "report", "webfetch", "skill", MCPRead}, true, true, false},
		{Review, Reviewing, []string{"read", "glob", "grep", "bash", "review", MCPRead}, true, true, false},
		{Chat, Complete, []string{"read"}, false, false, false},
		{Review, Escalated, []string{"read"}, false, false, false},
	}
	for _, c := range cases {
		if got := ToolsIn(c.mode, c.p); !slices.Equal(got, c.tools) {
			t.Errorf("%s/%s tools %v, want %v", c.mode, c.p, got, c.tools)
		}
		if got := ShellReadOnlyIn(c.mode, c.p); got != c.roShell {
			t.Errorf("%s/%s read-only shell %v", c.mode, c.p, got)
		}
		if c.start && Start(c.mode) != c.p {
			t.Errorf("%s starts in %s, want %s", c.mode, Start(c.mode), c.p)
		}
		if Worktree(c.mode) != c.worktree {
			t.Errorf("%s worktree %v", c.mode, Worktree(c.mode))
		}
		if PurposeIn(c.mode, c.p) == "" {
			t.Errorf("%s/%s has no purpose", c.mode, c.p)
		}
	}
	// No read-only mode offers a tool that writes, and none offers verify
	// or phase: they cannot change code, and nothing there is gated.
	for _, m := range []string{Chat, Research, Review} {
		for _, p := range All {
			for _, w := range []string{"write", "edit", "verify", "phase", "goals", "steer"} {
				if AllowsIn(m, p, w) {
					t.Errorf("%s/%s offers %s", m, p, w)
				}
			}
		}
	}
	// Phases of one mode do not exist in another.
	if HasPhase(Chat, Building) || HasPhase(Build, Answering) || HasPhase(Review, Planning) || HasPhase(Research, Verifying) {
		t.Error("a mode has another mode's phase")
	}
}

func TestModeTransitions(t *testing.T) {
	cases := []struct {
		mode     string
		from, to Phase
		by       Actor
		ok       bool
	}{
		{Chat, Answering, Complete, ByModel, true},
		{Chat, Answering, Building, ByModel, false},
		{Chat, Answering, Verifying, ByModel, false},
		{Chat, Complete, Answering, ByPerson, true},
		{Chat, Complete, Answering, ByModel, false},
		{Chat, Answering, Escalated, BySystem, true},
		{Chat, Answering, Cancelled, ByPerson, true},
		{Research, Researching, Complete, ByModel, true},
		{Research, Researching, Building, ByModel, false},
		{Research, Escalated, Researching, ByPerson, true},
		{Review, Reviewing, Complete, ByReviewer, true},
		{Review, Reviewing, Complete, ByModel, false},
		{Review, Reviewing, Iterating, ByReviewer, false}, // nothing to iterate on in review mode
		{Repair, Planning, Building, ByModel, true},
		{Repair, Verifying, Complete, ByGate, true},
		{Repair, Building, Complete, ByModel, false},
		{Plan, Planning, Building, ByPerson, true},
		{Build, Reviewing, Complete, ByReviewer, true},
	}
	for _, c := range cases {
		s := State{Mode: modeKey(c.mode), Phase: c.from, Plan: "p"}
		_, _, err := s.Transition(c.to, c.by, "r", "")
		if (err == nil) != c.ok {
			t.Errorf("%s: %s → %s by %s: err %v, want ok=%v", c.mode, c.from, c.to, c.by, err, c.ok)
		}
		var re *RefusedError
		if err != nil && (!errors.As(err, &re) || re.Mode != modeKey(c.mode)) {
			t.Errorf("%s: refusal %v does not name the mode", c.mode, err)
		}
	}
}

func TestAnswered(t *testing.T) {
	s := NewIn(Chat, Budgets{})
	if s.Phase != Answering || s.Mode != Chat {
		t.Fatalf("new chat %+v", s)
	}
	n, tr, err := s.Answered()
	if err != nil || n.Phase != Complete || tr.By != ByModel {
		t.Fatalf("answered: %+v %+v %v", n, tr, err)
	}
	for _, m := range []string{Build, Plan, Repair, Research, Review} {
		if _, _, err := NewIn(m, Budgets{}).Answered(); err == nil {
			t.Errorf("an answer ended a %s run", m)
		}
	}
	// A chat goes on: a person's next question reopens it.
	if _, _, err := n.Transition(Answering, ByPerson, "next question", ""); err != nil {
		t.Fatal(err)
	}
}

func TestSwitchMode(t *testing.T) {
	cases := []struct {
		from   string
		phase  Phase
		to     string
		ok     bool
		phase2 Phase
	}{
		{Plan, Planning, Build, true, Planning},
		{Build, Iterating, Repair, true, Iterating},
		{Repair, Building, Build, true, Building},
		{Build, Building, Plan, true, Building},
		{Chat, Answering, Research, true, Researching},
		{Research, Researching, Chat, true, Answering},
		{Chat, Complete, Research, true, Complete},
		{Build, Building, Chat, false, Building},
		{Chat, Answering, Build, false, Answering},
		{Research, Researching, Repair, false, Researching},
		{Review, Reviewing, Chat, false, Reviewing},
		{Chat, Answering, Review, false, Answering},
		{Build, Building, "nonsense", false, Building},
		{Build, Building, Build, true, Building},
	}
	for _, c := range cases {
		s := State{Mode: modeKey(c.from), Phase: c.phase}
		n, tr, err := s.SwitchMode(c.to)
		if (err == nil) != c.ok {
			t.Errorf("%s → %s: err %v", c.from, c.to, err)
			continue
		}
		if n.Phase != c.phase2 {
			t.Errorf("%s → %s: phase %s, want %s", c.from, c.to, n.Phase, c.phase2)
		}
		if c.ok && n.ModeName() != c.to {
			t.Errorf("%s → %s: mode %s", c.from, c.to, n.ModeName())
		}
		if !c.ok && (n.Mode != s.Mode || err.Error() == "") {
			t.Errorf("%s → %s refused but changed the mode or gave no reason", c.from, c.to)
		}
		if c.ok && c.phase != c.phase2 && (tr.From != c.phase || tr.To != c.phase2 || tr.By != ByPerson) {
			t.Errorf("%s → %s: transition %+v", c.from, c.to, tr)
		}
	}
}

func TestMCPClasses(t *testing.T) {
	for _, c := range []struct {
		mode                     string
		p                        Phase
		readOnly, write, written bool
	}{
		{Build, Planning, true, false, false},
		{Build, Building, true, true, true},
		{Build, Iterating, true, true, true},
		{Build, Verifying, false, false, false},
		{Build, Cleaning, false, false, false},
		{Build, Reviewing, true, false, false},
		{Build, Complete, false, false, false},
		{Chat, Answering, true, false, false},
		{Research, Researching, true, false, false},
		{Review, Reviewing, true, false, false},
	} {
		if got := AllowsMCPIn(c.mode, c.p, true); got != c.readOnly {
			t.Errorf("%s/%s read-only MCP tools: %v, want %v", c.mode, c.p, got, c.readOnly)
		}
		if got := AllowsMCPIn(c.mode, c.p, false); got != c.write {
			t.Errorf("%s/%s other MCP tools: %v, want %v", c.mode, c.p, got, c.write)
		}
		if got := MCPWritableIn(c.mode, c.p); got != c.written {
			t.Errorf("%s/%s servers may write: %v, want %v", c.mode, c.p, got, c.written)
		}
	}
}
