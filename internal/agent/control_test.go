package agent

import (
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/sandbox"
)

func TestSteerPossible(t *testing.T) {
	with := Options{Sandbox: &sandbox.Status{Available: true}}
	without := Options{Sandbox: &sandbox.Status{Problem: "no bubblewrap"}}
	build := phase.NewIn(phase.Build, phase.Budgets{})
	chat := phase.NewIn(phase.Chat, phase.Budgets{})
	set := func(name, v string) axes.Axes { a, _ := axes.Default.Set(name, v); return a }
	cases := []struct {
		name string
		o    Options
		st   phase.State
		cur  axes.Axes
		next axes.Axes
		err  string // "" when possible
	}{
		{"control", with, build, axes.Default, set(axes.Control, "manual"), ""},
		{"model mode", without, build, axes.Default, set(axes.ModelMode, "deep"), ""},
		{"to repair", with, build, axes.Default, set(axes.Mode, "repair"), ""},
		{"to plan", with, build, axes.Default, set(axes.Mode, "plan"), ""},
		{"build to chat", with, build, axes.Default, set(axes.Mode, "chat"), "cannot become chat"},
		{"chat to build", with, chat, set(axes.Mode, "chat"), axes.Default, "no branch or worktree"},
		{"chat to research", with, chat, set(axes.Mode, "chat"), set(axes.Mode, "research"), ""},
		{"a profile that needs a sandbox, where there is none", without, build, set(axes.Permission, "trusted"), axes.Default, "sandbox"},
		{"trusted runs uncontained", without, build, axes.Default, set(axes.Permission, "trusted"), ""},
	}
	for _, c := range cases {
		err := c.o.steerPossible(c.cur, c.next, c.st)
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.err)
		}
	}
}
