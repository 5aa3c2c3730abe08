package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
)

// defaultGoFlags is set as GOFLAGS for test commands when the user has set
// GOFLAGS neither in the environment nor in the go env file: results come
// from a real run, not from the test cache.
const defaultGoFlags = "-count=1"

// runner is the default Verifier.
type runner struct{}

// Verify runs the explicit commands of req, or the first detected one,
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
			cmds = append(cmds, Detected{Command: c, Source: SourceConfig})
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
		cmds = found[:1] // only the preferred one
	}

	attemptDir, err := newAttemptDir(req.LogDir)
	if err != nil {
		return nil, err
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	env := testEnv()

	res := &Result{}
	for i, c := range cmds {
		logPath := filepath.Join(attemptDir, fmt.Sprintf("%d-%s.log", i+1, slug(c.Command)))
		cr, err := runCommand(ctx, dir, c, logPath, timeout, env)
		if err != nil {
			return nil, err
		}
		res.Commands = append(res.Commands, cr)
		if ctx.Err() != nil {
			res.Status = StatusNotEvaluated
			res.Reason = "verification canceled: " + ctx.Err().Error()
			res.Duration = time.Since(start)
			return res, ctx.Err()
		}
	}
	judge(res, timeout)
	res.Duration = time.Since(start)
	return res, nil
}

// runCommand runs one command and reads its results. The error is for
// ultra's own failures only.
func runCommand(ctx context.Context, dir string, c Detected, logPath string, timeout time.Duration, env []string) (CommandResult, error) {
	cr := CommandResult{Command: c.Command, Source: c.Source, LogPath: logPath}
	// Make sure the log can be written, so that a failure of proc below
	// is the command's own.
	f, err := os.Create(logPath)
	if err != nil {
		return cr, fmt.Errorf("verify: creating log file: %w", err)
	}
	f.Close()

	pr, err := proc.Shell(ctx, c.Command, proc.Options{
		Dir:        dir,
		Env:        env,
		Timeout:    timeout,
		MaxCapture: 16 << 10,
		LogPath:    logPath,
	})
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

	var p parsed
	if lf, err := os.Open(logPath); err == nil {
		p, err = parseOutput(lf)
		lf.Close()
		if err != nil {
			p = parseString(pr.Output)
		}
	} else {
		p = parseString(pr.Output)
	}
	cr.Passed, cr.Failed, cr.Skipped = p.Passed, p.Failed, p.Skipped
	cr.Failing = p.Failing
	cr.Formats = p.Formats
	cr.excerpt = p.Excerpt
	cr.noTests = p.NoTests
	if cr.ExitCode == 127 && cr.Passed+cr.Failed == 0 && !cr.TimedOut {
		cr.NotFound = true
		cr.detail = notFoundLine(pr.Output)
	}
	return cr, nil
}

var notFoundRE = regexp.MustCompile(`(?m)^.*(?:command not found|not found|No such file or directory).*$`)

func notFoundLine(out string) string {
	if m := notFoundRE.FindString(out); m != "" {
		return clip(strings.TrimSpace(cleanLine(m)), 200)
	}
	return "exit 127, command not found"
}

// judge sets Status, Reason, totals, Failing and Excerpt from the
// commands' results, failing closed.
func judge(res *Result, timeout time.Duration) {
	var failReasons, neReasons []string
	failing := newNameSet(MaxFailing)
	var excerpts []string
	for _, c := range res.Commands {
		res.Passed += c.Passed
		res.Failed += c.Failed
		res.Skipped += c.Skipped
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
		case c.ExitCode != 0 && c.Failed == 0 && c.Passed == 0 && c.noTests != "":
			neReasons = append(neReasons, fmt.Sprintf("no tests found: %s says %q", q, c.noTests))
		case c.ExitCode != 0 && c.Failed == 0:
			what := "without reporting a failing test"
			if len(c.Formats) == 0 {
				what = "and no test results could be read from its output"
			}
			failReasons = append(failReasons, fmt.Sprintf("%s %s %s", q, exitWords(c.ExitCode), what))
		case c.ExitCode != 0 || c.Failed > 0:
			// Counted below; the failing tests say it best.
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

	executed := res.Passed + res.Failed
	switch {
	case res.Failed > 0 || len(failReasons) > 0:
		res.Status = StatusFail
		var parts []string
		if res.Failed > 0 {
			parts = append(parts, fmt.Sprintf("%d of %s failed", res.Failed, plural(executed, "test")))
		}
		// A timeout first: it is the most urgent thing to know.
		for _, r := range failReasons {
			if strings.Contains(r, "timed out") {
				parts = append([]string{r}, parts...)
			} else {
				parts = append(parts, r)
			}
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
		recognized := false
		for _, c := range res.Commands {
			recognized = recognized || len(c.Formats) > 0
		}
		switch {
		case !recognized:
			res.Reason += " (no test results found in the output)"
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
// CI=true, plus GOFLAGS when the user has none.
func testEnv() []string {
	env := os.Environ()
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CI=") {
			out = append(out, kv)
		}
	}
	out = append(out, "CI=true")
	if !goFlagsSet() {
		out = append(out, "GOFLAGS="+defaultGoFlags)
	}
	return out
}

// goFlagsSet reports whether GOFLAGS is set in the environment or in the
// go env file (go env -w), where setting it ourselves would override it.
func goFlagsSet() bool {
	if _, ok := os.LookupEnv("GOFLAGS"); ok {
		return true
	}
	path := os.Getenv("GOENV")
	if path == "off" {
		return false
	}
	if path == "" {
		cfg, err := os.UserConfigDir()
		if err != nil {
			return false
		}
		path = filepath.Join(cfg, "go", "env")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "GOFLAGS=") {
			return true
		}
	}
	return false
}
