// Package gate judges verifications. It turns what running the tests
// produced (Evidence), the run's baseline and its earlier decisions into a
// Decision with one of five statuses, and maps that status onto the phase
// machine. It is pure: no files, no processes, no clock. The decision files
// themselves are written by package gate/gatefile.
package gate

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/verify/report"
)

// SchemaVersion is the version of the decision file format.
const SchemaVersion = 1

// Status is a gate verdict.
type Status string

const (
	// Pass: every command exited 0, at least one test ran, none failed,
	// nothing regressed against the baseline.
	Pass Status = "PASS"
	// Fail: a failure or error, a non-zero exit, a timeout, fewer tests
	// than the baseline, a test that failed earlier now missing, or a
	// construct that can fake test results that the baseline did not have.
	Fail Status = "FAIL"
	// Concerns: passed, but with more skipped tests than the baseline or
	// a test that passed only on re-run (flaky).
	Concerns Status = "CONCERNS"
	// NotEvaluated: nothing was proven: no command, a missing runner,
	// zero tests, output that cannot be parsed. Never a pass.
	NotEvaluated Status = "NOT_EVALUATED"
	// Waived: a person accepted the work without a pass.
	Waived Status = "WAIVED"
)

// Advances reports whether s lets work advance.
func (s Status) Advances() bool { return s == Pass || s == Waived || s == Concerns }

// Outcome maps a status onto the phase machine: PASS and WAIVED advance,
// CONCERNS advances with the concerns deferred, FAIL re-loops, and
// NOT_EVALUATED escalates.
func Outcome(s Status) phase.Outcome {
	return Decision{Status: s}.Outcome()
}

// Outcome is what the decision means for the run: a decision that needs a
// person's waiver stops the run for one, whatever its status.
func (d Decision) Outcome() phase.Outcome {
	if d.NeedsWaiver && d.Waiver == nil && d.Status != Fail {
		return phase.NeedsPerson
	}
	switch d.Status {
	case Pass, Waived:
		return phase.Pass
	case Concerns:
		return phase.Concerns
	case Fail:
		return phase.Fail
	}
	return phase.NotEvaluated
}

// Command is what one test command did.
type Command struct {
	Command  string        `json:"command"`
	Source   string        `json:"source,omitempty"` // why it was chosen
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out,omitempty"`
	NotFound bool          `json:"not_found,omitempty"` // the runner is missing
	Parsed   bool          `json:"parsed"`              // its output or report could be read
	Format   string        `json:"format,omitempty"`
	LogPath  string        `json:"log_path,omitempty"`
	Duration time.Duration `json:"duration"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"` // failed tests; errors are not included
	Skipped  int           `json:"skipped"`
	// Errors are the tests that could not run, and the test files,
	// modules or packages that could not be collected (counted apart from
	// Failed, as in Counts). Omitted when 0, as in decisions written
	// before it existed.
	Errors int `json:"errors,omitempty"`
	// HasTests: per-test results of this command are in Evidence.Tests;
	// otherwise only its counts are known.
	HasTests bool `json:"has_tests,omitempty"`
	// Runner is the test runner ultra recognised (go, pytest, jest, …;
	// "command", "script" or "make" when it runs something it does not
	// know).
	Runner string `json:"runner,omitempty"`
	// ReportMissing: the report the command should have written could
	// not be read (why).
	ReportMissing string `json:"report_missing,omitempty"`
	// RerunPassed: the re-run of its failed tests exited 0.
	RerunPassed bool `json:"rerun_passed,omitempty"`
	// Lines is how many lines the command printed.
	Lines int `json:"lines,omitempty"`
	// Cause is the first compiler error of its output that names a file
	// and a line ("t.c:3:10: error: 'x' undeclared"): why a build failed.
	Cause string `json:"cause,omitempty"`
}

// unreadable says that nothing in cmd's output could be read: neither a
// test's result nor a summary.
func (cmd Command) unreadable() string {
	status := "killed by a signal"
	if cmd.ExitCode >= 0 {
		status = fmt.Sprintf("exit status %d", cmd.ExitCode)
	}
	return fmt.Sprintf("`%s`: the output has no summary ultra can read: %d lines, %s%s", cmd.Command, cmd.Lines, status, cmd.cause())
}

// cause is "; its first error: …" when the output has a compiler error.
func (cmd Command) cause() string {
	if cmd.Cause == "" {
		return ""
	}
	return "; its first error: " + cmd.Cause
}

