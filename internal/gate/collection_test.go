package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

// module is a test module that could not be collected.
func module(name, err string) report.Case {
	return report.Case{Name: name, Suite: name, File: name, Status: report.Error, Kind: report.KindCollection,
		Message: "collection failure\nImportError while importing test module\nE   " + err}
}

func withCases(cs []report.Case, more ...report.Case) []report.Case { return append(cs, more...) }

// pyCmd is pytest's command with per-test results; its exit status and
// counts are those of the tests given.
func pyCmd(tests []report.Case) Command {
	c := Command{Command: "python3 -m pytest -q", Source: "pytest.ini found", Parsed: true, HasTests: true}
	for _, t := range tests {
		switch t.Status {
		case report.Passed:
			c.Passed++
		case report.Failed:
			c.Failed++
		case report.Error:
			c.Errors++
		case report.Skipped:
			c.Skipped++
		}
	}
	if c.Failed+c.Errors > 0 {
		c.ExitCode = 1
	}
	return c
}

func pyEvidence(tests []report.Case) Evidence {
	return Evidence{Commands: []Command{pyCmd(tests)}, Tests: tests}
}

func pyBaseline(tests []report.Case) *Baseline {
	b := NewBaseline("t0", pyEvidence(tests))
	b.Sources = nil // the commands are compared elsewhere
	return &b
}

// TestCollectionErrors: a test module that cannot be imported is a setup
// problem, judged against the baseline: the tree's doing when it collected
// at the start (FAIL), not the run's when it did not (CONCERNS when other
// tests ran, NOT_EVALUATED when nothing could); without a baseline,
// NOT_EVALUATED when nothing else ran, else FAIL.
func TestCollectionErrors(t *testing.T) {
	const noReq = "ModuleNotFoundError: No module named 'requests'"
	ok := cases("tests/test_b.py::test_x=passed", "tests/test_b.py::test_y=passed")
	aTests := cases("tests/test_a.py::test_1=passed", "tests/test_a.py::test_2=passed")
	modA := module("tests/test_a.py", noReq)
	tt := []struct {
		name     string
		ev       Evidence
		baseline *Baseline
		want     Status
		reasons  []string
		absent   []string
	}{
		{name: "no baseline, nothing else ran", ev: pyEvidence([]report.Case{modA}), want: NotEvaluated,
			reasons: []string{"no test could run: 1 test module could not be collected (import errors): tests/test_a.py: " + noReq}},
		{name: "no baseline, other tests ran", ev: pyEvidence(withCases(ok, modA)), want: Fail,
			reasons: []string{"1 test module could not be collected (import errors): tests/test_a.py: " + noReq},
			absent:  []string{"of 3 tests failed", "exited"}},
		{name: "collected at the start: the tree broke it", ev: pyEvidence(withCases(ok, modA)), baseline: pyBaseline(withCases(ok, aTests...)), want: Fail,
			reasons: []string{"tests/test_a.py: " + noReq + " — they did not fail this way at the start of the run"},
			absent:  []string{"fewer tests", "missing"}},
		{name: "pytest interrupted: nothing ran, the tree broke it", ev: pyEvidence([]report.Case{modA}), baseline: pyBaseline(withCases(ok, aTests...)), want: Fail,
			reasons: []string{"did not fail this way at the start"}, absent: []string{"fewer tests", "zero tests"}},
		{name: "a new module that does not import", ev: pyEvidence(withCases(ok, module("tests/test_new.py", "SyntaxError: invalid syntax"))),
			baseline: pyBaseline(ok), want: Fail, reasons: []string{"tests/test_new.py: SyntaxError: invalid syntax — they did not fail this way"}},
		{name: "as at the start, other tests pass", ev: pyEvidence(withCases(ok, modA)), baseline: pyBaseline(withCases(ok, modA)), want: Concerns,
			reasons: []string{"2 tests passed", "1 test module could not be collected (import errors): tests/test_a.py: " + noReq + " — as at the start of the run"},
			absent:  []string{"failed"}},
		{name: "as at the start, nothing else ran", ev: pyEvidence([]report.Case{modA}), baseline: pyBaseline([]report.Case{modA}), want: NotEvaluated,
			reasons: []string{"no test could run: 1 test module could not be collected", "as at the start of the run"}},
		{name: "as at the start, and a test fails", ev: pyEvidence(withCases(cases("tests/test_b.py::test_x=passed", "tests/test_b.py::test_y=failed"), modA)),
			baseline: pyBaseline(withCases(ok, modA)), want: Fail, reasons: []string{"1 of 2 tests failed", "as at the start of the run"}},
		{name: "fixed since the start: not missing", ev: pyEvidence(withCases(ok, aTests...)), baseline: pyBaseline(withCases(ok, modA)), want: Pass,
			absent: []string{"missing"}},
		{name: "one of two broken at the start", ev: pyEvidence(withCases(ok, modA, module("tests/test_c.py", "ImportError: x"))),
			baseline: pyBaseline(withCases(withCases(ok, modA), cases("tests/test_c.py::test_1=passed")...)), want: Fail,
			reasons: []string{"1 test module could not be collected (import errors): tests/test_c.py: ImportError: x — they did not fail",
				"tests/test_a.py: " + noReq + " — as at the start"}},
	}
	for _, c := range tt {
		t.Run(c.name, func(t *testing.T) {
			d := Judge(Input{Run: "r", Tree: "t1", N: 2, Evidence: c.ev, Baseline: c.baseline})
			all := strings.Join(d.Reasons, "; ")
			if d.Status != c.want {
				t.Fatalf("status %s, want %s (reasons %q)", d.Status, c.want, all)
			}
			for _, r := range c.reasons {
				if !strings.Contains(all, r) {
					t.Errorf("reasons %q lack %q", all, r)
				}
			}
			for _, r := range c.absent {
				if strings.Contains(all, r) {
					t.Errorf("reasons %q have %q", all, r)
				}
			}
			checkAgree(t, d)
		})
	}
}

