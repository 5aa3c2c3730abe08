package verify

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// textCase is an output and what the text parsers must read in it.
type textCase struct {
	name    string
	in      string
	want    tally
	failing []string // exactly, in order; nil: not checked
	formats []string // nil: not checked
	excerpt []string // substrings of the excerpt
}

// checkText parses tc.in and compares.
func checkText(t *testing.T, tc textCase) parsed {
	t.Helper()
	got := parseString(tc.in)
	if got.tally != tc.want {
		t.Errorf("counts = %+v, want %+v", got.tally, tc.want)
	}
	if tc.failing != nil && !slices.Equal(got.Failing, tc.failing) {
		t.Errorf("failing = %q, want %q", got.Failing, tc.failing)
	}
	if tc.formats != nil && !slices.Equal(append([]string{}, got.Formats...), tc.formats) {
		t.Errorf("formats = %q, want %q", got.Formats, tc.formats)
	}
	for _, want := range tc.excerpt {
		if !strings.Contains(got.Excerpt, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, got.Excerpt)
		}
	}
	if len(got.Excerpt) > MaxExcerpt {
		t.Errorf("excerpt is %d bytes", len(got.Excerpt))
	}
	return got
}

func TestParsers(t *testing.T) {
	t.Parallel()
	for _, tc := range []textCase{
		{
			name: "go test -json",
			in:   goJSONSample,
			// Every test and subtest; the package that did not build is an error.
			want: tally{Passed: 3, Failed: 5, Skipped: 1, Errors: 1},
			failing: []string{"ex/m.TestBad", "ex/m.TestSub (1 of 3 subtests failed: b)", "ex/m.TestSub/b", "ex/m.TestParentOnly", "ex/m.TestPanic",
				"ex/m/sub"},
			formats: []string{"go test -json"},
			excerpt: []string{"--- FAIL: ex/m.TestBad", "got 1 want 2", "boom", "undefined: undefinedThing",
				"ex/m/sub [build failed]", "failed after its subtests", "panic: assignment"},
		},
		{
			name:    "go test -json timeout",
			in:      goJSONTimeout,
			want:    tally{Passed: 1, Failed: 1},
			failing: []string{"ex/m.TestHang"},
			excerpt: []string{"never finished", "panic: test timed out"},
		},
		{
			name:    "go test -json with stderr text",
			in:      "go: downloading example.com/x v1.0.0\n" + goJSONTimeout,
			want:    tally{Passed: 1, Failed: 1},
			failing: []string{"ex/m.TestHang"},
			formats: []string{"go test -json"},
		},
		{
			name:    "go test -json setup and vet failures",
			in:      goJSONSetupFail,
			want:    tally{Errors: 2},
			failing: []string{"example.com/v/s", "example.com/v"},
			excerpt: []string{"example.com/v/s [setup failed]", "no required module provides package",
				"example.com/v [build failed]", "of wrong type string"},
		},
		{
			name:    "go test -v",
			in:      goVerbose,
			want:    tally{Passed: 3, Failed: 2, Skipped: 1}, // its "---" lines
			failing: []string{"ex/a.TestTable (1 of 2 subtests failed: two)", "ex/a.TestTable/two"},
			formats: []string{"go test"},
			excerpt: []string{"two is wrong"},
		},
		{
			name:    "go test without -v",
			in:      goPlain,
			want:    tally{Passed: 2, Failed: 1, Errors: 1},
			failing: []string{"ex/b.TestX", "ex/f"},
			excerpt: []string{"x_test.go:5: bad", "syntax error"},
		},
		{
			name:    "node --test TAP",
			in:      nodeTAP,
			want:    tally{Passed: 3, Failed: 1, Skipped: 1},
			failing: []string{"fails"},
			formats: []string{"TAP summary"},
			excerpt: []string{"not ok 2 - fails", "2 !== 3"},
		},
		{
			name:    "node --test spec",
			in:      nodeSpec,
			want:    tally{Passed: 3, Failed: 1, Skipped: 1},
			failing: []string{"fails"},
			formats: []string{"node --test"},
		},
		{
			name: "TAP without summary",
			in: "1..5\nok 1 - a\nnot ok 2 - b\n    not ok 1 - b inner\nok 3 # SKIP no db\n" +
				"not ok 4 - later # TODO not done\nok 5\n",
			want:    tally{Passed: 2, Failed: 1, Skipped: 2},
			failing: []string{"b", "b inner"},
			formats: []string{"TAP"},
		},
		{
			name:    "jest",
			in:      jestOut,
			want:    tally{Passed: 4, Failed: 1, Skipped: 1},
			failing: []string{"math › adds"},
			formats: []string{"jest"},
			excerpt: []string{"Expected: 4"},
		},
		{
			name:    "jest coloured",
			in:      "\x1b[1mTests:       \x1b[22m\x1b[1m\x1b[32m2 passed\x1b[39m\x1b[22m, 2 total\n",
			want:    tally{Passed: 2},
			formats: []string{"jest"},
		},
		{
			name:    "vitest",
			in:      vitestOut,
			want:    tally{Passed: 4, Failed: 1, Skipped: 1},
			formats: []string{"vitest"},
			excerpt: []string{"expected 2 to be 3"},
		},
		{
			// vitest 2 and later print a failing test under its file, then
			// again with the file: one name, the file's.
			name:    "vitest lists each failure once",
			in:      vitestTwice,
			want:    tally{Passed: 1, Failed: 2, Skipped: 2},
			failing: []string{"src/calc.test.ts > calc > subtracts", "src/calc.test.ts > calc > deep > divides"},
			formats: []string{"vitest"},
		},
		{
			// vitest 1.6, real: two files that fail to load.
			name:    "vitest files that fail to load",
			in:      vitestLoadFailures,
			want:    tally{Passed: 1, Failed: 2, Skipped: 2, Errors: 2},
			failing: []string{"src/broken.test.js", "src/imp.test.js", "src/calc.test.js > calc > subtracts", "src/calc.test.js > top"},
			formats: []string{"vitest"},
		},
		{
			// jest 29, real: "Test suite failed to run" is a file, not a test.
			name:    "jest test files that fail to run",
			in:      jestLoadFailures,
			want:    tally{Passed: 2, Failed: 1, Skipped: 2, Errors: 2},
			failing: []string{"calc › subtracts", "imp.test.js", "broken.test.js"},
			formats: []string{"jest"},
		},
		{
			// pytest 7, real: collection errors interrupt the run.
			name:    "pytest collection errors",
			in:      pytestCollectionOut,
			want:    tally{Errors: 2},
			failing: []string{"tests/test_imp.py", "tests/test_syn.py"},
			formats: []string{"pytest"},
		},
		{
			// python 3.11, real.
			name:    "unittest",
			in:      unittestOut,
			want:    tally{Passed: 1, Failed: 2, Skipped: 1, Errors: 2},
			formats: []string{"unittest"},
		},
		{
			name:    "unittest OK",
			in:      "..s\n----------------------------------------------------------------------\nRan 3 tests in 0.000s\n\nOK (skipped=1)\n",
			want:    tally{Passed: 2, Skipped: 1},
			formats: []string{"unittest"},
		},
		{
			// ctest 3.25, real: ctest counts the tests that skipped
			// themselves as passed.
			name:    "ctest",
			in:      ctestOut,
			want:    tally{Passed: 2, Failed: 2},
			formats: []string{"ctest"},
		},
		{
			name:    "vitest all pass",
			in:      " Test Files  1 passed (1)\n      Tests  2 passed (2)\n",
			want:    tally{Passed: 2},
			formats: []string{"vitest"},
		},
		{
			name:    "mocha",
			in:      mochaOut,
			want:    tally{Passed: 3, Failed: 2, Skipped: 1},
			formats: []string{"mocha"},
			excerpt: []string{"1 == 2"},
		},
		{
			name:    "pytest",
			in:      pytestOut,
			want:    tally{Passed: 5, Failed: 2, Skipped: 1},
			failing: []string{"tests/test_a.py::test_x", "tests/test_a.py::test_y"},
			formats: []string{"pytest"},
			excerpt: []string{"assert 1 == 2"},
		},
		{
			name:    "pytest quiet",
			in:      "..F.\n1 failed, 3 passed, 1 error in 0.10s\n",
			want:    tally{Passed: 3, Failed: 1, Errors: 1},
			formats: []string{"pytest"},
		},
		{
			name:    "pytest duration suffix",
			in:      "======== 12 passed, 1 xfailed in 61.02s (0:01:01) ========\n",
			want:    tally{Passed: 12, Skipped: 1},
			formats: []string{"pytest"},
		},
		{
			name:    "plain",
			in:      "running...\n3 passed, 0 failed\n",
			want:    tally{Passed: 3},
			formats: []string{"passed/failed line"},
		},
		{
			name: "plain with skipped",
			in:   "3 passed, 1 failed, 2 skipped.\n",
			want: tally{Passed: 3, Failed: 1, Skipped: 2},
		},
		{
			name:    "several suites add up",
			in:      goVerbose + nodeTAP + "1 passed, 0 failed\n",
			want:    tally{Passed: 7, Failed: 3, Skipped: 2},
			formats: []string{"go test", "TAP summary", "passed/failed line"},
		},
		{
			name:    "carriage return redraws",
			in:      "progress 10%\rprogress 100%\r3 passed, 0 failed\n",
			want:    tally{Passed: 3},
			formats: []string{"passed/failed line"},
		},
		{
			name:    "unrecognised",
			in:      "hello\nall good, 5 tests look fine\nok\n",
			want:    tally{},
			formats: []string{},
		},
		{
			name:    "not counts",
			in:      "3 apples, 2 passed\nthe 2 passed tests\n# pass the salt\nTests: none\n",
			want:    tally{},
			formats: []string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { checkText(t, tc) })
	}
}

