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
// the order DescribedSurfaces reports them. They name something the
// program serves or shows (a route, a page, a terminal program, a
// window), not a client of one or a word that only looks like it ("the
// interval endpoints", "the JSON API response", "a --no-gui flag"): a
// phrase missed is left to the final reviewer, a phrase matched wrongly
// refuses an honest plan.
var describing = []struct {
	s  Surface
	re []*regexp.Regexp
}{
	{SurfaceHTTP, []*regexp.Regexp{
		regexp.MustCompile(`\b(?:GET|POST|PUT|PATCH|DELETE|HEAD) /(?:[A-Za-z0-9_{:.-]|\s|$)`),
		regexp.MustCompile(`(?i)(?:^|\s)/[\w./{}:-]* (?:endpoint|route|handler)s?\b`),
		regexp.MustCompile(`(?i)\b(?:http|rest(?:ful)?|web|json) (?:server|service|endpoint)s?\b`),
		regexp.MustCompile(`(?i)\brest(?:ful)? api\b`),
		regexp.MustCompile(`(?i)\b(?:an?|the|new|this|that) (?:api |http )?endpoint\b`),
	}},
	{SurfaceWeb, []*regexp.Regexp{
		regexp.MustCompile(`(?i)\bweb ?(?:page|site|app|application|ui|interface|form)s?\b`),
		regexp.MustCompile(`(?i)\b(?:html|landing|login|log-in|sign-?up|sign-?in|settings|admin|dashboard|profile|checkout|contact|about|404|error) page\b`),
		regexp.MustCompile(`(?i)\bhomepage\b`),
		regexp.MustCompile(`(?i)\b(?:the|a|this|that) page (?:shows|displays|lists|renders|should|must|has|contains)\b`),
		regexp.MustCompile(`(?i)\b(?:button|form|link|field)s? on the page\b`),
		regexp.MustCompile(`(?i)\bsingle-page app(?:lication)?\b`),
	}},
	{SurfaceTerminal, []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(?:tui|text user interface)\b`),
		regexp.MustCompile(`(?i)\bterminal (?:ui|user interface|app|application|screen)\b`),
		regexp.MustCompile(`(?i)\bfull-?screen (?:terminal )?(?:app|application|program|ui|mode)\b`),
		regexp.MustCompile(`(?i)\bn?curses (?:app|application|program|ui|interface|screen)\b`),
		regexp.MustCompile(`(?i)\binteractive (?:prompt|menu)\b`),
	}},
	{SurfaceDesktop, []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(?:gui|graphical (?:user )?interface)\b`),
		regexp.MustCompile(`(?i)\bdesktop (?:app|application|program|window|ui)\b`),
		regexp.MustCompile(`(?i)\b(?:tkinter|tk|gtk|qt) (?:app|application|window|program|gui)\b`),
		regexp.MustCompile(`(?i)\b(?:main|application|app|dialog|popup|pop-up|settings|preferences) window (?:shows|displays|opens|lists|has|with)\b`),
		regexp.MustCompile(`(?i)\bdialog box\b|\bopens? a (?:new )?window\b`),
	}},
}

// negated says that a sentence does not ask for what it names ("do not
// change the web UI", "no new endpoints", "without a GUI").
var negated = regexp.MustCompile(`(?i)\b(?:not|no|never|without|don't|doesn't|won't|mustn't|shouldn't|out of scope|non-goals?|excluding|except)\b`)

// notAsked is a heading that starts what a brief does not ask for.
var notAsked = regexp.MustCompile(`(?i)^#+\s.*\b(?:non-goals?|out of scope|not in scope|not included|won't do)\b`)

// sentenceEnd ends a sentence.
var sentenceEnd = regexp.MustCompile(`[.!?;]\s+`)

