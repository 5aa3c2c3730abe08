package gate

import (
	"fmt"
	"slices"
	"strings"
)

// Protected is the run of the project's original tests (as they are in the
// baseline's tree) against the new code, made because the run changed,
// deleted or renamed some of them, or what they load.
type Protected struct {
	Changed []string // the existing test files changed (path, with how)
	// Support are the files the tests load and the code does not (test
	// support) that the run changed: restored as tests are.
	Support []string
	// Added are test or support files the run added beside the original
	// tests (a new _test.go in a package that had tests can change how
	// they run: a TestMain; a module can shadow the one they imported):
	// the original tests ran without them.
	Added []string
	// Undecided are changed files the tests load that ultra cannot tell
	// from code under test (code for Decision, restored for Restored).
	Undecided []string
	Decision  Decision // the original tests' run, judged
	// Restored is the original tests' run with the Undecided files
	// restored too (made when there are any and Decision advanced).
	Restored Decision
	Allowed  bool // a person allowed test changes for this run
}

// ApplyProtected completes a decision with the run of the original tests:
// they must pass against the new code with their original support, or
// the decision fails; when they do, changed tests or support still cannot
// pass by themselves: the decision needs a person's waiver, unless a
// person allowed test changes when the run started. Files ultra cannot
// tell from code under test (Undecided) count as code for that, but when
// the original tests pass only with the run's version of them the
// decision needs a person's waiver too, allowed or not: ultra cannot tell
// a fix from a weakened helper there.
func ApplyProtected(d Decision, p Protected) Decision {
	changed := append(slices.Clone(p.Changed), p.Support...)
	if len(changed) == 0 && len(p.Added) == 0 && len(p.Undecided) == 0 {
		return d
	}
	d.ChangedTests = slices.Clone(p.Changed)
	d.TestSupport = slices.Clone(p.Support)
	d.Undecided = slices.Clone(p.Undecided)
	if len(changed) > 0 {
		d.TestChangesAllowed = p.Allowed
	}
	listed := strings.Join(changed, ", ")
	if !d.Status.Advances() {
		if len(changed) > 0 {
			d.Reasons = append(d.Reasons, "the run also changed existing tests or what they load: "+listed)
		}
		return d
	}
	switch {
	case !p.Decision.Status.Advances() && len(changed) == 0:
		d.Status = Fail
		d.Reasons = append([]string{fmt.Sprintf("the project's original tests do not pass against the new code without the files the run added beside them (%s): %s %s",
			strings.Join(p.Added, ", "), p.Decision.Status, strings.Join(failingOrReasons(p.Decision), "; "))}, d.Reasons...)
		return d
	case !p.Decision.Status.Advances():
		why := strings.Join(failingOrReasons(p.Decision), "; ")
		d.Status = Fail
		added := ""
		if len(p.Added) > 0 {
			added = " and the files the run added beside them removed (" + strings.Join(p.Added, ", ") + ")"
		}
		d.Reasons = append([]string{fmt.Sprintf("the project's original tests do not pass against the new code (the run's changes to tests and what they load: %s; with them undone%s: %s %s)",
			listed, added, p.Decision.Status, why)}, d.Reasons...)
		return d
	case len(changed) == 0:
	case p.Allowed:
		d.Reasons = append(d.Reasons, "existing tests or what they load changed, as a person allowed (--allow-test-changes): "+listed+"; the original tests also pass against the new code")
	default:
		d.Status = Concerns
		d.NeedsWaiver = true
		d.Reasons = append([]string{"existing tests or what they load were changed, deleted or renamed (" + listed + "); the original tests pass against the new code, but changing tests needs a person: ultra gate waive, or start the run with --allow-test-changes"}, d.Reasons...)
	}
	if len(p.Undecided) == 0 {
		return d
	}
	undecided := strings.Join(p.Undecided, ", ")
	if p.Restored.Status.Advances() {
		d.Reasons = append(d.Reasons, "the run changed files the tests load that ultra cannot tell from code under test ("+undecided+"); the original tests pass with them as they were too")
		return d
	}
	if d.Status != Concerns {
		d.Status = Concerns
	}
	d.NeedsWaiver = true
	d.Reasons = append([]string{fmt.Sprintf("the original tests pass only with the run's version of files they load that ultra cannot tell from code under test (%s; with them as they were: %s %s): "+
		"a fix there and a weakened test helper look the same, so a person decides (ultra gate waive), or declares their role (verify.code or verify.test_support in .ultra/config)",
		undecided, p.Restored.Status, strings.Join(failingOrReasons(p.Restored), "; "))}, d.Reasons...)
	return d
}

// failingOrReasons names a decision's failing tests, or its reasons when
// none is named.
func failingOrReasons(d Decision) []string {
	if len(d.Failing) == 0 {
		return d.Reasons
	}
	return []string{"failing: " + strings.Join(d.FailingNames(), ", ")}
}
