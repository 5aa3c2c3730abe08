package report

import (
	"strings"
	"testing"
)

func TestDoctests(t *testing.T) {
	runParserCases(t, []parserCase{
		{
			// Names are pytest's node ids ("FAILED README.rst::README.rst"),
			// located at the failing example; messages start with it.
			name: "pytest xunit1", parse: JUnit, input: pytestDoctestXunit1, counts: [4]int{2, 4, 0, 0},
			order: []string{"README.rst::README.rst", "calc/ops.py::calc.ops.add", "calc/ops.py::calc.ops.sub",
				"docs/usage.md::usage.md", "src/spkg/m.py::spkg.m.f", "tests/test_calc.py::test_ok"},
			cases: []want{
				{name: "README.rst::README.rst", status: Failed, suite: "README.rst", file: "/tmp/proj/README.rst", line: 6,
					msg: []string{"doctest failed: >>> print(\"hello\")\nExpected: hallo\nGot: hello\n\n001 Calc"}},
				{name: "calc/ops.py::calc.ops.add", status: Failed, suite: "calc/ops.py", file: "/tmp/proj/calc/ops.py", line: 6,
					msg: []string{"doctest failed: >>> add(2, 2)\nExpected: 5\nGot: 4\n"}},
				{name: "calc/ops.py::calc.ops.sub", status: Passed, suite: "calc/ops.py"},
				{name: "docs/usage.md::usage.md", status: Failed, suite: "docs/usage.md", file: "/tmp/proj/docs/usage.md", line: 4,
					msg: []string{"doctest failed: >>> for i in range(3):\nExpected: 0\nGot: 0 ⏎ 1 ⏎ 2\n"}},
				{name: "src/spkg/m.py::spkg.m.f", status: Failed, suite: "src/spkg/m.py", file: "/tmp/proj/src/spkg/m.py", line: 3,
					msg: []string{"doctest failed: >>> int('x')\nraised ValueError(\"invalid literal for int() with base 10: 'x'\")\n", "Traceback"}},
			},
		},
		{
			// Without a file attribute: the same ids, rebuilt from the
			// classname and the name.
			name: "pytest xunit2", parse: JUnit, input: pytestDoctestXunit2, counts: [4]int{2, 4, 0, 0},
			order: []string{"README.rst::README.rst", "calc/ops.py::calc.ops.add", "calc/ops.py::calc.ops.sub",
				"docs/usage.md::usage.md", "src/spkg/m.py::spkg.m.f", "tests/test_calc.py::test_ok"},
			cases: []want{
				{name: "README.rst::README.rst", status: Failed, suite: "README.rst", msg: []string{"doctest failed: >>> print(\"hello\")"}},
				{name: "src/spkg/m.py::spkg.m.f", status: Failed, suite: "src/spkg/m.py"},
			},
		},
		{
			// Doc-tests are located at the "(line N)" of their names, not
			// where their panics point (into the snippet as compiled).
			name: "cargo doc-tests", parse: Cargo, input: cargoDoctests, counts: [4]int{2, 4, 0, 0},
			cases: []want{
				{name: "tests::bad", status: Failed, suite: "src/lib.rs", file: "src/lib.rs", line: 34},
				{name: "src/lib.rs - (line 3)", status: Failed, suite: "Doc-tests calc", file: "src/lib.rs", line: 3,
					msg: []string{"thread 'main' (1234) panicked at src/lib.rs:5:1:\nassertion", "\n\nTest executable failed (exit status: 101)."}},
				{name: "src/lib.rs - sub (line 16)", status: Failed, suite: "Doc-tests calc", file: "src/lib.rs", line: 16,
					msg: []string{"doc math", "stdout:\ncomputing"}},
				{name: "src/lib.rs - mul (line 25)", status: Failed, suite: "Doc-tests calc", file: "src/lib.rs", line: 25,
					msg: []string{"expected `;`, found"}},
				{name: "src/lib.rs - add (line 9)", status: Passed, suite: "Doc-tests calc", file: "src/lib.rs", line: 9},
			},
		},
	})
}

