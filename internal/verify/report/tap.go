package report

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// TAP parses the Test Anything Protocol, versions 12 to 14, as written by
// node --test (its default reporter when not on a terminal), node-tap,
// tape, bats and prove -v.
//
// Rules:
//   - Test points "ok N - desc" / "not ok N - desc" (number and dash
//     optional); "# SKIP reason" and "# TODO reason" directives make a test
//     skipped, whatever its ok/not ok. node-tap's "# time=12ms" is a
//     duration.
//   - Subtests are indented and printed before their parent's test point
//     (TAP 14, node --test, node-tap). Leaves count. A parent that is a
//     test itself (node --test's t.test: a YAML block without "type:
//     'suite'") counts too, as node's "# tests" summary counts it, with
//     Kind KindParent; its subtests have Parent set. When it failed only
//     through its subtests (failureType 'subtestsFailed') its message is
//     "1 of 2 subtests failed: x" and it has no location. Other parents
//     (node's describe() suites, node-tap's and TAP 14's groups) count only
//     when they failed while none of their subtests did (a hook failed).
//   - node --test runs each test file in a process; a file that fails to
//     load (a syntax error, a missing module: a top-level "not ok" named
//     by the file's path, failureType 'testCodeFailure', no subtests) is
//     one Error case with Kind KindCollection named by the path; its
//     message is the error node printed (the "# " lines before it).
//   - Name: the descriptions from the outermost parent down, joined by
//     " > " ("math > nested > subtracts"); "test N" without a description.
//     tape's "# name" header above top-level points is their parent's
//     name ("subtract > should be strictly equal"). Cases of the same name
//     get their TAP number ("… > should be equal #3"); without numbers,
//     repeats get " #2", " #3", ….
//   - A YAML block ("  ---" … "  ...") after a test point gives Duration
//     (duration_ms), File/Line (location, else at, else the first frame of
//     stack) and the Message (error or message, expected/actual/operator,
//     stack). Without YAML, the "# " comment lines after a failing test
//     point (bats, Test::More) are its message, and their "(in test file
//     x.bats, line 7)" / "at t/x.t line 8." its location.
//   - "Bail out!" is one case with Status Error named "Bail out!", and ends
//     the stream.
//   - prove -v's "t/file.t .." headers name the Suite, and prefix the names
//     ("t/basic.t > adds numbers").
//
// Truncation (the error wraps ErrTruncated): a plan "1..N" with fewer than N
// top-level test points, a YAML block never closed, subtests whose parent
// test point never came, or node's trailing "# tests N" summary counting
// more tests than there are test points. Otherwise counts come from the test
// points only, never from the summary.
//
// It fails (nil Report) when there is no test point, plan or bail out.
func TAP(r io.Reader) (*Report, error) {
	p := &tapParser{summary: -1, last: -1, section: tapSection{plan: -1}}
	readErr := readLines(r, p.line)
	if !p.seen {
		if readErr != nil {
			return nil, fmt.Errorf("tap: %w", readErr)
		}
		return nil, errNotFormat(FormatTAP, "no test points, plan or bail out")
	}
	rep, truncated := p.finish()
	switch {
	case truncated != "":
		return rep, fmt.Errorf("tap: %w: %s", ErrTruncated, truncated)
	case readErr != nil:
		return rep, fmt.Errorf("tap: %w", readErr)
	}
	return rep, nil
}

type tapPoint struct {
	desc    string
	number  int
	indent  int
	status  Status
	bad     bool // failed itself or something below failed
	counted bool
	parent  int      // index of the parent point, -1
	headers []string // "# Subtest:" names above it when it was read
	suite   string
	reason  string // skip/todo reason
	dur     float64
	loc     loc
	msg     *msgBuf
	// locStrong: loc came from bats' "in test file"
	locStrong bool
	yaml      []string
	yamlLen   int
	// From the point's place in the tree and its YAML block.
	hasKids     bool
	badBelow    bool
	yamlSeen    bool    // node --test's YAML block (with duration_ms)
	isSuite     bool    // node: type: 'suite'
	failureType string  // node: failureType
	pre         *msgBuf // top-level comment lines just before the point
	block       string  // tape's "# name" above a top-level point
	yamlDone    bool    // its YAML block was read
}

type tapSection struct {
	plan   int // -1 without a plan
	points int // top-level points
}

