package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
)

// A review with blockers shows the verdict's one word, and the run that
// completes with them (exit 3) is not shown as a success.
func TestReviewBlockersAreNoSuccess(t *testing.T) {
	id := "20261124-150000-cccccc"
	f := newFake()
	a := axes.Axes{Mode: "review", Control: "autonomous", Permission: "normal", ModelMode: "deep"}
	f.setRow(&store.Run{ID: id, Task: "review", Phase: "complete", Status: "complete", Axes: a})
	f.add(id, event.RunStarted, "reviewing", event.RunStartedData{Task: "review", Axes: a})
	f.add(id, event.Review, "reviewing", event.ReviewData{Round: 1, Verdict: "REQUEST_CHANGES", Blockers: []string{"a.go:3: wrong"}})
	f.add(id, event.RunFinished, "complete", event.RunFinishedData{Status: "complete", Reason: "the review found 1 blocker(s) (1 findings)", ExitCode: 3})
	m := attached(t, f, id)
	if s := screen(m); !strings.Contains(s, "review round 1: blockers") || strings.Contains(s, "REQUEST_CHANGES") {
		t.Errorf("the verdict's word:\n%s", s)
	}
	var end *Item
	for _, it := range m.sess.Items() {
		if strings.HasPrefix(it.Title, "complete:") {
			end = it
		}
	}
	if end == nil || end.Kind != KindError {
		t.Errorf("the end of a review with blockers is shown as %+v, want an error", end)
	}
}

// An approval with architecture concerns is not clean: the verdict's
// words name the status, its reasons are shown, and it is not a success.
func TestReviewArchitectureConcernsAreNoSuccess(t *testing.T) {
	id := "20261124-150000-eeeeee"
	f := newFake()
	a := axes.Axes{Mode: "build", Control: "autonomous", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Task: "fix", Phase: "iterating", Status: "running", Axes: a})
	f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "fix", Axes: a})
	f.add(id, event.Review, "reviewing", event.ReviewData{Round: 1, Verdict: "approve", Architecture: "CONCERNS", ArchitectureReasons: []string{"a second parser beside the lexer"}})
	f.add(id, event.Review, "reviewing", event.ReviewData{Round: 2, Verdict: "approve", Architecture: "CLEAR"})
	m := attached(t, f, id)
	if s := screen(m); !strings.Contains(s, "review round 1: approve, architecture CONCERNS") || !strings.Contains(s, "✗ architecture: a second parser beside the lexer") {
		t.Errorf("the verdict's words and reasons:\n%s", s)
	}
	failed := map[string]bool{}
	for _, it := range m.sess.Items() {
		if strings.HasPrefix(it.Title, "review round") {
			failed[it.Title] = it.Failed
		}
	}
	if !failed["review round 1: approve, architecture CONCERNS"] || failed["review round 2: approve, architecture CLEAR"] {
		t.Errorf("review items (failed): %v", failed)
	}
}

// attached is a 100×30 TUI attached to run id of f, as of its events.
func attached(t *testing.T, f *fake, id string) *Model {
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	pump(t, m, m.pollCmd())
	return m
}

// The checkout's untracked files a run does not see are said, as the log
// says them.
func TestUntrackedFilesSaid(t *testing.T) {
	id := "20261124-150000-dddddd"
	f := newFake()
	a := axes.Axes{Mode: "build", Control: "autonomous", Permission: "normal", ModelMode: "smart"}
	f.setRow(&store.Run{ID: id, Task: "fix", Phase: "planning", Status: "running", Axes: a})
	f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "fix", Axes: a, Untracked: []string{"BRIEF.md", "notes.txt"}})
	if s := screen(attached(t, f, id)); !strings.Contains(s, "not in the run: 2 untracked file(s) of your checkout (BRIEF.md, notes.txt)") {
		t.Errorf("the untracked files are not said:\n%s", s)
	}
}

// The final gate's cleanup pass shows in the status bar as its phase, and
// its outcome in the transcript.
func TestCleanupPassShown(t *testing.T) {
	id := "20261124-150000-dddddd"
	for _, c := range []struct {
		ended bool
		want  []string
	}{
		{false, []string{"phase cleaning", "cleanup pass: may edit calc/calc.go"}},
		{true, []string{"cleanup reverted to 0123456789ab: it broke the tests: TestAdd"}},
	} {
		f := newFake()
		f.setRow(&store.Run{ID: id, Task: "fix", Phase: "cleaning", Status: "running", Axes: axes.Default})
		f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "fix", Axes: axes.Default})
		f.add(id, event.PhaseChanged, "cleaning", event.PhaseChangedData{From: "verifying", To: "cleaning", By: "gate", Reason: "final gate passed"})
		f.add(id, event.Cleanup, "cleaning", event.CleanupData{Result: "started", Files: []string{"calc/calc.go"}, Commit: "0123456789abcdef"})
		if c.ended {
			f.add(id, event.Cleanup, "reviewing", event.CleanupData{Result: "reverted", Commit: "0123456789abcdef", Reason: "it broke the tests: TestAdd"})
		}
		s := screen(attached(t, f, id))
		for _, want := range c.want {
			if !strings.Contains(s, want) {
				t.Errorf("the screen lacks %q:\n%s", want, s)
			}
		}
	}
}
