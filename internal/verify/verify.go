// Package verify runs a project's tests and reads, from their real
// results, what happened: per test and in total. It is the core of ultra's
// "no false completion" promise: a model saying "done" counts for nothing
// until the tests say so. Package gate judges what verify reports; verify's
// own Status (below) is the first, simple verdict.
//
// # What is run
//
// When Request.Commands is set (verify.command in .ultra/config) every
// command is run, in order, and all of them must pass. Otherwise Detect
// looks at the workspace root and the first detected group is run: one
// command, or one per module for a repository of several Go modules.
//
// Detection, in order of preference (the first that matches wins; each
// Detected carries the Reason it was chosen):
//
//  1. go.work                  go test -json ./... in each module it uses
//  2. go.mod at the root       go test -json ./... at the root and in every
//     nested module (go.mod in a subdirectory; vendor/, testdata/,
//     node_modules/, _* and .* directories are skipped)
//  3. package.json scripts.test (not the npm init placeholder): the
//     package manager the lockfile names (pnpm-lock.yaml, yarn.lock,
//     bun.lock(b), package-lock.json; else the packageManager field; else
//     npm) when it is installed, else corepack's copy of it when that
//     version is already in corepack's cache (run offline), else npm,
//     which runs any script (the Reason says which and why); and the
//     runner behind the script, followed through the scripts it calls
//     (npm run x, yarn x, pnpm run x, bun run x; 5 levels at most, no
//     cycles) and through launchers and wrappers (npx, bunx, npm exec,
//     yarn/pnpm exec, cross-env, env assignments, node path/to/jest.js),
//     asked for a report:
//     jest      --json --outputFile=<report> (jest-junit's JUnit XML when
//     jest-junit is installed)
//     vitest    --reporter=default --reporter=junit --outputFile.junit=<report>
//     (in run mode: "run" or --run added when the script lacks it)
//     mocha     --reporter xunit --reporter-option output=<report>
//     node --test  --test-reporter=tap (TAP on the output)
//     The runner is run directly (npx --no-install jest …, or
//     node_modules/.bin/jest without npm; node --test …), with the
//     script's own arguments and environment, when the script amounts to
//     one runner command (no other commands, no pre/post script on the
//     way) and: it is exactly the runner, or the arguments ultra adds
//     cannot reach it through the script (npm run x without --), or the
//     script calls a package manager that is not installed, or none is.
//     Else it runs through the package manager (npm test -- …). A runner
//     that is not the script's last command, that arguments cannot reach
//     and that cannot run directly, or an unknown one, is run as the script
//     is and its output read as text. So is a script that starts test
//     runners in more than one command (the scripts it calls and their
//     pre/post scripts included): every run's summary is counted.
//  4. pytest: pyproject.toml with [tool.pytest.ini_options] or pytest in
//     its dependency tables (dependencies, extras, [dependency-groups],
//     poetry groups, pdm/uv dev-dependencies, hatch environments),
//     pytest.ini, setup.cfg [tool:pytest], tox.ini [pytest], conftest.py
//     (root, tests/ or test/), tox environments whose commands run pytest
//     or whose deps (or their -r files) name it, setup.cfg extras or
//     tests_require, pytest in requirements files (*requirements*.txt/.in,
//     requirements/, tests/; -r includes followed), setup.py, Pipfile,
//     noxfile.py, else a bounded walk (virtualenvs, node_modules, hidden
//     and _ directories skipped) for a conftest.py or a test file
//     importing pytest (the walk is skipped in a project with another
//     build and nothing of Python's at its root): python3 -m pytest -q
//     --junitxml=<report> (uv run pytest with uv.lock and uv installed,
//     poetry run pytest with poetry.lock and poetry installed,
//     .venv/bin/python -m pytest with a virtualenv, else the first of
//     python3 -m pytest, python -m pytest, pytest, pytest-3, py.test,
//     /usr/bin/python3 -m pytest that imports or starts (checked once,
//     with a timeout), else a command that says pytest is not installed,
//     with the install hint, as a missing runner: not evaluated)
//  5. Cargo.toml               cargo test --no-fail-fast (cargo nextest run
//     --no-fail-fast when cargo-nextest is installed)
//  6. pom.xml                  mvn -q -B test (./mvnw when present); reports
//     from target/surefire-reports/TEST-*.xml (and modules')
//  7. build.gradle(.kts), settings.gradle(.kts)  ./gradlew test (gradle
//     test without the wrapper); reports from build/test-results/test/
//  8. CMakeLists.txt with enable_testing()/add_test() and an existing
//     build/CTestTestfile.cmake: cmake --build build, then
//     ctest --test-dir build --output-junit <report> (built first, so that
//     ctest never runs stale binaries)
//  9. GNUmakefile/makefile/Makefile with a test target (make test), else a
//     check target (make check)
//  10. unittest fallback: a Python project (pyproject.toml, setup.py,
//     setup.cfg, or test*.py at the root or in tests/) without any of the
//     pytest signals of rule 4: python3 -m unittest discover -v (-s tests
//     when tests/ is not a package)
//  11. go.mod only in subdirectories: go test -json ./... in each module
//
// Each command runs through bash -c in its own process group (package
// proc) with a per-command timeout, stdin empty, the inherited environment
// plus CI=true, PYTHONDONTWRITEBYTECODE=1, ULTRA_REPORT (the report file
// the command should write, under the log directory) and -count=1 added to
// the person's GOFLAGS (from the environment or the go env file) unless
// they set a -count (so Go results are fresh, never replayed from the test
// cache, unless the user configured otherwise). The complete output of each command goes to its
// own log file under Request.LogDir/attempt-NNN/, next to the report files.
//
// # How results are read
//
// The machine-readable report is preferred (package report): go test
// -json, JUnit XML (pytest, vitest, mocha's xunit, jest-junit, Maven,
// Gradle, ctest), jest's JSON, TAP (node --test), cargo's libtest output,
// unittest's verbose output. For explicit commands and make, the format is
// detected from the output (report.Detect), falling back to the text
// parsers of parse.go (summary lines of go test -v, TAP, node, jest,
// vitest, mocha, pytest and plain "N passed, N failed" lines).
//
// When a report file is expected but missing or unparseable: a command that
// exited 0 is not_evaluated ("report missing/unparseable"); one that exited
// non-zero is a failure, with an excerpt of its output.
//
// Every test's result is in Result.Tests (report.Case), for the gate to
// compare with a baseline; Passed, Failed, Errors and Skipped are the
// totals, each test counted once by its status (Failed never includes
// Errors: tests that could not run, and test files, modules or packages
// that could not be collected, report.KindCollection), as the runner's own
// summary counts them (go test -v's "---" lines for Go tests and
// subtests); Failing names the failed and errored tests with file:line
// where known, a parent test that failed through its subtests as
// "pkg.TestX (1 of 3 subtests failed: b)".
//
// # Selection and re-runs
//
// Request.Only runs only the named tests (names as in Result.Tests) with
// the runner's own selection: go test -run per package, pytest node ids,
// jest/vitest -t, mocha --grep, node --test --test-name-pattern, cargo test
// -- --exact, unittest -k, Maven -Dtest, Gradle --tests, ctest -R. When the
// runner cannot select (make, explicit commands, a runner hidden in a
// script), everything runs and Result.Selected is false.
// Request.Rerun re-runs the failed tests once, with the same selection;
// the tests that pass then are in Result.Flaky. Result.Tests keeps the
// first outcome.
//
// # Status (fail closed)
//
//   - pass: every command exited 0, at least one test was counted as
//     executed (passed+failed > 0) and none failed.
//   - fail: any failed (or errored) test, any non-zero exit, or a timeout
//     (but not_evaluated when nothing ran but test files, modules or
//     packages that could not be collected)
//     (the whole process group is killed).
//   - not_evaluated: no command detected, the runner is missing (cannot be
//     started, exit 127 "command not found", "No module named pytest", npx
//     missing packages, with no test counted), the runner says it found no
//     tests, an expected report is missing or unparseable after exit 0, or
//     every command exited 0 and no test was counted.
//
// Zero tests is never a pass.
package verify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/verify/report"
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
	// LogDir is where full output logs and report files go (e.g.
	// .ultra/state/runs/<id>/verify/). Each call makes a new attempt-NNN
	// directory in it, with files per command. Empty means a new directory
	// under the system temporary directory.
	LogDir string
	// Only, when set, runs only these tests (names as in Result.Tests,
	// e.g. the previously failing ones), with the runner's selection.
	// When the runner cannot select, everything runs and Result.Selected
	// is false.
	Only []string
	// Rerun re-runs once, after the run, the tests that failed, and
	// reports those that passed then in Result.Flaky.
	Rerun bool
	// RerunWhenAll is Rerun when Only could not be honoured by any command
	// and the whole suite ran (Result.AnySelected false): such a run is a
	// full one.
	RerunWhenAll bool
	// Restore, when set, puts Dir back as it was before the tests ran
	// (the tree they test, nothing they left in it) before failed tests
	// run again: a test cannot leave a marker in its checkout that makes
	// its second run pass.
	Restore func() error
	// CommandSource says where Commands come from (the Source of their
	// results); empty: SourceConfig.
	CommandSource string
	// Sandbox runs every test command contained (package sandbox); nil
	// runs them as they are.
	Sandbox *proc.Sandbox
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
	// MaxFailing bounds the failing test names kept in Failing, per
	// command and in total (Tests has every test).
	MaxFailing = 200
	// MaxFailingDetail is how many failing tests the summary shows with
	// their message and location; the rest up to MaxFailing by name.
	MaxFailingDetail = 60
	MaxExcerpt       = 4 << 10  // bytes of Result.Excerpt
	MaxSummary       = 24 << 10 // bytes of Result.Summary()
	// MaxRerun bounds the failed tests re-run for Request.Rerun; with
	// more, nothing is re-run (it is not flakiness).
	MaxRerun = 100
)

