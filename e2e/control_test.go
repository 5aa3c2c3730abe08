package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// live is an ultra run in the background, its JSONL events read as they
// come.
type live struct {
	mu     sync.Mutex
	evs    []map[string]any
	stderr bytes.Buffer
	done   chan struct{}
	code   int
}

func startLive(t testing.TB, dir string, args ...string) *live {
	t.Helper()
	cmd := execCmd(dir, ultraEnv(t), ultraBin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &live{done: make(chan struct{})}
	cmd.Stderr = &syncWriter{mu: &l.mu, w: &l.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				l.mu.Lock()
				l.evs = append(l.evs, e)
				l.mu.Unlock()
			}
		}
		io.Copy(io.Discard, out)
		err := cmd.Wait()
		if ee, ok := err.(interface{ ExitCode() int }); ok {
			l.code = ee.ExitCode()
		}
		close(l.done)
	}()
	t.Cleanup(func() {
		select {
		case <-l.done:
		default:
			cmd.Process.Kill()
			<-l.done
		}
	})
	return l
}

type syncWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// waitEvent waits for an event that pred accepts.
func (l *live) waitEvent(t testing.TB, what string, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		for _, e := range l.evs {
			if pred(e) {
				l.mu.Unlock()
				return e
			}
		}
		l.mu.Unlock()
		select {
		case <-l.done:
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, e := range l.evs {
				if pred(e) {
					return e
				}
			}
			t.Fatalf("the run ended (exit %d) before %s\n%s", l.code, what, l.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no %s within 30s", what)
	return nil
}

func (l *live) wait(t testing.TB) int {
	t.Helper()
	select {
	case <-l.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end within 60s")
	}
	return l.code
}

func (l *live) events() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.evs...)
}

func isType(typ string) func(map[string]any) bool {
	return func(e map[string]any) bool { return e["type"] == typ }
}

func seqOf(t *testing.T, evs []map[string]any, what string, pred func(map[string]any) bool) float64 {
	t.Helper()
	for _, e := range evs {
		if pred(e) {
			return e["seq"].(float64)
		}
	}
	t.Fatalf("no %s event", what)
	return 0
}

// In manual control every call waits for a person: an approval lets it
// run, a denial's reason reaches the model and the call's effect never
// happens.
func TestManualApproveAndDeny(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("glob", map[string]any{"pattern": "**/*_test.go"})),
		step{"text": "waiting", "delay_ms": 20000},
	)
	l := startLive(t, dir, runArgs(m, "--control", "manual", "fix calc")...)
	w := l.waitEvent(t, "the read waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "read"
	})
	id := w["run"].(string)
	readCall := data(w)["call_id"].(string)
	if ax := data(w)["axes"].(map[string]any); ax["control"] != "manual" || ax["mode"] != "build" {
		t.Fatalf("the approval does not log the axes: %v", ax)
	}
	// While it waits, the model has been asked once.
	time.Sleep(300 * time.Millisecond)
	if n := len(m.srv.Requests()); n != 1 {
		t.Fatalf("%d requests while the call waits, want 1", n)
	}
	st := ultra(t, dir, "status", id, "--json")
	if !strings.Contains(st.stdout, "ultra approve "+id+" --call "+readCall) {
		t.Fatalf("status does not say what the run waits for:\n%s", st.stdout)
	}
	if a := ultra(t, dir, "approve", id, "--call", readCall); a.code != 0 || !strings.Contains(a.stdout, "applied") {
		t.Fatalf("approve: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	g := l.waitEvent(t, "the glob waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "glob"
	})
	waitRequests(t, m, 2)
	if !strings.Contains(string(m.srv.Requests()[1].Body), "return a - b") {
		t.Fatal("the approved read's result did not reach the model")
	}
	if d := ultra(t, dir, "approve", id, "--call", data(g)["call_id"].(string), "--deny", "not the tests"); d.code != 0 {
		t.Fatalf("deny: exit %d %s %s", d.code, d.stdout, d.stderr)
	}
	l.waitEvent(t, "the denial", func(e map[string]any) bool { return e["type"] == "approval" && data(e)["state"] == "denied" })
	waitRequests(t, m, 3)
	body := string(m.srv.Requests()[2].Body)
	if !strings.Contains(body, "Denied by a person: not the tests") {
		t.Fatalf("the denial did not reach the model:\n%s", body)
	}
	if strings.Contains(body, "calc_test.go") {
		t.Fatalf("the denied glob ran: its match reached the model:\n%s", body)
	}
	// ultra cancel of the live run: its own terminal reports cancelled.
	if c := ultra(t, dir, "cancel", id, "--reason", "enough"); c.code != 0 {
		t.Fatalf("cancel: exit %d %s %s", c.code, c.stdout, c.stderr)
	}
	if code := l.wait(t); code != 3 {
		t.Fatalf("the watched run exited %d, want 3\n%s", code, l.stderr.String())
	}
	fin := l.waitEvent(t, "run_finished", isType("run_finished"))
	if data(fin)["status"] != "cancelled" || strings.Contains(l.stderr.String(), "interrupted") {
		t.Fatalf("the watching terminal did not report a cancel: %v\n%s", data(fin), l.stderr.String())
	}
}

