package verify

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Python's runners are fooled the way go test's are: code the tests import
// can print a runner's summary ("Ran 5 tests … OK", "5 passed in …") or
// write its report (JUnit XML) and end the process with status 0 before
// the real results exist, or change them through a runner's hooks. The
// Python scan looks for those constructs in every .py file of the tree
// (dependency directories aside). Like the Go scan it reads text only:
// strings built at run time and code in dependencies are not seen.

// Kinds of Python findings (FakeRunnerText and FakeUnscanned are shared).
const (
	// FakePyExit: an exit that skips the runner with status 0 or one not
	// known when the code is read: _exit (os, posix, libc through ctypes)
	// and os.exec* anywhere; sys.exit, SystemExit, exit, quit and
	// pytest.exit with a return code where the runners do not catch them
	// (at import time: a module's top level, and conftest.py). A runner
	// records those raised in a test or while it collects as errors, and
	// an exit with a non-zero constant cannot fake a pass. Exits in an
	// `if __name__ == "__main__":` block or a __main__.py are a program's.
	FakePyExit = "python-exit"
	// FakePyHook: a runner hook or result method that decides outcomes:
	// pytest's report and call hooks, a hook wrapper forcing a result, a
	// session's exit status, pytest's internals imported, unittest's
	// wasSuccessful and add* result methods defined or replaced.
	FakePyHook = "python-result-hook"
)

// pyString is a string literal (adjacent literals and + joined) and the
// line it starts on.
type pyString struct {
	line int
	text string
}

// lexPython splits Python source into its code, with string literals
// replaced by "" and comments removed (lines kept, so line numbers hold),
// and its string literals as written (escapes not decoded).
func lexPython(src string) (code string, strs []pyString) {
	var b strings.Builder
	line := 1
	lastEnd := -1 // where the last literal ended in b, for joining
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			b.WriteByte('\n')
			line++
			i++
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c != '\'' && c != '"':
			b.WriteByte(c)
			i++
			continue
		}
		// A literal: its prefix letters are already in b.
		raw := false
		for j := b.Len() - 1; j >= 0; j-- {
			p := b.String()[j]
			if p == 'r' || p == 'R' {
				raw = true
			}
			if !strings.ContainsRune("rRbBfFuU", rune(p)) {
				break
			}
		}
		q := src[i : i+1]
		if strings.HasPrefix(src[i:], strings.Repeat(q, 3)) {
			q = src[i : i+3]
		}
		start, startLine := i+len(q), line
		j := start
		for j < len(src) {
			if src[j] == '\\' && j+1 < len(src) {
				if src[j+1] == '\n' {
					line++
				}
				j += 2
				continue
			}
			if strings.HasPrefix(src[j:], q) {
				break
			}
			if src[j] == '\n' {
				if len(q) == 1 {
					break // unterminated: the line ends it
				}
				line++
			}
			j++
		}
		text := src[start:min(j, len(src))]
		if !raw {
			text = strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(text)
		}
		// Adjacent literals, or literals joined by +, are one string.
		between := ""
		if lastEnd >= 0 {
			between = b.String()[lastEnd:]
		}
		if lastEnd >= 0 && strings.Trim(between, " \t\n\\+()rRbBfFuU") == "" && len(strs) > 0 {
			strs[len(strs)-1].text += text
		} else {
			strs = append(strs, pyString{line: startLine, text: text})
		}
		if text == "__main__" {
			b.WriteString(`"__main__"`) // what a main guard compares with
		} else {
			b.WriteString(`""`)
		}
		b.WriteString(strings.Repeat("\n", line-startLine))
		lastEnd = b.Len()
		i = min(j+len(q), len(src))
	}
	return b.String(), strs
}

// pyRunnerText is what printing or writing a Python runner's results
// takes: unittest's per-test lines and summary, pytest's summary, a JUnit
// report's elements.
var pyRunnerText = regexp.MustCompile(`Ran (\d+|%[ds]|\{[^}]*\}) tests? in|\) \.\.\. (ok|FAIL|ERROR)\b|passed(, [^"]*)? in \d|(\d+|%[ds]|\{[^}]*\}) passed in|<testsuite|<testcase`)

// pyResultNames are unittest's result methods and pytest's hooks that
// decide outcomes: defining, replacing or naming them (setattr, getattr,
// sys.modules) is a result hook.
const pyResultNames = `wasSuccessful|addSuccess|addFailure|addError|addSubTest|addExpectedFailure|addUnexpectedSuccess|addSkip|` +
	`pytest_runtest_makereport|pytest_report_teststatus|pytest_runtest_logreport|pytest_runtest_call|pytest_pyfunc_call|pytest_runtest_protocol|pytest_sessionfinish|pytest_terminal_summary`

