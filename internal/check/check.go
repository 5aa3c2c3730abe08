// Package check runs a success criterion's scenario and captures the
// evidence itself: the model never says whether a criterion passed.
//
// Runner starts the check supervisor (ultra's own program, Supervise) in
// the check's sandbox, hands it the criterion's check on stdin and reads
// one sealed report from a pipe of its own. The supervisor runs next to the
// programs under test (inside the sandbox's network namespace, so it can
// reach a server there that nothing outside can) and drives them: a
// command, an HTTP request, keys in a tmux pane, a headless browser, a
// GUI program on a private X server. It evaluates the check's assertions
// on what it captured (exit code, output, the response, pane captures,
// the page's text and DOM, the screen's text), stops everything it
// started and reports what it found left over.
//
// A check passes only when the report arrived intact, every assertion
// held, and nothing was left over. It fails when an assertion did not
// hold. It is blocked when it could not be judged: a timeout, a program
// or tool that could not start, a supervisor that did not report, a
// process that ignored SIGTERM or escaped its group, a port still bound.
//
// The channels (every expect is a Go regular expression, unanchored):
//
//   - command: bash -c run (sh without bash); expect_exit (default 0),
//     expect_stdout, expect_stderr. Evidence: command.txt.
//   - http: start runs the server; once port takes connections on
//     127.0.0.1 or [::1] (a port taken before the start blocks the check),
//     one request (method, path, headers, body; no proxy, no redirects
//     followed); expect_status, expect_body, expect_json (a dotted path,
//     a.b.0.c, to a pattern its value must match; a missing path fails).
//     Evidence: http.txt.
//   - tmux: start runs in a pane of a private tmux server (width×height,
//     default 120×40); each step sends its keys and waits up to 5 s for
//     the pane's text (scrollback included) to match expect. Keys are
//     split into send-keys arguments on spaces, '…' and "…" keeping
//     spaces inside a word: "hello Enter" types hello and presses Enter,
//     "'a b' Enter" types a b (see splitKeys). Evidence: tmux.txt.
//   - browser: start runs the server; headless chromium loads url (on
//     localhost, 127.0.0.1 or [::1]) and runs the steps (click a selector,
//     type text into a selector, wait_text up to 5 s); expect_text
//     matches the page's text, expect_selector must find an element.
//     Evidence: browser-actions.txt and a full-page browser.png.
//   - desktop: start runs a GUI program on a private X server (Xvfb,
//     width×height pixels, default 1024×768); the steps click text read
//     off the screen (tesseract) or a point, type text, press keys
//     (xdotool), wait up to 5 s for the screen's text to match
//     (wait_text) or keep a screenshot; expect_text matches the screen's
//     text at the end. Two controls run the steps on an empty desktop and
//     the program without its input (see desktop.go). Evidence:
//     desktop-actions.txt, desktop.png, desktop-stepN.png and the
//     controls' desktop-control-empty.png and desktop-control-idle.png.
//
// Every attempt also writes receipt.txt: what was started and stopped.
package check

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/proc"
)

// Runner runs criteria's checks on one tree.
type Runner struct {
	// Dir is the directory the check runs in: a checkout of the tree
	// under judgement.
	Dir string
	// Sandbox builds the sandbox the check's processes run in (nil func
	// or nil result: uncontained, run directly). For tmux and browser it
	// must allow Unix sockets: tmux's server socket, chromium's process
	// singleton socket in its profile.
	Sandbox func(ch goal.Channel) (*proc.Sandbox, error)
	// Program starts the supervisor: ultra's program and SupervisorArg.
	Program []string
	// Env is extra environment for the supervisor (and so for the
	// programs under test).
	Env []string
	// EvidenceDir is the absolute directory this attempt's artifact files
	// are written to (created; "" writes none). EvidenceRel is the same
	// directory relative to the repository root (for EvidenceFile.Path).
	EvidenceDir string
	EvidenceRel string
	// Chromium is the browser program ("": chromium, chromium-browser or
	// google-chrome, from PATH or /usr/bin).
	Chromium string
}

// Result is what ultra observed when it ran a check.
type Result struct {
	Status goal.CriterionStatus // pass, fail or blocked
	// Summary is short (at most about 600 bytes): what the model may read,
	// the assertions and their results.
	Summary string
	// Reason is why it failed or is blocked, one line.
	Reason string
	// Signature is stable text of what failed (assertion names and the
	// observed values; no pids, timings or dates), for counting identical
	// failures.
	Signature string
	// Receipt is one line: what was started and stopped, the ports free
	// again, the leftovers.
	Receipt string
	// Files are the evidence files written into EvidenceDir (the
	// artifacts and receipt.txt), with their sha256 and size.
	Files []goal.EvidenceFile
	// Duration is the check's wall time.
	Duration time.Duration
}

