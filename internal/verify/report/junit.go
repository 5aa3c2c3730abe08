package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// JUnit parses JUnit XML: a <testsuites> or bare <testsuite> root, nested
// suites, and several documents concatenated (cat TEST-*.xml). Every
// <testcase> is one case; the suites' count attributes are ignored, except
// that a suite claiming failures or errors while holding no testcase at all
// (a test file that could not even load) becomes one Error case named by the
// suite.
//
// Status: <failure> → failed; else <error> → error; else <skipped> →
// skipped (but error when ctest says the test's program does not exist,
// which ctest counts as failed); else a status/result attribute (ctest
// status="notrun", gtest result="skipped"/"suppressed", "fail", "error");
// else passed. Surefire's <flakyFailure>/<flakyError> (passed on a rerun)
// do not fail a test.
//
// Collection errors (Kind KindCollection, Status Error): pytest's
// <error message="collection failure"> (a module that does not import,
// named by its path and located in it), vitest's testcase named by its
// own file (a test file that failed to load: named by the file), and a
// suite that claims failures but holds no testcase.
//
// Naming, by producer (detected from the document) or by the shape of the
// classname:
//
//	pytest (suite "pytest", or a file="….py" attribute): the pytest node id,
//	  "tests/test_mod.py::TestClass::test_name[param]". The path comes from
//	  the file attribute (junit_family=xunit1) or, without it (xunit2, the
//	  default), from the dotted classname: its last test_*/*_test component
//	  ends the module path, the capitalised components after it are classes.
//	  When neither works: classname + "." + name. Doctests get pytest's
//	  ids too: "README.rst::README.rst", "docs/usage.txt::usage.txt"
//	  (--doctest-glob), "pkg/mod.py::pkg.mod.func" (--doctest-modules).
//	vitest (root "vitest tests", or a classname that is a file path):
//	  "src/a.test.ts > describe > test", i.e. classname + " > " + name.
//	jest-junit (root "jest tests"), ctest, and any producer repeating the
//	  classname in the name: the name alone when it equals or starts with the
//	  classname ("Calculator adds numbers"), else classname + " > " + name.
//	JVM (Surefire, Failsafe, Gradle; a dotted identifier classname):
//	  "com.acme.FooTest.testBar", with Gradle/JUnit 5's trailing "()" removed.
//	other: classname + " > " + name, or the name alone without a classname.
//
// Names are made unique by appending " #2", " #3", … to repeats, in document
// order. Suite is the innermost <testsuite> name (for pytest and vitest the
// test file, for JVM the class). File/Line: a file/line attribute (pytest's 0-based
// line is made 1-based), overridden for failures by the failure text's own
// location: the JVM stack frame in the test class, the pytest traceback
// line in the test file, else the first "file:line" that is not in a
// dependency or runtime; system-out/err is searched last (ctest). Message:
// the failure's type and message attribute, its text, then system-out and
// system-err, bounded by MaxMessage; for a pytest doctest it starts with
// the failing example and what it expected and got ("doctest failed: >>>
// add(2, 2)", "Expected: 5", "Got: 4"), before pytest's numbered source
// lines. Skipped cases carry their reason.
//
// It fails (nil Report) when no <testsuites>/<testsuite> element is found.
// XML that ends or breaks mid-way yields the cases read so far and an error
// wrapping ErrTruncated.
func JUnit(r io.Reader) (*Report, error) {
	p := newJUnitParser()
	san := &xmlSanitizer{r: r}
	err := p.parse(san)
	if san.err != nil && san.err != io.EOF { // the reader failed, not the XML
		err = san.err
		if !p.rootSeen {
			return nil, fmt.Errorf("junit: %w", err)
		}
		p.closeAll()
		uniquify(p.rep.Cases)
		return p.rep, fmt.Errorf("junit: %w", err)
	}
	if !p.rootSeen {
		why := "no <testsuites> or <testsuite> element"
		if err != nil {
			why = err.Error()
		}
		return nil, errNotFormat(FormatJUnit, why)
	}
	rep := p.rep
	uniquify(rep.Cases)
	if err != nil {
		return rep, fmt.Errorf("junit: %w: %v", ErrTruncated, err)
	}
	return rep, nil
}

