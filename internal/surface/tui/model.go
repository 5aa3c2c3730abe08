// Package tui is ultra's interactive terminal interface: a client of the
// store and of ultra's own commands. It follows a run's events as the
// store has them, shows the five axes as a badge, and acts only by
// running the command line's commands (the one command table,
// internal/command), so a run it starts outlives it and any terminal can
// attach to any run.
package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// Options configure a TUI.
type Options struct {
	Backend Backend
	Project string    // the repository's name, for the title
	Axes    axes.Axes // the axes of the next run
	Attach  string    // a run to follow from the start
	Model   string    // the model of the next runs ("" for the configured one)
	Extra   []string  // flags for every run the TUI starts (--base-url, --provider)
	// Worktree are flags for the runs that make a worktree (ultra run and
	// plan): --include-uncommitted.
	Worktree []string
	Files    []string // the repository's files, for @path completion
	// History is what was typed before, oldest first; Remember keeps a
	// new entry (nil: history lasts the session).
	History  []string
	Remember func(string)
	Now      func() time.Time
	Poll     time.Duration // how often the store is read (default 100 ms)
	// Skills are the skills a person may invoke with /NAME [TASK].
	Skills []Skill
}

// Skill is a skill a person may invoke from the TUI.
type Skill struct{ Name, Description string }

type overlay int

const (
	ovNone overlay = iota
	ovTasks
)

// Model is the TUI's bubbletea model.
type Model struct {
	o     Options
	w, h  int
	sess  Session
	rt    store.Runtime
	next  axes.Axes
	model string
	input textarea.Model

	history []string
	hpos    int
	// pastes are large pasted texts, shown in the input as a placeholder
	// (pasteLabel) and put back in their place when the input is sent.
	pastes []string

	ov       overlay
	rows     []tasks.Row
	sel      int
	rowsErr  string
	denyCall string // the call whose denial reason the input takes
	planEdit bool   // the input takes guidance for the plan
	hideAsk  string // the call or plan whose prompt was put away (Esc)

	at        pos  // the scroll position
	openTools bool // tool outputs shown whole
	openThink bool // thinking shown
	quitAt    time.Time
	confirm   string   // the key (and what) a second press confirms
	busy      []string // commands running, as typed
	tick      int
	notice    string
	polling   bool
	// pending counts new runs being started: typed text waits for them.
	pending int
	// shown are the items of the last frame.
	shown    []*Item
	tasksAll bool // the panel lists finished runs too
	// gen counts the runs followed: a poll answers for one of them.
	gen int
	// tasksBusy: the tasks panel's rows are being read.
	tasksBusy bool
	// askID is the prompt on screen and askSince when it appeared.
	askID    string
	askSince time.Time
}

// New returns a TUI model.
func New(o Options) *Model {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	ta := textarea.New()
	ta.ShowLineNumbers = false
	// One prompt mark, on the input's first line: the rows under it are
	// the same input, not more prompts.
	ta.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	ta.Placeholder = "a task, a question, or /help"
	ta.CharLimit = 0
	ta.MaxHeight = 8
	ta.SetHeight(2)
	ta.KeyMap.InsertNewline.SetKeys("alt+enter", "ctrl+j", "shift+enter")
	ta.Focus()
	m := &Model{o: o, next: o.Axes, model: o.Model, input: ta, w: 100, h: 30, at: pos{item: -1}}
	if m.next.Surface == "" {
		m.next.Surface = "tui"
	}
	if o.Attach != "" {
		m.sess.Run = o.Attach
	} else {
		m.sess.Add(&Item{Kind: KindInfo, Title: "Type a task and press Enter: ultra runs it with the axes in the badge, on its own branch.",
			Body: "/help lists the commands and keys · Alt+M changes the work mode (chat, plan, build, review, repair, research) · /tasks shows what runs"})
	}
	m.history = slices.Clone(o.History)
	m.hpos = len(m.history)
	return m
}

// Init starts the clock that drives polling and the spinner.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.tickCmd(), m.pollCmd()) }

type (
	tickMsg struct{}
	pollMsg struct {
		gen  int
		run  string
		row  *store.Run
		evs  []store.StoredEvent
		rt   store.Runtime
		err  error
		more bool
	}
	execMsg struct {
		typed string
		out   string
		code  int
		// drive: the command may go on with the run on screen, whose
		// events show its progress and end; its exit code is the run's.
		drive bool
	}
	// modelMsg is the server's answer to `ultra models --json`, asked
	// when a person names a model.
	modelMsg struct {
		name, out string
		code      int
	}
	startedMsg struct {
		typed string
		run   string
		err   error
		wait  func() (string, int)
	}
	tasksMsg struct {
		rows []tasks.Row
		err  error
	}
	attachMsg struct {
		row *store.Run
		err error
	}
)

func (m *Model) tickCmd() tea.Cmd {
	return tea.Tick(m.o.Poll, func(time.Time) tea.Msg { return tickMsg{} })
}

