package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ultra-dev/ultra/internal/goal"
)

// SupervisorArg is the first argument that makes ultra's program the
// check supervisor (cmd/ultra dispatches it to Supervise before anything
// else runs).
const SupervisorArg = "__check-supervise"

// maxInput bounds what the supervisor reads from its stdin.
const maxInput = 4 << 20

// Supervise is the check supervisor: ultra's own code, running inside the
// check's sandbox next to the programs under test. It reads one check
// from stdin, runs it (starting every program in a process group of its
// own, with stdin /dev/null and its output on pipes the supervisor
// reads), stops everything it started, and writes one sealed report to
// the report pipe Runner gave it. It returns the process's exit code: 0
// when it reported, 2 when it could not.
//
// It first makes itself not dumpable (the programs it starts, under the
// same uid, can neither open its /proc/<pid>/fd nor ptrace it to forge
// the report) and a child subreaper (what they daemonize is re-parented
// to it, so it can be found and killed).
func Supervise() int {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "ultra check supervisor: prctl(PR_SET_DUMPABLE):", err)
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "ultra check supervisor: prctl(PR_SET_CHILD_SUBREAPER):", err)
		return 2
	}
	var in input
	b, err := io.ReadAll(io.LimitReader(os.Stdin, maxInput+1))
	if err == nil && len(b) > maxInput {
		err = fmt.Errorf("more than %d bytes", maxInput)
	}
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err == nil && len(in.Key) < 16 {
		err = errors.New("no key")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ultra check supervisor: reading the check from stdin:", err)
		return 2
	}
	_ = os.Stdin.Close()
	out, err := reportPipe(in.ReportFD)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ultra check supervisor: the report pipe:", err)
		return 2
	}
	defer out.Close()
	rep := supervise(in)
	sealed, err := seal(in.Key, rep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ultra check supervisor: encoding the report:", err)
		return 2
	}
	if _, err := out.Write(append(sealed, '\n')); err != nil {
		fmt.Fprintln(os.Stderr, "ultra check supervisor: writing the report:", err)
		return 2
	}
	return 0
}

// reportPipe is the inherited descriptor fd, which must be a pipe, made
// close-on-exec first so that no program the supervisor starts inherits
// it.
func reportPipe(fd int) (*os.File, error) {
	if fd < 3 {
		return nil, fmt.Errorf("descriptor %d is not a report pipe", fd)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("descriptor %d: %w", fd, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return nil, fmt.Errorf("descriptor %d is not a pipe", fd)
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "report"), nil
}

// sup is one supervision.
type sup struct {
	in    input
	self  int
	shell string
	env   []string
	rep   report
	progs []*program
	temps []string
	ports []int
	// extraOwned are pids another package waits for (the browser).
	extraOwned []int
	// cleanups stop what a channel started besides its programs (the
	// tmux server, the browser), in reverse order, before the programs
	// are stopped.
	cleanups []func()
	// render builds the artifacts and the assertions that read captured
	// output, once everything has stopped.
	render []func()
}

// supervise runs in.Check and stops everything it started.
func supervise(in input) *report {
	s := &sup{in: in, self: os.Getpid()}
	s.rep.Channel = in.Channel
	s.shell = "bash"
	if _, err := exec.LookPath(s.shell); err != nil {
		s.shell = "sh"
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || k == "ULTRA_CHECK_SUPERVISOR" {
			continue
		}
		s.env = append(s.env, kv)
	}
	if in.Timeout <= 0 {
		in.Timeout = defaultTimeout
		s.in.Timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(in.Timeout)*time.Second)
	defer cancel()
	func() {
		defer func() {
			if v := recover(); v != nil {
				s.block("the check's supervisor failed", fmt.Sprint(v))
				fmt.Fprintf(os.Stderr, "ultra check supervisor: panic: %v\n%s", v, debug.Stack())
			}
		}()
		if err := validate(in.Channel, in.Check); err != nil {
			s.block(err.Error(), "")
			return
		}
		switch in.Channel {
		case goal.ChannelCommand:
			s.command(ctx)
		case goal.ChannelHTTP:
			s.http(ctx)
		case goal.ChannelTmux:
			s.tmux(ctx)
		case goal.ChannelBrowser:
			s.browser(ctx)
		case goal.ChannelDesktop:
			s.desktop(ctx)
		}
	}()
	s.teardown()
	for _, f := range s.render {
		f()
	}
	return &s.rep
}

// teardown stops everything, in reverse order of starting, sweeps what
// is left, checks the ports and removes the temporary directories.
func (s *sup) teardown() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
	for i := len(s.progs) - 1; i >= 0; i-- {
		s.stop(s.progs[i])
	}
	s.sweep()
	s.closePipes()
	for _, port := range s.ports {
		free := accepting(port) == ""
		s.rep.Ports = append(s.rep.Ports, portState{Port: port, Free: free})
		if !free {
			s.leftover(leftover{What: fmt.Sprintf("port %d still accepts connections after the check stopped", port)})
		}
	}
	for _, d := range s.temps {
		_ = os.RemoveAll(d)
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			s.leftover(leftover{What: "temporary directory not removed: " + strings.TrimRight(filepath.Base(d), "0123456789") + "…"})
		}
	}
}

// tempDir makes a directory the teardown removes.
func (s *sup) tempDir(prefix string) (string, error) {
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	s.temps = append(s.temps, d)
	return d, nil
}

// block records why the check cannot be judged: stable text, and detail
// that may change from run to run. The first reason stays.
func (s *sup) block(stable, detail string) {
	if s.rep.Blocked != "" {
		return
	}
	s.rep.Blocked, s.rep.BlockedDetail = stable, oneLine(detail)
}

// timedOut blocks a check whose scenario ran out of time.
func (s *sup) timedOut(doing, detail string) {
	s.block(fmt.Sprintf("timed out after %ds (timeout_seconds) %s", s.in.Timeout, doing), detail)
}
