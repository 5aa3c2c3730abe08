package verify

// Doctests run by their real runners: pytest's doctests of text files
// and modules (--doctest-glob, --doctest-modules) and cargo's doc-tests.
// Their ids must be the runners' own, so that a focused run or a re-run
// selects them again, and their failures must be located where the
// failing example is.

import (
	"slices"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

func TestRealPytestDoctests(t *testing.T) {
	t.Parallel()
	needPytest(t)
	dir := project(t, map[string]string{
		"pytest.ini": "[pytest]\naddopts = --doctest-glob='*.rst' --doctest-modules\n",
		"README.rst": `Calc
====

Adding works:

>>> from calc.ops import add
>>> add(1, 1)
2

Greeting does not:

>>> print("hello")
hallo
`,
		"calc/__init__.py": "",
		"calc/ops.py": `def add(a, b):
    """Add a and b.

    >>> add(1, 2)
    3
    >>> add(2, 2)
    5
    """
    return a + b


def sub(a, b):
    """Subtract.

    >>> sub(3, 1)
    2
    """
    return a - b
`,
		"tests/test_calc.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 2, 0)
	// pytest's own node ids ("FAILED README.rst::README.rst"), located
	// at the failing example.
	wantFailing(t, res, "README.rst::README.rst (README.rst:12)", "calc/ops.py::calc.ops.add (calc/ops.py:6)")
	wantCase(t, res, "calc/ops.py::calc.ops.sub", report.Passed)
	for _, tc := range []struct{ name, example, expected, got string }{
		{"README.rst::README.rst", `>>> print("hello")`, "Expected: hallo", "Got: hello"},
		{"calc/ops.py::calc.ops.add", ">>> add(2, 2)", "Expected: 5", "Got: 4"},
	} {
		c := wantCase(t, res, tc.name, report.Failed)
		// The message starts with what failed, not with the numbered
		// source lines pytest shows first ("011 Greeting does not:").
		first, _, _ := strings.Cut(c.Message, "\n")
		if !strings.Contains(first, tc.example) {
			t.Errorf("%s: message starts with %q, want the failing example %s\n%s", tc.name, first, tc.example, c.Message)
		}
		key := report.KeyLine(c.Message)
		for _, want := range []string{tc.example, tc.expected, tc.got} {
			if !strings.Contains(key, want) {
				t.Errorf("%s: key line %q lacks %q", tc.name, key, want)
			}
		}
	}

	// The ids select exactly those doctests again.
	only := []string{"README.rst::README.rst", "calc/ops.py::calc.ops.add"}
	res = verify(t, Request{Dir: dir, Only: only})
	if !res.Selected || res.Passed != 0 || res.Failed != 2 || len(res.Tests) != 2 {
		t.Errorf("selection: %d passed, %d failed, %d tests, selected %v: %s", res.Passed, res.Failed, len(res.Tests), res.Selected, res.Commands[0].Command)
	}
	wantFailing(t, res, "README.rst::README.rst (README.rst:12)", "calc/ops.py::calc.ops.add (calc/ops.py:6)")

	// A re-run selects them too: still failing, so not flaky.
	res = verify(t, Request{Dir: dir, Rerun: true})
	if rr := res.Commands[0].Rerun; rr == nil || rr.Failed != 2 || len(rr.Tests) != 2 {
		t.Errorf("re-run: %+v", rr)
	}
	if len(res.Flaky) != 0 {
		t.Errorf("flaky = %q", res.Flaky)
	}
}

func TestRealCargoDoctests(t *testing.T) {
	t.Parallel()
	need(t, "cargo")
	dir := project(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
		"src/lib.rs": `//! Calc.
//!
//! ` + "```" + `
//! assert_eq!(calc::add(2, 2), 5, "crate docs are wrong");
//! ` + "```" + `

/// Adds.
///
/// ` + "```" + `
/// assert_eq!(calc::add(1, 1), 2);
/// ` + "```" + `
pub fn add(a: i32, b: i32) -> i32 { a + b }

/// Subtracts.
///
/// ` + "```" + `
/// let x = calc::sub(3, 1);
/// assert_eq!(x, 5, "doc math");
/// ` + "```" + `
pub fn sub(a: i32, b: i32) -> i32 { a - b }

#[cfg(test)]
mod tests {
    use super::*;
    #[test] fn adds() { assert_eq!(add(1, 2), 3); }
    #[test] fn bad() { assert_eq!(add(1, 2), 4, "math is broken"); }
}
`,
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 3, 0)
	// Doc-tests are located where the name says, not in the snippet's
	// own temporary file ("panicked at src/lib.rs:4:1").
	wantFailing(t, res, "tests::bad (src/lib.rs:26)", "src/lib.rs - (line 3) (src/lib.rs:3)", "src/lib.rs - sub (line 16) (src/lib.rs:16)")
	for _, n := range []string{"src/lib.rs - (line 3)", "src/lib.rs - sub (line 16)"} {
		if c := wantCase(t, res, n, report.Failed); c.Suite != "Doc-tests calc" || !strings.Contains(c.Message, "panicked") {
			t.Errorf("%s: suite %q, message %q", n, c.Suite, c.Message)
		}
	}

	// A focused run of the failing tests runs all three of them, and only
	// them: the unit test and both doc-tests.
	var only, want, docOnly, docWant []string
	for _, c := range res.Tests {
		if c.Status == report.Failed {
			only = append(only, SelectName(c.Name, c.Suite, c.File))
			want = append(want, c.Name)
			if strings.HasPrefix(c.Suite, "Doc-tests ") {
				docOnly = append(docOnly, SelectName(c.Name, c.Suite, c.File))
				docWant = append(docWant, c.Name)
			}
		}
	}
	focused(t, dir, only, want)
	focused(t, dir, docOnly, docWant)
}

// focused runs only the tests named only (SelectName's names) and checks
// that exactly the tests named want ran, and failed.
func focused(t *testing.T, dir string, only, want []string) {
	t.Helper()
	res := verify(t, Request{Dir: dir, Only: only})
	var got []string
	for _, c := range res.Tests {
		got = append(got, c.Name)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !res.Selected || res.Failed != len(want) || res.Passed != 0 || !slices.Equal(got, want) {
		var cmds []string
		for _, c := range res.Commands {
			cmds = append(cmds, c.Command)
		}
		// cargo refuses --doc with other target options, and rustdoc
		// splits the test arguments cargo hands it at whitespace, so a
		// doc-test's name never matches with --exact: select.go must run
		// the doc-tests in a cargo test --doc of their own, filtered by one
		// word of their names.
		t.Errorf("focused run of %q: %d passed, %d failed, selected %v, tests %q (want %q): %q", only, res.Passed, res.Failed, res.Selected, got, want, cmds)
	}
}
