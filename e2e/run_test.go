package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/phase"
)

var reminderPhase = regexp.MustCompile(`<ultra-reminder>\n\[ultra\] phase: (\w+)\.`)

// reminderLimit is the reminder's binding limit: what, left, of how many.
var goalCycle = regexp.MustCompile(`cycle (\d+) of (\d+)`)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

var reminderLimit = regexp.MustCompile(`\n(retries|cycles of goal \S+|final gate verifications|cleanup turns) left: (\d+) of (\d+);`)

// checkWire asserts layers 1 and 3 at the wire: every request carries the
// reminder, and offers exactly the tools of the phase it names.
func checkWire(t *testing.T, m *model) {
	t.Helper()
	reqs := m.srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no requests reached the model")
	}
	for i, r := range reqs {
		sm := reminderPhase.FindStringSubmatch(r.LastUser)
		if sm == nil {
			t.Fatalf("request %d carries no reminder; last user message: %q", i+1, r.LastUser)
		}
		for _, want := range []string{"turns left:", "tokens left:", "time left:", "tools now:"} {
			if !strings.Contains(r.LastUser, want) {
				t.Errorf("request %d reminder lacks %q", i+1, want)
			}
		}
		// The reminder states the limit that ends the run first: a goal's
		// 5 cycles before the run's 10 retries, the retries when fewer are
		// left than the goal's cycles.
		lim := reminderLimit.FindStringSubmatch(r.LastUser)
		cyc := goalCycle.FindStringSubmatch(r.LastUser)
		switch {
		case lim == nil:
			t.Errorf("request %d reminder states no limit:\n%s", i+1, r.LastUser)
		case cyc != nil && lim[1] == "retries" && atoi(lim[2]) > atoi(cyc[2])-atoi(cyc[1])+1:
			t.Errorf("request %d works on cycle %s of %s of a goal but its reminder states %q", i+1, cyc[1], cyc[2], lim[0])
		}
		p := phase.Phase(sm[1])
		if want := tableTools(p); !slices.Equal(r.Tools, want) {
			t.Errorf("request %d in %s offered %v, table says %v", i+1, p, r.Tools, want)
		}
	}
}

