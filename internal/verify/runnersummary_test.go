package verify

// Runner summaries. A count a person reads differently from the test
// runner's own summary is a defect: for each runner installed here, a
// small real project with passing, failing and skipped tests (and, where
// the runner has them, subtests and a test file or module that cannot be
// loaded) runs through Verify; the runner's own summary line is read from
// the log (or its report) and must agree with the Result's counts, which
// must agree with its tests, its failing list and the gate's decision.
// Each test skips, saying why, only when its runner is not installed.

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/verify/report"
)

// counts are a run's numbers: Failed never includes Errors (tests that
// could not run, and test files, modules or packages that could not be
// collected).
type counts struct{ Passed, Failed, Errors, Skipped int }

func (c counts) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d errors, %d skipped", c.Passed, c.Failed, c.Errors, c.Skipped)
}

func resultCounts(res *Result) counts {
	return counts{res.Passed, res.Failed, res.Errors, res.Skipped}
}

// wantRunner checks that Result's counts are the runner's own (own, read
// from what the runner printed) and that every other number agrees.
func wantRunner(t *testing.T, res *Result, own counts, summary string) {
	t.Helper()
	if got := resultCounts(res); got != own {
		t.Errorf("ultra counts %v; the runner says %v (%s)", got, own, summary)
	}
	wantAgree(t, res)
}

// wantAgree: the same numbers everywhere. The totals are the commands'
// figures summed, the tests' statuses say the same, the failing list names
// each failed and errored test once, the reason's numbers are those, and
// the gate's decision (counts, commands' figures, failing list, reasons)
// says the same again.
func wantAgree(t *testing.T, res *Result) {
	t.Helper()
	var sum counts
	for _, c := range res.Commands {
		sum.Passed += c.Passed
		sum.Failed += c.Failed
		sum.Errors += c.Errors
		sum.Skipped += c.Skipped
	}
	if got := resultCounts(res); sum != got {
		t.Errorf("totals %v, commands' figures %v", got, sum)
	}
	var byStatus counts
	for _, c := range res.Tests {
		switch c.Status {
		case report.Passed:
			byStatus.Passed++
		case report.Failed:
			byStatus.Failed++
		case report.Error:
			byStatus.Errors++
		case report.Skipped:
			byStatus.Skipped++
		}
	}
	if len(res.Tests) > 0 && byStatus != resultCounts(res) {
		t.Errorf("totals %v, tests' statuses %v", resultCounts(res), byStatus)
	}
	if n := res.Failed + res.Errors; n <= MaxFailing && len(res.Failing) != n {
		t.Errorf("failing list of %d (%q), but %d failed and %d errors", len(res.Failing), res.Failing, res.Failed, res.Errors)
	}
	reason := badReason(res)
	coll := collectionErrors(res)
	if res.Failed > 0 && !strings.Contains(reason, fmt.Sprintf("%d of %d test", res.Failed, res.Passed+res.Failed+res.Errors-coll)) {
		t.Errorf("reason %q does not say %d failed", reason, res.Failed)
	}
	for _, c := range report.CollectionErrors(res.Tests) {
		if !strings.Contains(reason, c.Name) {
			t.Errorf("reason %q does not name %s, which could not be collected", reason, c.Name)
		}
	}

	d := gate.Judge(gate.Input{Run: "r", Tree: "t", N: 1, Evidence: evidenceOf(res)})
	want := gate.Counts{Passed: res.Passed, Failed: res.Failed, Errors: res.Errors, Skipped: res.Skipped,
		Executed: res.Passed + res.Failed + res.Errors}
	if d.Counts != want {
		t.Errorf("the gate counts %+v, verify %+v", d.Counts, want)
	}
	if n := res.Failed + res.Errors; n <= 200 && len(d.Failing) != n {
		t.Errorf("the gate's failing list has %d, verify counts %d failed and errors", len(d.Failing), n)
	}
	all := strings.Join(d.Reasons, "; ")
	if res.Failed > 0 && !strings.Contains(all, fmt.Sprintf("%d of %d test", res.Failed, want.Executed-coll)) {
		t.Errorf("the gate's reasons %q do not say %d failed", all, res.Failed)
	}
	for _, c := range report.CollectionErrors(res.Tests) {
		if !strings.Contains(all, c.Name) {
			t.Errorf("the gate's reasons %q do not name %s", all, c.Name)
		}
	}
	t.Logf("gate: %s: %s", d.Status, all)
}

