// Package tui is ultra's interactive terminal interface: a client of the
// store and of ultra's own commands. It follows a run's events as the
// store has them, shows the five axes as a badge, and acts only by
// running the command line's commands (the one command table,
// internal/command), so a run it starts outlives it and any terminal can
// attach to any run.
package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/phase"
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
}

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
	ta.Prompt = "› "
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

// Shortcuts: Ctrl+Shift+letter where the terminal tells them apart
// (bubbletea asks for the keyboard enhancements), Alt+letter everywhere.
var shortcuts = []struct {
	keys []string
	what string
}{
	{[]string{"ctrl+shift+m", "alt+m"}, "cycle the work mode"},
	{[]string{"ctrl+shift+a", "alt+a"}, "run control: autonomous"},
	{[]string{"ctrl+shift+s", "alt+s"}, "run control: assisted"},
	{[]string{"ctrl+shift+i", "alt+i"}, "run control: manual"},
	{[]string{"ctrl+shift+r", "alt+r"}, "work mode: repair"},
	{[]string{"ctrl+shift+p", "alt+p"}, "cycle the permission profile"},
	{[]string{"ctrl+shift+t", "alt+t"}, "the tasks panel"},
	{[]string{"ctrl+o"}, "show or fold tool output"},
	{[]string{"ctrl+t"}, "show or fold thinking"},
	{[]string{"esc"}, "interrupt the current step (pause), or close a panel"},
	{[]string{"ctrl+c ctrl+c"}, "quit (runs go on; ultra tasks lists them)"},
	{[]string{"pgup", "pgdown"}, "scroll the conversation"},
	{[]string{"alt+enter", "ctrl+j"}, "a new line in the input"},
	{[]string{"tab"}, "complete a /command or an @path"},
	{[]string{"up", "down"}, "the input's history"},
}

func shortcut(k string) int {
	for i, s := range shortcuts {
		if slices.Contains(s.keys, k) {
			return i
		}
	}
	return -1
}

// cycle is the value after v in vals.
func cycle(vals []string, v string) string {
	i := slices.Index(vals, v)
	return vals[(i+1)%len(vals)]
}