func TestFullCycleToComplete(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := append([]step{text("Let me look at the code.")}, fixSteps()...)
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "make the failing test in calc pass")...)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	wt, id := workdirOf(t, evs), runID(t, evs)
	if got := readFile(t, filepath.Join(wt, "calc/calc.go")); !strings.Contains(got, "return a + b") {
		t.Fatalf("file not fixed:\n%s", got)
	}
	checkPhases(t, evs, "building", "verifying", "cleaning", "verifying", "reviewing", "complete")
	// ultra ran the goal's three criteria itself, all passed, and the
	// goal's commit carries goals.json and the ledger.
	cr := judged(evs)
	if len(cr) != 3 {
		t.Fatalf("criterion events %v", cr)
	}
	for _, e := range cr {
		if data(e)["status"] != "pass" {
			t.Fatalf("criterion %v", data(e))
		}
	}
	// Before the plan was accepted, each criterion ran on the base tree
	// and did what it claims there; ultra goals criteria shows both results.
	var base []string
	for _, e := range ofType(evs, "criterion") {
		if d := data(e); d["base"] != nil {
			base = append(base, fmt.Sprintf("%s %s %s", d["criterion"], d["status"], d["base"]))
		}
	}
	// (The two fail-to-pass ones run there once more at the final gate.)
	if strings.Join(base, "; ") != "G001-C1 fail fail_to_pass; G001-C2 fail fail_to_pass; G001-C3 pass pass_to_pass; G001-C1 fail fail_to_pass; G001-C2 fail fail_to_pass" {
		t.Fatalf("base results: %v", base)
	}
	gc := ultra(t, dir, "goals", "criteria", "G001", "--run", runID(t, evs))
	for _, want := range []string{"base:  fail on the base tree (fail to pass, as it must)", "base:  pass on the base tree (pass to pass, as it must)",
		"final: pass: command go test -count=1 -run '^TestAdd$' ./calc", "on the base tree ", "/base/command.txt",
		"final gate, on the base tree again: fail (still fails there, as it must)"} {
		if gc.code != 0 || !strings.Contains(gc.stdout, want) {
			t.Fatalf("ultra goals criteria lacks %q (exit %d):\n%s%s", want, gc.code, gc.stdout, gc.stderr)
		}
	}
	// Two commits: the goal's, then ultra's records of the final gate
	// and the review.
	msg := git(t, wt, "log", "-1", "--format=%B", "HEAD~1")
	if !strings.Contains(msg, "Ultra-Goal: G001-add-adds") || !strings.Contains(msg, "Ultra-Ledger: ") {
		t.Fatalf("goal commit message:\n%s", msg)
	}
	if files := git(t, wt, "show", "--name-only", "--format=", "HEAD~1"); !strings.Contains(files, ".ultra/runs/"+id+"/goals.json") || !strings.Contains(files, ".ultra/runs/"+id+"/ledger.jsonl") || !strings.Contains(files, "calc/calc.go") {
		t.Fatalf("goal commit files:\n%s", files)
	}
	if files := git(t, wt, "show", "--name-only", "--format=", "HEAD"); strings.TrimSpace(files) != ".ultra/runs/"+id+"/goals.json\n.ultra/runs/"+id+"/ledger.jsonl" {
		t.Fatalf("the records commit may hold only ultra's records:\n%s", files)
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", runID(t, evs)); v.code != 0 || !strings.Contains(v.stdout, "intact") {
		t.Fatalf("ledger --verify: %d %s %s", v.code, v.stdout, v.stderr)
	}
	v := ofType(evs, "verify_result")
	if len(v) != 1 || data(v[0])["status"] != "PASS" || data(v[0])["passed"].(float64) != 2 {
		t.Fatalf("verify results %v", v)
	}
	fin := ofType(evs, "run_finished")
	if len(fin) != 1 || data(fin[0])["status"] != "complete" || data(fin[0])["exit_code"].(float64) != 0 {
		t.Fatalf("finish %v", fin)
	}
	// The text-only answer got a reminder, not completion.
	if !strings.Contains(string(m.srv.Requests()[1].Body), "Your answer called no tool") {
		t.Fatal("a text-only answer must get a reminder")
	}
	checkWire(t, m)

	st := ultra(t, dir, "status", id, "--json")
	var s map[string]any
	if err := json.Unmarshal([]byte(st.stdout), &s); err != nil || st.code != 0 {
		t.Fatalf("status: %v %d %s %s", err, st.code, st.stdout, st.stderr)
	}
	if s["phase"] != "complete" || s["status"] != "complete" || !strings.Contains(s["plan"].(string), "G001-add-adds: Add adds") {
		t.Fatalf("status %v", s)
	}
	if s["axes"].(map[string]any)["control"] != "autonomous" {
		t.Fatalf("axes %v", s["axes"])
	}
	runs := ultra(t, dir, "runs")
	if runs.code != 0 || !strings.Contains(runs.stdout, id) || !strings.Contains(runs.stdout, "complete") {
		t.Fatalf("runs: %s %s", runs.stdout, runs.stderr)
	}
	// The user's checkout holds nothing of ultra's but its ignored state;
	// the change is committed on the run's branch.
	if out := git(t, dir, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("git status:\n%s", out)
	}
	if out := git(t, wt, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("worktree status:\n%s", out)
	}
}

func TestHumanOutput(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	args := runArgs(m, "fix calc")
	args[2] = "human"
	res := ultra(t, dir, args...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"[planning ]", "[building ]", "[verifying]", "[complete ]", "gate PASS", "✔ complete"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("human log lacks %q:\n%s", want, res.stdout)
		}
	}
}

