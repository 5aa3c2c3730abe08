package verify

// The text parsers: each runner family's per-test and summary lines (see
// parse.go for the list).

import (
	"regexp"
	"strconv"
	"strings"
)

type family int

const (
	famGo family = iota
	famTAP
	famTAPSummary
	famNodeSpec
	famJest
	famVitest
	famMocha
	famPytest
	famUnittest
	famCTest
	famGTest
	famCargo
	famPlain
	numFamilies
)

var familyNames = [numFamilies]string{
	famGo:         "go test",
	famTAP:        "TAP",
	famTAPSummary: "TAP summary",
	famNodeSpec:   "node --test",
	famJest:       "jest",
	famVitest:     "vitest",
	famMocha:      "mocha",
	famPytest:     "pytest",
	famUnittest:   "unittest",
	famCTest:      "ctest",
	famGTest:      "googletest",
	famCargo:      "cargo",
	famPlain:      "passed/failed line",
}

type goTextResult struct{ name, state string }

type textParser struct {
	fam      [numFamilies]tally
	seen     [numFamilies]bool
	goBlock  []goTextResult // go test lines since the last package line
	names    []string       // failing names, in order (bounded by nameSet later)
	noTests  string
	jestFile string // the file of jest's last "FAIL file" line
	utRan    int    // unittest's "Ran N tests"
	utSeen   bool   // utRan was read, its "OK"/"FAILED" line not yet
	tap      tapText
}

// tapText names TAP's failing test points as report.TAP does: the "#
// Subtest:" headers above a point (or tape's "# name" above a top-level
// one), then its description; a name that repeats gets TAP's number.
type tapText struct {
	headers  []tapTextHeader
	block    string // tape's last "# name" at the top level
	version  bool   // a "TAP version" line was read
	subtests bool   // a "# Subtest:" header was read: no tape blocks
	diag     bool   // after a "not ok" whose diagnostics may follow
	uses     map[string]int
	failing  []tapTextFailure
}

type tapTextHeader struct {
	indent int
	name   string
}

// tapTextFailure is a failing point's entry in textParser.names.
type tapTextFailure struct {
	at, number int
	name       string
}

// maxTAPNames bounds the names tapText counts.
const maxTAPNames = 1 << 16

var (
	tapTextSubtestRE = regexp.MustCompile(`^(\s*)#\s*Subtest:\s*(.*)$`)
	tapTextVersionRE = regexp.MustCompile(`^TAP version \d+\s*$`)
	tapTextBlockRE   = regexp.MustCompile(`^# (\S.*)$`)
	tapTextYAMLRE    = regexp.MustCompile(`^\s+(?:---|\.\.\.)\s*$`)
)

// comment reads the lines around test points: headers, blocks, YAML.
func (t *tapText) comment(s string, tapSeen bool) {
	switch {
	case tapTextVersionRE.MatchString(s):
		t.version, t.block = true, ""
	case tapTextSubtestRE.MatchString(s):
		m := tapTextSubtestRE.FindStringSubmatch(s)
		ind := len(m[1])
		t.pop(ind)
		t.headers = append(t.headers, tapTextHeader{ind, strings.TrimSpace(m[2])})
		t.subtests, t.block = true, ""
	case tapTextYAMLRE.MatchString(s):
		t.diag = false
	case (t.version || tapSeen) && !t.subtests && !t.diag && tapTextBlockRE.MatchString(s):
		t.block = tapTextBlockRE.FindStringSubmatch(s)[1]
	}
}

func (t *tapText) pop(indent int) {
	for len(t.headers) > 0 && t.headers[len(t.headers)-1].indent >= indent {
		t.headers = t.headers[:len(t.headers)-1]
	}
}

// point names the test point at indent, and counts the name.
func (t *tapText) point(indent, number int, desc string) string {
	var parts []string
	for _, h := range t.headers {
		if h.indent < indent && h.name != "" {
			parts = append(parts, h.name)
		}
	}
	if indent == 0 && t.block != "" && !t.subtests {
		parts = append(parts, t.block)
	}
	t.pop(indent)
	if desc == "" {
		desc = "test " + strconv.Itoa(number)
	}
	name := strings.Join(append(parts, desc), " > ")
	if t.uses == nil {
		t.uses = map[string]int{}
	}
	if _, ok := t.uses[name]; ok || len(t.uses) < maxTAPNames {
		t.uses[name]++
	}
	return name
}

// number gives the failing names that repeat TAP's number, in names.
func (t *tapText) number(names []string) {
	for _, f := range t.failing {
		if t.uses[f.name] > 1 && f.number > 0 && f.at < len(names) && names[f.at] == f.name {
			names[f.at] = f.name + " #" + strconv.Itoa(f.number)
		}
	}
}

