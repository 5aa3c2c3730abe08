package gate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/verify/report"
)

func cases(spec ...string) []report.Case {
	var out []report.Case
	for _, s := range spec {
		name, st, _ := strings.Cut(s, "=")
		out = append(out, report.Case{Name: name, Status: report.Status(st), Message: "boom\nmore"})
	}
	return out
}

// cmd is a command with per-test results; a non-zero exit comes with one
// failing test unless cmdF says otherwise.
func cmd(exit int) Command {
	c := Command{Command: "go test -json ./...", ExitCode: exit, Parsed: true, HasTests: true, Duration: time.Second}
	if exit != 0 {
		c.Failed = 1
	}
	return c
}

func cmdF(exit, failed int) Command { c := cmd(exit); c.Failed = failed; return c }

func base(spec ...string) *Baseline {
	b := NewBaseline("t0", Evidence{Commands: []Command{cmd(0)}, Tests: cases(spec...)})
	return &b
}

func TestStatusRules(t *testing.T) {
	tt := []struct {
		name     string
		ev       Evidence
		baseline *Baseline
		previous []Decision
		want     Status
		reason   string
	}{
		{name: "all pass", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "b=passed")}, want: Pass, reason: "2 tests passed"},
		{name: "one fails", ev: Evidence{Commands: []Command{cmd(1)}, Tests: cases("a=passed", "b=failed")}, want: Fail, reason: "1 of 2 tests failed"},
		{name: "error counts as failure", ev: Evidence{Commands: []Command{cmd(1)}, Tests: cases("a=passed", "pkg=error")}, want: Fail},
		{name: "a second command's text failures count", ev: Evidence{Commands: []Command{cmd(0), {Command: "pytest -q", ExitCode: 1, Parsed: true, Passed: 1, Failed: 1}}, Tests: cases("a=passed", "b=passed"), Failing: []string{"t.py::bad"}},
			want: Fail, reason: "1 of 4 tests failed"},
		{name: "report missing after exit 0", ev: Evidence{Commands: []Command{{Command: "pytest", Parsed: true, Passed: 3, ReportMissing: "junit.xml unparseable"}}}, want: NotEvaluated, reason: "report is missing"},
		{name: "a check command beside the tests", ev: Evidence{Commands: []Command{cmd(0), {Command: "go vet ./...", ExitCode: 0}}, Tests: cases("a=passed")}, want: Pass},
		{name: "a failing check command beside the tests", ev: Evidence{Commands: []Command{cmd(0), {Command: "go vet ./...", ExitCode: 1}}, Tests: cases("a=passed")}, want: Fail, reason: "go vet"},
		{name: "exit 0 with zero tests", ev: Evidence{Commands: []Command{cmd(0)}}, want: NotEvaluated, reason: "zero tests executed"},
		{name: "only skipped tests", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=skipped")}, want: NotEvaluated},
		{name: "all pass but exit 1", ev: Evidence{Commands: []Command{cmdF(1, 0)}, Tests: cases("a=passed")}, want: Fail, reason: "exited 1 although none of its tests failed"},
		{name: "no command", ev: Evidence{NoCommand: "no test command found: looked for go.mod"}, want: NotEvaluated, reason: "looked for go.mod"},
		{name: "runner missing", ev: Evidence{Commands: []Command{{Command: "pytest", ExitCode: 127, NotFound: true}}}, want: NotEvaluated, reason: "missing"},
		{name: "unparseable output", ev: Evidence{Commands: []Command{{Command: "./t.sh", ExitCode: 0, Parsed: false, Lines: 12}}}, want: NotEvaluated,
			reason: "`./t.sh`: the output has no summary ultra can read: 12 lines, exit status 0"},
		{name: "timeout", ev: Evidence{Commands: []Command{{Command: "go test", ExitCode: -1, TimedOut: true, Duration: time.Minute}}, Tests: cases("a=passed")}, want: Fail, reason: "timed out after 1m0s"},
		{name: "two commands one fails", ev: Evidence{Commands: []Command{cmd(0), {Command: "make lint", ExitCode: 2}}, Tests: cases("a=passed")}, want: Fail, reason: "make lint"},
		{name: "tests deleted", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed")}, baseline: base("a=passed", "b=passed", "c=passed"), want: Fail, reason: "fewer tests than at the start"},
		{name: "deleted failing test", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "c=passed", "d=passed")}, baseline: base("a=passed", "b=failed", "c=passed"), want: Fail, reason: "previously failing tests are missing: b"},
		{name: "failing test from an earlier gate missing", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed")},
			previous: []Decision{{N: 1, Status: Fail, Failing: []Failure{{Name: "new_test"}}}}, want: Fail, reason: "new_test"},
		{name: "a test the run added, failed and removed is not missing", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "b=passed")},
			baseline: base("a=passed", "b=failed"), previous: []Decision{{N: 1, Status: Fail, Failing: []Failure{{Name: "run_added"}, {Name: "b"}}}}, want: Pass},
		{name: "an original test that failed at an earlier gate is missing", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "d=passed")},
			baseline: base("a=passed", "b=passed"), previous: []Decision{{N: 1, Status: Fail, Failing: []Failure{{Name: "b"}}}}, want: Fail, reason: "previously failing tests are missing: b"},
		{name: "a package that failed as a whole runs its tests now", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("ex.com/calc.TestAdd=passed")},
			previous: []Decision{{N: 1, Status: Fail, Failing: []Failure{{Name: "ex.com/calc"}}}}, want: Pass},
		{name: "a name that only starts like a failed one is no child", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("ex.com/calcx.TestAdd=passed")},
			previous: []Decision{{N: 1, Status: Fail, Failing: []Failure{{Name: "ex.com/calc"}}}}, want: Fail, reason: "missing: ex.com/calc"},
		{name: "focused decisions do not count as history", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed")},
			previous: []Decision{{N: 1, Status: Fail, Focused: true, Failing: []Failure{{Name: "x"}}}}, want: Pass},
		{name: "more skipped than baseline", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "b=skipped")}, baseline: base("a=passed", "b=passed"), want: Concerns, reason: "1 tests skipped, 0 at the start"},
		{name: "flaky", ev: Evidence{Commands: []Command{func() Command { c := cmd(1); c.RerunPassed = true; return c }()}, Tests: cases("a=passed", "b=failed"), Flaky: []string{"b"}}, want: Concerns, reason: "flaky"},
		{name: "a test failing at the start is not flaky", ev: Evidence{Commands: []Command{func() Command { c := cmd(1); c.RerunPassed = true; return c }()}, Tests: cases("a=passed", "b=failed"), Flaky: []string{"b"}},
			baseline: base("a=passed", "b=failed"), want: Fail, reason: "still count as failing: b"},
		{name: "a test failing at an earlier gate is not flaky", ev: Evidence{Commands: []Command{func() Command { c := cmd(1); c.RerunPassed = true; return c }()}, Tests: cases("a=passed", "b=failed"), Flaky: []string{"b"}},
			previous: []Decision{{N: 1, Status: Fail, Failing: []Failure{{Name: "b"}}}}, want: Fail, reason: "still count as failing: b"},
		{name: "flaky but the re-run exited non-zero", ev: Evidence{Commands: []Command{cmd(1)}, Tests: cases("a=passed", "b=failed"), Flaky: []string{"b"}}, want: Fail, reason: "re-run"},
		{name: "failing test now skipped", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "b=skipped")}, baseline: base("a=passed", "b=failed"), want: Fail, reason: "now skipped: b"},
		{name: "flaky plus real failure", ev: Evidence{Commands: []Command{cmd(1)}, Tests: cases("a=failed", "b=failed"), Flaky: []string{"b"}}, want: Fail, reason: "1 of 2 tests failed"},
		{name: "focused pass is not a pass", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed"), Focused: true}, want: NotEvaluated, reason: "full suite"},
		{name: "focused failure fails", ev: Evidence{Commands: []Command{cmd(1)}, Tests: cases("a=failed"), Focused: true}, want: Fail},
		{name: "baseline failing now passing", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "b=passed")}, baseline: base("a=passed", "b=failed"), want: Pass},
		{name: "test command changed", ev: Evidence{Commands: []Command{{Command: "make test", Source: "Makefile target test", Parsed: true}}, Tests: cases("a=passed")},
			baseline: base("a=passed"), want: NotEvaluated, reason: "test command changed during the run"},
		{name: "counts without per-test results", ev: Evidence{Commands: []Command{{Command: "make test", Parsed: true, Passed: 3}}}, want: Pass},
		{name: "a runner that ran nothing, no baseline", ev: Evidence{Commands: []Command{{Command: "pytest -q", Runner: "pytest", ExitCode: 4, ReportMissing: "report missing"}}},
			want: NotEvaluated, reason: "exited 4 without running any test"},
		{name: "a runner that ran nothing, nothing ran at the start either", ev: Evidence{Commands: []Command{{Command: "pytest -q", Runner: "pytest", ExitCode: 4}}},
			baseline: &Baseline{Reason: "zero tests executed"}, want: NotEvaluated, reason: "exited 4 without running any test"},
		{name: "a runner that ran nothing, tests ran at the start", ev: Evidence{Commands: []Command{{Command: "pytest -q", Runner: "pytest", ExitCode: 4}}},
			baseline: base("a=passed", "b=passed"), want: Fail, reason: "2 ran at the start of the run"},
		{name: "a script that ran nothing readable fails", ev: Evidence{Commands: []Command{{Command: "make test", Runner: "make", ExitCode: 2, Lines: 40}}},
			want: Fail, reason: "`make test`: the output has no summary ultra can read: 40 lines, exit status 2"},
		{name: "a build that failed says its first error", ev: Evidence{Commands: []Command{{Command: "make test", Runner: "make", ExitCode: 2, Lines: 9,
			Cause: "t.c:3:10: error: 'x' undeclared"}}},
			want: Fail, reason: "9 lines, exit status 2; its first error: t.c:3:10: error: 'x' undeclared"},
		{name: "a summary that says none failed, and a build error", ev: Evidence{Commands: []Command{{Command: "make test", Runner: "make", ExitCode: 2, Parsed: true, Passed: 16,
			Cause: "t.c:3:10: error: 'x' undeclared"}}},
			want: Fail, reason: "exited 2 although none of its tests failed; its first error: t.c:3:10: error: 'x' undeclared"},
		{name: "failing names without per-test results", ev: Evidence{Commands: []Command{{Command: "make test", ExitCode: 2, Parsed: true, Passed: 3, Failed: 1}}, Failing: []string{"x"}}, want: Fail},
	}
	for _, c := range tt {
		t.Run(c.name, func(t *testing.T) {
			d := Judge(Input{Run: "r", Tree: "t1", N: 2, Evidence: c.ev, Baseline: c.baseline, Previous: c.previous})
			if d.Status != c.want {
				t.Fatalf("status %s, want %s (reasons %v)", d.Status, c.want, d.Reasons)
			}
			if c.reason != "" && !strings.Contains(strings.Join(d.Reasons, "; "), c.reason) {
				t.Fatalf("reasons %v lack %q", d.Reasons, c.reason)
			}
			if d.Schema != SchemaVersion || d.Run != "r" || d.Tree != "t1" || d.N != 2 || len(d.Reasons) == 0 {
				t.Fatalf("decision header %+v", d)
			}
		})
	}
}

