package verify

// Small real projects, one per ecosystem, run with their real runners.
// Each test skips when its runner is missing; .ci/run installs them
// (pytest, cmake, and the Node runners into ULTRA_TEST_NODE_MODULES).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

// caseStatus finds a test by name in res.Tests.
func caseStatus(res *Result, name string) (report.Case, bool) {
	for _, c := range res.Tests {
		if c.Name == name {
			return c, true
		}
	}
	return report.Case{}, false
}

func wantCase(t *testing.T, res *Result, name string, status report.Status) report.Case {
	t.Helper()
	c, ok := caseStatus(res, name)
	if !ok {
		var names []string
		for _, c := range res.Tests {
			names = append(names, c.Name)
		}
		t.Errorf("no test %q in %q", name, names)
		return c
	}
	if c.Status != status {
		t.Errorf("%s: status %s, want %s", name, c.Status, status)
	}
	return c
}

func wantFailing(t *testing.T, res *Result, want ...string) {
	t.Helper()
	got := slices.Clone(res.Failing)
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Errorf("failing = %q\nwant      %q", got, w)
	}
}

// wantJSON checks that the result survives JSON (what `ultra verify
// --json` prints) with its counts.
func wantJSON(t *testing.T, res *Result) {
	t.Helper()
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Passed != res.Passed || back.Failed != res.Failed || back.Skipped != res.Skipped || len(back.Tests) != len(res.Tests) {
		t.Errorf("JSON round trip changed the counts: %s", data)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// nodeModules is the node_modules directory with the Node test runners
// (.ci/run installs them and sets ULTRA_TEST_NODE_MODULES).
func nodeModules(t *testing.T, pkgs ...string) string {
	t.Helper()
	need(t, "node", "npm", "npx")
	nm := os.Getenv("ULTRA_TEST_NODE_MODULES")
	if nm == "" {
		t.Skipf("%s not installed: ULTRA_TEST_NODE_MODULES is not set (.ci/run installs the Node test runners)", strings.Join(pkgs, ", "))
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(nm, p, "package.json")); err != nil {
			t.Skipf("%s not installed in ULTRA_TEST_NODE_MODULES=%s", p, nm)
		}
	}
	return nm
}

// linkNodeModules gives dir a node_modules with nm's packages, except
// those named in without (a directory of symlinks then, else one symlink).
func linkNodeModules(t *testing.T, dir, nm string, without ...string) {
	t.Helper()
	target := filepath.Join(dir, "node_modules")
	if len(without) == 0 {
		if err := os.Symlink(nm, target); err != nil {
			t.Fatal(err)
		}
		return
	}
	entries, err := os.ReadDir(nm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if slices.Contains(without, e.Name()) {
			continue
		}
		if err := os.Symlink(filepath.Join(nm, e.Name()), filepath.Join(target, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

const goFlakyTest = `package calc

import (
	"os"
	"testing"
)

func TestFlaky(t *testing.T) {
	marker := "MARKER"
	if _, err := os.Stat(marker); err != nil {
		os.WriteFile(marker, nil, 0o644)
		t.Fatal("fails the first time only")
	}
}
`

func TestRealGoModules(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{
		"go.mod":  goMod,
		"calc.go": calcGo,
		"calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add broken")
	}
}

func TestTable(t *testing.T) {
	for _, c := range []struct {
		name       string
		a, b, want int
	}{{"small", 1, 1, 0}, {"wrong", 5, 3, 3}} {
		t.Run(c.name, func(t *testing.T) {
			if got := Sub(c.a, c.b); got != c.want {
				t.Errorf("Sub(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}
`,
		"tools/go.mod": "module example.com/tools\n\ngo 1.21\n",
		"tools/lint/lint_test.go": `package lint

import "testing"

func TestLint(t *testing.T) { t.Error("lint: 3 problems") }
func TestLater(t *testing.T) { t.Skip("not yet") }
func TestOK(t *testing.T)    {}
`,
		"tools/none/none.go": "package none\n",
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 3, 3, 1) // go test -v's lines: TestTable fails through TestTable/wrong
	wantJSON(t, res)
	if len(res.Commands) != 2 || res.Commands[0].Dir != "" || res.Commands[1].Dir != "tools" {
		t.Fatalf("commands = %+v", res.Commands)
	}
	wantFailing(t, res, "example.com/calc.TestTable (1 of 2 subtests failed: wrong)", "example.com/calc.TestTable/wrong (calc_test.go:18)",
		"example.com/tools/lint.TestLint (tools/lint/lint_test.go:5)")
	wantCase(t, res, "example.com/calc.TestTable/small", report.Passed)
	wantCase(t, res, "example.com/tools/lint.TestLater", report.Skipped)
	sum := res.Summary()
	for _, want := range []string{"cd tools && go test -json ./...", "Sub(5, 3) = 2, want 3", "lint: 3 problems", "tools/lint/lint_test.go:5"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q", want)
		}
	}

	// Only the failing tests: each module runs only its own, per package.
	res = verify(t, Request{Dir: dir, Only: []string{"example.com/tools/lint.TestLint", "example.com/calc.TestTable/wrong"}})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 0, 3, 0) // TestLint, TestTable/wrong and TestTable, which ran it
	if !res.Selected || len(res.Commands) != 2 || !strings.Contains(res.Commands[0].Command, "-run '^TestTable$/^wrong$' example.com/calc") {
		t.Errorf("selected %v, commands %+v", res.Selected, res.Commands)
	}
	res = verify(t, Request{Dir: dir, Only: []string{"example.com/tools/lint.TestOK"}})
	wantStatus(t, res, StatusPass)
	wantCounts(t, res, 1, 0, 0)
	if !res.Selected || len(res.Commands) != 1 || res.Commands[0].Dir != "tools" {
		t.Errorf("selected %v, commands %+v", res.Selected, res.Commands)
	}
}

func TestRealGoWorkAndFlaky(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{
		"go.work":         "go 1.21\n\nuse (\n\t./a\n\t./b\n)\n",
		"a/go.mod":        "module example.com/a\n\ngo 1.21\n",
		"a/a_test.go":     "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n",
		"b/go.mod":        "module example.com/calc\n\ngo 1.21\n",
		"b/flaky_test.go": strings.Replace(goFlakyTest, "MARKER", filepath.Join(t.TempDir(), "marker"), 1),
		"b/ok_test.go":    "package calc\n\nimport \"testing\"\n\nfunc TestStable(t *testing.T) { t.Error(\"always\") }\n",
	})
	res := verify(t, Request{Dir: dir, Rerun: true})
	wantStatus(t, res, StatusFail) // verify's own rules: the first outcome counts
	wantCounts(t, res, 1, 2, 0)
	if !slices.Equal(res.Flaky, []string{"example.com/calc.TestFlaky"}) {
		t.Errorf("flaky = %q", res.Flaky)
	}
	wantCase(t, res, "example.com/calc.TestFlaky", report.Failed) // first outcome kept
	rr := res.Commands[1].Rerun
	if rr == nil || !rr.Selected || rr.LogPath == res.Commands[1].LogPath || res.Commands[0].Rerun != nil {
		t.Fatalf("re-run = %+v", rr)
	}
	if c, _ := caseStatus(&Result{Tests: rr.Tests}, "example.com/calc.TestStable"); c.Status != report.Failed {
		t.Errorf("TestStable on re-run: %+v", c)
	}
	if !strings.Contains(res.Summary(), "flaky (failed, then passed on re-run): example.com/calc.TestFlaky") {
		t.Error("summary does not name the flaky test")
	}
}

func TestRealNodeTest(t *testing.T) {
	t.Parallel()
	need(t, "node", "npm")
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "node --test test/"}}`,
		"test/calc.test.js": `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('multiplies', () => { assert.strictEqual(2 * 3, 5); });
test.describe('group', () => {
  test.it('inner ok', () => {});
  test.it('inner bad', () => { assert.ok(false, 'inner is bad'); });
  test.it.skip('skipped', () => {});
});
test('flaky', () => {
  const marker = MARKER;
  if (!fs.existsSync(marker)) { fs.writeFileSync(marker, ''); throw new Error('first time fails'); }
});
`,
	})
	marker, _ := json.Marshal(filepath.Join(t.TempDir(), "marker"))
	writeFiles(t, dir, map[string]string{"test/calc.test.js": strings.Replace(readFile(t, filepath.Join(dir, "test/calc.test.js")), "MARKER", string(marker), 1)})
	res := verify(t, Request{Dir: dir, Rerun: true})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 3, 1)
	c := res.Commands[0]
	if c.Command != "node --test --test-reporter=tap test/" || c.Format != "tap" || !c.ReportOK {
		t.Errorf("command %q, format %q, report %v", c.Command, c.Format, c.ReportOK)
	}
	wantFailing(t, res, "multiplies (test/calc.test.js:5)", "group > inner bad (test/calc.test.js:8)", "flaky (test/calc.test.js:11)")
	if !slices.Equal(res.Flaky, []string{"flaky"}) {
		t.Errorf("flaky = %q", res.Flaky)
	}

	res = verify(t, Request{Dir: dir, Only: []string{"group > inner bad"}})
	wantStatus(t, res, StatusFail)
	if res.Failed != 1 || res.Passed != 0 || !res.Selected {
		t.Errorf("selection: %d passed, %d failed, selected %v", res.Passed, res.Failed, res.Selected)
	}
}

func TestRealJest(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "jest")
	files := map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "jest"}}`,
		"calc.test.js": `describe('calc', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('subtracts', () => { expect(3 - 1).toBe(5); });
  test.skip('later', () => {});
});
test('top', () => { console.log('noise'); });
`,
		"broken.test.js": "test('x', () => { syntax error here\n",
	}
	for _, junit := range []bool{false, true} {
		name := "json"
		if junit {
			name = "jest-junit"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := project(t, files)
			if junit {
				nodeModules(t, "jest-junit")
				linkNodeModules(t, dir, nm)
			} else {
				linkNodeModules(t, dir, nm, "jest-junit")
			}
			res := verify(t, Request{Dir: dir})
			wantStatus(t, res, StatusFail)
			wantCounts(t, res, 2, 1, 1) // and broken.test.js: an error, below
			c := res.Commands[0]
			if !c.ReportOK || (junit && c.Format != "junit") || (!junit && c.Format != "jest-json") || len(c.ReportPaths) != 1 {
				t.Errorf("format %q, report %v %q", c.Format, c.ReportOK, c.ReportPaths)
			}
			sub := wantCase(t, res, "calc.test.js > calc > subtracts", report.Failed)
			if sub.File != "calc.test.js" || sub.Line != 3 || !strings.Contains(sub.Message, "Expected: 5") {
				t.Errorf("subtracts = %+v", sub)
			}
			wantCase(t, res, "calc.test.js > top", report.Passed)
			wantCase(t, res, "calc.test.js > calc > later", report.Skipped)
			if res.Errors != 1 {
				t.Errorf("errors = %d, want 1 (broken.test.js)", res.Errors)
			}

			if junit {
				return // the selection is the same (and jest is slow)
			}
			// broken.test.js fails to load whatever the selection.
			res = verify(t, Request{Dir: dir, Only: []string{"calc.test.js > calc > subtracts"}})
			if !res.Selected || res.Passed != 0 || res.Failed != 1 {
				t.Errorf("selection: %d passed, %d failed, selected %v: %s", res.Passed, res.Failed, res.Selected, res.Commands[0].Command)
			}
			wantCase(t, res, "calc.test.js > calc > subtracts", report.Failed)
		})
	}
}

func TestRealVitest(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "vitest")
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "vitest run"}}`,
		"calc.test.js": `import { describe, test, expect } from 'vitest';
describe('calc', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('subtracts', () => { expect(3 - 1).toBe(5); });
  test.skip('later', () => {});
});
test('top', () => {});
`,
	})
	linkNodeModules(t, dir, nm)
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 1, 1)
	wantFailing(t, res, "calc.test.js > calc > subtracts (calc.test.js:4)")
	if c := res.Commands[0]; !c.ReportOK || c.Format != "junit" {
		t.Errorf("format %q, report %v", c.Format, c.ReportOK)
	}
	res = verify(t, Request{Dir: dir, Only: []string{"calc.test.js > calc > subtracts", "calc.test.js > top"}})
	if !res.Selected || res.Passed != 1 || res.Failed != 1 {
		t.Errorf("selection: %d passed, %d failed, selected %v: %s", res.Passed, res.Failed, res.Selected, res.Commands[0].Command)
	}
}