type tapParser struct {
	seen      bool
	pts       []tapPoint
	pending   []int // points not yet claimed by a parent
	last      int   // index of the last point, -1
	inYAML    bool
	yamlInd   int
	headers   []tapHeader
	section   tapSection
	truncated []string
	bailed    bool
	bailMsg   string
	summary   int // node's "# tests N", -1 when absent
	suite     string
	topIndent int
	diagOpen  bool // comment lines still belong to the last point
	minInd    int
	between   *msgBuf // top-level comment lines since the last point
	// block is the last tape-style "# name" header at the top level: the
	// test whose assertions follow. Streams with "# Subtest:" headers
	// (node --test, node-tap, TAP 14) have none.
	block string
	// dashed: a top-level point reads "ok N - desc", as Test::More and
	// node-tap write them and tape never does: its "# name" comments are
	// notes, not the name of the test of the assertions after them.
	dashed     bool
	sawSubtest bool
}

type tapHeader struct {
	indent int
	name   string
}

var (
	tapPointRE   = regexp.MustCompile(`^(not ok|ok)\b\s*(\d*)\s*(-\s*)?(.*)$`)
	tapPlanRE    = regexp.MustCompile(`^1\.\.(\d+)\s*(?:#.*)?$`)
	tapVersionRE = regexp.MustCompile(`^TAP version \d+\s*$`)
	tapBailRE    = regexp.MustCompile(`^Bail out!\s*(.*)$`)
	tapSubtestRE = regexp.MustCompile(`^#\s*Subtest(?::\s*(.*))?$`)
	tapSummaryRE = regexp.MustCompile(`^#\s+(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\s+[\d.]+\s*$`)
	proveFileRE  = regexp.MustCompile(`^(\S+\.(?:t|bats|pl|sh|js|py)) \.{2,}\s*(?:ok|skipped.*)?$`)
	batsLocRE    = regexp.MustCompile(`\bin test file (\S+?), line (\d+)\b`)
	tapTimeRE    = regexp.MustCompile(`^time=([\d.]+)(ms|s)?\b`)
)

const (
	tapMaxYAML   = 64 << 10
	tapMaxPoints = 1 << 21
	tapMaxDepth  = 32 // levels of nesting kept in a name
)

func indentOf(s string) (int, string) {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n, s[i:]
		}
	}
	return n, ""
}

func (p *tapParser) line(raw string) {
	if p.bailed {
		return
	}
	s := cleanLine(raw)
	ind, t := indentOf(s)
	t = strings.TrimRight(t, " \t")

	if p.inYAML {
		if t == "..." {
			p.endYAML()
			return
		}
		// A test point at or left of the block's point ends an unclosed block.
		if !(tapPointRE.MatchString(t) && ind <= p.yamlInd) {
			pt := &p.pts[p.last]
			if pt.yamlLen < tapMaxYAML {
				pt.yaml = append(pt.yaml, s)
				pt.yamlLen += len(s) + 1
			}
			return
		}
		p.endYAML()
		p.truncated = append(p.truncated, "YAML block of test "+strconv.Quote(p.pts[p.last].desc)+" not closed")
	}

	switch {
	case t == "":
		return
	case tapVersionRE.MatchString(t):
		p.seen = true
		p.closeSection()
		p.topIndent = ind
		p.diagOpen = false
		p.block = ""
		return
	case tapPlanRE.MatchString(t):
		p.seen = true
		p.diagOpen = false
		if ind <= p.topIndent {
			n := atoi(tapPlanRE.FindStringSubmatch(t)[1])
			p.plan(n)
		}
		return
	case tapBailRE.MatchString(t):
		p.seen = true
		p.bailed = true
		p.bailMsg = strings.TrimSpace(tapBailRE.FindStringSubmatch(t)[1])
		return
	case t == "---" && p.last >= 0 && p.diagOpen:
		p.inYAML = true
		p.yamlInd = p.pts[p.last].indent
		return
	}
	if m := tapPointRE.FindStringSubmatch(t); m != nil {
		if m[3] != "" && ind <= p.topIndent {
			p.dashed = true
		}
		p.point(ind, m[1] == "ok", m[2], m[4])
		return
	}
	if m := proveFileRE.FindStringSubmatch(t); m != nil && ind == 0 {
		p.closeSection()
		p.suite = m[1]
		p.diagOpen = false
		p.block = ""
		return
	}
	if strings.HasPrefix(t, "#") {
		p.comment(ind, t)
		return
	}
}

