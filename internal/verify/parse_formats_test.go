package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

const jestSample = `{"numFailedTestSuites":2,"numFailedTests":1,"numPassedTests":2,"numPendingTests":1,"numTotalTests":4,
"testResults":[
 {"name":"/p/calc.test.js","status":"failed","message":"","assertionResults":[
  {"ancestorTitles":["calc"],"title":"adds","status":"passed","duration":2,"failureMessages":[]},
  {"ancestorTitles":["calc"],"title":"subtracts","status":"failed","duration":3,"location":{"line":3,"column":3},
   "failureMessages":["Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 5\nReceived: 2\n    at Object.toBe (/p/calc.test.js:3:43)\n    at Promise.then.completed (/p/node_modules/jest-circus/build/utils.js:298:28)"]},
  {"ancestorTitles":["calc"],"title":"later","status":"pending","duration":null,"failureMessages":[]},
  {"ancestorTitles":[],"title":"top","status":"passed","duration":27,"failureMessages":[]}]},
 {"name":"/p/broken.test.js","status":"failed","message":"  \u001b[1m● \u001b[22mTest suite failed to run\n\n    SyntaxError: /p/broken.test.js: Missing semicolon. (1:24)\n","assertionResults":[]}
]}`

func TestParseJestJSON(t *testing.T) {
	t.Parallel()
	rep, err := parseJestJSON(strings.NewReader(jestSample), "/p")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 2 || rep.Failed != 1 || rep.Skipped != 1 || rep.Errors != 1 || len(rep.Cases) != 5 || rep.Format != "jest-json" {
		t.Fatalf("report = %+v", rep)
	}
	sub := rep.Cases[1]
	if sub.Name != "calc.test.js > calc > subtracts" || sub.Suite != "calc.test.js" || sub.File != "calc.test.js" || sub.Line != 3 ||
		strings.Contains(sub.Message, "node_modules") || !strings.Contains(sub.Message, "Received: 2") {
		t.Errorf("subtracts = %+v", sub)
	}
	if top := rep.Cases[3]; top.Name != "calc.test.js > top" || top.Status != report.Passed {
		t.Errorf("top = %+v", top)
	}
	broken := rep.Cases[4]
	if broken.Name != "broken.test.js" || broken.Status != report.Error || strings.Contains(broken.Message, "\x1b") {
		t.Errorf("broken = %+v", broken)
	}

	for _, bad := range []string{"", "{", "[]", `{"other": 1}`, "<xml/>"} {
		if rep, err := parseJestJSON(strings.NewReader(bad), "/p"); err == nil {
			t.Errorf("parseJestJSON(%q) = %+v, no error", bad, rep)
		}
	}
}

const unittestSample = `test_add (test_calc.TestCalc.test_add) ... ok
test_doc (test_calc.TestCalc.test_doc)
A docstring. ... ok
test_err (test_calc.TestCalc.test_err) ... ERROR
test_skip (test_calc.TestCalc.test_skip) ... skipped 'later'
test_sub (test_calc.TestCalc.test_sub) ... FAIL
test_xf (test_calc.TestCalc.test_xf) ... expected failure
test_loop (test_calc.TestCalc.test_loop) ... ok
test_old (test_old.TestOld) ... unexpected success
test_broken (unittest.loader._FailedTest.test_broken) ... ERROR

======================================================================
ERROR: test_err (test_calc.TestCalc.test_err)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/p/tests/test_calc.py", line 5, in test_err
    raise ValueError("boom")
ValueError: boom

======================================================================
FAIL: test_sub (test_calc.TestCalc.test_sub)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/p/tests/test_calc.py", line 8, in test_sub
    self.assertEqual(3 - 1, 5)
AssertionError: 2 != 5

======================================================================
FAIL: test_loop (test_calc.TestCalc.test_loop) (i=2)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/p/tests/test_calc.py", line 12, in test_loop
    self.assertLess(i, 2)
AssertionError: 2 not less than 2

======================================================================
ERROR: test_broken (unittest.loader._FailedTest.test_broken)
----------------------------------------------------------------------
ImportError: Failed to import test module: test_broken
Traceback (most recent call last):
  File "/usr/lib/python3.11/unittest/loader.py", line 407, in _find_test_path
    module = self._get_module_from_name(name)
ModuleNotFoundError: No module named 'nothere'


----------------------------------------------------------------------
Ran 10 tests in 0.002s

FAILED (failures=3, errors=2, skipped=1, expected failures=1, unexpected successes=1)
`