func TestRealMocha(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "mocha")
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "mocha"}}`,
		"test/calc.js": `const assert = require('assert');
describe('calc', () => {
  it('adds', () => { assert.strictEqual(1 + 1, 2); });
  it('subtracts', () => { assert.strictEqual(3 - 1, 5); });
  it.skip('later', () => {});
});
it('top', () => {});
`,
	})
	linkNodeModules(t, dir, nm)
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 1, 1)
	if len(res.Failing) != 1 || !strings.Contains(res.Failing[0], "subtracts") || !strings.HasSuffix(res.Failing[0], "(test/calc.js:4)") {
		t.Errorf("failing = %q", res.Failing)
	}
	var failing string
	for _, c := range res.Tests {
		if c.Status == report.Failed {
			failing = c.Name
		}
	}
	res = verify(t, Request{Dir: dir, Only: []string{failing}})
	if !res.Selected || res.Passed != 0 || res.Failed != 1 {
		t.Errorf("selection: %d passed, %d failed, selected %v: %s", res.Passed, res.Failed, res.Selected, res.Commands[0].Command)
	}
}

// needPytest skips when no python has pytest.
func needPytest(t *testing.T) {
	t.Helper()
	if _, why := pythonRunner(t.TempDir(), "pytest"); strings.Contains(why, "not seem to be installed") {
		t.Skip("pytest not installed")
	}
}

func TestRealPytest(t *testing.T) {
	t.Parallel()
	needPytest(t)
	dir := project(t, map[string]string{
		"pytest.ini": "[pytest]\n",
		"tests/test_calc.py": `import os