// The key line of a doctest failure says what failed, not "017" (a
// numbered source line of pytest's report) or "Test executable failed".
func TestDoctestKeyLines(t *testing.T) {
	for _, tc := range []struct {
		parse func(string) (*Report, error)
		input string
		name  string
		want  []string
	}{
		{parseJUnit, pytestDoctestXunit1, "README.rst::README.rst", []string{`>>> print("hello")`, "Expected: hallo", "Got: hello"}},
		{parseJUnit, pytestDoctestXunit1, "calc/ops.py::calc.ops.add", []string{">>> add(2, 2)", "Expected: 5", "Got: 4"}},
		{parseJUnit, pytestDoctestXunit1, "src/spkg/m.py::spkg.m.f", []string{"ValueError", "invalid literal"}},
		{parseCargo, cargoDoctests, "src/lib.rs - (line 3)", []string{"crate docs are wrong"}},
		{parseCargo, cargoDoctests, "src/lib.rs - sub (line 16)", []string{"doc math"}},
	} {
		r, err := tc.parse(tc.input)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := find(r, tc.name)
		if !ok {
			t.Fatalf("no case %q in\n%s", tc.name, dump(r))
		}
		key := KeyLine(c.Message)
		for _, w := range tc.want {
			if !strings.Contains(key, w) {
				t.Errorf("%s: key line %q lacks %q", tc.name, key, w)
			}
		}
	}
}

func parseJUnit(s string) (*Report, error) { return JUnit(strings.NewReader(s)) }
func parseCargo(s string) (*Report, error) { return Cargo(strings.NewReader(s)) }

func TestPytestNodeID(t *testing.T) {
	for _, tc := range []struct{ cls, name, file, id, path string }{
		// xunit1
		{"README.rst", "README.rst", "README.rst", "README.rst::README.rst", "README.rst"},
		{"docs.usage.txt", "usage.txt", "docs/usage.txt", "docs/usage.txt::usage.txt", "docs/usage.txt"},
		{"docs.api.md", "api.md", `docs\api.md`, "docs/api.md::api.md", "docs/api.md"},
		{"calc.ops", "calc.ops.add", "calc/ops.py", "calc/ops.py::calc.ops.add", "calc/ops.py"},
		{"calc.ops", "calc.ops.C.m", "calc/ops.py", "calc/ops.py::calc.ops.C.m", "calc/ops.py"},
		{"calc.__init__", "calc", "calc/__init__.py", "calc/__init__.py::calc", "calc/__init__.py"},
		{"src.spkg.m", "spkg.m.f", "src/spkg/m.py", "src/spkg/m.py::spkg.m.f", "src/spkg/m.py"},
		{"tests.test_a.TestC", "test_m", "tests/test_a.py", "tests/test_a.py::TestC::test_m", "tests/test_a.py"},
		{"tests.test_a", "test_x[a.b]", "tests/test_a.py", "tests/test_a.py::test_x[a.b]", "tests/test_a.py"},
		// xunit2: no file attribute
		{"README.rst", "README.rst", "", "README.rst::README.rst", "README.rst"},
		{"docs.usage.txt", "usage.txt", "", "docs/usage.txt::usage.txt", "docs/usage.txt"},
		{"calc.ops", "calc.ops.add", "", "calc/ops.py::calc.ops.add", "calc/ops.py"},
		{"calc.__init__", "calc", "", "calc/__init__.py::calc", "calc/__init__.py"},
		{"src.spkg.m", "spkg.m.f", "", "src/spkg/m.py::spkg.m.f", "src/spkg/m.py"},
		{"tests.test_a", "tests.test_a.helper", "", "tests/test_a.py::tests.test_a.helper", "tests/test_a.py"},
		{"tests.test_a.TestC", "test_m", "", "tests/test_a.py::TestC::test_m", "tests/test_a.py"},
	} {
		id, path, ok := pytestNodeID(tc.cls, tc.name, tc.file)
		if !ok || id != tc.id || path != tc.path {
			t.Errorf("pytestNodeID(%q, %q, %q) = %q, %q, %v; want %q, %q", tc.cls, tc.name, tc.file, id, path, ok, tc.id, tc.path)
		}
	}
	// Not pytest ids: left to the other naming rules.
	for _, tc := range [][3]string{{"calc.ops", "add", ""}, {"com.acme.FooTest", "testBar", ""}, {"README", "md", ""}} {
		if id, _, ok := pytestNodeID(tc[0], tc[1], tc[2]); ok {
			t.Errorf("pytestNodeID(%q, %q, %q) = %q, want none", tc[0], tc[1], tc[2], id)
		}
	}
}