func TestNoTestsLines(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"go: warning: \"./...\" matched no packages\nno packages to test\n",
		"No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\n",
		"No test files found, exiting with code 1\n",
		"==== no tests ran in 0.01s ====\n",
	} {
		got := parseString(in)
		if got.NoTests == "" || got.Passed+got.Failed != 0 {
			t.Errorf("%q: NoTests %q, counts %+v", in, got.NoTests, got.tally)
		}
	}
}

func TestCountTests(t *testing.T) {
	t.Parallel()
	order := []string{"A", "A/x", "A/y", "A/y/deep", "B", "C", "C/x", "D", "E", "E/x"}
	state := map[string]string{
		"A": "fail", "A/x": "pass", "A/y": "fail", "A/y/deep": "fail",
		"B": "skip", "C": "fail", "C/x": "pass", "D": "run", "E": "pass", "E/x": "skip",
	}
	// Every test and subtest, as go test -v's "---" lines.
	got, failed := countTests(order, state)
	want := tally{Passed: 3, Failed: 5, Skipped: 2} // A/x C/x E; A A/y A/y/deep C D; B E/x
	var failing []string
	for _, f := range failed {
		failing = append(failing, f.String())
	}
	wantFailing := []string{"A (1 of 2 subtests failed: y)", "A/y (1 of 1 subtest failed: deep)", "A/y/deep", "C", "D"}
	if got != want || !slices.Equal(failing, wantFailing) {
		t.Errorf("countTests = %+v %q, want %+v %q", got, failing, want, wantFailing)
	}
}