import pytest

def test_add():
    assert 1 + 1 == 2

def test_sub():
    assert 3 - 1 == 5, "subtraction is broken"

@pytest.mark.skip(reason="later")
def test_skip():
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n > 0

class TestC:
    def test_m(self):
        assert True

    def test_err(self, missing_fixture):
        pass

def test_flaky():
    marker = MARKER
    if not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError("first time fails")
`,
	})
	marker, _ := json.Marshal(filepath.Join(t.TempDir(), "marker"))
	writeFiles(t, dir, map[string]string{"tests/test_calc.py": strings.Replace(readFile(t, filepath.Join(dir, "tests/test_calc.py")), "MARKER", string(marker), 1)})
	res := verify(t, Request{Dir: dir, Rerun: true})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 4, 2, 1) // and test_err's fixture: an error, below
	wantJSON(t, res)
	if res.Errors != 1 {
		t.Errorf("errors = %d, want 1", res.Errors)
	}
	wantFailing(t, res, "tests/test_calc.py::test_sub (tests/test_calc.py:8)",
		"tests/test_calc.py::TestC::test_err (tests/test_calc.py:22)",
		"tests/test_calc.py::test_flaky (tests/test_calc.py:29)")
	wantCase(t, res, "tests/test_calc.py::test_param[2]", report.Passed)
	if !slices.Equal(res.Flaky, []string{"tests/test_calc.py::test_flaky"}) {
		t.Errorf("flaky = %q", res.Flaky)
	}
	if _, err := os.Stat(filepath.Join(dir, "tests", "__pycache__")); err == nil {
		t.Error("pytest left __pycache__ in the tree")
	}
	if !strings.Contains(res.Summary(), "subtraction is broken") {
		t.Error("summary lacks the assertion message")
	}

	res = verify(t, Request{Dir: dir, Only: []string{"tests/test_calc.py::test_sub", "tests/test_calc.py::test_param[1]"}})
	if !res.Selected || res.Passed != 1 || res.Failed != 1 {
		t.Errorf("selection: %d passed, %d failed, selected %v: %s", res.Passed, res.Failed, res.Selected, res.Commands[0].Command)
	}

	// No tests: pytest exits 5.
	empty := project(t, map[string]string{"pytest.ini": "[pytest]\n"})
	res = verify(t, Request{Dir: empty})
	wantStatus(t, res, StatusNotEvaluated)
}

func TestRealUnittest(t *testing.T) {
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

    def test_doc(self):
        """A docstring."""
`,
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 1, 1)
	if res.Errors != 1 {
		t.Errorf("errors = %d, want 1 (test_err)", res.Errors)
	}
	c := res.Commands[0]
	if c.Command != "python3 -m unittest discover -v -s tests" || c.Format != "unittest" || !c.ReportOK {
		t.Errorf("command %q, format %q, report %v", c.Command, c.Format, c.ReportOK)
	}
	wantFailing(t, res, "test_calc.TestCalc.test_sub (tests/test_calc.py:8)", "test_calc.TestCalc.test_err (tests/test_calc.py:11)")

	res = verify(t, Request{Dir: dir, Only: []string{"test_calc.TestCalc.test_sub"}})
	if !res.Selected || res.Passed != 0 || res.Failed != 1 {
		t.Errorf("selection: %d passed, %d failed, selected %v: %s", res.Passed, res.Failed, res.Selected, res.Commands[0].Command)
	}
}