// TestFakes: findings of constructs that can fake results (Evidence.Fakes)
// that the baseline did not have make the decision FAIL, whatever the tests
// say; those in the baseline change nothing.
func TestFakes(t *testing.T) {
	const noRun = "a/a_test.go: testmain-no-run: TestMain never calls m.Run()"
	const text = `a/a_test.go: runner-text: in TestMain: string "--- PASS: TestX" holds "--- PASS"`
	pass := func(fakes ...string) Evidence {
		return Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "b=passed"), Fakes: fakes}
	}
	withFakes := func(b *Baseline, fakes ...string) *Baseline { b.Fakes = fakes; return b }
	tt := []struct {
		name     string
		ev       Evidence
		baseline *Baseline
		want     Status
		reasons  []string // substrings of the joined reasons
		absent   []string // must not be in the reasons
	}{
		{name: "new finding fails with all tests passing", ev: pass(noRun), baseline: base("a=passed", "b=passed"), want: Fail,
			reasons: []string{"the tree has code the tests can run that can fake their results (new since the run started): " + noRun + "; remove it, or a person may waive the gate (ultra gate waive r --reason …)"}},
		{name: "no baseline: every finding is new", ev: pass(noRun, text), want: Fail, reasons: []string{noRun + ", " + text}},
		{name: "finding already in the baseline", ev: pass(noRun), baseline: withFakes(base("a=passed", "b=passed"), noRun), want: Pass,
			reasons: []string{"2 tests passed"}, absent: []string{"fake"}},
		{name: "only the new finding is listed", ev: pass(text, noRun), baseline: withFakes(base("a=passed", "b=passed"), noRun), want: Fail,
			reasons: []string{"fake their results (new since the run started): " + text + "; remove"}, absent: []string{noRun}},
		{name: "a second identical construct is new", ev: pass(noRun, noRun), baseline: withFakes(base("a=passed", "b=passed"), noRun), want: Fail,
			reasons: []string{"fake their results (new since the run started): " + noRun + "; remove"}},
		{name: "a finding removed since the baseline", ev: pass(), baseline: withFakes(base("a=passed", "b=passed"), noRun), want: Pass},
		{name: "no findings: unchanged", ev: pass(), baseline: base("a=passed", "b=passed"), want: Pass, reasons: []string{"2 tests passed"}},
		{name: "no findings, a failing test: unchanged", ev: Evidence{Commands: []Command{cmd(1)}, Tests: cases("a=passed", "b=failed")}, want: Fail,
			reasons: []string{"1 of 2 tests failed"}, absent: []string{"fake"}},
		{name: "a finding with zero tests fails rather than not evaluated", ev: Evidence{Commands: []Command{cmd(0)}, Fakes: []string{noRun}}, want: Fail,
			reasons: []string{"fake their results", "zero tests executed"}},
		{name: "a finding in a focused run", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed"), Focused: true, Fakes: []string{noRun}}, want: Fail},
		{name: "a finding with concerns", ev: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed", "b=skipped"), Fakes: []string{noRun}},
			baseline: base("a=passed", "b=passed"), want: Fail, reasons: []string{"fake their results"}},
	}
	for _, c := range tt {
		t.Run(c.name, func(t *testing.T) {
			d := Judge(Input{Run: "r", Tree: "t1", N: 2, Evidence: c.ev, Baseline: c.baseline})
			if d.Status != c.want {
				t.Fatalf("status %s, want %s (reasons %v)", d.Status, c.want, d.Reasons)
			}
			all := strings.Join(d.Reasons, "; ")
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
		})
	}
}