func TestExcerptWindow(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "noise line %d\n", i)
		if i == 2000 {
			b.WriteString("--- FAIL: TestMiddle (0.00s)\n    m_test.go:3: the middle broke\n")
		}
	}
	b.WriteString("FAIL\tex/m\t0.1s\n")
	got := parseString(b.String())
	ex := got.Excerpt
	if len(ex) > MaxExcerpt {
		t.Fatalf("excerpt %d bytes", len(ex))
	}
	for _, want := range []string{"noise line 2000", "the middle broke", "…", "FAIL\tex/m\t0.1s"} {
		if !strings.Contains(ex, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, ex)
		}
	}
	if strings.Contains(ex, "noise line 100\n") {
		t.Error("excerpt holds unrelated early output")
	}
	if !slices.Equal(got.Failing, []string{"ex/m.TestMiddle"}) {
		t.Errorf("failing = %q", got.Failing)
	}
}

func TestGoJSONManyFailuresBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"Action":"start","Package":"ex/m"}` + "\n")
	for i := range 3000 {
		fmt.Fprintf(&b, `{"Action":"run","Package":"ex/m","Test":"Test%d"}`+"\n", i)
		fmt.Fprintf(&b, `{"Action":"output","Package":"ex/m","Test":"Test%d","Output":"    x_test.go:1: %s\n"}`+"\n", i, strings.Repeat("x", 5000))
		fmt.Fprintf(&b, `{"Action":"fail","Package":"ex/m","Test":"Test%d"}`+"\n", i)
	}
	b.WriteString(`{"Action":"fail","Package":"ex/m"}` + "\n")
	got := parseString(b.String())
	if got.Failed != 3000 || len(got.Failing) != MaxFailing || len(got.Excerpt) > MaxExcerpt {
		t.Errorf("failed %d, %d names, excerpt %d bytes", got.Failed, len(got.Failing), len(got.Excerpt))
	}
	res := &Result{Status: StatusFail, Reason: "3000 of 3000 tests failed", Failed: got.Failed, Failing: got.Failing,
		Excerpt: got.Excerpt, Duration: time.Second,
		Commands: []CommandResult{{Command: "go test -json ./...", Source: "go.mod found", ExitCode: 1, Failed: 3000, LogPath: "/tmp/x.log"}}}
	sum := res.Summary()
	if len(sum) > MaxSummary || !strings.Contains(sum, "ex/m.Test0") || !strings.Contains(sum, "more") {
		t.Errorf("summary (%d bytes):\n%s", len(sum), sum)
	}
}

func TestLongLines(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("y", 3<<20) + "\n3 passed, 1 failed\n"
	got := parseString(in)
	if got.tally != (tally{Passed: 3, Failed: 1}) {
		t.Errorf("counts = %+v", got.tally)
	}
}

func TestSummaryBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 10000)
	res := &Result{Status: StatusFail, Reason: long, Excerpt: long, Failed: 100}
	for i := range 100 {
		res.Failing = append(res.Failing, fmt.Sprintf("pkg.Test%d%s", i, long))
		res.Commands = append(res.Commands, CommandResult{Command: long, Source: long, LogPath: long})
	}
	sum := res.Summary()
	if len(sum) > MaxSummary || !strings.HasPrefix(sum, "verify: fail") {
		t.Errorf("summary is %d bytes: %.200s", len(sum), sum)
	}
	if !strings.Contains(sum, "more commands") {
		t.Error("commands not elided")
	}
	if (*Result)(nil).Summary() == "" {
		t.Error("nil summary empty")
	}
}

// vitestLoadFailures is real output of vitest 1.6 run (CI=true, NO_COLOR=1): two test files that fail to load and one with two failing tests.
const vitestLoadFailures = `
 RUN  v1.6.1 /tmp/vc

 ❯ src/calc.test.js  (5 tests | 2 failed | 2 skipped) 9ms
   ❯ src/calc.test.js > calc > subtracts
     → expected 2 to be 5 // Object.is equality
   ❯ src/calc.test.js > top
     → expected 1 to be 2 // Object.is equality
 ❯ src/imp.test.js  (0 test)
 ❯ src/broken.test.js  (0 test)