func TestPlanningIsReadOnly(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	before := readFile(t, filepath.Join(dir, "calc/calc.go"))
	m := newModel(t,
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "a - b", "new_string": "a + b"})),
		calls(call("write", map[string]any{"file_path": "calc/new.go", "content": "package calc\n"})),
		calls(call("bash", map[string]any{"command": "echo 'package calc' > calc/x.go"})),
		calls(call("bash", map[string]any{"command": "sed -i s/a-b/a+b/ calc/calc.go"})),
		calls(call("bash", map[string]any{"command": "python3 -c 'open(\"calc/y.go\",\"w\")'"})),
		calls(call("bash", map[string]any{"command": "git log --oneline | head -3"})),
		calls(call("phase", map[string]any{"to": "building"})),
		calls(call("phase", map[string]any{"to": "verifying", "reason": "skip ahead"})),
		text("I am done."), text("done"), text("done"), text("done"), text("done"),
	)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3 (escalated)\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	wt := workdirOf(t, evs)
	if got := readFile(t, filepath.Join(wt, "calc/calc.go")); got != before {
		t.Fatal("planning changed calc.go")
	}
	for _, d := range []string{dir, wt} {
		if out := git(t, d, "status", "--porcelain"); strings.TrimSpace(out) != "" {
			t.Fatalf("planning changed the tree:\n%s", out)
		}
	}
	var layers []string
	for _, e := range ofType(evs, "refusal") {
		layers = append(layers, data(e)["layer"].(string))
	}
	want := []string{"phase-guard", "phase-guard", "planning-read-only", "planning-read-only", "planning-read-only", "transition", "transition"}
	if !slices.Equal(layers, want) {
		t.Fatalf("refusal layers %v, want %v", layers, want)
	}
	// The refusal text reaches the model and names phase, layer and allowed tools.
	reqs := m.srv.Requests()
	body := string(reqs[1].Body)
	for _, want := range []string{"phase-guard", "not allowed in phase planning", "Allowed now: read, glob, grep, bash, todo, goals, phase"} {
		if !strings.Contains(body, want) {
			t.Errorf("second request lacks %q", want)
		}
	}
	// The read-only git log ran.
	ok := false
	for _, e := range ofType(evs, "tool_result") {
		if data(e)["tool"] == "bash" && data(e)["is_error"] == false {
			ok = true
		}
	}
	if !ok {
		t.Error("read-only bash did not run in planning")
	}
	fin := data(ofType(evs, "run_finished")[0])
	if !strings.Contains(fin["reason"].(string), "without calling a tool") {
		t.Fatalf("finish reason %v", fin["reason"])
	}
	checkWire(t, m)
}

func TestVerifyRefusedOutsideVerifying(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		planGoals("fix"),
		calls(call("verify", map[string]any{})),
		text("ok"), text("ok"), text("ok"), text("ok"), text("ok"),
	)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	evs := res.events(t)
	ref := ofType(evs, "refusal")
	if len(ref) != 1 || data(ref[0])["tool"] != "verify" || data(ref[0])["layer"] != "phase-guard" || ref[0]["phase"] != "building" {
		t.Fatalf("refusals %v", ref)
	}
	if len(ofType(evs, "verify_result")) != 0 {
		t.Fatal("verify ran in building")
	}
}

func TestFailingVerifiesEscalate(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := []step{
		planGoals("try"),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
	}
	for range 9 {
		steps = append(steps, calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))
	}
	m := newModel(t, steps...)
	// A goal's five cycles would stop it first: one run of the retry limit
	// over several goals is what this is about.
	res := ultra(t, dir, runArgs(m, "fix calc", "--max-retries", "4")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	vr := ofType(evs, "verify_result")
	if len(vr) != 4 {
		t.Fatalf("%d verifications, want 4", len(vr))
	}
	for _, v := range vr {
		d := data(v)
		if d["status"] != "FAIL" || d["failed"].(float64) != 1 || d["failing"].([]any)[0] != "example.com/calc/calc.TestAdd" {
			t.Fatalf("verify %v", d)
		}
	}
	pc := ofType(evs, "phase_changed")
	last := data(pc[len(pc)-1])
	if last["to"] != "escalated" || last["by"] != "gate" || !strings.Contains(last["reason"].(string), "4 times") {
		t.Fatalf("last transition %v", last)
	}
	checkWire(t, m)
	st := ultra(t, dir, "status", runID(t, evs), "--json")
	var s map[string]any
	json.Unmarshal([]byte(st.stdout), &s)
	r := s["retries"].(map[string]any)
	if s["phase"] != "escalated" || r["used"].(float64) != 4 || r["left"].(float64) != 0 {
		t.Fatalf("status %v", s)
	}
}

func TestMalformedOutputBecomesToolErrors(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := []step{
		calls(call("launch_missiles", map[string]any{})),
		{"tool_calls": []any{map[string]any{"name": "read", "raw_arguments": `{"file_path": "calc/calc.go"`}}},
		calls(call("read", map[string]any{})),
		{"finish_reason": "stop"}, // an empty answer
	}
	steps = append(steps, fixSteps()...)
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := m.srv.Requests()
	for i, want := range []string{`unknown tool \"launch_missiles\"`, "invalid JSON arguments for read", `missing required argument \"file_path\"`, "Your answer was empty"} {
		if !strings.Contains(string(reqs[i+1].Body), want) {
			t.Errorf("request %d lacks %q", i+2, want)
		}
	}
	st := ultra(t, dir, "status", runID(t, res.events(t)), "--json")
	var s map[string]any
	json.Unmarshal([]byte(st.stdout), &s)
	if s["malformed_calls"].(float64) != 4 {
		t.Fatalf("malformed %v", s["malformed_calls"])
	}
}