// evidenceOf is what the gate is given of a Result (as agent.Evidence
// makes it).
func evidenceOf(res *Result) gate.Evidence {
	var ev gate.Evidence
	for _, c := range res.Commands {
		ev.Commands = append(ev.Commands, gate.Command{Command: c.Command, Source: c.Source, ExitCode: c.ExitCode,
			TimedOut: c.TimedOut, NotFound: c.NotFound, Parsed: c.ReportOK || c.Passed+c.Failed+c.Errors+c.Skipped > 0 || len(c.Formats) > 0,
			Format: c.Format, Passed: c.Passed, Failed: c.Failed, Errors: c.Errors, Skipped: c.Skipped,
			HasTests: len(c.Tests) > 0, ReportMissing: c.ReportMissing, Runner: c.Runner, Lines: c.OutputLines, Cause: c.Cause})
		ev.Tests = append(ev.Tests, c.Tests...)
	}
	if len(ev.Tests) == 0 {
		ev.Failing = res.Failing
	}
	return ev
}

// logOf is the complete output of the result's only command.
func logOf(t *testing.T, res *Result) string {
	t.Helper()
	if len(res.Commands) != 1 {
		t.Fatalf("%d commands", len(res.Commands))
	}
	return readFile(t, res.Commands[0].LogPath)
}

// summaryLine finds the last line of log matching re, colours removed.
func summaryLine(t *testing.T, log string, re *regexp.Regexp) []string {
	t.Helper()
	var last []string
	for l := range strings.SplitSeq(log, "\n") {
		if m := re.FindStringSubmatch(cleanLine(strings.TrimRight(l, "\r"))); m != nil {
			last = m
		}
	}
	if last == nil {
		t.Fatalf("no line matching %s in the log:\n%s", re, clip(log, 4000))
	}
	return last
}

// items reads "2 failed, 3 passed, 1 skipped" (any separator) into a map.
func items(s string) map[string]int {
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`(\d+) ([a-z]+(?: [a-z]+)?)`).FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		out[m[2]] += n
	}
	return out
}