// Evidence is what one verification produced.
type Evidence struct {
	Commands []Command     `json:"commands"`
	Tests    []report.Case `json:"-"`                 // every test's first outcome
	Flaky    []string      `json:"flaky,omitempty"`   // failed, then passed on re-run
	Focused  bool          `json:"focused,omitempty"` // only previously failing tests ran
	// NoCommand explains why there was nothing to run, when there was not.
	NoCommand string `json:"no_command,omitempty"`
	// Failing names failing tests when per-test results are unknown.
	Failing []string `json:"failing,omitempty"`
	// Fakes are the keys of the constructs in the verified tree that can
	// fake test results (verify.Finding.Key: file, kind and what, no
	// line). Those not in the baseline's Fakes make the decision FAIL.
	Fakes []string `json:"fakes,omitempty"`
}

// Baseline is the state of the tests when the run started, before any
// change.
type Baseline struct {
	Tree      string `json:"tree"`
	Evaluated bool   `json:"evaluated"` // the suite ran and could be read
	Reason    string `json:"reason,omitempty"`
	Executed  int    `json:"executed"`
	Skipped   int    `json:"skipped"`
	Failed    int    `json:"failed"` // failed tests (baselines before Errors existed: errors included)
	// Errors: tests that could not run and modules that could not be
	// collected, apart from Failed.
	Errors int `json:"errors,omitempty"`
	// Unfinished: the machine cut the measurement short (a timeout, a
	// full disk, memory): nothing of it is compared with, and no
	// verification of the run passes.
	Unfinished bool                     `json:"unfinished,omitempty"`
	Tests      map[string]report.Status `json:"tests,omitempty"`
	// Collection names the test files, modules or packages that could not
	// be collected at the start (report.KindCollection): their failing to
	// collect later is not the run's doing.
	Collection []string `json:"collection,omitempty"`
	// Sources say how the test commands were chosen at the start; the
	// choice may not change during the run.
	Sources []string `json:"sources,omitempty"`
	// Fakes are the keys of the constructs that could fake test results
	// in the tree at the start; they were there before the run and do
	// not block it.
	Fakes []string `json:"fakes,omitempty"`
}

// Counts sums a verification, each test once by its status: Failed never
// includes Errors (tests that could not run, and test files, modules or
// packages that could not be collected); Executed is
// Passed+Failed+Errors.
type Counts struct {
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Errors   int `json:"errors"`
	Skipped  int `json:"skipped"`
	Executed int `json:"executed"`
}

// Failure is one failing test in a decision: a failed or errored test,
// or a test file, module or package that could not be collected (Kind
// report.KindCollection), or a parent test that failed through its
// subtests (Kind report.KindParent, Message "2 of 5 subtests failed: a,
// b"). There is one per test counted as failed or errored in Counts (up
// to the cap).
type Failure struct {
	Name    string `json:"name"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message,omitempty"`
	Kind    string `json:"kind,omitempty"`
	// Suite is the file, class, package or binary the runner put the test
	// in (what runs it again alone: a JavaScript test file, a cargo test
	// binary).
	Suite string `json:"suite,omitempty"`
}

// Waiver is a person's acceptance of work that did not pass.
type Waiver struct {
	By     string    `json:"by"`
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
}