// checkAgree: a decision says the same numbers everywhere: its counts are
// its commands' figures summed, its failing list names each failed and
// errored test once, and its reasons' numbers are those.
func checkAgree(t *testing.T, d Decision) {
	t.Helper()
	var sum Counts
	for _, c := range d.Commands {
		sum.Passed += c.Passed
		sum.Failed += c.Failed
		sum.Errors += c.Errors
		sum.Skipped += c.Skipped
	}
	sum.Executed = sum.Passed + sum.Failed + sum.Errors
	if sum != d.Counts {
		t.Errorf("counts %+v, commands' figures %+v", d.Counts, sum)
	}
	if len(d.Failing) != d.Counts.Failed+d.Counts.Errors {
		t.Errorf("%d failing, counts say %d failed and %d errors", len(d.Failing), d.Counts.Failed, d.Counts.Errors)
	}
	all := strings.Join(d.Reasons, "; ")
	coll := 0
	for _, f := range d.Failing {
		if f.Kind == report.KindCollection {
			coll++
			if !strings.Contains(all, f.Name) {
				t.Errorf("reasons %q do not name %s", all, f.Name)
			}
		}
	}
	if n := d.Counts.Failed; n > 0 && d.Status == Fail && !strings.Contains(all, fmt.Sprintf("%d of %d test", n, d.Counts.Executed-coll)) {
		t.Errorf("reasons %q do not say %d of %d tests failed", all, n, d.Counts.Executed-coll)
	}
}

func TestErrorsApartFromFailures(t *testing.T) {
	tests := cases("a=passed", "b=failed", "c=error")
	d := Judge(Input{Evidence: pyEvidence(tests)})
	if d.Status != Fail || d.Counts != (Counts{Passed: 1, Failed: 1, Errors: 1, Executed: 3}) {
		t.Fatalf("%s %+v", d.Status, d.Counts)
	}
	if got := strings.Join(d.Reasons, "; "); got != "1 of 3 tests failed, 1 errored" {
		t.Errorf("reasons %q", got)
	}
	checkAgree(t, d)

	// Counts only (text): a command's errors are errors, and named.
	ev := Evidence{Commands: []Command{{Command: "make test", ExitCode: 2, Parsed: true, Passed: 3, Failed: 1, Errors: 2}}, Failing: []string{"x", "y", "z"}}
	d = Judge(Input{Evidence: ev})
	if d.Status != Fail || d.Counts != (Counts{Passed: 3, Failed: 1, Errors: 2, Executed: 6}) || len(d.Failing) != 3 {
		t.Fatalf("%s %+v %v", d.Status, d.Counts, d.Failing)
	}
	if got := strings.Join(d.Reasons, "; "); got != "1 of 6 tests failed, 2 errored" {
		t.Errorf("reasons %q", got)
	}

	// A command whose errors are not told apart (an older caller): its
	// per-test results say what failed; it did not exit 1 for nothing.
	old := pyCmd(nil)
	old.ExitCode = 1
	d = Judge(Input{Evidence: Evidence{Commands: []Command{old}, Tests: withCases(cases("a=passed"), module("tests/test_a.py", "ImportError: x"))}})
	if all := strings.Join(d.Reasons, "; "); strings.Contains(all, "although none of its tests failed") {
		t.Errorf("reasons %q", all)
	}
}

func TestParentFailure(t *testing.T) {
	tests := []report.Case{
		{Name: "pkg.TestT", Status: report.Failed, Kind: report.KindParent, Message: "1 of 2 subtests failed: b"},
		{Name: "pkg.TestT/a", Status: report.Passed, Parent: "pkg.TestT"},
		{Name: "pkg.TestT/b", Status: report.Failed, Parent: "pkg.TestT", File: "t_test.go", Line: 9, Message: "t_test.go:9: want 2"},
	}
	d := Judge(Input{Evidence: pyEvidence(tests)})
	if d.Status != Fail || len(d.Failing) != 2 || d.Failing[0].Kind != report.KindParent || d.Failing[0].Message != "1 of 2 subtests failed: b" {
		t.Fatalf("%s %+v", d.Status, d.Failing)
	}
	if got := strings.Join(d.Reasons, "; "); got != "2 of 3 tests failed" {
		t.Errorf("reasons %q", got)
	}
	checkAgree(t, d)
}

func TestBaselineCollection(t *testing.T) {
	// Nothing could be collected at the start: not evaluated, but which
	// modules did not collect is recorded.
	b := NewBaseline("t0", pyEvidence([]report.Case{module("tests/test_a.py", "ImportError: x")}))
	if b.Evaluated || !strings.Contains(b.Reason, "no test could run") || len(b.Collection) != 1 || b.Tests["tests/test_a.py"] != report.Error || b.Errors != 1 || b.Failed != 0 {
		t.Fatalf("%+v", b)
	}
	b = NewBaseline("t0", pyEvidence(cases("a=passed", "b=failed", "c=error")))
	if b.Failed != 1 || b.Errors != 1 || b.Executed != 3 || len(b.Collection) != 0 {
		t.Fatalf("%+v", b)
	}
}