func (p *tapParser) comment(ind int, t string) {
	if m := tapSubtestRE.FindStringSubmatch(t); m != nil {
		p.sawSubtest, p.block = true, ""
		for len(p.headers) > 0 && p.headers[len(p.headers)-1].indent >= ind {
			p.headers = p.headers[:len(p.headers)-1]
		}
		p.headers = append(p.headers, tapHeader{indent: ind, name: strings.TrimSpace(m[1])})
		p.diagOpen = false
		return
	}
	if ind <= p.topIndent && (tapSummaryRE.MatchString(t) || t == "# ok") {
		if f := strings.Fields(t); len(f) == 3 && f[1] == "tests" {
			p.summary = atoi(f[2])
		}
		p.diagOpen = false
		return
	}
	if ind <= p.topIndent {
		if p.between == nil {
			p.between = &msgBuf{}
		}
		p.between.addLine(strings.TrimPrefix(strings.TrimPrefix(t, "#"), " "))
		if name, ok := p.blockHeader(t); ok {
			p.block = name
			p.diagOpen = false
			return
		}
	}
	if !p.diagOpen || p.last < 0 {
		return
	}
	pt := &p.pts[p.last]
	if pt.status != Failed {
		return
	}
	d := strings.TrimPrefix(t, "#")
	d = strings.TrimPrefix(d, " ")
	if pt.msg == nil {
		pt.msg = &msgBuf{}
	}
	pt.msg.addLine(d)
	// bats: "(in test file test/a.bats, line 7)" beats the helper's
	// "(from function `assert_equal' in file …, line 40,".
	if m := batsLocRE.FindStringSubmatch(d); m != nil && !pt.locStrong {
		pt.loc = loc{m[1], atoi(m[2])}
		pt.locStrong = true
	} else if !pt.loc.ok() {
		if m := perlLocRE.FindStringSubmatch(d); m != nil {
			pt.loc = loc{strings.Trim(m[1], "'\"`"), atoi(m[2])}
		}
	}
}

// blockHeader reports whether the top-level comment t is tape's "# name"
// header, naming the test whose assertions follow: one space after "#",
// in a stream without "# Subtest:" headers, and not a diagnostic of a
// failed test point without a YAML block (bats' and Test::More's "#"
// lines follow their failure).
func (p *tapParser) blockHeader(t string) (string, bool) {
	name, ok := strings.CutPrefix(t, "# ")
	if !ok || name == "" || name[0] == ' ' || name[0] == '\t' || p.sawSubtest {
		return "", false
	}
	if p.last >= 0 && p.diagOpen {
		if last := &p.pts[p.last]; last.status == Failed && !last.yamlDone {
			return "", false
		}
	}
	return name, true
}

func (p *tapParser) plan(n int) {
	s := &p.section
	switch {
	case s.points == 0 && s.plan < 0:
		s.plan = n // leading plan
	case s.plan < 0:
		s.plan = n // trailing plan closes the section
		p.closeSection()
	default: // a second plan: a new stream (prove, concatenated output)
		p.closeSection()
		p.section.plan = n
	}
}

func (p *tapParser) closeSection() {
	s := p.section
	if s.plan >= 0 && s.points < s.plan {
		p.truncated = append(p.truncated, fmt.Sprintf("plan 1..%d but %d test(s)", s.plan, s.points))
	}
	p.section = tapSection{plan: -1}
}

