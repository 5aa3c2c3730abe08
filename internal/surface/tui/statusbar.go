package tui

import (
	"fmt"
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// helpText is /help: the commands of the table, then the keys.
func helpText() string {
	var b strings.Builder
	b.WriteString("commands (/help COMMAND shows one; PgUp scrolls)\n\n")
	b.WriteString(command.Help())
	b.WriteString("\n\nkeys\n\n")
	for _, s := range shortcuts {
		fmt.Fprintf(&b, "  %-28s %s\n", strings.Join(s.keys, " / "), s.what)
	}
	return b.String()
}

// skillsHelp lists the skills /NAME invokes.
func skillsHelp(skills []Skill) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nskills (/NAME [TASK] starts a run with one; ultra skills list)\n\n")
	for _, s := range skills {
		fmt.Fprintf(&b, "  /%-27s %s\n", s.Name, event.OneLine(s.Description, 70))
	}
	return b.String()
}

func (m *Model) overlayLines(rows int) []string {
	var out []string
	switch m.ov {
	case ovTasks:
		out = append(out, stHeading.Render("tasks")+stDim.Render("   ↑↓ choose · enter attach · r resume · p pause · s stop · c cancel · esc close"), "")
		if m.rowsErr != "" {
			out = append(out, stBad.Render(m.rowsErr))
		}
		if len(m.rows) == 0 && m.rowsErr == "" {
			out = append(out, stDim.Render("no runs yet"))
		}
		for i, r := range m.rows {
			line := printable(fmt.Sprintf("%-22s %-10s %-12s %-11s %-34s %8s  %s", r.ID, r.Mode, r.Class.Class, r.Phase,
				BadgePlain(r.Axes, 100), fmt.Sprintf("$%.2f", r.Cost), event.OneLine(r.Task, 60)))
			st := lipgloss.NewStyle()
			switch r.Class.Class {
			case "waiting":
				st = st.Foreground(colWarning).Bold(true)
			case "stuck", "failed":
				st = st.Foreground(colError).Bold(true)
			case "running":
				st = st.Foreground(colSuccess)
			case "done", "cancelled":
				st = st.Foreground(colDim)
			}
			if i == m.sel {
				line = "▶ " + line
				st = st.Reverse(true)
			} else {
				line = "  " + line
			}
			out = append(out, st.Render(ansi.Truncate(line, m.w, "…")))
			if i == m.sel && r.Class.Next != "" {
				out = append(out, stDim.Render("    next: "+printable(r.Class.Next)))
			}
		}
	}
	if len(out) > rows {
		out = out[:rows]
	}
	return out
}

func (m *Model) statusBar() string {
	s := m.sess
	var parts []string
	act := ""
	switch {
	case m.live() && m.rt.Activity != "":
		act = m.forScreen(m.rt.Activity)
		switch {
		case act != "waiting for the model":
		case m.rt.Partial != "":
			act = "the model is answering"
		case m.rt.Thinking != "":
			act = "the model is thinking"
		}
		if !m.rt.ActivitySince.IsZero() {
			act += fmt.Sprintf(" %ds", int(m.o.Now().Sub(m.rt.ActivitySince).Seconds()))
		}
	case len(m.busy) > 0:
		act = "running " + m.busy[len(m.busy)-1]
	case m.live():
		act = "working"
	}
	if act != "" {
		// What happens now comes first: it must not be cut off.
		parts = append(parts, stInfo.Render(frames[m.tick%len(frames)]+" "+event.OneLine(printable(act), 80)))
	}
	if s.Run == "" {
		parts = append(parts, "no run")
	} else {
		ph := s.Phase
		if ph == "" {
			ph = "…"
		}
		parts = append(parts, "phase "+ph)
		if s.Status != "" && s.Status != "running" && s.Status != s.Phase {
			parts = append(parts, s.Status)
		}
		if s.Goal != "" {
			parts = append(parts, "goal "+s.Goal)
		}
		if s.Limit.Max > 0 {
			// "cycles 3/5": the goal is named beside it.
			what, _, _ := strings.Cut(s.Limit.What, " of ")
			parts = append(parts, fmt.Sprintf("%s %d/%d", what, s.Limit.Used, s.Limit.Max))
		}
		parts = append(parts, tasks.Tokens(s.Tokens)+" tok")
		if s.Cost > 0 {
			parts = append(parts, fmt.Sprintf("$%.4f", s.Cost))
		}
	}
	line := " " + strings.Join(parts, " · ")
	line = ansi.Truncate(line, m.w, "…")
	return lipgloss.NewStyle().Reverse(true).Render(line + strings.Repeat(" ", max(m.w-ansi.StringWidth(line), 0)))
}

var stInfo = lipgloss.NewStyle().Foreground(colInfo)

// phaseColor is the colour of each phase in the header.
var phaseColor = map[string]color.Color{
	"planning": colAccent, "building": colInfo, "verifying": colWarning, "iterating": colWarning, "cleaning": colInfo, "reviewing": colWarning,
	"complete": colSuccess, "escalated": colError, "cancelled": colError, "answering": colDim, "researching": colInfo,
}

func (m *Model) hints() string {
	if m.notice != "" {
		return stWarn.Render(m.notice)
	}
	h := "enter send · alt+enter newline · /help · tab complete · esc interrupt · ctrl+c ctrl+c quit"
	if m.w < CompactBelow {
		h = "/help · esc interrupt · ^C^C quit"
	}
	return stDim.Render(h)
}
