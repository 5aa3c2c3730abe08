package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// One answer covers a class: after "allow read-only calls for the rest of
// this run", reads and globs run without asking, while a bash call still
// waits for a person. The model cannot give that answer itself.
func TestManualAllowReadOnly(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("glob", map[string]any{"pattern": "**/*_test.go"}), call("read", map[string]any{"file_path": "calc/calc_test.go"})),
		calls(call("bash", map[string]any{"command": "wc -l calc/calc.go"})),
		step{"text": "waiting", "delay_ms": 20000},
	)
	l := startLive(t, dir, runArgs(m, "--control", "manual", "fix calc")...)
	w := l.waitEvent(t, "the read waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting"
	})
	id := w["run"].(string)
	if data(w)["read_only"] != true {
		t.Fatalf("the waiting read is not marked read-only: %v", data(w))
	}
	if st := ultra(t, dir, "status", id); !strings.Contains(st.stdout, "--read-only: every read-only call for the rest of the run") {
		t.Fatalf("status does not offer the read-only answer:\n%s", st.stdout)
	}
	if r := ultra(t, dir, "approve", id, "--read-only", "--for-run"); r.code != 2 || !strings.Contains(r.stderr, "two answers") {
		t.Fatalf("approve --read-only --for-run: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if a := ultra(t, dir, "approve", id, "--read-only"); a.code != 0 || !strings.Contains(a.stdout, "applied") {
		t.Fatalf("approve --read-only: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	l.waitEvent(t, "the class allowed", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "allowed_read_only_for_run" && data(e)["tool"] == "read"
	})
	b := l.waitEvent(t, "the bash call waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "bash"
	})
	if data(b)["read_only"] == true {
		t.Fatalf("a bash call is marked read-only: %v", data(b))
	}
	var waited []string
	for _, e := range l.events() {
		if e["type"] == "approval" && data(e)["state"] == "waiting" {
			waited = append(waited, data(e)["tool"].(string))
		}
	}
	if strings.Join(waited, " ") != "read bash" {
		t.Fatalf("calls that waited for a person: %v, want the first read and the bash call", waited)
	}
	body := string(m.srv.Requests()[2].Body)
	if !strings.Contains(body, "calc/calc_test.go") || !strings.Contains(body, "func TestAdd") {
		t.Fatalf("the glob and the second read did not run:\n%s", body)
	}
	if c := ultra(t, dir, "cancel", id); c.code != 0 {
		t.Fatalf("cancel: exit %d %s %s", c.code, c.stdout, c.stderr)
	}
	l.wait(t)
}

// Under manual control the goals call waits like every call (its
// criteria are commands ultra runs on the base tree), shown as the plan it
// proposes, never as JSON; allowing it accepts the plan: no second answer.
func TestManualPlanApprovedOnce(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("goals", calcGoals())),
		calls(call("phase", map[string]any{"to": "verifying"})),
		step{"text": "waiting", "delay_ms": 20000},
	)
	res := ultra(t, dir, runArgs(m, "--control", "manual", "--no-wait", "fix calc")...)
	if res.code != 3 || !strings.Contains(res.stderr, "call_1 (goals) waits for a person's approval") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	if n := len(ofType(evs, "criterion")); n != 0 {
		t.Fatalf("%d criteria ran before a person allowed the goals call", n)
	}
	id := runID(t, evs)
	st := ultra(t, dir, "status", id)
	for _, want := range []string{"plan proposed by call call_1", "Add adds", "[happy, cli, command]", "Add adds, as its test shows", "runs `go test -count=1 -run '^TestAdd$' ./calc`"} {
		if !strings.Contains(st.stdout, want) {
			t.Fatalf("status lacks %q:\n%s", want, st.stdout)
		}
	}
	if head, _, _ := strings.Cut(st.stdout, "last events"); strings.Contains(head, `"criteria"`) {
		t.Fatalf("the plan is shown as JSON:\n%s", st.stdout)
	}
	// Allowing the call is the one answer: the plan is accepted, and the
	// next call waits as a call.
	l := startLive(t, dir, "approve", id, "--call", "call_1", "--output", "jsonl", "--base-url", m.url)
	w := l.waitEvent(t, "the phase call waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting"
	})
	if data(w)["tool"] != "phase" {
		t.Fatalf("after the plan, %v waits, want the phase call", data(w)["tool"])
	}
	if s := ultra(t, dir, "status", id); !strings.Contains(s.stdout, "building") || strings.Contains(s.stdout, "plan waiting for approval") {
		t.Fatalf("status after the goals call was allowed:\n%s", s.stdout)
	}
	if c := ultra(t, dir, "cancel", id); c.code != 0 {
		t.Fatalf("cancel: exit %d %s %s", c.code, c.stdout, c.stderr)
	}
	l.wait(t)
	// The run as an argument, as ultra goals takes it, or with --run.
	if a, b := ultra(t, dir, "goals", "ledger", id), ultra(t, dir, "goals", "ledger", "--run", id); a.code != 0 || a.stdout != b.stdout {
		t.Errorf("goals ledger RUN and --run RUN differ: exit %d\n%s\n%s", a.code, a.stdout, b.stdout)
	}
	if r := ultra(t, dir, "goals", "ledger", id, "--run", "other"); r.code != 2 || !strings.Contains(r.stderr, "named twice") {
		t.Errorf("a run named twice: exit %d %s", r.code, r.stderr)
	}
	if lg := ultra(t, dir, "goals", "ledger", "--run", id); !strings.Contains(lg.stdout, "plan_accepted") {
		t.Fatalf("the ledger does not record the acceptance:\n%s", lg.stdout)
	}
}

