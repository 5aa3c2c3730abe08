package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// taskJSON is a task as `ultra tasks --json` prints it.
type taskJSON struct {
	Repo       string  `json:"repo"`
	ID         string  `json:"id"`
	Mode       string  `json:"mode"`
	Status     string  `json:"status"`
	TaskStatus string  `json:"task_status"`
	Class      string  `json:"class"`
	For        string  `json:"waiting_for"`
	Why        string  `json:"why"`
	Next       string  `json:"next"`
	Active     bool    `json:"active"`
	Phase      string  `json:"phase"`
	Retries    int     `json:"retries"`
	MaxRetries int     `json:"max_retries"`
	Input      int64   `json:"input_tokens"`
	Output     int64   `json:"output_tokens"`
	Checkpoint string  `json:"checkpoint"`
	Cost       float64 `json:"cost"`
	Limit      struct {
		What      string
		Used, Max int
	} `json:"limit"`
}

type tasksJSON struct {
	Tasks   []taskJSON `json:"tasks"`
	Hidden  int        `json:"hidden_finished"`
	Skipped []struct {
		Repo   string `json:"repo"`
		Reason string `json:"reason"`
	} `json:"skipped_repos"`
}

func listTasks(t *testing.T, dir string, args ...string) tasksJSON {
	t.Helper()
	res := ultra(t, dir, append([]string{"tasks", "--json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("tasks %v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
	}
	var v tasksJSON
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, res.stdout)
	}
	return v
}

func taskByID(t *testing.T, v tasksJSON, id string) taskJSON {
	t.Helper()
	for _, x := range v.Tasks {
		if x.ID == id {
			return x
		}
	}
	t.Fatalf("run %s is not among the tasks: %+v", id, v.Tasks)
	return taskJSON{}
}

// withUsage gives each step the usage it declares: prompt tokens
// 1000+i, completion 10+i, 100 of them cached.
func withUsage(steps []step) (out []step, input, output, cached int64) {
	for i, s := range steps {
		c := step{}
		for k, v := range s {
			c[k] = v
		}
		p, o := int64(1000+i), int64(10+i)
		c["usage"] = map[string]any{"prompt_tokens": p, "completion_tokens": o, "cached_tokens": 100}
		input, output, cached = input+p, output+o, cached+100
		out = append(out, c)
	}
	return out, input, output, cached
}