// JUnitFiles parses several JUnit documents (Surefire writes one file per
// class) and merges them into one report with unique names. A document that
// fails to parse does not hide the others: the report holds every case read
// and the error joins the documents' errors (errors.Is(err, ErrTruncated)
// works). It fails (nil Report) only when no document is JUnit XML.
func JUnitFiles(readers ...io.Reader) (*Report, error) {
	rep := &Report{Format: FormatJUnit}
	var errs []error
	ok := 0
	for i, r := range readers {
		if r == nil {
			continue
		}
		one, err := JUnit(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i+1, err))
		}
		if one == nil {
			continue
		}
		ok++
		rep.Cases = append(rep.Cases, one.Cases...)
		rep.Passed += one.Passed
		rep.Failed += one.Failed
		rep.Skipped += one.Skipped
		rep.Errors += one.Errors
	}
	if ok == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	uniquify(rep.Cases)
	return rep, errors.Join(errs...)
}

type junitProducer int

const (
	prodUnknown junitProducer = iota
	prodPytest
	prodJest
	prodVitest
)

type junitSuite struct {
	name    string
	depth   int
	cases   int // testcases inside, nested suites included
	claimed int // failures + errors attributes
	sysErr  msgBuf
}

type junitCase struct {
	depth      int
	classname  string
	name       string
	file       string
	line       int
	time       string
	statusAttr string
	failure    bool
	errored    bool
	skipped    bool
	skipMsg    string
	msg        msgBuf
	out        msgBuf
	failLoc    loc    // location found in failure/error text
	attrText   string // what msg holds from a failure's attributes alone, "" once text follows
	textSeen   bool
	failText   string // the failure's text (its start), or its message attribute
	collection bool   // pytest: <error message="collection failure">
	outLoc     loc
	suite      string
}

// capture kinds for text inside a testcase.
const (
	capNone = iota
	capFailure
	capSkipped
	capOut
)

type junitParser struct {
	rep      *Report
	rootSeen bool
	producer junitProducer
	stack    []string // element local names
	capStack []int    // capture kind per element depth
	suites   []*junitSuite
	cur      *junitCase
}

func newJUnitParser() *junitParser {
	return &junitParser{rep: &Report{Format: FormatJUnit}}
}

const maxXMLDepth = 256