// Decision is one gate verdict, as written to gate-N.json.
type Decision struct {
	Schema   int       `json:"schema_version"`
	N        int       `json:"n"`
	Time     time.Time `json:"time"`
	Run      string    `json:"run"`
	Goal     string    `json:"goal,omitempty"`
	Tree     string    `json:"tree"` // git tree hash of the verified working tree
	Commands []Command `json:"commands"`
	Counts   Counts    `json:"counts"`
	Failing  []Failure `json:"failing,omitempty"`
	Flaky    []string  `json:"flaky,omitempty"`
	Focused  bool      `json:"focused,omitempty"` // only previously failing tests ran
	Status   Status    `json:"gate_status"`
	Reasons  []string  `json:"reasons"`
	// CachedFrom is the decision whose result this one reuses, for a
	// tree that already had a PASS.
	CachedFrom int `json:"cached_from,omitempty"`
	// Reused says where the evidence comes from when the tests did not
	// run: the same tree, commands and environment measured before, by
	// this run or another, kept in the repository's gate cache.
	Reused string  `json:"reused,omitempty"`
	Waiver *Waiver `json:"waiver,omitempty"`
	// ChangedTests are the project's existing test files (and test
	// configuration) the run changed, deleted or renamed; the original
	// tests were run against the new code as well (ProtectedRun).
	ChangedTests []string `json:"changed_tests,omitempty"`
	// TestSupport are the files the tests load and the project's code
	// does not (verify.ClassifySupport) that the run changed: restored
	// with the original tests, as tests are.
	TestSupport []string `json:"test_support,omitempty"`
	// Undecided are files the tests load that the run changed and that
	// ultra cannot tell from code under test: the original tests ran
	// again with them restored too.
	Undecided []string `json:"undecided,omitempty"`
	// NeedsWaiver: the decision cannot complete the run by itself; a
	// person must waive it (ultra gate waive).
	NeedsWaiver bool `json:"needs_waiver,omitempty"`
	// TestChangesAllowed: a person started the run allowing it to change
	// tests (--allow-test-changes).
	TestChangesAllowed bool `json:"test_changes_allowed,omitempty"`
	// Records are the paths of ultra's own records (goals.json, the
	// ledger) by which this decision's tree differs from the one decision
	// CachedFrom judged (WithArtifacts); nothing was run for it.
	Records []string `json:"records,omitempty"`
	// Sandbox says what contained the test run ("bubblewrap 0.8.0 …"),
	// or "none: why" when the tests ran with the person's full powers.
	Sandbox string `json:"sandbox,omitempty"`
}

// Input is everything Judge needs.
type Input struct {
	Run, Goal, Tree string
	N               int
	Time            time.Time
	Evidence        Evidence
	Baseline        *Baseline  // nil when the run has none
	Previous        []Decision // earlier decisions of the run, in order
}

// maxFailures bounds Decision.Failing.
const maxFailures = 200

// Judge applies the status rules to one verification.
func Judge(in Input) Decision {
	ev := in.Evidence
	d := Decision{Schema: SchemaVersion, N: in.N, Time: in.Time, Run: in.Run, Goal: in.Goal, Tree: in.Tree,
		Commands: ev.Commands, Flaky: slices.Clone(ev.Flaky), Focused: ev.Focused}
	d.Counts, d.Failing = tally(ev)
	d.Status, d.Reasons = rules(in, d.Counts, d.Failing)
	return d
}

func tally(ev Evidence) (Counts, []Failure) {
	var c Counts
	var fails []Failure
	for _, t := range ev.Tests {
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
		if (t.Status == report.Failed || t.Status == report.Error) && len(fails) < maxFailures {
			f := Failure{Name: t.Name, File: t.File, Line: t.Line, Message: failureMessage(t.Message), Kind: t.Kind, Suite: t.Suite}
			if t.Kind == report.KindCollection {
				f.Message = report.KeyLine(t.Message) // the error, not pytest's "collection failure"
			}
			fails = append(fails, f)
		}
	}
	// Commands without per-test results count by their totals.
	textFailed := 0
	for _, cmd := range ev.Commands {
		if cmd.HasTests {
			continue
		}
		c.Passed += cmd.Passed
		c.Failed += cmd.Failed
		c.Errors += cmd.Errors
		c.Skipped += cmd.Skipped
		textFailed += cmd.Failed + cmd.Errors
	}
	for _, n := range ev.Failing {
		if textFailed == 0 {
			break
		}
		if len(fails) < maxFailures {
			fails = append(fails, Failure{Name: n})
		}
		textFailed--
	}
	c.Executed = c.Passed + c.Failed + c.Errors
	return c, fails
}