func TestTasksClassesAndReport(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)

	// A completed run, whose steps declare their usage.
	steps, wantIn, wantOut, wantCached := withUsage(fixSteps())
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
	}
	done := runID(t, res.events(t))

	// An escalated run: its one verification fails and no retry is left.
	m = newModel(t, planGoals("try"), calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))
	res = ultra(t, dir, runArgs(m, "fix calc", "--max-retries", "1")...)
	if res.code != 3 {
		t.Fatalf("escalating run: exit %d\n%s", res.code, res.stderr)
	}
	escalated := runID(t, res.events(t))

	// A plan waiting for acceptance.
	m = newModel(t, fixSteps()[:2]...)
	res = ultra(t, dir, "plan", "--output", "jsonl", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "fix calc")
	if res.code != 3 {
		t.Fatalf("plan: exit %d\n%s", res.code, res.stderr)
	}
	planned := runID(t, res.events(t))

	// A run killed while it waits for a slow model.
	killed := startAndKill(t, dir)

	v := listTasks(t, dir, "--all")
	if len(v.Tasks) != 4 {
		t.Fatalf("%d tasks, want 4: %+v", len(v.Tasks), v.Tasks)
	}
	d := taskByID(t, v, done)
	if d.Class != "done" || d.Active || d.Next != "ultra land "+done || d.Mode != "build" || d.Checkpoint == "" ||
		d.Input != wantIn || d.Output != wantOut || d.TaskStatus != "done" {
		t.Errorf("completed run: %+v", d)
	}
	e := taskByID(t, v, escalated)
	// The limit that ends each run first: the final gate's verifications
	// for the one that completed (1 of 5, against 0 of 10 retries), the
	// retries for the one that ran out of them.
	if l := taskByID(t, v, done).Limit; l.What != "final gate verifications" || l.Used != 1 || l.Max != 5 {
		t.Errorf("completed run's limit: %+v", l)
	}
	if l := e.Limit; l.What != "retries" || l.Used != 1 || l.Max != 1 {
		t.Errorf("escalated run's limit: %+v", l)
	}
	if e.Class != "resumable" || e.Status != "escalated" || !e.Active || e.Next != "ultra resume "+escalated || e.Retries != 1 || e.MaxRetries != 1 {
		t.Errorf("escalated run: %+v", e)
	}
	p := taskByID(t, v, planned)
	if p.Class != "waiting" || p.For != "plan" || p.Next != "ultra approve "+planned || p.Phase != "planning" {
		t.Errorf("planned run: %+v", p)
	}
	k := taskByID(t, v, killed)
	if k.Class != "resumable" || k.Status != "interrupted" || !strings.Contains(k.Why, "its process") || k.Next != "ultra resume "+killed {
		t.Errorf("killed run: %+v", k)
	}
	// What needs a person comes first (the completed run to land right
	// after the waiting one), what can go on last.
	if v.Tasks[0].ID != planned || v.Tasks[1].ID != done || v.Tasks[2].ID != killed || v.Tasks[3].ID != escalated {
		t.Errorf("order: %s %s %s %s", v.Tasks[0].ID, v.Tasks[1].ID, v.Tasks[2].ID, v.Tasks[3].ID)
	}

	// The table says the same.
	tab := ultra(t, dir, "tasks", "--all")
	for _, want := range []string{"NEXT", "waiting:plan", "ultra approve " + planned, "resumable:interrupted", "ultra resume " + killed,
		"resumable:escalated", "1/1 retries", "1/5 final", "ultra land " + done, "build | autonomous | normal | smart | headless"} {
		if !strings.Contains(tab.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, tab.stdout)
		}
	}

	// Without a terminal, --watch prints a new table each second, plainly.
	w := exec.Command(ultraBin, "tasks", "--watch")
	w.Dir, w.Env = dir, ultraEnv(t)
	var wout bytes.Buffer
	w.Stdout = &wout
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2300 * time.Millisecond)
	w.Process.Signal(os.Interrupt)
	if err := w.Wait(); err != nil {
		t.Errorf("tasks --watch after Ctrl-C: %v", err)
	}
	if n := strings.Count(wout.String(), "ultra tasks ·"); n < 2 || strings.Contains(wout.String(), "\x1b") {
		t.Errorf("watch printed %d tables:\n%q", n, wout.String())
	}

	// The report's totals are the usage the steps declared.
	rep := ultra(t, dir, "report", done, "--json")
	var r struct {
		Run    string
		Models []struct {
			Model        string
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		}
		Total struct {
			Responses       int
			InputTokens     int64 `json:"input_tokens"`
			OutputTokens    int64 `json:"output_tokens"`
			CacheReadTokens int64 `json:"cache_read_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(rep.stdout), &r); err != nil {
		t.Fatalf("report %s: %v\n%s%s", done, err, rep.stdout, rep.stderr)
	}
	if r.Run != done || r.Total.Responses != len(steps) || r.Total.InputTokens != wantIn || r.Total.OutputTokens != wantOut ||
		r.Total.CacheReadTokens != wantCached || len(r.Models) != 1 || r.Models[0].InputTokens != wantIn {
		t.Errorf("report of %s: %+v, want %d responses, %d in, %d out, %d cached", done, r, len(steps), wantIn, wantOut, wantCached)
	}
	all := ultra(t, dir, "report", "--json")
	var ra struct {
		Runs []struct {
			Run         string
			Mode        string
			InputTokens int64 `json:"input_tokens"`
		}
		Modes []struct {
			Mode        string
			InputTokens int64 `json:"input_tokens"`
		}
		Total struct {
			InputTokens int64 `json:"input_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(all.stdout), &ra); err != nil {
		t.Fatalf("report: %v\n%s", err, all.stdout)
	}
	var sum int64
	found := false
	for _, x := range ra.Runs {
		sum += x.InputTokens
		if x.Run == done {
			found = x.InputTokens == wantIn && x.Mode == "build"
		}
	}
	var modeSum int64
	build := false
	for _, x := range ra.Modes {
		modeSum += x.InputTokens
		build = build || x.Mode == "build"
	}
	if !found || sum != ra.Total.InputTokens || modeSum != sum || !build || len(ra.Runs) < 3 {
		t.Errorf("report: %s", all.stdout)
	}
	if h := ultra(t, dir, "report"); h.code != 0 || !strings.Contains(h.stdout, "TOTAL") || !strings.Contains(h.stdout, "scripted") {
		t.Errorf("report table: exit %d\n%s%s", h.code, h.stdout, h.stderr)
	}
}

