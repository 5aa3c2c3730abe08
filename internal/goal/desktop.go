package goal

import (
	"fmt"
	"regexp"
	"strings"
)

// Desktop screens: the default size and the bounds of width and height
// (pixels).
const (
	DesktopWidth  = 1024
	DesktopHeight = 768
	DesktopMin    = 200
	DesktopMax    = 4096
)

// desktopKey is one xdotool key: key names joined by "+" (Return, Tab,
// ctrl+s, alt+F4, a).
var desktopKey = regexp.MustCompile(`^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$`)

// DesktopSize is a desktop check's screen size, its defaults applied.
func DesktopSize(c Check) (w, h int) {
	w, h = c.Width, c.Height
	if w == 0 {
		w = DesktopWidth
	}
	if h == 0 {
		h = DesktopHeight
	}
	return w, h
}

// DesktopInput reports that a desktop step gives the program input (a
// click, typed text, keys) rather than reading the screen.
func DesktopInput(s Step) bool {
	return s.Click != "" || s.ClickAt != nil || s.Type != nil || s.Key != ""
}

// validateDesktop checks a desktop check's fields (the check package runs
// it again before a check starts: DesktopProblems).
func validateDesktop(where string, c Check) []Problem {
	ps := DesktopProblems(c)
	for i := range ps {
		if ps[i].Where == "" {
			ps[i].Where = where
		} else {
			ps[i].Where = join(where, ps[i].Where)
		}
	}
	for i, s := range c.Steps {
		ps = append(ps, foreignStepFields(join(where, fmt.Sprintf("steps[%d]", i)), ChannelDesktop, s)...)
	}
	return ps
}

// DesktopProblems lists what is wrong with a desktop check, each at its
// field relative to the check: start is shell, the screen's size is in
// bounds, each step has exactly one action, a click names text, a
// click_at is on the screen, type has text and no selector, a key names
// keys, the patterns compile, and something is asserted (expect_text or
// a wait_text step).
func DesktopProblems(c Check) []Problem {
	var ps []Problem
	add := func(field, what string) { ps = append(ps, Problem{field, what}) }
	if strings.TrimSpace(c.Start) == "" {
		add("start", "is required: the command that starts the program on the check's screen")
	} else if _, err := parseShell(c.Start); err != nil {
		add("start", "not valid shell: "+err.Error())
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"width", c.Width}, {"height", c.Height}} {
		if d.v != 0 && (d.v < DesktopMin || d.v > DesktopMax) {
			add(d.name, fmt.Sprintf("must be 0 (the default, %dx%d) or %d to %d pixels, got %d", DesktopWidth, DesktopHeight, DesktopMin, DesktopMax, d.v))
		}
	}
	w, h := DesktopSize(c)
	pattern := func(field, re string) {
		if _, err := regexp.Compile(re); err != nil {
			add(field, "not a valid Go regular expression: "+err.Error())
		}
	}
	asserts := 0
	for i, s := range c.Steps {
		sw := fmt.Sprintf("steps[%d]", i)
		actions := 0
		if s.Click != "" {
			actions++
			if strings.TrimSpace(s.Click) == "" {
				add(sw+".click", "must name the text to click, as the screen shows it")
			}
		}
		if s.ClickAt != nil {
			actions++
			if s.ClickAt.X < 0 || s.ClickAt.Y < 0 || s.ClickAt.X >= w || s.ClickAt.Y >= h {
				add(sw+".click_at", fmt.Sprintf("(%d, %d) is off the %dx%d screen", s.ClickAt.X, s.ClickAt.Y, w, h))
			}
		}
		if s.Type != nil {
			actions++
			if s.Type.Selector != "" {
				add(sw+".type.selector", "a desktop has no selectors: type goes to the focused window (click it first)")
			}
			if s.Type.Text == "" {
				add(sw+".type.text", "is required: the text to type")
			}
		}
		if s.Key != "" {
			actions++
			for _, k := range strings.Fields(s.Key) {
				if !desktopKey.MatchString(k) {
					add(sw+".key", fmt.Sprintf("%q is not a key: use xdotool key names joined by +, space-separated (Return, Tab, ctrl+s)", k))
					break
				}
			}
		}
		if s.WaitText != "" {
			actions++
			asserts++
			pattern(sw+".wait_text", s.WaitText)
		}
		if s.Screenshot {
			actions++
		}
		if actions != 1 {
			add(sw, fmt.Sprintf("must have exactly one action (click, click_at, type, key, wait_text or screenshot), got %d", actions))
		}
	}
	if c.ExpectText != "" {
		asserts++
		pattern("expect_text", c.ExpectText)
	}
	if asserts == 0 {
		add("", "needs at least one assertion: expect_text or a wait_text step")
	}
	return ps
}
