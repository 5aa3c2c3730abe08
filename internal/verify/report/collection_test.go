package report

import (
	"io"
	"strings"
	"testing"
)

// TestCollectionErrors: a test file, module or package that could not be
// loaded is one Error case of Kind KindCollection named by it, in every
// format, and the counts are the runner's own.
func TestCollectionErrors(t *testing.T) {
	runParserCases(t, []parserCase{
		{
			// pytest: "2 errors in 0.22s"
			name: "pytest modules that do not import", parse: JUnit, input: pytestCollectionXML,
			counts: [4]int{0, 0, 0, 2},
			order:  []string{"tests/test_imp.py", "tests/test_syn.py"},
			cases: []want{
				{name: "tests/test_imp.py", status: Error, kind: KindCollection, file: "tests/test_imp.py", line: 1,
					msg: []string{"ModuleNotFoundError: No module named 'requests_not_here'"}},
				// located in the module, not in pytest's frames
				{name: "tests/test_syn.py", status: Error, kind: KindCollection, file: "/tmp/pc/tests/test_syn.py", line: 1,
					msg: []string{"SyntaxError: invalid syntax"}},
			},
		},
		{
			// vitest: "Test Files 3 failed (3)", "Tests 2 failed | 1 passed | 1 skipped | 1 todo (5)"
			name: "vitest files that fail to load", parse: JUnit, input: vitestLoadFailuresXML,
			counts: [4]int{1, 2, 2, 2},
			order: []string{"src/broken.test.js", "src/calc.test.js > calc > adds", "src/calc.test.js > calc > subtracts",
				"src/calc.test.js > calc > later", "src/calc.test.js > calc > todo one", "src/calc.test.js > top", "src/imp.test.js"},
			cases: []want{
				{name: "src/broken.test.js", status: Error, kind: KindCollection, suite: "src/broken.test.js", msg: []string{"Failed to parse source"}},
				{name: "src/imp.test.js", status: Error, kind: KindCollection, msg: []string{"Failed to load url not-a-module"}},
				{name: "src/calc.test.js > top", status: Failed, kind: "-"},
			},
		},
		{
			// node: "# tests 11", "# pass 3", "# fail 6", "# skipped 1", "# todo 1"
			name: "node --test files that fail to load, parent tests", parse: TAP, input: nodeLoadFailuresTAP,
			counts: [4]int{3, 4, 2, 2},
			cases: []want{
				{name: "/tmp/nc/test/imp.test.js", status: Error, kind: KindCollection, msg: []string{"Cannot find module 'nope'"}},
				{name: "/tmp/nc/test/syn.test.js", status: Error, kind: KindCollection, msg: []string{"SyntaxError: missing ) after argument list"}},
				{name: "parent", status: Failed, kind: KindParent, msg: []string{"1 of 2 subtests failed: child bad"}},
				{name: "parent > child bad", status: Failed, kind: "-", parent: "parent"},
				{name: "group > inner bad", status: Failed, parent: "-"}, // a suite is not a test
				{name: "multiplies", status: Failed, kind: "-", parent: "-"},
			},
		},
		{
			name: "cargo target that does not compile", parse: Cargo, input: cargoTargetCompileError,
			counts: [4]int{0, 0, 0, 1},
			cases: []want{{name: `calc (test "broken")`, status: Error, kind: KindCollection, file: "tests/broken.rs", line: 2,
				msg: []string{"mismatched types"}}},
		},
		{
			// ctest: "50% tests passed, 2 tests failed out of 4" (later is disabled)
			name: "ctest program not built", parse: JUnit, input: ctestNotBuiltXML,
			counts: [4]int{1, 1, 2, 1},
			cases: []want{
				{name: "missing", status: Error, kind: "-", msg: []string{"Unable to find executable"}},
				{name: "later", status: Skipped},
				{name: "skipper", status: Skipped},
			},
		},
	})
	if c, ok := find(mustParse(t, TAP, nodeLoadFailuresTAP), "parent"); !ok || c.File != "" {
		t.Errorf("a parent failing through its subtests has no location of its own: %+v", c)
	}
}

func mustParse(t *testing.T, parse func(io.Reader) (*Report, error), in string) *Report {
	t.Helper()
	r, err := parse(strings.NewReader(in))
	if r == nil {
		t.Fatal(err)
	}
	return r
}

func TestCollectionSummary(t *testing.T) {
	py, _ := JUnit(strings.NewReader(pytestCollectionXML))
	want := "2 test modules could not be collected (import errors): tests/test_imp.py: ModuleNotFoundError: No module named 'requests_not_here'; " +
		"tests/test_syn.py: SyntaxError: invalid syntax"
	if got := CollectionSummary(py.Cases, 5); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := CollectionSummary(py.Cases, 1); !strings.HasSuffix(got, "; … (1 more)") || !strings.HasPrefix(got, "2 test modules") {
		t.Errorf("got %q", got)
	}
	vi, _ := JUnit(strings.NewReader(vitestLoadFailuresXML))
	if got := CollectionSummary(vi.Cases, 5); !strings.HasPrefix(got, "2 test files could not be loaded: src/broken.test.js: Error: Failed to parse source") {
		t.Errorf("got %q", got)
	}
	ca, _ := Cargo(strings.NewReader(cargoTargetCompileError))
	if got := CollectionSummary(ca.Cases, 5); got != `1 test target could not be compiled: calc (test "broken"): tests/broken.rs:2:23: error[E0308]: mismatched types` {
		t.Errorf("got %q", got)
	}
	gj, _ := GoJSON(strings.NewReader(goBuildFailed))
	if got := CollectionSummary(gj.Cases, 5); !strings.HasPrefix(got, "1 package could not be built: example.com/demo/broken: ") {
		t.Errorf("got %q", got)
	}
	if got := CollectionSummary([]Case{{Name: "x", Status: Failed}}, 5); got != "" {
		t.Errorf("got %q", got)
	}
}
