package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ultra-dev/ultra/internal/axes"
)

// The TUI as a bubbletea program (teatest): its first frames at 120 and
// 70 columns carry the full and the compact badge; a shortcut changes the
// badge (the renderer redraws only what changed); Ctrl-C twice ends the
// program.
func TestProgram(t *testing.T) {
	for _, c := range []struct {
		width       int
		first, next string
	}{
		{120, "ultra build | autonomous | trusted | smart", "review | autonomous | trusted | smart"},
		{70, "ultra [B][A][T][S]", "[review][A][T][S]"},
	} {
		t.Run("", func(t *testing.T) {
			f := newFake()
			a := axes.Axes{Mode: "build", Control: "autonomous", Permission: "trusted", ModelMode: "smart", Surface: "tui"}
			tm := teatest.NewTestModel(t, New(Options{Backend: f, Axes: a, Project: "calc"}), teatest.WithInitialTermSize(c.width, 30))
			seen := func(want string) func([]byte) bool {
				var acc bytes.Buffer
				return func(b []byte) bool {
					acc.Write(b)
					return strings.Contains(ansi.Strip(acc.String()), want)
				}
			}
			teatest.WaitFor(t, tm.Output(), seen(c.first), teatest.WithDuration(5*time.Second))
			tm.Send(tea.KeyPressMsg{Code: 'm', Mod: tea.ModAlt})
			teatest.WaitFor(t, tm.Output(), seen(c.next), teatest.WithDuration(5*time.Second))
			tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
			tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
			fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
			if got := fm.Axes().Mode; got != "review" {
				t.Errorf("final mode %q", got)
			}
			if got := fm.View().WindowTitle; got != "ultra[review|A|trusted|smart] calc" {
				t.Errorf("title %q", got)
			}
		})
	}
}
