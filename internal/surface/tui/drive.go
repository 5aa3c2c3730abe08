package tui

import (
	"context"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ultra-dev/ultra/internal/command"
)

func (m *Model) done(typed string) {
	if i := slices.Index(m.busy, typed); i >= 0 {
		m.busy = slices.Delete(m.busy, i, i+1)
	}
}

// flags are a command's flags by name ("true" for a switch).
type flags = map[string]string

// act runs command name of the command table on run, as its slash form
// would: the argv is the table's (CLIArgs), which the parity test checks
// against the command line, not one written here.
func (m *Model) act(typed, name, run string, args []string, f flags, drive bool) tea.Cmd {
	c, ok := command.Lookup(name)
	if !ok {
		m.sess.Add(&Item{Kind: KindError, Title: "no command " + name})
		return nil
	}
	argv, err := command.Invocation{Cmd: c, Args: args, Flags: f}.CLIArgs(run)
	if err != nil {
		m.sess.Add(&Item{Kind: KindError, Title: printable(err.Error())})
		return nil
	}
	return m.exec(typed, argv, drive)
}

// exec runs `ultra args` without blocking the screen; drive says it may
// go on with the run on screen (its output is then the run's events).
func (m *Model) exec(typed string, args []string, drive bool) tea.Cmd {
	m.busy = append(m.busy, typed)
	if drive && command.PrintsEvents(args) {
		args = append([]string{args[0], "--output", "jsonl"}, args[1:]...)
	}
	be := m.o.Backend
	return func() tea.Msg {
		out, code := be.Exec(context.Background(), args)
		return execMsg{typed: typed, out: out, code: code, drive: drive}
	}
}

// start runs a command that starts a run, then follows the run.
func (m *Model) start(typed string, args []string) tea.Cmd {
	m.busy = append(m.busy, typed)
	m.pending++
	be := m.o.Backend
	return func() tea.Msg {
		// A run is known once its worktree is made and set up (the
		// project's setup command may take minutes).
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		run, wait, err := be.Start(ctx, args)
		return startedMsg{typed: typed, run: run, err: err, wait: wait}
	}
}

func (m *Model) tasksCmd() tea.Cmd {
	if m.tasksBusy {
		return nil
	}
	m.tasksBusy = true
	be, all := m.o.Backend, m.tasksAll
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rows, err := be.Tasks(ctx, all)
		return tasksMsg{rows: rows, err: err}
	}
}

// resumable says a person's message continues a run in this status.
func resumable(status string) bool {
	switch status {
	case "paused", "stopped", "escalated", "interrupted", "failed", "budget_exhausted", "needs_approval":
		return true
	}
	return false
}

// slash runs a slash command from the shared command table.
func (m *Model) slash(line string) tea.Cmd {
	inv, err := command.Parse(line)
	if err != nil {
		m.sess.Add(&Item{Kind: KindError, Title: err.Error()})
		return nil
	}
	name := inv.Cmd.Name
	switch name {
	case "help":
		if len(inv.Args) > 0 {
			if c, ok := command.Lookup(inv.Args[0]); ok {
				m.sess.Add(&Item{Kind: KindInfo, Title: "/help " + c.Name, Body: c.Usage()})
				return nil
			}
		}
		m.sess.Add(&Item{Kind: KindInfo, Title: "/help", Body: helpText() + skillsHelp(m.o.Skills)})
		return nil
	case "clear":
		m.sess.Clear()
		m.at = pos{item: -1}
		return nil
	case "tasks":
		m.ov, m.sel, m.tasksAll = ovTasks, 0, inv.Flags["all"] == "true"
		return m.tasksCmd()
	case "attach":
		if len(inv.Args) == 0 {
			m.sess.Add(&Item{Kind: KindError, Title: "/attach needs a run id (see /tasks)"})
			return nil
		}
		be, id := m.o.Backend, inv.Args[0]
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			row, err := be.Row(ctx, id)
			return attachMsg{row: row, err: err}
		}
	case "model":
		if len(inv.Args) > 0 {
			m.model = inv.Args[0]
			m.sess.Add(&Item{Kind: KindInfo, Title: "the next runs use the model " + printable(m.model)})
			// Asked of the server at once: a name it does not serve is
			// said now, not at the next run's preflight.
			be, name, args := m.o.Backend, m.model, append([]string{"models", "--json"}, m.o.Extra...)
			return func() tea.Msg {
				out, code := be.Exec(context.Background(), args)
				return modelMsg{name: name, out: out, code: code}
			}
		}
	case "repair":
		if m.sess.Run == "" || !m.onRun() {
			// A new repair run: follow it.
			args, err := inv.CLIArgs("")
			if err != nil {
				m.sess.Add(&Item{Kind: KindError, Title: err.Error()})
				return nil
			}
			return m.start(line, append(args, "--output", "jsonl"))
		}
	case "review":
		if !m.live() {
			args, err := inv.CLIArgs("")
			if err != nil {
				m.sess.Add(&Item{Kind: KindError, Title: err.Error()})
				return nil
			}
			return m.start(line, append(args, "--output", "jsonl"))
		}
	}
	if inv.Cmd.Axes && !m.onRun() {
		ch, err := inv.AxisChanges()
		if err != nil {
			m.sess.Add(&Item{Kind: KindError, Title: err.Error()})
			return nil
		}
		next, err := m.next.Steer(ch)
		if err != nil {
			m.sess.Add(&Item{Kind: KindError, Title: err.Error()})
			return nil
		}
		m.next = next
		m.sess.Add(&Item{Kind: KindInfo, Title: "the next run: " + next.String()})
		return nil
	}
	args, err := inv.CLIArgs(m.sess.Run)
	if err != nil {
		m.sess.Add(&Item{Kind: KindError, Title: err.Error()})
		return nil
	}
	return m.exec(line, args, inv.Cmd.Drives && m.sess.Run != "")
}
