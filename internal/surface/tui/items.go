package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ultra-dev/ultra/internal/event"
)

// Kind is what an item of the conversation shows.
type Kind int

const (
	KindUser      Kind = iota // what the person typed
	KindAssistant             // the model's text (markdown)
	KindThinking              // the model's thinking, dim, collapsed by default
	KindTool                  // a tool call with its arguments and output
	KindVerify                // the gate's verdict with the failing tests
	KindRefusal               // a refused call, with its layer and reason
	KindPhase                 // a phase or axis change
	KindInfo                  // ultra's own lines: commands' output, notes
	KindError                 // something went wrong
)

// Item is one entry of the conversation. Its rendered lines are cached
// per width, so a long conversation costs only what is on screen.
type Item struct {
	Kind   Kind
	Title  string // the first line: a tool's name and arguments, a verdict
	Body   string // text, output, a diff
	Diff   bool   // Body is a unified diff (edits)
	Failed bool   // a tool result that is an error
	Done   bool   // a tool call whose result arrived

	cacheW     int
	cacheOpen  bool
	cacheLines []string
}

// styles of the conversation.
var (
	stUser    = lipgloss.NewStyle().Bold(true).Foreground(colAccent)
	stDim     = lipgloss.NewStyle().Foreground(colDim)
	stFaint   = lipgloss.NewStyle().Faint(true)
	stBold    = lipgloss.NewStyle().Bold(true)
	stTool    = lipgloss.NewStyle().Bold(true).Foreground(colInfo)
	stOK      = lipgloss.NewStyle().Foreground(colSuccess)
	stBad     = lipgloss.NewStyle().Foreground(colError)
	stWarn    = lipgloss.NewStyle().Foreground(colWarning)
	stCode    = lipgloss.NewStyle().Foreground(colInfo)
	stHeading = lipgloss.NewStyle().Bold(true).Underline(true)
)

// outputLines is how many lines of a tool's output show while collapsed.
const outputLines = 3

// Lines renders the item at width; open shows collapsed parts (thinking,
// a tool's whole output).
func (it *Item) Lines(width int, open bool) []string {
	if it.cacheLines != nil && it.cacheW == width && it.cacheOpen == open {
		return it.cacheLines
	}
	it.cacheW, it.cacheOpen = width, open
	it.cacheLines = it.render(width, open)
	return it.cacheLines
}

// touch drops the cache after a change.
func (it *Item) touch() { it.cacheLines = nil }

func (it *Item) render(width int, open bool) []string {
	if width < 10 {
		width = 10
	}
	// Whatever reached an item (model text, a command's output, a file
	// name), the screen gets only what prints.
	it.Title, it.Body = printable(it.Title), untab(printable(it.Body))
	var out []string
	add := func(prefix string, s string, st *lipgloss.Style) {
		for _, l := range wrapHanging(s, width-ansi.StringWidth(prefix)) {
			if st != nil {
				l = st.Render(l)
			}
			out = append(out, prefix+l)
		}
	}
	switch it.Kind {
	case KindUser:
		for i, l := range wrap(it.Body, width-2) {
			p := "  "
			if i == 0 {
				p = stUser.Render("›") + " "
			}
			out = append(out, p+stBold.Render(l))
		}
	case KindAssistant:
		out = append(out, markdown(it.Body, width)...)
	case KindThinking:
		lines := strings.Split(strings.TrimSpace(it.Body), "\n")
		if !open {
			out = append(out, stFaint.Render(fmt.Sprintf("▸ thinking (%d lines, ctrl+t shows)", len(lines))))
			break
		}
		out = append(out, stFaint.Render("▾ thinking"))
		add("  ", it.Body, &stFaint)
	case KindTool:
		mark := stDim.Render("•")
		switch {
		case it.Done && it.Failed:
			mark = stBad.Render("✗")
		case it.Done:
			mark = stOK.Render("✓")
		}
		out = append(out, mark+" "+ansi.Truncate(stTool.Render(it.Title), width-2, "…"))
		body := strings.TrimRight(it.Body, "\n")
		if body == "" {
			break
		}
		lines := strings.Split(body, "\n")
		hidden := 0
		if !open && len(lines) > outputLines {
			hidden = len(lines) - outputLines
			lines = lines[:outputLines]
		}
		for _, l := range lines {
			st := stDim
			if it.Diff {
				switch {
				case strings.HasPrefix(l, "+"):
					st = stOK
				case strings.HasPrefix(l, "-"):
					st = stBad
				case strings.HasPrefix(l, "@@"):
					st = stCode
				}
			}
			out = append(out, "  "+st.Render(ansi.Truncate(l, width-2, "…")))
		}
		if hidden > 0 {
			out = append(out, "  "+stFaint.Render(fmt.Sprintf("… %d more lines (ctrl+o shows)", hidden)))
		}
	case KindVerify:
		st := stBad
		if !it.Failed {
			st = stOK
		}
		out = append(out, st.Render("▌ ")+ansi.Truncate(stBold.Render(it.Title), width-2, "…"))
		for _, l := range strings.Split(strings.TrimRight(it.Body, "\n"), "\n") {
			if l != "" {
				out = append(out, st.Render("▌ ")+ansi.Truncate(l, width-2, "…"))
			}
		}
	case KindRefusal:
		out = append(out, stBad.Render("⊘ refused ")+stWarn.Render(it.Title))
		add("  ", it.Body, nil)
	case KindPhase:
		out = append(out, stDim.Render("── "+ansi.Truncate(it.Title, width-4, "…")))
	case KindInfo:
		if it.Title != "" {
			out = append(out, stDim.Render(ansi.Truncate(it.Title, width, "…")))
		}
		add("", it.Body, nil)
	case KindError:
		add("", it.Title, &stBad)
		add("  ", it.Body, nil)
	}
	return append(out, "")
}