// rules decides the status, with every reason that applies.
func rules(in Input, c Counts, fails []Failure) (Status, []string) {
	ev := in.Evidence
	var notEval, fail, concerns []string

	if len(ev.Commands) == 0 {
		why := ev.NoCommand
		if why == "" {
			why = "no test command found"
		}
		notEval = append(notEval, why)
	}
	// A test that failed when the run started, or at an earlier gate, and
	// now passes only on a re-run is not flaky: it is failing (a test can
	// arrange to pass the second time it runs).
	wasFailing := map[string]bool{}
	if b := in.Baseline; b != nil {
		for name, st := range b.Tests {
			if st == report.Failed || st == report.Error {
				wasFailing[name] = true
			}
		}
	}
	for _, d := range in.Previous {
		for _, f := range d.Failing {
			wasFailing[f.Name] = true
		}
	}
	flaky := map[string]bool{}
	var notFlaky []string
	for _, f := range ev.Flaky {
		if wasFailing[f] {
			notFlaky = append(notFlaky, f)
			continue
		}
		flaky[f] = true
	}
	// Test files, modules or packages that could not be collected are
	// judged apart (below); the rest are tests that failed or errored.
	// The counts say how many failed and errored; of those, the flaky
	// ones (named) passed on a re-run.
	coll := report.CollectionErrors(ev.Tests)
	errored := erroredNames(fails, ev.Tests)
	flakyFailed, flakyErrored := 0, 0
	for _, f := range fails {
		switch {
		case f.Kind == report.KindCollection || !flaky[f.Name]:
		case errored[f.Name]:
			flakyErrored++
		default:
			flakyFailed++
		}
	}
	realFailed := max(0, c.Failed-flakyFailed)
	realErrored := max(0, c.Errors-len(coll)-flakyErrored)
	realFails := realFailed + realErrored
	allFlaky := flakyFailed+flakyErrored > 0 && realFails == 0
	// The tests that ran (or tried to), collection errors apart.
	executed := c.Executed - len(coll)
	// The failures of the per-test results, which are one command's own
	// only when there is one command.
	ownBad := len(ev.Commands) == 1 && (len(fails) > 0 || c.Failed+c.Errors > 0)
	for _, cmd := range ev.Commands {
		switch {
		case cmd.NotFound:
			notEval = append(notEval, fmt.Sprintf("the runner of `%s` is missing", cmd.Command))
		case cmd.TimedOut:
			fail = append(fail, fmt.Sprintf("`%s` timed out after %s; its process group was killed", cmd.Command, cmd.Duration.Round(time.Second)))
		case cmd.ReportMissing != "" && cmd.ExitCode == 0:
			notEval = append(notEval, fmt.Sprintf("`%s` exited 0 but its report is missing or unreadable: %s", cmd.Command, cmd.ReportMissing))
		case cmd.ExitCode != 0 && c.Executed == 0 && cmd.Passed+cmd.Skipped == 0 && report.KnownRunner(cmd.Runner):
			// The runner ran nothing (it could not start, or stopped on
			// its configuration or arguments): the tree's fault only if
			// tests ran at the start of the run.
			if b := in.Baseline; b != nil && b.Evaluated && b.Executed > 0 && !ev.Focused {
				fail = append(fail, fmt.Sprintf("`%s` exited %d without running any test; %d ran at the start of the run, so the change stopped the tests from running", cmd.Command, cmd.ExitCode, b.Executed))
			} else {
				notEval = append(notEval, fmt.Sprintf("`%s` exited %d without running any test (the runner could not start, or stopped on its configuration or arguments: see its log)", cmd.Command, cmd.ExitCode))
			}
		case cmd.ExitCode != 0 && cmd.Failed+cmd.Errors == 0 && !(ownBad && cmd.HasTests):
			// Judged on its own: another command's failures never
			// explain this one's exit (the per-test results are its
			// own only when it is the one command).
			if !cmd.Parsed {
				fail = append(fail, cmd.unreadable())
			} else {
				fail = append(fail, fmt.Sprintf("`%s` exited %d although none of its tests failed%s", cmd.Command, cmd.ExitCode, cmd.cause()))
			}
		case cmd.ExitCode != 0 && allFlaky && !cmd.RerunPassed:
			fail = append(fail, fmt.Sprintf("`%s` exited %d, and the re-run of its failed tests did not pass", cmd.Command, cmd.ExitCode))
		}
	}
	if realFails > 0 {
		fail = append(fail, report.FailedText(realFailed, realErrored, executed))
	}
	var collConcerns []string // said with any status: they explain the errors counted
	newColl := collectionRules(in.Baseline, coll, executed, &fail, &notEval, &collConcerns)
	if len(notFlaky) > 0 {
		fail = append(fail, fmt.Sprintf("tests that were failing earlier in the run passed only on a re-run, so they still count as failing: %s", clipList(notFlaky, 10)))
	}
	if len(ev.Commands) > 0 && c.Executed == 0 && len(fail) == 0 {
		// Zero only when a summary said so: output that could not be
		// read is said to be that.
		var unread []string
		for _, cmd := range ev.Commands {
			if cmd.Parsed {
				unread = nil
				break
			}
			if !cmd.NotFound {
				unread = append(unread, cmd.unreadable())
			}
		}
		if len(unread) == 0 {
			unread = []string{"zero tests executed"}
		}
		notEval = append(notEval, unread...)
	}
	if b := in.Baseline; b != nil && b.Unfinished && !ev.Focused {
		// Cut short while the model was already at work: what the run
		// must be compared with is unknown, so nothing passes on it.
		notEval = append(notEval, "the baseline was cut short by the machine ("+b.Reason+"); a person must look before this run can pass")
	}
	if rf := ResourceFailures(ev.Tests); len(rf) > 0 {
		// Not the tree's doing, and nothing proven about it: never a
		// pass, and not the model's to fix.
		notEval = append(notEval, fmt.Sprintf("the tests ran out of resources (%s): nothing is proven about the tree", clipList(rf, 3)))
	}
	if b := in.Baseline; b != nil && len(b.Sources) > 0 && len(ev.Commands) > 0 && !ev.Focused {
		if now := sources(ev); !slices.Equal(now, b.Sources) {
			notEval = append(notEval, fmt.Sprintf("the test command changed during the run (was: %s; now: %s)",
				strings.Join(b.Sources, ", "), strings.Join(now, ", ")))
		}
	}
	if nf := newFakes(ev.Fakes, in.Baseline); len(nf) > 0 {
		waive := "ultra gate waive RUN --reason …"
		if in.Run != "" {
			waive = "ultra gate waive " + in.Run + " --reason …"
		}
		fail = append(fail, fmt.Sprintf("the tree has code the tests can run that can fake their results (new since the run started): %s; remove it, or a person may waive the gate (%s)",
			clipList(nf, 10), waive))
	}
	if ev.Focused && len(fail) == 0 {
		notEval = append(notEval, "only previously failing tests ran; the full suite must run before a pass")
	}

	// Against the baseline and the run's history (full runs only).
	if !ev.Focused && len(ev.Tests) > 0 {
		fail = append(fail, regressions(in, c, newColl > 0)...)
		if b := in.Baseline; b != nil && b.Evaluated && c.Skipped > b.Skipped {
			concerns = append(concerns, fmt.Sprintf("%d tests skipped, %d at the start of the run", c.Skipped, b.Skipped))
		}
	}
	if allFlaky {
		names := make([]string, 0, len(flaky))
		for name := range flaky {
			names = append(names, name)
		}
		sort.Strings(names)
		concerns = append(concerns, fmt.Sprintf("%d flaky (failed, then passed on re-run): %s", len(names), clipList(names, 10)))
	}

	switch {
	case len(fail) > 0:
		return Fail, append(append(fail, notEval...), collConcerns...)
	case len(notEval) > 0:
		return NotEvaluated, append(notEval, collConcerns...)
	}
	concerns = append(collConcerns, concerns...)
	switch {
	case len(concerns) > 0:
		return Concerns, append([]string{fmt.Sprintf("%d tests passed", c.Passed)}, concerns...)
	}
	return Pass, []string{fmt.Sprintf("%d tests passed", c.Passed)}
}