// With --no-wait a manual run stops at the call that needs a person;
// ultra approve --call continues it, and the call runs then.
func TestManualNoWait(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, calls(call("read", map[string]any{"file_path": "calc/calc.go"})))
	res := ultra(t, dir, runArgs(m, "--control", "manual", "--no-wait", "fix calc")...)
	if res.code != 3 || !strings.Contains(res.stderr, "call_1 (read) waits for a person's approval") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	if r := ultra(t, dir, "resume", id); r.code != 2 || !strings.Contains(r.stderr, "ultra approve "+id+" --call call_1") {
		t.Fatalf("resume without a decision: exit %d %s", r.code, r.stderr)
	}
	if r := ultra(t, dir, "approve", id, "--call", "call_9"); r.code != 2 || !strings.Contains(r.stderr, "waits on call call_1") {
		t.Fatalf("approve of another call: exit %d %s", r.code, r.stderr)
	}
	m2 := newModel(t, calls(call("glob", map[string]any{"pattern": "**/*.go"})))
	a := ultra(t, dir, "approve", id, "--call", "call_1", "--no-wait", "--output", "jsonl", "--base-url", m2.url)
	if a.code != 3 || !strings.Contains(a.stderr, "(glob) waits for a person's approval") {
		t.Fatalf("approve: exit %d\n%s", a.code, a.stderr)
	}
	body := string(m2.srv.Requests()[0].Body)
	if !strings.Contains(body, "It was approved and ran") || !strings.Contains(body, "return a - b") {
		t.Fatalf("the approved call's result did not reach the model:\n%s", body)
	}
}

