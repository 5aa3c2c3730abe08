package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ultra-dev/ultra/internal/event"
)

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

// inputHeight is the input's rows: its text's rows as wrapped, so that
// the first (with the prompt mark) stays in sight while they fit.
func (m *Model) inputHeight() int { return min(max(m.inputRows(), 2), 8) }

// inputRows is the rows the input's text takes wrapped at the input's
// width, as the input wraps it (at spaces; a full row leaves the cursor a
// row of its own); it may count one row more, never fewer.
func (m *Model) inputRows() int {
	w := max(m.input.Width(), 1)
	rows := 0
	for _, l := range strings.Split(m.input.Value(), "\n") {
		ws := strings.Split(ansi.Wrap(l, w, ""), "\n")
		rows += len(ws)
		if ansi.StringWidth(ws[len(ws)-1]) >= w {
			rows++
		}
	}
	return rows
}

// unscrollInput shows the input from its first row when all its rows fit:
// the input scrolls while a line wraps into a row it has not grown to
// yet, and never scrolls back by itself. The cursor stays where it was.
func (m *Model) unscrollInput() {
	if m.input.ScrollYOffset() == 0 || m.inputRows() > m.input.Height() {
		return
	}
	row, col := m.input.Line(), m.input.Column()
	m.input.MoveToBegin()
	for i := 0; m.input.Line() < row && i < 1000; i++ {
		m.input.CursorDown()
	}
	m.input.SetCursorColumn(col)
}

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
		m.unscrollInput()
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
		args, _ := m.callShown(w.Tool, w.Args)
		if w.Tool == "goals" {
			// The plan is the call: allowing it accepts the plan.
			body = stWarn.Render("accept this plan?") + " " + stDim.Render("(ultra runs each criterion on the base tree first)") + "\n" + args +
				stBold.Render("a") + " accept   " + stBold.Render("d") + " deny with a reason   " + stDim.Render("esc later")
		} else {
			body = stWarn.Render("approve this call?") + " " + stTool.Render(w.Tool) + "\n" + args +
				stBold.Render("a") + " allow once   " + stBold.Render("r") + " allow " + w.Tool + " for this run   " + stBold.Render("d") + " deny with a reason\n"
			if w.ReadOnly {
				// Offered only on a call that reads: it allows this call too.
				body += stBold.Render("o") + " allow read-only calls (read, glob, grep) for this run   "
			}
			body += stDim.Render("esc later")
		}
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