// newFakes returns the fake-result findings of the evidence that the
// baseline did not have, in the evidence's order. Keys are compared as a
// multiset: a second identical construct in the same file is new. Without
// a baseline every finding is new.
func newFakes(fakes []string, b *Baseline) []string {
	if len(fakes) == 0 {
		return nil
	}
	had := map[string]int{}
	if b != nil {
		for _, k := range b.Fakes {
			had[k]++
		}
	}
	var out []string
	for _, k := range fakes {
		if had[k] > 0 {
			had[k]--
			continue
		}
		out = append(out, k)
	}
	return out
}

// regressions finds tests that vanished: fewer tests than the baseline, or
// a test that failed earlier in the run (or at its start) now missing. A
// test file, module or package that could not be collected earlier is not
// missing when it is collected now (its tests are there instead); with
// newColl (some no longer collect: said apart) fewer tests are expected.
func regressions(in Input, c Counts, newColl bool) []string {
	var out []string
	present := map[string]bool{}
	for _, t := range in.Evidence.Tests {
		present[t.Name] = true
	}
	if b := in.Baseline; b != nil && b.Evaluated && !newColl && c.Executed+c.Skipped < b.Executed+b.Skipped {
		out = append(out, fmt.Sprintf("fewer tests than at the start of the run (%d, was %d): were tests deleted?",
			c.Executed+c.Skipped, b.Executed+b.Skipped))
	}
	failedBefore := map[string]bool{}
	collected := map[string]bool{} // could not be collected earlier
	if b := in.Baseline; b != nil {
		for name, st := range b.Tests {
			if st == report.Failed || st == report.Error {
				failedBefore[name] = true
			}
		}
		for _, name := range b.Collection {
			collected[name] = true
		}
	}
	// A test the run itself added, failed and then removed is no test of
	// the project's going missing: with a baseline to tell, only the
	// tests the run started with count (a goal's own checks are its
	// criteria, which the final gate runs again).
	original := func(name string) bool {
		b := in.Baseline
		if b == nil || !b.Evaluated || len(b.Tests) == 0 {
			return true
		}
		_, ok := b.Tests[name]
		return ok
	}
	for _, d := range in.Previous {
		if d.Focused {
			continue
		}
		for _, f := range d.Failing {
			if !original(f.Name) && f.Kind != report.KindCollection {
				continue
			}
			failedBefore[f.Name] = true
			if f.Kind == report.KindCollection {
				collected[f.Name] = true
			}
		}
	}
	for name := range collected {
		delete(failedBefore, name)
	}
	status := map[string]report.Status{}
	for _, t := range in.Evidence.Tests {
		status[t.Name] = t.Status
	}
	var missing, skipped []string
	for name := range failedBefore {
		switch {
		case !present[name] && !hasChildren(name, in.Evidence.Tests):
			missing = append(missing, name)
		case status[name] == report.Skipped:
			skipped = append(skipped, name)
		}
	}
	if len(skipped) > 0 {
		sort.Strings(skipped)
		out = append(out, fmt.Sprintf("%d previously failing tests are now skipped: %s", len(skipped), clipList(skipped, 10)))
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		out = append(out, fmt.Sprintf("%d previously failing tests are missing: %s", len(missing), clipList(missing, 10)))
	}
	return out
}

