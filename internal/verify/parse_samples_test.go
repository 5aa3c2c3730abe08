package verify

// Outputs of real runners, for the text parsers' tests.

const goJSONSample = `{"ImportPath":"ex/m/sub [ex/m/sub.test]","Action":"build-output","Output":"# ex/m/sub [ex/m/sub.test]\n"}
{"ImportPath":"ex/m/sub [ex/m/sub.test]","Action":"build-output","Output":"sub/b_test.go:5:28: undefined: undefinedThing\n"}
{"ImportPath":"ex/m/sub [ex/m/sub.test]","Action":"build-fail"}
{"Action":"start","Package":"ex/m"}
{"Action":"start","Package":"ex/m/sub"}
{"Action":"output","Package":"ex/m/sub","Output":"FAIL\tex/m/sub [build failed]\n"}
{"Action":"fail","Package":"ex/m/sub","Elapsed":0,"FailedBuild":"ex/m/sub [ex/m/sub.test]"}
{"Action":"start","Package":"ex/m/none"}
{"Action":"output","Package":"ex/m/none","Output":"?   \tex/m/none\t[no test files]\n"}
{"Action":"skip","Package":"ex/m/none","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestOK"}
{"Action":"output","Package":"ex/m","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"ex/m","Test":"TestOK","Output":"    a_test.go:5: just logging\n"}
{"Action":"output","Package":"ex/m","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"ex/m","Test":"TestOK","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestBad"}
{"Action":"output","Package":"ex/m","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"ex/m","Test":"TestBad","Output":"    a_test.go:6: got 1 want 2\n"}
{"Action":"output","Package":"ex/m","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"ex/m","Test":"TestBad","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestSub"}
{"Action":"run","Package":"ex/m","Test":"TestSub/a"}
{"Action":"pass","Package":"ex/m","Test":"TestSub/a","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestSub/b"}
{"Action":"output","Package":"ex/m","Test":"TestSub/b","Output":"    a_test.go:9: boom\n"}
{"Action":"fail","Package":"ex/m","Test":"TestSub/b","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestSub/s"}
{"Action":"skip","Package":"ex/m","Test":"TestSub/s","Elapsed":0}
{"Action":"fail","Package":"ex/m","Test":"TestSub","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestParentOnly"}
{"Action":"run","Package":"ex/m","Test":"TestParentOnly/x"}
{"Action":"pass","Package":"ex/m","Test":"TestParentOnly/x","Elapsed":0}
{"Action":"output","Package":"ex/m","Test":"TestParentOnly","Output":"    a_test.go:20: failed after its subtests\n"}
{"Action":"fail","Package":"ex/m","Test":"TestParentOnly","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestPanic"}
{"Action":"output","Package":"ex/m","Test":"TestPanic","Output":"--- FAIL: TestPanic (0.00s)\n"}
{"Action":"output","Package":"ex/m","Test":"TestPanic","Output":"panic: assignment to entry in nil map [recovered, repanicked]\n"}
{"Action":"fail","Package":"ex/m","Test":"TestPanic","Elapsed":0}
{"Action":"output","Package":"ex/m","Output":"FAIL\tex/m\t0.005s\n"}
{"Action":"fail","Package":"ex/m","Elapsed":0.005}
`

const goJSONTimeout = `{"Action":"start","Package":"ex/m"}
{"Action":"run","Package":"ex/m","Test":"TestOK"}
{"Action":"pass","Package":"ex/m","Test":"TestOK","Elapsed":0}
{"Action":"run","Package":"ex/m","Test":"TestHang"}
{"Action":"output","Package":"ex/m","Test":"TestHang","Output":"panic: test timed out after 1s\n"}
{"Action":"output","Package":"ex/m","Test":"TestHang","Output":"\trunning tests:\n"}
{"Action":"output","Package":"ex/m","Output":"FAIL\tex/m\t1.022s\n"}
{"Action":"fail","Package":"ex/m","Elapsed":1.022}
`

const goJSONSetupFail = `{"ImportPath":"example.com/nothere","Action":"build-output","Output":"# example.com/v/s\n"}
{"ImportPath":"example.com/nothere","Action":"build-output","Output":"s/s.go:3:8: no required module provides package example.com/nothere; to add it:\n"}
{"ImportPath":"example.com/nothere","Action":"build-output","Output":"\tgo get example.com/nothere\n"}
{"ImportPath":"example.com/nothere","Action":"build-fail"}
{"Action":"start","Package":"example.com/v/s"}
{"Action":"output","Package":"example.com/v/s","Output":"FAIL\texample.com/v/s [setup failed]\n"}
{"Action":"fail","Package":"example.com/v/s","Elapsed":0,"FailedBuild":"example.com/nothere"}
{"ImportPath":"example.com/v [example.com/v.test]","Action":"build-output","Output":"# example.com/v\n"}
{"ImportPath":"example.com/v [example.com/v.test]","Action":"build-output","Output":"./a_test.go:5:40: fmt.Printf format %d has arg \"x\" of wrong type string\n"}
{"ImportPath":"example.com/v [example.com/v.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/v"}
{"Action":"output","Package":"example.com/v","Output":"FAIL\texample.com/v [build failed]\n"}
{"Action":"fail","Package":"example.com/v","Elapsed":0,"FailedBuild":"example.com/v [example.com/v.test]"}
`

