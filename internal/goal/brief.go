package goal

import (
	"fmt"
	"regexp"
	"strings"
)

// Brief is a run's brief (.ultra/runs/<run-id>/brief.md) as read: a markdown text with a
// "# Title", free text, and optional sections "## Goals" (each list item a
// goal hint), "## Constraints" (durable constraints), "## Definition of
// done" and "## Open questions". Items are kept as written, without their
// list marker, so checkboxes ("[x] ...") and strike-through stay visible.
type Brief struct {
	Title string
	// Text is everything outside the title and the four known sections,
	// other sections included.
	Text          string
	Goals         []string
	Constraints   []string
	Done          []string
	OpenQuestions []string

	// lines holds, per known section, the line number of each item.
	lines map[briefSection][]int
}

// briefSection is one of the known sections of a brief.
type briefSection int

const (
	noSection briefSection = iota
	goalsSection
	constraintsSection
	doneSection
	questionsSection
)

// sectionNames are the headings of the known sections, as Undecided names
// them.
var sectionNames = map[briefSection]string{
	goalsSection:       "Goals",
	constraintsSection: "Constraints",
	doneSection:        "Definition of done",
	questionsSection:   "Open questions",
}

// sectionOf is the known section a "## " heading opens, or noSection.
func sectionOf(heading string) briefSection {
	h := strings.ToLower(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(heading), ":")))
	h = strings.Join(strings.Fields(h), " ")
	for s, name := range sectionNames {
		if h == strings.ToLower(name) {
			return s
		}
	}
	return noSection
}

// items is the list of section s of the brief.
func (b *Brief) items(s briefSection) *[]string {
	switch s {
	case goalsSection:
		return &b.Goals
	case constraintsSection:
		return &b.Constraints
	case doneSection:
		return &b.Done
	case questionsSection:
		return &b.OpenQuestions
	}
	return nil
}

var (
	listMarker = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,9}[.)])(?:\s+|$)`)
	headingRE  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	fenceRE    = regexp.MustCompile("^\\s*(```|~~~)")
)

// ParseBrief reads a markdown brief. The title is the first "# " heading;
// a "## " heading of a known section (case and a trailing colon do not
// matter) collects that section's items until the next "#" or "##"
// heading: each list item (-, *, +, 1.) is one item, lines that follow an
// item without a blank line continue it, and a paragraph that is not a
// list item is one item. Fenced code is never an item or heading.
func ParseBrief(text string) Brief {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	b := Brief{lines: map[briefSection][]int{}}
	var free []string
	section := noSection
	open := false // the last line continued an item
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		fence := fenceRE.MatchString(line)
		if fenced || fence {
			// code: never a heading or an item of its own
			if fence {
				fenced = !fenced
			}
			if section == noSection {
				free = append(free, line)
			} else if items := b.items(section); len(*items) > 0 {
				last := &(*items)[len(*items)-1]
				*last = strings.TrimSpace(*last + " " + strings.TrimSpace(line))
			}
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			open = false
			switch level := len(m[1]); {
			case level == 1 && b.Title == "" && section == noSection:
				b.Title = m[2]
				continue
			case level <= 2:
				section = noSection
				if level == 2 {
					section = sectionOf(m[2])
				}
				if section != noSection {
					continue
				}
			case section != noSection:
				continue // a sub-heading inside a known section
			}
		}
		if section == noSection {
			free = append(free, line)
			continue
		}
		items := b.items(section)
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			open = false
		case listMarker.MatchString(line):
			*items = append(*items, strings.TrimSpace(listMarker.ReplaceAllString(line, "")))
			b.lines[section] = append(b.lines[section], n)
			open = true
		case open:
			last := &(*items)[len(*items)-1]
			*last = strings.TrimSpace(*last + " " + trimmed)
		default:
			*items = append(*items, trimmed)
			b.lines[section] = append(b.lines[section], n)
			open = true
		}
	}
	b.Title = strings.TrimSpace(b.Title)
	b.Text = strings.TrimSpace(strings.Join(free, "\n"))
	return b
}

var (
	// TODO counts in capitals, or in any case when a colon follows: "a
	// todo list" is a thing to build, not a placeholder.
	undecidedWord = regexp.MustCompile(`(?i:\bTBD\b)|\bTODO\b|(?i:\btodo\s*:)|\?\?\?|(?i:\bto\s+be\s+decided\b)`)
	resolvedBox   = regexp.MustCompile(`^\[[xX]\]`)
	openBox       = regexp.MustCompile(`^\[ \]\s*`)
)

// Undecided lists what must be decided before a run starts, each item
// naming its section and line ("Open questions, line 12: which
// database?"): every open question not marked resolved ("[x] ..." or
// struck through "~~...~~"), and every item of Goals, Constraints or
// Definition of done that holds TBD (any case) or TODO (in capitals, or
// any case before a colon) as whole words, "???" or "to be decided" (any
// case). An empty brief gives one item, "the brief is
// empty".
func (b Brief) Undecided() []string {
	if b.empty() {
		return []string{"the brief is empty"}
	}
	var out []string
	for i, q := range b.OpenQuestions {
		q = strings.TrimSpace(q)
		if q == "" || resolvedBox.MatchString(q) || struck(q) {
			continue
		}
		out = append(out, b.where(questionsSection, i)+": "+openBox.ReplaceAllString(q, ""))
	}
	for _, s := range []briefSection{goalsSection, constraintsSection, doneSection} {
		for i, item := range *b.items(s) {
			if undecidedWord.MatchString(item) {
				out = append(out, b.where(s, i)+": "+item)
			}
		}
	}
	return out
}

// empty reports a brief with nothing in it.
func (b Brief) empty() bool {
	return strings.TrimSpace(b.Title) == "" && strings.TrimSpace(b.Text) == "" &&
		len(b.Goals)+len(b.Constraints)+len(b.Done)+len(b.OpenQuestions) == 0
}

// struck reports an item that starts with struck-through text.
func struck(s string) bool {
	return strings.HasPrefix(s, "~~") && strings.Contains(s[2:], "~~")
}

// where names item i of section s: its line when the brief was parsed,
// else its place in the list.
func (b Brief) where(s briefSection, i int) string {
	if ls := b.lines[s]; i < len(ls) {
		return fmt.Sprintf("%s, line %d", sectionNames[s], ls[i])
	}
	return fmt.Sprintf("%s, item %d", sectionNames[s], i+1)
}

// maxTitle is the longest title TaskBrief takes from a task, in runes.
const maxTitle = 72

// TaskBrief makes a one-goal brief of a plain task: its first line is the
// title (cut to 72 characters), the whole task is the text and the one
// goal hint.
func TaskBrief(task string) Brief {
	task = strings.TrimSpace(strings.ReplaceAll(task, "\r\n", "\n"))
	if task == "" {
		return Brief{}
	}
	title, _, _ := strings.Cut(task, "\n")
	return Brief{
		Title: clip(strings.TrimSpace(title), maxTitle),
		Text:  task,
		Goals: []string{strings.Join(strings.Fields(task), " ")},
	}
}