func TestRepeatedFailingCallEscalates(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	bad := calls(call("read", map[string]any{"file_path": "nope.go"}))
	m := newModel(t, bad, bad, bad, bad)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	fin := data(ofType(res.events(t), "run_finished")[0])
	if !strings.Contains(fin["reason"].(string), "repeated the same failing call 3 times") {
		t.Fatalf("reason %v", fin["reason"])
	}
	if n := len(m.srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

func TestBudgetExhaustedExits4(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	// An escalated run resumes in iterating, so the model moves to verifying again.
	m := newModel(t, append(fixSteps(), calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})), approve())...)
	res := ultra(t, dir, runArgs(m, "--max-turns", "2", "fix calc")...)
	if res.code != 4 {
		t.Fatalf("exit %d, want 4\n%s", res.code, res.stderr)
	}
	fin := data(ofType(res.events(t), "run_finished")[0])
	if fin["status"] != "budget_exhausted" || !strings.Contains(fin["reason"].(string), "turn budget exhausted: 2 of 2") {
		t.Fatalf("finish %v", fin)
	}
	// Resume extends the exhausted budget by the run's allotment (2 more
	// turns: not enough here), or by what --max-turns grants.
	id := runID(t, res.events(t))
	res2 := ultra(t, dir, "resume", id, "--output", "jsonl")
	if res2.code != 4 || !strings.Contains(res2.stderr, "4 of 4") {
		t.Fatalf("resume exit %d, want 4 after 2 more turns\n%s", res2.code, res2.stderr)
	}
	// The run remembers its model server: no --base-url needed.
	res3 := ultra(t, dir, "resume", id, "--output", "jsonl", "--max-turns", "10")
	if res3.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res3.code, res3.stdout, res3.stderr)
	}
}

func TestAssistedControlWaitsForApproval(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, runArgs(m, "--control", "assisted", "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	fin := data(ofType(evs, "run_finished")[0])
	if fin["status"] != "needs_approval" || len(ofType(evs, "phase_changed")) != 0 {
		t.Fatalf("finish %v", fin)
	}
	id := runID(t, evs)
	// Approved, the run goes on for its unit (building), then pauses for
	// a person again (--no-wait: it ends paused instead of waiting).
	res2 := ultra(t, dir, "approve", id, "--no-wait", "--output", "jsonl", "--base-url", m.url)
	if res2.code != 3 || data(ofType(res2.events(t), "run_finished")[0])["status"] != "paused" {
		t.Fatalf("approve exit %d\n%s\n%s", res2.code, res2.stdout, res2.stderr)
	}
	pcs := ofType(res2.events(t), "phase_changed")
	if pc := data(pcs[0]); pc["to"] != "building" || pc["by"] != "person" {
		t.Fatalf("first transition after approval %v", pc)
	}
	if pc := data(pcs[len(pcs)-1]); pc["to"] != "verifying" {
		t.Fatalf("the unit did not end at verifying: %v", pc)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--bogus", "x"}, "unknown flag"},
		{[]string{"run"}, "the task is empty"},
		{[]string{"run", "--mode", "ship", "x"}, `invalid mode "ship"`},
		{[]string{"run", "--output", "xml", "--base-url", "http://127.0.0.1:1/v1", "x"}, `unknown --output "xml"`},
		{[]string{"run", "--provider", "acme", "x"}, `unknown provider "acme"`},
		{[]string{"status", "nope"}, "run not found"},
		{[]string{"status"}, "there are no runs here yet"},
		{[]string{"land"}, "ultra land takes RUN_ID (none given)"},
	}
	for _, c := range cases {
		res := ultra(t, dir, c.args...)
		if res.code != 2 || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: exit %d stderr %q, want 2 and %q", c.args, res.code, res.stderr, c.want)
		}
	}
	notRepo := t.TempDir()
	if res := ultra(t, notRepo, "run", "x"); res.code != 2 || !strings.Contains(res.stderr, "not inside a git repository") {
		t.Errorf("outside a repo: %d %s", res.code, res.stderr)
	}
	bad := repo(t, map[string]string{".ultra/config": "[verify]\ncommand = \"go test ./...\"\ntimeout = \"ages\"\n"})
	if res := ultra(t, bad, "runs"); res.code != 2 || !strings.Contains(res.stderr, ".ultra/config") || !strings.Contains(res.stderr, "ages") {
		t.Errorf("bad config: %d %s", res.code, res.stderr)
	}
}

