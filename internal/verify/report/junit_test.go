package report

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestJUnit(t *testing.T) {
	runParserCases(t, []parserCase{
		{
			name: "pytest xunit1", parse: JUnit, input: pytestXunit1,
			counts: [4]int{2, 1, 1, 1},
			order: []string{"tests/test_calc.py::test_add", "tests/test_calc.py::TestDivide::test_divide[4-2-2]",
				"tests/test_calc.py::TestDivide::test_divide_by_zero", "tests/test_calc.py::test_slow", "tests/test_db.py::test_query"},
			cases: []want{
				{name: "tests/test_calc.py::test_add", status: Passed, suite: "tests/test_calc.py", file: "tests/test_calc.py", line: 4, dur: time.Millisecond},
				{name: "tests/test_calc.py::TestDivide::test_divide_by_zero", status: Failed, file: "tests/test_calc.py", line: 16,
					msg: []string{"assert 0 == inf", "E        +  where 0 = divide(1, 0)"}},
				{name: "tests/test_calc.py::test_slow", status: Skipped, msg: []string{"needs the network"}},
				{name: "tests/test_db.py::test_query", status: Error, file: "tests/conftest.py", line: 12,
					msg: []string{"failed on setup", "ConnectionRefusedError"}},
			},
		},
		{
			name: "pytest xunit2", parse: JUnit, input: pytestXunit2,
			counts: [4]int{1, 1, 0, 1},
			order: []string{"tests/unit/test_parser.py::TestTokens::test_empty", "tests/unit/test_parser.py::test_numbers[1.5]",
				"tests/unit/test_broken.py"},
			cases: []want{
				{name: "tests/unit/test_parser.py::test_numbers[1.5]", status: Failed, suite: "tests/unit/test_parser.py",
					file: "tests/unit/test_parser.py", line: 22, msg: []string{"Right contains one more item"}},
				{name: "tests/unit/test_broken.py", status: Error, file: "tests/unit/test_broken.py", line: 1,
					msg: []string{"No module named 'yaml'"}},
			},
		},
		{
			name: "jest-junit", parse: JUnit, input: jestJUnit,
			counts: [4]int{2, 1, 1, 0},
			order:  []string{"Calculator adds numbers", "Calculator divides by zero", "Calculator skips this", "format pads numbers"},
			cases: []want{{name: "Calculator divides by zero", status: Failed, suite: "Calculator",
				file: "/home/ci/app/src/calculator.test.js", line: 14, msg: []string{"Expected: Infinity", "Received: 0"}}},
		},
		{
			name: "vitest", parse: JUnit, input: vitestJUnit,
			counts: [4]int{2, 1, 1, 0},
			order: []string{"src/math.test.ts > math > adds", "src/math.test.ts > math > nested > divides",
				"src/math.test.ts > math > todo later", "src/util.test.ts > slug > lowercases"},
			cases: []want{{name: "src/math.test.ts > math > nested > divides", status: Failed, suite: "src/math.test.ts",
				file: "src/math.test.ts", line: 12, msg: []string{"AssertionError: expected 0 to be Infinity", "+ 0"}}},
		},
		{
			name: "surefire", parse: JUnit, input: surefireFoo,
			counts: [4]int{2, 1, 1, 1},
			order: []string{"com.acme.FooTest.addsNumbers", "com.acme.FooTest.dividesNumbers", "com.acme.FooTest.parsesInput",
				"com.acme.FooTest.slowThing", "com.acme.FooTest.flakyNetwork"},
			cases: []want{
				{name: "com.acme.FooTest.dividesNumbers", status: Failed, suite: "com.acme.FooTest", file: "FooTest.java", line: 21,
					msg: []string{"expected: <2> but was: <3>", "computing 6 / 3"}, dur: 12 * time.Millisecond},
				{name: "com.acme.FooTest.parsesInput", status: Error, file: "FooTest.java", line: 28, msg: []string{"NullPointerException"}},
				{name: "com.acme.FooTest.slowThing", status: Skipped, msg: []string{"not on CI"}},
				{name: "com.acme.FooTest.flakyNetwork", status: Passed},
			},
		},
		{
			name: "gradle", parse: JUnit, input: gradleJUnit,
			counts: [4]int{2, 1, 0, 0},
			order:  []string{"com.acme.CalculatorTest.addsNumbers", "com.acme.CalculatorTest.multiplies(int, int)[1]", "com.acme.CalculatorTest.divides"},
			cases: []want{{name: "com.acme.CalculatorTest.divides", status: Failed, file: "CalculatorTest.kt", line: 19,
				msg: []string{"org.opentest4j.AssertionFailedError: expected: <2> but was: <3>"}}},
		},
		{
			name: "ctest", parse: JUnit, input: ctestJUnit,
			counts: [4]int{1, 1, 1, 0},
			order:  []string{"unit_math", "unit_parse", "integration_db"},
			cases: []want{{name: "unit_parse", status: Failed, suite: "Linux-c++", file: "/home/ci/app/tests/parse_test.cpp", line: 27,
				msg: []string{"Failed", `REQUIRE( parse("1+") == 1 )`}}},
		},
		{
			name: "oddities", parse: JUnit, input: junitOddities,
			counts: [4]int{2, 1, 1, 1},
			order:  []string{"unit.café works", "unit.colours", "lonely", "Sum.Disabled", "src/broken.test.js"},
			cases: []want{
				{name: "unit.café works", status: Passed, suite: "unit", dur: 1234500 * time.Millisecond},
				{name: "unit.colours", status: Failed, file: "lib/check.js", line: 3, msg: []string{"red\nExpected 1, got 2"}},
				{name: "Sum.Disabled", status: Skipped},
				{name: "src/broken.test.js", status: Error, file: "src/broken.test.js", line: 3, msg: []string{"SyntaxError"}},
			},
		},
		{
			name: "truncated", parse: JUnit, input: surefireFoo[:strings.Index(surefireFoo, "<skipped message=\"not on CI\"/>")+30],
			counts: [4]int{1, 1, 1, 1}, truncated: true,
		},
		{
			name: "truncated in a failure", parse: JUnit, input: surefireFoo[:strings.Index(surefireFoo, "at org.junit.jupiter.api.AssertEquals.failNotEqual")],
			counts: [4]int{1, 1, 0, 0}, truncated: true,
			cases: []want{{name: "com.acme.FooTest.dividesNumbers", status: Failed, msg: []string{"expected: <2> but was: <3>"}}},
		},
		{
			name: "concatenated documents", parse: JUnit, input: surefireFoo + surefireBar,
			counts: [4]int{4, 1, 1, 1},
		},
		{
			name: "duplicates", parse: JUnit,
			input:  `<testsuite name="s"><testcase classname="a.B" name="c"/><testcase classname="a.B" name="c"><failure/></testcase><testcase classname="a.B" name="c #2"/></testsuite>`,
			counts: [4]int{2, 1, 0, 0},
			order:  []string{"a.B.c", "a.B.c #3", "a.B.c #2"},
		},
	})
}

