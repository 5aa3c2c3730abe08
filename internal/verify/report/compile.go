package report

import (
	"regexp"
	"strings"
)

// Compiler diagnostics. A build that fails says why in its first error,
// which names a file and a line; its last lines ("FAIL pkg [build
// failed]", "error: could not compile `x`", "1 error", make's "Error 2")
// only say that it failed.
//
//	Go, gcc, clang  "./calc.go:12:3: undefined: x", "a.c:3:10: error: 'x' undeclared"
//	rustc           "error[E0425]: cannot find value `x`" then " --> src/lib.rs:3:5"
//	tsc             "src/a.ts(3,5): error TS2304: Cannot find name 'x'."
//	javac           "A.java:3: error: cannot find symbol"
//	Python          `File "x.py", line 3` then "SyntaxError: invalid syntax"
//
// Warnings and notes are not causes.

var (
	// diagColRE: "file.ext:line:col: message" (Go, gcc, clang, and most
	// compilers since).
	diagColRE = regexp.MustCompile(`^(?:\./)?[^\s:()]+\.\w+:\d+:\d+: (.+)$`)
	// diagJavaRE: javac's "File.java:3: error: message" (no column).
	diagJavaRE = regexp.MustCompile(`^[^\s:()]+\.(?:java|kt|scala|groovy):\d+: (?:error|fatal error): .+$`)
	diagTSCRE  = regexp.MustCompile(`^[^\s()]+\.[cm]?[jt]sx?\(\d+,\d+\): error TS\d+: .+$`)
	rustErrRE  = regexp.MustCompile(`^error(?:\[E\d+\])?: .+$`)
	rustLocRE  = regexp.MustCompile(`^\s*--> (\S+:\d+(?::\d+)?)$`)
	pyFileRE   = regexp.MustCompile(`^\s*File "([^"]+)", line (\d+)`)
	pySyntaxRE = regexp.MustCompile(`^(?:SyntaxError|IndentationError|TabError)\b.*$`)
	notCauseRE = regexp.MustCompile(`^(?:warning|note|info|help)\b`)
)

// CompileScanner finds, line by line, the first compiler diagnostic that
// names a file and a line (see above).
type CompileScanner struct {
	first   string
	rustErr string // a rustc error waiting for its " --> file:line"
	pyLoc   string // the last Python `File "x", line N`, as "x:N"
}

// Line reads one line of output (its ANSI colours and line ending are
// removed here).
func (s *CompileScanner) Line(raw string) {
	if s.first != "" {
		return
	}
	l := strings.TrimRight(cleanLine(raw), " \t\r\n")
	t := strings.TrimSpace(l)
	if t == "" {
		return
	}
	if s.rustErr != "" {
		if m := rustLocRE.FindStringSubmatch(l); m != nil {
			s.first = m[1] + ": " + s.rustErr
			return
		}
		s.rustErr = ""
	}
	switch {
	case rustErrRE.MatchString(t) && !strings.HasPrefix(t, "error: could not compile"):
		s.rustErr = t
	case pyFileRE.MatchString(l):
		m := pyFileRE.FindStringSubmatch(l)
		s.pyLoc = m[1] + ":" + m[2]
	case pySyntaxRE.MatchString(t) && s.pyLoc != "":
		s.first = s.pyLoc + ": " + t
	case diagColRE.MatchString(t):
		if !notCauseRE.MatchString(diagColRE.FindStringSubmatch(t)[1]) {
			s.first = t
		}
	case diagJavaRE.MatchString(t), diagTSCRE.MatchString(t):
		s.first = t
	}
}

// First is the diagnostic found, as "file:line[:col]: message" (tsc's as
// it prints it), "" when none.
func (s *CompileScanner) First() string { return clipMark(s.first, KeyLineMax) }

// CompileError is the first compiler diagnostic of text naming a file and
// a line, "" when it has none.
func CompileError(text string) string {
	var s CompileScanner
	for l := range strings.SplitSeq(text, "\n") {
		s.Line(l)
		if s.first != "" {
			break
		}
	}
	return s.First()
}
