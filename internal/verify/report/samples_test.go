package report

import "strings"

// bq lets samples hold backquotes: ¦ stands for one.
func bq(s string) string { return strings.ReplaceAll(s, "¦", "`") }

// ---- go test -json ----

// goOldBuildFailed is how go before 1.24 reports a build failure with
// 2>&1: the compiler's errors as plain text between the events.
const goOldBuildFailed = `# example.com/demo/broken [example.com/demo/broken.test]
broken/broken.go:3:23: cannot use "x" (untyped string constant) as int value in return statement
{"Time":"2023-08-01T10:00:00.1Z","Action":"start","Package":"example.com/demo/broken"}
{"Time":"2023-08-01T10:00:00.2Z","Action":"output","Package":"example.com/demo/broken","Output":"FAIL\texample.com/demo/broken [build failed]\n"}
{"Time":"2023-08-01T10:00:00.2Z","Action":"fail","Package":"example.com/demo/broken","Elapsed":0}
{"Time":"2023-08-01T10:00:00.3Z","Action":"start","Package":"example.com/demo/ok"}
{"Time":"2023-08-01T10:00:00.4Z","Action":"run","Package":"example.com/demo/ok","Test":"TestOK"}
{"Time":"2023-08-01T10:00:00.4Z","Action":"output","Package":"example.com/demo/ok","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Time":"2023-08-01T10:00:00.4Z","Action":"output","Package":"example.com/demo/ok","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Time":"2023-08-01T10:00:00.4Z","Action":"pass","Package":"example.com/demo/ok","Test":"TestOK","Elapsed":0.001}
{"Time":"2023-08-01T10:00:00.5Z","Action":"output","Package":"example.com/demo/ok","Output":"PASS\n"}
{"Time":"2023-08-01T10:00:00.5Z","Action":"output","Package":"example.com/demo/ok","Output":"ok  \texample.com/demo/ok\t0.004s\n"}
{"Time":"2023-08-01T10:00:00.5Z","Action":"pass","Package":"example.com/demo/ok","Elapsed":0.004}
`

// goCount2 is -count=2 with a flaky test (fails once, passes once), a
// package without tests, and ANSI colours in a test's output.
const goCount2 = `{"Action":"start","Package":"example.com/demo/flaky"}
{"Action":"run","Package":"example.com/demo/flaky","Test":"TestFlaky"}
{"Action":"output","Package":"example.com/demo/flaky","Test":"TestFlaky","Output":"=== RUN   TestFlaky\n"}
{"Action":"output","Package":"example.com/demo/flaky","Test":"TestFlaky","Output":"    flaky_test.go:14: \u001b[31mgot 2 workers, want 3\u001b[0m\n"}
{"Action":"output","Package":"example.com/demo/flaky","Test":"TestFlaky","Output":"--- FAIL: TestFlaky (0.02s)\n"}
{"Action":"fail","Package":"example.com/demo/flaky","Test":"TestFlaky","Elapsed":0.02}
{"Action":"run","Package":"example.com/demo/flaky","Test":"TestFlaky"}
{"Action":"output","Package":"example.com/demo/flaky","Test":"TestFlaky","Output":"=== RUN   TestFlaky\n"}
{"Action":"output","Package":"example.com/demo/flaky","Test":"TestFlaky","Output":"--- PASS: TestFlaky (0.01s)\n"}
{"Action":"pass","Package":"example.com/demo/flaky","Test":"TestFlaky","Elapsed":0.01}
{"Action":"output","Package":"example.com/demo/flaky","Output":"FAIL\n"}
{"Action":"fail","Package":"example.com/demo/flaky","Elapsed":0.05}
{"Action":"start","Package":"example.com/demo/cmd"}
{"Action":"output","Package":"example.com/demo/cmd","Output":"?   \texample.com/demo/cmd\t[no test files]\n"}
{"Action":"skip","Package":"example.com/demo/cmd","Elapsed":0}
`

