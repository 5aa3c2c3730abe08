package verify

// Output parsing.
//
// A command's output is read line by line. A line that is a `go test -json`
// event (test2json) goes to the Go event parser; every other line has its
// ANSI escapes and carriage-return redraws removed and goes to the text
// parsers, which recognise, per line, the first of:
//
//	go test -v    "--- PASS: TestX (0.00s)", "--- FAIL: …", "--- SKIP: …" (any indent),
//	              package lines "ok  \tpkg\t0.1s", "FAIL\tpkg\t0.1s", "FAIL\tpkg [build failed]"
//	unittest      "Ran 6 tests in 0.01s" then "FAILED (failures=2, errors=1, skipped=1)" or "OK"
//	ctest         "50% tests passed, 2 tests failed out of 4"
//	TAP           "ok 1 - name", "not ok 2 - name", "# SKIP"/"# TODO" directives
//	TAP summary   "# pass 3", "# fail 1", "# skipped 1", "# todo 0", "# cancelled 0" (node --test, tape)
//	node --test   the spec reporter's "ℹ pass 3", "ℹ fail 1", …
//	jest          "Tests:       1 failed, 2 passed, 3 total"
//	vitest        "      Tests  1 failed | 2 passed (3)"
//	mocha         "  2 passing (5ms)", "  1 failing", "  1 pending"
//	pytest        "==== 1 failed, 2 passed, 1 skipped, 2 errors in 0.12s ===="
//	googletest    "[  PASSED  ] 15 tests.", "[  FAILED  ] 1 test, listed below:"
//	cargo         "test result: FAILED. 15 passed; 1 failed; 0 ignored; …"
//	plain         the summaries of other harnesses (parse_summary.go): "3 passed, 1 failed",
//	              "PASSED: 16", "FAILED: 1", "16 tests, 1 failure", "OK (16 tests)",
//	              "Tests run: 16, Failures: 1", "1 of 16 tests failed", …
//
// Each format is a family and families are added up, so that a Makefile
// running several suites is counted in full. Within a family a summary
// wins over per-test lines of the same run: TAP's "# pass N" over its
// "ok N" lines, and in go test -v a package's test lines over its
// "ok pkg" line. go test -v counts every "---" line, tests and subtests
// alike. Without any test line, a package line counts the package as one
// test (go test without -v prints nothing else); "[no test files]" and
// "[no tests to run]" count nothing. TAP lines count only at the top
// level (nested subtests are indented). Skipped and todo tests are
// skipped; cancelled tests (node) are failures. Errors are counted apart
// from failures: pytest's errors, unittest's errors=, a Go package that
// failed with no failing test ("[build failed]", a panic in init), a jest
// test file that failed to run ("● Test suite failed to run") and a
// vitest one that failed to load ("FAIL  a.test.ts [ a.test.ts ]").
//
// Failing names are collected from go "--- FAIL:" lines (named
// "pkg.TestX" when the package line follows; a parent that failed only
// through its subtests as "pkg.TestX (1 of 3 subtests failed: b)"), TAP
// "not ok" lines (named as report.TAP names them: "# Subtest:" headers or
// tape's "# name" block first, TAP's number when a name repeats), googletest "[  FAILED  ] Suite.Case", unittest "FAIL:
// test_x (mod.Class.test_x)" and "test_x (…) ... FAIL", "FAIL: name" and
// "name ... FAILED" lines of other harnesses, jest "●" headers (the test
// file for "Test suite failed to run"), vitest "FAIL file > suite > test" and "× suite > test" lines
// (each test once: "suite > test" is dropped when "file > suite > test"
// is there too), node spec "✖ name (…ms)" lines and pytest
// "FAILED path::test" and "ERROR path" lines.

