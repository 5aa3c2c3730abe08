package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setBaseConfig pushes a commit to the fleet's remote's main that sets
// the project's .ultra/config to config ("": none): what a worker's
// clone reads when it next takes a run over.
func (f *fleet) setBaseConfig(t testing.TB, config string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "calc")
	git(t, "", "clone", "--quiet", f.remote, dir)
	path := filepath.Join(dir, ".ultra", "config")
	if config == "" {
		git(t, dir, "rm", "--quiet", ".ultra/config")
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", ".ultra/config")
	}
	git(t, dir, "commit", "--quiet", "-m", "config")
	git(t, dir, "push", "--quiet", "origin", "HEAD:main")
}

// An ask whose take-over fails on the worker that claimed it (the
// worktree's setup fails there) does not wedge the run: a later ask, once
// the setup is fixed, resumes it, once; the failed try never resumed it.
func TestFleetAskAfterAFailedTakeOver(t *testing.T) {
	steps := fleetSteps()
	lane := append(append(append([]step{}, steps[:4]...), calls(call("phase", map[string]any{"to": "verifying"}))), steps[4:]...)
	f := newFleetWith(t, 1, func(int) []step { return lane })
	id := f.submit(t, 1, "--max-turns", "4")
	_, out := startFleetWorker(t, f.machine(t), 1, "ULTRA_HOSTNAME=machine-a")
	f.waitTask(t, id, "budget_exhausted", 2*time.Minute, out)
	for !strings.Contains(out.String(), "run "+id+" ended") {
		time.Sleep(100 * time.Millisecond)
	}
	// The worktree's setup now fails: the take-over of the first ask does.
	f.setBaseConfig(t, "[workspace]\nsetup = [\"echo no registry >&2; exit 7\"]\n")
	ask := func(guidance string) {
		r := ultraRun(t, t.TempDir(), append(f.env, "ULTRA_HOSTNAME=laptop"), "resume", id, guidance)
		if r.code != 0 || !strings.Contains(r.stdout, "resume queued") {
			t.Fatalf("resume on another machine: %d %s %s", r.code, r.stdout, r.stderr)
		}
	}
	ask("go on")
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "run "+id+" did not start") && strings.Count(out.String(), "run "+id+" ended") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the first ask never ended:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tk := f.waitTask(t, id, "budget_exhausted", time.Second, out); tk.Status != "budget_exhausted" {
		t.Fatal(tk)
	}
	f.setBaseConfig(t, "")
	// The new ask replaces the failed one, which waits for its next try
	// (once the worker has let go of it).
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r := ultraRun(t, t.TempDir(), append(f.env, "ULTRA_HOSTNAME=laptop"), "resume", id, "go on, now")
		if r.code == 2 && strings.Contains(r.stderr, "is taking it over now") && time.Now().Before(end) {
			continue
		}
		if r.code != 0 || !strings.Contains(r.stdout, "resume queued") || !strings.Contains(r.stdout, "it replaces the ask made") {
			t.Fatalf("resume after the setup's fix: %d %s %s", r.code, r.stdout, r.stderr)
		}
		break
	}
	f.waitTask(t, id, "complete", 90*time.Second, out)
	st := ultraRun(t, t.TempDir(), f.env, "status", id, "--json", "-n", "1000")
	if n := strings.Count(st.stdout, `"type": "run_resumed"`); n != 1 {
		t.Fatalf("%d run_resumed events\n%s", n, out)
	}
}

// A fleet's worker told to stop waits for the run it drives; told again,
// it asks the run to stop at its next safe point, and exits once it has
// (the run stays resumable).
func TestFleetWorkerStopsItsRunOnASecondSignal(t *testing.T) {
	f := newFleetWith(t, 1, func(int) []step { return []step{{"delay_ms": 120000, "text": "slow"}} })
	id := f.submit(t, 1)
	w, out := startFleetWorker(t, f.machine(t), 1)
	for len(f.model.srv.Requests()) < 1 {
		time.Sleep(100 * time.Millisecond)
	}
	w.Process.Signal(os.Interrupt)
	for !strings.Contains(out.String(), "waiting for the run going on to end") {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	if tk := f.waitTask(t, id, "running", time.Second, out); tk.Status != "running" {
		t.Fatal(tk)
	}
	w.Process.Signal(os.Interrupt)
	exited := make(chan error, 1)
	go func() { exited <- w.Wait() }()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("the worker did not exit after a second signal:\n%s", out)
	}
	if !strings.Contains(out.String(), "asking the runs going on to stop at their next safe point") {
		t.Fatalf("the worker's log:\n%s", out)
	}
	f.waitTask(t, id, "stopped", 10*time.Second, out)
}
