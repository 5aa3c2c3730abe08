package tui

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
)

// The palette's roles; each axis value takes one.
var (
	colDim     = lipgloss.Color("8")
	colAccent  = lipgloss.Color("5")
	colSuccess = lipgloss.Color("2")
	colWarning = lipgloss.Color("3")
	colError   = lipgloss.Color("1")
	colInfo    = lipgloss.Color("6")
)

// valueColor is the colour of an axis value: chat dim, plan accent,
// build success, review warning, repair error, research info; manual dim,
// assisted warning, autonomous success; restricted success, normal dim,
// trusted warning, unrestricted error. Model modes are plain.
var valueColor = map[string]color.Color{
	"chat": colDim, "plan": colAccent, "build": colSuccess, "review": colWarning, "repair": colError, "research": colInfo,
	"manual": colDim, "assisted": colWarning, "autonomous": colSuccess,
	"restricted": colSuccess, "normal": colDim, "trusted": colWarning, "unrestricted": colError,
}

// CompactBelow is the width under which the badge is compact.
const CompactBelow = 80

// badgeParts are the badge's four cells, plain: the full labels, or the
// compact initials ([B][A][T][S]) under CompactBelow columns, where a
// repair or review mode keeps its full label (a person must not miss it).
func badgeParts(a axes.Axes, width int) []string {
	vals := []string{a.Mode, a.Control, a.Permission, a.ModelMode}
	if width >= CompactBelow {
		return vals
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		if i == 0 && (v == "repair" || v == "review") {
			out[i] = "[" + v + "]"
			continue
		}
		out[i] = "[" + initial(v) + "]"
	}
	return out
}

func initial(v string) string {
	if v == "" {
		return "?"
	}
	return strings.ToUpper(v[:1])
}

// Badge renders the axes as the header shows them: "build | autonomous |
// trusted | smart" in full, "[B][A][T][S]" compact. pulse dims the
// autonomous cell on alternate beats (it pulses slowly).
func Badge(a axes.Axes, width int, pulse bool) string {
	parts := badgeParts(a, width)
	vals := []string{a.Mode, a.Control, a.Permission, a.ModelMode}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 && width >= CompactBelow {
			b.WriteString(lipgloss.NewStyle().Foreground(colDim).Render(" | "))
		}
		st := lipgloss.NewStyle().Bold(true)
		if c, ok := valueColor[vals[i]]; ok {
			st = st.Foreground(c)
		}
		if vals[i] == "autonomous" && pulse {
			st = st.Bold(false).Faint(true)
		}
		b.WriteString(st.Render(p))
	}
	return b.String()
}

// BadgePlain is the badge without styles, as a person reads it.
func BadgePlain(a axes.Axes, width int) string {
	sep := ""
	if width >= CompactBelow {
		sep = " | "
	}
	return strings.Join(badgeParts(a, width), sep)
}

// Title is the terminal's title for the axes in project:
// "ultra[build|A|trusted|smart] project".
func Title(a axes.Axes, project string) string {
	t := "ultra[" + a.Mode + "|" + initial(a.Control) + "|" + a.Permission + "|" + a.ModelMode + "]"
	if project != "" {
		t += " " + event.Printable(project)
	}
	return t
}