// SourceConfig is the Source of commands given explicitly in the Request,
// unless Request.CommandSource says otherwise.
const SourceConfig = "verify.command in .ultra/config"

func (r Request) commandSource() string {
	if r.CommandSource != "" {
		return r.CommandSource
	}
	return SourceConfig
}

// Result is what a verification found.
type Result struct {
	Status   Status          `json:"status"`
	Reason   string          `json:"reason"` // one line a person or model can act on
	Commands []CommandResult `json:"commands,omitempty"`
	// Totals over commands, each test once by its status: Failed never
	// includes Errors (tests that could not run: crashes, setup errors;
	// and test files, modules or packages that could not be collected:
	// import errors, build failures, report.KindCollection).
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Errors  int `json:"errors,omitempty"`
	// Failing names failing tests (at most MaxFailing), as
	// "name (file:line)" when the location is known.
	Failing []string `json:"failing,omitempty"`
	// Tests is every test's (first) result, over all commands.
	Tests []report.Case `json:"tests,omitempty"`
	// Flaky names the tests that failed and then passed on re-run
	// (Request.Rerun).
	Flaky []string `json:"flaky,omitempty"`
	// Selected: Request.Only was honoured by every command run; false
	// when everything ran instead (or Only was empty).
	Selected bool          `json:"selected,omitempty"`
	Excerpt  string        `json:"excerpt,omitempty"` // readable excerpt of failure output, at most MaxExcerpt bytes
	Duration time.Duration `json:"duration"`
}

