package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/workspace"
)

// pane is ultra running in a tmux pane of its own tmux server.
type pane struct {
	t    testing.TB
	sock string
	raw  string // every byte ultra wrote to the pane
	code string // the file ultra's exit status is written to
}

var paneSeq atomic.Int64

// startPane runs ultra with args in dir in a new w×h tmux pane, with env
// as its whole environment (and a terminal's TERM).
func startPane(t testing.TB, dir string, env []string, w, h int, args ...string) *pane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	tmp := t.TempDir()
	p := &pane{t: t, sock: fmt.Sprintf("ultra-linemode-%d-%d", os.Getpid(), paneSeq.Add(1)), raw: filepath.Join(tmp, "raw"), code: filepath.Join(tmp, "code")}
	conf := filepath.Join(tmp, "tmux.conf")
	must(t, os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 20000\nset -g status off\n"), 0o644))
	// ultra starts once the pane's output is recorded.
	gate := filepath.Join(tmp, "go")
	var cmd []string
	env = append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "TERM=") || strings.HasPrefix(kv, "TMUX")
	}), "TERM=xterm-256color")
	for _, a := range append(append([]string{"env", "-i"}, env...), append([]string{ultraBin}, args...)...) {
		cmd = append(cmd, shellQuote(a))
	}
	script := filepath.Join(tmp, "run.sh")
	must(t, os.WriteFile(script, []byte("cd "+shellQuote(dir)+" || exit 99\nwhile [ ! -e "+shellQuote(gate)+" ]; do sleep 0.02; done\n"+strings.Join(cmd, " ")+"\necho $? > "+shellQuote(p.code)+"\n"), 0o755))
	p.tmux("-f", conf, "new-session", "-d", "-s", "lm", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "sh "+shellQuote(script))
	t.Cleanup(func() { _ = p.tmuxErr("kill-server") })
	p.tmux("pipe-pane", "-O", "-t", "lm", "cat > "+shellQuote(p.raw))
	must(t, os.WriteFile(gate, nil, 0o644))
	return p
}

var shellQuote = workspace.ShellQuote

// tmuxEnv is the environment of the tmux client: not inside another
// tmux session.
func tmuxEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			env = append(env, kv)
		}
	}
	return env
}

func (p *pane) tmuxErr(args ...string) error {
	c := exec.Command("tmux", append([]string{"-L", p.sock}, args...)...)
	c.Env = tmuxEnv()
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("tmux %v: %v: %s", args, err, out)
	}
	return nil
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	c := exec.Command("tmux", append([]string{"-L", p.sock}, args...)...)
	c.Env = tmuxEnv()
	out, err := c.Output()
	if err != nil {
		p.t.Fatalf("tmux %v: %v", args, err)
	}
	return string(out)
}

// screen is what the pane shows (with history, everything it showed),
// without tmux's own lines and trailing blank lines.
func (p *pane) screen(history bool) []string {
	p.t.Helper()
	args := []string{"capture-pane", "-p", "-t", "lm"}
	if history {
		args = append(args, "-S", "-")
	}
	var lines []string
	for _, line := range strings.Split(p.tmux(args...), "\n") {
		if !strings.HasPrefix(line, "Pane is dead") {
			lines = append(lines, strings.TrimRight(line, " "))
		}
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// watch records every distinct screen the pane shows until ultra exits,
// and returns them with ultra's exit status.
func (p *pane) watch() (screens [][]string, code int) {
	p.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	seen := ""
	for time.Now().Before(deadline) {
		dead := strings.TrimSpace(p.tmux("display-message", "-p", "-t", "lm", "#{pane_dead}")) == "1"
		sc := p.screen(false)
		if s := strings.Join(sc, "\n"); s != seen {
			screens, seen = append(screens, sc), s
		}
		if dead {
			b, err := os.ReadFile(p.code)
			if _, serr := fmt.Sscan(string(b), &code); err != nil || serr != nil {
				p.t.Fatalf("no exit status from ultra (%v); the pane shows:\n%s", err, strings.Join(p.screen(true), "\n"))
			}
			return screens, code
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("ultra did not end within 2 minutes; the pane shows:\n%s", strings.Join(p.screen(false), "\n"))
	return nil, 0
}

// rawOutput is every byte ultra wrote to the pane.
func (p *pane) rawOutput() string {
	p.t.Helper()
	_ = p.tmuxErr("pipe-pane", "-t", "lm") // closes the pipe, flushing it
	var b []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ = os.ReadFile(p.raw)
		if strings.Contains(string(b), "exit ") {
			break
		}
	}
	return string(b)
}

// text is the screen as one string.
func (p *pane) text() string { return strings.Join(p.screen(false), "\n") }

// title is the pane's title, as the program set it.
func (p *pane) title() string {
	return strings.TrimSpace(p.tmux("display-message", "-p", "-t", "lm", "#{pane_title}"))
}

// keys types tmux key names (or literal text).
func (p *pane) keys(keys ...string) {
	p.tmux(append([]string{"send-keys", "-t", "lm"}, keys...)...)
}

// enter types s literally, then Enter.
func (p *pane) enter(s string) {
	p.tmux("send-keys", "-t", "lm", "-l", s)
	p.tmux("send-keys", "-t", "lm", "Enter")
}

// waitFor waits until the screen satisfies ok, and returns it.
func (p *pane) waitFor(what string, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = p.text()
		if ok(s) {
			return s
		}
		time.Sleep(40 * time.Millisecond)
	}
	p.t.Fatalf("the screen never showed %s:\n%s", what, s)
	return ""
}

func (p *pane) waitText(s string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", s), func(scr string) bool { return strings.Contains(scr, s) })
}

// exited waits for ultra to end and returns its exit status.
func (p *pane) exited() int {
	p.t.Helper()
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(40 * time.Millisecond) {
		if b, err := os.ReadFile(p.code); err == nil && len(b) > 0 {
			var code int
			if _, err := fmt.Sscan(string(b), &code); err == nil {
				return code
			}
		}
	}
	p.t.Fatalf("ultra did not exit; the pane shows:\n%s", p.text())
	return -1
}