// goTestMainExit: TestMain exits 1 after the tests passed.
const goTestMainExit = `{"Action":"start","Package":"example.com/demo/db"}
{"Action":"run","Package":"example.com/demo/db","Test":"TestQuery"}
{"Action":"pass","Package":"example.com/demo/db","Test":"TestQuery","Elapsed":0}
{"Action":"output","Package":"example.com/demo/db","Output":"PASS\n"}
{"Action":"output","Package":"example.com/demo/db","Output":"leaked 2 goroutines\n"}
{"Action":"output","Package":"example.com/demo/db","Output":"FAIL\texample.com/demo/db\t0.011s\n"}
{"Action":"fail","Package":"example.com/demo/db","Elapsed":0.011}
`

// goBinary is go tool test2json run on a test binary: no Package.
const goBinary = `{"Action":"run","Test":"TestA"}
{"Action":"output","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Test":"TestA","Output":"    a_test.go:7: boom\n"}
{"Action":"output","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"fail","Test":"TestA","Elapsed":0}
{"Action":"output","Output":"FAIL\n"}
{"Action":"fail","Elapsed":0.001}
`

// ---- JUnit ----

// pytestXunit1 is pytest --junitxml with junit_family=xunit1 (file and
// 0-based line attributes): a pass, a parametrized pass, a failure in a
// class, a skip and a setup error.
const pytestXunit1 = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="0.084" timestamp="2024-05-02T10:11:12.345678" hostname="ci-runner-7"><testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" line="3" time="0.001" /><testcase classname="tests.test_calc.TestDivide" name="test_divide[4-2-2]" file="tests/test_calc.py" line="10" time="0.001" /><testcase classname="tests.test_calc.TestDivide" name="test_divide_by_zero" file="tests/test_calc.py" line="14" time="0.002"><failure message="assert 0 == inf&#10; +  where 0 = divide(1, 0)">self = &lt;tests.test_calc.TestDivide object at 0x7f1c2d3e4f50&gt;

    def test_divide_by_zero(self):
&gt;       assert divide(1, 0) == float("inf")
E       assert 0 == inf
E        +  where 0 = divide(1, 0)

tests/test_calc.py:16: AssertionError</failure></testcase><testcase classname="tests.test_calc" name="test_slow" file="tests/test_calc.py" line="20" time="0.000"><skipped type="pytest.skip" message="needs the network">tests/test_calc.py:21: needs the network</skipped></testcase><testcase classname="tests.test_db" name="test_query" file="tests/test_db.py" line="7" time="0.003"><error message="failed on setup with &quot;ConnectionRefusedError: [Errno 111] Connection refused&quot;">@pytest.fixture
    def db():
&gt;       return connect("localhost:5432")

tests/conftest.py:12: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def connect(addr):
&gt;       raise ConnectionRefusedError(111, "Connection refused")
E       ConnectionRefusedError: [Errno 111] Connection refused

tests/conftest.py:9: ConnectionRefusedError</error></testcase></testsuite></testsuites>`

// pytestXunit2 is pytest's default family (no file/line), with a
// collection error.
const pytestXunit2 = `<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="0" tests="3" time="0.120" timestamp="2024-05-02T10:20:00.000000+00:00" hostname="dev"><testcase classname="tests.unit.test_parser.TestTokens" name="test_empty" time="0.001" /><testcase classname="tests.unit.test_parser" name="test_numbers[1.5]" time="0.002"><failure message="AssertionError: assert [] == [1.5]&#10;  Right contains one more item: 1.5">def test_numbers():
&gt;       assert tokens("1.5") == [1.5]
E       AssertionError: assert [] == [1.5]
E         Right contains one more item: 1.5

tests/unit/test_parser.py:22: AssertionError</failure></testcase><testcase classname="" name="tests.unit.test_broken" time="0.000"><error message="collection failure">ImportError while importing test module '/src/tests/unit/test_broken.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.12/importlib/__init__.py:90: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/unit/test_broken.py:1: in &lt;module&gt;
    import yaml