var (
	pyDef = regexp.MustCompile(`^\s*(async\s+)?def\b`)
	// A main guard; "and …" only narrows it ("or …" would not be one).
	pyMainBlock = regexp.MustCompile(`^(\s*)if\s*\(?\s*(__name__\s*==\s*"__main__"|"__main__"\s*==\s*__name__)\s*\)?\s*(:|and\b)`)
	// pyHardExit finds the exits no runner catches, called or not (an
	// alias, atexit.register(os._exit, 0)); pyExit the others. The status
	// is read after the name.
	pyHardExit = regexp.MustCompile(`\b((?:\w+\.)*_exit|os\.exec\w*)\b`)
	pyExit     = regexp.MustCompile(`\b(sys\.exit|pytest\.exit|SystemExit)\b|(^|[^.\w])(exit|quit)\s*\(`)
	pyHook     = regexp.MustCompile(`\.(?P<force>force_result|force_exception)\s*\(|\bdef\s+(?P<def>` + pyResultNames + `)\b|` +
		`^\s*(?P<member>` + pyResultNames + `)\s*=[^=]|` +
		`(?P<self>\bself)?\.(?P<attr>exitstatus|` + pyResultNames + `|assert[A-Z_]\w*|fail|failureException)\s*=[^=]|` +
		`(^|[^\w.])(import|from)\s+(?P<internals>_pytest)\b|\b(?P<runner>TestResult|TextTestResult|TextTestRunner|resultclass)\b|` +
		`\bsetattr\s*\(\s*(?P<setattr>sys|os|unittest|pytest)\b|\b(?P<replaced>(?:sys|os)\.(?:exit|_exit))\s*=[^=]`)
	// String literals naming what pyHardExit and pyHook look for in code.
	pyHookName = regexp.MustCompile(`^(_exit|exec[lv]p?e?|` + pyResultNames + `)$|^_pytest\b`)
	pyCtypes   = regexp.MustCompile(`(^|[^\w.])(import|from)\s+ctypes\b|\bctypes\.`)
	// A non-zero constant status, or a message (status 1).
	pyNonZero = regexp.MustCompile(`^\s*(-?[1-9][0-9]*|0[xX]0*[1-9a-fA-F][0-9a-fA-F]*|"")\s*(,.*)?$`)
	// pytest.exit's status is its returncode argument (2 without it).
	pyReturnCode = regexp.MustCompile(`returncode\s*=\s*([^,)]*)`)
)

// pythonFakes returns the findings of one Python file, rel its
// slash-separated path. Identifiers are read as Python reads them
// (NFKC-normalised: a fullwidth letter is the letter).
func pythonFakes(rel, src string) []Finding {
	var out []Finding
	code, strs := lexPython(norm.NFKC.String(src))
	for _, s := range strs {
		if m := pyRunnerText.FindString(s.text); m != "" {
			out = append(out, Finding{File: rel, Line: s.line, Kind: FakeRunnerText,
				Detail: fmt.Sprintf("string %s holds a test runner's result text %q", quoteClip(s.text), m)})
		}
		if pyHookName.MatchString(s.text) {
			out = append(out, Finding{File: rel, Line: s.line, Kind: FakePyHook,
				Detail: fmt.Sprintf("string %s names an exit or a result hook (getattr, setattr, sys.modules)", quoteClip(s.text))})
		}
	}
	mainFile := path.Base(rel) == "__main__.py"
	lines := strings.Split(code, "\n")
	mainIndent := -1 // inside `if __name__ == "__main__":` at this indentation
	var defs []int   // the indentation of the functions the line is in
	ctypesSeen := false
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		if mainIndent >= 0 && indent <= mainIndent {
			mainIndent = -1
		}
		for len(defs) > 0 && indent <= defs[len(defs)-1] {
			defs = defs[:len(defs)-1]
		}
		if pyDef.MatchString(l) {
			defs = append(defs, indent)
		}
		if m := pyMainBlock.FindStringSubmatch(l); m != nil && mainIndent < 0 {
			mainIndent = len(m[1])
			continue
		}
		if !ctypesSeen && pyCtypes.MatchString(l) {
			ctypesSeen = true
			out = append(out, Finding{File: rel, Line: i + 1, Kind: FakeNative,
				Detail: "ctypes calls C functions (exit, write) that the scan cannot follow"})
		}
		for _, m := range pyHook.FindAllStringSubmatchIndex(l, -1) {
			if d := hookDetail(l, m); d != "" {
				out = append(out, Finding{File: rel, Line: i + 1, Kind: FakePyHook, Detail: d + ": it decides test outcomes"})
			}
		}
		if mainFile || mainIndent >= 0 {
			continue
		}
		for _, loc := range pyHardExit.FindAllStringSubmatchIndex(l, -1) {
			name := l[loc[2]:loc[3]]
			args, called := callArgs(lines, i, loc[3])
			before := strings.TrimSpace(l[:loc[0]])
			if strings.HasSuffix(before, "def") || strings.HasPrefix(name, "self.") || strings.HasPrefix(name, "cls.") ||
				(called && strings.HasSuffix(name, "_exit") && nonZeroStatus(args)) {
				continue
			}
			out = append(out, exitFinding(rel, i, name, args, called))
		}
		if len(defs) > 0 && path.Base(rel) != "conftest.py" {
			continue // raised when a test calls it: the runner catches it
		}
		for _, loc := range pyExit.FindAllStringSubmatchIndex(l, -1) {
			name, end := "", loc[1]
			if loc[2] >= 0 {
				name = l[loc[2]:loc[3]]
			} else {
				name, end = l[loc[6]:loc[7]], loc[7]
			}
			args, called := callArgs(lines, i, end)
			before := strings.TrimSpace(l[:loc[0]])
			switch {
			case strings.HasSuffix(before, "def") || strings.HasSuffix(before, "class"):
				continue // a function of that name, defined
			case name == "SystemExit" && !called && !strings.HasSuffix(before, "raise"):
				continue // caught or named, not raised
			case name == "pytest.exit":
				rc := pyReturnCode.FindStringSubmatch(args)
				if rc == nil || nonZeroStatus(rc[1]) {
					continue // pytest's own status 2, or a non-zero one
				}
			case called && nonZeroStatus(args):
				continue
			}
			out = append(out, exitFinding(rel, i, name, args, called))
		}
	}
	return out
}

