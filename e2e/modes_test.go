package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// noRunGit asserts a run left no branch and no worktree behind, and the
// checkout is as it was.
func noRunGit(t *testing.T, dir, status string) {
	t.Helper()
	noBranchOrWorktree(t, dir)
	if s := git(t, dir, "status", "--porcelain"); s != status {
		t.Errorf("the checkout changed: %q, was %q", s, status)
	}
}

func chatArgs(m *model, extra ...string) []string {
	return append([]string{"chat", "--provider", "openai", "--base-url", m.url, "--model", "scripted"}, extra...)
}

// A chat reads, answers, and its answer is the result: exit 0, nothing
// made in git, no write reached the checkout even when the model tried.
func TestChatAnswersReadOnly(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	before := git(t, dir, "status", "--porcelain")
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("write", map[string]any{"file_path": "calc/new.go", "content": "package calc\n"}),
			call("bash", map[string]any{"command": "echo hacked > calc/calc.go"})),
		text("Add subtracts: calc/calc.go line 5 returns a - b."),
	)
	res := ultra(t, dir, chatArgs(m, "what does Add do?")...)
	if res.code != 0 {
		t.Fatalf("chat: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if strings.TrimSpace(res.stdout) != "Add subtracts: calc/calc.go line 5 returns a - b." {
		t.Fatalf("stdout is not the answer: %q", res.stdout)
	}
	noRunGit(t, dir, before)
	if b, _ := os.ReadFile(filepath.Join(dir, "calc/calc.go")); !strings.Contains(string(b), "return a - b") {
		t.Fatalf("the chat changed calc.go:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "calc/new.go")); err == nil {
		t.Fatal("the chat wrote a file")
	}
	reqs := m.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if !slices.Equal(r.Tools, []string{"read", "glob", "grep", "bash"}) {
			t.Errorf("request %d offered %v", i+1, r.Tools)
		}
	}
	// Both writing calls came back to the model as refusals.
	third := string(reqs[2].Body)
	if !strings.Contains(third, "Refused [phase-guard]") || !strings.Contains(third, "Refused [planning-read-only]") {
		t.Fatalf("the refusals did not reach the model:\n%s", third)
	}

	// The session goes on: the next question carries the history.
	runs := ultra(t, dir, "runs", "--json")
	var rs []map[string]any
	json.Unmarshal([]byte(runs.stdout), &rs)
	if len(rs) != 1 {
		t.Fatalf("runs: %s", runs.stdout)
	}
	id := rs[0]["id"].(string)
	m2 := newModel(t, text("Its test is calc/calc_test.go."))
	next := ultra(t, dir, chatArgs(m2, id, "and its test?")...)
	if next.code != 0 || strings.TrimSpace(next.stdout) != "Its test is calc/calc_test.go." {
		t.Fatalf("next question: exit %d %q %s", next.code, next.stdout, next.stderr)
	}
	body := string(m2.srv.Requests()[0].Body)
	if !strings.Contains(body, "what does Add do?") || !strings.Contains(body, "and its test?") || !strings.Contains(body, "line 5 returns a - b") {
		t.Fatalf("the session's history did not reach the model:\n%s", body)
	}
	noRunGit(t, dir, before)
	// A chat id given to a build command's place is not a chat's.
	if r := ultra(t, dir, "runs", "--json"); strings.Count(r.stdout, `"id"`) != 1 {
		t.Fatalf("the session made another run:\n%s", r.stdout)
	}
}

// ultra -p reads the question from stdin and prints only the answer.
func TestPrintModeFromStdin(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	before := git(t, dir, "status", "--porcelain")
	m := newModel(t, text("It is a calculator."))
	cmd := execCmd(dir, ultraEnv(t), ultraBin, "-p", "--base-url", m.url, "--model", "scripted", "--provider", "openai")
	cmd.Stdin = strings.NewReader("what is this project?\n")
	res := ultraCmd(t, cmd, dir, ultraEnv(t))
	if res.code != 0 || res.stdout != "It is a calculator.\n" || res.stderr != "" {
		t.Fatalf("-p: exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(string(m.srv.Requests()[0].Body), "what is this project?") {
		t.Fatal("the question from stdin did not reach the model")
	}
	noRunGit(t, dir, before)
	// A model that cannot answer is an error, not an empty answer.
	bad := newModel(t, step{"status": 400, "error": "bad request"})
	cmd = execCmd(dir, ultraEnv(t), ultraBin, "-p", "--base-url", bad.url, "--model", "scripted", "--provider", "openai", "q?")
	if r := ultraCmd(t, cmd, dir, ultraEnv(t)); r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "400") {
		t.Fatalf("-p against a failing server: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	// A typo is not a question.
	if r := ultra(t, dir, "statsu"); r.code != 2 || !strings.Contains(r.stderr, "unknown command") {
		t.Fatalf("unknown command: exit %d %s", r.code, r.stderr)
	}
}

// ultra run --mode chat answers and leaves no branch (it used to plan,
// build, escalate and leave a branch).
func TestRunModeChat(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	before := git(t, dir, "status", "--porcelain")
	m := newModel(t, text("A calculator with one function."))
	res := ultra(t, dir, "run", "--mode", "chat", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "what does this project do?")
	if res.code != 0 || !strings.Contains(res.stdout, "A calculator with one function.") {
		t.Fatalf("run --mode chat: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	noRunGit(t, dir, before)
}

// ultra plan stops at the acceptance point; accepting it "to run
// autonomously" switches the mode to build and the control to
// autonomous, both recorded, and the run completes by itself.
func TestPlanAcceptAutonomous(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()[:2]...)
	res := ultra(t, dir, "plan", "--control", "assisted", "--output", "jsonl", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "fix calc")
	if res.code != 3 || !strings.Contains(res.stderr, "needs_approval") {
		t.Fatalf("plan: exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	if evs := res.events(t); data(evs[0])["axes"].(map[string]any)["mode"] != "plan" {
		t.Fatalf("ultra plan did not start in plan mode: %v", data(evs[0])["axes"])
	}
	m2 := newModel(t, fixSteps()[2:]...)
	a := ultra(t, dir, "approve", id, "--autonomous", "--output", "jsonl", "--base-url", m2.url)
	if a.code != 0 {
		t.Fatalf("approve --autonomous: exit %d\n%s", a.code, a.stderr)
	}
	st := ultra(t, dir, "status", id, "--json")
	var s struct {
		Axes        map[string]string `json:"axes"`
		Transitions []struct{ Kind, Axis, From, To, By, Reason, Scope string }
	}
	if err := json.Unmarshal([]byte(st.stdout), &s); err != nil {
		t.Fatalf("status: %v\n%s", err, st.stdout)
	}
	if s.Axes["mode"] != "build" || s.Axes["control"] != "autonomous" {
		t.Fatalf("axes after acceptance: %v", s.Axes)
	}
	var mode, control bool
	for _, tr := range s.Transitions {
		if tr.Kind == "axis" && tr.Axis == "mode" && tr.From == "plan" && tr.To == "build" && tr.By == "person" {
			mode = true
		}
		if tr.Kind == "axis" && tr.Axis == "control" && tr.From == "assisted" && tr.To == "autonomous" && tr.By == "person" {
			control = true
		}
	}
	if !mode || !control {
		t.Fatalf("the transitions were not recorded: %+v", s.Transitions)
	}
	// Accepted to run autonomously: it did not pause at the end of units.
	for _, e := range a.events(t) {
		if e["type"] == "run_finished" && data(e)["status"] != "complete" {
			t.Fatalf("finished %v", data(e))
		}
	}
}
