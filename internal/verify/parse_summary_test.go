package verify

import (
	"strings"
	"testing"
)

func TestParseCountLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want tally
		ok   bool
	}{
		{"3 passed, 0 failed", tally{Passed: 3}, true},
		{"3 passed, 1 failed, 2 skipped.", tally{Passed: 3, Failed: 1, Skipped: 2}, true},
		{"16 passed; 1 failed", tally{Passed: 16, Failed: 1}, true},
		{"PASSED: 16", tally{Passed: 16}, true},
		{"FAILED: 1", tally{Failed: 1}, true},
		{"Passed: 16 Failed: 1", tally{Passed: 16, Failed: 1}, true},
		{"Passed: 16, Failed: 0, Skipped: 2", tally{Passed: 16, Skipped: 2}, true},
		{"Summary: 15 passed, 1 failed", tally{Passed: 15, Failed: 1}, true},
		{"==== 15 passed, 1 failed ====", tally{Passed: 15, Failed: 1}, true},
		{"16 tests, 1 failure", tally{Passed: 15, Failed: 1}, true},
		{"16 tests, 0 failures", tally{Passed: 16}, true},
		{"16 examples, 1 failure, 2 pending", tally{Passed: 13, Failed: 1, Skipped: 2}, true},                                    // RSpec
		{"16 runs, 20 assertions, 1 failures, 0 errors, 0 skips", tally{Passed: 15, Failed: 1}, true},                            // minitest
		{"16 Tests 1 Failures 0 Ignored", tally{Passed: 15, Failed: 1}, true},                                                    // Unity
		{"Tests run: 16, Failures: 1", tally{Passed: 15, Failed: 1}, true},                                                       // JUnit 4
		{"[ERROR] Tests run: 16, Failures: 1, Errors: 1, Skipped: 2", tally{Passed: 12, Failed: 1, Errors: 1, Skipped: 2}, true}, // Maven
		{"[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 s -- in com.acme.AppTest", tally{}, false},
		{"OK (16 tests)", tally{Passed: 16}, true},
		{"OK (1 test)", tally{Passed: 1}, true},
		{"100%: Checks: 16, Failures: 0, Errors: 0", tally{Passed: 16}, true}, // Check
		{"93%: Checks: 16, Failures: 1, Errors: 0", tally{Passed: 15, Failed: 1}, true},
		{"test cases: 16 | 15 passed | 1 failed", tally{Passed: 15, Failed: 1}, true},            // Catch2
		{"[doctest] test cases: 16 | 16 passed | 0 failed | 0 skipped", tally{Passed: 16}, true}, // doctest
		{"assertions: 40 | 39 passed | 1 failed", tally{}, false},
		{"[doctest] assertions: 40 | 40 passed | 0 failed |", tally{}, false},
		{"All tests passed (42 assertions in 16 test cases)", tally{Passed: 16}, true},
		{"1 of 16 tests failed", tally{Passed: 15, Failed: 1}, true},
		{"All 16 tests passed", tally{Passed: 16}, true},
		{"16 tests completed, 1 failed", tally{Passed: 15, Failed: 1}, true}, // Gradle
		{"# PASS:  15", tally{Passed: 15}, true},                             // automake
		{"# FAIL:  1", tally{Failed: 1}, true},
		{"# SKIP:  2", tally{Skipped: 2}, true},
		{"# ERROR: 1", tally{Errors: 1}, true},
		{"# TOTAL: 16", tally{}, false},
		{"3 passed, 1 failed in 0.12s", tally{Passed: 3, Failed: 1}, true},
		{"16 tests, 1 failure (0.5s)", tally{Passed: 15, Failed: 1}, true},
		// Not counts of tests.
		{"Ran 5", tally{}, false},
		{"16 tests", tally{}, false},
		{"1 error", tally{}, false},
		{"1 error generated.", tally{}, false},
		{"Found 2 errors in the same file", tally{}, false},
		{"2 warnings", tally{}, false},
		{"3 apples, 2 passed", tally{}, false},
		{"the 2 passed tests", tally{}, false},
		{"# pass the salt", tally{}, false},
		{"Tests: none", tally{}, false},
		{"Test Suites: 1 failed, 2 passed, 3 total", tally{}, false},
		{"Snapshots:   0 total", tally{}, false},
		{"make: *** [Makefile:3: test] Error 2", tally{}, false},
		{"Test Files  1 failed | 2 passed (3)", tally{}, false},
		{"ℹ tests 3", tally{}, false},
		{"FAILED (failures=1)", tally{}, false},
		{"[==========] 16 tests from 3 test suites ran. (0 ms total)", tally{}, false},
		{"version 1.2.3: 4 passed", tally{}, false},
		{"", tally{}, false},
	} {
		got, ok := parseCountLine(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseCountLine(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFailingLineName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"FAIL: test_add", "test_add"},
		{"FAILED: tests/a.sh", "tests/a.sh"},
		{"FAIL: adds two numbers", "adds two numbers"},
		{"FAIL: test_x (calc.tests.CalcTest.test_x)", "calc.tests.CalcTest.test_x"},
		{"ERROR: test_y (calc.tests.CalcTest)", "calc.tests.CalcTest.test_y"},
		{"test_x (calc.tests.CalcTest.test_x) ... FAIL", "calc.tests.CalcTest.test_x"},
		{"test tests::subtracts ... FAILED", "tests::subtracts"},
		{"t_sub ... FAIL", "t_sub"},
		{"tests::subtracts --- FAILED", "tests::subtracts"},
		{"[  FAILED  ] MathTest.Sub (0 ms)", "MathTest.Sub"},
		{"[  FAILED  ] MathTest.Sub", "MathTest.Sub"},
		{"[  FAILED  ] Params/P.Case/0, where GetParam() = 4 (0 ms)", "Params/P.Case/0"},
		{"[FAIL] adds numbers", "adds numbers"},
		{"FAILED: 1", ""},
		{"[  FAILED  ] 1 test, listed below:", ""},
		{"ERROR: Could not find a version that satisfies the requirement x", ""},
		{"test_x (calc.tests.CalcTest.test_x) ... ok", ""},
		{"all good", ""},
	} {
		if got := failingLineName(tc.in); got != tc.want {
			t.Errorf("failingLineName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// makeTwoBuilds is the output of a Makefile whose test target builds the
// test program twice (gcc -O0, then -O2) and runs it each time; the
// program prints its failing checks and its own counts. Generated with
// GNU make 4.3 and gcc 12.
const makeTwoBuildsGreen = `== build gcc -O0
PASSED: 16
FAILED: 0
== build gcc -O2
PASSED: 16
FAILED: 0
`

const makeTwoBuildsRed = `== build gcc -O0
FAIL: test_add
PASSED: 15
FAILED: 1
== build gcc -O2
FAIL: test_add
PASSED: 15
FAILED: 1
make[1]: *** [Makefile:7: run] Error 1
make: *** [Makefile:3: test] Error 2
`

// gtestTwoBinaries: two GoogleTest binaries run by one target.
const gtestTwoBinaries = `[==========] Running 3 tests from 1 test suite.
[----------] 3 tests from MathTest
[ RUN      ] MathTest.Add
[       OK ] MathTest.Add (0 ms)
[ RUN      ] MathTest.Sub
math_test.cc:12: Failure
Expected equality of these values:
  sub(3, 1)
    Which is: 1
  2
[  FAILED  ] MathTest.Sub (0 ms)
[ RUN      ] MathTest.Mul
[       OK ] MathTest.Mul (0 ms)
[----------] 3 tests from MathTest (0 ms total)

[==========] 3 tests from 1 test suite ran. (0 ms total)
[  PASSED  ] 2 tests.
[  FAILED  ] 1 test, listed below:
[  FAILED  ] MathTest.Sub

 1 FAILED TEST
[==========] Running 2 tests from 1 test suite.
[----------] 2 tests from StrTest
[ RUN      ] StrTest.Upper
[       OK ] StrTest.Upper (0 ms)
[ RUN      ] StrTest.Lower
[       OK ] StrTest.Lower (0 ms)
[----------] 2 tests from StrTest (0 ms total)

[==========] 2 tests from 1 test suite ran. (0 ms total)
[  PASSED  ] 2 tests.
`

// cargoInMake: cargo's libtest output inside a Makefile that also runs
// a shell suite.
const cargoInMake = `cargo test
   Compiling calc v0.1.0 (/tmp/calc)
    Finished ` + "`test`" + ` profile [unoptimized + debuginfo] target(s) in 0.31s
     Running unittests src/lib.rs (target/debug/deps/calc-1f0c)

running 2 tests
test tests::adds ... ok
test tests::subtracts ... FAILED

failures:

---- tests::subtracts stdout ----
assertion failed

failures:
    tests::subtracts

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

./test.sh
3 passed, 0 failed
`

// unittestPlain: python -m unittest without -v, inside a Makefile.
const unittestPlain = `.F.
======================================================================
FAIL: test_sub (tests.test_calc.CalcTest.test_sub)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/p/tests/test_calc.py", line 9, in test_sub
    self.assertEqual(sub(3, 1), 1)
AssertionError: 2 != 1

----------------------------------------------------------------------
Ran 3 tests in 0.001s

FAILED (failures=1)
`

func TestSummaryOutputs(t *testing.T) {
	t.Parallel()
	for _, tc := range []textCase{
		{name: "make, two builds, green", in: makeTwoBuildsGreen, want: tally{Passed: 32}, formats: []string{"passed/failed line"}},
		{name: "make, two builds, red", in: makeTwoBuildsRed, want: tally{Passed: 30, Failed: 2}, failing: []string{"test_add"},
			formats: []string{"passed/failed line"}, excerpt: []string{"FAIL: test_add"}},
		{name: "googletest, two binaries", in: gtestTwoBinaries, want: tally{Passed: 4, Failed: 1}, failing: []string{"MathTest.Sub"},
			formats: []string{"googletest"}},
		{name: "cargo and a shell suite", in: cargoInMake, want: tally{Passed: 4, Failed: 1}, failing: []string{"tests::subtracts"},
			formats: []string{"cargo", "passed/failed line"}},
		{name: "unittest", in: unittestPlain, want: tally{Passed: 2, Failed: 1}, failing: []string{"tests.test_calc.CalcTest.test_sub"},
			formats: []string{"unittest"}},
		{name: "automake", in: "PASS: tests/a.sh\nFAIL: tests/b.sh\n============\nTestsuite summary for calc 1.0\n============\n" +
			"# TOTAL: 2\n# PASS:  1\n# SKIP:  0\n# XFAIL: 0\n# FAIL:  1\n# XPASS: 0\n# ERROR: 0\n",
			want: tally{Passed: 1, Failed: 1}, failing: []string{"tests/b.sh"}, formats: []string{"passed/failed line"}},
		{name: "JUnit 4 text runner", in: "..E.\nTime: 0.012\nThere was 1 failure:\n1) testSub(CalcTest)\njava.lang.AssertionError: expected:<1> but was:<2>\n\nFAILURES!!!\nTests run: 4,  Failures: 1\n\n",
			want: tally{Passed: 3, Failed: 1}, formats: []string{"passed/failed line"}},
		{name: "tape beside another suite", in: "TAP version 13\n# adds\nok 1 should be strictly equal\nnot ok 2 should be strictly equal\n  ---\n    operator: equal\n  ...\n" +
			"# subtracts\nok 3 should be strictly equal\nnot ok 4 should be strictly equal\n  ---\n    operator: equal\n  ...\n\n1..4\n# tests 4\n# pass  2\n# fail  2\n" +
			"./test.sh\n3 passed, 0 failed\n",
			want: tally{Passed: 5, Failed: 2}, failing: []string{"adds > should be strictly equal #2", "subtracts > should be strictly equal #4"},
			formats: []string{"TAP summary", "passed/failed line"}},
		{name: "TAP subtests beside another suite", in: "TAP version 14\n# Subtest: math\n    ok 1 - should be equal\n    not ok 2 - should be equal\n    1..2\n" +
			"not ok 1 - math\n# Subtest: strings\n    not ok 1 - should be equal\n    1..1\nnot ok 2 - strings\n1..2\nPASSED: 3\n",
			want: tally{Passed: 3, Failed: 2}, failing: []string{"math > should be equal #2", "math", "strings > should be equal", "strings"}},
		{name: "nothing readable", in: "cc -o t t.c\n./t\nall done\n", want: tally{}, formats: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, n := checkText(t, tc), strings.Count(tc.in, "\n"); got.Lines != n {
				t.Errorf("lines = %d, want %d", got.Lines, n)
			}
		})
	}
}

func FuzzCountLine(f *testing.F) {
	for _, s := range []string{"PASSED: 16", "16 tests, 1 failure", "Passed: 16 Failed: 1", "test cases: 16 | 15 passed | 1 failed",
		"OK (16 tests)", "1 of 16 tests failed", "[  PASSED  ] 15 tests.", "test result: ok. 1 passed; 0 failed; 0 ignored;",
		"FAIL: test_x (m.C.test_x)", "16 runs, 20 assertions, 1 failures, 0 errors, 0 skips", "# PASS:  15",
		"TAP version 13\n# a\nok 1 x\nnot ok 2 x\n# Subtest: b\n    not ok 1 - y\nnot ok 3 - b", makeTwoBuildsRed, gtestTwoBinaries} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tl, ok := parseCountLine(s); ok && (tl.Passed < 0 || tl.Failed < 0 || tl.Errors < 0 || tl.Skipped < 0) {
			t.Fatalf("negative counts %+v from %q", tl, s)
		}
		// Whatever the line, reading it never loses a failure it says.
		p := parseString(s + "\n")
		if p.Failed < 0 || p.Passed < 0 || len(p.Failing) > MaxFailing {
			t.Fatalf("parsed %+v", p)
		}
		failingLineName(s)
	})
}
