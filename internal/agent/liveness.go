package agent

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// A run's state as every surface shows it comes from one place: Observe
// gathers what this host can tell of the run's process, and the tasks
// package classifies it (tasks.Shown for the status word, tasks.Classify
// for the class and the next step). ultra runs, status, tasks, doctor, gc
// and the TUI all read a run through these, so they never disagree.

// ProcessAlive reports whether process pid runs. A killed process its
// parent has not reaped yet (a zombie) does not: it will never act again.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reports whether /proc says pid has exited and waits to be
// reaped (false when /proc cannot tell).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}

// Live reports whether another process, still alive, is driving the run.
func Live(row *store.Run) bool {
	return row.Status == StatusRunning && row.PID != 0 && row.PID != os.Getpid() && ProcessAlive(row.PID)
}

// ProcessOf is what this host can tell of the process driving a run
// recorded as running by pid, with its runtime row rt (nil: none read):
// another machine's process cannot be checked from here, this process
// is alive.
func ProcessOf(pid int, rt *store.Runtime) tasks.Process {
	if rt != nil {
		if pid == 0 {
			pid = rt.PID
		}
		if host := Hostname(); rt.Host != "" && host != "" && rt.Host != host {
			return tasks.ProcessUnknown
		}
	}
	if pid == os.Getpid() || ProcessAlive(pid) {
		return tasks.ProcessAlive
	}
	return tasks.ProcessDead
}

// Observe is the classification input of run row, with its runtime row
// rt (nil: its heartbeat is not looked at).
func Observe(row *store.Run, rt *store.Runtime) tasks.Input {
	ws := row.Workspace
	in := tasks.Input{
		ID: row.ID, Status: row.Status, TaskStatus: row.TaskRow.Status, Reason: row.Reason, Waiting: row.TaskRow.Waiting,
		PID: row.PID, Branch: ws.Branch, Landed: ws.Landed != "", Undone: ws.Undone != "", Removed: ws.Removed != "", Parent: row.TaskRow.Parent,
	}
	if rt != nil {
		in.Heartbeat = rt.Heartbeat
		if in.PID == 0 {
			in.PID = rt.PID
		}
	}
	if row.Status == StatusRunning {
		in.Process = ProcessOf(in.PID, rt)
	}
	return in
}

// ShownStatus is run row's status as surfaces show it (tasks.Shown): a
// run recorded as running whose process is gone is interrupted. Without
// the runtime row its heartbeat is not judged; StateOf judges it.
func ShownStatus(row *store.Run) string {
	return tasks.Shown(Observe(row, nil), time.Now())
}

// StateOf is run row's status word and class as of now, its heartbeat
// read from st when the run is recorded as running.
func StateOf(ctx context.Context, st *store.Store, row *store.Run, now time.Time) (string, tasks.Class) {
	var rt *store.Runtime
	if row.Status == StatusRunning && st != nil {
		if r, err := st.RuntimeOf(ctx, row.ID); err == nil {
			rt = &r
		}
	}
	in := Observe(row, rt)
	return tasks.Shown(in, now), tasks.Classify(in, now)
}

// Hostname is the name this machine goes by among the machines that
// share a store (a fleet): ULTRA_HOSTNAME, else its host name. Machines
// whose host names are alike (containers) set it apart.
func Hostname() string {
	if h := strings.TrimSpace(os.Getenv("ULTRA_HOSTNAME")); h != "" {
		return h
	}
	h, _ := os.Hostname()
	return h
}