func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	ks := k.String()
	if ks != "ctrl+c" {
		m.quitAt = time.Time{}
		m.notice = ""
	}
	if c, _, _ := strings.Cut(m.confirm, ":"); c != ks {
		m.confirm = ""
	}
	switch ks {
	case "ctrl+c":
		if !m.quitAt.IsZero() && m.o.Now().Sub(m.quitAt) < 2*time.Second {
			return m, tea.Quit
		}
		m.quitAt = m.o.Now()
		m.input.Reset()
		m.pastes = nil
		m.denyCall, m.planEdit = "", false
		m.notice = "press Ctrl-C again to quit (runs go on; ultra tasks lists them)"
		return m, nil
	case "esc":
		switch {
		case m.ov != ovNone:
			m.ov = ovNone
		case m.denyCall != "" || m.planEdit:
			m.denyCall, m.planEdit = "", false
			m.input.Reset()
			m.pastes = nil
		case m.modal():
			m.hideAsk = m.asking()
		case m.hideAsk != "" && m.sess.Waiting != nil:
			m.hideAsk = "" // the call still waits: its prompt comes back
		case m.live():
			return m, m.act("/pause", "pause", m.sess.Run, nil, flags{"reason": "interrupted from the TUI (Esc)"}, true)
		}
		return m, nil
	case "ctrl+o":
		m.openTools = !m.openTools
		m.touchAll(KindTool)
		return m, nil
	case "ctrl+t":
		m.openThink = !m.openThink
		m.touchAll(KindThinking)
		return m, nil
	case "pgup":
		m.scroll(max(m.convHeight()-2, 1))
		return m, nil
	case "pgdown":
		m.scroll(-max(m.convHeight()-2, 1))
		return m, nil
	}
	if i := shortcut(ks); i >= 0 && i <= 6 {
		return m, m.shortcutCmd(i, ks)
	}
	if m.ov == ovTasks {
		return m.tasksKey(ks)
	}
	if m.modal() && ks == "/" {
		// A slash command while a prompt waits: the prompt steps aside
		// and comes back once the command is sent.
		m.hideAsk = m.asking()
	} else if m.modal() {
		// A prompt has the keys until it is answered or put away: typed
		// text must never answer it by accident.
		if m.o.Now().Sub(m.askSince) < askGrace {
			m.say("the prompt has just appeared: look at it, then answer")
			return m, nil
		}
		cmd, ok := m.askKey(ks)
		if !ok {
			m.say("the prompt above has the keys; Esc puts it away and returns to typing")
		}
		return m, cmd
	}
	switch ks {
	case "enter":
		return m, m.submit()
	case "tab":
		m.complete()
		return m, nil
	case "up":
		if !strings.Contains(m.input.Value(), "\n") && len(m.history) > 0 {
			m.hpos = max(m.hpos-1, 0)
			m.input.SetValue(m.history[m.hpos])
			return m, nil
		}
	case "down":
		if !strings.Contains(m.input.Value(), "\n") && m.hpos < len(m.history) {
			m.hpos++
			if m.hpos == len(m.history) {
				m.input.Reset()
			} else {
				m.input.SetValue(m.history[m.hpos])
			}
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return m, cmd
}

func (m *Model) touchAll(k Kind) {
	for _, it := range m.sess.Items() {
		if it.Kind == k {
			it.touch()
		}
	}
}

// shortcutCmd applies shortcut i as its slash command would.
func (m *Model) shortcutCmd(i int, key string) tea.Cmd {
	a := m.Axes()
	var line string
	switch i {
	case 0:
		modes := axes.Values[axes.Mode]
		if m.onRun() {
			// A run keeps its kind: one with a branch and worktree cannot
			// become a read-only mode, and the other way round; none
			// becomes a review.
			modes = slices.DeleteFunc(slices.Clone(modes), func(v string) bool {
				return v == phase.Review || phase.Worktree(v) != phase.Worktree(a.Mode)
			})
		}
		line = "/mode " + cycle(modes, a.Mode)
	case 1:
		line = "/control autonomous"
	case 2:
		line = "/control assisted"
	case 3:
		line = "/control manual"
	case 4:
		line = "/mode repair"
	case 5:
		p := cycle(axes.Values[axes.Permission], a.Permission)
		line = "/permission-profile " + p
		// A working run steps up to unrestricted only on a second press.
		if p == "unrestricted" && m.onRun() && !m.confirmed(key, "make the run unrestricted") {
			return nil
		}
		if p == "unrestricted" {
			defer m.say("unrestricted: the model's commands reach the network, and run uncontained where there is no sandbox; Alt+P again for restricted")
		}
	case 6:
		line = "/tasks"
	}
	return m.slash(line)
}

// asking names the prompt that waits for a person's answer: an approval
// ("call:ID") or a plan ("plan:RUN"); "" when none does or it was put
// away.
func (m *Model) asking() string {
	id := ""
	switch {
	case m.sess.Waiting != nil && (m.sess.Status == "running" || m.sess.Status == "needs_approval"):
		id = "call:" + m.sess.Waiting.CallID
	case m.sess.Plan != "" && m.sess.Status == "needs_approval":
		id = "plan:" + m.sess.Run
	}
	if id == m.hideAsk {
		return ""
	}
	return id
}

// modal says a prompt has the keys (the input is not shown). A prompt
// that appears while the person is typing waits for the input to be sent
// or cleared: their letters are not its answers.
func (m *Model) modal() bool {
	return m.asking() != "" && m.denyCall == "" && !m.planEdit && m.ov == ovNone && m.input.Value() == ""
}

// askGrace is how long a new prompt shows before its keys answer it: a
// key pressed as it appears was meant for something else.
const askGrace = 700 * time.Millisecond

// seeAsk notes when the prompt on screen first appeared.
func (m *Model) seeAsk() {
	if id := m.asking(); id != m.askID {
		m.askID, m.askSince = id, m.o.Now()
	}
}

// confirmed says key k was pressed twice in a row for what; the first
// press asks for the second.
func (m *Model) confirmed(k, what string) bool {
	if m.confirm == k+":"+what {
		m.confirm = ""
		return true
	}
	m.confirm = k + ":" + what
	m.say(fmt.Sprintf("press %s again to %s", k, what))
	return false
}

// say shows a notice on the hints line until the next key.
func (m *Model) say(s string) { m.notice = s }

// askKey answers the prompt on screen.
func (m *Model) askKey(ks string) (tea.Cmd, bool) {
	run := m.sess.Run
	if w := m.sess.Waiting; w != nil && strings.HasPrefix(m.asking(), "call:") {
		if _, cut := m.callShown(w.Args); cut && (ks == "a" || ks == "y" || ks == "r") {
			m.say("the call does not show whole on this screen: make the terminal taller, or Ctrl+O, before allowing it (d denies it)")
			return nil, true
		}
		switch ks {
		case "a", "y":
			return m.act("/approve", "approve", run, nil, flags{"call": w.CallID}, true), true
		case "r":
			return m.act("/approve --for-run", "approve", run, nil, flags{"call": w.CallID, "for-run": "true"}, true), true
		case "d", "n":
			m.denyCall = w.CallID
			m.input.Placeholder = "why it is denied (the model reads this); enter sends, esc goes back"
			return nil, true
		}
		return nil, false
	}
	switch ks {
	case "a":
		return m.act("/approve", "approve", run, nil, nil, true), true
	case "A":
		return m.act("/approve --autonomous", "approve", run, nil, flags{"autonomous": "true"}, true), true
	case "e":
		m.planEdit = true
		m.input.Placeholder = "what to change in the plan; enter sends it back to planning, esc goes back"
		return nil, true
	case "x":
		if !m.confirmed("x", "reject the plan (the run is cancelled)") {
			return nil, true
		}
		return m.act("/cancel", "cancel", run, nil, flags{"reason": "plan rejected from the TUI"}, false), true
	}
	return nil, false
}

func (m *Model) tasksKey(ks string) (tea.Model, tea.Cmd) {
	if len(m.rows) == 0 {
		return m, nil
	}
	r := m.rows[m.sel]
	switch ks {
	case "up", "k":
		m.sel = max(m.sel-1, 0)
	case "down", "j":
		m.sel = min(m.sel+1, len(m.rows)-1)
	case "enter":
		m.ov = ovNone
		m.follow(r.ID)
		return m, m.pollCmd()
	case "r":
		if r.Class.Class == "running" {
			m.say(r.ID + " is running: enter attaches to it")
			return m, nil
		}
		m.ov = ovNone
		m.follow(r.ID)
		return m, tea.Batch(m.pollCmd(), m.act("/resume "+r.ID, "resume", r.ID, nil, nil, true))
	case "p":
		return m, m.act("/pause "+r.ID, "pause", r.ID, nil, nil, false)
	case "s":
		if m.confirmed("s", "stop "+r.ID) {
			return m, m.act("/stop "+r.ID, "stop", r.ID, nil, nil, false)
		}
	case "c":
		if m.confirmed("c", "cancel "+r.ID+" for good") {
			return m, m.act("/cancel "+r.ID, "cancel", r.ID, nil, nil, false)
		}
	default:
		m.say("the tasks panel has the keys: ↑↓ enter r p s c; Esc returns to typing")
	}
	return m, nil
}

// submit takes the input: a slash command, an answer to a prompt, or a
// message (a new task, a question, guidance).
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.unfold(m.input.Value()))
	m.input.Reset()
	m.input.Placeholder = "a task, a question, or /help"
	m.at = pos{item: -1}
	if text == "" {
		return nil
	}
	if len(m.history) == 0 || m.history[len(m.history)-1] != text {
		m.history = append(m.history, text)
		if m.o.Remember != nil {
			m.o.Remember(text)
		}
	}
	m.hpos = len(m.history)
	if call := m.denyCall; call != "" {
		m.denyCall = ""
		return m.act("/deny", "deny", m.sess.Run, []string{text}, flags{"call": call}, true)
	}
	if m.planEdit {
		m.planEdit = false
		return m.act("/resume", "resume", m.sess.Run, []string{text}, flags{"run": m.sess.Run}, true)
	}
	if strings.HasPrefix(text, "/") {
		m.hideAsk = ""
		return m.slash(text)
	}
	return m.message(text)
}