func TestModelUnreachable(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"go.mod": calcProject["go.mod"], ".ultra/config": "[model]\nmax_retries = 0\n"})
	res := ultra(t, dir, "run", "--output", "jsonl", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "fix")
	if res.code != 1 || !strings.Contains(res.stderr, "cannot reach the model server at http://127.0.0.1:1/v1") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	// Found before anything was made: no run, no branch.
	if r := ultra(t, dir, "runs", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("a run was made: %s", r.stdout)
	}
	if b := git(t, dir, "branch", "--list", "ultra/*"); strings.TrimSpace(b) != "" {
		t.Fatalf("a branch was made: %s", b)
	}
	// With no key and no server, the message says what ultra tried.
	res = ultra(t, dir, "run", "--output", "jsonl", "fix")
	if res.code != 1 || !strings.Contains(res.stderr, "local Ollama") || !strings.Contains(res.stderr, "OPENAI_API_KEY") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
}

// Rate limits and server errors are retried (honouring Retry-After), each
// retry an event; the run goes on.
func TestModelErrorsAreRetried(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := append([]step{{"status": 429, "error": "slow down", "retry_after": 1}, {"status": 503, "error": "overloaded"}}, fixSteps()...)
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	rs := ofType(res.events(t), "model_retry")
	if len(rs) != 2 || data(rs[0])["wait"] != "1s" || !strings.Contains(data(rs[1])["error"].(string), "503") {
		t.Fatalf("retries %v", rs)
	}
}

// The same run completes against the Anthropic Messages wire format.
func TestFullCycleWithAnthropic(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	for _, stream := range []bool{true, false} {
		git(t, dir, "checkout", "-q", "--", ".")
		args := []string{"run", "--output", "jsonl", "--provider", "anthropic", "--base-url", m.url, "--model", "scripted", "fix calc"}
		if !stream {
			args = append(args[:1], append([]string{"--no-stream"}, args[1:]...)...)
			m.srv.SetScript(mustScript(t, fixSteps()))
		}
		res := ultra(t, dir, args...)
		if res.code != 0 {
			t.Fatalf("stream=%v: exit %d\n%s", stream, res.code, res.stderr)
		}
	}
	reqs := m.srv.Requests()
	if len(reqs) != 2*len(fixSteps()) || !strings.HasSuffix(reqs[0].Path, "/messages") {
		t.Fatalf("%d requests, first to %s", len(reqs), reqs[0].Path)
	}
	checkWire(t, m)
	if !strings.Contains(string(reqs[1].Body), `"cache_control"`) {
		t.Fatal("requests carry no cache breakpoints")
	}
	// The stable prefix: the system prompt is byte-identical in every
	// request of a run (but the final reviewer's, a fresh context), and
	// the tool definitions within a phase.
	tools := map[string]string{}
	for i, r := range reqs {
		if (i+1)%len(fixSteps()) == 0 {
			continue // the reviewer
		}
		if first := reqs[i/len(fixSteps())*len(fixSteps())]; r.System != first.System {
			t.Fatalf("request %d changed the system prompt", i+1)
		}
		var body struct {
			Tools json.RawMessage `json:"tools"`
		}
		json.Unmarshal(r.Body, &body)
		ph := reminderPhase.FindStringSubmatch(r.LastUser)[1]
		if prev, ok := tools[ph]; ok && prev != string(body.Tools) {
			t.Fatalf("request %d changed the tools of phase %s", i+1, ph)
		}
		tools[ph] = string(body.Tools)
	}
}