E   ModuleNotFoundError: No module named 'yaml'</error></testcase></testsuite></testsuites>`

// jestJUnit is jest-junit with its default templates.
const jestJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="4" failures="1" errors="0" time="1.234">
  <testsuite name="Calculator" errors="0" failures="1" skipped="1" timestamp="2024-05-02T10:11:12" time="0.512" tests="3">
    <testcase classname="Calculator adds numbers" name="Calculator adds numbers" time="0.003">
    </testcase>
    <testcase classname="Calculator divides by zero" name="Calculator divides by zero" time="0.004">
      <failure>Error: expect(received).toBe(expected) // Object.is equality

Expected: Infinity
Received: 0
    at Object.toBe (/home/ci/app/node_modules/expect/build/index.js:315:28)
    at Object.&lt;anonymous&gt; (/home/ci/app/src/calculator.test.js:14:30)
    at Promise.then.completed (/home/ci/app/node_modules/jest-circus/build/utils.js:298:28)</failure>
    </testcase>
    <testcase classname="Calculator skips this" name="Calculator skips this" time="0">
      <skipped/>
    </testcase>
  </testsuite>
  <testsuite name="format" errors="0" failures="0" skipped="0" timestamp="2024-05-02T10:11:13" time="0.101" tests="1">
    <testcase classname="format pads numbers" name="format pads numbers" time="0.001">
    </testcase>
  </testsuite>
</testsuites>
`

// vitestJUnit is vitest --reporter=junit.
const vitestJUnit = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="4" failures="1" errors="0" time="0.412">
    <testsuite name="src/math.test.ts" timestamp="2024-05-02T10:11:12.345Z" hostname="ci" tests="3" failures="1" errors="0" skipped="1" time="0.008">
        <testcase classname="src/math.test.ts" name="math &gt; adds" time="0.001">
        </testcase>
        <testcase classname="src/math.test.ts" name="math &gt; nested &gt; divides" time="0.003">
            <failure message="expected 0 to be Infinity // Object.is equality" type="AssertionError">
AssertionError: expected 0 to be Infinity // Object.is equality

- Expected
+ Received

- Infinity
+ 0

 ❯ src/math.test.ts:12:25
            </failure>
        </testcase>
        <testcase classname="src/math.test.ts" name="math &gt; todo later" time="0">
            <skipped/>
        </testcase>
    </testsuite>
    <testsuite name="src/util.test.ts" timestamp="2024-05-02T10:11:12.401Z" hostname="ci" tests="1" failures="0" errors="0" skipped="0" time="0.002">
        <testcase classname="src/util.test.ts" name="slug &gt; lowercases" time="0.0005">
            <system-out>
log from test
            </system-out>
        </testcase>
    </testsuite>
</testsuites>
`

// surefireFoo is Maven Surefire's TEST-com.acme.FooTest.xml.
const surefireFoo = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd" version="3.0" name="com.acme.FooTest" time="0.361" tests="5" errors="1" skipped="1" failures="1">
  <properties>
    <property name="java.version" value="17.0.9"/>
    <property name="user.dir" value="/home/ci/app"/>
    <property name="surefire.test.class.path" value="/home/ci/app/target/test-classes:/home/ci/app/target/classes"/>
  </properties>
  <testcase name="addsNumbers" classname="com.acme.FooTest" time="0.004"/>
  <testcase name="dividesNumbers" classname="com.acme.FooTest" time="0.012">
    <failure message="expected: &lt;2&gt; but was: &lt;3&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <2> but was: <3>
	at org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
	at org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)
	at org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)
	at org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:150)
	at org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:563)
	at com.acme.FooTest.dividesNumbers(FooTest.java:21)
	at java.base/java.lang.reflect.Method.invoke(Method.java:568)
]]></failure>
    <system-out><![CDATA[computing 6 / 3
]]></system-out>
  </testcase>
  <testcase name="parsesInput" classname="com.acme.FooTest" time="0.002">
    <error message="Cannot invoke &quot;String.length()&quot; because &quot;s&quot; is null" type="java.lang.NullPointerException"><![CDATA[java.lang.NullPointerException: Cannot invoke "String.length()" because "s" is null
	at com.acme.Parser.parse(Parser.java:9)
	at com.acme.FooTest.parsesInput(FooTest.java:28)
]]></error>
  </testcase>
  <testcase name="slowThing" classname="com.acme.FooTest" time="0">
    <skipped message="not on CI"/>
  </testcase>
  <testcase name="flakyNetwork" classname="com.acme.FooTest" time="0.3">
    <flakyFailure message="Read timed out" type="java.net.SocketTimeoutException"><![CDATA[java.net.SocketTimeoutException: Read timed out
	at com.acme.FooTest.flakyNetwork(FooTest.java:40)
]]></flakyFailure>
  </testcase>
</testsuite>
`

