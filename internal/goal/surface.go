package goal

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Surface is what a criterion's scenario exercises, as a user meets the
// program there. Each is proven only through the channels that reach it
// (SurfaceChannels): a web page through a browser, not through curl.
type Surface string

const (
	// SurfaceCLI is a command's output and exit status.
	SurfaceCLI Surface = "cli"
	// SurfaceData is what a program leaves in files, a database or a
	// configuration, read back by a command.
	SurfaceData Surface = "data"
	// SurfaceHTTP is an endpoint, as a client calls it.
	SurfaceHTTP Surface = "http"
	// SurfaceTerminal is the screen of a program in a terminal.
	SurfaceTerminal Surface = "terminal"
	// SurfaceWeb is a page, in a browser.
	SurfaceWeb Surface = "web"
	// SurfaceDesktop is a window of a GUI program.
	SurfaceDesktop Surface = "desktop"
)

// Surfaces lists every surface.
var Surfaces = []Surface{SurfaceCLI, SurfaceData, SurfaceHTTP, SurfaceTerminal, SurfaceWeb, SurfaceDesktop}

// SurfaceChannels are the channels that prove each surface: command
// output proves only the cli and data surfaces; http, terminal, web and
// desktop are proven only through the http, tmux, browser and desktop
// channels (a command line program may also be driven in tmux).
var SurfaceChannels = map[Surface][]Channel{
	SurfaceCLI:      {ChannelCommand, ChannelTmux},
	SurfaceData:     {ChannelCommand},
	SurfaceHTTP:     {ChannelHTTP},
	SurfaceTerminal: {ChannelTmux},
	SurfaceWeb:      {ChannelBrowser},
	SurfaceDesktop:  {ChannelDesktop},
}

// UserFacing reports a surface a person meets through something other
// than a command's output: an endpoint, a terminal screen, a page, a
// window.
func (s Surface) UserFacing() bool {
	return s == SurfaceHTTP || s == SurfaceTerminal || s == SurfaceWeb || s == SurfaceDesktop
}

// DefaultSurface is the surface of a criterion recorded before criteria
// named one: its channel's.
func DefaultSurface(ch Channel) Surface {
	switch ch {
	case ChannelHTTP:
		return SurfaceHTTP
	case ChannelTmux:
		return SurfaceTerminal
	case ChannelBrowser:
		return SurfaceWeb
	case ChannelDesktop:
		return SurfaceDesktop
	}
	return SurfaceCLI
}

// surface is the surface c names, or its channel's.
func (c ProposedCriterion) surface() Surface {
	if c.Surface != "" {
		return c.Surface
	}
	return DefaultSurface(c.Channel)
}

// quotedSurfaces lists the surfaces for a message.
func quotedSurfaces() string {
	names := make([]string, len(Surfaces))
	for i, s := range Surfaces {
		names[i] = strconv.Quote(string(s))
	}
	return strings.Join(names, ", ")
}

// SurfaceOf is the surface c exercises (DefaultSurface for a criterion
// recorded before criteria named one).
func (c Criterion) SurfaceOf() Surface {
	if c.Surface != "" {
		return c.Surface
	}
	return DefaultSurface(c.Channel)
}

// surfaceMismatch says why channel ch cannot prove surface s, or "".
func surfaceMismatch(s Surface, ch Channel) string {
	chans := SurfaceChannels[s]
	if slices.Contains(chans, ch) {
		return ""
	}
	names := make([]string, len(chans))
	for i, c := range chans {
		names[i] = string(c)
	}
	why := fmt.Sprintf("a %s criterion is proven only through the %s channel", s, strings.Join(names, " or "))
	switch s {
	case SurfaceHTTP:
		why += " (ultra starts the server and sends the request itself)"
	case SurfaceTerminal:
		why += " (ultra runs the program in a terminal and reads its screen)"
	case SurfaceWeb:
		why += " (ultra opens the page in a real browser)"
	case SurfaceDesktop:
		why += " (ultra starts the program on a private screen and reads it)"
	}
	if ch == ChannelCommand {
		why += "; command output (curl | grep, a unit test, a dump) proves only the cli and data surfaces"
	} else {
		why += fmt.Sprintf("; the %s channel proves the %s surface", ch, DefaultSurface(ch))
	}
	return why
}

