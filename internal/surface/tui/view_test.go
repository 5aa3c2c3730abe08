package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/phase"
)

// The input has one prompt mark, on its first line, however many rows it
// takes.
func TestInputHasOnePrompt(t *testing.T) {
	for _, typed := range []string{"", "fix the parser", "a very long task that wraps past the width of a narrow terminal once or twice at least"} {
		m := New(Options{Backend: newFake(), Axes: axes.Default})
		m.Update(tea.WindowSizeMsg{Width: 40, Height: 20})
		pump(t, m, press(m, typed))
		var prompts []int
		for i, l := range strings.Split(screen(m), "\n") {
			if strings.HasPrefix(l, "›") {
				prompts = append(prompts, i)
			}
		}
		if len(prompts) != 1 {
			t.Errorf("typed %q: prompt marks on rows %v, want one:\n%s", typed, prompts, screen(m))
		}
		// The cursor stayed at the end of what was typed.
		pump(t, m, press(m, "!"))
		if m.input.Value() != typed+"!" {
			t.Errorf("typed %q then !: the input holds %q", typed, m.input.Value())
		}
	}
}

// /help keeps a command's summary in its column when it wraps: no word
// of it starts a row at column 0.
func TestHelpWrapsUnderItsColumn(t *testing.T) {
	for _, w := range []int{70, 100} {
		m := New(Options{Backend: newFake(), Axes: axes.Default})
		m.Update(tea.WindowSizeMsg{Width: w, Height: 400})
		pump(t, m, press(m, "/help", "enter"))
		s := screen(m)
		start := strings.Index(s, "Commands (/help COMMAND")
		end := strings.Index(s, "\nkeys")
		if start < 0 || end < start {
			t.Fatalf("width %d: no /help:\n%s", w, s)
		}
		for _, l := range strings.Split(s[start:end], "\n")[1:] {
			if l != "" && !strings.HasPrefix(l, "  ") {
				t.Errorf("width %d: a /help row at column 0: %q", w, l)
			}
		}
	}
}

func TestWrapHanging(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  []string
	}{
		{"  /pause [RUN]  Pause a live run now", 34, []string{"  /pause [RUN]  Pause a live run", "                now"}},
		{"  indented text that wraps", 14, []string{"  indented", "  text that", "  wraps"}},
		{"plain text that wraps", 10, []string{"plain text", "that wraps"}},
		{"a\n\nb", 10, []string{"a", "", "b"}},
		// A second column past half the width hangs at the indent.
		{"  a-very-long-first-column  x y z", 20, []string{"  a-very-long-first-", "  column  x y z"}},
	} {
		if got := wrapHanging(c.in, c.width); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("wrapHanging(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// Every phase of the phase table has its colour in the status bar.
func TestEveryPhaseHasAColour(t *testing.T) {
	for _, p := range phase.All {
		if _, ok := phaseColor[string(p)]; !ok {
			t.Errorf("phase %s has no colour", p)
		}
	}
}