// runWorktree is the worktree of run id.
func runWorktree(t *testing.T, dir, id string) string {
	t.Helper()
	var s struct {
		Workspace struct {
			Worktree string `json:"worktree"`
		} `json:"workspace"`
	}
	st := ultra(t, dir, "status", id, "--json")
	if err := json.Unmarshal([]byte(st.stdout), &s); err != nil || s.Workspace.Worktree == "" {
		t.Fatalf("status: %v\n%s", err, st.stdout)
	}
	return s.Workspace.Worktree
}

// Assisted control pauses at the end of each unit (a phase); ultra next
// goes on for one more.
func TestAssistedPausesAndNext(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := fixSteps()
	m := newModel(t, steps[:2]...)
	res := ultra(t, dir, runArgs(m, "--control", "assisted", "--no-wait", "fix calc")...)
	if res.code != 3 || !strings.Contains(res.stderr, "needs_approval") {
		t.Fatalf("plan: exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	m2 := newModel(t, steps[2:]...)
	a := ultra(t, dir, "approve", id, "--no-wait", "--output", "jsonl", "--base-url", m2.url)
	if a.code != 3 || !strings.Contains(a.stderr, "paused") {
		t.Fatalf("approve: exit %d\n%s", a.code, a.stderr)
	}
	// It paused after building (the edit and the move to verifying),
	// before anything of verifying ran.
	if st := ultra(t, dir, "status", id, "--json"); !strings.Contains(st.stdout, `"phase": "verifying"`) || !strings.Contains(st.stdout, `"status": "paused"`) {
		t.Fatalf("status after the unit:\n%s", st.stdout)
	}
	if n := len(m2.srv.Requests()); n != 2 {
		t.Fatalf("%d model requests in the unit, want 2", n)
	}
	tk := ultra(t, dir, "tasks", "--json")
	if !strings.Contains(tk.stdout, "ultra next "+id) {
		t.Fatalf("tasks does not name the next action:\n%s", tk.stdout)
	}
	n := ultra(t, dir, "next", id, "--no-wait", "--output", "jsonl", "--base-url", m2.url)
	if n.code != 3 && n.code != 0 {
		t.Fatalf("next: exit %d\n%s", n.code, n.stderr)
	}
	// verify ran once in that unit.
	if len(ofType(n.events(t), "verify_result")) != 1 {
		t.Fatalf("next ran %d verifications", len(ofType(n.events(t), "verify_result")))
	}
}

// A person steers a live run from another process at each scope; the
// change is applied where its scope says, recorded, and its effects hold.
func TestSteerLiveScopes(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		// The first answer is set aside by a steering "now" and never seen.
		step{"delay_ms": 5000, "text": "an answer set aside"},
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("bash", map[string]any{"command": "sleep 2; ls"})),
		calls(call("goals", calcGoals())),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"})),
		// Set aside by the steering to restricted "now"; the write comes next,
		// under restricted.
		step{"delay_ms": 5000, "text": "an answer set aside"},
		calls(call("bash", map[string]any{"command": "echo x > calc/extra.txt"})),
		step{"delay_ms": 3000, "tool_calls": []map[string]any{call("phase", map[string]any{"to": "verifying"})}},
		calls(call("verify", map[string]any{})),
		approve(),
	)
	l := startLive(t, dir, runArgs(m, "fix calc")...)
	first := l.waitEvent(t, "the first request", isType("model_request"))
	id := first["run"].(string)

	// now: the answer in flight is set aside and asked again.
	s := ultra(t, dir, "steer", id, "--model-mode", "fast", "--scope", "now", "--reason", "cheaper")
	if s.code != 0 || !strings.Contains(s.stdout, "applied") {
		t.Fatalf("steer now: exit %d %s %s", s.code, s.stdout, s.stderr)
	}
	l.waitEvent(t, "the model mode change", func(e map[string]any) bool {
		return e["type"] == "axis_changed" && data(e)["axis"] == "model_mode" && data(e)["scope"] == "now"
	})
	// after-current-tool: asked while the sleep runs, applied after it.
	l.waitEvent(t, "the sleep", func(e map[string]any) bool {
		return e["type"] == "tool_call" && data(e)["tool"] == "bash"
	})
	if s := ultra(t, dir, "steer", id, "--model-mode", "deep", "--scope", "after-current-tool"); s.code != 0 {
		t.Fatalf("steer after-current-tool: exit %d %s", s.code, s.stderr)
	}
	// after-current-unit: asked in planning, applied when planning ends.
	if s := ultra(t, dir, "steer", id, "--model-mode", "smart", "--scope", "after-current-unit"); s.code != 0 {
		t.Fatalf("steer after-current-unit: exit %d %s", s.code, s.stderr)
	}
	// Impossible: a build run cannot become a chat; refused at once.
	if s := ultra(t, dir, "steer", id, "--mode", "chat", "--scope", "next-milestone"); s.code != 2 || !strings.Contains(s.stderr, "cannot become chat") {
		t.Fatalf("impossible steer: exit %d %s %s", s.code, s.stdout, s.stderr)
	}
	// restricted, now, while the model answers with a write: the write
	// meets the new profile.
	edit := l.waitEvent(t, "the edit", func(e map[string]any) bool { return e["type"] == "tool_result" && data(e)["tool"] == "edit" })
	if data(edit)["is_error"] == true {
		t.Fatalf("the edit failed: %v", data(edit))
	}
	if s := ultra(t, dir, "steer", id, "--permission-profile", "restricted", "--scope", "now", "--reason", "read-only from here"); s.code != 0 {
		t.Fatalf("steer restricted: exit %d %s", s.code, s.stderr)
	}
	// next-milestone: asked while building, applied at the gate's verdict.
	if s := ultra(t, dir, "steer", id, "--model-mode", "fast", "--scope", "next-milestone"); s.code != 0 {
		t.Fatalf("steer next-milestone: exit %d %s", s.code, s.stderr)
	}
	code := l.wait(t)
	evs := l.events()
	toolDone := seqOf(t, evs, "sleep result", func(e map[string]any) bool {
		return e["type"] == "tool_result" && data(e)["tool"] == "bash"
	})
	assisted := seqOf(t, evs, "model mode → deep", func(e map[string]any) bool {
		return e["type"] == "axis_changed" && data(e)["to"] == "deep"
	})
	if assisted < toolDone {
		t.Errorf("after-current-tool applied (#%v) before the tool finished (#%v)", assisted, toolDone)
	}
	pending := seqOf(t, evs, "after-current-unit pending", func(e map[string]any) bool {
		return e["type"] == "control" && data(e)["scope"] == "after-current-unit" && data(e)["outcome"] == "pending"
	})
	planned := seqOf(t, evs, "the unit's end", func(e map[string]any) bool {
		return e["type"] == "phase_changed" && e["seq"].(float64) > pending
	})
	auto := seqOf(t, evs, "model mode → smart", func(e map[string]any) bool {
		return e["type"] == "axis_changed" && data(e)["to"] == "smart" && data(e)["scope"] == "after-current-unit"
	})
	if auto < planned {
		t.Errorf("after-current-unit applied (#%v) before the unit it was asked in ended (#%v)", auto, planned)
	}
	verdict := seqOf(t, evs, "the gate's verdict", isType("verify_result"))
	milestone := seqOf(t, evs, "model mode → fast at the milestone", func(e map[string]any) bool {
		return e["type"] == "axis_changed" && data(e)["to"] == "fast" && data(e)["scope"] == "next-milestone"
	})
	if milestone < verdict {
		t.Errorf("next-milestone applied (#%v) before the verdict (#%v)", milestone, verdict)
	}
	// The write under restricted ran, and failed: the worktree is
	// read-only to it.
	var wrote map[string]any
	for _, e := range evs {
		if e["type"] == "tool_result" && data(e)["tool"] == "bash" && strings.Contains(fmt.Sprint(data(e)["output"]), "extra.txt") {
			wrote = e
		}
	}
	if wrote == nil || data(wrote)["is_error"] != true {
		t.Errorf("the write under restricted did not run and fail: %v", wrote)
	}
	// It never reached the worktree.
	wt := runWorktree(t, dir, id)
	if _, err := os.Stat(filepath.Join(wt, "calc", "extra.txt")); err == nil {
		var seq []string
		for _, e := range evs {
			d, _ := json.Marshal(e["data"])
			seq = append(seq, fmt.Sprintf("#%v %v %.160s", e["seq"], e["type"], d))
		}
		t.Errorf("a write ran after the profile was steered to restricted:\n%s", strings.Join(seq, "\n"))
	}
	// Every transition is recorded with its scope and who asked.
	st := ultra(t, dir, "status", id, "--json")
	for _, want := range []string{`"scope": "now"`, `"scope": "after-current-tool"`, `"scope": "after-current-unit"`, `"session": "pid `} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("status lacks %s", want)
		}
	}
	// The request for fast reached the model: later reminders say so.
	reqs := m.srv.Requests()
	if !strings.Contains(reqs[len(reqs)-1].LastUser, "| restricted | fast |") {
		t.Errorf("the reminder does not show the steered axes: %q", reqs[len(reqs)-1].LastUser)
	}
	if code != 0 {
		t.Errorf("the steered run exited %d, want 0 (complete)", code)
	}
}