func TestDoctestHead(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"001 Calc\n002 >>> x\nExpected:\n    1\nGot:\n    2\n\n/abs/README.rst:2: DocTestFailure",
			"doctest failed: >>> x\nExpected: 1\nGot: 2"},
		{"003     >>> f()\nExpected nothing\nGot:\n    'a'\n\n/abs/m.py:3: DocTestFailure",
			"doctest failed: >>> f()\nExpected nothing\nGot: 'a'"},
		{"003     >>> f()\nExpected:\n    1\n    2\n    3\n    4\nGot nothing\n/abs/m.py:3: DocTestFailure",
			"doctest failed: >>> f()\nExpected: 1 ⏎ 2 ⏎ 3 …\nGot nothing"},
		// A blank line inside a value (doctest leaves it unindented).
		{"003 >>> f()\nExpected:\n    a\n\n    b\nGot:\n    c\n\n/abs/x.txt:3: DocTestFailure",
			"doctest failed: >>> f()\nExpected: a ⏎  ⏎ b\nGot: c"},
		{"003 >>> f()\nDifferences (unified diff with -expected +actual):\n    @@ -1 +1 @@\n    -a\n    +b\n/abs/x.txt:3: DocTestFailure",
			"doctest failed: >>> f()\nDifferences (unified diff with -expected +actual):"},
		{"EXAMPLE LOCATION UNKNOWN, not showing all tests of that example\n??? >>> g()\nExpected:\n    1\nGot:\n    2\n/abs/x.py:?: DocTestFailure",
			"doctest failed: >>> g()\nExpected: 1\nGot: 2"},
		// Not doctests.
		{"def test_a():\n>       assert 1 == 2\nE       assert 1 == 2\n\ntests/test_a.py:2: AssertionError", ""},
		{"Expected:\n    1\nGot:\n    2\n", ""},
		{"", ""},
	} {
		if got := doctestHead(tc.text); got != tc.want {
			t.Errorf("doctestHead(%q)\n = %q\nwant %q", tc.text, got, tc.want)
		}
	}
}

func TestCargoDocMessage(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"Test executable failed (exit status: 101).\n\nstderr:\n\nthread 'main' panicked at src/lib.rs:5:1:\nboom",
			"thread 'main' panicked at src/lib.rs:5:1:\nboom\n\nTest executable failed (exit status: 101)."},
		{"Test executable failed (exit status: 101).\n\nstdout:\nhi\n\nstderr:\nboom",
			"boom\n\nstdout:\nhi\n\nTest executable failed (exit status: 101)."},
		{"Test executable failed (exit status: 101).", "Test executable failed (exit status: 101)."},
		{"error: expected `;`\nCouldn't compile the test.", "error: expected `;`\nCouldn't compile the test."},
	} {
		if got := cargoDocMessage(tc.msg); got != tc.want {
			t.Errorf("cargoDocMessage(%q)\n = %q\nwant %q", tc.msg, got, tc.want)
		}
	}
}
