package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startFakemodel starts `ultra dev fakemodel --script script EXTRA…` as a
// person would, and returns the URL it prints; it stops with the test.
func startFakemodel(t *testing.T, script string, extra ...string) string {
	t.Helper()
	srv := exec.Command(ultraBin, append([]string{"dev", "fakemodel", "--script", script}, extra...)...)
	srv.Env = ultraEnv(t)
	out, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() })
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("fakemodel printed %q: %v", url, err)
	}
	return strings.TrimSpace(url)
}

// The scripted model runs as `ultra dev fakemodel`, and a run completes
// against it, with every request in its log.
func TestDevFakemodelCommand(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	b, _ := json.Marshal(map[string]any{"steps": fixSteps()})
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, b, 0o644)
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")

	url := startFakemodel(t, script, "--log", logPath)

	res := ultra(t, dir, "run", "--base-url", url, "--model", "scripted", "fix calc")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, logPath)), "\n")
	if len(lines) != len(fixSteps()) {
		t.Fatalf("%d logged requests, want %d", len(lines), len(fixSteps()))
	}
	var first struct {
		Tools []string `json:"tools"`
	}
	json.Unmarshal([]byte(lines[0]), &first)
	if strings.Join(first.Tools, ",") != "read,glob,grep,bash,todo,goals,phase" {
		t.Fatalf("first request offered %v", first.Tools)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"steps":[{"tool_calls":[{"arguments":{}}]}]}`), 0o644)
	r := ultra(t, dir, "dev", "fakemodel", "--script", bad)
	if r.code != 2 || !strings.Contains(r.stderr, "bad.json") || !strings.Contains(r.stderr, "name") {
		t.Fatalf("bad script: %d %s", r.code, r.stderr)
	}
}

// Ctrl-C stops a run with exit code 130, kills the command it was running
// with its whole process group, and leaves the run resumable.
func TestInterruptExits130AndKillsGroup(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	// The call runs in the sandbox: it can write only its worktree, and
	// its process ids are its own. The sleep is found on the host by its
	// unusual argument.
	steps := fixSteps()
	sleeper := calls(call("bash", map[string]any{"command": "sleep 1234.5 & touch started; wait", "timeout_ms": 300000}))
	steps = append(steps[:2], append([]step{sleeper}, steps[2:]...)...)
	m := newModel(t, steps...)
	cmd := exec.Command(ultraBin, runArgs(m, "fix calc")...)
	cmd.Dir = dir
	cmd.Env = ultraEnv(t)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && pid == 0; time.Sleep(50 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(stateHome(t), "ultra", "worktrees", "*", "*", "started")); len(m) > 0 {
			pid = findProcess("sleep\x001234.5\x00")
		}
	}
	if pid == 0 {
		t.Fatal("the bash call never started")
	}
	cmd.Process.Signal(os.Interrupt)
	var lines []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130", err)
	}
	time.Sleep(100 * time.Millisecond)
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the background sleep of the interrupted bash call is still alive")
	}
	res := result{stdout: strings.Join(lines, "\n")}
	evs := res.events(t)
	fin := data(ofType(evs, "run_finished")[0])
	if fin["status"] != "interrupted" {
		t.Fatalf("finish %v", fin)
	}
	r := ultra(t, dir, "resume", runID(t, evs), "--output", "jsonl", "--base-url", m.url)
	if r.code != 0 {
		t.Fatalf("resume exit %d\n%s", r.code, r.stderr)
	}
}

// findProcess is the host pid of a process whose command line is
// cmdline (NUL-separated), or 0.
func findProcess(cmdline string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); string(b) == cmdline {
			return pid
		}
	}
	return 0
}

// BenchmarkStartupToFirstRequest measures the time from starting the
// ultra binary to its first request reaching the model.
func BenchmarkStartupToFirstRequest(b *testing.B) {
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "x"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatal(string(out))
		}
	}
	var mu sync.Mutex
	var first time.Time
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		mu.Unlock()
		http.Error(w, `{"error":{"message":"stop here"}}`, http.StatusBadRequest)
	}))
	defer hs.Close()
	state := b.TempDir() // where the runs' worktrees go
	var total time.Duration
	for b.Loop() {
		mu.Lock()
		first = time.Time{}
		mu.Unlock()
		cmd := exec.Command(ultraBin, "run", "--output", "jsonl", "--base-url", hs.URL+"/v1", "--model", "m", "task")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "XDG_STATE_HOME="+state)
		start := time.Now()
		cmd.Run()
		mu.Lock()
		if first.IsZero() {
			b.Fatal("no request arrived")
		}
		total += first.Sub(start)
		mu.Unlock()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-first-request")
}

// alive reports a process that exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// cancel interrupts a live run and closes it; a cancelled run cannot be
// resumed.
func TestCancelALiveRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	cmd, id, _ := startInLongCommand(t, dir)
	res := ultra(t, dir, "cancel", id, "--reason", "wrong task")
	if res.code != 0 || !strings.Contains(res.stdout, "cancelled") {
		t.Fatalf("cancel: %d %s %s", res.code, res.stdout, res.stderr)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the cancelled run exited 0")
	}
	var s map[string]any
	json.Unmarshal([]byte(ultra(t, dir, "status", id, "--json").stdout), &s)
	if s["phase"] != "cancelled" || s["status"] != "cancelled" {
		t.Fatalf("status %v %v", s["phase"], s["status"])
	}
	if r := ultra(t, dir, "resume", id); r.code != 2 || !strings.Contains(r.stderr, "cancelled") {
		t.Fatalf("resume of a cancelled run: %d %s", r.code, r.stderr)
	}
	if r := ultra(t, dir, "cancel", id); r.code != 2 {
		t.Fatalf("second cancel: %d %s", r.code, r.stderr)
	}
}

func TestModelsCommand(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, text("x"))
	res := ultraWithEnv(t, dir, []string{"OPENAI_BASE_URL=" + m.url}, "models", "--providers", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil || res.code != 0 {
		t.Fatalf("%v %d %s %s", err, res.code, res.stdout, res.stderr)
	}
	seen := map[string]map[string]any{}
	for _, e := range list {
		seen[e["provider"].(string)] = e
	}
	if o := seen["openai"]; o == nil || o["reachable"] != true || o["default"] != true || o["base_url"] != m.url {
		t.Fatalf("openai %v", seen["openai"])
	}
	if a := seen["anthropic"]; a == nil || a["key_set"] != false || !strings.Contains(a["status"].(string), "ANTHROPIC_API_KEY") {
		t.Fatalf("anthropic %v", seen["anthropic"])
	}
	if len(m.srv.Requests()) != 0 {
		t.Fatal("ultra models sent a chat request")
	}
}

func TestRunsLimitRefused(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	if r := ultra(t, dir, "runs", "--limit", "0"); r.code != 2 || !strings.Contains(r.stderr, "--limit 0 is refused") {
		t.Fatalf("runs --limit 0: exit %d\n%s", r.code, r.stderr)
	}
	if r := ultra(t, dir, "runs", "--limit", "1"); r.code != 0 {
		t.Fatalf("runs --limit 1: exit %d\n%s", r.code, r.stderr)
	}
}
