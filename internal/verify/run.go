package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/verify/report"
)

// defaultGoFlags is added to the person's GOFLAGS (from the environment
// or the go env file) for test commands, unless they give a -count of
// their own: results come from a real run, not from go's test cache.
const defaultGoFlags = "-count=1"

// runner is the default Verifier.
type runner struct{}

// planned is a command about to run.
type planned struct {
	d        Detected
	command  string // d.Command, or its selection of Request.Only
	selected bool
}

// Verify runs the explicit commands of req, or the first detected group,
// and judges the results. On cancellation it returns the partial Result
// (not_evaluated) together with ctx's error.
func (r *runner) Verify(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	dir := req.Dir
	if dir == "" {
		return nil, errors.New("verify: no directory to test")
	}
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("verify: %s is not a directory", dir)
	}

	var cmds []Detected
	for _, c := range req.Commands {
		if strings.TrimSpace(c) != "" {
			cmds = append(cmds, Detected{Kind: "command", Runner: "command", Command: c, Reason: req.commandSource(), Format: "auto"})
		}
	}
	if len(cmds) == 0 {
		found, notes, err := detect(dir)
		if err != nil {
			return nil, fmt.Errorf("verify: detecting test command: %w", err)
		}
		if len(found) == 0 {
			return &Result{
				Status:   StatusNotEvaluated,
				Reason:   noCommandReason(dir, notes),
				Duration: time.Since(start),
			}, nil
		}
		cmds = firstGroup(found)
	}
	return runCommands(ctx, req, cmds, start)
}

