package proc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// direct is a wrapper that contains nothing: the mechanism of Spares on
// its own (package sandbox tests it inside bubblewrap).
func direct(name string, args []string, _ string) (Wrapped, error) {
	return Wrapped{Name: name, Args: args}, nil
}

func spareRun(t *testing.T, p *Spares, dir, script string, env []string, timeout time.Duration) Result {
	t.Helper()
	p.Ready()
	res, err := Shell(context.Background(), script, Options{Dir: dir, Env: env, Wrap: direct, Spares: p, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A command run from a spare gives what it gives started anew; one with
// another environment or directory does not take the spare; after Close
// no spare is left or made.
func TestSpares(t *testing.T) {
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "A=1", "BASH_ENV=" + filepath.Join(dir, "rc")}
	os.WriteFile(filepath.Join(dir, "rc"), []byte("echo sourced >> "+filepath.Join(dir, "log")+"\n"), 0o644)
	p := NewSpares()
	defer p.Close()
	if r := spareRun(t, p, dir, "true", env, 0); r.Spare {
		t.Fatal("the first command took a spare")
	}
	for _, script := range []string{"echo out; echo err >&2; exit 3", `pwd; echo "$0" "$#" $A; ls /proc/self/fd`, "kill -9 $$", "cat; echo done"} {
		a := spareRun(t, p, dir, script, env, 0)
		b := spareRun(t, nil, dir, script, env, 0)
		if !a.Spare || a.Output != b.Output || a.ExitCode != b.ExitCode {
			t.Errorf("%q: from a spare (%v, exit %d):\n%s\nanew (exit %d):\n%s", script, a.Spare, a.ExitCode, a.Output, b.ExitCode, b.Output)
		}
	}
	// BASH_ENV was read by the commands, never by a waiting spare.
	if b, _ := os.ReadFile(filepath.Join(dir, "log")); strings.Count(string(b), "sourced") != 9 {
		t.Errorf("BASH_ENV read %d times for 9 commands", strings.Count(string(b), "sourced"))
	}
	start := time.Now()
	r := spareRun(t, p, dir, "sleep 97541 & echo $! > bg; sleep 97542", env, 300*time.Millisecond)
	if !r.Spare || !r.TimedOut || time.Since(start) > 5*time.Second {
		t.Fatalf("%+v after %s", r, time.Since(start))
	}
	b, _ := os.ReadFile(filepath.Join(dir, "bg"))
	time.Sleep(50 * time.Millisecond)
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid == 0 || alive(pid) {
		t.Fatalf("the background process %d outlived the timeout", pid)
	}
	if r := spareRun(t, p, dir, "true", append(env, "B=2"), 0); r.Spare {
		t.Error("a command with another environment took the spare")
	}
	if r := spareRun(t, p, t.TempDir(), "true", env, 0); r.Spare {
		t.Error("a command in another directory took the spare")
	}
	if !p.Ready() {
		t.Fatal("no spare after a command")
	}
	p.Close()
	if p.Ready() {
		t.Fatal("a spare outlived Close")
	}
	if r := spareRun(t, p, dir, "true", env, 0); r.Spare || p.Ready() {
		t.Fatal("a closed pool served or made a spare")
	}
}