// teardownReserve is how much longer than the check's timeout Runner
// waits for the supervisor, which needs time to stop what it started and
// report (a variable for the tests).
var teardownReserve = 20 * time.Second

// maxSummary bounds Result.Summary and Result.Reason.
const maxSummary = 600

// artifactNames are the evidence files a report may carry.
var artifactNames = map[string]bool{
	"command.txt": true, "http.txt": true, "tmux.txt": true, "browser-actions.txt": true, "browser.png": true,
	"desktop-actions.txt": true, "desktop.png": true, "desktop-control-empty.png": true, "desktop-control-idle.png": true,
}

// stepShot is the name of a desktop check's screenshot step's capture.
var stepShot = regexp.MustCompile(`^desktop-step[1-9][0-9]?\.png$`)

// Run runs c's check and returns what ultra observed.
func (r Runner) Run(ctx context.Context, c goal.Criterion) Result {
	began := time.Now()
	o := r.observe(ctx, c)
	res := o.result(c.Channel)
	if r.EvidenceDir != "" {
		files, err := r.writeEvidence(o, res)
		res.Files = files
		if err != nil {
			// Without its evidence no result stands.
			if res.Status == goal.CriterionBlocked {
				res.Reason = cut(res.Reason+"; writing the evidence: "+err.Error(), maxSummary)
			} else {
				res.Status = goal.CriterionBlocked
				res.Reason = "writing the evidence: " + err.Error()
				res.Signature = "blocked: writing the evidence"
			}
		}
	}
	res.Duration = time.Since(began)
	return res
}

// observation is everything Runner learned from one supervision.
type observation struct {
	blocked    string // why there is nothing to judge (no report, a timeout from outside, a refusal)
	blockedSig string
	rep        *report
	pid        int
	contained  bool
	exit       string // how the supervisor ended
	output     string // its stdout and stderr, for a diagnosis
	outside    []leftover
}

// block is an observation that ends before the supervisor reports.
func block(reason, sig string) *observation {
	return &observation{blocked: reason, blockedSig: sig}
}