func TestBaselineFakes(t *testing.T) {
	ev := Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed"), Fakes: []string{"x_test.go: k: d"}}
	b := NewBaseline("t0", ev)
	if !b.Evaluated || b.Reason != "" || len(b.Fakes) != 1 || b.Fakes[0] != "x_test.go: k: d" {
		t.Fatalf("%+v", b)
	}
	ev.Fakes[0] = "changed"
	if b.Fakes[0] != "x_test.go: k: d" {
		t.Fatal("the baseline shares the evidence's slice")
	}
	// A baseline that could not be evaluated still records the findings.
	nb := NewBaseline("t0", Evidence{Commands: []Command{cmd(0)}, Fakes: []string{"y"}})
	if nb.Evaluated || !strings.Contains(nb.Reason, "zero tests executed") || len(nb.Fakes) != 1 {
		t.Fatalf("%+v", nb)
	}
	if d := Judge(Input{Evidence: Evidence{Commands: []Command{cmd(0)}, Tests: cases("a=passed"), Fakes: []string{"y"}}, Baseline: &nb}); d.Status != Pass {
		t.Fatalf("%s %v", d.Status, d.Reasons)
	}
}

func TestOutcomeMapping(t *testing.T) {
	want := map[Status]phase.Outcome{Pass: phase.Pass, Waived: phase.Pass, Concerns: phase.Concerns, Fail: phase.Fail, NotEvaluated: phase.NotEvaluated, Status("bogus"): phase.NotEvaluated}
	for s, o := range want {
		if Outcome(s) != o {
			t.Errorf("Outcome(%s) = %s, want %s", s, Outcome(s), o)
		}
	}
}

