// Package verify runs a project's tests and decides, from their real
// results, whether work is done. It is the core of ultra's "no false
// completion" promise: a model saying "done" counts for nothing until the
// tests say so.
//
// The package is deliberately small and sits behind the Verifier
// interface, so that a later, fuller gate can replace the implementation
// without touching its callers.
//
// # What is run
//
// When Request.Commands is set (verify.command in .ultra/config) every
// command is run, in order, and all of them must pass. Otherwise Detect
// looks at the workspace root and only the first detected command is run
// (see Detect for the table and its order).
//
// Each command runs through bash -c in its own process group (package
// proc) with a per-command timeout, stdin empty, the inherited environment
// plus CI=true, and GOFLAGS=-count=1 when GOFLAGS is set neither in the
// environment nor in the go env file (so Go results are fresh, never
// replayed from the test cache, unless the user configured otherwise). The
// complete output of each command goes to its own log file under
// Request.LogDir/attempt-NNN/.
//
// # How results are read
//
// Output is parsed line by line from the full log, never from a truncated
// capture. `go test -json` events are recognised on any line; all other
// lines go through the generic text parsers (go test -v, TAP, node --test,
// jest, vitest, mocha, pytest and a plain "N passed, N failed" line). See
// parse.go for the exact formats and how they are combined.
//
// Go tests are counted as leaves: a test with subtests is not counted
// itself, only its subtests are, except that a parent which failed while
// none of its subtests did counts as one failure (a failure never
// vanishes). A package that failed without any failing test (build
// failure, panic in TestMain or init, -timeout) counts as one failure named
// after its import path. Other runners' counts are taken from their own
// summaries, as they define them.
//
// # Status (fail closed)
//
//   - pass: every command exited 0, at least one test was counted as
//     executed (passed+failed > 0) and none failed.
//   - fail: any failed test, any non-zero exit, or a timeout (the whole
//     process group is killed).
//   - not_evaluated: no command detected, the runner is missing (cannot be
//     started, or exit 127 "command not found" with no test counted), the
//     runner says it found no tests, or every command exited 0 and no test
//     was counted (including output no parser understood).
//
// Zero tests is never a pass.
package verify

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Verifier runs a project's tests in dir and reports what happened.
type Verifier interface {
	// Verify runs the tests described by req. The error is only for
	// ultra's own failures (the log directory cannot be created, the
	// directory does not exist, ctx was cancelled); failing, missing or
	// hanging tests are reported in the Result.
	Verify(ctx context.Context, req Request) (*Result, error)
}

// Request says what to verify.
type Request struct {
	Dir      string        // directory to test (the workspace root)
	Commands []string      // explicit commands (from config verify.command); empty = detect
	Timeout  time.Duration // per command; 0 = DefaultTimeout
	// LogDir is where full output logs go (e.g.
	// .ultra/state/runs/<id>/verify/). Each call makes a new
	// attempt-NNN directory in it, with a file per command. Empty means a
	// new directory under the system temporary directory.
	LogDir string
}

// Status is the verdict of a verification.
type Status string

const (
	StatusPass         Status = "pass"
	StatusFail         Status = "fail"
	StatusNotEvaluated Status = "not_evaluated"
)

// Limits and defaults.
const (
	DefaultTimeout = 10 * time.Minute
	MaxFailing     = 50      // failing test names kept, per command and in total
	MaxExcerpt     = 4 << 10 // bytes of Result.Excerpt
	MaxSummary     = 6 << 10 // bytes of Result.Summary()
)

// SourceConfig is the Source of commands given explicitly in the Request.
const SourceConfig = "verify.command in .ultra/config"

// Result is what a verification found.
type Result struct {
	Status   Status          `json:"status"`
	Reason   string          `json:"reason"` // one line a person or model can act on
	Commands []CommandResult `json:"commands,omitempty"`
	// Totals over commands.
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Failing names failing tests (at most MaxFailing), as
	// "importpath.TestName" for Go, or as the runner names them.
	Failing  []string      `json:"failing,omitempty"`
	Excerpt  string        `json:"excerpt,omitempty"` // readable excerpt of failure output, at most MaxExcerpt bytes
	Duration time.Duration `json:"duration"`
}