// untab makes tabs four spaces: the width a line is cut to is the width
// drawn.
func untab(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// wrap breaks s into lines of at most width cells.
func wrap(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(ansi.Wrap(s, width, " -"), "\n")
}

// wrapHanging breaks s into lines of at most width cells, each line of
// s on its own: a line that wraps goes on under its text, not at column
// 0 (under its second column when it has one, as a list of commands
// with their summaries does).
func wrapHanging(s string, width int) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		ind := hangIndent(l, width)
		if ind == 0 || ansi.StringWidth(l) <= width {
			out = append(out, wrapLine(l, width)...)
			continue
		}
		for i, w := range wrapLine(l[ind:], width-ind) {
			p := strings.Repeat(" ", ind)
			if i == 0 {
				p = l[:ind]
			}
			out = append(out, p+w)
		}
	}
	return out
}

// wrapLine is wrap of one line; an empty line stays a line.
func wrapLine(l string, width int) []string {
	if w := wrap(l, width); len(w) > 0 {
		return w
	}
	return []string{""}
}

// hangIndent is the byte offset where a line's wrapped rest goes on: after
// its first run of two or more spaces that follows text (the start of a
// second column), else after its leading spaces; 0 when that would leave
// less than half the width.
func hangIndent(l string, width int) int {
	lead := len(l) - len(strings.TrimLeft(l, " "))
	ind := lead
	if gap := strings.Index(l[lead:], "  "); gap > 0 {
		end := lead + gap
		for end < len(l) && l[end] == ' ' {
			end++
		}
		if end < len(l) {
			ind = end
		}
	}
	if ansi.StringWidth(l[:ind]) > width/2 {
		ind = lead
	}
	if ansi.StringWidth(l[:ind]) > width/2 {
		return 0
	}
	return ind
}

// markdown renders the model's text: headings, emphasis, inline code,
// fenced code, lists and quotes; the rest is wrapped text.
func markdown(s string, width int) []string {
	var out []string
	inCode := false
	for _, raw := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		t := strings.TrimSpace(raw)
		if strings.HasPrefix(t, "```") {
			inCode = !inCode
			if inCode {
				lang := strings.TrimPrefix(t, "```")
				out = append(out, stDim.Render("┌ "+lang))
			} else {
				out = append(out, stDim.Render("└"))
			}
			continue
		}
		if inCode {
			out = append(out, stDim.Render("│ ")+stCode.Render(ansi.Truncate(raw, width-2, "…")))
			continue
		}
		switch {
		case strings.HasPrefix(t, "#"):
			h := strings.TrimSpace(strings.TrimLeft(t, "#"))
			for _, l := range wrap(h, width) {
				out = append(out, stHeading.Render(l))
			}
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			for i, l := range wrap(inline(t[2:]), width-2) {
				p := "  "
				if i == 0 {
					p = "• "
				}
				out = append(out, p+l)
			}
		case strings.HasPrefix(t, "> "):
			for _, l := range wrap(inline(t[2:]), width-2) {
				out = append(out, stDim.Render("│ ")+l)
			}
		case t == "":
			out = append(out, "")
		default:
			out = append(out, wrap(inline(raw), width)...)
		}
	}
	return out
}

// inline styles **bold** and `code` spans.
func inline(s string) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, "*`")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "**"):
			if j := strings.Index(s[2:], "**"); j > 0 {
				b.WriteString(stBold.Render(s[2 : 2+j]))
				s = s[4+j:]
				continue
			}
		case s[0] == '`':
			if j := strings.IndexByte(s[1:], '`'); j > 0 {
				b.WriteString(stCode.Render(s[1 : 1+j]))
				s = s[2+j:]
				continue
			}
		}
		b.WriteString(s[:1])
		s = s[1:]
	}
	return b.String()
}

// callTitle is a tool call's first line: its name and the argument a
// person reads it by.
func callTitle(tool string, raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return tool + " " + event.OneLine(string(raw), 200)
	}
	if g, ok := m["goals"].([]any); ok {
		return fmt.Sprintf("%s: %d proposed", tool, len(g))
	}
	for _, k := range []string{"command", "file_path", "path", "pattern", "to", "prompt", "title"} {
		if v, ok := m[k]; ok {
			return tool + " " + event.OneLine(fmt.Sprint(v), 200)
		}
	}
	if len(m) == 0 {
		return tool
	}
	b, _ := json.Marshal(m)
	return tool + " " + event.OneLine(string(b), 200)
}

// editDiff is an edit or write call's change as a diff, "" for other
// tools.
func editDiff(tool string, raw json.RawMessage) string {
	var a struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Content   string `json:"content"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return ""
	}
	var b strings.Builder
	switch tool {
	case "edit":
		b.WriteString("@@\n")
		for _, l := range strings.Split(strings.TrimRight(a.OldString, "\n"), "\n") {
			b.WriteString("-" + l + "\n")
		}
		for _, l := range strings.Split(strings.TrimRight(a.NewString, "\n"), "\n") {
			b.WriteString("+" + l + "\n")
		}
	case "write":
		for _, l := range strings.Split(strings.TrimRight(a.Content, "\n"), "\n") {
			b.WriteString("+" + l + "\n")
		}
	default:
		return ""
	}
	return b.String()
}

// printable makes model text safe for the screen.
func printable(s string) string { return event.Printable(s) }
