// Package report parses test runners' machine-readable output into one
// shape: per-test results with counts. It is pure: parsers read from an
// io.Reader or bytes and touch nothing else, so they can be fuzzed.
package report

import "time"

// Status is the outcome of one test.
type Status string

const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped"
	Error   Status = "error" // the test could not run (setup error, build failure, crash)
)

// Case is one test's result.
type Case struct {
	// Name identifies the test the way its runner can select it again:
	// "example.com/pkg.TestX/sub" (go), "tests/test_a.py::test_x" (pytest),
	// "Suite name > test name" (jest/vitest), "module::test" (cargo),
	// "com.acme.FooTest.testBar" (JUnit).
	Name     string        `json:"name"`
	Suite    string        `json:"suite,omitempty"` // package, file or class
	Status   Status        `json:"status"`
	Duration time.Duration `json:"duration,omitempty"`
	File     string        `json:"file,omitempty"` // where it failed, when known
	Line     int           `json:"line,omitempty"`
	Message  string        `json:"message,omitempty"` // bounded failure message and output (MaxMessage)
	// Kind says what the case is: "" for a test, KindParent for a test
	// with subtests, KindCollection for a test file, module or package
	// that could not be loaded, collected or built (none of its tests
	// ran). Every kind counts once in the Report's totals, as the
	// runners' own summaries count them.
	Kind string `json:"kind,omitempty"`
	// Parent is the name of the test this one is a subtest of (Go,
	// node --test), "" for a top-level test.
	Parent string `json:"parent,omitempty"`
}

// Kinds of cases (Case.Kind).
const (
	// KindParent is a test with subtests (Go's t.Run, node --test's
	// t.test). It counts as a test, as go test -v and node --test count
	// it: it passes when it and its subtests pass, and when it failed
	// only through its subtests its Message says which ("2 of 5
	// subtests failed: a, b") and it has no File of its own. Test
	// groups that are not tests (describe blocks, node's suites) are
	// not cases.
	KindParent = "parent"
	// KindCollection is a test file, module or package that could not
	// be loaded, collected or built: a pytest or unittest module that
	// fails to import, a jest/vitest/mocha/node test file that fails
	// to load, a Go package or cargo target that does not compile. Its
	// Status is Error, its Name the file, module, package or target,
	// its Message the error.
	KindCollection = "collection"
)

// Report is what one runner's output said. Its counts are those of its
// cases by Status: Failed never includes Errors (tests that could not
// run, and modules that could not be collected, KindCollection).
type Report struct {
	Format  string `json:"format"` // "go-json", "junit", "tap", "cargo", …
	Cases   []Case `json:"cases,omitempty"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	Errors  int    `json:"errors"`
}

// MaxMessage bounds Case.Message.
const MaxMessage = 2 << 10

// Executed is the number of tests that ran (passed, failed or errored).
func (r *Report) Executed() int { return r.Passed + r.Failed + r.Errors }

// Collection returns the cases that could not be collected
// (KindCollection), in order.
func (r *Report) Collection() []Case {
	if r == nil {
		return nil
	}
	return CollectionErrors(r.Cases)
}

// CollectionErrors returns the cases of cs that could not be collected
// (KindCollection with Status Error), in order.
func CollectionErrors(cs []Case) []Case {
	var out []Case
	for _, c := range cs {
		if c.Kind == KindCollection && c.Status == Error {
			out = append(out, c)
		}
	}
	return out
}

// KnownRunner says whether runner (verify's Detected.Runner) is a test
// runner whose own results ultra reads: not a command, script or make
// target it runs as given, whose output may hide anything.
func KnownRunner(runner string) bool {
	switch runner {
	case "", "command", "script", "make":
		return false
	}
	return true
}