// checkModel says whether the server serves the model a person named,
// from `ultra models --json`.
func (m *Model) checkModel(msg modelMsg) {
	var served struct {
		BaseURL string   `json:"base_url"`
		Models  []string `json:"models"`
	}
	if msg.code != 0 || json.Unmarshal([]byte(msg.out), &served) != nil {
		m.sess.Add(&Item{Kind: KindInfo, Title: "could not ask the model server which models it serves; the next run's preflight checks " + printable(msg.name),
			Body: printable(firstLines(msg.out, 3))})
		return
	}
	if slices.Contains(served.Models, msg.name) {
		return
	}
	m.sess.Add(&Item{Kind: KindError, Title: fmt.Sprintf("the model server at %s does not list %s: runs would stop at their preflight (/model NAME picks another)", printable(served.BaseURL), printable(msg.name)),
		Body: printable("it serves: " + strings.Join(served.Models[:min(len(served.Models), 12)], ", ") + more(len(served.Models)-12))})
}

// more is ", … and N more" for n > 0 left out of a list.
func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(", … and %d more", n)
}

// A paste of this many lines or bytes is folded into a placeholder.
const (
	pasteFoldLines = 8
	pasteFoldBytes = 2000
)

// pasteLabel is the placeholder of paste n (counted from 1).
func pasteLabel(n int, text string) string {
	return fmt.Sprintf("[pasted text #%d, %d lines]", n, strings.Count(strings.TrimRight(text, "\n"), "\n")+1)
}