// runCommands runs cmds (selecting req.Only, re-running failures when
// req.Rerun) and judges the results.
func runCommands(ctx context.Context, req Request, cmds []Detected, start time.Time) (*Result, error) {
	dir := req.Dir
	attemptDir, err := newAttemptDir(req.LogDir)
	if err != nil {
		return nil, err
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	env := testEnv()

	plan, selected := planCommands(cmds, cleanNames(req.Only))
	res := &Result{Selected: selected}
	for i, p := range plan {
		cr, err := runOne(ctx, dir, p.d, p.command, attemptDir, strconv.Itoa(i+1), timeout, env, req.Sandbox)
		if err != nil {
			return nil, err
		}
		cr.Selected = p.selected
		res.Commands = append(res.Commands, cr)
		if ctx.Err() != nil {
			return canceled(res, ctx, start)
		}
	}
	if req.Rerun || (req.RerunWhenAll && !res.AnySelected()) {
		if req.Restore != nil && res.WouldRerun() {
			if err := req.Restore(); err != nil {
				return nil, fmt.Errorf("verify: restoring the checkout before failed tests run again: %w", err)
			}
		}
		for i := range res.Commands {
			flaky, err := rerunFailed(ctx, dir, plan[i].d, &res.Commands[i], attemptDir, strconv.Itoa(i+1)+"-rerun", timeout, env, req.Sandbox)
			if err != nil {
				return nil, err
			}
			if ctx.Err() != nil {
				return canceled(res, ctx, start)
			}
			res.Flaky = append(res.Flaky, flaky...)
		}
	}
	judge(res, timeout)
	res.Duration = time.Since(start)
	return res, nil
}

// WouldRerun says whether Request.Rerun would have run again some of the
// tests of res (which ran without it): a command that did not time out
// has from 1 to MaxRerun failed tests.
func (res *Result) WouldRerun() bool {
	for i := range res.Commands {
		if rerunnable(&res.Commands[i]) {
			return true
		}
	}
	return false
}

// rerunnable says whether rerunFailed runs some of cr's tests again: from
// 1 to MaxRerun failed, and the command did not time out.
func rerunnable(cr *CommandResult) bool {
	bad := 0
	for _, t := range cr.Tests {
		if isBad(t.Status) {
			bad++
		}
	}
	return bad > 0 && bad <= MaxRerun && !cr.TimedOut
}

func canceled(res *Result, ctx context.Context, start time.Time) (*Result, error) {
	res.Status = StatusNotEvaluated
	res.Reason = "verification canceled: " + ctx.Err().Error()
	res.Duration = time.Since(start)
	return res, ctx.Err()
}

// cleanNames drops empty and repeated names.
func cleanNames(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// planCommands applies the selection of only to cmds. selected is true
// when every command that runs selects (and only was not empty). A command
// that can select but owns none of the names (another Go module's) does
// not run; when no command can select any name, everything runs.
func planCommands(cmds []Detected, only []string) ([]planned, bool) {
	all := make([]planned, len(cmds))
	for i, d := range cmds {
		all[i] = planned{d: d, command: d.Command}
	}
	if len(only) == 0 {
		return all, false
	}
	var plan []planned
	some, every := false, true
	for _, d := range cmds {
		var mine []string
		for _, n := range only {
			if d.owns(n, cmds) {
				mine = append(mine, n)
			}
		}
		if c, ok := d.selectCommand(mine); ok {
			plan = append(plan, planned{d: d, command: c, selected: true})
			some = true
			continue
		}
		if d.canSelect() && len(mine) == 0 && len(cmds) > 1 {
			continue // none of its tests is asked for
		}
		plan = append(plan, planned{d: d, command: d.Command})
		every = false
	}
	if !some {
		return all, false
	}
	return plan, every
}

// runOne runs one command and reads its results. The error is for ultra's
// own failures only.
func runOne(ctx context.Context, root string, d Detected, command, attemptDir, tag string, timeout time.Duration, env []string, sb *proc.Sandbox) (CommandResult, error) {
	name := tag + "-" + slug(strings.TrimSpace(d.Dir+" "+d.Runner+" "+command))
	logPath := filepath.Join(attemptDir, name+".log")
	cr := CommandResult{Command: command, Source: d.Reason, Dir: d.Dir, Runner: d.Runner, LogPath: logPath}
	reportPath := filepath.Join(attemptDir, name+".report"+reportExt(d.Format))
	keepDir := filepath.Join(attemptDir, name+"-reports")
	// The attempt directory was writable to the tests of the commands
	// before this one: whatever they left at this command's names (a
	// planted report, a symlink for ultra to write through) goes first.
	for _, p := range []string{logPath, reportPath, keepDir} {
		_ = os.RemoveAll(p)
	}
	// Make sure the log can be written, so that a failure of proc below
	// is the command's own.
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return cr, fmt.Errorf("verify: creating log file: %w", err)
	}
	f.Close()

	runDir := filepath.Join(root, filepath.FromSlash(d.Dir))
	start := time.Now()
	opts := proc.Options{
		Dir:        runDir,
		Env:        append(slices.Clip(env), "ULTRA_REPORT="+reportPath),
		Timeout:    timeout,
		MaxCapture: 16 << 10,
		LogPath:    logPath,
	}
	sb.Apply(&opts)
	pr, err := proc.Shell(ctx, command, opts)
	if err != nil {
		cr.ExitCode = -1
		cr.NotFound = true
		cr.detail = err.Error()
		cr.excerpt = err.Error()
		return cr, nil
	}
	cr.ExitCode = pr.ExitCode
	cr.TimedOut = pr.TimedOut
	cr.Duration = pr.Duration

	// The paths the tests report are where they saw the project.
	readResults(&cr, d, root, sb.Inside(root), reportPath, keepDir, start, pr.Output)
	if cr.Passed+cr.Failed+cr.Errors == 0 && !cr.TimedOut && cr.ExitCode != 0 {
		if line, ok := runnerMissing(cr.ExitCode, pr.Output); ok {
			cr.NotFound = true
			cr.detail = line
		}
	}
	return cr, nil
}

func reportExt(format string) string {
	switch format {
	case "junit":
		return ".xml"
	case "jest-json":
		return ".json"
	}
	return ""
}

var (
	notFoundRE = regexp.MustCompile(`(?m)^.*(?:command not found|not found|No such file or directory).*$`)
	// missingRunnerRE: the runner is not installed, though the shell found
	// the program that should have started it.
	missingRunnerRE = regexp.MustCompile(`(?m)^.*(?:No module named (?:pytest|unittest)\b|npx canceled due to missing packages|could not determine executable to run|Cannot find module '[^']*node_modules/(?:jest|vitest|mocha)/|error: no such command: ` + "`" + `nextest` + "`" + `).*$`)
)

// runnerMissing reports whether the output says the runner itself is
// missing, with the line saying so.
func runnerMissing(exit int, out string) (string, bool) {
	if m := missingRunnerRE.FindString(out); m != "" {
		return clip(strings.TrimSpace(cleanLine(m)), 200), true
	}
	if exit == 127 {
		if m := notFoundRE.FindString(out); m != "" {
			return clip(strings.TrimSpace(cleanLine(m)), 200), true
		}
		return "exit 127, command not found", true
	}
	return "", false
}

// rerunFailed re-runs the failed tests of cr once, with the runner's
// selection, records the re-run in cr.Rerun and returns the tests that
// passed then. It re-runs nothing when the runner cannot select, nothing
// failed, or more than MaxRerun tests failed.
func rerunFailed(ctx context.Context, root string, d Detected, cr *CommandResult, attemptDir, tag string, timeout time.Duration, env []string, sb *proc.Sandbox) ([]string, error) {
	var bad, sel []string
	for _, t := range cr.Tests {
		if isBad(t.Status) {
			bad = append(bad, t.Name)
			sel = append(sel, SelectName(t.Name, t.Suite, t.File))
		}
	}
	if !rerunnable(cr) {
		return nil, nil
	}
	cmd, ok := d.selectCommand(sel)
	if !ok {
		return nil, nil
	}
	rr, err := runOne(ctx, root, d, cmd, attemptDir, tag, timeout, env, sb)
	if err != nil {
		return nil, err
	}
	rr.Selected = true
	cr.Rerun = &rr
	again := map[string]report.Status{}
	for _, t := range rr.Tests {
		again[t.Name] = t.Status
	}
	var flaky []string
	for _, n := range bad {
		if again[n] == report.Passed {
			flaky = append(flaky, n)
		}
	}
	return flaky, nil
}

// judge sets Status, Reason, totals, Tests, Failing and Excerpt from the
// commands' results, failing closed.
func judge(res *Result, timeout time.Duration) {
	var failReasons, neReasons []string
	failing := newNameSet(MaxFailing)
	var excerpts []string
	for _, c := range res.Commands {
		res.Passed += c.Passed
		res.Failed += c.Failed
		res.Skipped += c.Skipped
		res.Errors += c.Errors
		res.Tests = append(res.Tests, c.Tests...)
		for _, n := range c.Failing {
			failing.add(n)
		}
		q := quote(c.Command)
		bad := true
		switch {
		case c.TimedOut:
			failReasons = append(failReasons, fmt.Sprintf("%s timed out after %s (whole process group killed)", q, timeout))
		case c.NotFound:
			neReasons = append(neReasons, fmt.Sprintf("test runner not found for %s: %s", q, oneLine(c.detail)))
		case c.ExitCode != 0 && c.Failed+c.Errors == 0 && c.Passed == 0 && c.noTests != "":
			neReasons = append(neReasons, fmt.Sprintf("no tests found: %s says %q", q, c.noTests))
		case c.ExitCode != 0 && c.Failed+c.Errors == 0:
			r := fmt.Sprintf("%s %s without reporting a failing test", q, exitWords(c.ExitCode))
			switch {
			case c.reportMissed != "":
				r = fmt.Sprintf("%s %s and its report could not be read (%s)", q, exitWords(c.ExitCode), c.reportMissed)
			case len(c.Formats) == 0:
				r = c.unreadable()
			}
			failReasons = append(failReasons, r+c.cause())
		case c.ExitCode != 0 || c.Failed+c.Errors > 0:
			// Counted below; the failing tests say it best.
		case c.reportMissed != "":
			neReasons = append(neReasons, fmt.Sprintf("%s exited 0 but its report is missing or unparseable: %s", q, c.reportMissed))
		default:
			bad = false
		}
		if bad && c.excerpt != "" {
			ex := c.excerpt
			if len(res.Commands) > 1 {
				ex = "$ " + clip(oneLine(c.Command), 120) + "\n" + ex
			}
			excerpts = append(excerpts, ex)
		}
	}
	res.Failing = failing.list
	res.Excerpt = joinExcerpts(excerpts, MaxExcerpt)

	executed := res.Passed + res.Failed + res.Errors
	switch {
	case nothingCollected(res) && len(failReasons) == 0:
		// Only test files, modules or packages that could not be
		// collected: nothing was evaluated.
		res.Status = StatusNotEvaluated
		res.Reason = strings.Join(append([]string{"no test could run: " + badReason(res)}, neReasons...), "; ")
	case res.Failed+res.Errors > 0 || len(failReasons) > 0:
		res.Status = StatusFail
		var parts []string
		if r := badReason(res); r != "" {
			parts = append(parts, r)
		}
		// A timeout first: it is the most urgent thing to know.
		for _, r := range failReasons {
			if strings.Contains(r, "timed out") {
				parts = append([]string{r}, parts...)
			} else {
				parts = append(parts, r)
			}
		}
		if len(res.Flaky) > 0 {
			parts = append(parts, fmt.Sprintf("%d passed on re-run (flaky)", len(res.Flaky)))
		}
		parts = append(parts, neReasons...)
		res.Reason = strings.Join(parts, "; ")
	case len(neReasons) > 0:
		res.Status = StatusNotEvaluated
		res.Reason = strings.Join(neReasons, "; ")
	case executed == 0:
		res.Status = StatusNotEvaluated
		who := "all commands exited 0"
		if len(res.Commands) == 1 {
			who = quote(res.Commands[0].Command) + " exited 0"
		}
		res.Reason = who + " but no tests ran"
		var unread []string
		for _, c := range res.Commands {
			if len(c.Formats) > 0 {
				unread = nil // a summary said how many ran
				break
			}
			unread = append(unread, c.unreadable())
		}
		switch {
		case len(unread) > 0:
			// Nothing was read: that is not "no tests ran".
			res.Reason = strings.Join(unread, "; ")
		case res.Skipped > 0:
			res.Reason += fmt.Sprintf(" (%d skipped)", res.Skipped)
		}
		if res.Excerpt == "" && len(res.Commands) > 0 {
			res.Excerpt = clip(res.Commands[len(res.Commands)-1].excerpt, MaxExcerpt)
		}
	default:
		res.Status = StatusPass
		res.Reason = plural(res.Passed, "test") + " passed"
		if res.Skipped > 0 {
			res.Reason += fmt.Sprintf(", %d skipped", res.Skipped)
		}
	}
	res.Reason = clip(oneLine(res.Reason), 500)
}

func joinExcerpts(parts []string, budget int) string {
	var b strings.Builder
	for i, p := range parts {
		share := (budget - b.Len()) / (len(parts) - i)
		if share < 80 {
			break
		}
		b.WriteString(clip(strings.TrimRight(p, "\n"), share-1))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// unreadable says that nothing in c's output could be read: neither a
// test's result nor a summary (see parse.go for what is read).
func (c *CommandResult) unreadable() string {
	status := "killed by a signal"
	if c.ExitCode >= 0 {
		status = "exit status " + strconv.Itoa(c.ExitCode)
	}
	return fmt.Sprintf("%s: the output has no summary ultra can read: %s, %s", quote(c.Command), plural(c.OutputLines, "line"), status)
}

// cause is "; its first error: …" when the output has a compiler error
// naming a file and a line.
func (c *CommandResult) cause() string {
	if c.Cause == "" {
		return ""
	}
	return "; its first error: " + c.Cause
}

func exitWords(code int) string {
	if code < 0 {
		return "was killed by a signal"
	}
	return "exited " + strconv.Itoa(code)
}

func quote(cmd string) string { return "`" + clip(oneLine(cmd), 120) + "`" }

// newAttemptDir makes LogDir/attempt-NNN, the next free number. An empty
// LogDir means a fresh directory under the system temporary directory.
func newAttemptDir(logDir string) (string, error) {
	if logDir == "" {
		d, err := os.MkdirTemp("", "ultra-verify-")
		if err != nil {
			return "", fmt.Errorf("verify: creating log directory: %w", err)
		}
		logDir = d
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return "", fmt.Errorf("verify: creating log directory: %w", err)
	}
	logDir, err := filepath.Abs(logDir)
	if err != nil {
		return "", fmt.Errorf("verify: log directory: %w", err)
	}
	entries, err := os.ReadDir(logDir)
	if err != nil {
		return "", fmt.Errorf("verify: reading log directory: %w", err)
	}
	next := 1
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "attempt-")); err == nil && strings.HasPrefix(e.Name(), "attempt-") && n >= next {
			next = n + 1
		}
	}
	for range 1000 {
		dir := filepath.Join(logDir, fmt.Sprintf("attempt-%03d", next))
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("verify: creating log directory: %w", err)
		}
		next++ // taken by a concurrent attempt
	}
	return "", fmt.Errorf("verify: no free attempt directory in %s", logDir)
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// slug names a log file after its command.
func slug(cmd string) string {
	s := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(cmd), "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "command"
	}
	return s
}

