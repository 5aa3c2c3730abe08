package tool

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBashExitCodeAndEnv(t *testing.T) {
	env := newTestEnv(t)
	r := call(t, Bash{}, env, obj{"command": "echo hi; echo oops >&2; exit 3", "description": "fail"})
	mustErr(t, r, "hi", "oops", "[exit code 3]")
	if r.Data["exit_code"] != 3 {
		t.Fatalf("data %v", r.Data)
	}
	r = mustOK(t, call(t, Bash{}, env, obj{"command": "pwd; echo $ULTRA $GIT_TERMINAL_PROMPT $PAGER $GIT_PAGER"}))
	contains(t, r.Output, env.Root+"\n1 0 cat cat", "[exit code 0]")
	// Stdin is empty: cat returns at once.
	r = mustOK(t, call(t, Bash{}, env, obj{"command": "cat; echo done"}))
	contains(t, r.Output, "done")
	r = mustOK(t, call(t, Bash{}, env, obj{"command": "true"}))
	contains(t, r.Output, "(no output)")
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	env := newTestEnv(t)
	start := time.Now()
	r := call(t, Bash{}, env, obj{"command": "sleep 30 & echo $! > bg.pid; sleep 30", "timeout_ms": "300"})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
	mustErr(t, r, "timed out", "process group was killed")
	if r.Data["timed_out"] != true {
		t.Fatalf("data %v", r.Data)
	}
	b, err := os.ReadFile(filepath.Join(env.Root, "bg.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("background sleep %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports that pid no longer runs (a zombie waiting for a
// parent that does not reap counts as gone).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// The state follows the parenthesized command name.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

func TestBashOutputTruncatedToFile(t *testing.T) {
	env := newTestEnv(t)
	r := mustOK(t, call(t, Bash{}, env, obj{"command": "seq 1 100000"}))
	if len(r.Output) > maxBashCapture+2000 {
		t.Fatalf("output too long: %d", len(r.Output))
	}
	contains(t, r.Output, "1\n2\n3\n", "99999\n100000", "bytes omitted", "output truncated", ".ultra/state/run/outputs/")
	p, _ := r.Data["output_path"].(string)
	if p == "" || !strings.HasPrefix(p, filepath.Join(env.StateDir, "outputs")) {
		t.Fatalf("output path %q", p)
	}
	full := readFileT(t, p)
	if n := strings.Count(full, "\n"); n != 100000 {
		t.Fatalf("full output has %d lines", n)
	}
	// The saved output is readable with read.
	mustOK(t, call(t, Read{}, env, obj{"file_path": relTo(env.Root, p), "offset": 50000, "limit": 1}))

	// Short output leaves no file behind.
	mustOK(t, call(t, Bash{}, env, obj{"command": "echo short"}))
	entries, _ := os.ReadDir(filepath.Join(env.StateDir, "outputs"))
	if len(entries) != 1 {
		t.Fatalf("want only the truncated output saved, have %d files", len(entries))
	}
}

func TestBashArguments(t *testing.T) {
	env := newTestEnv(t)
	r := call(t, Bash{}, env, obj{"timeout_ms": 5})
	if !r.Malformed {
		t.Fatalf("missing command not malformed: %+v", r)
	}
	contains(t, r.Output, `missing required argument "command"`)
	r = call(t, Bash{}, env, obj{"command": "echo x", "timeout_ms": "soon"})
	if !r.Malformed {
		t.Fatalf("bad timeout not malformed: %+v", r)
	}
	r = call(t, Bash{}, env, obj{"command": 42})
	if !r.Malformed {
		t.Fatalf("number command not malformed: %+v", r)
	}
}

// A command printing without end fills its log only up to the bound, and
// the model is told the file holds the start.
func TestBashLogBounded(t *testing.T) {
	old := maxBashLog
	maxBashLog = 100 << 10
	defer func() { maxBashLog = old }()
	env := newTestEnv(t)
	r := mustOK(t, call(t, Bash{}, env, obj{"command": "yes ultra | head -c 1000000"}))
	contains(t, r.Output, "976.6 KB in total", "its first 100.0 KB is in")
	p, _ := r.Data["output_path"].(string)
	if fi, err := os.Stat(p); err != nil || fi.Size() != 100<<10 {
		t.Fatalf("log %s: %v %v", p, fi, err)
	}
}
