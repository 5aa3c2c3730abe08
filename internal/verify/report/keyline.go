package report

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// keyLineRE marks the line of a failure message that says what went wrong.
var keyLineRE = regexp.MustCompile(`(?i)panic|assert|expect|\bwant\b|\bgot\b|error|exception|!=|==|\bfail|timed out|timeout|received|mismatch|not equal|left:|right:`)

// frameLineRE: lines that only frame a message and never say what went
// wrong.
var frameLineRE = regexp.MustCompile(`^(?:=== (?:RUN|PAUSE|CONT|NAME)|--- (?:FAIL|PASS|SKIP)|Traceback \(most recent call last\)|-{3,}|={3,}|at |File "|stack:|● |# [\w./-]+(?: \[[^\]]*\])?$|\^+$|thread '.*' (?:\(\d+\) )?panicked at .*:$|\s*$)`)

var (
	// pyExceptionRE: "ValueError: boom", "AssertionError", "mod.Error: x".
	pyExceptionRE = regexp.MustCompile(`^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning)\b(?::|$)`)
	exceptionRE   = regexp.MustCompile(`^[A-Z][\w.]*(?:Error|Exception)\b: \S`)
	valueLineRE   = regexp.MustCompile(`(?i)^(?:expected|received|actual|got|want|left:|[-+] |E\s)`)
	actualLineRE  = regexp.MustCompile(`(?i)^(?:received|actual|got|right:|[-+] |E\s)`)
	goLogPrefixRE = regexp.MustCompile(`^[\w./-]+\.go:\d+(?::\d+)?: `)
	// labelRE: a line that only names what follows ("error:", "got:",
	// "Expected:"), as quicktest, doctest and others print them.
	labelRE = regexp.MustCompile(`^[A-Za-z][\w ]{0,24}:$`)
)

// labelled joins lines that start with a label and its values into one:
// "label: value value | label: value", up to KeyLineMax.
func labelled(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		l = goLogPrefixRE.ReplaceAllString(l, "")
		switch {
		case i == 0:
		case labelRE.MatchString(l):
			b.WriteString(" | ")
		default:
			b.WriteByte(' ')
		}
		b.WriteString(strings.Join(strings.Fields(l), " "))
		if b.Len() > KeyLineMax || i == 8 {
			break
		}
	}
	return b.String()
}

// KeyLineMax bounds what KeyLine returns.
const KeyLineMax = 240

// KeyLine picks the line of a failure message worth showing next to the
// test's name: the first compiler error naming a file and a line
// (CompileError: a build that failed), else the exception of a Python
// traceback (or of pytest's "E " lines), else the first line that says what went wrong (an assertion, an
// error, a panic), else the first line; with the next line when it holds
// the expected/actual values. It is one line of at most KeyLineMax bytes,
// without a Go log prefix ("calc_test.go:12: ").
func KeyLine(msg string) string {
	if d := CompileError(msg); d != "" {
		return d
	}
	lines, pick := PickKeyLine(msg)
	if pick < 0 {
		return ""
	}
	out := goLogPrefixRE.ReplaceAllString(lines[pick], "")
	if labelRE.MatchString(out) {
		// A label alone ("error:", "Expected:") says nothing: the lines
		// after it do ("error: values are not equal | got: bool(true) |
		// want: bool(false)").
		return clipMark(labelled(lines[pick:]), KeyLineMax)
	}
	if pick+1 < len(lines) && len(out) < 120 && valueLineRE.MatchString(lines[pick+1]) {
		out += " | " + lines[pick+1]
		if pick+2 < len(lines) && actualLineRE.MatchString(lines[pick+2]) {
			out += " | " + lines[pick+2]
		}
	}
	return clipMark(strings.Join(strings.Fields(out), " "), KeyLineMax)
}