// pollCmd reads the followed run's row, new events and runtime.
func (m *Model) pollCmd() tea.Cmd {
	run := m.sess.Run
	if run == "" || m.polling {
		return nil
	}
	m.polling = true
	seq, be, gen := m.sess.Seq, m.o.Backend, m.gen
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		const batch = 2000
		evs, err := be.EventsAfter(ctx, run, seq, batch)
		if err != nil {
			return pollMsg{gen: gen, run: run, err: err}
		}
		row, err := be.Row(ctx, run)
		if err != nil {
			return pollMsg{gen: gen, run: run, err: err}
		}
		rt, _ := be.Runtime(ctx, run)
		return pollMsg{gen: gen, run: run, row: row, evs: evs, rt: rt, more: len(evs) == batch}
	}
}

// Axes are the axes the badge shows: the followed run's, else the next
// run's.
func (m *Model) Axes() axes.Axes {
	if m.onRun() && m.sess.Axes.Mode != "" {
		a := m.sess.Axes
		if a.Surface == "" {
			a.Surface = m.next.Surface
		}
		return a
	}
	return m.next
}

// onRun says axis commands, shortcuts and typed text act on the run on
// screen (it works, or waits to be resumed); otherwise they set up the
// next run, and the badge shows its axes.
func (m *Model) onRun() bool {
	return m.sess.Run != "" && (m.sess.Status == "" || m.live() || resumable(m.sess.Status))
}

// live says the followed run's process is driving it now.
func (m *Model) live() bool {
	if m.sess.Run == "" || m.sess.Status != "running" {
		return false
	}
	// A process that died leaves its run "running": its heartbeat says.
	hb := m.rt.Heartbeat
	return hb.IsZero() || m.o.Now().Sub(hb) < tasks.StaleAfter
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.input.SetWidth(max(m.w-2, 10))
		return m, nil
	case tickMsg:
		m.tick++
		var poll tea.Cmd
		// A run that works is read every tick; one that ended (another
		// process may resume it) once a second.
		if m.live() || m.pending > 0 || len(m.busy) > 0 || m.tick%10 == 0 {
			poll = m.pollCmd()
		}
		if m.ov == ovTasks && m.tick%10 == 0 {
			return m, tea.Batch(m.tickCmd(), poll, m.tasksCmd())
		}
		return m, tea.Batch(m.tickCmd(), poll)
	case pollMsg:
		if msg.gen != m.gen {
			return m, nil // a poll of a run no longer on screen
		}
		m.polling = false
		if msg.err != nil {
			m.notice = "reading the store: " + msg.err.Error()
			return m, nil
		}
		for _, e := range msg.evs {
			m.sess.Fold(e)
		}
		m.sess.Row(msg.row)
		m.rt = msg.rt
		m.seeAsk()
		if msg.more {
			return m, m.pollCmd()
		}
		return m, nil
	case execMsg:
		m.done(msg.typed)
		switch {
		case msg.drive && (msg.code == 0 || msg.code == 3 || msg.code == 4):
			// The run's events said it all.
		case msg.code != 0:
			m.sess.Add(&Item{Kind: KindError, Title: fmt.Sprintf("%s: exit %d", msg.typed, msg.code), Body: printable(firstLines(msg.out, 40))})
		default:
			m.sess.Add(&Item{Kind: KindInfo, Title: msg.typed, Body: printable(strings.TrimRight(msg.out, "\n"))})
		}
		m.at = pos{item: -1}
		return m, m.pollCmd()
	case modelMsg:
		if msg.name == m.model {
			m.checkModel(msg)
		}
		return m, nil
	case startedMsg:
		m.done(msg.typed)
		m.pending--
		if msg.err != nil {
			m.sess.Add(&Item{Kind: KindError, Title: "could not start: " + msg.typed, Body: printable(msg.err.Error())})
			return m, nil
		}
		m.follow(msg.run)
		return m, tea.Batch(m.pollCmd(), func() tea.Msg {
			out, code := msg.wait()
			return execMsg{typed: msg.typed, out: out, code: code, drive: true}
		})
	case attachMsg:
		if msg.err != nil {
			m.sess.Add(&Item{Kind: KindError, Title: "/attach: " + msg.err.Error()})
			return m, nil
		}
		m.follow(msg.row.ID)
		return m, m.pollCmd()
	case tasksMsg:
		m.tasksBusy = false
		// The selection is a run, not a row: rows move as runs change.
		selected := ""
		if m.sel < len(m.rows) {
			selected = m.rows[m.sel].ID
		}
		m.rows, m.rowsErr = msg.rows, ""
		for i, r := range m.rows {
			if r.ID == selected {
				m.sel = i
			}
		}
		if msg.err != nil {
			m.rowsErr = msg.err.Error()
		}
		if m.sel >= len(m.rows) {
			m.sel = max(len(m.rows)-1, 0)
		}
		return m, nil
	case tea.PasteMsg:
		if text := strings.ReplaceAll(msg.Content, "\r\n", "\n"); strings.Count(text, "\n") >= pasteFoldLines || len(text) > pasteFoldBytes {
			// A large paste stays whole but takes one line of the input.
			m.pastes = append(m.pastes, text)
			m.input.InsertString(pasteLabel(len(m.pastes), text))
			return m, nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// follow makes run the run on screen.
func (m *Model) follow(run string) {
	if run == m.sess.Run {
		return
	}
	m.sess = Session{Run: run}
	m.rt = store.Runtime{}
	m.at, m.hideAsk, m.polling = pos{item: -1}, "", false
	m.gen++
}
