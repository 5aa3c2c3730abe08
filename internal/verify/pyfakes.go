package verify

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
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
		// A literal: its prefix letters (r, b, f, u) are already in b, as
		// a token of their own (the r of `or'…'` is not one).
		raw := false
		k := b.Len()
		for k > 0 && strings.IndexByte("rRbBfFuU", b.String()[k-1]) >= 0 {
			k--
		}
		if k == 0 || !isIdentByte(b.String()[k-1]) {
			raw = strings.ContainsAny(b.String()[k:], "rR")
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
		end := min(j+len(q), len(src))
		if j < len(src) && src[j] == '\n' && len(q) == 1 {
			end = j // unterminated: the newline is the code's
		}
		text := src[start:min(j, len(src))]
		if !raw {
			text = pyUnescape(text)
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
		i = end
	}
	return b.String(), strs
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// pyUnescape decodes a literal's escapes as Python does (\n, \t, \xNN,
// \uNNNN, \UNNNNNNNN, octal; \N{…} is left as written), so text hidden
// behind them is read.
func pyUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		c := s[i+1]
		hex := func(n int) bool {
			if i+2+n > len(s) {
				return false
			}
			v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
			if err != nil {
				return false
			}
			b.WriteRune(rune(v))
			i += 1 + n
			return true
		}
		switch {
		case c == 'n':
			b.WriteByte('\n')
			i++
		case c == 't':
			b.WriteByte('\t')
			i++
		case c == 'x' && hex(2), c == 'u' && hex(4), c == 'U' && hex(8):
		case c >= '0' && c <= '7':
			n := 1
			for n < 3 && i+1+n < len(s) && s[i+1+n] >= '0' && s[i+1+n] <= '7' {
				n++
			}
			v, _ := strconv.ParseUint(s[i+1:i+1+n], 8, 32)
			b.WriteRune(rune(v))
			i += n
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// pyRunnerText is what printing unittest's results takes: its per-test
// lines and its summary, which the gate reads from the output. (pytest's
// results come from its JUnit report, and its exit status must agree.)
var pyRunnerText = regexp.MustCompile(`Ran (\d+|%[ds]|\{[^}]*\}) tests? in|\) \.\.\. (ok|FAIL|ERROR)\b`)

// pyResultNames are unittest's result methods and pytest's hooks that
// decide outcomes: defining, replacing or naming them (setattr, getattr,
// sys.modules) is a result hook.
const pyResultNames = `wasSuccessful|addSuccess|addFailure|addError|addSubTest|addExpectedFailure|addUnexpectedSuccess|addSkip|` +
	`pytest_runtest_makereport|pytest_report_teststatus|pytest_runtest_logreport|pytest_runtest_call|pytest_pyfunc_call|pytest_runtest_protocol|pytest_sessionfinish|pytest_terminal_summary|pytest_collection_modifyitems`

// pyWatched are the modules whose aliases the scan reads through: the
// process's exits and the runners.
var pyWatched = map[string]bool{"os": true, "posix": true, "nt": true, "sys": true, "builtins": true,
	"unittest": true, "pytest": true, "_pytest": true, "importlib": true}

var (
	pyDefName = regexp.MustCompile(`^\s*(async\s+)?def\s+(\w+)`)
	// A main guard; "and …" only narrows it ("or …" would not be one).
	pyMainBlock = regexp.MustCompile(`^(\s*)if\s*\(?\s*(__name__\s*==\s*"__main__"|"__main__"\s*==\s*__name__)\s*\)?\s*(:|and\b)`)
	// Imports, for aliases: `import a.b as c`, `from a import b as c, d`.
	pyImport     = regexp.MustCompile(`^\s*import\s+(.+)$`)
	pyFromImport = regexp.MustCompile(`^\s*from\s+([\w.]+)\s+import\s+\(?([^)]*)\)?\s*$`)
	// pyHardExit finds the exits no runner catches, called or not (an
	// alias, atexit.register(os._exit, 0)); pyExit the others. The status
	// is read after the name.
	pyHardExit = regexp.MustCompile(`\b((?:\w+\.)*_exit|(?:os|posix|nt)\.(?:exec|spawnv?p?e?\b)\w*)\b`)
	pyExit     = regexp.MustCompile(`\b(sys\.exit|pytest\.exit|SystemExit)\b|(^|[^.\w])(exit|quit)\s*\(`)
	pyHook     = regexp.MustCompile(`\.(?P<force>force_result|force_exception)\s*\(|\bdef\s+(?P<def>` + pyResultNames + `)\b|` +
		`^\s*(?P<member>` + pyResultNames + `)\s*=[^=]|` +
		`(?P<self>\bself)?\.(?P<attr>exitstatus|` + pyResultNames + `|assert[A-Z_]\w*|fail|failureException|__code__)\s*=[^=]|` +
		`\b(?P<runner>TestResult|TextTestResult|TextTestRunner|resultclass|pluginmanager)\b|` +
		`\bsetattr\s*\(\s*(?P<setattr>sys|os|unittest|pytest|_pytest|builtins)\b|` +
		`\b(?P<patched>(?:sys|os|posix|builtins|unittest|pytest|_pytest)(?:\.\w+)+)\s*=[^=]|` +
		`^\s*(?P<name>__name__)\s*=[^=]|\b(?P<loader>SourceFileLoader|spec_from_file_location|load_source|zipimport|importlib\.machinery)\b`)
	// String literals naming what pyHardExit and pyHook look for in code.
	pyHookName = regexp.MustCompile(`^(_exit|exec[lv]p?e?|` + pyResultNames + `)$|^_pytest\b`)
	pyCtypes   = regexp.MustCompile(`(^|[^\w.])(import|from)\s+ctypes\b|\bctypes\.`)
	// A non-zero constant status, or a message (status 1).
	pyNonZero = regexp.MustCompile(`^\s*(-?[1-9][0-9]*|0[xX]0*[1-9a-fA-F][0-9a-fA-F]*)\s*$`)
	// A message: a string literal, formatted or joined with another (the
	// status is then 1). "" or 0, "".count(…) are not.
	pyMessage = regexp.MustCompile(`^[rRbBfFuU]{0,2}""(\s*%.*|\.format\(.*|\s*\+\s*[rRbBfFuU]{0,2}"".*)?$`)
	// pytest.exit's status is its returncode argument (2 without it).
	pyReturnCode = regexp.MustCompile(`returncode\s*=\s*([^,)]*)`)
)

// calledAtImport are the module-level functions of a file that code
// running at import calls or decorates with: module-level statements,
// class bodies, decorators and default values (not function bodies).
func calledAtImport(lines []string) map[string]bool {
	defs := map[string]bool{}
	for _, l := range lines {
		if m := pyDefName.FindStringSubmatch(l); m != nil && len(m[1]) == 0 && l == strings.TrimLeft(l, " \t") {
			defs[m[2]] = true
		}
	}
	called := map[string]bool{}
	var stack []int // indentation of the functions the line is in
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		for len(stack) > 0 && indent <= stack[len(stack)-1] {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			at := l
			if m := pyDefName.FindStringIndex(l); m != nil {
				at = l[m[1]:] // a def's defaults, not its own name
			}
			for _, m := range pyCall.FindAllStringSubmatch(at, -1) {
				if name := m[2] + m[3]; defs[name] {
					called[name] = true
				}
			}
		}
		if pyDefName.MatchString(l) {
			stack = append(stack, indent)
		}
	}
	return called
}

// pyCall is a name called or used as a decorator.
var pyCall = regexp.MustCompile(`(^|[^\w.])(\w+)\s*\(|^\s*@(\w+)`)

// pyAliases reads a file's imports of the watched modules: a name bound
// to one (`import os as o`: o → os; `from os import _exit as leave`:
// leave → os._exit; `from unittest import TestCase`: TestCase →
// unittest.TestCase).
func pyAliases(lines []string) map[string]string {
	al := map[string]string{}
	watched := func(mod string) bool { return pyWatched[strings.SplitN(mod, ".", 2)[0]] }
	for _, l := range lines {
		if m := pyImport.FindStringSubmatch(l); m != nil {
			for _, part := range strings.Split(m[1], ",") {
				f := strings.Fields(part)
				if len(f) == 3 && f[1] == "as" && watched(f[0]) {
					al[f[2]] = f[0]
				}
			}
		}
		if m := pyFromImport.FindStringSubmatch(l); m != nil && watched(m[1]) {
			for _, part := range strings.Split(m[2], ",") {
				f := strings.Fields(part)
				switch {
				case len(f) == 1 && f[0] != "*":
					al[f[0]] = m[1] + "." + f[0]
				case len(f) == 3 && f[1] == "as":
					al[f[2]] = m[1] + "." + f[0]
				}
			}
		}
	}
	for name, full := range al {
		if name == full || strings.HasPrefix(full, name+".") && !strings.Contains(name, ".") && name == strings.SplitN(full, ".", 2)[0] {
			delete(al, name) // `import os.path`: os is os
		}
	}
	return al
}

// unalias writes line l with the aliases of al replaced by what they
// name, so that `o._exit(0)` reads `os._exit(0)`.
func unalias(l string, al map[string]string) string {
	if len(al) == 0 {
		return l
	}
	return pyIdent.ReplaceAllStringFunc(l, func(w string) string {
		pre := ""
		if c := w[0]; c != '_' && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			pre, w = w[:1], w[1:]
		}
		if full, ok := al[w]; ok {
			return pre + full
		}
		return pre + w
	})
}

