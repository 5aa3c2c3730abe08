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
}

// Report is what one runner's output said.
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
