package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestKill9ThenResume(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	cmd, id, m := startInLongCommand(t, dir)
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// A git the run was running when it was killed left its index lock.
	wt := strings.TrimSpace(git(t, dir, "worktree", "list", "--porcelain"))
	wt = wt[strings.LastIndex(wt, "worktree ")+len("worktree "):]
	wt = wt[:strings.IndexByte(wt, '\n')]
	gitDir := strings.TrimSpace(git(t, wt, "rev-parse", "--path-format=absolute", "--git-dir"))
	os.WriteFile(filepath.Join(gitDir, "index.lock"), nil, 0o644)
	// The sleep it started must not hold the repository forever, but the
	// point here is the store: the run shows as interrupted.
	runs := ultra(t, dir, "runs")
	if !strings.Contains(runs.stdout, id) || !strings.Contains(runs.stdout, "interrupted") {
		t.Fatalf("runs after kill:\n%s%s", runs.stdout, runs.stderr)
	}
	st := ultra(t, dir, "status", id, "--json")
	var s map[string]any
	json.Unmarshal([]byte(st.stdout), &s)
	if s["phase"] != "building" || s["status"] != "interrupted" {
		t.Fatalf("status after kill: %v", s)
	}

	res := ultra(t, dir, "resume", id, "--output", "jsonl", "--base-url", m.url)
	if res.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	if got := readFile(t, filepath.Join(wt, "calc/calc.go")); !strings.Contains(got, "return a + b") {
		t.Fatal("not fixed after resume")
	}
	if evs[0]["type"] != "run_resumed" || data(evs[0])["from"] != "running" {
		t.Fatalf("first event after resume %v", evs[0])
	}
	if len(ofType(evs, "commit")) != 2 {
		t.Fatal("the resumed run did not commit its green tree (stale index lock?)")
	}
	// The resumed history is the persisted one: the request after resume
	// carries the plan-acceptance step, then a note for the lost step.
	reqs := m.srv.Requests()
	last := string(reqs[len(reqs)-3].Body)
	if !strings.Contains(last, "Goals accepted") {
		t.Fatal("resumed request lacks the persisted history")
	}
	checkWire(t, m)
}

// startInLongCommand starts a run that fixes calcProject but first runs
// `sleep 60`, and returns once that command has started: the run's
// process, its id and its model.
func startInLongCommand(t *testing.T, dir string) (*exec.Cmd, string, *model) {
	t.Helper()
	steps := fixSteps()
	steps = append(steps[:2], append([]step{calls(call("bash", map[string]any{"command": "sleep 60", "timeout_ms": 120000}))}, steps[2:]...)...)
	m := newModel(t, steps...)
	cmd := exec.Command(ultraBin, runArgs(m, "fix calc")...)
	cmd.Dir = dir
	cmd.Env = ultraEnv(t)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var e map[string]any
		json.Unmarshal(sc.Bytes(), &e)
		if e["type"] == "run_started" {
			id = e["run"].(string)
		}
		if e["type"] == "tool_call" && data(e)["tool"] == "bash" {
			break
		}
	}
	go func() { // keep the pipe drained
		for sc.Scan() {
		}
	}()
	return cmd, id, m
}

func TestConcurrentRunsDoNotInterfere(t *testing.T) {
	t.Parallel()
	// Two runs in one repository (each verifying its own package) and a
	// third in another repository, all at once.
	files := map[string]string{
		"go.mod":      "module example.com/two\n\ngo 1.21\n",
		"a/a.go":      "package a\n\nfunc One() int { return 0 }\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(\"want 1\")\n\t}\n}\n",
		"b/b.go":      "package b\n\nfunc Two() int { return 0 }\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal(\"want 2\")\n\t}\n}\n",
	}
	shared := repo(t, files)
	other := repo(t, calcProject)

	// Run A fails verification twice before fixing; run B fixes at once.
	stepsA := []step{
		planGoals("fix a"),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		calls(call("read", map[string]any{"file_path": "a/a.go"})),
		calls(call("edit", map[string]any{"file_path": "a/a.go", "old_string": "return 0", "new_string": "return 1"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		approve(),
	}
	stepsB := []step{
		calls(call("read", map[string]any{"file_path": "b/b.go"})),
		planGoals("fix b"),
		calls(call("edit", map[string]any{"file_path": "b/b.go", "old_string": "return 0", "new_string": "return 2"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		approve(),
	}
	ma, mb, mc := newModel(t, stepsA...), newModel(t, stepsB...), newModel(t, fixSteps()...)

	var wg sync.WaitGroup
	results := make([]result, 3)
	for i, job := range []struct {
		dir  string
		args []string
	}{
		{shared, runArgs(ma, "--verify-command", "go test ./a/", "fix a")},
		{shared, runArgs(mb, "--verify-command", "go test -v ./b/", "fix b")},
		{other, runArgs(mc, "fix calc")},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = ultra(t, job.dir, job.args...)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("run %d exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
	}
	ida, idb := runID(t, results[0].events(t)), runID(t, results[1].events(t))
	status := func(dir, id string) map[string]any {
		var s map[string]any
		json.Unmarshal([]byte(ultra(t, dir, "status", id, "--json").stdout), &s)
		return s
	}
	sa, sb := status(shared, ida), status(shared, idb)
	if sa["retries"].(map[string]any)["used"].(float64) != 2 || sb["retries"].(map[string]any)["used"].(float64) != 0 {
		t.Fatalf("retries leaked between runs: a=%v b=%v", sa["retries"], sb["retries"])
	}
	// (each with the end of its cleanup pass)
	if sa["used"].(map[string]any)["turns"].(float64) != 11 || sb["used"].(map[string]any)["turns"].(float64) != 7 {
		t.Fatalf("turns: a=%v b=%v", sa["used"], sb["used"])
	}
	if !strings.Contains(sa["plan"].(string), "fix a") || !strings.Contains(sb["plan"].(string), "fix b") {
		t.Fatal("plans mixed up")
	}
	// Each run's events are its own.
	for _, r := range results[:2] {
		id := runID(t, r.events(t))
		for _, e := range r.events(t) {
			if e["run"] != id {
				t.Fatal(fmt.Sprintf("event of run %v in run %s's stream", e["run"], id))
			}
		}
	}
	runs := ultra(t, shared, "runs", "--json")
	var list []map[string]any
	json.Unmarshal([]byte(runs.stdout), &list)
	if len(list) != 2 {
		t.Fatalf("shared repo lists %d runs, want 2", len(list))
	}
}
