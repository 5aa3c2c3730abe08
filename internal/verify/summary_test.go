package verify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

// tokens estimates the tokens of s (about 4 bytes a token).
func tokens(n int) int { return (n + 3) / 4 }

// TestSummaryIsCompact measures the summary the model reads against the
// output it replaces, on a real failing Go suite: 300 tests, 40 failing,
// each printing 30 lines of logs.
func TestSummaryIsCompact(t *testing.T) {
	t.Parallel()
	need(t, "go")
	const tests, failing, noise = 300, 40, 30
	var src strings.Builder
	src.WriteString("package big\n\nimport \"testing\"\n\n")
	fmt.Fprintf(&src, "func noise(t *testing.T, n int) {\n\tfor i := 0; i < %d; i++ {\n\t\tt.Logf(\"step %%d of test %%d: connecting to the fake service, retrying with backoff, payload ok\", i, n)\n\t}\n}\n\n", noise)
	var want []string
	for i := range tests {
		fmt.Fprintf(&src, "func TestCase%03d(t *testing.T) {\n\tnoise(t, %d)\n", i, i)
		if i%7 == 0 && len(want) < failing {
			fmt.Fprintf(&src, "\tif got := %d * 2; got != %d {\n\t\tt.Errorf(\"double(%d) = %%d, want %d\", got)\n\t}\n", i, i+1, i, i+1)
			want = append(want, fmt.Sprintf("example.com/big.TestCase%03d", i))
		}
		src.WriteString("}\n\n")
	}
	dir := project(t, map[string]string{"go.mod": "module example.com/big\n\ngo 1.21\n", "big_test.go": src.String()})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, tests-failing, failing, 0)

	sum := res.Summary()
	for _, name := range want {
		if !strings.Contains(sum, name+" (big_test.go:") {
			t.Errorf("summary does not name %s with its location", name)
		}
	}
	if !strings.Contains(sum, "double(7) = 14, want 8") {
		t.Error("summary lacks the failure messages")
	}

	log, err := os.ReadFile(res.Commands[0].LogPath)
	if err != nil {
		t.Fatal(err)
	}
	// The same output as go test -v prints it (the text of the events).
	var text int
	sc := bufio.NewScanner(strings.NewReader(string(log)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct{ Output string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			text += len(ev.Output)
		}
	}
	ratioJSON := float64(tokens(len(sum))) / float64(tokens(len(log)))
	ratioText := float64(tokens(len(sum))) / float64(tokens(text))
	t.Logf("summary %d tokens; raw log (go test -json) %d tokens: %.2f%%; as go test -v text %d tokens: %.2f%%",
		tokens(len(sum)), tokens(len(log)), 100*ratioJSON, tokens(text), 100*ratioText)
	if ratioText >= 0.05 || ratioJSON >= 0.05 {
		t.Errorf("summary is %.1f%% of the text output's tokens (%.1f%% of the log's), want under 5%%", 100*ratioText, 100*ratioJSON)
	}
}

func TestSummaryBounds(t *testing.T) {
	t.Parallel()
	res := &Result{Status: StatusFail, Reason: "250 of 1000 tests failed", Passed: 750, Failed: 250, Duration: time.Second}
	for i := range 1000 {
		c := report.Case{Name: fmt.Sprintf("example.com/pkg/with/a/long/path.TestSomethingRatherLong%04d", i), Status: report.Passed}
		if i%4 == 0 {
			c.Status = report.Failed
			c.File, c.Line = "pkg/with/a/long/path/thing_test.go", i+1
			c.Message = strings.Repeat("noise line before the point\n", 5) + fmt.Sprintf("thing_test.go:%d: got %d, want %d\n", i, i, i+1) + strings.Repeat("x", 3000)
			res.Failing = append(res.Failing, failingName(c))
		}
		res.Tests = append(res.Tests, c)
	}
	res.Commands = []CommandResult{{Command: "go test -json ./...", ExitCode: 1, LogPath: "/state/verify/attempt-001/1-go.log", Format: "go-json", ReportOK: true}}
	sum := res.Summary()
	if len(sum) > MaxSummary {
		t.Errorf("summary is %d bytes, more than %d", len(sum), MaxSummary)
	}
	for _, want := range []string{
		"failing (250):",
		"path.TestSomethingRatherLong0000 (pkg/with/a/long/path/thing_test.go:1): got 0, want 1", // detailed
		"path.TestSomethingRatherLong0796",        // the 200th, by name only
		"… and 50 more (see the log)",             // the rest
		"log: /state/verify/attempt-001/1-go.log", // where to look
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "TestSomethingRatherLong0800") {
		t.Error("summary names more than MaxFailing tests")
	}
	if n := strings.Count(sum, "got "); n != MaxFailingDetail {
		t.Errorf("%d failing tests with their message, want %d", n, MaxFailingDetail)
	}
	if strings.Contains(sum, "excerpt:") {
		t.Error("summary repeats an excerpt though every failure has its message")
	}
}

func TestKeyLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ msg, want string }{
		{"", ""},
		{"=== RUN   TestX\n    x_test.go:12: got 2, want 3\n--- FAIL: TestX (0.00s)\n", "got 2, want 3"},
		{"# example.com/calc [example.com/calc.test]\n./calc_test.go:6:5: undefined: Mul\nFAIL\texample.com/calc [build failed]\n", "./calc_test.go:6:5: undefined: Mul"},
		{"Traceback (most recent call last):\n  File \"t.py\", line 5, in test_err\n    raise ValueError(\"boom\")\n    ^^^^^\nValueError: boom\n", "ValueError: boom"},
		{"thread 'tests::bad' (123) panicked at src/lib.rs:12:24:\nassertion `left == right` failed: math is broken\n  left: 3\n right: 4", "assertion `left == right` failed: math is broken | left: 3 | right: 4"},
		{"Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 5\nReceived: 2\n    at Object.toBe (/x/calc.test.js:3:43)", "Error: expect(received).toBe(expected) // Object.is equality | Expected: 5 | Received: 2"},
		{"failed on setup with \"file /x/t.py, line 22\n  def test_err(self, missing_fixture):\nE       fixture 'missing_fixture' not found", "fixture 'missing_fixture' not found"},
		{"just some text\nmore", "just some text"},
		{"\x1b[31mAssertionError\x1b[0m: 1 != 2", "AssertionError: 1 != 2"},
	} {
		if got := keyLine(tc.msg); got != tc.want {
			t.Errorf("keyLine(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
	if got := keyLine(strings.Repeat("assert ", 200)); len(got) > 240 {
		t.Errorf("key line of %d bytes", len(got))
	}
}

func TestSummaryNamesABuildErrorsPlaceOnce(t *testing.T) {
	t.Parallel()
	r := &Result{Status: StatusFail, Reason: "1 package could not be built", Errors: 1, Tests: []report.Case{{Name: "ex/calc", Status: report.Error,
		Kind: report.KindCollection, File: "calc_test.go", Line: 6,
		Message: "# ex/calc [ex/calc.test]\n./calc_test.go:6:5: undefined: Mul\nFAIL\tex/calc [build failed]\n"}}}
	if s := r.Summary(); !strings.Contains(s, "  - ex/calc [error]: ./calc_test.go:6:5: undefined: Mul\n") {
		t.Errorf("summary:\n%s", s)
	}
}