func (p *junitParser) parse(r io.Reader) error {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = charsetReader
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if len(p.stack) > 0 {
				p.closeAll()
				return errors.New("unexpected EOF")
			}
			return nil
		}
		if err != nil {
			if p.rootSeen {
				p.closeAll()
			}
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(p.stack) == 0 {
				if t.Name.Local != "testsuites" && t.Name.Local != "testsuite" {
					if p.rootSeen {
						return nil // something else follows the document(s)
					}
					return fmt.Errorf("root element is <%s>", t.Name.Local)
				}
				p.rootSeen = true
			}
			if len(p.stack) >= maxXMLDepth {
				p.closeAll()
				return errors.New("elements nested too deep")
			}
			p.start(t)
		case xml.EndElement:
			if len(p.stack) == 0 {
				continue
			}
			p.end()
		case xml.CharData:
			if p.cur != nil && len(p.capStack) > 0 {
				p.text(p.capStack[len(p.capStack)-1], string(t))
			} else if len(p.suites) > 0 && len(p.stack) > 0 && p.stack[len(p.stack)-1] == "system-err" {
				p.suites[len(p.suites)-1].sysErr.addText(string(t))
			}
		}
	}
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (p *junitParser) start(t xml.StartElement) {
	name := t.Name.Local
	depth := len(p.stack)
	p.stack = append(p.stack, name)
	capKind := capNone
	if len(p.capStack) > 0 {
		capKind = p.capStack[len(p.capStack)-1]
	}
	switch name {
	case "testsuites":
		if depth == 0 {
			switch n := strings.ToLower(attr(t, "name")); {
			case strings.Contains(n, "pytest"):
				p.producer = prodPytest
			case n == "jest tests":
				p.producer = prodJest
			case n == "vitest tests":
				p.producer = prodVitest
			}
		}
	case "testsuite":
		if p.cur != nil {
			break
		}
		s := &junitSuite{name: attr(t, "name"), depth: depth}
		if s.name == "pytest" && p.producer == prodUnknown {
			p.producer = prodPytest
		}
		s.claimed = atoi(strings.TrimSpace(attr(t, "failures"))) + atoi(strings.TrimSpace(attr(t, "errors")))
		p.suites = append(p.suites, s)
	case "testcase":
		if p.cur != nil {
			break // a testcase inside a testcase: its content is the outer one's
		}
		c := &junitCase{
			depth:      depth,
			classname:  attr(t, "classname"),
			name:       attr(t, "name"),
			file:       attr(t, "file"),
			line:       atoi(strings.TrimSpace(attr(t, "line"))),
			time:       attr(t, "time"),
			statusAttr: strings.ToLower(attr(t, "status") + " " + attr(t, "result")),
		}
		if strings.HasSuffix(c.file, ".py") && p.producer == prodUnknown {
			p.producer = prodPytest
		}
		if len(p.suites) > 0 {
			c.suite = p.suites[len(p.suites)-1].name
		}
		p.cur = c
		capKind = capNone
	case "failure", "error":
		if p.cur == nil {
			break
		}
		if name == "failure" {
			p.cur.failure = true
		} else {
			p.cur.errored = true
		}
		msg, typ := attr(t, "message"), attr(t, "type")
		if name == "error" && msg == "collection failure" {
			p.cur.collection = true
		}
		added := ""
		switch {
		case typ != "" && msg != "" && !strings.HasPrefix(msg, typ):
			added = typ + ": " + msg
		case msg != "":
			added = msg
		case typ != "":
			added = typ
		}
		if p.cur.msg.empty() {
			p.cur.attrText = clip(added, maxFailText)
		} else {
			p.cur.attrText = ""
		}
		p.cur.msg.addText(added)
		if p.cur.failText == "" {
			p.cur.failText = clip(msg, maxFailText)
		}
		if !p.cur.failLoc.ok() && msg != "" {
			p.cur.failLoc = p.locate(msg)
		}
		capKind = capFailure
	case "skipped":
		if p.cur == nil {
			break
		}
		p.cur.skipped = true
		if m := attr(t, "message"); m != "" && p.cur.skipMsg == "" {
			p.cur.skipMsg = clip(m, MaxMessage)
		}
		capKind = capSkipped
	case "system-out", "system-err":
		if p.cur == nil {
			break
		}
		capKind = capOut
	case "flakyFailure", "flakyError", "rerunFailure", "rerunError", "properties", "property":
		capKind = capNone
	}
	p.capStack = append(p.capStack, capKind)
}

// text receives character data inside the current testcase.
func (p *junitParser) text(kind int, s string) {
	c := p.cur
	switch kind {
	case capFailure:
		if strings.TrimSpace(s) == "" {
			return
		}
		// The text usually repeats the message attribute as its first
		// line, or whole (pytest's doctests).
		t := strings.TrimSpace(s)
		switch {
		case c.msg.lines == 1 && !c.msg.headFull && strings.HasPrefix(t, strings.TrimSpace(string(c.msg.head))):
			c.msg = msgBuf{}
		case c.attrText != "" && strings.HasPrefix(t, strings.TrimSpace(c.attrText)):
			c.msg = msgBuf{}
		}
		c.attrText = ""
		if !c.textSeen {
			c.textSeen = true
			c.failText = clip(s, maxFailText)
		}
		c.msg.addText(strings.Trim(s, "\n"))
		if !c.failLoc.ok() {
			c.failLoc = p.locate(s)
		}
	case capSkipped:
		if c.skipMsg == "" {
			c.skipMsg = clip(strings.TrimSpace(s), MaxMessage)
		}
	case capOut:
		if strings.TrimSpace(s) == "" {
			return
		}
		c.out.addText(strings.Trim(s, "\n"))
		if !c.outLoc.ok() {
			c.outLoc = findLoc(s)
		}
	}
}

func (p *junitParser) end() {
	depth := len(p.stack) - 1
	name := p.stack[depth]
	p.stack = p.stack[:depth]
	p.capStack = p.capStack[:len(p.capStack)-1]
	if p.cur != nil && depth == p.cur.depth && name == "testcase" {
		p.finishCase()
		return
	}
	if p.cur == nil && name == "testsuite" && len(p.suites) > 0 && p.suites[len(p.suites)-1].depth == depth {
		p.finishSuite()
	}
}

