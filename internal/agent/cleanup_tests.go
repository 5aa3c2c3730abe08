package agent

// What keeps the cleanup pass off the tests: the files it may edit leave
// out the tests and test support the run changed (by the gate's own
// classifier), and a cleaned tree on which a test that passed at the
// final gate is missing or skipped, or fewer tests pass, is reverted.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/verify/report"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// cleanable splits the changed files into those a cleanup may edit and
// those it may not, with what each of these is to the tests: the tests
// and what decides how they run (verify.IsTestPath), and what the tests
// load that the code does not, or that ultra cannot tell from code under
// test (verify.ClassifySupport, with the person's declarations), at the
// run's start or in the final tree d judged, as the gate tells them
// apart. A pass that changes no behaviour has no reason to touch them,
// and a test the run added is guarded by nothing else once weakened.
func (r *runner) cleanable(ctx context.Context, d gate.Decision, changed []string) ([]string, map[string]string, error) {
	wd := r.row.Workdir
	start, err := workspace.TreeOf(ctx, wd, r.row.Workspace.StartCommit)
	if err != nil {
		return nil, nil, err
	}
	var cmds []string
	for _, c := range d.Commands {
		cmds = append(cmds, c.Command)
	}
	if len(cmds) == 0 {
		cmds = r.st.VerifyCommands
	}
	was, err := testSupport(ctx, wd, start, cmds, r.st.DeclaredCode, r.st.DeclaredSupport)
	if err != nil {
		return nil, nil, err
	}
	is, err := testSupport(ctx, wd, d.Tree, cmds, r.st.DeclaredCode, r.st.DeclaredSupport)
	if err != nil {
		return nil, nil, err
	}
	var files []string
	tests := map[string]string{}
	for _, f := range changed {
		s, ok := was[f]
		if !ok {
			s, ok = is[f]
		}
		switch {
		case verify.IsTestConfig(f):
			tests[f] = "test configuration"
		case verify.IsTestPath(f):
			tests[f] = "a test"
		case ok && s.Role == verify.RoleSupport:
			tests[f] = "test support: " + s.Why
		case ok:
			tests[f] = "what the tests load, not told from code under test: " + s.Why
		default:
			files = append(files, f)
		}
	}
	return files, tests, nil
}

// passedTests names the tests that passed in a verification.
func passedTests(res *verify.Result) []string {
	if res == nil {
		return nil
	}
	var out []string
	for _, t := range res.Tests {
		if t.Status == report.Passed {
			out = append(out, t.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lostTests says why the cleaned tree's tests (d, res) prove less than the
// final gate's the cleanup c started from ("" when they do not): a test
// that passed there is missing or skipped now, or fewer tests ran or
// passed, or more were skipped.
func lostTests(c *cleanupState, d gate.Decision, res *verify.Result) string {
	if len(c.Passed) > 0 && res != nil && len(res.Tests) > 0 {
		now := map[string]report.Status{}
		for _, t := range res.Tests {
			if _, ok := now[t.Name]; !ok {
				now[t.Name] = t.Status
			}
		}
		var missing, skipped []string
		for _, n := range c.Passed {
			switch s, ok := now[n]; {
			case !ok:
				missing = append(missing, n)
			case s == report.Skipped:
				skipped = append(skipped, n)
			}
		}
		var why []string
		if len(missing) > 0 {
			why = append(why, fmt.Sprintf("%d missing (%s)", len(missing), strings.Join(firstN(missing, 5), ", ")))
		}
		if len(skipped) > 0 {
			why = append(why, fmt.Sprintf("%d skipped (%s)", len(skipped), strings.Join(firstN(skipped, 5), ", ")))
		}
		if len(why) > 0 {
			return "tests that passed at the final gate do not run on the cleaned tree: " + strings.Join(why, "; ")
		}
	}
	b, a := c.Decision.Counts, d.Counts
	switch {
	case a.Executed < b.Executed:
		return fmt.Sprintf("fewer tests ran on the cleaned tree (%d, against %d before it)", a.Executed, b.Executed)
	case a.Passed < b.Passed:
		return fmt.Sprintf("fewer tests passed on the cleaned tree (%d, against %d before it)", a.Passed, b.Passed)
	case a.Skipped > b.Skipped:
		return fmt.Sprintf("more tests were skipped on the cleaned tree (%d, against %d before it)", a.Skipped, b.Skipped)
	}
	return ""
}