var (
	goTestRE    = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)
	goPkgRE     = regexp.MustCompile(`^(ok|FAIL|\?)\s+(\S+)(?:\s+(.*))?$`)
	goPkgRestRE = regexp.MustCompile(`^(?:\d+(?:\.\d+)?s\b|\(cached\)|\[)`)
	tapItemRE   = regexp.MustCompile(`^(\s*)(not ok|ok)\s+(\d+)\b(.*)$`)
	tapDirRE    = regexp.MustCompile(`(?i)(?:^|\s+)#\s*(skip|todo)\b.*$`)
	tapSumRE    = regexp.MustCompile(`^([#ℹ])\s+(pass|fail|failed|skip|skipped|todo|cancelled)\s+(\d+)\s*$`)
	jestRE      = regexp.MustCompile(`^\s*Tests:\s+(.*\d+ total.*)$`)
	jestItemRE  = regexp.MustCompile(`(\d+) (failed|passed|skipped|todo|pending)\b`)
	vitestRE    = regexp.MustCompile(`^\s*Tests\s+(\d+ .*?)(?:\s*\(\d+\))?\s*$`)
	vitestItem  = regexp.MustCompile(`^(\d+) (failed|passed|skipped|todo|expected fail)$`)
	mochaRE     = regexp.MustCompile(`^\s*(\d+) (passing|failing|pending)(?:\s+\(.*\))?\s*$`)
	pytestRE    = regexp.MustCompile(`^(.+?) in \d+(?:\.\d+)?s(?: \([0-9:.]+\))?$`)
	countItemRE = regexp.MustCompile(`^(\d+) (\w+)$`)

	utRanTextRE  = regexp.MustCompile(`^Ran (\d+) tests? in [\d.]+s$`)
	utEndTextRE  = regexp.MustCompile(`^(OK|FAILED)(?: \((.*)\))?$`)
	ctestSumRE   = regexp.MustCompile(`^\d+% tests passed, (\d+) tests? failed out of (\d+)$`)
	jestFileRE   = regexp.MustCompile(`^\s*FAIL\s+(\S+)\s*(?:\(\d.*\))?$`)
	vitestLoadRE = regexp.MustCompile(`^\s*FAIL\s+(\S+) \[ (\S+) \]$`)
	jestNameRE   = regexp.MustCompile(`^\s*● (.+)$`)
	vitestNameRE = regexp.MustCompile(`^\s*(?:FAIL|×|✗)\s+(.+ > .+?)(?:\s+\d+m?s)?$`)
	nodeNameRE   = regexp.MustCompile(`^\s*✖ (.+?) \(\d+(?:\.\d+)?m?s\)`)
	pytestNameRE = regexp.MustCompile(`^(?:FAILED|ERROR) ([^\s(]\S*)`)
	noTestsRE    = regexp.MustCompile(`^(?:no packages to test|No tests found|No test files found|Error: No test files found|no tests ran\b|collected 0 items)`)
)

func (p *textParser) hit(f family, t tally) {
	p.seen[f] = true
	p.fam[f].add(t)
}

func (p *textParser) name(n string) {
	if len(p.names) < 4*MaxFailing {
		p.names = append(p.names, n)
	}
}