func TestJUnitNotJUnit(t *testing.T) {
	for _, in := range []string{"", "not xml at all", "<html><body>x</body></html>", "<?xml version=\"1.0\"?><results/>", "{\"a\":1}"} {
		if r, err := JUnit(strings.NewReader(in)); !errors.Is(err, ErrNotFormat) || r != nil {
			t.Errorf("JUnit(%q) = %v, %v; want nil, error", in, r, err)
		}
	}
}

func TestJUnitFiles(t *testing.T) {
	r, err := JUnitFiles(strings.NewReader(surefireFoo), strings.NewReader(surefireBar))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, r)
	if r.Passed != 4 || r.Failed != 1 || r.Errors != 1 || r.Skipped != 1 || r.Format != "junit" {
		t.Errorf("got %+v", r)
	}

	// A broken and a non-JUnit document do not hide the good one. The
	// broken one claims failures and holds no testcase: an error.
	r, err = JUnitFiles(strings.NewReader(surefireBar), strings.NewReader(surefireFoo[:400]), strings.NewReader("garbage"))
	if !errors.Is(err, ErrTruncated) || r == nil || r.Passed != 2 || r.Errors != 1 || len(r.Cases) != 3 {
		t.Fatalf("got %v, %v", r, err)
	}
	if !strings.Contains(err.Error(), "document 3") {
		t.Errorf("err = %v", err)
	}
	// The same document twice: names stay unique.
	r, _ = JUnitFiles(strings.NewReader(surefireBar), strings.NewReader(surefireBar))
	checkInvariants(t, r)
	if r.Cases[2].Name != "com.acme.BarTest.opens #2" {
		t.Errorf("got %q", r.Cases[2].Name)
	}
	if r, err := JUnitFiles(strings.NewReader("nope")); r != nil || err == nil {
		t.Errorf("got %v, %v", r, err)
	}
	if r, err := JUnitFiles(); err != nil || r == nil || len(r.Cases) != 0 {
		t.Errorf("got %v, %v", r, err)
	}
}

func TestXMLSanitizerChunks(t *testing.T) {
	// Escape sequences and references cut by the reader's chunking.
	in := "<a>x\x1b[31mred\x1b[0m &#x1B;[1mbold&#27;[0m &amp; &#65; \x01ok\uFFFE</a>"
	want := "<a>xred bold &amp; &#65; ok</a>"
	for n := 1; n < 8; n++ {
		got, err := io.ReadAll(&xmlSanitizer{r: &chunkReader{s: in, n: n}})
		if err != nil || string(got) != want {
			t.Errorf("chunks of %d: %q, %v", n, got, err)
		}
	}
}

type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(b []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}