// CommandResult is what one command did.
type CommandResult struct {
	Command string `json:"command"`
	Source  string `json:"source"`        // why it was chosen (Detected.Reason, or SourceConfig)
	Dir     string `json:"dir,omitempty"` // where it ran, relative to Request.Dir; "" is the root
	Runner  string `json:"runner,omitempty"`
	// Format is the format the results were read from: "go-json",
	// "junit", "jest-json", "tap", "cargo", "unittest", or "text" (the
	// text parsers); empty when nothing was read.
	Format   string `json:"format,omitempty"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// NotFound: the runner could not be started or is not installed
	// (exit 127 "command not found", "No module named pytest", …) before
	// any test was counted.
	NotFound bool `json:"not_found,omitempty"`
	// ReportOK: a machine-readable report was read (Tests come from it).
	ReportOK bool `json:"report_ok,omitempty"`
	// ReportPaths are the report files read (kept under the log
	// directory); empty when the report was the output itself.
	ReportPaths []string `json:"report_paths,omitempty"`
	Passed      int      `json:"passed"`
	Failed      int      `json:"failed"` // not including Errors
	Skipped     int      `json:"skipped"`
	Errors      int      `json:"errors,omitempty"`
	Failing     []string `json:"failing,omitempty"`
	// Tests is every test's result from this command.
	Tests []report.Case `json:"tests,omitempty"`
	// Formats lists the output formats the counts were read from, e.g.
	// "go-json" or "jest"; empty when nothing was recognised.
	Formats []string `json:"formats,omitempty"`
	// Selected: only Request.Only's tests were asked for.
	Selected bool          `json:"selected,omitempty"`
	LogPath  string        `json:"log_path,omitempty"`
	Duration time.Duration `json:"duration"`
	// Rerun is the re-run of this command's failed tests (Request.Rerun).
	Rerun *CommandResult `json:"rerun,omitempty"`
	// ReportMissing says why a report the command should have written
	// could not be read ("" when there was none to read or it was read).
	ReportMissing string `json:"report_missing,omitempty"`
	// OutputLines is how many lines the command printed.
	OutputLines int `json:"output_lines,omitempty"`
	// Cause is the first compiler error of the output naming a file and
	// a line (report.CompileScanner): why a build failed.
	Cause string `json:"cause,omitempty"`

	excerpt      string // failure excerpt of this command
	noTests      string // the runner's own "no tests found" line, if any
	detail       string // why the command could not run, if it could not
	reportMissed string // why an expected report could not be read
}

// Detected is a test command found by Detect.
type Detected struct {
	// Kind is the ecosystem rule that matched: go, node, pytest, cargo,
	// maven, gradle, cmake, make, unittest.
	Kind string `json:"kind"`
	// Runner is the test runner: go, jest, vitest, mocha, node-test,
	// script (an unrecognised runner behind scripts.test), pytest, cargo,
	// nextest, maven, gradle, ctest, make, unittest.
	Runner string `json:"runner"`
	// Command is the shell command, run in Dir. "$ULTRA_REPORT" in it is
	// the report file, set per run.
	Command string `json:"command"`
	Dir     string `json:"dir,omitempty"` // relative to the detected root; "" is the root
	// Reason says why this command was chosen.
	Reason string `json:"reason"`
	// Format is the report format: go-json, junit, jest-json, tap, cargo,
	// unittest, or auto (detected from the output).
	Format string `json:"format"`
	// Report is where the report is read: "" for the output, "$ULTRA_REPORT"
	// for the file the command writes, or file globs relative to Dir.
	Report string `json:"report,omitempty"`

	sel selector // how to run only some tests
}

// AnySelected reports whether any command ran only some tests (a
// selection of Request.Only): if none did, the whole suite ran.
func (r *Result) AnySelected() bool {
	for _, c := range r.Commands {
		if c.Selected {
			return true
		}
	}
	return false
}

// New returns the default Verifier.
func New() Verifier { return &runner{} }

// Summary renders the result compactly for the model: status and reason,
// counts, each failing test with the key line of its message and its
// location, then the commands with their log paths. It is at most
// MaxSummary bytes whatever the output size.
func (r *Result) Summary() string {
	if r == nil {
		return "verify: not_evaluated — no result"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "verify: %s — %s\n", r.Status, clip(oneLine(r.Reason), 400))
	fmt.Fprintf(&b, "tests: %s; %s\n", countsText(r.Passed, r.Failed, r.Errors, r.Skipped), r.Duration.Round(time.Millisecond))
	if r.Selected {
		b.WriteString("only the selected tests ran\n")
	}
	if len(r.Flaky) > 0 {
		fmt.Fprintf(&b, "flaky (failed, then passed on re-run): %s\n", clip(strings.Join(r.Flaky, ", "), 600))
	}

	r.writeFailing(&b)

	// Commands and logs last: they are where to look for more.
	const maxCommands = 6
	for i, c := range r.Commands {
		if i == maxCommands {
			fmt.Fprintf(&b, "… and %d more commands\n", len(r.Commands)-maxCommands)
			break
		}
		cmd := c.Command
		if c.Dir != "" {
			cmd = "cd " + c.Dir + " && " + cmd
		}
		fmt.Fprintf(&b, "$ %s\n", clip(oneLine(cmd), 200))
		how := c.Format
		if how == "" {
			how = "no results read"
		}
		fmt.Fprintf(&b, "  %s; %s; %s; %s\n",
			c.exitText(), countsText(c.Passed, c.Failed, c.Errors, c.Skipped), how, c.Duration.Round(time.Millisecond))
		if n := c.note(); n != "" {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
		if c.LogPath != "" {
			fmt.Fprintf(&b, "  log: %s\n", clip(c.LogPath, 300))
		}
		if c.Rerun != nil && c.Rerun.LogPath != "" {
			fmt.Fprintf(&b, "  re-run log: %s\n", clip(c.Rerun.LogPath, 300))
		}
	}

	if ex := strings.TrimRight(r.Excerpt, "\n"); ex != "" && r.needsExcerpt() {
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

// needsExcerpt: the failing tests' own lines do not say everything (no
// per-test messages, or a command failed for another reason).
func (r *Result) needsExcerpt() bool {
	if r.Status == StatusPass {
		return false
	}
	withMessage := 0
	for _, t := range r.Tests {
		if isBad(t.Status) && strings.TrimSpace(t.Message) != "" {
			withMessage++
		}
	}
	if withMessage == 0 {
		return true
	}
	for _, c := range r.Commands {
		if c.TimedOut || c.NotFound || (c.ExitCode != 0 && c.Failed+c.Errors == 0) || !c.ReportOK {
			return true
		}
	}
	return false
}

// writeFailing lists the failing tests: the first MaxFailingDetail with
// location and the key line of their message, then names only, up to
// MaxFailing, then how many more.
func (r *Result) writeFailing(b *strings.Builder) {
	var bad []report.Case
	for _, t := range r.Tests {
		if isBad(t.Status) {
			bad = append(bad, t)
		}
	}
	total := max(r.Failed+r.Errors, len(bad), len(r.Failing))
	if total == 0 {
		return
	}
	fmt.Fprintf(b, "failing (%d):\n", total)
	shown := 0
	if len(bad) == 0 {
		// Names only, from the text parsers.
		for _, name := range r.Failing {
			fmt.Fprintf(b, "  - %s\n", clip(oneLine(name), 200))
			shown++
		}
	} else {
		var compact []string
		for i, t := range bad {
			if i >= MaxFailing {
				break
			}
			if i < MaxFailingDetail {
				line := "  - " + clip(oneLine(t.Name), 200)
				if t.Status == report.Error {
					line += " [error]"
				}
				k := keyLine(t.Message)
				// A compiler's error names its place itself.
				if loc := location(t); loc != "" && !strings.HasPrefix(strings.TrimPrefix(k, "./"), loc+":") {
					line += " (" + clip(loc, 120) + ")"
				}
				if k != "" {
					line += ": " + k
				}
				b.WriteString(line + "\n")
			} else {
				compact = append(compact, clip(oneLine(t.Name), 120))
			}
			shown++
		}
		if len(compact) > 0 {
			fmt.Fprintf(b, "  also: %s\n", strings.Join(compact, ", "))
		}
	}
	if total > shown {
		fmt.Fprintf(b, "  … and %d more (see the log)\n", total-shown)
	}
}

func isBad(s report.Status) bool { return s == report.Failed || s == report.Error }

// location is "file:line" of a case, or "" when unknown.
func location(t report.Case) string {
	switch {
	case t.File == "":
		return ""
	case t.Line > 0:
		return fmt.Sprintf("%s:%d", t.File, t.Line)
	}
	return t.File
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
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