// CommandResult is what one command did.
type CommandResult struct {
	Command  string `json:"command"`
	Source   string `json:"source"` // why it was chosen, e.g. "go.mod found"
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// NotFound: the runner could not be started or the shell said
	// "command not found" (exit 127) before any test was counted.
	NotFound bool     `json:"not_found,omitempty"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	Skipped  int      `json:"skipped"`
	Failing  []string `json:"failing,omitempty"`
	// Formats lists the output formats the counts were read from, e.g.
	// "go test -json" or "jest"; empty when nothing was recognised.
	Formats  []string      `json:"formats,omitempty"`
	LogPath  string        `json:"log_path,omitempty"`
	Duration time.Duration `json:"duration"`

	excerpt string // failure excerpt of this command
	noTests string // the runner's own "no tests found" line, if any
	detail  string // why the command could not run, if it could not
}

// Detected is a test command found by Detect.
type Detected struct {
	Command string `json:"command"`
	Source  string `json:"source"`
}

// New returns the default Verifier.
func New() Verifier { return &runner{} }

// Summary renders the result compactly for the model: status and reason,
// counts, each command with its exit and log path, the failing tests and
// the excerpt. It is at most MaxSummary bytes whatever the output size.
func (r *Result) Summary() string {
	if r == nil {
		return "verify: not_evaluated — no result"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "verify: %s — %s\n", r.Status, clip(oneLine(r.Reason), 400))
	fmt.Fprintf(&b, "tests: %d passed, %d failed, %d skipped (%s)\n",
		r.Passed, r.Failed, r.Skipped, r.Duration.Round(time.Millisecond))

	const maxCommands = 6
	for i, c := range r.Commands {
		if i == maxCommands {
			fmt.Fprintf(&b, "… and %d more commands\n", len(r.Commands)-maxCommands)
			break
		}
		fmt.Fprintf(&b, "$ %s  [%s]\n", clip(oneLine(c.Command), 160), clip(c.Source, 80))
		fmt.Fprintf(&b, "  %s; %d passed, %d failed, %d skipped; %s\n",
			c.exitText(), c.Passed, c.Failed, c.Skipped, c.Duration.Round(time.Millisecond))
		if c.LogPath != "" {
			fmt.Fprintf(&b, "  log: %s\n", clip(c.LogPath, 200))
		}
	}

	if len(r.Failing) > 0 {
		total := max(r.Failed, len(r.Failing))
		fmt.Fprintf(&b, "failing (%d):\n", total)
		const budget = 1200
		start, shown := b.Len(), 0
		for _, name := range r.Failing {
			if b.Len()-start > budget {
				break
			}
			fmt.Fprintf(&b, "  - %s\n", clip(oneLine(name), 150))
			shown++
		}
		if total > shown {
			fmt.Fprintf(&b, "  … and %d more (see the log)\n", total-shown)
		}
	}

	if ex := strings.TrimRight(r.Excerpt, "\n"); ex != "" {
		const header = "excerpt:\n"
		room := MaxSummary - b.Len() - len(header) - 1
		if room > 200 {
			b.WriteString(header)
			b.WriteString(clip(ex, room))
			b.WriteByte('\n')
		}
	}
	return clip(b.String(), MaxSummary)
}

func (c *CommandResult) exitText() string {
	switch {
	case c.TimedOut:
		return "timed out, process group killed"
	case c.NotFound && c.ExitCode < 0:
		return "could not start"
	case c.ExitCode < 0:
		return "killed"
	default:
		return fmt.Sprintf("exit %d", c.ExitCode)
	}
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	if n <= len(mark) {
		return ""
	}
	cut := n - len(mark)
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