// startAndKill starts a run whose model never answers in time, kills its
// process (kill -9) once the request is out, and returns the run's id.
func startAndKill(t *testing.T, dir string) string {
	t.Helper()
	id, reap := startAndKillUnreaped(t, dir)
	reap()
	return id
}

// startAndKillUnreaped starts a run that waits for a slow model, sends
// it SIGKILL and returns its id and the function that reaps the killed
// process: until then it is a zombie, which still answers kill(pid, 0).
func startAndKillUnreaped(t *testing.T, dir string) (string, func()) {
	t.Helper()
	m := newModel(t, step{"delay_ms": 60000, "text": "too late"})
	cmd := exec.Command(ultraBin, runArgs(m, "fix calc")...)
	cmd.Dir, cmd.Env = dir, ultraEnv(t)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id := ""
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e map[string]any
		json.Unmarshal(sc.Bytes(), &e)
		if e["type"] == "run_started" {
			id = e["run"].(string)
		}
		if e["type"] == "model_request" {
			break
		}
	}
	if id == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the run never asked the model")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	drained := make(chan struct{})
	go func() {
		for sc.Scan() {
		}
		close(drained)
	}()
	<-drained // the pipe closes when the process is gone
	var once sync.Once
	reap := func() { once.Do(func() { cmd.Wait() }) }
	t.Cleanup(reap)
	return id, reap
}

// TestKilledRunOneWordEverywhere: after kill -9, every command says the
// same of the run (interrupted, resume it), whether or not the killed
// process has been reaped yet.
func TestKilledRunOneWordEverywhere(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	id, reap := startAndKillUnreaped(t, dir)
	check := func(when string) {
		t.Helper()
		var runs []struct{ ID, Status string }
		r := ultra(t, dir, "runs", "--json")
		if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 1 || runs[0].Status != "interrupted" {
			t.Errorf("%s: ultra runs: %v %s", when, err, r.stdout)
		}
		var st struct {
			Status, Reason string
			Class          struct{ Class, Next string }
		}
		r = ultra(t, dir, "status", id, "--json")
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Status != "interrupted" || !strings.Contains(st.Reason, "is gone") ||
			st.Class.Class != "resumable" || st.Class.Next != "ultra resume "+id {
			t.Errorf("%s: ultra status: %v %+v", when, err, st)
		}
		if r = ultra(t, dir, "status", id); !strings.Contains(r.stdout, "status   interrupted: its process") || !strings.Contains(r.stdout, "next     ultra resume "+id) {
			t.Errorf("%s: ultra status:\n%s", when, r.stdout)
		}
		k := taskByID(t, listTasks(t, dir), id)
		if k.Class != "resumable" || k.Status != "interrupted" || k.Next != "ultra resume "+id {
			t.Errorf("%s: ultra tasks: %+v", when, k)
		}
		r = ultra(t, dir, "doctor")
		// No starting marker either: it goes once the run is stored.
		if !strings.Contains(r.stdout, "run "+id+" was interrupted (its process") || !strings.Contains(r.stdout, "ultra resume "+id) || strings.Contains(r.stdout, "stuck") ||
			strings.Contains(r.stdout, "stale-start") {
			t.Errorf("%s: ultra doctor:\n%s", when, r.stdout)
		}
	}
	check("killed, not reaped")
	reap()
	check("killed and reaped")
	// doctor fix records what every command already said; nothing changes
	// in what they say.
	if r := ultra(t, dir, "doctor", "fix"); !strings.Contains(r.stdout, "fixed stale-heartbeat:"+id) {
		t.Fatalf("doctor fix:\n%s%s", r.stdout, r.stderr)
	}
	k := taskByID(t, listTasks(t, dir), id)
	if k.Class != "resumable" || k.Status != "interrupted" || k.Next != "ultra resume "+id {
		t.Errorf("after doctor fix: ultra tasks: %+v", k)
	}
}