func TestCacheAndValidity(t *testing.T) {
	prev := []Decision{
		{N: 1, Tree: "aaa", Status: Fail},
		{N: 2, Tree: "bbb", Status: Pass, Reasons: []string{"2 tests passed"}},
		{N: 3, Tree: "aaa", Status: NotEvaluated},
	}
	if CachedPass(prev, "aaa") != nil || CachedPass(prev, "") != nil {
		t.Fatal("only a PASS of the same tree is a cache hit")
	}
	hit := CachedPass(prev, "bbb")
	if hit == nil || hit.N != 2 {
		t.Fatal("cache miss")
	}
	d := FromCache(*hit, 4, time.Unix(1, 0))
	if d.N != 4 || d.CachedFrom != 2 || d.Status != Pass || !strings.Contains(d.Reasons[0], "cache hit: the same tree (bbb) passed in decision 2") {
		t.Fatalf("%+v", d)
	}
	// A waiver reused says it was one, not that the tests passed.
	if w := FromCache(Decision{N: 5, Tree: "ddd", Status: Waived}, 6, time.Unix(1, 0)); !strings.Contains(w.Reasons[0], "was waived by a person in decision 5") {
		t.Fatalf("%v", w.Reasons)
	}
	if !d.Valid("bbb") || d.Valid("ccc") || (Decision{Status: Fail, Tree: "x"}).Valid("x") {
		t.Fatal("validity is tied to the tree and the status")
	}
}