// surefireBar is a second Surefire file, for JUnitFiles.
const surefireBar = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd" version="3.0" name="com.acme.BarTest" time="0.02" tests="2" errors="0" skipped="0" failures="0">
  <testcase name="opens" classname="com.acme.BarTest" time="0.01"/>
  <testcase name="closes" classname="com.acme.BarTest" time="0.01"/>
</testsuite>
`

// gradleJUnit is Gradle's build/test-results/test/TEST-*.xml (JUnit 5).
const gradleJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.acme.CalculatorTest" tests="3" skipped="0" failures="1" errors="0" timestamp="2024-05-02T10:11:12" hostname="ci" time="0.031">
  <properties/>
  <testcase name="addsNumbers()" classname="com.acme.CalculatorTest" time="0.012"/>
  <testcase name="multiplies(int, int)[1]" classname="com.acme.CalculatorTest" time="0.002"/>
  <testcase name="divides()" classname="com.acme.CalculatorTest" time="0.004">
    <failure message="org.opentest4j.AssertionFailedError: expected: &lt;2&gt; but was: &lt;3&gt;" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError: expected: &lt;2&gt; but was: &lt;3&gt;
	at app//org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
	at app//org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:563)
	at app//com.acme.CalculatorTest.divides(CalculatorTest.kt:19)
	at java.base@17.0.9/java.lang.reflect.Method.invoke(Method.java:568)
</failure>
  </testcase>
  <system-out><![CDATA[]]></system-out>
  <system-err><![CDATA[]]></system-err>
</testsuite>
`

// ctestJUnit is ctest --output-junit.
const ctestJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++"
	tests="3"
	failures="1"
	disabled="1"
	skipped="0"
	hostname=""
	time="0"
	timestamp="2024-05-02T10:11:12"
	>
	<testcase name="unit_math" classname="unit_math"
		time="0.00312" status="run">
		<system-out>All tests passed (3 assertions in 1 test case)
</system-out>
	</testcase>
	<testcase name="unit_parse" classname="unit_parse"
		time="0.00451" status="fail">
		<failure message="Failed"/>
		<system-out>
/home/ci/app/tests/parse_test.cpp:27: FAILED:
  REQUIRE( parse("1+") == 1 )
with expansion:
  0 == 1

===============================================================================
test cases: 4 | 3 passed | 1 failed
</system-out>
	</testcase>
	<testcase name="integration_db" classname="integration_db"
		time="0" status="disabled">
		<skipped message="Disabled"/>
	</testcase>
</testsuite>
`

// junitOddities: nested suites, a suite that could not run (claims an
// error, holds no testcase), ANSI colour as character references, a
// classname-less case, a gtest-style skipped result and a Latin-1
// declaration.
const junitOddities = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n" +
	"<testsuites>\n" +
	" <testsuite name=\"outer\">\n" +
	"  <testsuite name=\"inner\">\n" +
	"   <testcase name=\"caf\xe9 works\" classname=\"unit\" time=\"1,234.5\"/>\n" +
	"   <testcase name=\"colours\" classname=\"unit\"><failure message=\"&#x1B;[31mred&#x1B;[0m\">&#27;[31mExpected 1, got 2&#27;[0m\n  at check (lib/check.js:3:9)</failure></testcase>\n" +
	"  </testsuite>\n" +
	"  <testcase name=\"lonely\"/>\n" +
	"  <testcase name=\"Disabled\" classname=\"Sum\" status=\"notrun\" result=\"suppressed\"/>\n" +
	" </testsuite>\n" +
	" <testsuite name=\"src/broken.test.js\" tests=\"0\" failures=\"0\" errors=\"1\">\n" +
	"  <system-err>SyntaxError: Unexpected token (3:4)\n    at src/broken.test.js:3:4</system-err>\n" +
	" </testsuite>\n" +
	"</testsuites>\n"

// ---- TAP ----

// batsTAP is bats' output.
var batsTAP = bq(`1..5
ok 1 addition using bc
not ok 2 subtraction gives a negative number
# (in test file test/math.bats, line 9)
#   ¦[ "$result" -eq -1 ]' failed
# result was 1
ok 3 division by zero is reported # skip bc is not installed
not ok 4 prints usage
# (from function ¦assert_output' in file test/test_helper/bats-assert/src/assert_output.bash, line 194,
#  in test file test/cli.bats, line 12)
#   ¦assert_output --partial "Usage:"' failed
#
# -- output does not contain substring --
# substring (1 lines):
#   Usage:
# output (1 lines):
#   error: unknown flag --help
# --
#
ok 5 version flag
`)

// proveTAP is prove -v over two test files.
const proveTAP = `t/basic.t .. 
1..3
ok 1 - use App
not ok 2 - adds numbers