func TestTasksAllRepos(t *testing.T) {
	t.Parallel()
	a, b := repo(t, calcProject), repo(t, calcProject)
	ids := map[string]string{}
	for _, dir := range []string{a, b} {
		m := newModel(t, fixSteps()[:2]...)
		res := ultra(t, dir, "plan", "--output", "jsonl", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "fix calc")
		if res.code != 3 {
			t.Fatalf("plan in %s: exit %d\n%s", dir, res.code, res.stderr)
		}
		ids[dir] = runID(t, res.events(t))
	}
	// A repository where a run (a chat) started, then removed.
	gone := repo(t, map[string]string{"README": "x\n"})
	if res := ultra(t, gone, "-p", "--provider", "openai", "--base-url", newModel(t, text("x")).url, "--model", "scripted", "what?"); res.code != 0 {
		t.Fatalf("a chat in the repository: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// Only starting a run registers a repository: looking does not.
	looked := repo(t, map[string]string{"README": "y\n"})
	if res := ultra(t, looked, "tasks"); res.code != 0 || !strings.Contains(res.stdout, "no runs yet") {
		t.Fatalf("tasks in an empty repository: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if reg, _ := os.ReadFile(filepath.Join(stateHome(t), "ultra", "repos.json")); !strings.Contains(string(reg), gone) || strings.Contains(string(reg), looked) {
		t.Fatalf("the registry:\n%s", reg)
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}

	// From anywhere, even outside any repository.
	v := listTasks(t, t.TempDir(), "--all-repos")
	if len(v.Tasks) != 2 {
		t.Fatalf("%d tasks across repositories, want 2: %+v", len(v.Tasks), v.Tasks)
	}
	for dir, id := range ids {
		x := taskByID(t, v, id)
		// The command names the repository: it works from anywhere.
		if x.Repo != dir || x.Class != "waiting" || x.Next != "ultra -C '"+dir+"' approve "+id {
			t.Errorf("task of %s: %+v", dir, x)
		}
	}
	if len(v.Skipped) != 1 || v.Skipped[0].Repo != gone || !strings.Contains(v.Skipped[0].Reason, "gone") {
		t.Errorf("skipped: %+v", v.Skipped)
	}
	tab := ultra(t, t.TempDir(), "tasks", "--all-repos")
	if !strings.Contains(tab.stdout, "REPO") || !strings.Contains(tab.stdout, filepath.Base(a)) || !strings.Contains(tab.stdout, "skipped "+gone) {
		t.Errorf("table across repositories:\n%s", tab.stdout)
	}
	// Each repository alone lists only its own.
	if one := listTasks(t, a); len(one.Tasks) != 1 || one.Tasks[0].ID != ids[a] || one.Tasks[0].Repo != "" {
		t.Errorf("tasks of %s: %+v", a, one.Tasks)
	}
}