// vitestTwice is the shape of vitest 2's default reporter off a terminal.
const vitestTwice = ` ❯ src/calc.test.ts (5 tests | 2 failed | 2 skipped) 9ms
   × calc > subtracts 6ms
     → expected 2 to be 5 // Object.is equality
   × calc > deep > divides 1ms
     → expected 1 to be 2 // Object.is equality

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 2 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/calc.test.ts > calc > subtracts
AssertionError: expected 2 to be 5 // Object.is equality
 FAIL  src/calc.test.ts > calc > deep > divides
AssertionError: expected 1 to be 2 // Object.is equality

 Test Files  1 failed (1)
      Tests  2 failed | 1 passed | 2 skipped (5)
`

const goVerbose = `=== RUN   TestOK
--- PASS: TestOK (0.00s)
=== RUN   TestTable
=== RUN   TestTable/one
=== RUN   TestTable/two
    x_test.go:12: two is wrong
--- FAIL: TestTable (0.00s)
    --- PASS: TestTable/one (0.00s)
    --- FAIL: TestTable/two (0.00s)
=== RUN   TestLater
    x_test.go:20: later
--- SKIP: TestLater (0.00s)
FAIL
FAIL	ex/a	0.003s
=== RUN   TestB
--- PASS: TestB (0.00s)
PASS
ok  	ex/b	0.002s
?   	ex/c	[no test files]
FAIL
`

const goPlain = `ok  	ex/a	0.011s
--- FAIL: TestX (0.00s)
    x_test.go:5: bad
FAIL
FAIL	ex/b	0.010s
?   	ex/c	[no test files]
ok  	ex/d	0.010s [no tests to run]
ok  	ex/e	(cached)
# ex/f
f/f.go:3:1: syntax error: non-declaration statement outside function body
FAIL	ex/f [build failed]
FAIL
`

const nodeTAP = `TAP version 13
# Subtest: adds
ok 1 - adds
  ---
  duration_ms: 1.926288
  ...
# Subtest: fails
not ok 2 - fails
  ---
  duration_ms: 2.041577
  location: '/tmp/exp/n/test/x.test.js:4:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:

    2 !== 3
  ...
# Subtest: suite
    # Subtest: inner ok
    ok 1 - inner ok
      ---
      duration_ms: 0.243932
      ...
    # Subtest: inner skip
    ok 2 - inner skip # SKIP
      ---
      duration_ms: 0.168182
      ...
    1..2
ok 3 - suite
  ---
  duration_ms: 1.059494
  ...
1..3
# tests 5
# suites 0
# pass 3
# fail 1
# cancelled 0
# skipped 1
# todo 0
# duration_ms 204.901577
`

const nodeSpec = `✔ adds (2.073128ms)
✖ fails (9.918206ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

  2 !== 3

▶ suite
  ✔ inner ok (0.251364ms)
  ﹣ inner skip (8.29351ms) # SKIP
✔ suite (9.374026ms)
ℹ tests 5
ℹ suites 0
ℹ pass 3
ℹ fail 1
ℹ cancelled 0
ℹ skipped 1
ℹ todo 0
ℹ duration_ms 261.911173

✖ failing tests:

test at test/x.test.js:4:1
✖ fails (9.918206ms)
`

const jestOut = `FAIL src/sum.test.js
  math
    ✓ subtracts (2 ms)
    ✕ adds (3 ms)

  ● math › adds

    expect(received).toBe(expected) // Object.is equality

    Expected: 4
    Received: 3

PASS src/other.test.js
  ● Console

    console.log
      hello

Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 1 skipped, 4 passed, 6 total
Snapshots:   0 total
Time:        1.234 s
Ran all test suites.
`

const vitestOut = ` ❯ test/a.test.ts (3 tests | 1 failed) 5ms
   × a > fails 3ms
     → expected 2 to be 3
 ✓ test/b.test.ts (3 tests | 1 skipped) 2ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/a.test.ts > a > fails
AssertionError: expected 2 to be 3

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 4 passed | 1 skipped (6)
   Start at  10:00:00
   Duration  300ms (transform 20ms, setup 0ms)
`

const mochaOut = `  suite
    ✔ works
    1) fails
    - pending one

  3 passing (12ms)
  1 pending
  2 failing

  1) suite
       fails:
     AssertionError [ERR_ASSERTION]: 1 == 2
`

const pytestOut = `============================= test session starts ==============================
collected 8 items

tests/test_a.py ..F.s.F.                                                 [100%]

=================================== FAILURES ===================================
___________________________________ test_x ____________________________________

    def test_x():
>       assert 1 == 2
E       assert 1 == 2

tests/test_a.py:3: AssertionError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_x - assert 1 == 2
FAILED tests/test_a.py::test_y - assert 0
============== 2 failed, 5 passed, 1 skipped, 2 warnings in 0.52s ==============
`