func TestWaive(t *testing.T) {
	latest := &Decision{N: 3, Status: Fail, Failing: []Failure{{Name: "a"}}}
	w := Waive(latest, "r", "tree", 4, Waiver{By: "ann", Reason: "infra flake", Time: time.Unix(5, 0)})
	if w.Status != Waived || w.N != 4 || w.Waiver.By != "ann" || len(w.Failing) != 1 || !strings.Contains(w.Reasons[0], "decision 3 was FAIL") {
		t.Fatalf("%+v", w)
	}
	if Outcome(w.Status) != phase.Pass {
		t.Fatal("a waiver advances")
	}
}

func TestBaseline(t *testing.T) {
	b := NewBaseline("t", Evidence{Commands: []Command{cmd(1)}, Tests: cases("a=passed", "b=failed", "c=skipped")})
	if !b.Evaluated || b.Executed != 2 || b.Failed != 1 || b.Skipped != 1 || b.Tests["b"] != report.Failed {
		t.Fatalf("%+v", b)
	}
	nb := NewBaseline("t", Evidence{NoCommand: "none"})
	if nb.Evaluated || nb.Reason == "" {
		t.Fatalf("%+v", nb)
	}
}

func TestGreen(t *testing.T) {
	ds := []Decision{
		{N: 1, Tree: "aaa", Status: Pass},
		{N: 2, Tree: "bbb", Status: Concerns},
		{N: 3, Tree: "aaa", Status: Fail},
		{N: 4, Tree: "ccc", Status: Waived},
		{N: 5, Status: Pass}, // no tree: proves nothing about any tree
	}
	for _, c := range []struct {
		tree string
		want int // decision N, 0 for none
	}{
		{"aaa", 1}, {"bbb", 2}, {"ccc", 4}, {"ddd", 0}, {"", 0},
	} {
		got := Green(ds, c.tree)
		if (got == nil) != (c.want == 0) || got != nil && got.N != c.want {
			t.Errorf("Green(%q) = %+v, want decision %d", c.tree, got, c.want)
		}
	}
	if CachedPass(ds, "bbb") != nil {
		t.Error("CONCERNS is green but not a cache hit: the tests run again")
	}
}