// unfold puts the pasted texts back in place of their placeholders (a
// placeholder the person deleted drops its paste) and forgets them.
func (m *Model) unfold(s string) string {
	for i, p := range m.pastes {
		s = strings.Replace(s, pasteLabel(i+1, p), p, 1)
	}
	m.pastes = nil
	return s
}

// message sends typed text where it belongs: guidance for a run that
// waits, the next question of a chat, or a new run.
func (m *Model) message(text string) tea.Cmd {
	if m.pending > 0 {
		m.notice = "a run is starting; wait for it"
		return nil
	}
	a := m.next
	run := m.sess.Run
	switch {
	case m.live() && m.sess.Waiting != nil:
		m.hideAsk = ""
		m.say("the run waits for your decision on call " + m.sess.Waiting.CallID + ": answer the prompt (d denies it with your words; Up brings your text back)")
		return nil
	case m.live():
		m.say("the run is working: Esc pauses it, then your message goes on as guidance (or /steer its axes)")
		m.input.SetValue(text)
		return nil
	case run != "" && m.sess.Axes.Mode == "chat" && a.Mode == "chat":
		return m.start("chat", append(append([]string{"chat", "--output", "jsonl"}, m.o.Extra...), run, "--", text))
	case run != "" && resumable(m.sess.Status):
		return m.act("/resume", "resume", run, []string{text}, flags{"run": run}, true)
	}
	// Flags first, then the text after "--": a task that starts with a
	// dash is still the task.
	var args []string
	switch a.Mode {
	case "chat", "research":
		args = []string{a.Mode, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}
	case "review":
		args = []string{"review"}
		m.sess.Add(&Item{Kind: KindInfo, Title: "a review inspects the working tree's changes; your text is not sent (ultra review takes a run or --base)"})
	case "plan":
		args = append([]string{"plan", "--control", a.Control, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}, m.o.Worktree...)
	default:
		args = append([]string{"run", "--mode", a.Mode, "--control", a.Control, "--permission-profile", a.Permission, "--model-mode", a.ModelMode}, m.o.Worktree...)
	}
	if m.model != "" && a.Mode != "review" {
		args = append(args, "--model", m.model)
	}
	args = append(append(args, m.o.Extra...), "--output", "jsonl")
	if a.Mode != "review" {
		args = append(args, "--", text)
	}
	return m.start(event.OneLine(text, 60), args)
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
		m.sess.Add(&Item{Kind: KindInfo, Title: "/help", Body: helpText()})
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

// complete completes a slash command or an @path mention.
func (m *Model) complete() {
	v := m.input.Value()
	if strings.HasPrefix(v, "/") {
		c := command.CompleteLine(v)
		switch len(c) {
		case 0:
			m.notice = "no completion"
		case 1:
			m.input.SetValue(c[0] + " ")
		default:
			p := commonPrefix(c)
			m.input.SetValue(p)
			cut := strings.LastIndexByte(p, ' ') + 1
			var words []string
			for _, x := range c {
				words = append(words, x[cut:])
			}
			m.say(strings.Join(words, "  "))
		}
		return
	}
	i := strings.LastIndexByte(v, '@')
	if i < 0 || strings.ContainsAny(v[i:], " \n") {
		return
	}
	prefix := v[i+1:]
	var c []string
	for _, f := range m.o.Files {
		if strings.HasPrefix(f, prefix) && printable(f) == f && !strings.ContainsAny(f, " \n") {
			c = append(c, f)
			if len(c) == 50 {
				break
			}
		}
	}
	switch len(c) {
	case 0:
		m.notice = "no file starts with " + prefix
	case 1:
		m.input.SetValue(v[:i+1] + c[0] + " ")
	default:
		m.input.SetValue(v[:i+1] + commonPrefix(c))
		m.notice = printable(strings.Join(c[:min(len(c), 8)], "  "))
	}
}

func commonPrefix(ss []string) string {
	p := []rune(ss[0])
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, string(p)) {
			p = p[:len(p)-1]
		}
	}
	return string(p)
}