// sentences splits text into the sentences that ask for something: what
// follows a heading of what is not asked for (up to the next heading) and
// negated sentences are left out.
func sentences(text string) []string {
	var out []string
	skip := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			skip = notAsked.MatchString(t)
			continue
		}
		if skip {
			continue
		}
		for _, s := range sentenceEnd.Split(t, -1) {
			if s != "" && !negated.MatchString(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// DescribedSurfaces are the user-facing surfaces text describes (an
// endpoint, a page, a terminal program's screen, a window), each once,
// with the first words found; sentences that say what is not asked for
// are left out.
func DescribedSurfaces(text string) []Described {
	ss := sentences(text)
	var out []Described
	for _, d := range describing {
	find:
		for _, s := range ss {
			for _, re := range d.re {
				for _, loc := range re.FindAllStringIndex(s, -1) {
					if m := strings.TrimSpace(s[loc[0]:loc[1]]); !hyphenedAway(s, loc) {
						out = append(out, Described{d.s, m})
						break find
					}
				}
			}
		}
	}
	return out
}

// hyphenedAway says that the words at loc in s are part of a compound
// that says the opposite ("TUI-free", "no-gui").
func hyphenedAway(s string, loc []int) bool {
	after := strings.ToLower(s[loc[1]:])
	before := strings.ToLower(s[:loc[0]])
	return strings.HasPrefix(after, "-free") || strings.HasPrefix(after, "-less") || strings.HasSuffix(before, "no-") || strings.HasSuffix(before, "non-")
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

// proven adds to has the surfaces g's criteria prove: those of the
// criteria that show the change (happy, edge, adversarial: they fail
// before it and pass after), or of any criterion of a refactor, whose
// criteria all pass before and after. A regression check passes on the
// code as it was, so it proves nothing the goal adds (a stock server's
// directory listing in a browser is not the page the goal asks for).
func proven(has map[Surface]bool, g ProposedGoal) {
	for _, c := range g.Criteria {
		if g.Refactor || c.UserModel != Regression {
			has[c.surface()] = true
		}
	}
}

// showing is how a problem names the criteria that prove a surface.
const showing = "criteria that show the change (happy, edge or adversarial: they fail before it and pass after)"

// goalSurfaceProblems are the user-facing surfaces goal g's title or
// objective describes and none of its criteria proves.
func goalSurfaceProblems(where string, g ProposedGoal) []Problem {
	has := map[Surface]bool{}
	proven(has, g)
	var ps []Problem
	for _, d := range DescribedSurfaces(g.Title + "\n" + g.Objective) {
		if !has[d.Surface] {
			ps = append(ps, Problem{where, fmt.Sprintf("the goal describes %s, but none of its %s exercises the %s surface: %s", describedAs(d), showing, d.Surface, addOne(d.Surface))})
		}
	}
	return ps
}

// BriefSurfaceProblems are the user-facing surfaces the brief (or the
// task) describes and no criterion of any goal proves.
func BriefSurfaceProblems(goals []ProposedGoal, brief string) []Problem {
	has := map[Surface]bool{}
	for _, g := range goals {
		proven(has, g)
	}
	var ps []Problem
	for _, d := range DescribedSurfaces(brief) {
		if !has[d.Surface] {
			ps = append(ps, Problem{"goals", fmt.Sprintf("the brief describes %s, but none of the %s of any goal exercises the %s surface: %s", describedAs(d), showing, d.Surface, addOne(d.Surface))})
		}
	}
	return ps
}

// standInStart finds, in what a check starts, a test runner or an HTTP
// client: something other than the program a user meets.
var standInStart = regexp.MustCompile(`(?:^|[;&|()\s])(go test|pytest|python3? -m (?:pytest|unittest)|(?:npm|yarn|pnpm) (?:run )?test|cargo test|make (?:test|check)|jest|vitest|mvn test|gradle test|ctest|curl|wget)\b`)

// shells are programs whose screen is a prompt for commands.
var shells = []string{"sh", "bash", "zsh", "dash", "ksh", "fish", "busybox"}

// standIn says why a user-facing criterion's check starts a stand-in for
// the program it should show (a test runner, curl, a shell to type
// commands into), or "".
func standIn(s Surface, c Check) string {
	if !s.UserFacing() || c.Start == "" {
		return ""
	}
	if m := standInStart.FindStringSubmatch(c.Start); m != nil {
		return fmt.Sprintf("a %s criterion starts the program a user meets, not %q: what a test runner or an HTTP client prints proves only the cli surface", s, m[1])
	}
	if s == SurfaceTerminal {
		first := ""
		for _, f := range strings.Fields(c.Start) {
			if !strings.Contains(f, "=") {
				first = f
				break
			}
		}
		if i := strings.LastIndex(first, "/"); i >= 0 {
			first = first[i+1:]
		}
		if slices.Contains(shells, first) {
			return fmt.Sprintf("a terminal criterion starts the program a user meets, not a shell (%s) to type commands into", first)
		}
	}
	return ""
}