func TestApplyProtected(t *testing.T) {
	pass := Decision{Status: Pass, Tree: "t", Reasons: []string{"2 tests passed"}}
	fail := Decision{Status: Fail, Reasons: []string{"1 of 2 tests failed"}, Failing: []Failure{{Name: "TestAdd"}}}
	for _, tc := range []struct {
		name      string
		d         Decision
		p         Protected
		status    Status
		waiver    bool
		reason    string
		outcome   phase.Outcome
		committed bool // Valid for its tree
	}{
		{"no changed tests: unchanged", pass, Protected{}, Pass, false, "2 tests passed", phase.Pass, true},
		{"original tests fail against the new code", pass, Protected{Changed: []string{"changed a_test.go"}, Decision: fail}, Fail, false, "original tests do not pass", phase.Fail, false},
		{"original tests not evaluated", pass, Protected{Changed: []string{"deleted a_test.go"}, Decision: Decision{Status: NotEvaluated}}, Fail, false, "original tests do not pass", phase.Fail, false},
		{"original tests pass: a person decides", pass, Protected{Changed: []string{"changed a_test.go"}, Decision: pass}, Concerns, true, "needs a person", phase.NeedsPerson, false},
		{"allowed by a person", pass, Protected{Changed: []string{"changed a_test.go"}, Decision: pass, Allowed: true}, Pass, false, "as a person allowed", phase.Pass, true},
		{"tests added beside existing ones: the original tests still pass", pass, Protected{Added: []string{"a/zz_test.go"}, Decision: pass}, Pass, false, "2 tests passed", phase.Pass, true},
		{"tests added beside existing ones hid a failure", pass, Protected{Added: []string{"a/zz_test.go"}, Decision: fail}, Fail, false, "without the files the run added beside them (a/zz_test.go)", phase.Fail, false},
		{"a failing decision stays failing", fail, Protected{Changed: []string{"changed a_test.go"}, Decision: pass}, Fail, false, "also changed existing tests", phase.Fail, false},
		{"weakened test support hid a failure", pass, Protected{Support: []string{"changed internal/testutil/eq.go (imported only by tests)"}, Decision: fail}, Fail, false,
			"the run's changes to tests and what they load: changed internal/testutil/eq.go", phase.Fail, false},
		{"test support changed, the original tests still pass: a person decides", pass, Protected{Support: []string{"changed lib.sh (sourced by test.sh)"}, Decision: pass}, Concerns, true,
			"existing tests or what they load were changed", phase.NeedsPerson, false},
		{"test support changed as a person allowed", pass, Protected{Support: []string{"changed lib.sh"}, Decision: pass, Allowed: true}, Pass, false, "as a person allowed", phase.Pass, true},
		{"undecided files: the original tests pass with them as they were", pass, Protected{Undecided: []string{"changed pkg/compare/eq.go"}, Decision: pass, Restored: pass}, Pass, false,
			"the original tests pass with them as they were too", phase.Pass, true},
		{"undecided files: the original tests pass only with the run's version", pass, Protected{Undecided: []string{"changed pkg/compare/eq.go"}, Decision: pass, Restored: fail}, Concerns, true,
			"pass only with the run's version of files they load that ultra cannot tell from code under test (changed pkg/compare/eq.go", phase.NeedsPerson, false},
		{"undecided files need a person even where test changes are allowed", pass, Protected{Undecided: []string{"changed pkg/compare/eq.go"}, Decision: pass, Restored: fail, Allowed: true}, Concerns, true,
			"a person decides", phase.NeedsPerson, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ApplyProtected(tc.d, tc.p)
			if d.Status != tc.status || d.NeedsWaiver != tc.waiver || !strings.Contains(strings.Join(d.Reasons, "; "), tc.reason) {
				t.Fatalf("%s waiver=%v %v", d.Status, d.NeedsWaiver, d.Reasons)
			}
			if d.Outcome() != tc.outcome {
				t.Fatalf("outcome %s, want %s", d.Outcome(), tc.outcome)
			}
			if d.Valid("t") != tc.committed {
				t.Fatalf("Valid = %v", d.Valid("t"))
			}
		})
	}
	// A person's waiver of a decision that needed one lets its tree through.
	w := Waive(nil, "r", "t", 2, Waiver{By: "ann", Reason: "ok"})
	if !w.Valid("t") || w.Outcome() != phase.Pass {
		t.Fatalf("waived: %v %s", w.Valid("t"), w.Outcome())
	}
}