// With a routing table, planning uses the deep model and building the
// smart one; every request's model is in its event.
func TestModelModesRoute(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{".ultra/config": "[model]\nmodes = { smart = \"m-smart\", deep = \"m-deep\", fast = \"m-fast\" }\n"})
	for k, v := range calcProject {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, k)), 0o755)
		os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "calc")
	m := newModelServing(t, []string{"m-fast", "m-smart", "m-deep"}, fixSteps()...)
	res := ultra(t, dir, "run", "--output", "jsonl", "--base-url", m.url, "fix calc")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var got []string
	for _, e := range ofType(res.events(t), "model_request") {
		got = append(got, e["phase"].(string)+":"+data(e)["model"].(string))
	}
	// The final reviewer uses the deep model.
	want := "planning:m-deep,planning:m-deep,building:m-smart,building:m-smart,verifying:m-smart,cleaning:m-smart,reviewing:m-deep"
	if strings.Join(got, ",") != want {
		t.Fatalf("models %v, want %s", got, want)
	}
	for i, r := range m.srv.Requests() {
		if w := strings.Split(strings.Split(want, ",")[i], ":")[1]; r.Model != w {
			t.Fatalf("request %d asked for %s, want %s", i+1, r.Model, w)
		}
	}
	fast := newModelServing(t, []string{"m-fast", "m-smart", "m-deep"}, fixSteps()...)
	git(t, dir, "checkout", "-q", "--", "calc")
	ultra(t, dir, "run", "--output", "jsonl", "--base-url", fast.url, "--model-mode", "fast", "fix calc")
	if len(fast.srv.Requests()) == 0 {
		t.Fatal("no requests in fast mode")
	}
	// Every request but the final review's (the deep model's) is fast.
	reqs := fast.srv.Requests()
	for _, r := range reqs[:len(reqs)-1] {
		if r.Model != "m-fast" {
			t.Fatalf("fast mode asked for %s", r.Model)
		}
	}
	if r := reqs[len(reqs)-1]; r.Model != "m-deep" {
		t.Fatalf("the final review asked for %s, want the deep model", r.Model)
	}
}

// Every request's cost comes from the pricing table; a cost budget
// escalates like the others.
func TestCostBudget(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := fixSteps()
	for i := range steps {
		steps[i]["usage"] = map[string]any{"prompt_tokens": 100000, "completion_tokens": 1000}
	}
	m := newModelServing(t, []string{"gpt-5"}, steps...)
	res := ultra(t, dir, "run", "--output", "jsonl", "--base-url", m.url, "--model", "gpt-5", "--max-cost", "0.30", "fix calc")
	if res.code != 4 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	resp := ofType(evs, "model_response")
	// 100k input at $1.25/M plus 1k output at $10/M = $0.135 a request.
	if c := data(resp[0])["cost"].(float64); c < 0.1349 || c > 0.1351 {
		t.Fatalf("cost of one request %v", c)
	}
	fin := data(ofType(evs, "run_finished")[0])
	if len(resp) != 3 || !strings.Contains(fin["reason"].(string), "cost budget exhausted") || fin["cost"].(float64) < 0.3 {
		t.Fatalf("%d requests, finish %v", len(resp), fin)
	}
}

// Faults at the wire: a stream cut short and an overloaded Anthropic are
// retried; a refused key stops at once with a message naming the fix.
func TestModelFaults(t *testing.T) {
	t.Parallel()
	t.Run("truncated stream", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t, append([]step{{"text": "half an answer", "truncate": true}}, fixSteps()...)...)
		res := ultra(t, dir, runArgs(m, "fix calc")...)
		if res.code != 0 || len(ofType(res.events(t), "model_retry")) != 1 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
	})
	t.Run("anthropic overloaded", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t, append([]step{{"status": 529, "error": "Overloaded", "retry_after": 1}}, fixSteps()...)...)
		res := ultra(t, dir, "run", "--output", "jsonl", "--provider", "anthropic", "--base-url", m.url, "--model", "scripted", "fix calc")
		rs := ofType(res.events(t), "model_retry")
		if res.code != 0 || len(rs) != 1 || !strings.Contains(data(rs[0])["error"].(string), "overloaded") {
			t.Fatalf("exit %d retries %v\n%s", res.code, rs, res.stderr)
		}
	})
	t.Run("401", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t, append([]step{{"status": 401, "error": "Incorrect API key provided"}}, fixSteps()...)...)
		res := ultra(t, dir, runArgs(m, "fix calc")...)
		if res.code != 1 || !strings.Contains(res.stderr, "OPENAI_API_KEY") || len(ofType(res.events(t), "model_retry")) != 0 || len(m.srv.Requests()) != 1 {
			t.Fatalf("exit %d, %d requests\n%s", res.code, len(m.srv.Requests()), res.stderr)
		}
	})
}

// tableTools are the tools the build table offers in p to a run with no
// skills and no MCP servers that is no parallel run's worker: its entries
// for those offer nothing then.
func tableTools(p phase.Phase) []string {
	return slices.DeleteFunc(phase.Tools(p), func(t string) bool {
		return t == "skill" || t == phase.MCPAll || t == phase.MCPRead || t == "claim"
	})
}
