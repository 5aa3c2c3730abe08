package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ultra-dev/ultra/internal/proc"
)

// The supervisor's processes: every program under test runs in a process
// group of its own with stdin /dev/null and its stdout and stderr on pipes
// the supervisor reads. Stopping one is SIGTERM to its group, a grace
// period, then SIGKILL; what needed the SIGKILL is a leftover. The
// supervisor is a child subreaper, so whatever a program daemonized is
// re-parented to it and found by the final sweep.

const (
	// maxCapture bounds each captured stream (its head and tail).
	maxCapture = 256 << 10
	// termGrace is how long a stopped group has to go after SIGTERM.
	termGrace = 2 * time.Second
	// settleGrace is how long descendants get to go by themselves (a
	// tmux pane after SIGHUP) before the sweep calls them leftovers.
	settleGrace = 500 * time.Millisecond
	// pollEvery is how often the supervisor looks again.
	pollEvery = 10 * time.Millisecond
)

// program is one program under test the supervisor started.
type program struct {
	role    string // "command", "server"
	cmd     *exec.Cmd
	pid     int // also its process group
	stdout  proc.Capture
	stderr  proc.Capture
	pipes   []*os.File
	readers sync.WaitGroup
	began   time.Time
	ended   time.Time
	exited  chan struct{}
	stopped bool
}

// done reports that the program's own process has exited.
func (p *program) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// status is how the program's own process ended, "" while it runs.
func (p *program) status() string {
	if !p.done() || p.cmd.ProcessState == nil {
		return ""
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + signalName(ws.Signal())
	}
	return fmt.Sprintf("exit %d", p.cmd.ProcessState.ExitCode())
}

// outputTail is the last lines of what the program printed, for a reason.
func (p *program) outputTail(n int) string {
	s := strings.TrimSpace(p.stdout.String() + "\n" + p.stderr.String())
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return oneLine(s)
}

// start runs script with the shell in a process group of its own.
func (s *sup) start(role, script string) (*program, error) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	rOut, wOut, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	rErr, wErr, err := os.Pipe()
	if err != nil {
		rOut.Close()
		wOut.Close()
		return nil, err
	}
	p := &program{role: role, exited: make(chan struct{}), pipes: []*os.File{rOut, rErr},
		stdout: proc.Capture{Max: maxCapture}, stderr: proc.Capture{Max: maxCapture}}
	p.cmd = exec.Command(s.shell, "-c", script)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = null, wOut, wErr
	p.cmd.Env = s.env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.began = time.Now()
	err = p.cmd.Start()
	wOut.Close()
	wErr.Close()
	if err != nil {
		rOut.Close()
		rErr.Close()
		return nil, fmt.Errorf("starting the %s (%s -c …): %w", role, s.shell, err)
	}
	p.pid = p.cmd.Process.Pid
	p.readers.Add(2)
	go func() { defer p.readers.Done(); _, _ = io.Copy(&p.stdout, rOut) }()
	go func() { defer p.readers.Done(); _, _ = io.Copy(&p.stderr, rErr) }()
	go func() {
		_ = p.cmd.Wait()
		p.ended = time.Now()
		close(p.exited)
	}()
	s.progs = append(s.progs, p)
	s.rep.Started = append(s.rep.Started, fmt.Sprintf("%s pgid %d", role, p.pid))
	return p, nil
}