// A measurement the machine cut short (a full disk, memory, a timeout)
// proves nothing: a baseline made of one records no failures or
// collection errors that a later verification could be excused by, and a
// verification that ran out of resources is never a pass.
func TestResourceFailures(t *testing.T) {
	enospc := report.Case{Name: "example.com/calc/calc", Status: report.Error, Kind: report.KindCollection,
		Message: "/usr/local/go/pkg/tool/linux_amd64/link: mapping output file failed: no space left on device"}
	ok := report.Case{Name: "example.com/calc/strs.TestUpper", Status: report.Passed}
	b := NewBaseline("t0", Evidence{Commands: []Command{cmdF(1, 0)}, Tests: []report.Case{enospc, ok}})
	if b.Evaluated || len(b.Collection) != 0 || len(b.Tests) != 0 || !strings.Contains(b.Reason, "no space left on device") {
		t.Fatalf("baseline of a run out of disk: %+v", b)
	}
	timedOut := Command{Command: "go test -json ./...", ExitCode: -1, TimedOut: true, HasTests: true}
	b = NewBaseline("t0", Evidence{Commands: []Command{timedOut}, Tests: []report.Case{ok}})
	if b.Evaluated || len(b.Tests) != 0 || !strings.Contains(b.Reason, "timed out") {
		t.Fatalf("baseline of a timed-out run: %+v", b)
	}
	// Later, the tree's own breakage of that package fails.
	broken := report.Case{Name: "example.com/calc/calc", Status: report.Error, Kind: report.KindCollection, Message: "calc.go:5:1: syntax error: unexpected }"}
	d := Judge(Input{Evidence: Evidence{Commands: []Command{cmdF(1, 0)}, Tests: []report.Case{broken, ok}}, Baseline: &b})
	if d.Status != Fail {
		t.Fatalf("broken package after an unfinished baseline: %s %v", d.Status, d.Reasons)
	}
	// A verification that ran out of resources is not a pass, whatever else.
	d = Judge(Input{Evidence: Evidence{Commands: []Command{cmd(0)}, Tests: []report.Case{ok, enospc}}})
	if d.Status.Advances() || !strings.Contains(strings.Join(d.Reasons, "; "), "ran out of resources") {
		t.Fatalf("out of disk: %s %v", d.Status, d.Reasons)
	}
	// A failing test's own message is the test's to choose: it fails, and
	// says nothing about the machine.
	d = Judge(Input{Evidence: Evidence{Commands: []Command{cmd(1)}, Tests: []report.Case{ok, {Name: "t.TestTmp", Status: report.Failed, Message: "got: out of memory"}}}})
	if d.Status != Fail || strings.Contains(strings.Join(d.Reasons, "; "), "ran out of resources") {
		t.Fatalf("a test's message read as the machine's: %s %v", d.Status, d.Reasons)
	}
	if b := NewBaseline("t0", Evidence{Commands: []Command{cmd(1)}, Tests: []report.Case{ok, {Name: "t.TestTmp", Status: report.Failed, Message: "signal: killed"}}}); !b.Evaluated || b.Unfinished {
		t.Fatalf("a baseline discarded on a test's message: %+v", b)
	}
	// While the baseline is unfinished, nothing the run does passes: what
	// it must be compared with (how many tests, which failed) is unknown.
	b = NewBaseline("t0", Evidence{Commands: []Command{cmdF(1, 0)}, Tests: []report.Case{enospc, ok}})
	d = Judge(Input{Evidence: Evidence{Commands: []Command{cmd(0)}, Tests: []report.Case{ok}}, Baseline: &b})
	if d.Status != NotEvaluated || !strings.Contains(strings.Join(d.Reasons, "; "), "baseline was cut short") {
		t.Fatalf("a pass against an unfinished baseline: %s %v", d.Status, d.Reasons)
	}
}