// forScreen says a run's own words about what a person can do in the
// TUI's terms: `ultra next RUN` is /next, `ultra approve RUN --call ID`
// is the prompt's keys.
func (m *Model) forScreen(s string) string {
	if m.sess.Run == "" {
		return s
	}
	if before, _, ok := strings.Cut(s, ": ultra approve "+m.sess.Run); ok {
		return before
	}
	r := strings.NewReplacer("ultra next "+m.sess.Run, "/next", "ultra resume "+m.sess.Run, "/resume",
		"ultra approve "+m.sess.Run, "/approve")
	return r.Replace(s)
}

// overwritten is output as a terminal leaves it: of a line rewritten
// with carriage returns (a progress bar), its last writing.
func overwritten(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// liveOutputLines is how much of a running command's output shows.
const liveOutputLines = 8

// spinner frames.
var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// View renders the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = Title(m.Axes(), m.o.Project)
	return v
}

// inputHeight is the input's rows.
func (m *Model) inputHeight() int { return min(max(m.input.LineCount(), 2), 8) }

// convHeight is the rows of the conversation.
func (m *Model) convHeight() int { return max(m.h-3-m.inputHeight(), 1) }

// Render is the screen's content.
func (m *Model) Render() string {
	lines := make([]string, 0, m.h)
	lines = append(lines, m.header())
	conv := m.conversation(m.convHeight())
	lines = append(lines, conv...)
	lines = append(lines, m.statusBar())
	switch {
	case m.modal():
		lines = append(lines, stWarn.Render("› answer the prompt above (its keys); / starts a command; Esc puts it away"))
		for range m.inputHeight() - 1 {
			lines = append(lines, "")
		}
	case m.ov == ovTasks:
		lines = append(lines, stWarn.Render("› the tasks panel has the keys; Esc returns to typing"))
		for range m.inputHeight() - 1 {
			lines = append(lines, "")
		}
	default:
		m.input.SetHeight(m.inputHeight())
		lines = append(lines, strings.Split(m.input.View(), "\n")...)
	}
	lines = append(lines, m.hints())
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.w, "")
	}
	if len(lines) > m.h {
		lines = lines[:m.h]
	}
	return strings.Join(lines, "\n")
}