// pyIdent is an identifier not reached through an attribute (x, not a.x).
var pyIdent = regexp.MustCompile(`(^|[^\w.])[A-Za-z_]\w*`)

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
	aliases := pyAliases(lines)
	atImport := calledAtImport(lines)
	topDef := ""     // the module-level function the line is in
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
		// A def line's defaults run at import; its body when called.
		inFunc := len(defs) > 0 && !(topDef != "" && atImport[topDef])
		if m := pyDefName.FindStringSubmatch(l); m != nil {
			if indent == 0 {
				topDef = m[2]
			}
			defs = append(defs, indent)
		} else if indent == 0 {
			topDef = ""
		}
		if m := pyMainBlock.FindStringSubmatch(l); m != nil && mainIndent < 0 {
			mainIndent = len(m[1])
			continue
		}
		if mainFile || mainIndent >= 0 {
			continue // a program's own code: it does not run when imported
		}
		l = unalias(l, aliases)
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
		for _, loc := range pyHardExit.FindAllStringSubmatchIndex(l, -1) {
			name := l[loc[2]:loc[3]]
			args, called := callArgs(l, lines, i, loc[3])
			before := strings.TrimSpace(l[:loc[0]])
			if strings.HasSuffix(before, "def") || strings.HasPrefix(name, "self.") || strings.HasPrefix(name, "cls.") ||
				(called && strings.HasSuffix(name, "_exit") && nonZeroStatus(args)) {
				continue
			}
			out = append(out, exitFinding(rel, i, name, args, called))
		}
		if inFunc && path.Base(rel) != "conftest.py" {
			continue // raised when a test calls it: the runner catches it
		}
		for _, loc := range pyExit.FindAllStringSubmatchIndex(l, -1) {
			name, end := "", loc[1]
			if loc[2] >= 0 {
				name = l[loc[2]:loc[3]]
			} else {
				name, end = l[loc[6]:loc[7]], loc[7]
			}
			args, called := callArgs(l, lines, i, end)
			before := strings.TrimSpace(l[:loc[0]])
			switch {
			case strings.HasSuffix(before, "def") || strings.HasSuffix(before, "class"):
				continue // a function of that name, defined
			case name == "SystemExit" && !called && !strings.HasSuffix(before, "raise"):
				continue // caught or named, not raised
			case name == "pytest.exit":
				rc := pyReturnCode.FindStringSubmatch(args)
				status := ""
				if rc != nil {
					status = rc[1]
				} else if a := splitArgs(args); len(a) > 1 {
					status = a[1] // pytest.exit(reason, returncode)
				}
				if status == "" || nonZeroStatus(status) {
					continue // pytest's own status 2, or a non-zero one
				}
			case called && nonZeroStatus(args):
				continue
			}
			out = append(out, exitFinding(rel, i, name, args, called))
		}
	}
	// One finding of a kind a line: an alias and what it names are one.
	return slices.CompactFunc(out, func(a, b Finding) bool { return a.Line == b.Line && a.Kind == b.Kind })
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
		if g("self") != "" && g("attr") == "exitstatus" {
			return "" // an object's own status, not a session's
		}
		return "." + g("attr") + " assigned"
	case g("runner") != "":
		return g("runner") + " used (the runner's result, runner or plugins replaced)"
	case g("patched") != "":
		return g("patched") + " replaced"
	case g("name") != "":
		return "__name__ assigned (a main guard made true on import)"
	case g("loader") != "":
		return g("loader") + " loads code from a file the scan does not read"
	case g("setattr") != "":
		return "setattr on " + g("setattr")
	}
	return ""
}

// nonZeroStatus says whether an exit's argument is a status other than 0
// whatever runs: a non-zero constant, or a message (status 1).
func nonZeroStatus(args string) bool {
	a := strings.TrimSpace(args)
	if first := splitArgs(a); len(first) > 0 {
		a = first[0]
	}
	return pyNonZero.MatchString(a) || pyMessage.MatchString(a)
}

// splitArgs splits a call's argument text at its top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth, from := 0, 0
	for i, r := range s {
		switch r {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[from:i]))
				from = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[from:]); rest != "" {
		out = append(out, rest)
	}
	return out
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
// end of first (lines[i] as the rules read it) (following the call onto later lines), and whether a
// call follows the name at all.
func callArgs(first string, lines []string, i, end int) (string, bool) {
	rest := strings.TrimLeft(first[end:], " \t")
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
