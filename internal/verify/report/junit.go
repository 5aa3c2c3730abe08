package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
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

// locate finds where the current case failed in a failure text.
func (p *junitParser) locate(s string) loc {
	c := p.cur
	if c.classname != "" {
		for _, m := range javaFrameRE.FindAllStringSubmatch(s, 200) {
			fn := m[1]
			if i := strings.LastIndexByte(fn, '/'); i >= 0 { // "app//com.acme.X.m", "java.base/java.lang.X.m"
				fn = fn[i+1:]
			}
			if strings.HasPrefix(fn, c.classname+".") || strings.HasPrefix(fn, c.classname+"$") {
				return loc{m[2], atoi(m[3])}
			}
		}
	}
	if c.file != "" {
		for _, m := range locRE.FindAllStringSubmatch(s, 200) {
			if sameFile(m[1], c.file) {
				return loc{m[1], atoi(m[2])}
			}
		}
		// Python's own frames: `File "/x/tests/test_a.py", line 3`
		// (a SyntaxError when pytest collects the module).
		for _, m := range pyFileLineRE.FindAllStringSubmatch(s, 200) {
			if sameFile(m[1], c.file) {
				return loc{m[1], atoi(m[2])}
			}
		}
	}
	if m := javaFrameRE.FindStringSubmatch(s); m != nil {
		// Skip the assertion library's frames: the first frame outside
		// well-known framework packages.
		for _, m := range javaFrameRE.FindAllStringSubmatch(s, 200) {
			fn := m[1]
			if i := strings.LastIndexByte(fn, '/'); i >= 0 {
				fn = fn[i+1:]
			}
			if !javaFrameworkFrame(fn) {
				return loc{m[2], atoi(m[3])}
			}
		}
		return loc{m[2], atoi(m[3])}
	}
	return findLoc(s)
}

var pyFileLineRE = regexp.MustCompile(`File "([^"]+)", line (\d+)`)

func sameFile(a, b string) bool {
	a = strings.ReplaceAll(a, "\\", "/")
	b = strings.ReplaceAll(b, "\\", "/")
	return a == b || strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
}