// Described is a user-facing surface a text describes, with the words
// that say so.
type Described struct {
	Surface Surface
	Words   string
}

// describing are the phrases that describe each user-facing surface, in
// the order DescribedSurfaces reports them.
var describing = []struct {
	s  Surface
	re *regexp.Regexp
}{
	{SurfaceHTTP, regexp.MustCompile(`(?i)\b(?:(?:https?|rest(?:ful)?|json|graphql|web) (?:api|endpoint|server|service|route)s?|endpoints?|api (?:route|endpoint)s?|http status(?: codes?)?)\b|\b(?:GET|POST|PUT|PATCH|DELETE) /`)},
	{SurfaceWeb, regexp.MustCompile(`(?i)\b(?:web ?(?:page|site|app|application|ui|interface|form|front-?end)s?|(?:html|landing|login|log-in|sign-?up|sign-?in|settings|home|index|admin|dashboard|profile|checkout|search|results) page|in (?:a|the) (?:web )?browser|front-?end|single-page app(?:lication)?|the page (?:shows|displays|lists|renders)|(?:button|form|link)s? on the page)\b`)},
	{SurfaceTerminal, regexp.MustCompile(`(?i)\b(?:tui|terminal (?:ui|user interface|app|application|program|screen)|text user interface|full-?screen (?:terminal )?(?:app|application|program|ui|mode)|n?curses|interactive (?:prompt|menu))\b`)},
	{SurfaceDesktop, regexp.MustCompile(`(?i)\b(?:gui|graphical (?:user )?interface|desktop (?:app|application|program|window|ui)|tkinter|tk window|gtk|x11 (?:app|application|program|window)|(?:main|application|app|dialog|popup|pop-up|settings|preferences) window|dialog box|opens? a window|window (?:shows|displays|opens))\b`)},
}

// DescribedSurfaces are the user-facing surfaces text describes (an
// endpoint, a page, a terminal program's screen, a window), each once,
// with the first words found.
func DescribedSurfaces(text string) []Described {
	var out []Described
	for _, d := range describing {
		if m := d.re.FindString(text); m != "" {
			out = append(out, Described{d.s, m})
		}
	}
	return out
}

// describedAs is how a problem names what a text describes.
func describedAs(d Described) string {
	what := map[Surface]string{SurfaceHTTP: "an http endpoint", SurfaceWeb: "a web page",
		SurfaceTerminal: "a terminal program's screen", SurfaceDesktop: "a window of a GUI program"}[d.Surface]
	return fmt.Sprintf("%s (%q)", what, d.Words)
}

// addOne says what a criterion on surface s looks like.
func addOne(s Surface) string {
	ch := SurfaceChannels[s][0]
	return fmt.Sprintf("add one with surface %q and channel %q; command output (curl | grep, a unit test, a dump) proves only the cli and data surfaces", s, ch)
}

// goalSurfaceProblems are the user-facing surfaces goal g's title or
// objective describes and none of its criteria exercises.
func goalSurfaceProblems(where string, g ProposedGoal) []Problem {
	has := map[Surface]bool{}
	for _, c := range g.Criteria {
		has[c.surface()] = true
	}
	var ps []Problem
	for _, d := range DescribedSurfaces(g.Title + "\n" + g.Objective) {
		if !has[d.Surface] {
			ps = append(ps, Problem{where, fmt.Sprintf("the goal describes %s, but none of its criteria exercises the %s surface: %s", describedAs(d), d.Surface, addOne(d.Surface))})
		}
	}
	return ps
}

// BriefSurfaceProblems are the user-facing surfaces the brief (or the
// task) describes and no criterion of any goal exercises.
func BriefSurfaceProblems(goals []ProposedGoal, brief string) []Problem {
	has := map[Surface]bool{}
	for _, g := range goals {
		for _, c := range g.Criteria {
			has[c.surface()] = true
		}
	}
	var ps []Problem
	for _, d := range DescribedSurfaces(brief) {
		if !has[d.Surface] {
			ps = append(ps, Problem{"goals", fmt.Sprintf("the brief describes %s, but no criterion of any goal exercises the %s surface: %s", describedAs(d), d.Surface, addOne(d.Surface))})
		}
	}
	return ps
}