// The model cannot give the read-only answer itself: a command of its
// own that runs ultra approve --read-only, allowed once by a person in
// building, changes nothing (the store is read-only in its sandbox); the
// next read still waits for a person.
func TestManualModelCannotAllowReadOnly(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	// The test writes the run's id in its worktree once it knows it.
	grant := fmt.Sprintf(`cd %q && XDG_STATE_HOME=%q %q approve "$(cat "$OLDPWD/run-id.txt")" --read-only 2>&1; echo "exit $?"`, dir, stateHome(t), ultraBin)
	m := newModel(t,
		calls(call("goals", calcGoals())),
		calls(call("bash", map[string]any{"command": grant})),
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		step{"text": "waiting", "delay_ms": 20000},
	)
	// The goals call waits for a person; --no-wait ends the run there.
	res := ultra(t, dir, runArgs(m, "--control", "manual", "--no-wait", "fix calc")...)
	if res.code != 3 {
		t.Fatalf("the goals call: exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	if err := os.WriteFile(filepath.Join(runWorktree(t, dir, id), "run-id.txt"), []byte(id), 0o644); err != nil {
		t.Fatal(err)
	}
	l := startLive(t, dir, "approve", id, "--output", "jsonl", "--base-url", m.url)
	waiting := func(tool string) func(map[string]any) bool {
		return func(e map[string]any) bool {
			return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == tool
		}
	}
	l.waitEvent(t, "the bash call waiting", waiting("bash"))
	if a := ultra(t, dir, "approve", id); a.code != 0 {
		t.Fatalf("approve: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	out := l.waitEvent(t, "the bash outcome", func(e map[string]any) bool {
		return (e["type"] == "tool_result" || e["type"] == "refusal") && data(e)["tool"] == "bash"
	})
	l.waitEvent(t, "the read waiting", waiting("read"))
	for _, e := range l.events() {
		if e["type"] == "approval" && data(e)["state"] == "allowed_read_only_for_run" {
			t.Fatalf("the model's own command allowed read-only calls: %v\nits outcome: %v", data(e), data(out))
		}
	}
	if c := ultra(t, dir, "cancel", id); c.code != 0 {
		t.Fatalf("cancel: exit %d %s %s", c.code, c.stdout, c.stderr)
	}
	l.wait(t)
	t.Logf("the model's command: %s %v", out["type"], data(out)["output"])
}

// TestReadOnlyAnswerNeverAllowsAWrite: "read-only calls for the rest of
// the run" answered while a write waits allows the reads to come, and the
// write goes on waiting for its own answer; refused outright when the run
// has stopped to wait (its resume would otherwise run the write).
func TestReadOnlyAnswerNeverAllowsAWrite(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("goals", calcGoals())),
		calls(bashCall("touch WRITTEN-BY-BASH")),
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		step{"text": "done reading"},
	)
	l := startLive(t, dir, runArgs(m, "--control", "manual", "fix calc")...)
	w := l.waitEvent(t, "the plan waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "goals"
	})
	id := w["run"].(string)
	wt := workdirOf(t, l.events())
	if a := ultra(t, dir, "approve", id, "--call", "call_1"); a.code != 0 {
		t.Fatalf("accept the plan: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	b := l.waitEvent(t, "the bash call waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "bash"
	})
	if data(b)["read_only"] == true {
		t.Fatalf("a bash call is marked read-only: %v", data(b))
	}
	a := ultra(t, dir, "approve", id, "--read-only")
	if !strings.Contains(a.stdout+a.stderr, "is not read-only and still waits") {
		t.Errorf("approve --read-only on a waiting bash call: exit %d %s%s", a.code, a.stdout, a.stderr)
	}
	// Still waiting: the run says so, and nothing was written.
	if s := ultra(t, dir, "status", id); !strings.Contains(s.stdout, "waits for a person's approval") {
		t.Errorf("the bash call no longer waits:\n%s", s.stdout)
	}
	if _, err := os.Stat(filepath.Join(wt, "WRITTEN-BY-BASH")); err == nil {
		t.Fatal("the read-only answer ran the waiting bash call")
	}
	if d := ultra(t, dir, "approve", id, "--deny", "not now"); d.code != 0 {
		t.Fatalf("deny the bash call: exit %d %s %s", d.code, d.stdout, d.stderr)
	}
	l.wait(t)
	// The read-only answer holds for the read that came next: it ran
	// without waiting.
	for _, e := range l.events() {
		if e["type"] == "approval" && data(e)["tool"] == "read" && data(e)["state"] == "waiting" {
			t.Errorf("the read waited after read-only calls were allowed: %v", data(e))
		}
	}
	if _, err := os.Stat(filepath.Join(wt, "WRITTEN-BY-BASH")); err == nil {
		t.Fatal("the denied bash call ran")
	}

	// A run that stopped to wait (--no-wait) keeps a decision for its
	// resume: a read-only answer to a write is refused, never kept.
	m2 := newModel(t,
		calls(call("goals", calcGoals())),
		calls(bashCall("touch WRITTEN-BY-BASH")),
		step{"text": "done"},
	)
	r := ultra(t, dir, runArgs(m2, "--control", "manual", "--no-wait", "fix calc")...)
	id2 := runID(t, r.events(t))
	wt2 := workdirOf(t, r.events(t))
	if a := ultra(t, dir, "approve", id2, "--call", "call_1", "--no-wait", "--output", "jsonl"); a.code != 3 {
		t.Fatalf("accept the plan of a --no-wait run: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	if a := ultra(t, dir, "approve", id2, "--read-only"); !strings.Contains(a.stdout+a.stderr, "is not read-only, and --read-only allows only read-only calls") {
		t.Errorf("approve --read-only on a stopped run's bash call: exit %d %s%s", a.code, a.stdout, a.stderr)
	}
	if _, err := os.Stat(filepath.Join(wt2, "WRITTEN-BY-BASH")); err == nil {
		t.Fatal("the read-only answer ran the stopped run's bash call")
	}
}

// TestManualNoWaitRunCompletes: a --no-wait manual run approved call by
// call, the last approval running the final review that completes it, is
// recorded complete (not left as a running row, which every command would
// then show as interrupted).
func TestManualNoWaitRunCompletes(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, runArgs(m, "--control", "manual", "--no-wait", "fix calc")...)
	id := runID(t, res.events(t))
	waiting := regexp.MustCompile(`call (call_\d+) \(\w+\) waits for a person's approval`)
	for i := 0; res.code == 3 && i < 30; i++ {
		w := waiting.FindStringSubmatch(res.stderr)
		if w == nil {
			t.Fatalf("stopped without a call waiting: exit %d\n%s", res.code, res.stderr)
		}
		res = ultra(t, dir, "approve", id, "--call", w[1], "--no-wait", "--output", "jsonl")
	}
	if res.code != 0 {
		t.Fatalf("the last approval: exit %d\n%s", res.code, res.stderr)
	}
	var runs []struct{ ID, Phase, Status string }
	r := ultra(t, dir, "runs", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 1 || runs[0].Status != "complete" || runs[0].Phase != "complete" {
		t.Fatalf("ultra runs after the run completed: %v %s", err, r.stdout)
	}
	if k := taskByID(t, listTasks(t, dir), id); k.Class != "done" || k.Next != "ultra land "+id {
		t.Errorf("ultra tasks after the run completed: %+v", k)
	}
	if d := ultra(t, dir, "doctor"); strings.Contains(d.stdout, id) && strings.Contains(d.stdout, "stale-heartbeat") {
		t.Errorf("doctor sees the completed run as interrupted:\n%s", d.stdout)
	}
}
