package goal

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// unrelatedText is a string no real assertion expects: a pattern that
// matches both it and the empty string matches everything.
const unrelatedText = "q7#Zx~\x01ю%"

// MatchesEverything reports that pattern re matches any text: it matches
// the empty string and an unrelated string (.*, ^, $, (?s).*, .?, a*).
// An invalid pattern matches nothing.
func MatchesEverything(re string) bool {
	r, err := regexp.Compile(re)
	if err != nil {
		return false
	}
	return r.MatchString("") && r.MatchString(unrelatedText)
}

// pageSelectors are CSS selectors every page has.
var pageSelectors = []string{"*", "html", "body", "head", ":root"}

// Trivial says why check c of channel ch, or one of its assertions,
// cannot fail, in words the planner can act on; "" when it can fail.
// It refuses:
//   - run or start made only of commands that exercise nothing (true, :,
//     exit 0, echo, printf, cat <<EOF, sleep, cd, assignments), in any
//     list or pipeline;
//   - run or start whose every real command only asks for --help,
//     --version or --dry-run;
//   - a check with no assertion;
//   - a pattern that matches everything (.*, ^, $, (?s).*, .?);
//   - an expect_stdout or expect_stderr that matches text the run prints
//     itself with echo, printf or cat <<EOF (the check prints its own
//     assertion);
//   - a command check whose only assertion is expect_exit 0 while the
//     run always exits 0 (it ends with || true, ; exit 0, | cat …);
//   - a tmux expect that matches the keys typed so far (the terminal
//     shows typed text whatever the program does);
//   - a browser expect_selector every page has (body, html, *);
//   - a browser or desktop expect_text or wait_text that matches any text.
//
// An expect_status alone is a real assertion. A match-everything value in
// expect_json still asserts that the path exists, so it is accepted.
// Patterns that do not compile are left to Validate.
func Trivial(ch Channel, c Check) string {
	switch ch {
	case ChannelCommand:
		return trivialCommand(c)
	case ChannelHTTP:
		if why := trivialStart(c.Start); why != "" {
			return why
		}
		if c.ExpectStatus == 0 && c.ExpectBody == "" && len(c.ExpectJSON) == 0 {
			return "it asserts nothing: add expect_status, expect_body or expect_json"
		}
		return everything("expect_body", c.ExpectBody)
	case ChannelTmux:
		return trivialTmux(c)
	case ChannelBrowser, ChannelDesktop:
		return trivialBrowser(c)
	}
	return ""
}

// everything explains that the pattern in field matches any text, or "".
func everything(field, re string) string {
	if re != "" && MatchesEverything(re) {
		return fmt.Sprintf("%s %q matches any text: expect something only a working program shows", field, re)
	}
	return ""
}

// exercise explains why shell text src (the field run or start) exercises
// nothing, or returns "".
func exercise(field, src string) string {
	s, ok := readScript(src)
	if !ok {
		return "" // Validate reports the syntax
	}
	if s.onlyInert() {
		return fmt.Sprintf("%s only prints fixed text or does nothing (true, exit 0, echo, printf, cat <<EOF); it never runs the program under test", field)
	}
	if flag := s.onlyHelp(); flag != "" {
		return fmt.Sprintf("%s only asks the program for %s; it does not exercise what the goal builds", field, flag)
	}
	return ""
}

func trivialStart(start string) string {
	if strings.TrimSpace(start) == "" {
		return ""
	}
	return exercise("start", start)
}

func trivialCommand(c Check) string {
	if why := exercise("run", c.Run); why != "" {
		return why
	}
	if c.ExpectExit == nil && c.ExpectStdout == "" && c.ExpectStderr == "" {
		return "it asserts nothing: add expect_exit, expect_stdout or expect_stderr"
	}
	for _, f := range []struct{ name, re string }{{"expect_stdout", c.ExpectStdout}, {"expect_stderr", c.ExpectStderr}} {
		if why := everything(f.name, f.re); why != "" {
			return why
		}
	}
	s, ok := readScript(c.Run)
	if !ok {
		return ""
	}
	texts := s.printed()
	for _, f := range []struct{ name, re string }{{"expect_stdout", c.ExpectStdout}, {"expect_stderr", c.ExpectStderr}} {
		r, err := regexp.Compile(f.re)
		if f.re == "" || err != nil {
			continue
		}
		for _, t := range texts {
			if r.MatchString(t) {
				return fmt.Sprintf("%s %q matches text the run prints itself (%q): the check prints its own assertion; match what the program prints, or assert its exit status", f.name, f.re, clip(strings.ReplaceAll(t, unknownText, "…"), 60))
			}
		}
	}
	if c.ExpectExit != nil && *c.ExpectExit == 0 && c.ExpectStdout == "" && c.ExpectStderr == "" && s.alwaysZero() {
		return "the only assertion is expect_exit 0 but the run always exits 0 (it ends with || true, ; exit 0, an echo, or a pipe into a command that cannot fail): drop the masking, add set -o pipefail, or assert on output"
	}
	return ""
}

func trivialTmux(c Check) string {
	if why := trivialStart(c.Start); why != "" {
		return why
	}
	typed := ""
	expects := 0
	for i, st := range c.Steps {
		if st.Keys != "" {
			typed += typedText(st.Keys)
		}
		if st.Expect == "" {
			continue
		}
		expects++
		field := fmt.Sprintf("steps[%d].expect", i)
		if why := everything(field, st.Expect); why != "" {
			return why
		}
		r, err := regexp.Compile(st.Expect)
		if err == nil && typed != "" && r.MatchString(typed) {
			return fmt.Sprintf("%s %q matches the keys typed so far (%q): the terminal shows typed text whatever the program does; expect what the program answers", field, st.Expect, clip(typed, 60))
		}
	}
	if expects == 0 {
		return "it asserts nothing: give at least one step an expect"
	}
	return ""
}

func trivialBrowser(c Check) string {
	if why := trivialStart(c.Start); why != "" {
		return why
	}
	asserts := 0
	if c.ExpectText != "" {
		asserts++
		if why := everything("expect_text", c.ExpectText); why != "" {
			return why
		}
	}
	if c.ExpectSelector != "" {
		asserts++
		if slices.Contains(pageSelectors, strings.TrimSpace(c.ExpectSelector)) {
			return fmt.Sprintf("expect_selector %q is on every page: name an element only a working page has", c.ExpectSelector)
		}
	}
	for i, st := range c.Steps {
		if st.WaitText == "" {
			continue
		}
		asserts++
		if why := everything(fmt.Sprintf("steps[%d].wait_text", i), st.WaitText); why != "" {
			return why
		}
	}
	if asserts == 0 {
		return "it asserts nothing: add expect_text, expect_selector or a wait_text step"
	}
	return ""
}
