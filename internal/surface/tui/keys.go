package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/phase"
)

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
		if _, cut := m.callShown(w.Tool, w.Args); cut && (ks == "a" || ks == "y" || ks == "r" || ks == "o") {
			m.say("the call does not show whole on this screen: make the terminal taller, or Ctrl+O, before allowing it (d denies it)")
			return nil, true
		}
		switch ks {
		case "a", "y":
			return m.act("/approve", "approve", run, nil, flags{"call": w.CallID}, true), true
		case "r":
			return m.act("/approve --for-run", "approve", run, nil, flags{"call": w.CallID, "for-run": "true"}, true), true
		case "o":
			if !w.ReadOnly {
				m.say("o allows read-only calls, and this " + w.Tool + " call is not one: a allows it once, d denies it")
				return nil, true
			}
			return m.act("/approve --read-only", "approve", run, nil, flags{"call": w.CallID, "read-only": "true"}, true), true
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
