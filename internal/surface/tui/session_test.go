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