func TestRunnerSummaryGo(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{
		"go.mod": goMod,
		"calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T)  {}
func TestSkip(t *testing.T) { t.Skip("later") }
func TestBad(t *testing.T)  { t.Error("bad") }

func TestTable(t *testing.T) {
	for _, n := range []string{"a", "b", "c"} {
		t.Run(n, func(t *testing.T) {
			if n == "b" {
				t.Error("b fails")
			}
			if n == "c" {
				t.Run("deep", func(t *testing.T) { t.Skip("not here") })
			}
		})
	}
}

func TestParentOwn(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Error("the parent itself")
}
`,
		"broken/b_test.go": "package broken\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { undefined() }\n",
	})
	res := verify(t, Request{Dir: dir})

	// go test -v's own lines: one "---" line per test and subtest, one
	// "FAIL pkg [build failed]" per package that did not build.
	cmd := exec.Command("go", "test", "-v", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-count=1")
	out, _ := cmd.CombinedOutput()
	var own counts
	lineRE := regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): `)
	for l := range strings.SplitSeq(string(out), "\n") {
		switch m := lineRE.FindStringSubmatch(l); {
		case m != nil && m[1] == "PASS":
			own.Passed++
		case m != nil && m[1] == "FAIL":
			own.Failed++
		case m != nil && m[1] == "SKIP":
			own.Skipped++
		case strings.HasPrefix(l, "FAIL\t") && (strings.HasSuffix(l, "[build failed]") || strings.HasSuffix(l, "[setup failed]")):
			own.Errors++
		}
	}
	wantRunner(t, res, own, "go test -v's --- lines")
	if own != (counts{Passed: 4, Failed: 4, Errors: 1, Skipped: 2}) {
		t.Errorf("go test -v says %v: the project changed?\n%s", own, out)
	}

	// Which is which: tests with subtests are parents, subtests name
	// theirs; a parent failing only through its subtests says which.
	parent := wantCase(t, res, "example.com/calc.TestTable", report.Failed)
	if parent.Kind != report.KindParent || parent.Parent != "" || parent.Message != "1 of 3 subtests failed: b" || parent.File != "" {
		t.Errorf("TestTable = %+v", parent)
	}
	if c := wantCase(t, res, "example.com/calc.TestTable/c/deep", report.Skipped); c.Parent != "example.com/calc.TestTable/c" || c.Kind != "" {
		t.Errorf("TestTable/c/deep = %+v", c)
	}
	if c := wantCase(t, res, "example.com/calc.TestParentOwn", report.Failed); c.Kind != report.KindParent || c.File == "" {
		t.Errorf("TestParentOwn = %+v", c)
	}
	if c := wantCase(t, res, "example.com/calc/broken", report.Error); c.Kind != report.KindCollection {
		t.Errorf("broken = %+v", c)
	}
	wantFailing(t, res, "example.com/calc.TestBad (calc_test.go:7)", "example.com/calc.TestTable (1 of 3 subtests failed: b)",
		"example.com/calc.TestTable/b (calc_test.go:13)", "example.com/calc.TestParentOwn (calc_test.go:24)",
		"example.com/calc/broken (broken/b_test.go:5)")
	if r := badReason(res); !strings.Contains(r, "1 package could not be built: example.com/calc/broken: broken/b_test.go:5:28: undefined: undefined") {
		t.Errorf("reason %q", r)
	}
}

var pytestSummaryRE = regexp.MustCompile(`^=*\s*((?:\d+ [a-z]+(?:, )?)+) in [\d.]+s`)

// pytestCounts maps pytest's summary onto ultra's counts: xpassed tests
// passed, xfailed ones are skipped (expected to fail, not run as tests
// that must pass).
func pytestCounts(s string) counts {
	n := items(s)
	return counts{Passed: n["passed"] + n["xpassed"], Failed: n["failed"], Errors: n["error"] + n["errors"],
		Skipped: n["skipped"] + n["xfailed"]}
}