// testEnv is the environment of test commands: the inherited one, plus
// CI=true, PYTHONDONTWRITEBYTECODE=1 (no __pycache__ in the tree), plus
// GOFLAGS when the user has none. ULTRA_REPORT is set per command.
// Credentials (proc.IsSecret) are not passed: the model reads test output.
func testEnv() []string {
	env := proc.Environ()
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "ULTRA_REPORT=") {
			out = append(out, kv)
		}
	}
	out = append(out, "CI=true")
	if _, ok := os.LookupEnv("PYTHONDONTWRITEBYTECODE"); !ok {
		out = append(out, "PYTHONDONTWRITEBYTECODE=1")
	}
	if flags, set := userGoFlags(); !strings.Contains(flags, "-count") && !strings.Contains(flags, "-test.count") {
		// The environment's GOFLAGS replaces the go env file's: keep the
		// person's flags and add fresh results to them.
		if set {
			out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "GOFLAGS=") })
		}
		out = append(out, "GOFLAGS="+strings.TrimSpace(flags+" "+defaultGoFlags))
	}
	return out
}

// userGoFlags is the person's GOFLAGS, from the environment or else the
// go env file (go env -w); set says whether either has one.
func userGoFlags() (flags string, set bool) {
	if v, ok := os.LookupEnv("GOFLAGS"); ok {
		return v, true
	}
	path := os.Getenv("GOENV")
	if path == "off" {
		return "", false
	}
	if path == "" {
		cfg, err := os.UserConfigDir()
		if err != nil {
			return "", false
		}
		path = filepath.Join(cfg, "go", "env")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "GOFLAGS="); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`), true
		}
	}
	return "", false
}
