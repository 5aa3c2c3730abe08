package report

import (
	"regexp"
	"strings"
)

// ---- pytest doctests ----

// maxFailText bounds the failure text kept to read a doctest failure.
const maxFailText = 32 << 10

var (
	// doctestEndRE ends pytest's report of a failing doctest example:
	// "/abs/README.rst:12: DocTestFailure".
	doctestEndRE = regexp.MustCompile(`(?m)^\S.*:(?:\d+|\?+): (?:DocTestFailure|UnexpectedException|MultipleDoctestFailures)\s*$`)
	// doctestSrcRE is a numbered source line: "012 >>> print(x)",
	// "??? >>> x" when the location is unknown.
	doctestSrcRE = regexp.MustCompile(`^(?:\d+|\?\?\?) (.*)$`)
)

// doctestHead summarises pytest's report of a failing doctest, which
// starts with numbered source lines ("017 ", "018 >>> parse(x)") that say
// nothing by themselves, in lines that do: the failing example, what it
// was expected to print and what it printed (or the exception it
// raised):
//
//	doctest failed: >>> parse(x)
//	Expected: 1
//	Got: 2
//
// It is "" when text is not a doctest failure.
func doctestHead(text string) string {
	if !doctestEndRE.MatchString(text) {
		return ""
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	// The first line after the source lines: pytest's "Expected:", the
	// diff, or "UNEXPECTED EXCEPTION: …".
	at := -1
	for i, l := range lines {
		if !doctestSrcRE.MatchString(l) && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "EXAMPLE LOCATION UNKNOWN") {
			at = i
			break
		}
	}
	if at < 0 {
		return ""
	}
	example := ""
	for i := at - 1; i >= 0; i-- {
		src := strings.TrimSpace(doctestSrcRE.ReplaceAllString(lines[i], "$1"))
		if strings.HasPrefix(src, ">>>") {
			example = src
			break
		}
	}
	head := "doctest failed"
	if example != "" {
		head += ": " + clip(example, 200)
	}
	switch l := lines[at]; {
	case strings.HasPrefix(l, "Expected:"), strings.HasPrefix(l, "Expected nothing"):
		want, i := doctestBlock(lines, at)
		head += "\n" + want
		if i < len(lines) && strings.HasPrefix(lines[i], "Got") {
			got, _ := doctestBlock(lines, i)
			head += "\n" + got
		}
	case strings.HasPrefix(l, "UNEXPECTED EXCEPTION: "):
		head += "\nraised " + clip(strings.TrimPrefix(l, "UNEXPECTED EXCEPTION: "), 300)
	default: // "Differences (unified diff with -expected +actual):"
		head += "\n" + clip(strings.TrimSpace(l), 200)
	}
	return head
}

// doctestBlock reads doctest's "Expected:"/"Got:" block at lines[i] (its
// label and the lines indented below it) as one line, "Expected: 5" or
// "Got nothing", and returns the index after it.
func doctestBlock(lines []string, i int) (string, int) {
	if i >= len(lines) {
		return "", i
	}
	label := strings.TrimSpace(lines[i])
	i++
	if !strings.HasSuffix(label, ":") { // "Expected nothing", "Got nothing"
		return label, i
	}
	var vals []string
	n := 0
	for ; i < len(lines); i++ {
		if lines[i] == "" { // doctest leaves blank lines unindented
			j := i
			for j < len(lines) && lines[j] == "" {
				j++
			}
			if j == len(lines) || !strings.HasPrefix(lines[j], "    ") {
				break
			}
		} else if !strings.HasPrefix(lines[i], "    ") {
			break
		}
		n++
		if len(vals) < 3 {
			vals = append(vals, clip(strings.TrimSpace(lines[i]), 120))
		}
	}
	v := strings.Join(vals, " ⏎ ")
	if n > len(vals) {
		v += " …"
	}
	return label + " " + v, i
}