func (m *Model) header() string {
	a := m.Axes()
	pulse := a.Control == "autonomous" && m.live() && (m.tick/10)%2 == 1
	left := stBold.Render("ultra") + " " + Badge(a, m.w, pulse)
	if ph := m.sess.Phase; ph != "" && m.sess.Run != "" {
		left += "  " + lipgloss.NewStyle().Foreground(phaseColor[ph]).Render("▸ "+ph)
	}
	right := printable(m.o.Project)
	if m.sess.Run != "" {
		right = m.sess.Run + "  " + right
	}
	right = stDim.Render(right)
	gap := m.w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		return left
	}
	return left + strings.Repeat(" ", gap) + right
}

// conversation renders the rows of the conversation at the scroll
// position: the end (with the answer streaming in, a command's output
// and any prompt), or an anchored item when scrolled back. Only the items
// on screen are rendered.
func (m *Model) conversation(rows int) []string {
	var out []string
	shown := make([]*Item, 0, rows)
	if m.ov != ovNone {
		out = m.overlayLines(rows)
	} else if m.at.follow() {
		out = m.bottom(rows, &shown)
	} else {
		out = m.anchored(rows, &shown)
	}
	// Only the items of this frame keep their rendered lines: memory is
	// what is on screen (the conversation itself is the store's).
	for _, it := range m.shown {
		if !slices.Contains(shown, it) {
			it.touch()
		}
	}
	m.shown = shown
	for len(out) < rows {
		if m.ov != ovNone {
			out = append(out, "") // a panel reads from the top
		} else {
			out = append([]string{""}, out...)
		}
	}
	return out
}

// tail is what follows the last item: the answer streaming in, a
// command's output, the prompt that waits for a person.
func (m *Model) tail() []string {
	w := m.w
	var tail []string
	if th := m.rt.Thinking; th != "" && m.live() && m.rt.Activity == "waiting for the model" {
		// The thinking streaming in, as a thinking item shows it (Ctrl+T),
		// and while folded its newest line, so it is seen to move.
		it := &Item{Kind: KindThinking, Body: printable(th)}
		lines := it.render(w, m.openThink)
		if !m.openThink {
			body := strings.Split(strings.TrimSpace(it.Body), "\n")
			newest := stFaint.Render("  " + ansi.Truncate(body[len(body)-1], w-2, "…"))
			lines = append(lines[:len(lines)-1], newest, "") // before the item's blank line
		}
		tail = append(tail, lines...)
	}
	if p := m.rt.Partial; p != "" && m.live() {
		switch {
		case m.rt.Activity == "waiting for the model":
			tail = append(tail, markdown(printable(p), w)...)
		case strings.HasPrefix(m.rt.Activity, "running"):
			// A command at work: the tail of its output.
			lines := strings.Split(strings.TrimRight(printable(overwritten(p)), "\n"), "\n")
			if len(lines) > liveOutputLines {
				lines = lines[len(lines)-liveOutputLines:]
			}
			tail = append(tail, stDim.Render("┌ "+event.OneLine(printable(m.rt.Activity), w-4)))
			for _, l := range lines {
				tail = append(tail, stDim.Render("│ ")+ansi.Truncate(l, w-2, "…"))
			}
		}
	}
	return append(tail, m.prompt()...)
}

// lines are item i's rendered lines as the screen shows them.
func (m *Model) lines(i int) []string {
	it := m.sess.Items()[i]
	open := m.openTools
	if it.Kind == KindThinking {
		open = m.openThink
	}
	return it.Lines(m.w, open)
}

// height is item i's rows, without keeping its lines (scrolling passes
// over items it does not show).
func (m *Model) height(i int) int {
	it := m.sess.Items()[i]
	open := m.openTools
	if it.Kind == KindThinking {
		open = m.openThink
	}
	if it.cacheLines != nil && it.cacheW == m.w && it.cacheOpen == open {
		return len(it.cacheLines)
	}
	return len(it.render(m.w, open))
}