func javaFrameworkFrame(fn string) bool {
	for _, p := range []string{"org.junit.", "junit.", "org.opentest4j.", "org.assertj.", "org.hamcrest.", "java.", "javax.", "jdk.", "sun.",
		"kotlin.", "scala.", "org.testng.", "org.mockito.", "org.apache.maven.", "org.gradle.", "com.google.common.truth.", "org.spockframework."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
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

var (
	javaClassRE  = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*(?:\.[\p{L}_$][\p{L}\p{N}_$]*)*$`)
	jsFileRE     = regexp.MustCompile(`\.(?:[cm]?[jt]sx?|vue|svelte|coffee)$`)
	pyClassRE    = regexp.MustCompile(`^[A-Z]\w*$`)
	pyIdentRE    = regexp.MustCompile(`^[A-Za-z_][\w-]*$`)
	pyTestFileRE = regexp.MustCompile(`^(?:test_\w*|\w*_test)$`)
)

func isPathLike(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t") && (strings.ContainsAny(s, "/\\") || jsFileRE.MatchString(s))
}

// caseName applies the naming rules (see JUnit) and returns name and suite.
func (p *junitParser) caseName(c *junitCase) (string, string) {
	cls, name := strings.TrimSpace(c.classname), strings.TrimSpace(c.name)
	suite := c.suite
	if name == "" {
		name = cls
		cls = ""
	}
	if name == "" {
		return "(unnamed)", suite
	}
	if p.producer == prodPytest {
		if id, file, ok := pytestNodeID(cls, name, c.file); ok {
			return id, file
		}
		if cls == "" {
			return name, suite
		}
		return cls + "." + name, cls
	}
	switch {
	case cls == "":
		return name, suite
	case p.producer == prodVitest || isPathLike(cls):
		return cls + " > " + name, cls
	case name == cls || strings.HasPrefix(name, cls+" "):
		return name, suite
	case p.producer == prodJest:
		return cls + " > " + name, suite
	case javaClassRE.MatchString(cls):
		return cls + "." + strings.TrimSuffix(name, "()"), cls
	}
	return cls + " > " + name, suite
}

// pytestNodeID rebuilds "path/test_mod.py::Class::test_name" from a pytest
// testcase.
func pytestNodeID(cls, name, file string) (id, path string, ok bool) {
	parts := []string{}
	if cls != "" {
		parts = strings.Split(cls, ".")
	}
	if file != "" {
		// xunit1's classname is the node id's path with "/" made "." and
		// ".py" dropped, then its classes; name is the node id's last
		// part. Doctests: "README.rst" (--doctest-glob: the file's name),
		// "pkg.mod.func" (--doctest-modules: the object's dotted name).
		file = strings.ReplaceAll(file, "\\", "/")
		mod := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
		switch {
		case cls == "" && (name == mod || name == file):
			return file, file, true
		case cls == mod:
			return file + "::" + name, file, true
		case strings.HasPrefix(cls, mod+"."):
			rest := strings.Split(strings.TrimPrefix(cls, mod+"."), ".")
			return file + "::" + strings.Join(rest, "::") + "::" + name, file, true
		}
	}
	if cls == "" {
		// A collection error: the name is the dotted module.
		parts = strings.Split(name, ".")
		if len(parts) > 0 && pyTestFileRE.MatchString(parts[len(parts)-1]) && allIdents(parts) {
			p := strings.Join(parts, "/") + ".py"
			return p, p, true
		}
		return "", "", false
	}
	// Without a file attribute (xunit2): a text file's doctest, its
	// classname the dotted path and its name the file's name.
	if docTextRE.MatchString(name) && (cls == name || strings.HasSuffix(cls, "."+name)) {
		dir := strings.TrimSuffix(strings.TrimSuffix(cls, name), ".")
		p := name
		if dir != "" {
			p = strings.ReplaceAll(dir, ".", "/") + "/" + name
		}
		return p + "::" + name, p, true
	}
	if !allIdents(parts) {
		return "", "", false
	}
	// The module is the last test_*/*_test component; only classes
	// (capitalised) may follow it.
	mod := -1
	for i := len(parts) - 1; i >= 0; i-- {
		if pyTestFileRE.MatchString(parts[i]) {
			mod = i
			break
		}
		if !pyClassRE.MatchString(parts[i]) {
			break
		}
	}
	if mod < 0 {
		return pytestModuleDoctest(parts, name)
	}
	p := strings.Join(parts[:mod+1], "/") + ".py"
	id = p
	for _, cl := range parts[mod+1:] {
		id += "::" + cl
	}
	return id + "::" + name, p, true
}

// docTextRE matches the name of a text file pytest collects doctests from
// (--doctest-glob).
var docTextRE = regexp.MustCompile(`^[\w-][\w.-]*\.(?:rst|rest|md|markdown|txt|text|doctest)$`)

// pytestModuleDoctest rebuilds the node id of a module's doctest
// (--doctest-modules) from a classname without a file attribute: the
// classname is the module's path ("src.calc.ops", "calc.__init__"), the
// name the object's dotted name, which starts with the module's import
// name (a suffix of the path: "calc.ops.add", "calc").
func pytestModuleDoctest(parts []string, name string) (id, path string, ok bool) {
	if len(parts) == 0 || strings.ContainsAny(name, " [(") {
		return "", "", false
	}
	pkg := parts
	if parts[len(parts)-1] == "__init__" {
		pkg = parts[:len(parts)-1]
	}
	for k := 0; k < len(pkg); k++ {
		imp := strings.Join(pkg[k:], ".")
		if name == imp || strings.HasPrefix(name, imp+".") {
			p := strings.Join(parts, "/") + ".py"
			return p + "::" + name, p, true
		}
	}
	return "", "", false
}

func allIdents(parts []string) bool {
	for _, s := range parts {
		if !pyIdentRE.MatchString(s) {
			return false
		}
	}
	return true
}

// ---- input cleaning ----

// xmlSanitizer removes what the XML decoder rejects and test output often
// contains: ANSI escape sequences (raw, or as &#27;/&#x1b; references
// followed by "[31m"), other control characters, and U+FFFE/U+FFFF.
type xmlSanitizer struct {
	r     io.Reader
	in    []byte // unprocessed input (an incomplete sequence at its end)
	out   []byte // processed, not yet returned
	err   error
	chunk [32 << 10]byte
}

func (s *xmlSanitizer) Read(b []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			if len(s.in) > 0 {
				s.out, s.in = sanitizeXML(s.out[:0], s.in, true)
				continue
			}
			return 0, s.err
		}
		n, err := s.r.Read(s.chunk[:])
		s.in = append(s.in, s.chunk[:n]...)
		s.err = err
		if n == 0 && err == nil {
			continue
		}
		var rest []byte
		s.out, rest = sanitizeXML(s.out[:0], s.in, err != nil)
		s.in = append(s.in[:0], rest...)
	}
	n := copy(b, s.out)
	s.out = s.out[n:]
	return n, nil
}

// sanitizeXML appends the cleaned data to out and returns the unprocessed
// tail (an escape sequence or character reference cut by the chunk end).
func sanitizeXML(out, data []byte, atEOF bool) ([]byte, []byte) {
	const maxSeq = 64
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == 0x1b:
			n, complete := ansiLen(data[i:])
			if !complete && !atEOF && len(data)-i < maxSeq {
				return out, data[i:]
			}
			i += max(n, 1)
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			i++
		case c == '&':
			next, keep, done := charRefEnd(data, i, atEOF)
			if keep {
				return out, data[i:]
			}
			if !done {
				out = append(out, c)
				i++
				continue
			}
			i = next
		case c == 0xef && i+2 < len(data) && data[i+1] == 0xbf && (data[i+2] == 0xbe || data[i+2] == 0xbf):
			i += 3
		case c == 0xef && !atEOF && len(data)-i < 3:
			return out, data[i:]
		default:
			out = append(out, c)
			i++
		}
	}
	return out, nil
}

// charRefEnd looks at the "&" at data[i]. When it starts a character
// reference to a character XML forbids, done is true and next is the
// position after it (and after the rest of an ANSI sequence, for ESC).
// keep asks for more input first.
func charRefEnd(data []byte, i int, atEOF bool) (next int, keep, done bool) {
	const maxRef = 12
	if i+1 >= len(data) {
		return 0, !atEOF, false
	}
	if data[i+1] != '#' {
		return 0, false, false
	}
	j := i + 2
	for j < len(data) && j-i < maxRef && data[j] != ';' {
		j++
	}
	if j >= len(data) {
		return 0, !atEOF && j-i < maxRef, false
	}
	if data[j] != ';' {
		return 0, false, false
	}
	v, ok := charRef(data[i+2 : j])
	if !ok || xmlChar(v) {
		return 0, false, false
	}
	next = j + 1
	if v == 0x1b { // "&#27;[31m": drop the rest of the sequence
		n, complete := csiTail(data[next:])
		if !complete && !atEOF && len(data)-next < 64 {
			return 0, true, false
		}
		next += n
	}
	return next, false, true
}

// ansiLen is the length of the escape sequence at the start of b (b[0] is
// ESC) and whether it is complete.
func ansiLen(b []byte) (int, bool) {
	if len(b) < 2 {
		return 1, false
	}
	switch b[1] {
	case '[':
		n, ok := csiTail(b[1:])
		return 1 + n, ok
	case ']':
		for i := 2; i < len(b) && i < 256; i++ {
			if b[i] == 0x07 {
				return i + 1, true
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2, true
			}
		}
		return 2, len(b) >= 256
	case '(', ')':
		if len(b) < 3 {
			return 2, false
		}
		return 3, true
	}
	return 2, true
}

// csiTail is the length of "[params final" at the start of b, if b starts
// with '['; 0 otherwise.
func csiTail(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if b[0] != '[' {
		return 0, true
	}
	for i := 1; i < len(b) && i < 64; i++ {
		switch c := b[i]; {
		case c >= 0x20 && c <= 0x3f:
			continue
		case c >= 0x40 && c <= 0x7e:
			return i + 1, true
		default:
			return i, true
		}
	}
	return 1, len(b) >= 64
}

// charRef parses the digits of "&#…;" ("27", "x1b").
func charRef(b []byte) (rune, bool) {
	if len(b) == 0 {
		return 0, false
	}
	base := 10
	if b[0] == 'x' || b[0] == 'X' {
		base = 16
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 8 {
		return 0, false
	}
	var v rune
	for _, c := range b {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0, false
		}
		v = v*rune(base) + d
	}
	return v, true
}

// xmlChar reports whether r may appear in an XML 1.0 document.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= utf8.MaxRune
}

// charsetReader accepts the encodings test reports declare: Latin-1 family
// is converted, anything else is read as UTF-8.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252", "l1":
		return &latin1Reader{r: input}, nil
	}
	return input, nil
}

type latin1Reader struct {
	r   io.Reader
	buf []byte
}

func (l *latin1Reader) Read(b []byte) (int, error) {
	if len(l.buf) == 0 {
		tmp := make([]byte, max(1, len(b)/2))
		n, err := l.r.Read(tmp)
		for _, c := range tmp[:n] {
			l.buf = utf8.AppendRune(l.buf, rune(c))
		}
		if n == 0 {
			return 0, err
		}
	}
	n := copy(b, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

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