// ultra pause stops a live run at its next safe point (resumable), ultra
// stop marks it stopped.
func TestPauseAndStopLive(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, step{"delay_ms": 20000, "text": "slow"})
	l := startLive(t, dir, runArgs(m, "fix calc")...)
	id := l.waitEvent(t, "the request", isType("model_request"))["run"].(string)
	if p := ultra(t, dir, "pause", id); p.code != 0 || !strings.Contains(p.stdout, "applied") {
		t.Fatalf("pause: exit %d %s %s", p.code, p.stdout, p.stderr)
	}
	if code := l.wait(t); code != 3 {
		t.Fatalf("paused run exited %d", code)
	}
	if fin := l.waitEvent(t, "finished", isType("run_finished")); data(fin)["status"] != "paused" {
		t.Fatalf("finished %v", data(fin))
	}
	if p := ultra(t, dir, "pause", id); p.code != 2 || !strings.Contains(p.stderr, "no process drives") {
		t.Fatalf("pause of a paused run: exit %d %s", p.code, p.stderr)
	}
	if s := ultra(t, dir, "stop", id); s.code != 0 {
		t.Fatalf("stop: exit %d %s", s.code, s.stderr)
	}
	if st := ultra(t, dir, "status", id, "--json"); !strings.Contains(st.stdout, `"status": "stopped"`) {
		t.Fatalf("status after stop:\n%s", st.stdout)
	}
}