// bottom is the last rows: the newest items and the tail.
func (m *Model) bottom(rows int, shown *[]*Item) []string {
	tail := m.tail()
	var rev [][]string
	got := len(tail)
	for i := len(m.sess.Items()) - 1; i >= 0 && got < rows; i-- {
		ls := m.lines(i)
		*shown = append(*shown, m.sess.Items()[i])
		rev = append(rev, ls)
		got += len(ls)
	}
	all := make([]string, 0, got)
	for i := len(rev) - 1; i >= 0; i-- {
		all = append(all, rev[i]...)
	}
	all = append(all, tail...)
	return all[max(len(all)-rows, 0):]
}

// anchored is the rows whose last is line (height-1-off) of the anchor
// item; at the top of the conversation, the first rows.
func (m *Model) anchored(rows int, shown *[]*Item) []string {
	items := m.sess.Items()
	if m.at.item >= len(items) {
		m.at = pos{item: -1}
		return m.bottom(rows, shown)
	}
	ls := m.lines(m.at.item)
	m.at.off = min(m.at.off, len(ls)-1)
	acc := [][]string{ls[:len(ls)-m.at.off]}
	*shown = append(*shown, items[m.at.item])
	got := len(acc[0])
	i := m.at.item - 1
	for ; i >= 0 && got < rows; i-- {
		l := m.lines(i)
		*shown = append(*shown, items[i])
		acc = append(acc, l)
		got += len(l)
	}
	if got >= rows {
		all := make([]string, 0, got)
		for k := len(acc) - 1; k >= 0; k-- {
			all = append(all, acc[k]...)
		}
		return all[len(all)-rows:]
	}
	// The top: the first rows, and the anchor where they end.
	var all []string
	for k := len(acc) - 1; k >= 0; k-- {
		all = append(all, acc[k]...)
	}
	j := m.at.item
	extra := m.at.off
	for len(all) < rows {
		if extra > 0 {
			l := m.lines(j)
			take := min(extra, rows-len(all))
			start := len(l) - extra
			all = append(all, l[start:start+take]...)
			extra -= take
			m.at.off = extra
			continue
		}
		if j+1 >= len(items) {
			m.at = pos{item: -1} // all of it fits
			return m.bottom(rows, shown)
		}
		j++
		l := m.lines(j)
		*shown = append(*shown, items[j])
		take := min(len(l), rows-len(all))
		all = append(all, l[:take]...)
		m.at = pos{item: j, off: len(l) - take}
	}
	return all
}

// pos is where the screen's last row is: follow the end (item -1), or
// the line (height-1-off) of item.
type pos struct{ item, off int }

func (p pos) follow() bool { return p.item < 0 }

// scroll moves the screen up (n > 0) or down by n rows.
func (m *Model) scroll(n int) {
	items := m.sess.Items()
	if len(items) == 0 {
		return
	}
	if m.at.follow() {
		if n <= 0 {
			return
		}
		// The tail is not part of the scrolled conversation.
		m.at = pos{item: len(items) - 1}
	}
	m.at.off += n
	for m.at.off < 0 {
		if m.at.item+1 >= len(items) {
			m.at = pos{item: -1}
			return
		}
		m.at.item++
		m.at.off += m.height(m.at.item)
	}
	for m.at.item > 0 && m.at.off >= m.height(m.at.item) {
		m.at.off -= m.height(m.at.item)
		m.at.item--
	}
	if h := m.height(m.at.item); m.at.off >= h {
		m.at.off = h - 1
	}
}