func TestParseUnittest(t *testing.T) {
	t.Parallel()
	rep, err := parseUnittest(strings.NewReader(unittestSample), "/p")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]report.Status{
		"test_calc.TestCalc.test_add":  report.Passed,
		"test_calc.TestCalc.test_doc":  report.Passed,
		"test_calc.TestCalc.test_err":  report.Error,
		"test_calc.TestCalc.test_skip": report.Skipped,
		"test_calc.TestCalc.test_sub":  report.Failed,
		"test_calc.TestCalc.test_xf":   report.Passed,
		"test_calc.TestCalc.test_loop": report.Failed, // a failing subTest
		"test_old.TestOld.test_old":    report.Failed, // unexpected success
		"test_broken":                  report.Error,  // import failure
	}
	if len(rep.Cases) != len(want) {
		t.Errorf("%d cases, want %d: %+v", len(rep.Cases), len(want), rep.Cases)
	}
	for _, c := range rep.Cases {
		if st, ok := want[c.Name]; !ok || st != c.Status {
			t.Errorf("%s: %s, want %s", c.Name, c.Status, st)
		}
	}
	if rep.Passed != 3 || rep.Failed != 3 || rep.Errors != 2 || rep.Skipped != 1 {
		t.Errorf("counts = %d passed, %d failed, %d errors, %d skipped", rep.Passed, rep.Failed, rep.Errors, rep.Skipped)
	}
	for _, c := range rep.Cases {
		switch c.Name {
		case "test_calc.TestCalc.test_sub":
			if c.File != "tests/test_calc.py" || c.Line != 8 || keyLine(c.Message) != "AssertionError: 2 != 5" {
				t.Errorf("test_sub = %+v (key line %q)", c, keyLine(c.Message))
			}
		case "test_calc.TestCalc.test_loop":
			if !strings.Contains(c.Message, "(i=2)") || c.Line != 12 {
				t.Errorf("test_loop = %+v", c)
			}
		case "test_broken":
			if !strings.Contains(c.Message, "No module named 'nothere'") || c.File != "" {
				t.Errorf("test_broken = %+v", c)
			}
		}
	}

	// Python 3.10 and older name the class only.
	rep, err = parseUnittest(strings.NewReader("test_a (t.C) ... ok\ntest_b (t.C) ... FAIL\n\n---\nRan 2 tests in 0.1s\n\nFAILED (failures=1)\n"), "")
	if err != nil || len(rep.Cases) != 2 || rep.Cases[1].Name != "t.C.test_b" || rep.Cases[1].Status != report.Failed {
		t.Errorf("3.10 format: %+v, %v", rep, err)
	}
	// No tests.
	rep, err = parseUnittest(strings.NewReader("\n----\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n"), "")
	if err != nil || rep.Executed() != 0 {
		t.Errorf("no tests: %+v, %v", rep, err)
	}
	// Not unittest at all; or cut short.
	if _, err := parseUnittest(strings.NewReader("hello\n"), ""); err == nil {
		t.Error("no error for output that is not unittest's")
	}
	if _, err := parseUnittest(strings.NewReader("test_a (t.C) ... ok\n"), ""); !errors.Is(err, report.ErrTruncated) {
		t.Errorf("cut short: %v, want ErrTruncated", err)
	}
}

// checkReport checks the invariants of a parser's report.
func checkReport(t *testing.T, rep *report.Report) {
	if rep == nil {
		return
	}
	var n [4]int
	for _, c := range rep.Cases {
		switch c.Status {
		case report.Passed:
			n[0]++
		case report.Failed:
			n[1]++
		case report.Skipped:
			n[2]++
		case report.Error:
			n[3]++
		default:
			t.Fatalf("case %q has status %q", c.Name, c.Status)
		}
		if len(c.Message) > report.MaxMessage {
			t.Fatalf("message of %d bytes", len(c.Message))
		}
	}
	if n != [4]int{rep.Passed, rep.Failed, rep.Skipped, rep.Errors} {
		t.Fatalf("counts %d/%d/%d/%d, cases say %v", rep.Passed, rep.Failed, rep.Skipped, rep.Errors, n)
	}
}

func FuzzJestJSON(f *testing.F) {
	f.Add(jestSample)
	f.Add(`{"numTotalTests":0,"testResults":[]}`)
	f.Add(`{"testResults":[{"name":"x","assertionResults":[{"title":"t","status":"weird","failureMessages":["at (x:1:2)"]}]}]}`)
	f.Add(`{"numTotalTests":0,"testResults":[{"name":"/p/a.test.js","status":"failed","message":"  ● Test suite failed to run\n\n    Cannot find module 'x' from 'a.test.js'","assertionResults":[]}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		rep, _ := parseJestJSON(strings.NewReader(s), "/p")
		checkReport(t, rep)
	})
}

func FuzzUnittest(f *testing.F) {
	f.Add(unittestSample)
	f.Add("test_a (t.C) ... ok\n")
	f.Add("FAIL: x (y)\n-----\nFile \"a\", line 99999999999999999999\n")
	f.Add(unittestOut) // a module that does not import (unittest.loader._FailedTest)
	f.Fuzz(func(t *testing.T, s string) {
		rep, _ := parseUnittest(strings.NewReader(s), "/p")
		checkReport(t, rep)
		for _, c := range rep.Failing() {
			_ = keyLine(c.Message)
		}
	})
}

func FuzzKeyLine(f *testing.F) {
	f.Add("Traceback (most recent call last):\nValueError: x")
	f.Add("x_test.go:12: got 1, want 2")
	f.Add("# p\n./g.go:4:9: undefined: x\nFAIL\tp [build failed]")
	f.Add("error[E0425]: cannot find value `x`\n --> src/lib.rs:3:5")
	f.Add("  File \"s.py\", line 1\n    def f(:\nSyntaxError: invalid syntax")
	f.Fuzz(func(t *testing.T, s string) {
		if k := keyLine(s); len(k) > 240 || strings.Contains(k, "\n") {
			t.Fatalf("key line %q", k)
		}
		goKeyLocation(s)
	})
}