#   Failed test 'adds numbers'
#   at t/basic.t line 8.
#          got: '3'
#     expected: '4'
ok 3 - has version
# Looks like you failed 1 test of 3.
Dubious, test returned 1 (wstat 256, 0x100)
Failed 1/3 subtests 
t/other.t .. 
1..2
ok 1 - use App
ok 2 - loads config
ok

Test Summary Report
-------------------
t/basic.t (Wstat: 256 (exited 1) Tests: 3 Failed: 1)
  Failed test:  2
  Non-zero exit status: 1
Files=2, Tests=5,  0 wallclock secs ( 0.02 usr  0.00 sys +  0.05 cusr  0.01 csys =  0.08 CPU)
Result: FAIL
`

// tapeTAP is tape's output.
const tapeTAP = `TAP version 13
# add
ok 1 should be strictly equal
ok 2 should be truthy
# subtract
not ok 3 should be strictly equal
  ---
    operator: equal
    expected: 1
    actual:   2
    at: Test.<anonymous> (/home/ci/app/test/math.js:12:5)
    stack: |-
      Error: should be strictly equal
          at Test.assert [as _assert] (/home/ci/app/node_modules/tape/lib/test.js:314:54)
          at Test.<anonymous> (/home/ci/app/test/math.js:12:5)
  ...

1..3
# tests 3
# pass  2
# fail  1
`

// tapeRepeatsTAP is tape (v5): assertions are named after the check, so
// they repeat; "# name" heads each test's assertions.
const tapeRepeatsTAP = `TAP version 13
# adds
ok 1 should be strictly equal
ok 2 should be strictly equal
# subtracts
ok 3 should be strictly equal
not ok 4 should be strictly equal
  ---
    operator: equal
    expected: 1
    actual:   2
    at: Test.<anonymous> (/home/ci/app/test/math.js:14:5)
    stack: |-
      Error: should be strictly equal
          at Test.assert [as _assert] (/home/ci/app/node_modules/tape/lib/test.js:314:54)
          at Test.<anonymous> (/home/ci/app/test/math.js:14:5)
  ...

1..4
# tests 4
# pass  3
# fail  1
`

// nodeTapTAP is node-tap (v16): files are subtests, assertions are leaves.
const nodeTapTAP = `TAP version 13
# Subtest: test/app.test.js
    # Subtest: adds
        ok 1 - should be equal
        1..1
    ok 1 - adds # time=3.1ms
    
    # Subtest: subtracts
        not ok 1 - should be equal
          ---
          compare: ===
          at:
            line: 12
            column: 5
            file: test/app.test.js
            type: Test
          stack: |
            Test.<anonymous> (test/app.test.js:12:5)
          source: |
            t.equal(sub(3, 1), 1)
          wanted: 1
          found: 2
          ...
        
        1..1
        # failed 1 test
    not ok 2 - subtracts # time=5.2ms
    
    1..2
    # failed 1 of 2 tests
    # time=40.1ms
not ok 1 - test/app.test.js # time=412.7ms
  ---
  env: {}
  file: test/app.test.js
  timeout: 30000
  command: /usr/bin/node
  args:
    - test/app.test.js
  cwd: /home/ci/app
  exitCode: 1
  ...