⎯⎯⎯⎯⎯⎯ Failed Suites 2 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/broken.test.js [ src/broken.test.js ]
Error: Failed to parse source for import analysis because the content contains invalid JS syntax. If you are using JSX, make sure to name the file with the .jsx or .tsx extension.
 ❯ TransformPluginContext._formatError ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:49258:41
 ❯ TransformPluginContext.error ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:49253:16
 ❯ TransformPluginContext.transform ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:64259:14
 ❯ PluginContainer.transform ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:49099:18
 ❯ loadAndTransform ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:51978:27

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/4]⎯

 FAIL  src/imp.test.js [ src/imp.test.js ]
Error: Failed to load url not-a-module (resolved id: not-a-module) in /tmp/vc/src/imp.test.js. Does the file exist?
 ❯ loadAndTransform ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:51969:17

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[2/4]⎯

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 2 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/calc.test.js > calc > subtracts
AssertionError: expected 2 to be 5 // Object.is equality

- Expected
+ Received

- 5
+ 2

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[3/4]⎯

 FAIL  src/calc.test.js > top
AssertionError: expected 1 to be 2 // Object.is equality

- Expected
+ Received

- 2
+ 1

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[4/4]⎯

 Test Files  3 failed (3)
      Tests  2 failed | 1 passed | 1 skipped | 1 todo (5)
   Start at  04:22:33
   Duration  1.35s (transform 45ms, setup 0ms, collect 11ms, tests 9ms, environment 1ms, prepare 462ms)