func TestRealCargo(t *testing.T) {
	t.Parallel()
	need(t, "cargo")
	// One crate for every check: builds are slow.
	dir := project(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
		"src/lib.rs": `/// Adds.
///
/// ` + "```" + `
/// assert_eq!(calc::add(1, 1), 2);
/// ` + "```" + `
pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    use super::*;
    #[test] fn adds() { assert_eq!(add(1, 2), 3); }
    #[test] fn bad() { assert_eq!(add(1, 2), 4, "math is broken"); }
    #[test] #[ignore] fn slow() {}
}
`,
		"tests/it.rs": "#[test]\nfn integration() { assert!(calc::add(2, 2) == 4); }\n",
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 3, 1, 1)
	wantFailing(t, res, "tests::bad (src/lib.rs:12)")
	if c := res.Commands[0]; c.Format != "cargo" || !c.ReportOK {
		t.Errorf("format %q, report %v", c.Format, c.ReportOK)
	}
	if !strings.Contains(res.Summary(), "math is broken") {
		t.Error("summary lacks the panic message")
	}

	var only []string
	for _, c := range res.Tests {
		if c.Name == "tests::bad" || c.Name == "integration" {
			only = append(only, SelectName(c.Name, c.Suite, c.File))
		}
	}
	res = verify(t, Request{Dir: dir, Only: only})
	if !res.Selected || res.Passed != 1 || res.Failed != 1 {
		t.Errorf("selection: %d passed, %d failed, selected %v: %s", res.Passed, res.Failed, res.Selected, res.Commands[0].Command)
	}
	// Only the two tests' binaries ran: no doc-tests, nothing else.
	if cmd := res.Commands[0].Command; !strings.Contains(cmd, "--lib --test it -- --exact") || len(res.Tests) != 2 {
		t.Errorf("selection ran %d tests with %s, want the unit and integration binaries only", len(res.Tests), cmd)
	}
}