func (p *textParser) line(s string) {
	if s == "" {
		return
	}
	if m := goTestRE.FindStringSubmatch(s); m != nil {
		p.seen[famGo] = true
		p.goBlock = append(p.goBlock, goTextResult{name: m[2], state: strings.ToLower(m[1])})
		return
	}
	if m := goPkgRE.FindStringSubmatch(s); m != nil && goPkgRestRE.MatchString(m[3]) &&
		(m[1] != "?" || strings.HasPrefix(m[3], "[no test files]")) {
		p.seen[famGo] = true
		p.flushGo(m[2], m[1], m[3])
		return
	}
	if m := tapItemRE.FindStringSubmatch(s); m != nil {
		p.tapItem(m[1], m[2], m[3], m[4])
		return
	}
	p.tap.comment(s, p.seen[famTAP])
	if m := tapSumRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[3])
		var t tally
		switch m[2] {
		case "pass":
			t.Passed = n
		case "fail", "failed", "cancelled":
			t.Failed = n
		default:
			t.Skipped = n
		}
		if m[1] == "#" {
			p.hit(famTAPSummary, t)
		} else {
			p.hit(famNodeSpec, t)
		}
		return
	}
	if m := jestRE.FindStringSubmatch(s); m != nil {
		var t tally
		for _, it := range jestItemRE.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(it[1])
			t.addItem(n, it[2])
		}
		p.hit(famJest, t)
		return
	}
	if m := vitestRE.FindStringSubmatch(s); m != nil {
		if t, ok := parseVitestItems(m[1]); ok {
			p.hit(famVitest, t)
			return
		}
	}
	if m := mochaRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		var t tally
		switch m[2] {
		case "passing":
			t.Passed = n
		case "failing":
			t.Failed = n
		default:
			t.Skipped = n
		}
		p.hit(famMocha, t)
		return
	}
	if t, ok := parsePytestSummary(s); ok {
		p.hit(famPytest, t)
		if t == (tally{}) {
			p.noTests = strings.Trim(s, "= ")
		}
		return
	}
	if m := utRanTextRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		p.utRan, _ = strconv.Atoi(m[1])
		p.utSeen = true
		return
	}
	if m := utEndTextRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil && p.utSeen {
		p.hit(famUnittest, unittestTally(p.utRan, m[2]))
		p.utSeen = false
		return
	}
	if m := ctestSumRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		failed, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		// ctest counts the tests that skipped themselves as passed.
		p.hit(famCTest, tally{Passed: max(0, total-failed), Failed: failed})
		return
	}
	if t, ok := gtestSummary(s); ok {
		p.hit(famGTest, t)
		return
	}
	if t, ok := cargoSummary(s); ok {
		p.hit(famCargo, t)
		return
	}
	if t, ok := parseCountLine(s); ok {
		p.hit(famPlain, t)
		return
	}
	if m := vitestLoadRE.FindStringSubmatch(s); m != nil && m[1] == m[2] {
		// vitest: a test file that failed to load.
		p.hit(famVitest, tally{Errors: 1})
		p.name(m[1])
		return
	}
	if m := jestFileRE.FindStringSubmatch(s); m != nil {
		p.jestFile = m[1]
		if !jsFileRE.MatchString(m[1]) {
			p.name(m[1]) // "FAIL test_add": not a jest test file
		}
		return
	}
	switch {
	case jestNameRE.MatchString(s):
		n := jestNameRE.FindStringSubmatch(s)[1]
		switch {
		case strings.HasPrefix(n, "Console"):
		case n == jestSuiteFailed:
			// The file could not run: an error, named by the file.
			p.hit(famJest, tally{Errors: 1})
			if p.jestFile != "" {
				p.name(strings.TrimPrefix(p.jestFile, "./"))
			}
		default:
			p.name(n)
		}
	case vitestNameRE.MatchString(s):
		p.name(vitestNameRE.FindStringSubmatch(s)[1])
	case nodeNameRE.MatchString(s):
		p.name(nodeNameRE.FindStringSubmatch(s)[1])
	case pytestNameRE.MatchString(s) && !strings.HasPrefix(s, "ERROR collecting"):
		p.name(pytestNameRE.FindStringSubmatch(s)[1])
	case failingLineName(s) != "":
		p.name(failingLineName(s))
	case p.noTests == "" && noTestsRE.MatchString(strings.TrimSpace(s)):
		p.noTests = clip(strings.TrimSpace(s), 200)
	}
}

func (p *textParser) tapItem(indent, status, num, rest string) {
	desc := strings.TrimSpace(rest)
	desc = strings.TrimSpace(strings.TrimPrefix(desc, "-"))
	directive := ""
	if m := tapDirRE.FindStringSubmatch(desc); m != nil {
		directive = strings.ToLower(m[1])
		desc = strings.TrimSpace(desc[:len(desc)-len(m[0])])
	}
	number, _ := strconv.Atoi(num)
	name := p.tap.point(len(indent), number, desc)
	p.tap.diag = status == "not ok"
	if status == "not ok" && directive == "" && len(p.names) < 4*MaxFailing {
		p.tap.failing = append(p.tap.failing, tapTextFailure{at: len(p.names), number: number, name: name})
		p.name(name)
	}
	if indent != "" { // a nested subtest; its parent line counts
		return
	}
	var t tally
	switch {
	case directive != "":
		t.Skipped = 1
	case status == "ok":
		t.Passed = 1
	default:
		t.Failed = 1
	}
	p.hit(famTAP, t)
}

