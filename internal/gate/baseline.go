package gate

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

func sources(ev Evidence) []string {
	out := make([]string, len(ev.Commands))
	for i, c := range ev.Commands {
		out[i] = c.Command
		if c.Source != "" {
			out[i] += " (" + c.Source + ")"
		}
	}
	return out
}

// NewBaseline records the suite's state at the start of a run, with the
// fake-result findings of its tree (which do not count against it).
func NewBaseline(tree string, ev Evidence) Baseline {
	fakes := slices.Clone(ev.Fakes)
	ev.Fakes = nil
	d := Judge(Input{Evidence: ev})
	b := Baseline{Tree: tree, Sources: sources(ev), Executed: d.Counts.Executed, Skipped: d.Counts.Skipped,
		Failed: d.Counts.Failed, Errors: d.Counts.Errors, Fakes: fakes}
	// A measurement the machine cut short proves nothing about the tree:
	// none of its tests, failures or collection errors are compared with.
	if why := unfinished(ev); why != "" {
		b.Reason, b.Unfinished = why, true
		return b
	}
	for _, c := range report.CollectionErrors(ev.Tests) {
		b.Collection = append(b.Collection, c.Name)
	}
	if d.Status == NotEvaluated {
		b.Reason = strings.Join(d.Reasons, "; ")
		if len(b.Collection) == 0 {
			return b
		}
		// Nothing could be collected: which modules did not is what a
		// later verification is compared with.
	} else {
		b.Evaluated = len(ev.Tests) > 0
		if !b.Evaluated {
			b.Reason = "no per-test results"
		}
	}
	b.Tests = map[string]report.Status{}
	for _, t := range ev.Tests {
		b.Tests[t.Name] = t.Status
	}
	return b
}

// resourceRE matches what a test, a build or a runner says when the machine
// ran out of something (disk, memory, processes, files) or killed it: a
// failure of the environment, not of the tree.
var resourceRE = regexp.MustCompile(`(?i)no space left on device|disk quota exceeded|cannot allocate memory|out of memory|resource temporarily unavailable|too many open files|fork/exec [^:]*: (?:resource|cannot)|signal: killed`)

// RanOutOf reports whether msg says the machine ran out of a resource or
// killed what ran (resourceRE).
func RanOutOf(msg string) bool { return resourceRE.MatchString(msg) }

// ResourceFailures are the tests, packages or modules that could not run
// (status error: a build, a collection, a crash) because the machine ran
// out of a resource (resourceRE), as "name: what". A failing test's own
// message is not read: its text is the test's to choose, and a test that
// failed counts as failing whatever the reason.
func ResourceFailures(tests []report.Case) []string {
	var out []string
	for _, t := range tests {
		if t.Status != report.Error {
			continue
		}
		if m := resourceRE.FindString(t.Message); m != "" {
			out = append(out, t.Name+": "+m)
		}
	}
	return out
}

// unfinished says why a measurement was cut short by the machine rather
// than decided by the tests ("" when it was not): a timeout, or tests that
// failed for want of resources.
func unfinished(ev Evidence) string {
	for _, c := range ev.Commands {
		if c.TimedOut {
			return fmt.Sprintf("`%s` timed out: a measurement cut short proves nothing", c.Command)
		}
	}
	if rf := ResourceFailures(ev.Tests); len(rf) > 0 {
		return "the tests ran out of resources (" + clipList(rf, 3) + "): a measurement the machine cut short proves nothing"
	}
	return ""
}

// erroredNames are the names of fails whose test has Status Error.
func erroredNames(fails []Failure, tests []report.Case) map[string]bool {
	want := make(map[string]bool, len(fails))
	for _, f := range fails {
		want[f.Name] = true
	}
	out := map[string]bool{}
	for _, t := range tests {
		if t.Status == report.Error && want[t.Name] {
			out[t.Name] = true
		}
	}
	return out
}