func TestRunnerSummaryPytest(t *testing.T) {
	t.Parallel()
	needPytest(t)
	tests := map[string]string{
		"tests/test_ok.py": `import pytest

def test_a():
    pass

def test_b():
    assert 1 == 2

@pytest.mark.skip(reason="later")
def test_c():
    pass

@pytest.mark.xfail
def test_d():
    assert False

def test_e(missing_fixture):
    pass
`,
		"tests/test_imp.py": "import requests_not_here\n\ndef test_x():\n    pass\n",
		"tests/test_syn.py": "def test_y(:\n    pass\n",
	}
	t.Run("collection errors interrupt", func(t *testing.T) {
		t.Parallel()
		files := map[string]string{"pytest.ini": "[pytest]\n"}
		for k, v := range tests {
			files[k] = v
		}
		dir := project(t, files)
		res := verify(t, Request{Dir: dir})
		m := summaryLine(t, logOf(t, res), pytestSummaryRE)
		wantRunner(t, res, pytestCounts(m[1]), m[0])
		if len(report.CollectionErrors(res.Tests)) != 2 || res.Errors != 2 || res.Passed+res.Failed != 0 {
			t.Errorf("want the two modules as collection errors: %+v", res.Tests)
		}
		// Nothing ran: not evaluated, with the modules and why.
		d := gate.Judge(gate.Input{Evidence: evidenceOf(res)})
		all := strings.Join(d.Reasons, "; ")
		if d.Status != gate.NotEvaluated || !strings.Contains(all, "2 test modules could not be collected (import errors): tests/test_imp.py: ModuleNotFoundError: No module named 'requests_not_here'; tests/test_syn.py: SyntaxError") {
			t.Errorf("%s: %s", d.Status, all)
		}
		if !nothingCollected(res) {
			t.Error("nothingCollected = false")
		}
	})
	t.Run("collection errors beside tests", func(t *testing.T) {
		t.Parallel()
		files := map[string]string{"pytest.ini": "[pytest]\naddopts = --continue-on-collection-errors\n"}
		for k, v := range tests {
			files[k] = v
		}
		dir := project(t, files)
		res := verify(t, Request{Dir: dir})
		m := summaryLine(t, logOf(t, res), pytestSummaryRE)
		wantRunner(t, res, pytestCounts(m[1]), m[0])
		if c := wantCase(t, res, "tests/test_imp.py", report.Error); c.Kind != report.KindCollection || c.File != "tests/test_imp.py" {
			t.Errorf("test_imp = %+v", c)
		}
		if c := wantCase(t, res, "tests/test_syn.py", report.Error); c.File != "tests/test_syn.py" || c.Line != 1 {
			t.Errorf("test_syn = %+v", c)
		}
		if c := wantCase(t, res, "tests/test_ok.py::test_e", report.Error); c.Kind != "" {
			t.Errorf("a fixture error is a test's error, not a collection error: %+v", c)
		}
		// Against a baseline where the modules collected, the tree is at
		// fault; where they did not, it is not.
		ev := evidenceOf(res)
		var good []report.Case
		for _, c := range res.Tests {
			if c.Kind != report.KindCollection {
				good = append(good, c)
			}
		}
		good = append(good, report.Case{Name: "tests/test_imp.py::test_x", Status: report.Passed},
			report.Case{Name: "tests/test_syn.py::test_y", Status: report.Passed})
		before := gate.NewBaseline("t0", gate.Evidence{Commands: ev.Commands, Tests: good})
		if d := gate.Judge(gate.Input{Evidence: ev, Baseline: &before}); d.Status != gate.Fail ||
			!strings.Contains(strings.Join(d.Reasons, "; "), "did not fail this way at the start") {
			t.Errorf("%s: %v", d.Status, d.Reasons)
		}
	})
}

func TestRunnerSummaryUnittest(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	dir := project(t, map[string]string{
		"tests/test_calc.py": `import unittest

class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_sub(self):
        self.assertEqual(3 - 1, 5)

    def test_err(self):
        raise ValueError("boom")

    @unittest.skip("later")
    def test_skip(self):
        pass

    def test_sub_tests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 2)
`,
		"tests/test_imp.py": "import requests_not_here\n",
	})
	res := verify(t, Request{Dir: dir})
	log := logOf(t, res)
	ran := summaryLine(t, log, regexp.MustCompile(`^Ran (\d+) tests? in `))
	end := summaryLine(t, log, regexp.MustCompile(`^(?:OK|FAILED)(?: \((.*)\))?$`))
	n, _ := strconv.Atoi(ran[1])
	kv := map[string]int{}
	for item := range strings.SplitSeq(end[1], ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(item), "="); ok {
			kv[k], _ = strconv.Atoi(v)
		}
	}
	own := counts{Failed: kv["failures"], Errors: kv["errors"], Skipped: kv["skipped"]}
	own.Passed = n - own.Failed - own.Errors - own.Skipped
	wantRunner(t, res, own, ran[0]+" "+end[0])
	if c := wantCase(t, res, "test_imp", report.Error); c.Kind != report.KindCollection || c.File != "tests/test_imp.py" {
		t.Errorf("test_imp = %+v", c)
	}
	if r := badReason(res); !strings.Contains(r, "1 test module could not be collected (import errors): test_imp: ModuleNotFoundError: No module named 'requests_not_here'") {
		t.Errorf("reason %q", r)
	}
}