// splitDirective separates "desc # SKIP reason" (an unescaped '#').
func splitDirective(rest string) (desc, directive, reason string, dur float64) {
	desc = rest
	for i := 0; i < len(rest); i++ {
		if rest[i] == '\\' {
			i++
			continue
		}
		if rest[i] != '#' {
			continue
		}
		after := strings.TrimSpace(rest[i+1:])
		low := strings.ToLower(after)
		switch {
		case strings.HasPrefix(low, "skip"), strings.HasPrefix(low, "todo"):
			directive = low[:4]
			r := after[4:]
			// "SKIPPED", "skip:" …
			r = strings.TrimLeft(r, "PEDpedIiSs")
			reason = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r), ":"))
			desc = rest[:i]
		case tapTimeRE.MatchString(low):
			m := tapTimeRE.FindStringSubmatch(low)
			f, _ := strconv.ParseFloat(m[1], 64)
			if m[2] != "s" {
				f /= 1000
			}
			dur = f
			desc = rest[:i]
		default:
			continue
		}
		break
	}
	desc = strings.TrimSpace(desc)
	desc = strings.NewReplacer(`\#`, "#", `\\`, `\`).Replace(desc)
	return desc, directive, reason, dur
}

func (p *tapParser) point(ind int, ok bool, num, rest string) {
	p.seen = true
	if len(p.pts) >= tapMaxPoints {
		return
	}
	desc, directive, reason, dur := splitDirective(rest)
	// prove -v prints a bare "ok" after each file's TAP.
	if ok && num == "" && desc == "" && directive == "" && ind <= p.topIndent &&
		p.section.plan >= 0 && p.section.points >= p.section.plan {
		return
	}
	pt := tapPoint{desc: desc, number: atoi(num), indent: ind, parent: -1, suite: p.suite, reason: reason, dur: dur}
	switch {
	case directive != "":
		pt.status = Skipped
	case ok:
		pt.status = Passed
	default:
		pt.status = Failed
	}
	for len(p.headers) > 0 && p.headers[len(p.headers)-1].indent >= ind {
		p.headers = p.headers[:len(p.headers)-1]
	}
	if len(p.headers) > 0 {
		hs := p.headers[max(0, len(p.headers)-tapMaxDepth):]
		pt.headers = make([]string, len(hs))
		for k, h := range hs {
			pt.headers[k] = h.name
		}
	}
	// Children are the unclaimed points indented deeper, just before.
	i := len(p.pending)
	for i > 0 && p.pts[p.pending[i-1]].indent > ind {
		i--
	}
	children := p.pending[i:]
	idx := len(p.pts)
	badBelow := false
	for _, c := range children {
		p.pts[c].parent = idx
		badBelow = badBelow || p.pts[c].bad
	}
	p.pending = append(p.pending[:i], idx)
	pt.bad = pt.status == Failed || badBelow
	pt.hasKids = len(children) > 0
	pt.badBelow = badBelow
	pt.pre, p.between = p.between, nil
	if ind <= p.topIndent {
		p.section.points++
		pt.block = p.block
	}
	p.pts = append(p.pts, pt)
	p.last = idx
	p.diagOpen = true
}

func (p *tapParser) endYAML() {
	p.inYAML = false
	pt := &p.pts[p.last]
	pt.yamlDone = true
	y := parseYAML(pt.yaml)
	pt.yaml = nil
	pt.yamlSeen = y["duration_ms"] != "" // node --test writes it for every test
	pt.isSuite = y["type"] == "suite"
	pt.failureType = y["failureType"]
	if v, ok := y["duration_ms"]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			pt.dur = f / 1000
		}
	}
	if !pt.loc.ok() {
		pt.loc = yamlLoc(y)
	}
	if pt.status != Failed {
		return
	}
	m := &msgBuf{}
	for _, k := range []string{"error", "message"} {
		if v := y[k]; v != "" {
			m.addText(v)
			break
		}
	}
	for _, k := range []string{"operator", "expected", "actual", "wanted", "found"} {
		if v, ok := y[k]; ok && v != "" {
			m.addText(k + ": " + v)
		}
	}
	if v := y["stack"]; v != "" {
		m.addText("stack:\n" + v)
	}
	if pt.msg != nil && !pt.msg.empty() {
		m.addText(pt.msg.String())
	}
	pt.msg = m
}

// yamlLoc finds a test's location in its YAML diagnostics.
func yamlLoc(y map[string]string) loc {
	if v := y["location"]; v != "" {
		v = strings.TrimPrefix(v, "file://")
		if m := tapLocationRE.FindStringSubmatch(v); m != nil {
			return loc{m[1], atoi(m[2])}
		}
	}
	if f := y["at.file"]; f != "" {
		return loc{strings.TrimPrefix(f, "file://"), atoi(y["at.line"])}
	}
	if f := y["file"]; f != "" {
		return loc{f, atoi(y["line"])}
	}
	for _, k := range []string{"at", "stack"} {
		if v := y[k]; v != "" {
			if l := findLoc(v); l.ok() {
				return l
			}
		}
	}
	return loc{}
}

var tapLocationRE = regexp.MustCompile(`^(.+?):(\d+)(?::\d+)?$`)

// parseYAML reads the subset of YAML that TAP producers write: "key:
// value" at the block's indentation, quoted scalars, block scalars (|, |-,
// >) and one level of nested mapping (stored as "parent.child").
func parseYAML(lines []string) map[string]string {
	out := map[string]string{}
	base := -1
	for i := 0; i < len(lines); i++ {
		ind, t := indentOf(lines[i])
		if t == "" {
			continue
		}
		if base < 0 {
			base = ind
		}
		if ind != base {
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			continue
		}
		v = strings.TrimSpace(v)
		// Collect the more indented lines that follow.
		j := i + 1
		for j < len(lines) {
			ind2, t2 := indentOf(lines[j])
			if t2 != "" && ind2 <= base {
				break
			}
			j++
		}
		body := lines[i+1 : j]
		i = j - 1
		switch {
		case strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">"):
			out[k] = blockScalar(body, v[0] == '>')
		case v == "" && len(body) > 0:
			// A nested mapping, or a multi-line value.
			nested := parseYAML(body)
			if len(nested) > 0 {
				for nk, nv := range nested {
					if !strings.Contains(nk, ".") {
						out[k+"."+nk] = nv
					}
				}
			}
			out[k] = blockScalar(body, false)
		default:
			for _, b := range body {
				if _, t2 := indentOf(b); t2 != "" {
					v += " " + t2
				}
			}
			out[k] = yamlScalar(v)
		}
	}
	return out
}

func blockScalar(body []string, fold bool) string {
	ind := -1
	var b strings.Builder
	for _, l := range body {
		n, t := indentOf(l)
		if t == "" {
			b.WriteByte('\n')
			continue
		}
		if ind < 0 || n < ind {
			if ind < 0 {
				ind = n
			}
		}
		if fold && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte(' ')
		}
		b.WriteString(strings.Repeat(" ", max(0, n-ind)))
		b.WriteString(t)
		if !fold {
			b.WriteByte('\n')
		}
	}
	return strings.TrimRight(b.String(), "\n ")
}

func yamlScalar(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	}
	return v
}

func (p *tapParser) finish() (*Report, string) {
	if p.inYAML {
		p.endYAML()
		if !p.bailed {
			p.truncated = append(p.truncated, "YAML block of test "+strconv.Quote(p.pts[p.last].desc)+" not closed")
		}
	}
	if !p.bailed {
		p.closeSection()
	}
	// Points whose parent never came (the stream stopped inside a subtest).
	p.minInd = -1
	for i := range p.pts {
		if p.minInd < 0 || p.pts[i].indent < p.minInd {
			p.minInd = p.pts[i].indent
		}
	}
	orphans := 0
	for _, i := range p.pending {
		if p.pts[i].indent > p.minInd {
			orphans++
		}
	}
	if orphans > 0 && !p.bailed {
		p.truncated = append(p.truncated, fmt.Sprintf("%d subtest(s) without their parent test", orphans))
	}
	if p.summary > len(p.pts) && !p.bailed {
		p.truncated = append(p.truncated, fmt.Sprintf("summary counts %d tests but there are %d test points", p.summary, len(p.pts)))
	}

	// Which points are cases: leaves, parents that are tests (node's
	// t.test), and groups that failed by themselves.
	for i := range p.pts {
		pt := &p.pts[i]
		pt.counted = !pt.hasKids || p.parentTest(pt) || pt.status == Failed && !pt.badBelow
	}
	rep := &Report{Format: FormatTAP}
	var kids map[int][]int // made when a parent test needs it
	var numbers []int      // each case's TAP number
	for i := range p.pts {
		pt := &p.pts[i]
		if !pt.counted {
			continue
		}
		numbers = append(numbers, pt.number)
		c := Case{Name: p.name(i), Suite: pt.suite, Status: pt.status, Duration: seconds(pt.dur), File: pt.loc.file, Line: pt.loc.line}
		if pt.parent > i && p.parentTest(&p.pts[pt.parent]) {
			c.Parent = p.name(pt.parent)
		}
		switch pt.status {
		case Failed:
			c.Message = pt.msg.String()
		case Skipped:
			c.Message = clip(pt.reason, MaxMessage)
		}
		switch {
		case p.parentTest(pt):
			c.Kind = KindParent
			if pt.status == Failed && pt.badBelow && (pt.failureType == "subtestsFailed" || pt.failureType == "") {
				if kids == nil {
					kids = p.children()
				}
				var bad []string
				for _, j := range kids[i] {
					if p.pts[j].bad {
						bad = append(bad, p.pts[j].desc)
					}
				}
				c.Message = SubtestSummary(bad, len(kids[i]))
				c.File, c.Line = "", 0
			}
		case p.loadFailure(pt):
			c.Kind = KindCollection
			c.Status = Error
			msg := &msgBuf{}
			if !pt.pre.empty() {
				msg.addText(pt.pre.String())
			}
			if m := pt.msg.String(); m != "" {
				msg.addText(m)
			}
			c.Message = msg.String()
			c.Suite = pt.desc
		}
		rep.add(c)
	}
	if p.bailed {
		rep.add(Case{Name: "Bail out!", Suite: p.suite, Status: Error, Message: clip(p.bailMsg, MaxMessage)})
		numbers = append(numbers, 0)
	}
	numberRepeats(rep.Cases, numbers)
	uniquify(rep.Cases)
	return rep, strings.Join(p.truncated, "; ")
}

// numberRepeats tells cases of the same name apart by their TAP numbers:
// "add > should be equal #1", "add > should be equal #2" (tape names its
// assertions after the check, so they repeat). A name is left alone when
// one of its cases has no number or two share one (uniquify then counts
// them).
func numberRepeats(cases []Case, numbers []int) {
	byName := map[string][]int{}
	for i, c := range cases {
		byName[c.Name] = append(byName[c.Name], i)
	}
	for _, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		seen := map[int]bool{}
		ok := true
		for _, i := range idx {
			n := numbers[i]
			ok = ok && n > 0 && !seen[n]
			seen[n] = true
		}
		if !ok {
			continue
		}
		for _, i := range idx {
			cases[i].Name += " #" + strconv.Itoa(numbers[i])
		}
	}
}

// children maps each point to its subtests' indexes, in order.
func (p *tapParser) children() map[int][]int {
	out := map[int][]int{}
	for j := range p.pts {
		if up := p.pts[j].parent; up > j {
			out[up] = append(out[up], j)
		}
	}
	return out
}

// parentTest reports whether pt is a test with subtests that counts as a
// test itself: node --test's t.test (its YAML block does not say it is a
// suite).
func (p *tapParser) parentTest(pt *tapPoint) bool {
	return pt.hasKids && pt.yamlSeen && !pt.isSuite && pt.failureType != "testCodeFailure"
}

// loadFailure reports whether pt is a test file node --test could not
// run: a top-level failure named by a file's path, with no subtests.
func (p *tapParser) loadFailure(pt *tapPoint) bool {
	return !pt.hasKids && pt.status == Failed && pt.indent <= p.minInd && pt.failureType == "testCodeFailure" &&
		tapFileRE.MatchString(pt.desc)
}

// tapFileRE matches the path of a JavaScript or TypeScript test file.
var tapFileRE = regexp.MustCompile(`^\S*[/\\]\S*\.(?:[cm]?[jt]sx?)$|^[^\s/\\]+\.(?:test|spec)\.[cm]?[jt]sx?$`)

// name joins the descriptions from the outermost parent down.
func (p *tapParser) name(i int) string {
	var parts []string
	j := i
	for len(parts) < tapMaxDepth {
		pt := &p.pts[j]
		d := pt.desc
		if d == "" {
			d = "test"
			if pt.number > 0 {
				d += " " + strconv.Itoa(pt.number)
			}
		}
		parts = append(parts, d)
		if pt.parent <= j { // parents always come after their children
			break
		}
		j = pt.parent
	}
	// A subtest whose parent point never came (the stream stopped) takes
	// its ancestors from the "# Subtest:" headers.
	if top := &p.pts[j]; top.indent > p.minInd {
		for k := len(top.headers) - 1; k >= 0; k-- {
			if h := top.headers[k]; h != "" {
				parts = append(parts, h)
			}
		}
	}
	if b := p.pts[j].block; b != "" && !p.dashed { // tape: the test of the assertion
		parts = append(parts, b)
	}
	if p.pts[i].suite != "" { // prove -v: the test file
		parts = append(parts, p.pts[i].suite)
	}
	for l, r := 0, len(parts)-1; l < r; l, r = l+1, r-1 {
		parts[l], parts[r] = parts[r], parts[l]
	}
	return strings.Join(parts, " > ")
}