// observe runs the supervisor and reads its report.
func (r Runner) observe(ctx context.Context, c goal.Criterion) *observation {
	if err := validate(c.Channel, c.Check); err != nil {
		return block(err.Error(), "blocked: "+err.Error())
	}
	if len(r.Program) == 0 {
		return block("no check supervisor program (Runner.Program is empty)", "blocked: no supervisor program")
	}
	if r.Dir == "" {
		return block("no directory to run the check in (Runner.Dir is empty)", "blocked: no directory")
	}
	timeout := c.Check.TimeoutSeconds
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	in := input{Key: make([]byte, 32), Channel: c.Channel, Check: c.Check, Timeout: timeout}
	if _, err := rand.Read(in.Key); err != nil {
		return block("no random key for the report: "+err.Error(), "blocked: no random key")
	}
	switch c.Channel {
	case goal.ChannelTmux:
		p, err := exec.LookPath("tmux")
		if err != nil {
			return block("tmux not found: apt-get install tmux (or your system's tmux package)", "blocked: tmux not found")
		}
		in.Tmux = p
	case goal.ChannelBrowser:
		p := FindChromium(r.Chromium)
		if p == "" {
			return block("chromium not found: apt-get install chromium (or set the browser program)", "blocked: chromium not found")
		}
		in.Chromium = p
	case goal.ChannelDesktop:
		ts := DesktopTools()
		if why := desktopMissing(ts); why != "" {
			return block(why, "blocked: desktop tools not found")
		}
		in.Desktop = map[string]string{}
		for _, t := range ts {
			in.Desktop[t.Name] = t.Path
		}
	}
	o := &observation{}
	var sb *proc.Sandbox
	if r.Sandbox != nil {
		var err error
		if sb, err = r.Sandbox(c.Channel); err != nil {
			return block("building the check's sandbox: "+err.Error(), "blocked: no sandbox")
		}
	}
	o.contained = sb != nil && sb.Wrap != nil
	if !o.contained {
		// Uncontained, the programs under test share ultra's uid: ultra
		// itself must not be readable through /proc (the report pipe, the
		// report's key in memory), as the supervisor is not.
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
	// Uncontained, what outlives the supervisor is found by a marker in
	// its environment. Contained, the PID namespace takes everything
	// along, and the programs under test get no mark that tells them
	// they are being checked.
	marker := ""
	env := append([]string(nil), r.Env...)
	if !o.contained {
		marker = "ULTRA_CHECK_RUN=" + randomHex()
		env = append(env, marker)
	}
	// The programs under test get no credentials (proc.Environ drops
	// them), like every command ultra runs for the model.
	opts := proc.Options{Dir: r.Dir, Env: proc.Environ(env...)}
	sb.Apply(&opts)
	name, args := r.Program[0], r.Program[1:]
	var extra []*os.File
	defer func() {
		for _, f := range extra {
			f.Close()
		}
	}()
	if opts.Wrap != nil {
		w, err := opts.Wrap(name, args, r.Dir)
		if err != nil {
			return block("the check's sandbox refused to start: "+err.Error(), "blocked: sandbox refused")
		}
		name, args, extra = w.Name, w.Args, w.Files
	}
	// The report pipe follows the wrapper's descriptors (3, 4, …).
	reportR, reportW, err := os.Pipe()
	if err != nil {
		return block("creating the report pipe: "+err.Error(), "blocked: no report pipe")
	}
	defer reportR.Close()
	extra = append(extra, reportW)
	in.ReportFD = 3 + len(extra) - 1
	stdin, err := json.Marshal(in)
	if err != nil {
		return block("encoding the check: "+err.Error(), "blocked: encoding the check")
	}
	// stdout and stderr are diagnostics only (the sandbox's init process
	// shares them with the programs under test).
	diag := proc.Capture{Max: maxCapture}
	cmd := exec.Command(name, args...)
	cmd.Dir = r.Dir
	cmd.Env = opts.Env
	cmd.ExtraFiles = extra
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = &diag
	cmd.Stderr = &diag
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A program under test that kept the output pipes open must not keep
	// Wait waiting.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	reportW.Close()
	if err != nil {
		return block(fmt.Sprintf("starting the check's supervisor (%s): %v", name, err), "blocked: supervisor did not start")
	}
	o.pid = cmd.Process.Pid
	var report capped
	read := make(chan struct{})
	go func() {
		_, _ = io.Copy(&report, reportR)
		close(read)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	hard := time.NewTimer(time.Duration(timeout)*time.Second + teardownReserve)
	defer hard.Stop()
	select {
	case <-done:
	case <-hard.C:
		_ = syscall.Kill(-o.pid, syscall.SIGKILL)
		<-done
		o.blocked = fmt.Sprintf("the check did not end within its %ds timeout and %s for its teardown: ultra killed its sandbox", timeout, teardownReserve)
		o.blockedSig = "blocked: the check did not end in time"
	case <-ctx.Done():
		_ = syscall.Kill(-o.pid, syscall.SIGKILL)
		<-done
		o.blocked = "the check was cancelled: " + context.Cause(ctx).Error()
		o.blockedSig = "blocked: cancelled"
	}
	// The supervisor held the only write end; if something else got hold
	// of it, the report is cut off here (and will not decode).
	select {
	case <-read:
	case <-time.After(2 * time.Second):
		reportR.Close()
		<-read
	}
	o.exit = exitText(cmd.ProcessState)
	o.output = diag.String()
	// The sandbox's PID namespace took the rest with it; uncontained,
	// what outlived the supervisor still carries the check's marker.
	if marker != "" {
		o.outside = sweepMarker(marker)
	}
	if o.blocked != "" {
		return o
	}
	if report.over {
		o.blocked = fmt.Sprintf("the check's supervisor did not report (killed?): its report pipe passed %d bytes", maxReport)
		o.blockedSig = "blocked: the supervisor did not report"
		return o
	}
	rep, err := open(in.Key, report.Bytes())
	if err != nil {
		why := err.Error()
		if errors.Is(err, errNoReport) {
			why = "the report pipe stayed empty"
		}
		o.blocked = fmt.Sprintf("the check's supervisor did not report (killed?): %s; it ended with %s", why, o.exit)
		if tail := excerpt(o.output, 200); tail != "" {
			o.blocked += "; its output: " + tail
		}
		o.blockedSig = "blocked: the supervisor did not report"
		return o
	}
	o.rep = rep
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		o.blocked = fmt.Sprintf("the check's supervisor reported but then ended with %s", o.exit)
		o.blockedSig = "blocked: the supervisor failed"
	}
	return o
}

// result decides the status from the observation: pass only when the
// report arrived, the scenario was not blocked, nothing was left over,
// there was at least one assertion and every assertion held.
func (o *observation) result(ch goal.Channel) Result {
	var res Result
	rep := o.rep
	if rep == nil {
		rep = &report{Channel: ch}
	}
	leftovers := append(append([]leftover(nil), rep.Leftovers...), o.outside...)
	var failed []assertion
	for _, a := range rep.Assertions {
		if !a.OK {
			failed = append(failed, a)
		}
	}
	var reasons, sigs []string
	switch {
	case o.blocked != "":
		reasons, sigs = append(reasons, o.blocked), append(sigs, o.blockedSig)
	case rep.Blocked != "":
		why := rep.Blocked
		if rep.BlockedDetail != "" {
			why += ": " + rep.BlockedDetail
		}
		reasons, sigs = append(reasons, why), append(sigs, "blocked: "+rep.Blocked)
	}
	if len(leftovers) > 0 {
		var ls, ss []string
		for _, l := range leftovers {
			ls = append(ls, l.String())
			ss = append(ss, l.stable())
		}
		reasons = append(reasons, "leftover: "+strings.Join(ls, "; "))
		sigs = append(sigs, "blocked: leftover: "+strings.Join(ss, "; "))
	}
	if len(reasons) == 0 && len(rep.Assertions) == 0 {
		reasons, sigs = append(reasons, "the check asserted nothing"), append(sigs, "blocked: nothing asserted")
	}
	switch {
	case len(reasons) > 0:
		res.Status = goal.CriterionBlocked
		if len(failed) > 0 {
			reasons = append(reasons, "and "+renderAssertions(failed))
		}
		res.Reason = cut(oneLine(strings.Join(reasons, "; ")), maxSummary)
		res.Signature = oneLine(strings.Join(sigs, "; "))
	case len(failed) > 0:
		res.Status = goal.CriterionFail
		res.Reason = cut(oneLine(renderAssertions(failed)), maxSummary)
		var ss []string
		for _, a := range failed {
			ss = append(ss, fmt.Sprintf("%s want %s got %s", a.Name, a.Want, stableGot(a.Got)))
		}
		res.Signature = oneLine("fail " + string(ch) + ": " + strings.Join(ss, "; "))
	default:
		res.Status = goal.CriterionPass
	}
	var parts []string
	if rep.Observed != "" {
		parts = append(parts, rep.Observed)
	}
	for _, a := range rep.Assertions {
		parts = append(parts, renderAssertion(a))
	}
	if res.Status == goal.CriterionBlocked {
		parts = append(parts, "BLOCKED: "+res.Reason)
	}
	res.Summary = cut(oneLine(strings.Join(parts, "; ")), maxSummary)
	res.Receipt = o.receipt(rep, leftovers)
	return res
}

// renderAssertion is "expect_status 200 ✓" or "expect_status 200 ✗ got 404".
func renderAssertion(a assertion) string {
	if a.OK {
		return a.Name + " " + a.Want + " ✓"
	}
	return a.Name + " " + a.Want + " ✗ got " + excerpt(a.Got, 120)
}

func renderAssertions(as []assertion) string {
	var out []string
	for _, a := range as {
		out = append(out, renderAssertion(a))
	}
	return strings.Join(out, "; ")
}

// receipt is one line: started, stopped, ports, leftovers.
func (o *observation) receipt(rep *report, leftovers []leftover) string {
	var started, stopped []string
	if o.pid != 0 {
		how := "uncontained"
		if o.contained {
			how = "sandboxed"
		}
		started = append(started, fmt.Sprintf("supervisor pid %d (%s)", o.pid, how))
	}
	started = append(started, rep.Started...)
	stopped = append(stopped, rep.Stopped...)
	if o.pid != 0 {
		stopped = append(stopped, "supervisor "+o.exit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "started: %s; stopped: %s", orNone(started), orNone(stopped))
	for _, p := range rep.Ports {
		if p.Free {
			fmt.Fprintf(&b, "; port %d free", p.Port)
		} else {
			fmt.Fprintf(&b, "; port %d STILL TAKES CONNECTIONS", p.Port)
		}
	}
	var ls []string
	for _, l := range leftovers {
		ls = append(ls, l.String())
	}
	fmt.Fprintf(&b, "; leftovers: %s", orNone(ls))
	return oneLine(b.String())
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// writeEvidence writes the report's artifacts and the receipt into
// EvidenceDir, never through a symlink and never over a file.
func (r Runner) writeEvidence(o *observation, res Result) ([]goal.EvidenceFile, error) {
	if !filepath.IsAbs(r.EvidenceDir) {
		return nil, fmt.Errorf("the evidence directory %q is not absolute", r.EvidenceDir)
	}
	if err := os.MkdirAll(r.EvidenceDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the evidence directory: %w", err)
	}
	if fi, err := os.Lstat(r.EvidenceDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the evidence directory %s is not a directory (a symlink?)", r.EvidenceDir)
	}
	var arts []artifact
	if o.rep != nil {
		for _, a := range o.rep.Artifacts {
			if artifactNames[a.Name] || stepShot.MatchString(a.Name) {
				arts = append(arts, a)
			}
		}
	}
	var rc strings.Builder
	fmt.Fprintf(&rc, "%s\n\nstatus: %s\n", res.Receipt, res.Status)
	if res.Reason != "" {
		fmt.Fprintf(&rc, "reason: %s\n", res.Reason)
	}
	if o.rep == nil || o.rep.Blocked != "" || res.Status == goal.CriterionBlocked {
		if s := strings.TrimSpace(o.output); s != "" {
			fmt.Fprintf(&rc, "\n--- the supervisor's stdout and stderr\n%s\n", s)
		}
	}
	arts = append(arts, artifact{Name: "receipt.txt", Data: []byte(rc.String())})
	var files []goal.EvidenceFile
	for _, a := range arts {
		p := filepath.Join(r.EvidenceDir, a.Name)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return files, fmt.Errorf("creating %s: %w", p, err)
		}
		_, err = f.Write(a.Data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, fmt.Errorf("writing %s: %w", p, err)
		}
		sum := sha256.Sum256(a.Data)
		files = append(files, goal.EvidenceFile{
			Name: a.Name, Path: filepath.ToSlash(filepath.Join(r.EvidenceRel, a.Name)),
			SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(a.Data)),
		})
	}
	return files, nil
}

// FindChromium is the browser program: prog when it is set (a path or a
// name in PATH), else the first of chromium, chromium-browser and
// google-chrome found in PATH or /usr/bin; "" when there is none.
func FindChromium(prog string) string {
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	if prog != "" {
		names = []string{prog}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		if !strings.Contains(n, "/") {
			p := filepath.Join("/usr/bin", n)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// sweepMarker kills the processes that carry the check's marker in their
// environment (what outlived an uncontained supervisor) and returns them
// as leftovers.
func sweepMarker(marker string) []leftover {
	self := os.Getpid()
	want := []byte(marker)
	var out []leftover
	seen := map[int]bool{}
	for pass := 0; pass < 20; pass++ {
		found := 0
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return out
		}
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || !hasEntry(env, want) {
				continue
			}
			found++
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !seen[pid] {
				seen[pid] = true
				comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
				out = append(out, leftover{What: "process of the check still running after its supervisor ended; killed", Pid: pid, Comm: strings.TrimSpace(string(comm))})
			}
		}
		if found == 0 {
			break
		}
		time.Sleep(pollEvery)
	}
	return out
}

// hasEntry reports whether a NUL-separated environment holds entry.
func hasEntry(env, entry []byte) bool {
	for len(env) > 0 {
		i := bytes.IndexByte(env, 0)
		if i < 0 {
			return bytes.Equal(env, entry)
		}
		if bytes.Equal(env[:i], entry) {
			return true
		}
		env = env[i+1:]
	}
	return false
}

// capped is a buffer that stops growing at maxReport bytes.
type capped struct {
	buf  bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := maxReport - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte { return c.buf.Bytes() }

func exitText(ps *os.ProcessState) string {
	if ps == nil {
		return "no exit status"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + signalName(ws.Signal())
	}
	return fmt.Sprintf("exit %d", ps.ExitCode())
}

func randomHex() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// paneDead is the line tmux shows under a pane whose program ended; it
// holds the time.
var paneDead = regexp.MustCompile(`Pane is dead \([^)]*\)`)

// stableGot is an observed value without the parts that change from run
// to run by themselves.
func stableGot(s string) string {
	return excerpt(paneDead.ReplaceAllString(s, "Pane is dead"), 120)
}

// cut shortens s to at most n bytes.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return validUTF8(s[:n-3]) + "…"
}