// hookDetail says what a pyHook match m in line l is, or "" for one that
// decides nothing (an attribute of the object's own: self.exitstatus).
func hookDetail(l string, m []int) string {
	g := func(name string) string {
		k := pyHook.SubexpIndex(name)
		if m[2*k] < 0 {
			return ""
		}
		return l[m[2*k]:m[2*k+1]]
	}
	switch {
	case g("force") != "":
		return "." + g("force") + " called (a hook wrapper replacing the outcome)"
	case g("def") != "":
		return g("def") + " defined"
	case g("member") != "":
		return g("member") + " assigned in a class"
	case g("attr") != "":
		if g("self") != "" {
			return ""
		}
		return "." + g("attr") + " assigned"
	case g("internals") != "":
		return "_pytest, the runner's internals, imported"
	case g("runner") != "":
		return g("runner") + " used (the runner's result or runner replaced)"
	case g("setattr") != "":
		return "setattr on " + g("setattr")
	case g("replaced") != "":
		return g("replaced") + " replaced"
	}
	return ""
}

// nonZeroStatus says whether an exit's argument is a status other than 0
// whatever runs: a non-zero constant, or a message (status 1).
func nonZeroStatus(args string) bool {
	a := strings.TrimSpace(args)
	for _, p := range []string{`""`, `f""`, `r""`, `rf""`, `fr""`} {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return pyNonZero.MatchString(a)
}

func exitFinding(rel string, i int, name, args string, called bool) Finding {
	what := name
	if called {
		what += "(" + strings.TrimSpace(args) + ")"
	}
	return Finding{File: rel, Line: i + 1, Kind: FakePyExit,
		Detail: fmt.Sprintf("%s can end the tests with status 0 after printing their results", clipText(what))}
}

// callArgs returns the argument text of a call whose name ends at column
// end of lines[i] (following the call onto later lines), and whether a
// call follows the name at all.
func callArgs(lines []string, i, end int) (string, bool) {
	rest := strings.TrimLeft(lines[i][end:], " \t")
	if !strings.HasPrefix(rest, "(") {
		return "", false
	}
	var b strings.Builder
	depth := 0
	for k := i; k < len(lines) && k < i+20; k++ {
		s := rest
		if k > i {
			s = lines[k]
			b.WriteByte(' ')
		}
		for _, r := range s {
			switch r {
			case '(', '[', '{':
				depth++
				if depth == 1 {
					continue
				}
			case ')', ']', '}':
				depth--
				if depth == 0 {
					return b.String(), true
				}
			}
			b.WriteRune(r)
		}
	}
	return b.String(), true
}

// clipText keeps a finding's detail short, on one line.
func clipText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 2*fakesMaxText {
		i := 2 * fakesMaxText
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		return s[:i] + "…"
	}
	return s
}
