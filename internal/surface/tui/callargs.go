package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
)

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
// the screen's size, and whether they are cut. A goals call shows as the
// plan it proposes (its goals, criteria and checks), not as JSON.
func (m *Model) callShown(tool string, args []byte) (string, bool) {
	if tool == "goals" {
		if plan, err := goal.ProposalText(args); err == nil {
			return planShown(plan, max(m.w-6, 20), m.convHeight()-5)
		}
	}
	return callArgs(args, max(m.w-6, 20), m.convHeight()-5, m.openTools)
}

// planShown is a proposed plan's text in at most room lines of width,
// and whether it is cut.
func planShown(plan string, width, room int) (string, bool) {
	var lines []string
	for _, l := range strings.Split(plan, "\n") {
		lines = append(lines, wrap(untab(printable(l)), width)...)
	}
	room = max(room, 2)
	cut := len(lines) > room
	if cut {
		lines = append(lines[:room-1], stWarn.Render(fmt.Sprintf("… %d more lines: a taller terminal (or ctrl+o) shows them", len(lines)-room+1)))
	}
	return strings.Join(lines, "\n") + "\n", cut
}