var jestTestsRE = regexp.MustCompile(`^Tests:\s+(.*\d+ total)`)

// jestCounts maps jest's "Tests:" line onto ultra's counts (todo tests are
// skipped) and counts the test files that failed to run, which that line
// leaves out, from jest's "● Test suite failed to run".
func jestCounts(line, log string) counts {
	n := items(line)
	return counts{Passed: n["passed"], Failed: n["failed"], Skipped: n["skipped"] + n["todo"] + n["pending"],
		Errors: strings.Count(log, "● Test suite failed to run")}
}

func TestRunnerSummaryJest(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "jest")
	files := map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "jest"}}`,
		"calc.test.js": `describe('calc', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('subtracts', () => { expect(3 - 1).toBe(5); });
  test.skip('later', () => {});
  TODO
});
test('top', () => {});
`,
		"broken.test.js": "test('x', () => { syntax error here\n",
		"imp.test.js":    "const r = require('not-a-module');\ntest('y', () => {});\n",
	}
	for _, junit := range []bool{false, true} {
		name := "json"
		if junit {
			name = "jest-junit"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := map[string]string{}
			for k, v := range files {
				fs[k] = v
			}
			// jest-junit writes a todo test as a passing one; jest's own
			// --json says todo (ultra reads it when jest-junit is absent).
			todo := "test.todo('todo one');"
			if junit {
				todo = ""
			}
			fs["calc.test.js"] = strings.Replace(fs["calc.test.js"], "TODO", todo, 1)
			dir := project(t, fs)
			if junit {
				nodeModules(t, "jest-junit")
				linkNodeModules(t, dir, nm)
			} else {
				linkNodeModules(t, dir, nm, "jest-junit")
			}
			res := verify(t, Request{Dir: dir})
			log := logOf(t, res)
			m := summaryLine(t, log, jestTestsRE)
			wantRunner(t, res, jestCounts(m[1], log), m[0])
			for _, f := range []string{"broken.test.js", "imp.test.js"} {
				if c := wantCase(t, res, f, report.Error); c.Kind != report.KindCollection {
					t.Errorf("%s = %+v", f, c)
				}
			}
		})
	}
}

var vitestTestsRE = regexp.MustCompile(`^\s*Tests\s+(\d+ .*?)(?:\s*\(\d+\))?\s*$`)

func TestRunnerSummaryVitest(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "vitest")
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "type": "module", "scripts": {"test": "vitest run"}}`,
		"src/calc.test.js": `import { describe, test, expect } from 'vitest';
describe('calc', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('subtracts', () => { expect(3 - 1).toBe(5); });
  test.skip('later', () => {});
  test.todo('todo one');
  describe('deep', () => { test('divides', () => { expect(1).toBe(2); }); });
});
test('top', () => {});
`,
		"src/broken.test.js": "import { test } from 'vitest';\ntest('x', () => { syntax error here\n",
		"src/imp.test.js":    "import 'not-a-module';\nimport { test } from 'vitest';\ntest('y', () => {});\n",
	})
	linkNodeModules(t, dir, nm)
	res := verify(t, Request{Dir: dir})
	log := logOf(t, res)
	m := summaryLine(t, log, vitestTestsRE)
	n := items(m[1])
	// "Tests 2 failed | 2 passed | 1 skipped | 1 todo (6)"; the files that
	// failed to load are only in "Test Files 3 failed (3)", each with its
	// "FAIL  src/x.test.js [ src/x.test.js ]".
	own := counts{Passed: n["passed"], Failed: n["failed"], Skipped: n["skipped"] + n["todo"]}
	for l := range strings.SplitSeq(log, "\n") {
		if m := regexp.MustCompile(`^\s*FAIL\s+(\S+) \[ (\S+) \]\s*$`).FindStringSubmatch(cleanLine(l)); m != nil && m[1] == m[2] {
			own.Errors++
		}
	}
	wantRunner(t, res, own, m[0])
	// Each failing test once, under its file's name.
	wantFailing(t, res, "src/broken.test.js", "src/imp.test.js", "src/calc.test.js > calc > subtracts (src/calc.test.js:4)",
		"src/calc.test.js > calc > deep > divides (src/calc.test.js:7)")

	// The text parsers, on the same output (a runner behind a script),
	// count and name the same.
	p := parseString(log)
	if got := (counts{p.Passed, p.Failed, p.Errors, p.Skipped}); got != own {
		t.Errorf("text parsers: %v; vitest says %v", got, own)
	}
	if len(p.Failing) != own.Failed+own.Errors {
		t.Errorf("text parsers' failing list %q", p.Failing)
	}
}