// flushGo closes the go test lines of one package.
func (p *textParser) flushGo(pkg, status, rest string) {
	block := p.goBlock
	p.goBlock = nil
	var t tally
	var failing []string
	if len(block) > 0 {
		state := map[string]string{}
		var order []string
		for _, r := range block {
			prev, ok := state[r.name]
			if !ok {
				order = append(order, r.name)
			}
			if prev != "fail" {
				state[r.name] = r.state
			}
		}
		var failed []failedTest
		t, failed = countTests(order, state)
		for _, f := range failed {
			if pkg != "" {
				f.name = pkg + "." + f.name
			}
			failing = append(failing, f.String())
		}
	}
	switch {
	case status == "FAIL" && t.Failed == 0:
		t.Errors++ // build or setup failure, panic, timeout: an error, as in go test -json
		failing = append(failing, pkg)
	case status == "ok" && len(block) == 0 && !strings.Contains(rest, "[no tests to run]"):
		t.Passed++ // go test without -v: the package is the unit
	}
	p.fam[famGo].add(t)
	for _, n := range failing {
		p.name(n)
	}
}

func parseVitestItems(s string) (tally, bool) {
	var t tally
	for item := range strings.SplitSeq(s, "|") {
		m := vitestItem.FindStringSubmatch(strings.TrimSpace(item))
		if m == nil {
			return t, false
		}
		n, _ := strconv.Atoi(m[1])
		t.addItem(n, m[2])
	}
	return t, true
}

// addItem counts n tests of one item of a jest or vitest summary
// ("3 passed"): passed and failed as they say, the rest (skipped, todo,
// pending, expected fail) as skipped.
func (t *tally) addItem(n int, word string) {
	switch word {
	case "passed":
		t.Passed += n
	case "failed":
		t.Failed += n
	default:
		t.Skipped += n
	}
}

// parsePytestSummary reads "==== 1 failed, 2 passed in 0.12s ====" (or the
// -q form without the rulers) and "no tests ran in 0.01s".
func parsePytestSummary(s string) (tally, bool) {
	var t tally
	m := pytestRE.FindStringSubmatch(strings.Trim(s, "= "))
	if m == nil {
		return t, false
	}
	if m[1] == "no tests ran" {
		return t, true
	}
	counted := false
	for item := range strings.SplitSeq(m[1], ", ") {
		im := countItemRE.FindStringSubmatch(item)
		if im == nil {
			return t, false
		}
		n, _ := strconv.Atoi(im[1])
		switch im[2] {
		case "passed", "xpassed":
			t.Passed += n
		case "failed":
			t.Failed += n
		case "error", "errors":
			t.Errors += n
		case "skipped", "xfailed":
			t.Skipped += n
		case "deselected", "warning", "warnings", "rerun", "subtests":
			continue
		default:
			return t, false
		}
		counted = true
	}
	return t, counted
}

// unittestTally reads the counts of unittest's summary: "Ran N tests" and
// what follows "FAILED" or "OK" in parentheses ("failures=2, errors=1,
// skipped=1, expected failures=1, unexpected successes=1").
func unittestTally(ran int, detail string) tally {
	var t tally
	for item := range strings.SplitSeq(detail, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(v)
		switch k {
		case "failures", "unexpected successes":
			t.Failed += n
		case "errors":
			t.Errors += n
		case "skipped":
			t.Skipped += n
		}
	}
	t.Passed = max(0, ran-t.Failed-t.Errors-t.Skipped)
	return t
}

// finish returns the counts, the families they came from and the failing
// names.
func (p *textParser) finish() (tally, []string, []string) {
	if len(p.goBlock) > 0 {
		p.flushGo("", "", "")
	}
	var t tally
	var formats []string
	for f := range numFamilies {
		if !p.seen[f] {
			continue
		}
		if f == famTAP && p.seen[famTAPSummary] {
			continue // the summary of the same run counts
		}
		t.add(p.fam[f])
		formats = append(formats, familyNames[f])
	}
	p.tap.number(p.names)
	return t, formats, dedupTitles(p.names)
}

// dedupTitles drops the names that repeat another one without its test
// file: vitest prints a failing test as "suite > test" under its file and
// again as "src/a.test.ts > suite > test"; the second is its id.
func dedupTitles(names []string) []string {
	long := map[string]bool{}
	for _, n := range names {
		if first, rest, ok := strings.Cut(n, jsTitleSep); ok && jsFileRE.MatchString(first) {
			// every tail of the titles after the file
			for r := rest; ; {
				long[r] = true
				_, next, ok := strings.Cut(r, jsTitleSep)
				if !ok {
					break
				}
				r = next
			}
		}
	}
	if len(long) == 0 {
		return names
	}
	out := names[:0:0]
	for _, n := range names {
		if first, _, ok := strings.Cut(n, jsTitleSep); ok && !jsFileRE.MatchString(first) && long[n] {
			continue
		}
		out = append(out, n)
	}
	return out
}