import (
	"encoding/json"
	"io"
	"regexp"
	"strings"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

// tally counts tests. Failed does not include Errors (tests, files or
// packages that could not run).
type tally struct{ Passed, Failed, Skipped, Errors int }

func (t *tally) add(o tally) {
	t.Passed += o.Passed
	t.Failed += o.Failed
	t.Skipped += o.Skipped
	t.Errors += o.Errors
}

// parsed is what was read from one command's output.
type parsed struct {
	tally
	Failing []string // at most MaxFailing
	Formats []string
	Excerpt string
	NoTests string // the runner's own "no tests found" line
	Lines   int    // lines of output
	// Cause is the first compiler error naming a file and a line
	// (report.CompileScanner), "" when none.
	Cause string
}

// parseOutput reads a whole output stream.
func parseOutput(r io.Reader) (parsed, error) {
	p := newOutputParser()
	err := report.ReadLines(r, p.line)
	return p.finish(), err
}

// parseString is parseOutput for text in memory.
func parseString(s string) parsed {
	res, _ := parseOutput(strings.NewReader(s))
	return res
}

type outputParser struct {
	gj    goJSONParser
	tx    textParser
	ex    excerpter
	cause report.CompileScanner
	lines int
}

func newOutputParser() *outputParser {
	return &outputParser{}
}

func (p *outputParser) line(raw string) {
	p.lines++
	s := strings.TrimRight(raw, "\r\n")
	if strings.HasPrefix(s, "{") && p.gj.line(s) {
		return
	}
	s = cleanLine(s)
	p.cause.Line(s)
	p.tx.line(s)
	p.ex.line(s)
}

func (p *outputParser) finish() parsed {
	var res parsed
	names := newNameSet(MaxFailing)

	var goFailures []goFailure
	if p.gj.seen {
		var t tally
		t, goFailures = p.gj.finish()
		res.add(t)
		res.Formats = append(res.Formats, "go test -json")
		for _, f := range goFailures {
			names.add(f.name)
		}
	}
	t, formats, textNames := p.tx.finish()
	res.add(t)
	res.Formats = append(res.Formats, formats...)
	for _, n := range textNames {
		names.add(n)
	}
	res.Failing = names.list
	res.NoTests = p.tx.noTests
	res.Lines = p.lines
	res.Cause = p.cause.First()

	goEx := goExcerpt(goFailures, MaxExcerpt)
	textEx := ""
	if p.ex.started || goEx == "" {
		textEx = p.ex.finish(MaxExcerpt - len(goEx))
	}
	res.Excerpt = strings.TrimRight(joinNonEmpty(goEx, textEx), "\n")
	return res
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return strings.TrimRight(a, "\n") + "\n" + b
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]`)

// stripANSI removes colour codes.
func stripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

// cleanLine removes colour codes and carriage-return redraws (only what is
// visible last remains).
func cleanLine(s string) string {
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = s[i+1:]
	}
	return stripANSI(s)
}

// nameSet keeps distinct names in order, up to a bound.
type nameSet struct {
	max  int
	list []string
	seen map[string]bool
}

func newNameSet(max int) *nameSet { return &nameSet{max: max, seen: map[string]bool{}} }

func (n *nameSet) add(name string) {
	name = strings.TrimSpace(name)
	if name == "" || n.seen[name] || len(n.list) >= n.max {
		return
	}
	n.seen[name] = true
	n.list = append(n.list, name)
}

// countTests counts tests named with "/" for subtests (Go) as go test -v
// prints them: every test and subtest once. A test that never finished
// (state "run") is a failure. order lists names in first-seen order;
// state maps them to "pass", "fail", "skip" or "run". It returns the
// tally and the failing tests in order; a parent that failed only
// through its subtests has the note "1 of 3 subtests failed: b".
func countTests(order []string, state map[string]string) (tally, []failedTest) {
	known := make(map[string]bool, len(order))
	for _, name := range order {
		known[name] = true
	}
	kids := map[string][]string{} // direct subtests, by parent
	badBelow := map[string]bool{}
	for _, name := range order {
		bad := state[name] != "pass" && state[name] != "skip"
		parent := ""
		for i := len(name) - 1; i > 0; i-- {
			if name[i] != '/' {
				continue
			}
			if bad {
				badBelow[name[:i]] = true
			}
			if parent == "" && known[name[:i]] {
				parent = name[:i]
			}
		}
		if parent != "" {
			kids[parent] = append(kids[parent], name)
		}
	}
	var t tally
	var failing []failedTest
	for _, name := range order {
		switch state[name] {
		case "pass":
			t.Passed++
		case "skip":
			t.Skipped++
		default: // fail, or started and never finished
			t.Failed++
			f := failedTest{name: name}
			if badBelow[name] {
				var bad []string
				for _, k := range kids[name] {
					if st := state[k]; st != "pass" && st != "skip" {
						bad = append(bad, strings.TrimPrefix(k, name+"/"))
					}
				}
				f.note = report.SubtestSummary(bad, len(kids[name]))
			}
			failing = append(failing, f)
		}
	}
	return t, failing
}

// failedTest is a failing test of countTests: its name, and for a parent
// that failed through its subtests, which.
type failedTest struct{ name, note string }

// String is the name, with the note in parentheses.
func (f failedTest) String() string {
	if f.note == "" {
		return f.name
	}
	return f.name + " (" + f.note + ")"
}

// ---- go test -json ----

type goEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output and build-fail events (Go 1.24+)
	FailedBuild string
}

type goTest struct {
	state string // run, pass, fail, skip
	out   *boundedBuf
}

type goPackage struct {
	path        string
	tests       map[string]*goTest
	order       []string
	result      string // pass, fail, skip; empty while running
	failedBuild string
	out         *boundedBuf // package-level output
}

type goJSONParser struct {
	seen       bool
	pkgs       map[string]*goPackage
	order      []string
	builds     map[string]*boundedBuf // by ImportPath
	buildOrder []string
	keptFails  int // failed tests whose output is kept
}

const (
	goTestOutMax  = 2 << 10
	goBuildOutMax = 3 << 10
	goMaxBuilds   = 20
)

// line handles one line; false when it is not a test2json event.
func (p *goJSONParser) line(s string) bool {
	var ev goEvent
	if err := json.Unmarshal([]byte(s), &ev); err != nil || ev.Action == "" ||
		(ev.Package == "" && ev.ImportPath == "") {
		return false
	}
	p.seen = true
	if p.pkgs == nil {
		p.pkgs = map[string]*goPackage{}
		p.builds = map[string]*boundedBuf{}
	}
	switch ev.Action {
	case "build-output":
		b := p.builds[ev.ImportPath]
		if b == nil {
			if len(p.builds) >= goMaxBuilds {
				return true
			}
			b = newBoundedBuf(goBuildOutMax)
			p.builds[ev.ImportPath] = b
			p.buildOrder = append(p.buildOrder, ev.ImportPath)
		}
		b.write(ev.Output)
		return true
	case "build-fail":
		return true
	}
	if ev.Package == "" {
		return true
	}
	pkg := p.pkgs[ev.Package]
	if pkg == nil {
		pkg = &goPackage{path: ev.Package, tests: map[string]*goTest{}}
		p.pkgs[ev.Package] = pkg
		p.order = append(p.order, ev.Package)
	}
	if ev.Test == "" {
		switch ev.Action {
		case "output":
			if keepGoOutput(ev.Output) {
				if pkg.out == nil {
					pkg.out = newBoundedBuf(goTestOutMax)
				}
				pkg.out.write(ev.Output)
			}
		case "pass", "fail", "skip":
			pkg.result = ev.Action
			pkg.failedBuild = ev.FailedBuild
		}
		return true
	}
	t := pkg.tests[ev.Test]
	if t == nil {
		t = &goTest{state: "run"}
		pkg.tests[ev.Test] = t
		pkg.order = append(pkg.order, ev.Test)
	}
	switch ev.Action {
	case "output":
		if keepGoOutput(ev.Output) && (t.out != nil || p.keptFails < MaxFailing) {
			if t.out == nil {
				t.out = newBoundedBuf(goTestOutMax)
			}
			t.out.write(ev.Output)
		}
	case "pass", "skip":
		if t.state != "fail" { // with -count=N a failure stays a failure
			t.state = ev.Action
			t.out = nil
		}
	case "fail":
		if t.state != "fail" {
			t.state = "fail"
			if t.out != nil {
				p.keptFails++
			}
		}
	}
	return true
}

// keepGoOutput drops the test framework's progress and result lines
// (the excerpt names each failure itself).
func keepGoOutput(s string) bool {
	s = strings.TrimLeft(s, " ")
	for _, prefix := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- SKIP", "--- FAIL", "PASS\n", "ok  \t"} {
		if strings.HasPrefix(s, prefix) {
			return false
		}
	}
	return true
}

type goFailure struct {
	name   string
	note   string // shown after the name in the excerpt
	output string
}

func (p *goJSONParser) finish() (tally, []goFailure) {
	var total tally
	var failures []goFailure
	usedBuild := map[string]bool{}
	for _, path := range p.order {
		pkg := p.pkgs[path]
		state := make(map[string]string, len(pkg.tests))
		for name, t := range pkg.tests {
			state[name] = t.state
		}
		t, failing := countTests(pkg.order, state)
		total.add(t)
		for _, f := range failing {
			t := pkg.tests[f.name]
			out := t.out.String()
			if t.state == "run" {
				out = "(started but never finished)\n" + out
			}
			if f.note != "" {
				out = f.note + "\n" + out
			}
			failures = append(failures, goFailure{name: path + "." + f.String(), output: out})
		}
		if pkg.result == "fail" && t.Failed == 0 {
			total.Errors++
			f := goFailure{name: path, output: pkg.out.String()}
			if pkg.failedBuild != "" {
				f.note = " [build failed]"
				if strings.Contains(f.output, "[setup failed]") {
					f.note = " [setup failed]"
				}
				if usedBuild[pkg.failedBuild] {
					f.output = "(same build failure as above: " + pkg.failedBuild + ")"
				} else if b := p.builds[pkg.failedBuild]; b != nil {
					usedBuild[pkg.failedBuild] = true
					f.output = b.String()
				}
			}
			failures = append(failures, f)
		}
	}
	return total, failures
}

// goExcerpt renders failures as "--- FAIL: name" followed by their output,
// within budget bytes.
func goExcerpt(failures []goFailure, budget int) string {
	items := make([]excerptItem, len(failures))
	for i, f := range failures {
		items[i] = excerptItem{header: "--- FAIL: " + f.name + f.note, body: strings.TrimRight(f.output, "\n")}
	}
	return writeExcerpt(items, budget, 800)
}

// boundedBuf keeps the first max bytes written to it.
type boundedBuf struct {
	max       int
	b         strings.Builder
	truncated bool
}

func newBoundedBuf(max int) *boundedBuf { return &boundedBuf{max: max} }

func (b *boundedBuf) write(s string) {
	if room := b.max - b.b.Len(); room >= len(s) {
		b.b.WriteString(s)
	} else {
		if room > 0 {
			b.b.WriteString(clip(s, room))
		}
		b.truncated = true
	}
}

func (b *boundedBuf) String() string {
	if b == nil {
		return ""
	}
	if b.truncated {
		return b.b.String() + "\n…"
	}
	return b.b.String()
}

// ---- excerpt of text output ----

var failMarkRE = regexp.MustCompile(`--- FAIL|^\s*not ok\b|^\s*FAIL\b|\bFAILED\b|FAILURES|✖|✗|×|●|^\s*\d+\) |Error|error:|panic:|Traceback|Exception|failing|not found|[Bb]uild failed`)

const (
	excerptLineMax = 400
	excerptBefore  = 3
	excerptTailMax = 4 << 10
)

// excerpter keeps, in bounded memory, the lines around the first failure
// marker and the tail of the output.
type excerpter struct {
	lineNo   int
	before   []string // the last few lines, before a marker is seen
	started  bool
	head     strings.Builder
	headFull bool
	headLast int // line number of the last head line
	tail     []numbered
	tailLen  int
	dropped  bool // lines fell out of tail
}

type numbered struct {
	n int
	s string
}

func (e *excerpter) line(s string) {
	e.lineNo++
	if strings.TrimSpace(s) == "" && !e.started {
		return
	}
	s = clip(s, excerptLineMax)
	if !e.started && failMarkRE.MatchString(s) {
		e.started = true
		for _, b := range e.before {
			e.head.WriteString(b + "\n")
		}
		e.before = nil
	}
	switch {
	case !e.started:
		e.before = append(e.before, s)
		if len(e.before) > excerptBefore {
			e.before = e.before[1:]
		}
	case !e.headFull:
		e.head.WriteString(s + "\n")
		e.headLast = e.lineNo
		if e.head.Len() >= MaxExcerpt*5/8 {
			e.headFull = true
		}
	}
	e.tail = append(e.tail, numbered{e.lineNo, s})
	e.tailLen += len(s) + 1
	for e.tailLen > excerptTailMax && len(e.tail) > 1 {
		e.tailLen -= len(e.tail[0].s) + 1
		e.tail = e.tail[1:]
		e.dropped = true
	}
}

// finish renders the excerpt within budget bytes: the lines from just
// before the first failure marker, then the end of the output.
func (e *excerpter) finish(budget int) string {
	if budget <= 0 {
		return ""
	}
	var b strings.Builder
	if e.started {
		b.WriteString(clip(e.head.String(), budget))
	}
	var tail []string // newest first
	size, first := 0, 0
	cut := false
	for i := len(e.tail) - 1; i >= 0; i-- {
		l := e.tail[i]
		if e.started && l.n <= e.headLast {
			break
		}
		if size+len(l.s)+1 > budget-b.Len()-8 {
			cut = true
			break
		}
		size += len(l.s) + 1
		tail = append(tail, l.s)
		first = l.n
	}
	if len(tail) > 0 {
		gap := cut || e.dropped
		if e.started {
			gap = first > e.headLast+1
		}
		if gap {
			b.WriteString("…\n")
		}
		for i := len(tail) - 1; i >= 0; i-- {
			b.WriteString(tail[i] + "\n")
		}
	}
	return clip(b.String(), budget)
}