// hasChildren reports that tests inside name ran (name.Test, name/sub):
// a package or file that failed as a whole before (a build failure, a
// runner that exited early) and whose tests run now is not missing.
func hasChildren(name string, tests []report.Case) bool {
	for _, t := range tests {
		if rest, ok := strings.CutPrefix(t.Name, name); ok && rest != "" && (rest[0] == '.' || rest[0] == '/' || rest[0] == ':') {
			return true
		}
	}
	return false
}

// CachedPass returns the latest decision that passed (or a person waived)
// for the exact tree, if any: a tree that already passed is not run again.
func CachedPass(prev []Decision, tree string) *Decision {
	return latest(prev, func(d Decision) bool { return d.Valid(tree) && d.Status != Concerns })
}

// Green returns the latest decision that let the exact tree advance (PASS,
// CONCERNS or a person's waiver), if any: only such a tree is committed
// and landed.
func Green(ds []Decision, tree string) *Decision {
	return latest(ds, func(d Decision) bool { return d.Valid(tree) })
}

func latest(ds []Decision, ok func(Decision) bool) *Decision {
	for i := len(ds) - 1; i >= 0; i-- {
		if ok(ds[i]) {
			return &ds[i]
		}
	}
	return nil
}

// FromCache makes decision n that reuses an earlier PASS of the same tree.
func FromCache(src Decision, n int, at time.Time) Decision {
	d := src
	d.N, d.Time, d.CachedFrom = n, at, src.N
	d.Reasons = append([]string{fmt.Sprintf("cache hit: the same tree (%s) %s in decision %d", short(src.Tree), outcome(src.Status), src.N)}, src.Reasons...)
	return d
}

// WithArtifacts makes decision n for tree: the tree src let through with
// only ultra's own goal artifacts (goals.json, the ledger, the brief)
// written since, which the caller has checked. It counts as src does:
// the tests and criteria judged the same code.
func WithArtifacts(src Decision, n int, tree string, at time.Time, paths []string) Decision {
	d := src
	origin, reasons := src.N, src.Reasons
	if len(src.Records) > 0 && src.CachedFrom != 0 && len(reasons) > 0 {
		// src is itself such a decision: name the code decision once.
		origin, reasons = src.CachedFrom, reasons[1:]
	}
	d.N, d.Time, d.Tree, d.CachedFrom, d.Records = n, at, tree, origin, paths
	d.Reasons = append([]string{fmt.Sprintf("the code decision %d judged (it %s), with only ultra's own records written since (%s)",
		origin, outcome(src.Status), strings.Join(paths, ", "))}, reasons...)
	return d
}