func TestRunnerSummaryMocha(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "mocha")
	t.Run("tests", func(t *testing.T) {
		t.Parallel()
		dir := project(t, map[string]string{
			"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "mocha"}}`,
			"test/calc.js": `const assert = require('assert');
describe('calc', () => {
  it('adds', () => { assert.strictEqual(1 + 1, 2); });
  it('subtracts', () => { assert.strictEqual(3 - 1, 5); });
  it.skip('later', () => {});
  describe('inner', () => { it('deep', () => {}); });
});
it('top', () => {});
`,
		})
		linkNodeModules(t, dir, nm)
		res := verify(t, Request{Dir: dir})
		// The reporter writes the report; mocha's own summary is its
		// default reporter's "N passing / N failing / N pending".
		cmd := exec.Command("npx", "--no-install", "mocha")
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		var own counts
		for _, m := range regexp.MustCompile(`(?m)^\s*(\d+) (passing|failing|pending)`).FindAllStringSubmatch(string(out), -1) {
			n, _ := strconv.Atoi(m[1])
			switch m[2] {
			case "passing":
				own.Passed = n
			case "failing":
				own.Failed = n
			case "pending":
				own.Skipped = n
			}
		}
		wantRunner(t, res, own, "mocha's spec reporter")
		// and the xunit report's own totals
		var suite struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Errors   int `xml:"errors,attr"` // mocha's xunit counts failing tests here
			Skipped  int `xml:"skipped,attr"`
		}
		if err := xml.Unmarshal([]byte(readFile(t, res.Commands[0].ReportPaths[0])), &suite); err != nil {
			t.Fatal(err)
		}
		if suite.Tests != res.Passed+res.Failed+res.Skipped || suite.Failures+suite.Errors != res.Failed || suite.Skipped != res.Skipped {
			t.Errorf("xunit report says %+v", suite)
		}
	})
	t.Run("a file that does not load", func(t *testing.T) {
		t.Parallel()
		dir := project(t, map[string]string{
			"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "mocha"}}`,
			"test/calc.js": "it('adds', () => {});\n",
			"test/imp.js":  "require('not-a-module');\nit('y', () => {});\n",
		})
		linkNodeModules(t, dir, nm)
		res := verify(t, Request{Dir: dir})
		// mocha stops: "Exception during run", no counts, no report.
		log := logOf(t, res)
		own := counts{Errors: strings.Count(log, "Exception during run")}
		wantRunner(t, res, own, "Exception during run")
		if c := wantCase(t, res, "test/imp.js", report.Error); c.Kind != report.KindCollection || !strings.Contains(c.Message, "Cannot find module 'not-a-module'") {
			t.Errorf("imp.js = %+v", c)
		}
	})
}

