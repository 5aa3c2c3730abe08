package e2e

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/store/pgtest"
)

// lockedBuffer is a worker's output, read while it writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startWorker starts `ultra worker` in dir; stop it with SIGTERM.
func startWorker(t *testing.T, dir string, env []string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := execCmd(dir, env, ultraBin, "worker")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	return cmd, out
}

type scheduleShown struct {
	ID         string `json:"id"`
	State      string `json:"state"`
	Dispatches []struct {
		Status    string `json:"status"`
		Run       string `json:"run"`
		ClaimedBy string `json:"claimed_by"`
		Reason    string `json:"reason"`
	} `json:"dispatches"`
}

func showSchedule(t *testing.T, dir string, env []string, id string) scheduleShown {
	t.Helper()
	r := ultraRun(t, dir, env, "schedule", "show", id, "--json")
	if r.code != 0 {
		t.Fatalf("schedule show: %d %s", r.code, r.stderr)
	}
	var v scheduleShown
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("schedule show --json: %v\n%s", err, r.stdout)
	}
	return v
}

var scheduleIDRe = regexp.MustCompile(`(?m)^schedule (s-[a-z2-7]{6}): `)

// A schedule due while two workers serve the repository runs once: one
// dispatch, claimed by one worker, one run whose task row names the
// schedule, one branch with the fix, and the script's steps used once.
func TestScheduleTwoWorkersDispatchOnce(t *testing.T) {
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	env := ultraEnv(t)
	at := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339)
	r := ultraRun(t, dir, env, "schedule", "add", "--at", at, "--provider", "openai", "--base-url", m.url, "--model", "scripted", "fix the calculator's Add")
	if r.code != 0 {
		t.Fatalf("schedule add: %d %s", r.code, r.stderr)
	}
	sm := scheduleIDRe.FindStringSubmatch(r.stdout)
	if sm == nil {
		t.Fatalf("schedule add printed %q", r.stdout)
	}
	id := sm[1]
	if tr := ultraRun(t, dir, env, "tasks"); !strings.Contains(tr.stdout, "schedules are not being served") || !strings.Contains(tr.stdout, id) {
		t.Fatalf("ultra tasks without a worker:\n%s", tr.stdout)
	}
	_, outA := startWorker(t, dir, env)
	_, outB := startWorker(t, dir, env)
	deadline := time.Now().Add(120 * time.Second)
	var v scheduleShown
	for {
		v = showSchedule(t, dir, env, id)
		if len(v.Dispatches) > 0 && v.Dispatches[0].Status == "consumed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dispatch was not consumed: %+v\nworker a:\n%s\nworker b:\n%s", v, outA, outB)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(v.Dispatches) != 1 || v.State != "done" {
		t.Fatalf("dispatches %+v, state %s", v.Dispatches, v.State)
	}
	run := v.Dispatches[0].Run
	started := strings.Count(outA.String()+outB.String(), "started run ")
	if started != 1 || !strings.Contains(outA.String()+outB.String(), "started run "+run) {
		t.Fatalf("%d runs started:\nworker a:\n%s\nworker b:\n%s", started, outA, outB)
	}
	// One run, started by the schedule, complete, with its fix on its branch.
	tr := ultraRun(t, dir, env, "tasks", "--all", "--json")
	var tv struct {
		Tasks []struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			Schedule string `json:"schedule"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(tr.stdout), &tv); err != nil {
		t.Fatal(err)
	}
	if len(tv.Tasks) != 1 || tv.Tasks[0].ID != run || tv.Tasks[0].Schedule != id || tv.Tasks[0].Status != "complete" {
		t.Fatalf("tasks: %+v", tv.Tasks)
	}
	if got := git(t, dir, "show", "ultra/"+run+":calc/calc.go"); !strings.Contains(got, "return a + b") {
		t.Fatalf("the run's branch:\n%s", got)
	}
	if branches := git(t, dir, "branch", "--list", "ultra/*"); strings.Count(branches, "ultra/") != 1 {
		t.Fatalf("branches:\n%s", branches)
	}
	st := ultraRun(t, dir, env, "status", run)
	if !strings.Contains(st.stdout, "schedule "+id) {
		t.Fatalf("ultra status does not name the schedule:\n%s", st.stdout)
	}
	if n, want := len(m.srv.Requests()), len(withCleanupEnds(fixSteps())); n != want {
		t.Fatalf("the model answered %d requests, want %d (one run)", n, want)
	}
}

// What a person gets wrong about schedules is refused with the flag
// named, exit 2, and nothing is recorded.
func TestScheduleRefusals(t *testing.T) {
	dir := repo(t, map[string]string{"README.md": "x\n"})
	env := ultraEnv(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"schedule", "add", "do it"}, "exactly one of --cron, --every and --at"},
		{[]string{"schedule", "add", "--every", "10ms", "do it"}, "shortest period"},
		{[]string{"schedule", "add", "--cron", "61 * * * *", "do it"}, `--cron "61 * * * *"`},
		{[]string{"schedule", "add", "--every", "1h", "--zone", "Mars/Base", "do it"}, `--zone "Mars/Base"`},
		{[]string{"schedule", "add", "--at", "2001-01-01T00:00:00Z", "do it"}, "in the past"},
		{[]string{"schedule", "add", "--every", "1h", "-p", "do it"}, "--print is not for a schedule"},
		{[]string{"schedule", "add", "--every", "1h", "--include-uncommitted", "do it"}, "--include-uncommitted is not for a schedule"},
		{[]string{"schedule", "add", "--every", "1h", "--max-turns", "0", "do it"}, "--max-turns 0 is refused"},
		{[]string{"schedule", "add", "--every", "1h", "--catch-up", "all", "do it"}, `--catch-up "all"`},
		{[]string{"schedule", "add", "--every", "1h"}, "the task is empty"},
		{[]string{"schedule", "add", "--every", "1h", "--brief-file", "nope.md"}, "nope.md"},
		{[]string{"schedule", "show", "s-nosuch"}, "schedule not found"},
		{[]string{"schedule", "pause", "s-nosuch"}, "schedule not found"},
	} {
		r := ultraRun(t, dir, env, tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("ultra %s: exit %d, stderr %q; want 2 naming %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
		}
	}
	if r := ultraRun(t, dir, env, "schedule", "list", "--all", "--json"); !strings.Contains(r.stdout, `"schedules": []`) {
		t.Fatalf("a refused schedule was recorded:\n%s", r.stdout)
	}
	// Pause, resume and remove, each once.
	r := ultraRun(t, dir, env, "schedule", "add", "--every", "1h", "--zone", "UTC", "do it")
	id := scheduleIDRe.FindStringSubmatch(r.stdout)[1]
	for _, step := range []struct {
		verb string
		code int
		want string
	}{
		{"resume", 2, "is not paused"},
		{"pause", 0, "paused"},
		{"pause", 2, "already paused"},
		{"resume", 0, "resumed"},
		{"remove", 0, "removed"},
		{"pause", 2, "was removed"},
	} {
		r := ultraRun(t, dir, env, "schedule", step.verb, id)
		if r.code != step.code || !strings.Contains(r.stdout+r.stderr, step.want) {
			t.Errorf("schedule %s: exit %d %q %q; want %d naming %q", step.verb, r.code, r.stdout, r.stderr, step.code, step.want)
		}
	}
	if _, err := os.Stat(dir + "/.ultra/state/ultra.db"); err != nil {
		t.Fatal(err)
	}
}

// Outside a repository, the worker, ultra schedule and ultra tasks say
// what they would do there and what works without one (a fleet's worker,
// ULTRA_DB, --all-repos), not to run git init; a store that cannot be
// reached is one line naming it, its password hidden, and what to check.
func TestScheduleOutsideRepoAndUnreachableStore(t *testing.T) {
	dir := t.TempDir()
	env := ultraEnv(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"worker"}, "a fleet's worker needs no repository: ultra worker --db postgres://"},
		{[]string{"schedule", "list"}, "a repository's schedules are kept in it"},
		{[]string{"tasks"}, "ultra tasks --all-repos lists every repository's"},
	} {
		r := ultraRun(t, dir, env, tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, "git init") {
			t.Errorf("ultra %s outside a repository: exit %d, %q; want 2 saying %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
		}
	}
	down := "postgres://bob:s3cret@127.0.0.1:1/fleet"
	for _, tt := range []struct {
		env  []string
		args []string
	}{
		{append(env, "ULTRA_DB="+down), []string{"tasks"}},
		{append(env, "ULTRA_DB="+down), []string{"schedule", "list"}},
		{env, []string{"worker", "--db", down}},
	} {
		r := ultraRun(t, dir, tt.env, tt.args...)
		want := "ultra: cannot reach the database postgres://bob:***@127.0.0.1:1/fleet: connection refused at 127.0.0.1:1; check that PostgreSQL runs there"
		if r.code == 0 || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "s3cret") {
			t.Errorf("ultra %s with the store down: exit %d, %q", strings.Join(tt.args, " "), r.code, r.stderr)
		}
	}
	// A server that answers, without the database.
	u, err := url.Parse(pgtest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_db"
	r := ultraRun(t, dir, append(env, "ULTRA_DB="+u.String()), "tasks")
	if r.code == 0 || !strings.Contains(r.stderr, `there is no database "no_such_db"; create it`) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("ultra tasks on a server without the database: exit %d, %q", r.code, r.stderr)
	}
}