func TestRealMakeCheckGoJSON(t *testing.T) {
	t.Parallel()
	need(t, "make", "go")
	dir := project(t, map[string]string{
		"Makefile":     "check:\n\tgo test -json ./...\n",
		"go.mod":       goMod,
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\nfunc TestB(t *testing.T) { t.Fatal(\"b\") }\n",
	})
	// go.mod wins over the Makefile; ask for make explicitly.
	res := verify(t, Request{Dir: dir, Commands: []string{"make check"}})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 1, 1, 0)
	if c := res.Commands[0]; c.Format != "go-json" || !c.ReportOK {
		t.Errorf("format %q, report %v (detected from the output)", c.Format, c.ReportOK)
	}
	wantFailing(t, res, "example.com/calc.TestB (calc_test.go:6)")
	res = verify(t, Request{Dir: dir, Commands: []string{"make check"}, Only: []string{"example.com/calc.TestB"}})
	if res.Selected || res.Passed+res.Failed != 2 {
		t.Errorf("make cannot select: selected %v, %d tests", res.Selected, res.Passed+res.Failed)
	}
}

func TestRealCMake(t *testing.T) {
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
`,
	})
	if out, err := exec.Command("cmake", "-S", dir, "-B", filepath.Join(dir, "build")).CombinedOutput(); err != nil {
		t.Fatalf("cmake configure: %v\n%s", err, out)
	}
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 1, 1, 1)
	if c := res.Commands[0]; c.Format != "junit" || !c.ReportOK || c.Runner != "ctest" {
		t.Errorf("runner %q, format %q, report %v", c.Runner, c.Format, c.ReportOK)
	}
	wantCase(t, res, "subtracts", report.Failed)
	res = verify(t, Request{Dir: dir, Only: []string{"adds"}})
	wantStatus(t, res, StatusPass)
	if !res.Selected || res.Passed != 1 {
		t.Errorf("selection: %d passed, selected %v", res.Passed, res.Selected)
	}
}

func TestRealMaven(t *testing.T) {
	t.Parallel()
	need(t, "mvn", "java")
	// The test downloads nothing: Maven must already have its plugins.
	home, _ := os.UserHomeDir()
	if m, _ := filepath.Glob(filepath.Join(home, ".m2", "repository", "org", "apache", "maven", "plugins", "maven-surefire-plugin", "*")); len(m) == 0 {
		t.Skip("maven offline: its surefire plugin is not in ~/.m2 and this test downloads nothing")
	}
	dir := project(t, map[string]string{
		"pom.xml": `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId><artifactId>calc</artifactId><version>1</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source><maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
</project>
`,
		"src/test/java/com/acme/CalcTest.java": `package com.acme;
import org.junit.Test;
import static org.junit.Assert.assertEquals;
public class CalcTest {
  @Test public void adds() { assertEquals(2, 1 + 1); }
  @Test public void subtracts() { assertEquals(5, 3 - 1); }
}
`,
	})
	res := verify(t, Request{Dir: dir})
	if log, _ := os.ReadFile(res.Commands[0].LogPath); res.Passed+res.Failed == 0 &&
		(strings.Contains(string(log), "Could not ") || strings.Contains(string(log), "PluginResolutionException")) {
		t.Skip("maven cannot download its plugins here (offline): " + res.Reason)
	}
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 1, 1, 0)
	wantFailing(t, res, "com.acme.CalcTest.subtracts (CalcTest.java:6)")
}

func TestPytestMissingIsNotEvaluated(t *testing.T) {
	t.Parallel()
	dir := project(t, map[string]string{"fake-python": "#!/bin/sh\necho \"/usr/bin/python3: No module named pytest\" >&2\nexit 1\n"})
	if err := os.Chmod(filepath.Join(dir, "fake-python"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := verify(t, Request{Dir: dir, Commands: []string{"./fake-python -m pytest"}})
	wantStatus(t, res, StatusNotEvaluated)
	if !res.Commands[0].NotFound || !strings.Contains(res.Reason, "No module named pytest") {
		t.Errorf("reason %q, command %+v", res.Reason, res.Commands[0])
	}
}