// outcome is what a decision of status st did, in words.
func outcome(st Status) string {
	switch st {
	case Pass:
		return "passed"
	case Waived:
		return "was waived by a person"
	case Concerns:
		return "passed with concerns"
	}
	return "was " + strings.ToLower(string(st))
}

// Waive makes decision n: a person's waiver of the latest decision, for
// the given tree.
func Waive(latest *Decision, run, tree string, n int, w Waiver) Decision {
	d := Decision{Schema: SchemaVersion, N: n, Time: w.Time, Run: run, Tree: tree, Status: Waived, Waiver: &w}
	if latest != nil {
		d.Goal, d.Commands, d.Counts, d.Failing, d.Flaky = latest.Goal, latest.Commands, latest.Counts, latest.Failing, latest.Flaky
		d.Reasons = []string{fmt.Sprintf("waived by %s: %s (decision %d was %s)", w.By, w.Reason, latest.N, latest.Status)}
	} else {
		d.Reasons = []string{fmt.Sprintf("waived by %s: %s (no earlier decision)", w.By, w.Reason)}
	}
	return d
}

// Valid reports whether d still counts for the tree on disk: a PASS is
// tied to the tree it verified.
func (d Decision) Valid(tree string) bool {
	return d.Status.Advances() && d.Tree != "" && d.Tree == tree && (!d.NeedsWaiver || d.Waiver != nil)
}

// Summary is one line for logs.
func (d Decision) Summary() string {
	return fmt.Sprintf("%s: %s", d.Status, strings.Join(d.Reasons, "; "))
}

// FailingNames lists the failing tests of d.
func (d Decision) FailingNames() []string {
	out := make([]string, len(d.Failing))
	for i, f := range d.Failing {
		out[i] = f.Name
	}
	return out
}

// collectionRules judges the test files, modules or packages that could
// not be collected (coll), against the baseline: those that collected at
// the start of the run (or are new) fail the decision, the tree broke
// them; those that did not collect at the start either are not the run's
// doing: a concern when other tests ran, else nothing could be evaluated.
// Without a baseline that says, they fail the decision when other tests
// ran, and leave it not evaluated when nothing ran. It returns how many
// are the tree's doing.
func collectionRules(b *Baseline, coll []report.Case, executed int, fail, notEval, concerns *[]string) int {
	if len(coll) == 0 {
		return 0
	}
	known := b != nil && len(b.Tests) > 0
	before := map[string]bool{}
	if b != nil {
		// Only what the baseline recorded as not collected: a test that
		// errored (a package that panicked in init) is not excused when
		// the run breaks its build.
		for _, n := range b.Collection {
			before[n] = true
		}
	}
	var broken, old []report.Case
	for _, c := range coll {
		if known && !before[c.Name] {
			broken = append(broken, c)
		} else {
			old = append(old, c)
		}
	}
	if len(broken) > 0 {
		*fail = append(*fail, report.CollectionSummary(broken, 5)+" — they did not fail this way at the start of the run")
	}
	if len(old) > 0 {
		sum := report.CollectionSummary(old, 5)
		switch {
		case !known && executed > 0:
			*fail = append(*fail, sum)
		case !known:
			*notEval = append(*notEval, "no test could run: "+sum)
		case executed > 0:
			*concerns = append(*concerns, sum+" — as at the start of the run, so not the run's doing, but their tests did not run")
		default:
			*notEval = append(*notEval, "no test could run: "+sum+" — as at the start of the run")
		}
	}
	return len(broken)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func clipList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(", … (%d more)", len(names)-n)
}

func short(tree string) string {
	if len(tree) > 12 {
		return tree[:12]
	}
	return tree
}

// failureMessage is what a decision keeps of a failing test's message: its
// key line (report.KeyLine: the assertion, not a log prefix or a label),
// else its first line.
func failureMessage(msg string) string {
	if k := report.KeyLine(msg); k != "" {
		return k
	}
	return firstLine(msg)
}
