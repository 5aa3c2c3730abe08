package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// usage is what a sampler saw of an agent's process tree.
type usage struct {
	hwm      int64         // KiB: the agent process's own peak (VmHWM)
	treeRSS  int64         // KiB: the largest sum of the tree's resident sizes at one sample
	cpu      time.Duration // user + system of every process seen in the tree
	agentCPU time.Duration // the agent process's alone
}

// sample watches the process tree under pid every 10 ms until done. It
// walks /proc rather than trusting wait4: a sandboxed command's inner
// processes (bubblewrap's PID namespace) are reaped by init, not by the
// agent, so their CPU never reaches the agent's rusage. A process's CPU is
// its last sample's, so the last 10 ms of each process, and processes
// shorter than that, are missed.
func sample(pid int, done <-chan struct{}) usage {
	var u usage
	cpu := map[string]int64{} // "pid start" → clock ticks
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		procs := readProcs()
		var rss int64
		for _, p := range procs {
			if p.pid == pid {
				u.agentCPU = time.Duration(p.ticks) * time.Second / clockTicks
			}
			if p.pid == pid || p.under(pid, procs) {
				cpu[p.key] = max(cpu[p.key], p.ticks)
				rss += p.rssKiB
			} else if _, seen := cpu[p.key]; seen { // left the tree (its parent exited), still running
				cpu[p.key] = max(cpu[p.key], p.ticks)
			}
		}
		u.treeRSS = max(u.treeRSS, rss)
		u.hwm = max(u.hwm, hwm(pid))
		select {
		case <-done:
			var ticks int64
			for _, t := range cpu {
				ticks += t
			}
			u.cpu = time.Duration(ticks) * time.Second / clockTicks
			return u
		case <-t.C:
		}
	}
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ).
const clockTicks = 100

// proc is one line of /proc/PID/stat, in part.
type proc struct {
	pid, ppid int
	key       string // pid and start time: a process, even once its pid is reused
	ticks     int64  // utime + stime
	rssKiB    int64
}

// under reports whether p descends from pid.
func (p proc) under(pid int, procs map[int]proc) bool {
	for hops, q := 0, p; hops < 64; hops++ {
		if q.ppid == pid {
			return true
		}
		parent, ok := procs[q.ppid]
		if !ok {
			return false
		}
		q = parent
	}
	return false
}

var pageKiB = int64(os.Getpagesize() / 1024)

// readProcs reads every process's stat.
func readProcs() map[int]proc {
	out := map[int]proc{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name, in parentheses, may hold spaces: fields are
		// counted after its closing one (field 3, the state, comes first).
		end := bytes.LastIndexByte(b, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 22 {
			continue
		}
		num := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
		out[pid] = proc{pid: pid, ppid: int(num(4)), key: e.Name() + " " + f[22-3], ticks: num(14) + num(15), rssKiB: num(24) * pageKiB}
	}
	return out
}

// hwm is the process's peak resident size so far (VmHWM, KiB), or 0.
func hwm(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}