func TestRunnerSummaryNodeTest(t *testing.T) {
	t.Parallel()
	need(t, "node", "npm")
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "node --test test/"}}`,
		"test/calc.test.js": `const test = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('multiplies', () => { assert.strictEqual(2 * 3, 5); });
test.describe('group', () => {
  test.it('inner ok', () => {});
  test.it('inner bad', () => { assert.ok(false, 'inner is bad'); });
  test.it.skip('skipped', () => {});
  test.it.todo('todo');
});
test('parent', async (t) => {
  await t.test('child ok', () => {});
  await t.test('child bad', () => { assert.ok(false); });
});
`,
		"test/imp.test.js": "require('not-a-module');\n",
	})
	res := verify(t, Request{Dir: dir})
	log := logOf(t, res)
	n := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^# (pass|fail|cancelled|skipped|todo) (\d+)$`).FindAllStringSubmatch(log, -1) {
		n[m[1]], _ = strconv.Atoi(m[2])
	}
	if len(n) == 0 {
		t.Fatalf("no summary in the log:\n%s", log)
	}
	// node counts a test file that fails to load as a failed test; ultra
	// as an error.
	got := resultCounts(res)
	if got.Passed != n["pass"] || got.Failed+got.Errors != n["fail"]+n["cancelled"] || got.Skipped != n["skipped"]+n["todo"] {
		t.Errorf("ultra counts %v; node says %v", got, n)
	}
	wantAgree(t, res)
	if c := wantCase(t, res, "test/imp.test.js", report.Error); c.Kind != report.KindCollection {
		t.Errorf("imp.test.js = %+v", c)
	}
	if c := wantCase(t, res, "parent", report.Failed); c.Kind != report.KindParent || c.Message != "1 of 2 subtests failed: child bad" {
		t.Errorf("parent = %+v", c)
	}
	if c := wantCase(t, res, "parent > child bad", report.Failed); c.Parent != "parent" {
		t.Errorf("child = %+v", c)
	}
}

var cargoResultRE = regexp.MustCompile(`^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored`)

func TestRunnerSummaryCargo(t *testing.T) {
	t.Parallel()
	need(t, "cargo")
	// One crate for both runs: builds are slow. The first integration
	// binary fails: the later ones run and count all the same.
	dir := project(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
		"src/lib.rs": "/// ```\n/// assert_eq!(calc::add(1, 1), 2);\n/// ```\npub fn add(a: i32, b: i32) -> i32 { a + b }\n\n" +
			"#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test] fn adds() { assert_eq!(add(1, 2), 3); }\n" +
			"    #[test] fn bad() { assert_eq!(add(1, 2), 4, \"math is broken\"); }\n    #[test] #[ignore] fn slow() {}\n}\n",
		"tests/a_it.rs": "#[test]\nfn integration() { assert!(calc::add(2, 2) == 4); }\n#[test]\nfn integ_bad() { assert!(calc::add(2, 2) == 5); }\n",
		"tests/z_it.rs": "#[test]\nfn later() {}\n",
	})
	res := verify(t, Request{Dir: dir})
	var own counts
	sc := bufio.NewScanner(strings.NewReader(logOf(t, res)))
	for sc.Scan() {
		if m := cargoResultRE.FindStringSubmatch(sc.Text()); m != nil {
			p, _ := strconv.Atoi(m[1])
			f, _ := strconv.Atoi(m[2])
			i, _ := strconv.Atoi(m[3])
			own.Passed, own.Failed, own.Skipped = own.Passed+p, own.Failed+f, own.Skipped+i
		}
	}
	wantRunner(t, res, own, "the sum of cargo's test result: lines")
	wantCase(t, res, "later", report.Passed) // after the failing binary
	if src := res.Commands[0].Source; !strings.Contains(src, "--no-fail-fast: every test binary runs even after one fails") {
		t.Errorf("source %q does not say why --no-fail-fast", src)
	}

	// A target that does not compile: nothing runs.
	writeFiles(t, dir, map[string]string{"tests/m_broken.rs": "#[test]\nfn b() { let _x: i32 = \"s\"; }\n"})
	res = verify(t, Request{Dir: dir})
	own = counts{Errors: strings.Count(logOf(t, res), "error: could not compile")}
	wantRunner(t, res, own, "error: could not compile")
	if c := wantCase(t, res, `calc (test "m_broken")`, report.Error); c.Kind != report.KindCollection || c.File != "tests/m_broken.rs" {
		t.Errorf("m_broken = %+v", c)
	}
	if d := gate.Judge(gate.Input{Evidence: evidenceOf(res)}); d.Status != gate.NotEvaluated {
		t.Errorf("nothing could be compiled: %s %v", d.Status, d.Reasons)
	}
}