// PickKeyLine returns the message's meaningful lines (trimmed, without
// colours and framing lines) and the index of the key one (see KeyLine);
// -1 when there is none.
func PickKeyLine(msg string) ([]string, int) {
	msg = stripANSI(msg)
	var lines []string
	traceback := false
	for l := range strings.SplitSeq(msg, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Traceback (most recent call last)") {
			traceback = true
		}
		if l == "" || frameLineRE.MatchString(l) {
			continue
		}
		lines = append(lines, l)
		if len(lines) == 200 {
			break
		}
	}
	if len(lines) == 0 {
		return nil, -1
	}
	pick := -1
	if traceback {
		for i := len(lines) - 1; i >= 0; i-- {
			if pyExceptionRE.MatchString(lines[i]) {
				pick = i
				break
			}
		}
	}
	for i := 0; i < len(lines) && pick < 0; i++ {
		if exceptionRE.MatchString(lines[i]) {
			pick = i // "SyntaxError: …", "Error: expect(…)"
		}
	}
	for i := 0; i < len(lines) && pick < 0; i++ {
		if keyLineRE.MatchString(lines[i]) && !strings.HasPrefix(lines[i], "Error Trace:") {
			pick = i
		}
	}
	pick = max(pick, 0)
	if !pyExceptionRE.MatchString(lines[pick]) {
		// pytest's "E   fixture 'x' not found" says it better than
		// "failed on setup with …"; of several "E" lines, the exception
		// ("E   SyntaxError: invalid syntax" after the source lines).
		first, exc := -1, -1
		for i, l := range lines {
			if !strings.HasPrefix(l, "E ") {
				continue
			}
			if first < 0 {
				first = i
			}
			if pyExceptionRE.MatchString(strings.TrimSpace(l[2:])) {
				exc = i
			}
		}
		if exc >= 0 {
			first = exc
		}
		if first >= 0 {
			pick = first
			lines[first] = strings.TrimSpace(lines[first][2:])
		}
	}
	return lines, pick
}

// clipMark cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func clipMark(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	if n <= len(mark) {
		return ""
	}
	return clip(s, n-len(mark)) + mark
}

// CollectionSummary says in one line which test files, modules or
// packages could not be collected (KindCollection cases; others in cs are
// ignored) and why, naming at most show of them with the key line of
// their error:
//
//	2 test modules could not be collected (import errors): tests/test_a.py: ModuleNotFoundError: No module named 'requests'; tests/test_b.py: SyntaxError: invalid syntax
//
// It is "" when there is none.
func CollectionSummary(cs []Case, show int) string {
	errs := CollectionErrors(cs)
	if len(errs) == 0 {
		return ""
	}
	what := collectionWhat(errs[0])
	for _, c := range errs[1:] {
		if collectionWhat(c) != what {
			what = collectionKind{"test files, modules or packages", "test file, module or package", "could not be loaded"}
			break
		}
	}
	noun := what.plural
	if len(errs) == 1 {
		noun = what.one
	}
	var items []string
	for i, c := range errs {
		if i == show {
			items = append(items, fmt.Sprintf("… (%d more)", len(errs)-show))
			break
		}
		item := clipMark(c.Name, 200)
		if k := KeyLine(c.Message); k != "" {
			item += ": " + clipMark(k, 160)
		}
		items = append(items, item)
	}
	return fmt.Sprintf("%d %s %s: %s", len(errs), noun, what.verb, strings.Join(items, "; "))
}

type collectionKind struct{ plural, one, verb string }

// collectionWhat names what a collection error is about, from its file
// or name.
func collectionWhat(c Case) collectionKind {
	ext := path.Ext(c.File)
	if ext == "" {
		ext = path.Ext(c.Name)
	}
	switch {
	case strings.Contains(c.Name, " (lib test)") || strings.Contains(c.Name, " (test ") || strings.Contains(c.Name, " (bin ") ||
		strings.Contains(c.Name, " (doctest)") || strings.Contains(c.Name, " (example ") || ext == ".rs":
		return collectionKind{"test targets", "test target", "could not be compiled"}
	case ext == ".py":
		return collectionKind{"test modules", "test module", "could not be collected (import errors)"}
	case ext == ".go":
		return collectionKind{"packages", "package", "could not be built"}
	case jsFileRE.MatchString(c.Name) || jsFileRE.MatchString(c.File):
		return collectionKind{"test files", "test file", "could not be loaded"}
	}
	return collectionKind{"test files, modules or packages", "test file, module or package", "could not be loaded"}
}

// FailedText says how many of the executed tests failed and errored, as
// the reasons of verify and the gate put it: "1 of 5 tests failed",
// "1 of 5 tests failed, 2 errored", "2 of 5 tests errored"; "" when none
// did. Errors here are tests that could not run (collection errors are
// said apart, by CollectionSummary).
func FailedText(failed, errored, executed int) string {
	executed = max(executed, failed+errored)
	tests := "tests"
	if executed == 1 {
		tests = "test"
	}
	switch {
	case failed > 0 && errored > 0:
		return fmt.Sprintf("%d of %d %s failed, %d errored", failed, executed, tests, errored)
	case failed > 0:
		return fmt.Sprintf("%d of %d %s failed", failed, executed, tests)
	case errored > 0:
		return fmt.Sprintf("%d of %d %s errored", errored, executed, tests)
	}
	return ""
}