// Only what the baseline recorded as not collected is excused: a package
// that errored at the start (it panicked in init) and that the run then
// breaks fails; and one command's failures never explain another's exit.
func TestErrorsAreNotExcuses(t *testing.T) {
	panicked := report.Case{Name: "ex/p", Status: report.Error, Message: "panic: boom [recovered]"}
	ok := report.Case{Name: "ex/q.TestQ", Status: report.Passed}
	b := NewBaseline("t0", Evidence{Commands: []Command{cmd(1)}, Tests: []report.Case{panicked, ok}})
	broken := report.Case{Name: "ex/p", Status: report.Error, Kind: report.KindCollection, Message: "p.go:3:1: syntax error"}
	d := Judge(Input{Evidence: Evidence{Commands: []Command{cmdF(1, 0)}, Tests: []report.Case{broken, ok}}, Baseline: &b})
	if d.Status != Fail {
		t.Fatalf("a package that errored at the start, broken by the run: %s %v", d.Status, d.Reasons)
	}

	goCmd := Command{Command: "go test -json ./...", ExitCode: 1, Parsed: true, HasTests: true, Passed: 1}
	py := Command{Command: "python3 -m pytest -q", ExitCode: 2, Parsed: true, HasTests: true, Errors: 1}
	coll := report.Case{Name: "tests/test_b.py", Status: report.Error, Kind: report.KindCollection, Message: "ImportError: x"}
	base := NewBaseline("t0", Evidence{Commands: []Command{cmd(0), py}, Tests: []report.Case{ok, coll}})
	d = Judge(Input{Evidence: Evidence{Commands: []Command{goCmd, py}, Tests: []report.Case{ok, coll}}, Baseline: &base})
	if d.Status != Fail || !strings.Contains(strings.Join(d.Reasons, "; "), "exited 1 although none of its tests failed") {
		t.Fatalf("go test's exit 1 excused by pytest's old import error: %s %v", d.Status, d.Reasons)
	}
}

// A decision made for records alone, of a tree that was itself one,
// names the code decision once.
func TestWithArtifactsNamesTheCodeDecisionOnce(t *testing.T) {
	code := Decision{N: 1, Status: Pass, Tree: "t1", Reasons: []string{"2 tests passed"}}
	at := time.Unix(0, 0)
	d2 := WithArtifacts(code, 2, "t2", at, []string{".ultra/goals.json"})
	d3 := WithArtifacts(d2, 3, "t3", at, []string{".ultra/ledger.jsonl"})
	for _, tc := range []struct {
		d    Decision
		from int
		want []string
	}{
		{d2, 1, []string{"the code decision 1 judged (it passed), with only ultra's own records written since (.ultra/goals.json)", "2 tests passed"}},
		{d3, 1, []string{"the code decision 1 judged (it passed), with only ultra's own records written since (.ultra/ledger.jsonl)", "2 tests passed"}},
	} {
		if tc.d.CachedFrom != tc.from || !slices.Equal(tc.d.Reasons, tc.want) {
			t.Errorf("decision %d: from %d, reasons %q; want from %d, %q", tc.d.N, tc.d.CachedFrom, tc.d.Reasons, tc.from, tc.want)
		}
	}
}