func TestRunnerSummaryCTest(t *testing.T) {
	t.Parallel()
	need(t, "cmake", "ctest")
	dir := project(t, map[string]string{
		"CMakeLists.txt": `cmake_minimum_required(VERSION 3.20)
project(calc NONE)
enable_testing()
add_test(NAME adds COMMAND sh -c "exit 0")
add_test(NAME subtracts COMMAND sh -c "echo 'subtracts: 2 != 5'; exit 1")
add_test(NAME later COMMAND sh -c "exit 0")
set_tests_properties(later PROPERTIES DISABLED TRUE)
add_test(NAME skipper COMMAND sh -c "exit 77")
set_tests_properties(skipper PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME missing COMMAND /nonexistent/bin/tool)
`,
	})
	if out, err := exec.Command("cmake", "-S", dir, "-B", filepath.Join(dir, "build")).CombinedOutput(); err != nil {
		t.Fatalf("cmake configure: %v\n%s", err, out)
	}
	res := verify(t, Request{Dir: dir})
	log := logOf(t, res)
	m := summaryLine(t, log, regexp.MustCompile(`^\d+% tests passed, (\d+) tests? failed out of (\d+)$`))
	failed, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	// "The following tests did not run:" lists "  3 - later (Disabled)".
	notRun := regexp.MustCompile(`(?m)^\s+\d+ - \S+ \((Disabled|Skipped)\)\s*$`).FindAllStringSubmatch(log, -1)
	disabled, skipped := 0, 0
	for _, m := range notRun {
		if m[1] == "Disabled" {
			disabled++
		} else {
			skipped++
		}
	}
	// ctest's total leaves disabled tests out, and counts those that
	// skipped themselves as passed; it counts a test whose program does
	// not exist ("Not Run") as failed: an error for ultra.
	got := resultCounts(res)
	if got.Failed+got.Errors != failed || got.Skipped != disabled+skipped || got.Passed != total-failed-skipped {
		t.Errorf("ultra counts %v; ctest says %q, %d disabled, %d skipped", got, m[0], disabled, skipped)
	}
	wantAgree(t, res)
	if c := wantCase(t, res, "missing", report.Error); !strings.Contains(c.Message, "Unable to find executable") {
		t.Errorf("missing = %+v", c)
	}
}

// TestRunnerSummaryJSON: the counts and the new fields survive JSON (what
// ultra verify --json prints), and a case without them reads as before.
func TestRunnerSummaryJSON(t *testing.T) {
	t.Parallel()
	c := report.Case{Name: "p.TestX", Status: report.Failed, Kind: report.KindParent, Message: "1 of 2 subtests failed: b"}
	data, _ := json.Marshal(c)
	var back report.Case
	if err := json.Unmarshal(data, &back); err != nil || back != c || !strings.Contains(string(data), `"kind":"parent"`) {
		t.Errorf("%s → %+v (%v)", data, back, err)
	}
	data, _ = json.Marshal(report.Case{Name: "x", Status: report.Passed})
	if string(data) != `{"name":"x","status":"passed"}` {
		t.Errorf("a plain case is %s", data)
	}
}