// waitRequests waits until the model server has had n requests.
func waitRequests(t *testing.T, m *model, n int) {
	t.Helper()
	for i := 0; i < 300 && len(m.srv.Requests()) < n; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if got := len(m.srv.Requests()); got < n {
		t.Fatalf("%d model requests, want %d", got, n)
	}
}

// A waiting call is judged again by the axes that hold when a person
// allows it; ultra approve without --call allows the call that waits;
// decisions that cannot apply are refused at once; a switch to
// autonomous control releases the call that waits.
func TestManualDecisionsAndSteering(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("glob", map[string]any{"pattern": "**/*_test.go"})),
		calls(call("goals", calcGoals())),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"})),
		calls(call("bash", map[string]any{"command": "echo released > released.txt"})),
		step{"delay_ms": 20000, "text": "waiting"},
	)
	l := startLive(t, dir, runArgs(m, "--control", "manual", "fix calc")...)
	w := l.waitEvent(t, "the read waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting"
	})
	id := w["run"].(string)
	if r := ultra(t, dir, "approve", id); r.code != 0 || !strings.Contains(r.stdout, "applied") {
		t.Fatalf("approve without --call: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	l.waitEvent(t, "the glob waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "glob"
	})
	if r := ultra(t, dir, "approve", id, "--call", "call_9"); r.code != 2 || !strings.Contains(r.stderr, "waits on call call_2 (glob), not call_9") {
		t.Fatalf("approve of another call: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := ultra(t, dir, "next", id); r.code != 2 || !strings.Contains(r.stderr, "does not pause between units") {
		t.Fatalf("next of a manual run: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := ultra(t, dir, "approve", id, "--call", "call_2"); r.code != 0 {
		t.Fatalf("approve glob: exit %d %s", r.code, r.stderr)
	}
	// The goals call waits as a call; allowing it accepts the plan, and
	// the run goes on (manual).
	l.waitEvent(t, "the goals call waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "goals"
	})
	if r := ultra(t, dir, "approve", id, "--call", "call_3"); r.code != 0 {
		t.Fatalf("approve goals: exit %d %s", r.code, r.stderr)
	}
	l2 := l
	l2.waitEvent(t, "the edit waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "edit"
	})
	if s := ultra(t, dir, "steer", id, "--permission-profile", "restricted", "--scope", "now"); s.code != 0 {
		t.Fatalf("steer: exit %d %s", s.code, s.stderr)
	}
	if r := ultra(t, dir, "approve", id); r.code != 0 {
		t.Fatalf("approve the edit: exit %d %s", r.code, r.stderr)
	}
	ref := l2.waitEvent(t, "the edit refused", func(e map[string]any) bool { return e["type"] == "refusal" && data(e)["tool"] == "edit" })
	if data(ref)["layer"] != "policy" {
		t.Fatalf("refusal %v", data(ref))
	}
	wt := runWorktree(t, dir, id)
	if b, _ := os.ReadFile(filepath.Join(wt, "calc", "calc.go")); strings.Contains(string(b), "return a + b") {
		t.Fatal("an edit allowed under normal ran after the run was steered to restricted")
	}
	// The bash call waits; a switch to autonomous releases it.
	l2.waitEvent(t, "the bash call waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "bash"
	})
	if r := ultra(t, dir, "autonomous", id); r.code != 0 {
		t.Fatalf("autonomous: exit %d %s", r.code, r.stderr)
	}
	rel := l2.waitEvent(t, "the release", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "allowed" && data(e)["tool"] == "bash"
	})
	if !strings.Contains(data(rel)["reason"].(string), "autonomous") {
		t.Fatalf("release %v", data(rel))
	}
	l2.waitEvent(t, "the bash result", func(e map[string]any) bool { return e["type"] == "tool_result" && data(e)["tool"] == "bash" })
	if st := ultra(t, dir, "status", id, "--json"); !strings.Contains(st.stdout, `"control": "autonomous"`) {
		t.Fatalf("status does not show the new control:\n%.600s", st.stdout)
	}
	ultra(t, dir, "cancel", id)
	l2.wait(t)
}