1..1
# failed 1 of 1 test
# time=430.2ms
`

// tapBailOut is a run that bailed out.
const tapBailOut = `TAP version 14
1..4
ok 1 - connects
not ok 2 - migrates
Bail out! database unavailable
ok 3 - never seen
`

// ---- cargo ----

// cargoCrash is a test binary killed by a signal mid-run.
var cargoCrash = bq(`   Compiling demo v0.1.0 (/home/ci/demo)
    Finished ¦test¦ profile [unoptimized + debuginfo] target(s) in 0.91s
     Running unittests src/lib.rs (target/debug/deps/demo-8348ca7a80742723)

running 3 tests
test tests::adds ... ok
error: test failed, to rerun pass ¦--lib¦

Caused by:
  process didn't exit successfully: ¦/home/ci/demo/target/debug/deps/demo-8348ca7a80742723¦ (signal: 11, SIGSEGV: invalid memory reference)
`)

// cargoStackOverflow is --test-threads=1: the crashing test is the one
// printed as started.
var cargoStackOverflow = bq(`     Running tests/deep.rs (target/debug/deps/deep-0de6da0f84bbd512)

running 2 tests
test shallow ... ok
test recurses_forever ... 
thread 'recurses_forever' has overflowed its stack
fatal runtime error: stack overflow, aborting
error: test failed, to rerun pass ¦--test deep¦

Caused by:
  process didn't exit successfully: ¦/home/ci/demo/target/debug/deps/deep-0de6da0f84bbd512 --test-threads=1¦ (signal: 6, SIGABRT: process abort signal)
`)

// nextestOld is cargo nextest run (0.9.5x-style output).
var nextestOld = bq(`    Finished test [unoptimized + debuginfo] target(s) in 0.61s
    Starting 5 tests across 2 binaries (1 skipped)
        PASS [   0.004s] demo tests::adds
        PASS [   0.005s] demo tests::panics
        FAIL [   0.006s] demo tests::subtracts

--- STDOUT:              demo tests::subtracts ---

running 1 test
test tests::subtracts ... FAILED

failures:

failures:
    tests::subtracts

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s


--- STDERR:              demo tests::subtracts ---
thread 'tests::subtracts' panicked at src/lib.rs:30:9:
assertion ¦left == right¦ failed
  left: 0
 right: 1
note: run with ¦RUST_BACKTRACE=1¦ environment variable to display a backtrace

        PASS [   0.003s] demo::api it_works
     SIGSEGV [   0.120s] demo::api it_crashes
------------
     Summary [   0.130s] 5 tests run: 3 passed, 2 failed, 1 skipped
        FAIL [   0.006s] demo tests::subtracts
     SIGSEGV [   0.120s] demo::api it_crashes
error: test run failed
`)

// nextestNew is newer nextest output: counters, indented output, a retry.
var nextestNew = bq(`────────────
 Nextest run ID 6f0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8 with nextest profile: default
    Starting 4 tests across 2 binaries
        PASS [   0.004s] ( 1/4) demo tests::adds
        FAIL [   0.006s] ( 2/4) demo tests::subtracts
  stdout ───

    running 1 test
    test tests::subtracts ... FAILED

    failures:

    failures:
        tests::subtracts

    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s

  stderr ───

    thread 'tests::subtracts' (8542) panicked at src/lib.rs:30:9:
    assertion ¦left == right¦ failed
      left: 0
     right: 1
    note: run with ¦RUST_BACKTRACE=1¦ environment variable to display a backtrace

  TRY 1 FAIL [   0.002s] ( 3/4) demo tests::flaky
  stderr ───

    thread 'tests::flaky' (8543) panicked at src/lib.rs:41:5:
    port in use

   RETRY 2/2 [         ] ( 3/4) demo tests::flaky
  TRY 2 PASS [   0.002s] ( 3/4) demo tests::flaky
        SKIP [         ] ( 4/4) demo tests::slow_one
────────────
     Summary [   0.012s] 3 tests run: 2 passed (1 flaky), 1 failed, 1 skipped
   FLAKY 2/2 [   0.002s] ( 3/4) demo tests::flaky
        FAIL [   0.006s] ( 2/4) demo tests::subtracts
error: test run failed
`)