`

// jestLoadFailures is real output of jest 29 (CI=true, NO_COLOR=1, stack frames removed): two test files that fail to run and one with a failing test.
const jestLoadFailures = `FAIL ./calc.test.js
  ● calc › subtracts

    expect(received).toBe(expected) // Object.is equality

    Expected: 5
    Received: 2

      1 | describe('calc', () => {
      2 |   test('adds', () => { expect(1 + 1).toBe(2); });
    > 3 |   test('subtracts', () => { expect(3 - 1).toBe(5); });
        |                                           ^
      4 |   test.skip('later', () => {});
      5 |   test.todo('todo one');
      6 | });


FAIL ./imp.test.js
  ● Test suite failed to run

    Cannot find module 'not-a-module' from 'imp.test.js'

    > 1 | const r = require('not-a-module'); test('y', () => {});
        |                                  ^
      2 |


FAIL ./broken.test.js
  ● Test suite failed to run

    Jest encountered an unexpected token

    Jest failed to parse a file. This happens e.g. when your code or its dependencies use non-standard JavaScript syntax, or when Jest is not configured to support such syntax.

    Out of the box Jest supports Babel, which will be used to transform your files into valid JS based on your Babel configuration.

    By default "node_modules" folder is ignored by transformers.

    Here's what you can do:
     • If you are trying to use ECMAScript Modules, see https://jestjs.io/docs/ecmascript-modules for how to enable it.
     • If you are trying to use TypeScript, see https://jestjs.io/docs/getting-started#using-typescript
     • To have some of your "node_modules" files transformed, you can specify a custom "transformIgnorePatterns" in your config.
     • If you need a custom transformation specify a "transform" option in your config.
     • If you simply want to mock your non-JS modules (e.g. binary assets) you can stub them out with the "moduleNameMapper" config option.

    You'll find more details and examples of these config options in the docs:
    https://jestjs.io/docs/configuration
    For information about custom transformations, see:
    https://jestjs.io/docs/code-transformation

    Details:

    SyntaxError: /tmp/jc/broken.test.js: Missing semicolon. (1:24)

    > 1 | test('x', () => { syntax error here
        |                         ^
      2 |


Test Suites: 3 failed, 3 total
Tests:       1 failed, 1 skipped, 1 todo, 2 passed, 5 total
Snapshots:   0 total
Time:        1.044 s
Ran all test suites.
`

// pytestCollectionOut is real output of pytest 7.2 -q: a module with a missing import and one with a syntax error.
const pytestCollectionOut = `
==================================== ERRORS ====================================
______________________ ERROR collecting tests/test_imp.py ______________________
ImportError while importing test module '/tmp/pc/tests/test_imp.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_imp.py:1: in <module>
    import requests_not_here
E   ModuleNotFoundError: No module named 'requests_not_here'
______________________ ERROR collecting tests/test_syn.py ______________________
/usr/lib/python3/dist-packages/_pytest/python.py:618: in _importtestmodule
    mod = import_path(self.path, mode=importmode, root=self.config.rootpath)
/usr/lib/python3/dist-packages/_pytest/pathlib.py:533: in import_path
    importlib.import_module(module_name)
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
<frozen importlib._bootstrap>:1206: in _gcd_import
    ???
<frozen importlib._bootstrap>:1178: in _find_and_load
    ???
<frozen importlib._bootstrap>:1149: in _find_and_load_unlocked
    ???
<frozen importlib._bootstrap>:690: in _load_unlocked
    ???
/usr/lib/python3/dist-packages/_pytest/assertion/rewrite.py:159: in exec_module
    source_stat, co = _rewrite_test(fn, self.config)
/usr/lib/python3/dist-packages/_pytest/assertion/rewrite.py:342: in _rewrite_test
    tree = ast.parse(source, filename=strfn)
/usr/lib/python3.11/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File "/tmp/pc/tests/test_syn.py", line 1
E       def test_y(:
E                  ^
E   SyntaxError: invalid syntax
=========================== short test summary info ============================
ERROR tests/test_imp.py
ERROR tests/test_syn.py
!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!
2 errors in 0.16s
`

// unittestOut is real output of python 3.11 -m unittest discover -v: a failure, an error, a skip, a failing subTest and a module that does not import.
const unittestOut = `test_add (test_calc.TestCalc.test_add) ... ok
test_err (test_calc.TestCalc.test_err) ... ERROR
test_skip (test_calc.TestCalc.test_skip) ... skipped 'later'
test_sub (test_calc.TestCalc.test_sub) ... FAIL
test_sub_tests (test_calc.TestCalc.test_sub_tests) ... 
  test_sub_tests (test_calc.TestCalc.test_sub_tests) (i=2) ... FAIL
test_imp (unittest.loader._FailedTest.test_imp) ... ERROR

======================================================================
ERROR: test_err (test_calc.TestCalc.test_err)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/uc/tests/test_calc.py", line 9, in test_err
    raise ValueError("boom")
ValueError: boom

======================================================================
ERROR: test_imp (unittest.loader._FailedTest.test_imp)
----------------------------------------------------------------------
ImportError: Failed to import test module: test_imp
Traceback (most recent call last):
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/unittest/loader.py", line 419, in _find_test_path
    module = self._get_module_from_name(name)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/unittest/loader.py", line 362, in _get_module_from_name
    __import__(name)
  File "/tmp/uc/tests/test_imp.py", line 1, in <module>
    import requests_not_here
ModuleNotFoundError: No module named 'requests_not_here'


======================================================================
FAIL: test_sub (test_calc.TestCalc.test_sub)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/uc/tests/test_calc.py", line 7, in test_sub
    self.assertEqual(3 - 1, 5)
AssertionError: 2 != 5

======================================================================
FAIL: test_sub_tests (test_calc.TestCalc.test_sub_tests) (i=2)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/uc/tests/test_calc.py", line 16, in test_sub_tests
    self.assertLess(i, 2)
AssertionError: 2 not less than 2

----------------------------------------------------------------------
Ran 6 tests in 0.001s

FAILED (failures=2, errors=2, skipped=1)
`

// ctestOut is real output of ctest 3.25: passed, failed, disabled, skipped (SKIP_RETURN_CODE) and a test whose program does not exist.
const ctestOut = `Internal ctest changing into directory: /tmp/ct/build
Test project /tmp/ct/build
    Start 1: adds
1/5 Test #1: adds .............................   Passed    0.00 sec
    Start 2: subtracts
2/5 Test #2: subtracts ........................***Failed    0.00 sec
    Start 3: later
3/5 Test #3: later ............................***Not Run (Disabled)   0.00 sec
    Start 4: skipper
4/5 Test #4: skipper ..........................***Skipped   0.01 sec
    Start 5: missing
Could not find executable /nonexistent/bin
Looked in the following places:
/nonexistent/bin
/nonexistent/bin
/nonexistent/Release/bin
/nonexistent/Release/bin
/nonexistent/Debug/bin
/nonexistent/Debug/bin
/nonexistent/MinSizeRel/bin
/nonexistent/MinSizeRel/bin
/nonexistent/RelWithDebInfo/bin
/nonexistent/RelWithDebInfo/bin
/nonexistent/Deployment/bin
/nonexistent/Deployment/bin
/nonexistent/Development/bin
/nonexistent/Development/bin
nonexistent/bin
nonexistent/bin
nonexistent/Release/bin
nonexistent/Release/bin
nonexistent/Debug/bin
nonexistent/Debug/bin
nonexistent/MinSizeRel/bin
nonexistent/MinSizeRel/bin
nonexistent/RelWithDebInfo/bin
nonexistent/RelWithDebInfo/bin
nonexistent/Deployment/bin
nonexistent/Deployment/bin
nonexistent/Development/bin
nonexistent/Development/bin
Unable to find executable: /nonexistent/bin
5/5 Test #5: missing ..........................***Not Run   0.00 sec

50% tests passed, 2 tests failed out of 4

Total Test time (real) =   0.01 sec

The following tests did not run:
	  3 - later (Disabled)
	  4 - skipper (Skipped)

The following tests FAILED:
	  2 - subtracts (Failed)
	  5 - missing (Not Run)
Errors while running CTest
Output from these tests are in: /tmp/ct/build/Testing/Temporary/LastTest.log
Use "--rerun-failed --output-on-failure" to re-run the failed cases verbosely.
`