// A second ultra approve while the first drives the run is refused: one
// run, one driver.
func TestOneDriverPerRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()[:2]...)
	res := ultra(t, dir, runArgs(m, "--control", "assisted", "fix calc")...)
	if res.code != 3 {
		t.Fatalf("plan: exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	slow := newModel(t, step{"delay_ms": 15000, "text": "slow"})
	l := startLive(t, dir, "approve", id, "--output", "jsonl", "--base-url", slow.url)
	l.waitEvent(t, "the resume", isType("run_resumed"))
	second := ultra(t, dir, "approve", id, "--base-url", slow.url)
	if second.code != 2 || !strings.Contains(second.stderr, "in progress in another process") {
		t.Fatalf("a second approve: exit %d %s %s", second.code, second.stdout, second.stderr)
	}
	ultra(t, dir, "cancel", id)
	l.wait(t)
}

// The titles a model proposed cannot drive the terminal of the person who
// reads them.
func TestGoalsPrintedSafely(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	g := calcGoals()
	g["goals"].([]any)[0].(map[string]any)["title"] = "Add adds\x1b]52;c;ZXZpbA==\x07\x1b[2J"
	m := newModel(t, calls(call("goals", g)))
	res := ultra(t, dir, runArgs(m, "--control", "assisted", "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	out := ultra(t, dir, "goals", runID(t, res.events(t)))
	if strings.Contains(out.stdout, "\x1b") || strings.Contains(out.stdout, "\x07") || !strings.Contains(out.stdout, "Add adds") {
		t.Fatalf("goals printed raw control characters: %q", out.stdout)
	}
}