// prompt is the question on screen: an approval or a plan.
func (m *Model) prompt() []string {
	ask := m.asking()
	if ask == "" {
		return nil
	}
	box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(colWarning).Padding(0, 1).Width(max(m.w-2, 20))
	var body string
	if w := m.sess.Waiting; w != nil && strings.HasPrefix(ask, "call:") {
		args, _ := m.callShown(w.Args)
		body = stWarn.Render("approve this call?") + " " + stTool.Render(w.Tool) + "\n" + args +
			stBold.Render("a") + " allow once   " + stBold.Render("r") + " allow for this run   " + stBold.Render("d") + " deny with a reason   " + stDim.Render("esc later")
		if m.denyCall != "" {
			body += "\n" + stDim.Render("type the reason below")
		}
	} else {
		plan := m.sess.Plan
		pl := strings.Split(plan, "\n")
		if len(pl) > 12 {
			pl = append(pl[:12], fmt.Sprintf("… %d more lines (ultra goals %s)", len(pl)-12, m.sess.Run))
		}
		body = stWarn.Render("the plan waits for you") + "\n" + strings.Join(pl, "\n") + "\n" +
			stBold.Render("a") + " accept   " + stBold.Render("A") + " accept and run autonomously   " + stBold.Render("e") + " edit   " + stBold.Render("x") + " reject   " + stDim.Render("esc later")
	}
	return strings.Split(box.Render(body), "\n")
}

// mainArgs are the arguments a call is judged by, shown first and whole
// in an approval prompt.
var mainArgs = []string{"command", "cmd", "file_path", "path", "pattern", "url", "prompt", "to", "old_string", "new_string", "content"}

// minorArgs are the arguments that change nothing a call does: a line
// each. Every other argument shows whole (a tool may read it under a name
// of its own).
var minorArgs = map[string]bool{"description": true, "timeout_ms": true, "timeout": true}

// callArgs shows a waiting call's arguments for a person to judge in at
// most room lines: the ones that say what it does first and whole, then
// the others a line each (whole with open). cut says the main arguments
// do not show whole in room.
func callArgs(raw []byte, width, room int, open bool) (text string, cut bool) {
	var lines []string
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		// Arguments encoded twice are decoded twice, as the tools do.
		var inner string
		if json.Unmarshal(raw, &inner) == nil && json.Unmarshal([]byte(inner), &m) == nil && m != nil {
			raw = []byte(inner)
		}
	}
	if m == nil {
		lines = wrap(untab(printable(string(raw))), width)
	} else {
		keys := slices.Clone(mainArgs)
		var rest []string
		for k := range m {
			if !slices.Contains(mainArgs, k) && !minorArgs[k] {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		for _, k := range append(keys, rest...) {
			v, ok := m[k]
			if !ok {
				continue
			}
			delete(m, k)
			text, isStr := v.(string)
			if !isStr {
				j, _ := json.Marshal(v)
				text = string(j)
			}
			name := event.OneLine(printable(k), 40)
			for i, l := range wrap(untab(printable(text)), width-ansi.StringWidth(name)-2) {
				label := strings.Repeat(" ", ansi.StringWidth(name)+2)
				if i == 0 {
					label = stBold.Render(name) + ": "
				}
				lines = append(lines, label+l)
			}
		}
		keys = keys[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			j, _ := json.Marshal(m[k])
			name := event.OneLine(printable(k), 40)
			v := untab(printable(string(j)))
			if !open {
				// The others are cut to a line: what the call does is in
				// the main ones, shown whole.
				lines = append(lines, stDim.Render(name+": ")+event.OneLine(v, max(width-len(name)-2, 10)))
				continue
			}
			for i, l := range wrap(v, width-len(name)-2) {
				if i == 0 {
					l = stDim.Render(name+": ") + l
				}
				lines = append(lines, l)
			}
		}
	}
	room = max(room, 2)
	if len(lines) > room {
		lines = append(lines[:room-1], stWarn.Render(fmt.Sprintf("… %d more lines: a taller terminal (or ctrl+o) shows them", len(lines)-room+1)))
		cut = true
	}
	return strings.Join(lines, "\n") + "\n", cut
}

// callShown is a waiting call's arguments as the prompt shows them at
// the screen's size, and whether they are cut.
func (m *Model) callShown(args []byte) (string, bool) {
	return callArgs(args, max(m.w-6, 20), m.convHeight()-5, m.openTools)
}

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
		if s.MaxRet > 0 {
			parts = append(parts, fmt.Sprintf("retries %d/%d", s.Retries, s.MaxRet))
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
	"planning": colAccent, "building": colInfo, "verifying": colWarning, "iterating": colWarning, "reviewing": colWarning,
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