// settleOutput waits a little for the program's output to end (a process
// it left in the background may hold the pipes open).
func (p *program) settleOutput(d time.Duration) {
	done := make(chan struct{})
	go func() { p.readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// stop ends the program's process group: SIGTERM, then SIGKILL for what
// ignored it (a leftover).
func (s *sup) stop(p *program) {
	if p.stopped {
		return
	}
	p.stopped = true
	if p.done() && !groupAlive(p.pid) {
		s.rep.Stopped = append(s.rep.Stopped, fmt.Sprintf("%s (ended by itself: %s)", p.role, p.status()))
		p.settleOutput(200 * time.Millisecond)
		return
	}
	what := p.role
	if p.done() {
		what = p.role + "'s remaining processes"
	}
	_ = syscall.Kill(-p.pid, syscall.SIGTERM)
	if waitFor(termGrace, func() bool { return p.done() && !groupAlive(p.pid) }) {
		s.rep.Stopped = append(s.rep.Stopped, what+" (SIGTERM)")
	} else {
		for _, q := range groupMembers(p.pid) {
			s.leftover(leftover{What: p.role + " ignored SIGTERM; killed with SIGKILL", Pid: q.Pid, Comm: q.Comm})
		}
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		if waitFor(termGrace, func() bool { return p.done() && !groupAlive(p.pid) }) {
			s.rep.Stopped = append(s.rep.Stopped, what+" (SIGKILL after ignoring SIGTERM)")
		} else {
			s.rep.Stopped = append(s.rep.Stopped, what+" (still there after SIGKILL)")
		}
	}
	p.settleOutput(200 * time.Millisecond)
}

// leftover records l once per process.
func (s *sup) leftover(l leftover) {
	for _, x := range s.rep.Leftovers {
		if l.Pid != 0 && x.Pid == l.Pid {
			return
		}
		if l.Pid == 0 && x.What == l.What && x.Comm == l.Comm {
			return
		}
	}
	s.rep.Leftovers = append(s.rep.Leftovers, l)
}

// sweep finds every process still below the supervisor (daemonized
// programs re-parented to it, a tmux pane that ignored SIGHUP), gives them
// a moment to go by themselves, then kills them as leftovers. Zombies are
// reaped.
func (s *sup) sweep() {
	start := time.Now()
	for {
		s.reap()
		live := liveDescendants(s.self, s.owned())
		if len(live) == 0 {
			return
		}
		if time.Since(start) < settleGrace {
			time.Sleep(pollEvery)
			continue
		}
		for _, q := range live {
			s.leftover(leftover{What: "process still running after the check's programs stopped (daemonized or escaped its group); killed", Pid: q.Pid, Comm: q.Comm})
			_ = syscall.Kill(q.Pid, syscall.SIGKILL)
		}
		if time.Since(start) > settleGrace+3*time.Second {
			for _, q := range live {
				s.leftover(leftover{What: "process survived SIGKILL", Pid: q.Pid, Comm: q.Comm})
			}
			return
		}
		time.Sleep(pollEvery)
	}
}

// owned are the pids whose exit status os/exec still waits for: never
// reaped by the sweep.
func (s *sup) owned() map[int]bool {
	m := map[int]bool{}
	for _, p := range s.progs {
		if !p.done() {
			m[p.pid] = true
		}
	}
	for _, pid := range s.extraOwned {
		m[pid] = true
	}
	return m
}

// reap collects the exit status of the supervisor's zombie children that
// os/exec does not wait for (processes re-parented to the subreaper).
func (s *sup) reap() {
	owned := s.owned()
	for _, q := range readProcs() {
		if q.PPid == s.self && q.State == 'Z' && !owned[q.Pid] {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(q.Pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// closePipes ends the output readers once nothing can write any more.
func (s *sup) closePipes() {
	for _, p := range s.progs {
		p.settleOutput(100 * time.Millisecond)
		for _, f := range p.pipes {
			f.Close()
		}
	}
}

// waitFor polls cond until it holds or d passed.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

// procInfo is one line of the process table.
type procInfo struct {
	Pid, PPid, Pgrp int
	State           byte
	Comm            string
}

// readProcs reads /proc/*/stat (the processes of this PID namespace).
func readProcs() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if q, ok := parseStat(pid, b); ok {
			out = append(out, q)
		}
	}
	return out
}

// parseStat reads pid, comm, state, ppid and pgrp from a /proc/pid/stat
// line: "pid (comm) S ppid pgrp …" (comm may hold spaces and parens).
func parseStat(pid int, b []byte) (procInfo, bool) {
	lp := bytes.IndexByte(b, '(')
	rp := bytes.LastIndexByte(b, ')')
	if lp < 0 || rp < lp {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[rp+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return procInfo{}, false
	}
	return procInfo{Pid: pid, PPid: ppid, Pgrp: pgrp, State: f[0][0], Comm: string(b[lp+1 : rp])}, true
}

// groupAlive reports whether a process group has a member that is not a
// zombie.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return len(groupMembers(pgid)) > 0
}

// groupMembers are the live (not zombie) processes of a group.
func groupMembers(pgid int) []procInfo {
	var out []procInfo
	for _, q := range readProcs() {
		if q.Pgrp == pgid && q.State != 'Z' {
			out = append(out, q)
		}
	}
	return out
}

// liveDescendants are the processes below root that are not zombies,
// except those in skip.
func liveDescendants(root int, skip map[int]bool) []procInfo {
	all := readProcs()
	kids := map[int][]procInfo{}
	for _, q := range all {
		kids[q.PPid] = append(kids[q.PPid], q)
	}
	var out []procInfo
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, q := range kids[pid] {
			if seen[q.Pid] {
				continue
			}
			seen[q.Pid] = true
			queue = append(queue, q.Pid)
			if q.State != 'Z' && !skip[q.Pid] {
				out = append(out, q)
			}
		}
	}
	return out
}

// accepting reports which loopback address takes connections on port
// ("127.0.0.1" or "::1"), "" when neither does.
func accepting(port int) string {
	for _, host := range []string{"127.0.0.1", "::1"} {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return host
		}
	}
	return ""
}

func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return sig.String()
}

// oneLine folds s onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