// closeAll finishes what is open when the input stops.
func (p *junitParser) closeAll() {
	if p.cur != nil {
		p.finishCase()
	}
	for len(p.suites) > 0 {
		p.finishSuite()
	}
	p.stack = p.stack[:0]
	p.capStack = p.capStack[:0]
}

func (p *junitParser) finishSuite() {
	s := p.suites[len(p.suites)-1]
	p.suites = p.suites[:len(p.suites)-1]
	if len(p.suites) > 0 {
		p.suites[len(p.suites)-1].cases += s.cases
	}
	if s.cases == 0 && s.claimed > 0 {
		name := s.name
		if name == "" {
			name = "(test suite)"
		}
		msg := "the suite reports failures or errors but holds no test case (it could not run)"
		if !s.sysErr.empty() {
			msg += "\n" + s.sysErr.String()
		}
		l := findLoc(s.sysErr.String())
		p.rep.add(Case{Name: name, Suite: name, Status: Error, File: l.file, Line: l.line, Message: clip(msg, MaxMessage), Kind: KindCollection})
	}
}

func (p *junitParser) finishCase() {
	c := p.cur
	p.cur = nil
	for _, s := range p.suites {
		s.cases++
	}
	out := Case{Duration: parseSeconds(c.time)}
	out.Name, out.Suite = p.caseName(c)
	switch {
	case c.failure:
		out.Status = Failed
	case c.errored:
		out.Status = Error
	case c.skipped && ctestNotBuilt(c.skipMsg):
		// ctest: the test's program does not exist (not built); ctest
		// counts it as failed ("Not Run").
		out.Status = Error
		c.msg.addText(c.skipMsg)
	case c.skipped:
		out.Status = Skipped
	default:
		out.Status = statusFromAttr(c.statusAttr)
	}
	switch {
	case p.producer == prodPytest && c.errored && c.collection:
		// "ERROR collecting tests/test_a.py": the module did not import
		// (an error, whatever else the case holds).
		out.Status = Error
		out.Kind = KindCollection
	case (p.producer == prodVitest || isPathLike(c.classname)) && strings.TrimSpace(c.name) == strings.TrimSpace(c.classname) &&
		(c.failure || c.errored):
		// vitest: a test file that failed to load is a testcase named
		// by the file, in its own suite.
		out.Name, out.Suite = strings.TrimSpace(c.classname), strings.TrimSpace(c.classname)
		out.Status = Error
		out.Kind = KindCollection
	}
	// Location: the attributes, then where the failure text says.
	if c.file != "" {
		out.File = c.file
		if c.line > 0 {
			out.Line = c.line
			if p.producer == prodPytest {
				out.Line++ // pytest writes 0-based line numbers
			}
		}
	} else if p.producer == prodVitest || isPathLike(c.classname) {
		out.File = c.classname
	}
	switch out.Status {
	case Failed, Error:
		l := c.failLoc
		if !l.ok() {
			l = c.outLoc
		}
		if l.ok() {
			out.File, out.Line = l.file, l.line
		}
		if out.Kind == KindCollection && c.file != "" && (!l.ok() || ignoredLoc(l.file)) {
			out.File, out.Line = c.file, 0 // the module, rather than pytest's own frames
		}
		m := &c.msg
		if !c.out.empty() {
			if m.empty() {
				m = &c.out
			} else if !m.headFull {
				m.addText(c.out.String())
			}
		}
		out.Message = m.String()
		if p.producer == prodPytest {
			if head := doctestHead(c.failText); head != "" {
				out.Message = clip(head+"\n\n"+out.Message, MaxMessage)
			}
		}
	case Skipped:
		out.Message = c.skipMsg
	}
	p.rep.add(out)
}

// ctestNotBuilt reports whether a ctest skip message says the test's
// program is missing.
func ctestNotBuilt(msg string) bool {
	return strings.Contains(msg, "Unable to find executable") || strings.Contains(msg, "Could not find executable")
}

func statusFromAttr(s string) Status {
	for _, f := range strings.Fields(s) {
		switch f {
		case "notrun", "skipped", "skip", "disabled", "ignored", "suppressed", "pending":
			return Skipped
		case "fail", "failed", "failure":
			return Failed
		case "error", "errored":
			return Error
		}
	}
	return Passed
}
