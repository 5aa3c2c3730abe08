package check

import (
	"bytes"
	"context"
	"fmt"
	"github.com/ultra-dev/ultra/internal/goal"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stepTimeout bounds one tmux or browser step (within the check's own
// timeout).
const stepTimeout = 5 * time.Second

// tmuxSession is the name of the check's session on its private server.
const tmuxSession = "check"

// tmux runs check.start in a pane of a private tmux server (its own
// socket, no configuration file), sends each step's keys and polls the
// pane's text (scrollback included) until the step's expect matches or
// the step's time is up.
func (s *sup) tmux(ctx context.Context) {
	c := s.in.Check
	bin := s.in.Tmux
	if bin == "" {
		bin, _ = exec.LookPath("tmux")
	}
	if bin == "" {
		s.block("tmux not found: apt-get install tmux (or your system's tmux package)", "")
		return
	}
	dir, err := s.tempDir("ultra-check-tmux-")
	if err != nil {
		s.block("creating tmux's directory", err.Error())
		return
	}
	tm := s.tmuxClient(bin, filepath.Join(dir, "tmux.sock"))
	w, h := c.Width, c.Height
	if w == 0 {
		w = 120
	}
	if h == 0 {
		h = 40
	}
	var tr strings.Builder
	s.render = append(s.render, func() {
		s.rep.Artifacts = append(s.rep.Artifacts, artifact{Name: "tmux.txt", Data: []byte(tr.String())})
	})
	// First, the same keys against a program that does nothing (before
	// the program under test exists, so it cannot reach the control's
	// server): what the pane shows then is the terminal's echo of the keys
	// alone, and expectations it meets prove nothing about the program.
	echo, err := s.echoOnly(bin, w, h)
	if err != nil {
		fmt.Fprintf(&tr, "=== control: %v\n", err)
		s.block("the control run (the same keys against a program that does nothing) failed", err.Error())
		return
	}
	fmt.Fprintf(&tr, "=== control: the same keys against `sleep`, each pane after %s\n%s\n", echoWait, echo.log)
	if echo.all {
		s.rep.Observed = fmt.Sprintf("tmux %dx%d: the control run met every expect", w, h)
		s.rep.Assertions = append(s.rep.Assertions, assertion{Name: "control (the same keys to a program that does nothing)", Want: "meets no expect",
			Got: "every expect is met by the terminal's echo of the keys alone"})
		return
	}
	fmt.Fprintf(&tr, "$ tmux new-session -x %d -y %d -- %s -c %s\n", w, h, s.shell, strconv.Quote(c.Start))
	// remain-on-exit keeps the pane (and what it showed) when the program
	// ends; without the status line the pane has the whole size.
	_, err = tm("set-option", "-g", "remain-on-exit", "on", ";", "set-option", "-g", "status", "off", ";",
		"new-session", "-d", "-s", tmuxSession, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "--",
		// tmux tells the pane's program where its server is (TMUX): a
		// program under test must not drive its own pane, whose text is
		// the evidence.
		"env", "-u", "TMUX", "-u", "TMUX_PANE", s.shell, "-c", c.Start)
	serverPid := 0
	s.cleanups = append(s.cleanups, func() { s.stopTmux(tm, &serverPid) })
	if err != nil {
		s.block("tmux did not start the session", err.Error())
		return
	}
	if out, err := tm("display-message", "-p", "-t", tmuxSession, "#{pid} #{pane_pid}"); err == nil {
		f := strings.Fields(out)
		if len(f) == 2 {
			serverPid, _ = strconv.Atoi(f[0])
			s.rep.Started = append(s.rep.Started, fmt.Sprintf("tmux server pid %d (private socket), pane pid %s, %dx%d", serverPid, f[1], w, h))
		}
	}
	began := time.Now()
	ran := 0
	for i, st := range c.Steps {
		fmt.Fprintf(&tr, "\n=== step %d\n", i+1)
		if st.Keys != "" {
			words, _ := splitKeys(st.Keys)
			words = typeWords(words)
			fmt.Fprintf(&tr, "keys: %s → send-keys %s\n", strconv.Quote(st.Keys), quoteWords(words))
			if _, err := tm(append([]string{"send-keys", "-t", tmuxSession, "--"}, words...)...); err != nil {
				s.block(fmt.Sprintf("step %d: tmux send-keys failed", i+1), err.Error())
				return
			}
		}
		ran++
		if st.Expect == "" {
			continue
		}
		re := regexp.MustCompile("(?m)" + st.Expect) // validated; multi-line as matches
		name := fmt.Sprintf("step %d expect", i+1)
		stepEnd := time.Now().Add(stepTimeout)
		last, n := "", 0
		for {
			pane, err := tm("capture-pane", "-p", "-J", "-S", "-", "-t", tmuxSession)
			if err != nil {
				s.block(fmt.Sprintf("step %d: tmux capture-pane failed", i+1), err.Error())
				return
			}
			pane = trimPane(pane)
			if pane != last || n == 0 {
				n++
				fmt.Fprintf(&tr, "--- capture %d (+%s)\n%s", n, time.Since(began).Round(time.Millisecond), withNewline(pane))
				last = pane
			}
			if loc := re.FindStringIndex(pane); loc != nil {
				fmt.Fprintf(&tr, "expect %s: matched %s\n", strconv.Quote(st.Expect), strconv.Quote(excerpt(pane[loc[0]:loc[1]], 80)))
				s.rep.Assertions = append(s.rep.Assertions, assertion{Name: name, Want: strconv.Quote(st.Expect), Got: excerpt(pane[loc[0]:loc[1]], 80), OK: true})
				break
			}
			if ctx.Err() != nil {
				fmt.Fprintf(&tr, "expect %s: the check's time ran out\n", strconv.Quote(st.Expect))
				s.timedOut(fmt.Sprintf("at step %d waiting for the pane to show %s", i+1, strconv.Quote(st.Expect)), "")
				return
			}
			if time.Now().After(stepEnd) {
				fmt.Fprintf(&tr, "expect %s: not shown within %s\n", strconv.Quote(st.Expect), stepTimeout)
				s.rep.Assertions = append(s.rep.Assertions, assertion{Name: name, Want: strconv.Quote(st.Expect), Got: excerpt(lastLines(pane, 4), 160)})
				for j := i + 1; j < len(c.Steps); j++ {
					fmt.Fprintf(&tr, "\n=== step %d: not run\n", j+1)
				}
				s.rep.Observed = fmt.Sprintf("tmux %dx%d: %d of %d steps run", w, h, ran, len(c.Steps))
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	s.rep.Observed = fmt.Sprintf("tmux %dx%d: %d of %d steps run", w, h, ran, len(c.Steps))
}

// tmuxClient runs tmux commands against the private server at sock,
// each within a step's time.
func (s *sup) tmuxClient(bin, sock string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		cctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		defer cancel()
		cmd := exec.CommandContext(cctx, bin, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = s.env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.WaitDelay = time.Second
		if err := cmd.Run(); err != nil {
			return stdout.String(), fmt.Errorf("tmux %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
		}
		return stdout.String(), nil
	}
}

// echoWait is how long the control run lets the terminal echo each step.
const echoWait = 300 * time.Millisecond

type echoResult struct {
	all bool // every step's expect matched
	log string
}

// echoOnly sends the check's keys to a program that reads nothing and
// prints nothing, on a private tmux server of its own, and says whether
// every expect matched what the pane showed.
func (s *sup) echoOnly(bin string, w, h int) (echoResult, error) {
	var res echoResult
	dir, err := s.tempDir("ultra-check-tmux-control-")
	if err != nil {
		return res, err
	}
	tm := s.tmuxClient(bin, filepath.Join(dir, "tmux.sock"))
	defer func() {
		_, _ = tm("kill-server")
		if _, err := tm("has-session", "-t", tmuxSession); err == nil {
			s.leftover(leftover{What: "the control tmux session still present after kill-server"})
		}
	}()
	if _, err := tm("set-option", "-g", "status", "off", ";", "new-session", "-d", "-s", tmuxSession,
		"-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "--", "sleep", "3600"); err != nil {
		return res, fmt.Errorf("tmux did not start the control session: %w", err)
	}
	var b strings.Builder
	expects := 0
	res.all = true
	for i, st := range s.in.Check.Steps {
		if st.Keys != "" {
			words, _ := splitKeys(st.Keys)
			if _, err := tm(append([]string{"send-keys", "-t", tmuxSession, "--"}, typeWords(words)...)...); err != nil {
				return res, fmt.Errorf("send-keys: %w", err)
			}
		}
		if st.Expect == "" {
			continue
		}
		expects++
		time.Sleep(echoWait)
		pane, err := tm("capture-pane", "-p", "-J", "-S", "-", "-t", tmuxSession)
		if err != nil {
			return res, fmt.Errorf("capture-pane: %w", err)
		}
		matched := regexp.MustCompile("(?m)" + st.Expect).MatchString(trimPane(pane))
		res.all = res.all && matched
		fmt.Fprintf(&b, "step %d: expect %s %s\n%s", i+1, strconv.Quote(st.Expect), map[bool]string{true: "MATCHES (echo only)", false: "does not match"}[matched], withNewline(trimPane(pane)))
	}
	res.all = res.all && expects > 0
	res.log = b.String()
	return res, nil
}

// stopTmux kills the private server and checks that the session is gone
// and the server process with it.
func (s *sup) stopTmux(tm func(...string) (string, error), serverPid *int) {
	_, killErr := tm("kill-server")
	if _, err := tm("has-session", "-t", tmuxSession); err == nil {
		s.leftover(leftover{What: "tmux session still present after kill-server"})
	}
	if *serverPid != 0 {
		pid := *serverPid
		if !waitFor(termGrace, func() bool { return !alive(pid) }) {
			// What the message says is done: it is killed, and still a
			// leftover (the result is BLOCKED).
			_ = syscall.Kill(pid, syscall.SIGKILL)
			s.leftover(leftover{What: "tmux server still running after kill-server; killed", Pid: pid, Comm: "tmux"})
		}
	}
	if killErr != nil {
		s.rep.Stopped = append(s.rep.Stopped, "tmux server (kill-server failed: "+oneLine(killErr.Error())+")")
		return
	}
	s.rep.Stopped = append(s.rep.Stopped, "tmux session and server (kill-server; has-session fails)")
}

// alive reports whether pid is a process that is not a zombie.
func alive(pid int) bool {
	for _, q := range readProcs() {
		if q.Pid == pid {
			return q.State != 'Z'
		}
	}
	return false
}

// trimPane drops the pane's trailing empty lines.
func trimPane(s string) string {
	return strings.TrimRight(s, " \n")
}

// lastLines is the last n non-empty lines of s, without tmux's note of
// an ended pane (it holds the time).
func lastLines(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "Pane is dead") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, " ⏎ ")
}

// typeWords joins the words between key names with spaces: "set color
// blue Enter" types "set color blue" and presses Enter, as a person (and
// the plan's validation) reads it.
func typeWords(ws []string) []string {
	var out []string
	text := false // the last word in out is text
	for _, w := range ws {
		if goal.TmuxKey(w) {
			out, text = append(out, w), false
			continue
		}
		if text {
			out[len(out)-1] += " " + w
			continue
		}
		out, text = append(out, w), true
	}
	return out
}

func quoteWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, " ")
}
