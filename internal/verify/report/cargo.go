package report

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Cargo parses the output of `cargo test` (libtest's pretty format, for one
// or several test binaries and the doc-tests) and of `cargo nextest run`.
//
// libtest: "test path::name ... ok|FAILED|ignored[, reason]" lines are the
// cases ("- should panic" is dropped from the name; doc-tests keep
// "src/lib.rs - add (line 5)"). Suite is the binary as cargo announces it
// ("src/lib.rs" for unittests, "tests/api.rs", "Doc-tests demo"). The
// "---- name stdout ----" blocks of the failures section are the messages;
// their "panicked at src/lib.rs:12:5" gives File/Line. Doc-tests are at
// the "(line N)" of their names, whatever their panics and compile errors
// say (they point into the snippet as compiled: "src/lib.rs:4:1" for its
// fourth line, or a temporary file); their messages start with what the
// program printed on stderr, rustdoc's "Test executable failed (exit
// status: 101)." last. A test printed as started ("test x ... " with
// --test-threads=1) with no result counts as failed. A binary that stops reporting before its
// "test result:" line (a crash: SIGSEGV, abort, stack overflow) adds one
// Error case named by the suite, with cargo's "process didn't exit
// successfully" line. Compile errors ("error[E0308]: …" up to "error: could
// not compile `demo` (lib test)") are one Error case named "demo (lib
// test)" with Kind KindCollection, located at the first " --> src/lib.rs:3:5".
//
// nextest: "PASS [ 0.003s] crate tests::name" status lines (also FAIL, SKIP,
// FLAKY, LEAK, TIMEOUT, SIGSEGV, ABORT, TRY n …, with the newer "(1/10)"
// counter); Name is the test name and Suite the binary id; the output
// printed after a failing line is its message. Repeats (retries, the recap
// after "Summary") update one case: the last attempt wins before the
// summary; the recap never changes a status.
//
// Counts come from test lines, never from "test result:" or "Summary".
// Repeated names get " #2", " #3", …. It fails (nil Report) when nothing
// of either format is found; a binary still running at the end of the input
// makes the error wrap ErrTruncated.
func Cargo(r io.Reader) (*Report, error) {
	p := &cargoParser{capture: -1, nxCapture: -1, byKey: map[string]int{}}
	readErr := readLines(r, p.line)
	if !p.seen {
		if readErr != nil {
			return nil, fmt.Errorf("cargo: %w", readErr)
		}
		return nil, errNotFormat(FormatCargo, "no libtest or nextest lines")
	}
	rep, truncated := p.finish()
	switch {
	case truncated != "":
		return rep, fmt.Errorf("cargo: %w: %s", ErrTruncated, truncated)
	case readErr != nil:
		return rep, fmt.Errorf("cargo: %w", readErr)
	}
	return rep, nil
}

type cargoCase struct {
	Case
	msg     *msgBuf
	started bool // printed as started, no result yet
	locSet  bool
}

type cargoBin struct {
	suite    string
	expected int
	results  int
	done     bool // "test result:" seen
	crashed  bool // "error: test failed" before "test result:"
	crashMsg string
	cases    []int
}

type cargoParser struct {
	seen      bool
	cases     []cargoCase
	byKey     map[string]int // suite + "\x00" + name
	suite     string
	bin       *cargoBin
	capture   int // case receiving a "---- name stdout ----" block
	inFail    bool
	nxCapture int  // nextest case receiving the output after its status line
	nxDiscard bool // output of a test whose output was already kept
	nxSummary bool
	compile   *msgBuf
	compiling bool
	compLoc   loc
	truncated []string
}

var (
	cargoRunningRE = regexp.MustCompile(`^\s*Running (?:unittests )?(\S+\.rs) \(\S+\)\s*$|^\s*Running (\S*target[/\\]\S+)\s*$`)
	cargoDocRE     = regexp.MustCompile(`^\s*Doc-tests (\S+)\s*$`)
	cargoRunNRE    = regexp.MustCompile(`^running (\d+) tests?\s*$`)
	cargoTestRE    = regexp.MustCompile(`^test (.+?) \.\.\.(?: (.*))?$`)
	cargoResultRE  = regexp.MustCompile(`^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed`)
	cargoStdoutRE  = regexp.MustCompile(`^---- (.+) (?:stdout|stderr) ----\s*$`)
	cargoPanicRE   = regexp.MustCompile(`panicked at `)
	cargoRsLocRE   = regexp.MustCompile(`((?:[A-Za-z]:)?[^\s:'"()]+\.rs):(\d+):(\d+)`)
	cargoDocNameRE = regexp.MustCompile(`^(\S+\.rs) - .*\(line (\d+)\)`)
	cargoErrorRE   = regexp.MustCompile(`^error(?:\[E\d+\])?: `)
	cargoCompileRE = regexp.MustCompile("^error: could not compile `([^`]+)`(?: \\(([^)]+)\\))?")
	cargoArrowRE   = regexp.MustCompile(`^\s*--> ([^\s:]+):(\d+):\d+`)
	cargoTestFail  = regexp.MustCompile(`^error: (?:test|doctest) failed\b`)
	cargoExitRE    = regexp.MustCompile(`process didn't exit successfully: .*\((.+)\)\s*$`)

	nxStatusRE  = regexp.MustCompile(`^\s*((?:TRY \d+ )?[A-Z][A-Z0-9+-]*(?: \+ [A-Z]+)?(?: \d+/\d+)?) \[\s*(>?)\s*([\d.]*)s?\s*\]\s+(?:\(\s*\d+/\s*\d+\)\s+|\[\d+(?:/\d+)?\]\s+)?(\S+) (\S.*?)\s*$`)
	nxStartRE   = regexp.MustCompile(`^\s*Starting \d+ tests? across \d+ binar`)
	nxSummaryRE = regexp.MustCompile(`^\s*Summary \[`)
	nxSepRE     = regexp.MustCompile(`^\s*[─-]{8,}\s*$`)
	// nxNoiseRE: libtest's own framing inside nextest's captured output.
	nxNoiseRE = regexp.MustCompile(`^\s*(?:running \d+ tests?|test \S.* \.\.\. [A-Za-z]+|failures:|test result: .*|note: run with ` + "`RUST_BACKTRACE=1`" + `.*)\s*$`)
)

const cargoMaxCases = 1 << 21

// nxStatus maps a nextest status word to a Status; ok is false for lines
// that are not a test's result (START, RETRY, SLOW with ">", SETUP…).
func nxStatus(word string, slowMark bool) (Status, bool) {
	w := word
	if strings.HasPrefix(w, "TRY ") {
		if f := strings.Fields(w); len(f) >= 3 {
			w = strings.Join(f[2:], " ")
		}
	}
	if i := strings.IndexByte(w, ' '); i > 0 && (strings.HasPrefix(w, "FLAKY") || strings.HasPrefix(w, "RETRY")) {
		w = w[:i]
	}
	switch {
	case w == "PASS", w == "LEAK", w == "TIMEOUT-PASS", w == "FLAKY", w == "SLOW + LEAK", w == "SLOW+TMPASS":
		return Passed, true
	case w == "SLOW":
		return Passed, !slowMark
	case w == "SKIP":
		return Skipped, true
	case w == "FAIL", w == "FAIL + LEAK", w == "XFAIL", w == "LEAK-FAIL", w == "TIMEOUT", w == "ABORT",
		w == "FL+LK", w == "LKFAIL", w == "TMT", strings.HasPrefix(w, "SIG"):
		return Failed, true
	}
	return "", false
}

func (p *cargoParser) line(raw string) {
	s := cleanLine(raw)
	t := strings.TrimSpace(s)

	// nextest status lines come first: its captured output may contain
	// libtest lines, which must not count twice.
	if m := nxStatusRE.FindStringSubmatch(s); m != nil {
		if st, ok := nxStatus(m[1], m[2] == ">"); ok {
			p.nextest(st, m[3], m[4], m[5])
			return
		}
	}
	if nxStartRE.MatchString(s) {
		p.seen = true
		p.nxCapture = -1
		return
	}
	if nxSummaryRE.MatchString(s) {
		p.seen = true
		p.nxSummary = true
		p.nxCapture = -1
		return
	}
	if p.nxCapture >= 0 || p.nxDiscard {
		if nxSepRE.MatchString(s) || strings.HasPrefix(t, "Cancelling") || strings.HasPrefix(t, "error: test run failed") {
			p.nxCapture = -1
			p.nxDiscard = false
			return
		}
		if p.nxCapture >= 0 && !nxNoiseRE.MatchString(s) && t != p.cases[p.nxCapture].Name {
			p.output(p.nxCapture, s)
		}
		return
	}

	// libtest's failures section.
	if p.capture >= 0 {
		if t == "failures:" || cargoStdoutRE.MatchString(s) || cargoResultRE.MatchString(s) ||
			cargoRunNRE.MatchString(s) || cargoRunningRE.MatchString(s) || cargoTestFail.MatchString(s) {
			p.capture = -1
		} else {
			p.output(p.capture, s)
			return
		}
	}
	switch {
	case cargoRunningRE.MatchString(s):
		p.seen = true
		p.endBin()
		p.endCompile()
		m := cargoRunningRE.FindStringSubmatch(s)
		p.suite = m[1] + m[2]
		p.inFail = false
		return
	case cargoDocRE.MatchString(s):
		p.seen = true
		p.endBin()
		p.endCompile()
		p.suite = "Doc-tests " + cargoDocRE.FindStringSubmatch(s)[1]
		p.inFail = false
		return
	case cargoRunNRE.MatchString(s):
		p.seen = true
		p.endBin()
		p.endCompile()
		n, _ := strconv.Atoi(cargoRunNRE.FindStringSubmatch(s)[1])
		p.bin = &cargoBin{suite: p.suite, expected: n}
		p.inFail = false
		return
	case cargoResultRE.MatchString(s):
		p.seen = true
		if p.bin != nil {
			p.bin.done = true
		}
		p.inFail = false
		return
	case t == "failures:":
		p.inFail = true
		return
	}
	if m := cargoStdoutRE.FindStringSubmatch(s); m != nil && p.bin != nil {
		if i, ok := p.byKey[p.bin.suite+"\x00"+cargoTestName(m[1])]; ok {
			p.capture = i
		}
		return
	}
	if m := cargoTestRE.FindStringSubmatch(s); m != nil && !p.inFail {
		p.seen = true
		p.libtest(m[1], m[2])
		return
	}
	if cargoTestFail.MatchString(s) {
		if p.bin != nil && !p.bin.done {
			p.bin.crashed = true
		}
		return
	}
	if m := cargoExitRE.FindStringSubmatch(s); m != nil {
		if b := p.bin; b != nil && !b.done && b.crashMsg == "" {
			b.crashed = true
			b.crashMsg = t
		}
		return
	}
	p.compileLine(s, t)
}

// compileLine collects compiler errors until "could not compile".
func (p *cargoParser) compileLine(s, t string) {
	if m := cargoCompileRE.FindStringSubmatch(s); m != nil {
		p.seen = true
		name := m[1]
		if m[2] != "" {
			name += " (" + m[2] + ")"
		}
		c := Case{Name: name, Suite: m[1], Status: Error, Kind: KindCollection, File: p.compLoc.file, Line: p.compLoc.line}
		if p.compile != nil && !p.compile.empty() {
			c.Message = p.compile.String()
		} else {
			c.Message = t
		}
		p.addCase(cargoCase{Case: c, locSet: true}, "")
		p.endCompile()
		return
	}
	switch {
	case cargoErrorRE.MatchString(s) && !strings.Contains(s, "targets failed") && !strings.Contains(s, "target failed"):
		if p.compile == nil {
			p.compile = &msgBuf{}
		}
		p.compiling = true
	case strings.HasPrefix(s, "warning") || strings.HasPrefix(t, "Compiling ") || strings.HasPrefix(t, "Finished "):
		p.compiling = false
		return
	}
	if !p.compiling {
		return
	}
	p.compile.addLine(s)
	if !p.compLoc.ok() {
		if m := cargoArrowRE.FindStringSubmatch(s); m != nil && !ignoredLoc(m[1]) {
			p.compLoc = loc{m[1], atoi(m[2])}
		}
	}
}

func (p *cargoParser) endCompile() {
	p.compile = nil
	p.compiling = false
	p.compLoc = loc{}
}

// cargoDocExitRE is the first line of a doc-test whose program failed.
var cargoDocExitRE = regexp.MustCompile(`^Test executable failed \(.*\)\.?$`)

// cargoDocMessage puts what a failing doc-test's program printed on
// stderr (its panic) first, then its stdout, then rustdoc's "Test
// executable failed (exit status: 101)." that comes first: that line, and
// the "stderr:" label, say nothing about what failed.
func cargoDocMessage(msg string) string {
	first, rest, _ := strings.Cut(msg, "\n")
	if !cargoDocExitRE.MatchString(strings.TrimSpace(first)) {
		return msg
	}
	var out, errOut []string
	sec := &errOut // text before any label
	for l := range strings.SplitSeq(rest, "\n") {
		switch strings.TrimSpace(l) {
		case "stdout:":
			sec = &out
			continue
		case "stderr:":
			sec = &errOut
			continue
		}
		*sec = append(*sec, l)
	}
	body := strings.TrimSpace(strings.Join(errOut, "\n"))
	if o := strings.TrimSpace(strings.Join(out, "\n")); o != "" {
		if body != "" {
			body += "\n\n"
		}
		body += "stdout:\n" + o
	}
	if body == "" {
		return msg
	}
	return clip(body+"\n\n"+strings.TrimSpace(first), MaxMessage)
}

// cargoTestName drops libtest's " - should panic" suffix.
func cargoTestName(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSuffix(s, " - should panic")
}

func (p *cargoParser) addCase(c cargoCase, key string) int {
	if len(p.cases) >= cargoMaxCases {
		return -1
	}
	i := len(p.cases)
	p.cases = append(p.cases, c)
	if key != "" {
		p.byKey[key] = i
	}
	return i
}

// libtest handles "test name ... result".
func (p *cargoParser) libtest(name, result string) {
	name = cargoTestName(name)
	if name == "" {
		return
	}
	if p.bin == nil { // test lines without "running N tests" (cut output)
		p.bin = &cargoBin{suite: p.suite, expected: -1}
	}
	b := p.bin
	key := b.suite + "\x00" + name
	result = strings.TrimSpace(result)
	var st Status
	reason := ""
	switch {
	case result == "ok" || strings.HasPrefix(result, "ok <") || strings.HasPrefix(result, "bench:"):
		st = Passed
	case result == "FAILED" || strings.HasPrefix(result, "FAILED <"):
		st = Failed
	case result == "ignored" || strings.HasPrefix(result, "ignored,"):
		st = Skipped
		reason = strings.TrimSpace(strings.TrimPrefix(result, "ignored"))
		reason = strings.TrimSpace(strings.TrimPrefix(reason, ","))
	default: // started, or its result is mixed with printed output
		if strings.Contains(result, "error: test failed") { // crashed while running it
			b.crashed = true
		}
		if _, ok := p.byKey[key]; !ok {
			i := p.addCase(cargoCase{Case: Case{Name: name, Suite: b.suite}, started: true}, key)
			if i >= 0 {
				b.cases = append(b.cases, i)
			}
		}
		return
	}
	var dur string
	if i := strings.Index(result, "<"); i >= 0 {
		dur = strings.Trim(result[i:], "<>s ")
	}
	i, ok := p.byKey[key]
	if !ok || !p.cases[i].started {
		i = p.addCase(cargoCase{Case: Case{Name: name, Suite: b.suite}}, key)
		if i < 0 {
			return
		}
		b.cases = append(b.cases, i)
	}
	c := &p.cases[i]
	c.started = false
	c.Status = st
	c.Duration = parseSeconds(dur)
	if st == Skipped && reason != "" {
		c.Message = clip(reason, MaxMessage)
	}
	if m := cargoDocNameRE.FindStringSubmatch(name); m != nil {
		// A doc-test is where its name says: its panics point into the
		// snippet as compiled ("panicked at src/lib.rs:4:1" for the
		// fourth line of the generated program, or a rustdoctest file).
		c.File, c.Line = m[1], atoi(m[2])
		c.locSet = true
	}
	b.results++
}

// output adds a line of a failing test's output.
func (p *cargoParser) output(i int, s string) {
	c := &p.cases[i]
	if c.msg == nil {
		if strings.TrimSpace(s) == "" {
			return // leading blank lines
		}
		c.msg = &msgBuf{}
	}
	c.msg.addLine(s)
	if c.locSet || !cargoPanicRE.MatchString(s) {
		return
	}
	tail := s[cargoPanicRE.FindStringIndex(s)[1]:]
	all := cargoRsLocRE.FindAllStringSubmatch(tail, -1)
	if len(all) == 0 {
		return
	}
	m := all[len(all)-1]
	if strings.Contains(m[1], "rustdoctest") && c.File != "" {
		c.locSet = true // keep the doc-test's own "(line N)"
		return
	}
	c.File, c.Line = strings.TrimPrefix(m[1], "./"), atoi(m[2])
	c.locSet = true
}

// nextest handles one status line.
func (p *cargoParser) nextest(st Status, dur, binary, name string) {
	p.seen = true
	key := "nextest\x00" + binary + "\x00" + name
	i, ok := p.byKey[key]
	if !ok {
		i = p.addCase(cargoCase{Case: Case{Name: name, Suite: binary, Status: st}}, key)
		if i < 0 {
			p.nxCapture = -1
			return
		}
	} else if !p.nxSummary {
		p.cases[i].Status = st
	}
	c := &p.cases[i]
	if d := parseSeconds(dur); d > 0 && (!ok || !p.nxSummary) {
		c.Duration = d
	}
	p.nxCapture = -1
	p.nxDiscard = false
	if c.Status != Failed {
		p.nxDiscard = st == Failed // a failed attempt of a test that passed in the end
		return
	}
	switch {
	case p.nxSummary && c.msg != nil && !c.msg.empty():
		p.nxDiscard = true // printed again after the summary (failure-output=immediate-final)
	default:
		if ok && c.msg != nil && !c.msg.empty() {
			c.msg.addLine("") // a retry's output follows the previous attempt's
		}
		p.nxCapture = i
	}
}

// endBin closes the current libtest binary.
func (p *cargoParser) endBin() {
	b := p.bin
	p.bin = nil
	p.capture = -1
	if b == nil || b.done {
		return
	}
	unfinished := 0
	for _, i := range b.cases {
		if p.cases[i].started {
			unfinished++
		}
	}
	switch {
	case b.crashed:
		if unfinished == 0 {
			msg := b.crashMsg
			if msg == "" {
				msg = "the test binary stopped before its \"test result:\" line"
			}
			if b.expected >= 0 {
				msg = fmt.Sprintf("%s\n%d of %d tests reported a result", msg, b.results, b.expected)
			}
			p.addCase(cargoCase{Case: Case{Name: b.suite, Suite: b.suite, Status: Error, Message: msg}}, "")
			return
		}
		for _, i := range b.cases {
			if c := &p.cases[i]; c.started && c.msg == nil && b.crashMsg != "" {
				c.msg = &msgBuf{}
				c.msg.addLine(b.crashMsg)
			}
		}
	default:
		label := b.suite
		if label == "" {
			label = "test binary"
		}
		p.truncated = append(p.truncated, fmt.Sprintf("%s: %d of %d tests reported, no \"test result:\" line", label, b.results, b.expected))
	}
}

func (p *cargoParser) finish() (*Report, string) {
	p.endBin()
	rep := &Report{Format: FormatCargo}
	for i := range p.cases {
		c := p.cases[i].Case
		if p.cases[i].started {
			c.Status = Failed
			note := "(test started but never finished: crash or truncated output)"
			if m := p.cases[i].msg; m != nil {
				note += "\n" + m.String()
			}
			c.Message = clip(note, MaxMessage)
		} else if c.Status == Failed {
			c.Message = p.cases[i].msg.String()
			if strings.HasPrefix(c.Suite, "Doc-tests ") {
				c.Message = cargoDocMessage(c.Message)
			}
		}
		if c.Status == "" {
			c.Status = Failed
		}
		rep.add(c)
	}
	uniquify(rep.Cases)
	return rep, strings.Join(p.truncated, "; ")
}
