package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// openTPane starts the TUI (`ultra ARGS`) in dir in a w×h terminal.
func openTPane(t testing.TB, dir string, w, h int, args ...string) *pane {
	t.Helper()
	var env []string
	for _, kv := range ultraEnv(t) {
		if !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	// Runs the TUI started outlive it: the repository is removed only
	// once their processes are gone (cleanups run last registered first).
	t.Cleanup(func() { waitRunsGone(t, dir) })
	return startPane(t, dir, env, w, h, args...)
}

// waitRunsGone waits up to a minute for the processes of dir's runs to end.
func waitRunsGone(t testing.TB, dir string) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		r := ultra(t, dir, "runs", "--json")
		var runs []struct{ PID int }
		if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
			return // no store, no runs
		}
		busy := false
		for _, x := range runs {
			busy = busy || (x.PID > 0 && syscall.Kill(x.PID, 0) == nil)
		}
		if !busy {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("runs of %s still have processes after a minute", dir)
}

// header is the screen's first line.
func header(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// tuiArgs point the TUI's runs at the scripted model.
func tuiArgs(m *model, extra ...string) []string {
	return append([]string{"--provider", "openai", "--base-url", m.url, "--model", "scripted"}, extra...)
}

// slow makes each scripted answer take a while, so a person (and the
// test) sees each phase.
func slow(steps []step, ms int) []step {
	for _, s := range steps {
		s["delay_ms"] = ms
	}
	return steps
}

// statusJSON is `ultra status RUN --json`, decoded.
func statusJSON(t *testing.T, dir, id string) map[string]any {
	t.Helper()
	st := ultra(t, dir, "status", id, "--json")
	var v map[string]any
	if err := json.Unmarshal([]byte(st.stdout), &v); err != nil {
		t.Fatalf("status %s: %v\n%s%s", id, err, st.stdout, st.stderr)
	}
	return v
}

// onlyRun is the one run of dir.
func onlyRun(t *testing.T, dir string) string {
	t.Helper()
	r := ultra(t, dir, "runs", "--json")
	var runs []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %s", err, r.stdout)
	}
	return runs[0].ID
}

// A full run typed into the TUI and watched to completion: the header
// follows the phases, the terminal's title carries the axes.
func TestTUIFullRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, slow(fixSteps(), 600)...)
	p := openTPane(t, dir, 120, 48, tuiArgs(m)...)
	s := p.waitText("ultra build | autonomous | normal | smart")
	if !strings.Contains(s, "no run") {
		t.Fatalf("first frame:\n%s", s)
	}
	if got := p.title(); got != "ultra[build|A|normal|smart] "+filepath.Base(dir) {
		t.Errorf("pane title %q", got)
	}
	p.enter("fix Add in calc")
	var seen []string
	final := p.waitFor("the run complete", func(s string) bool {
		h := header(s)
		if i := strings.Index(h, "▸ "); i >= 0 {
			ph := strings.Fields(h[i+len("▸ "):])[0]
			if len(seen) == 0 || seen[len(seen)-1] != ph {
				seen = append(seen, ph)
			}
		}
		return strings.Contains(h, "▸ complete")
	})
	// The phase changes before the run's last event arrives.
	final = p.waitText("complete: the final review approved")
	want := []string{"planning", "building", "verifying"}
	for _, w := range want {
		found := false
		for _, s := range seen {
			found = found || s == w
		}
		if !found {
			t.Errorf("the header never showed %s (saw %v)", w, seen)
		}
	}
	for _, w := range []string{"+return a + b", "gate PASS", "complete: the final review approved"} {
		if !strings.Contains(final, w) {
			t.Errorf("the final screen lacks %q:\n%s", w, final)
		}
	}
	id := onlyRun(t, dir)
	st := statusJSON(t, dir, id)
	if st["status"] != "complete" {
		t.Errorf("the run is %v", st["status"])
	}
	if ax, _ := st["axes"].(map[string]any); ax["surface"] != "tui" {
		t.Errorf("a run the TUI started records the surface %v", ax["surface"])
	}
}

// Under 80 columns the badge is compact; resizing the terminal redraws it.
func TestTUICompactBadgeAndResize(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, text("unused"))
	p := openTPane(t, dir, 70, 30, tuiArgs(m, "--permission-profile", "trusted")...)
	p.waitFor("the compact badge", func(s string) bool { return strings.HasPrefix(header(s), "ultra [B][A][T][S]") })
	// The TUI keeps a person's typing here: the registry knows the
	// repository from now on, so runs elsewhere hide its state.
	if reg, _ := os.ReadFile(filepath.Join(stateHome(t), "ultra", "repos.json")); !strings.Contains(string(reg), `"`+dir+`"`) {
		t.Errorf("the TUI did not register %s:\n%s", dir, reg)
	}
	p.tmux("resize-window", "-t", "lm", "-x", "120", "-y", "30")
	p.waitFor("the full badge after the resize", func(s string) bool {
		return strings.HasPrefix(header(s), "ultra build | autonomous | trusted | smart")
	})
	// Repair keeps its full label however narrow.
	p.enter("/mode repair")
	p.tmux("resize-window", "-t", "lm", "-x", "60", "-y", "30")
	p.waitFor("repair in full", func(s string) bool { return strings.HasPrefix(header(s), "ultra [repair][A][T][S]") })
}

// manualSteps: a model that reads, runs a command (denied), proposes
// goals and fixes calc.
func manualSteps() []step {
	f := fixSteps()
	return append([]step{f[0], calls(call("bash", map[string]any{"command": "wc -l calc/calc.go"}))}, f[1:]...)
}

// A manual run driven from the TUI: approvals let calls run, a denial's
// reason reaches the model, the plan is accepted once, from its prompt
// (its goals call never waits as a call); a slash command and a shortcut
// change the live run's axes, recorded in its transitions as a person's;
// leaving manual control releases the call that waits and the run
// completes.
func TestTUIApprovalsAndSteering(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, manualSteps()...)
	p := openTPane(t, dir, 120, 40, tuiArgs(m, "--control", "manual")...)
	p.waitText("ultra build | manual | normal | smart")
	p.enter("fix Add in calc")
	p.waitText("approve this call? read")
	p.waitText("o allow read-only calls (read, glob, grep) for this run")
	p.answer("o") // every read-only call for the rest of the run: the glob does not ask
	p.waitText("approve this call? bash")
	waitRequests(t, m, 2)
	if !strings.Contains(string(m.srv.Requests()[1].Body), "return a - b") {
		t.Fatal("the approved read's result did not reach the model")
	}
	if s := p.text(); strings.Contains(s, "approve this call? glob") {
		t.Fatalf("the glob waited after read-only calls were allowed:\n%s", s)
	}
	p.answer("d")
	p.waitText("why it is denied")
	p.enter("count nothing")
	p.waitText("denied: count nothing")
	waitRequests(t, m, 3)
	if body := string(m.srv.Requests()[2].Body); !strings.Contains(body, "Denied by a person: count nothing") {
		t.Fatalf("the denial did not reach the model:\n%s", body)
	}
	p.waitText("accept this plan?") // the goals call, shown as its plan
	p.answer("a")                   // accept: the run goes on under manual control
	p.waitText("approve this call? edit")
	id := onlyRun(t, dir)
	p.enter("/permission-profile trusted")
	p.waitFor("the trusted badge", func(s string) bool { return strings.Contains(header(s), "manual | trusted") })
	p.keys("M-p") // Alt+P: the next profile, unrestricted, asks for a second press
	p.waitText("press alt+p again to make the run unrestricted")
	p.keys("M-p")
	p.waitFor("the unrestricted badge", func(s string) bool { return strings.Contains(header(s), "manual | unrestricted") })
	var tr []map[string]any
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tr = steered(t, dir, id, "permission_profile")
		if len(tr) >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(tr) != 2 || tr[0]["to"] != "trusted" || tr[1]["to"] != "unrestricted" || tr[0]["by"] != "person" || tr[1]["by"] != "person" {
		t.Fatalf("steered transitions of the profile: %v", tr)
	}
	if got := p.title(); !strings.HasPrefix(got, "ultra[build|M|unrestricted|smart]") {
		t.Errorf("title %q", got)
	}
	p.keys("M-a") // Alt+A: autonomous releases the waiting edit
	p.waitFor("the run complete", func(s string) bool { return strings.Contains(header(s), "▸ complete") })
	// The header shows the phase, which the run enters before it records
	// its end (its final commit, its status).
	st := statusJSON(t, dir, id)
	for end := time.Now().Add(20 * time.Second); st["status"] == "running" && time.Now().Before(end); st = statusJSON(t, dir, id) {
		time.Sleep(100 * time.Millisecond)
	}
	if st["status"] != "complete" {
		t.Errorf("the run is %v", st["status"])
	}
	if tr := steered(t, dir, id, "control"); len(tr) != 1 || tr[0]["to"] != "autonomous" {
		t.Errorf("steered transitions of the control: %v", tr)
	}
}

// steered are the run's recorded changes of axis by steering.
func steered(t *testing.T, dir, id, axis string) []map[string]any {
	t.Helper()
	var out []map[string]any
	ts, _ := statusJSON(t, dir, id)["transitions"].([]any)
	for _, x := range ts {
		if e := x.(map[string]any); e["axis"] == axis && e["scope"] != nil {
			out = append(out, e)
		}
	}
	return out
}

// Plan mode from the TUI: the plan waits, "accept and run autonomously"
// switches the run to build under autonomous control and it completes.
func TestTUIPlanAcceptAutonomous(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	p := openTPane(t, dir, 120, 40, tuiArgs(m, "--mode", "plan", "--control", "assisted")...)
	p.waitText("ultra plan | assisted | normal | smart")
	p.enter("fix Add in calc")
	p.waitText("the plan waits for you")
	p.answer("A")
	p.waitFor("the run complete", func(s string) bool { return strings.Contains(header(s), "▸ complete") })
	// The header shows the phase; the run has ended (its status saved)
	// when it says how it ended.
	p.waitText("complete: the final review approved")
	id := onlyRun(t, dir)
	st := statusJSON(t, dir, id)
	ax, _ := st["axes"].(map[string]any)
	if st["status"] != "complete" || ax["mode"] != "build" || ax["control"] != "autonomous" {
		t.Fatalf("the run: %v %v", st["status"], ax)
	}
}

// A headless run started elsewhere: a second terminal attaches to it,
// approves its calls and its plan; Esc pauses the live run; Ctrl-C
// twice quits.
func TestTUIAttachEscAndQuit(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := fixSteps()
	steps[2]["delay_ms"] = 30000 // the edit's answer is slow: Esc sets it aside
	m := newModel(t, steps...)
	l := startLive(t, dir, runArgs(m, "--control", "manual", "fix calc")...)
	w := l.waitEvent(t, "the read waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting"
	})
	id := w["run"].(string)
	p := openTPane(t, dir, 100, 35, "attach", id)
	p.waitText("approve this call? read")
	if !strings.Contains(header(p.text()), id) {
		t.Errorf("the header does not name the run:\n%s", p.text())
	}
	p.answer("a")
	p.waitText("approve this call? glob")
	p.answer("a")
	p.waitText("accept this plan?") // the goals call, shown as its plan
	// A switch to autonomous control releases it: the plan is accepted by
	// code validation and the run goes on.
	if r := ultra(t, dir, "autonomous", id); r.code != 0 {
		t.Fatalf("autonomous: exit %d %s", r.code, r.stderr)
	}
	p.waitFor("the run working under autonomous control", func(s string) bool {
		return strings.Contains(header(s), "build | autonomous") && strings.Contains(s, "waiting for the model")
	})
	p.keys("Escape")
	p.waitFor("the run paused", func(s string) bool {
		return strings.Contains(s, "paused") && !strings.Contains(s, "waiting for the model")
	})
	if st := statusJSON(t, dir, id); st["status"] != "paused" {
		t.Fatalf("after Esc the run is %v", st["status"])
	}
	l.wait(t) // the headless process ends with the pause
	p.keys("C-c")
	p.waitText("press Ctrl-C again to quit")
	p.keys("C-c")
	if code := p.exited(); code != 0 {
		t.Fatalf("the TUI exited %d", code)
	}
}

// A run the TUI started goes on when the TUI quits.
func TestTUIRunOutlivesTUI(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, slow(fixSteps(), 400)...)
	p := openTPane(t, dir, 100, 30, tuiArgs(m)...)
	p.waitText("ultra build | autonomous")
	p.enter("fix Add in calc")
	p.waitText("▸ planning")
	p.keys("C-c")
	p.keys("C-c")
	if code := p.exited(); code != 0 {
		t.Fatalf("the TUI exited %d", code)
	}
	id := onlyRun(t, dir)
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		if st := statusJSON(t, dir, id); st["status"] == "complete" {
			return
		} else if st["status"] != "running" {
			t.Fatalf("the run ended %v: %v", st["status"], st["reason"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the run did not complete after the TUI quit")
}

// BenchmarkTUIStartup is the time from starting ultra in a terminal to
// its first frame (the badge on screen): process start, the store, the
// terminal's set-up. The tmux server and pane exist before; the pane is
// read every 2 ms, which the figure includes.
// Goal: under 150 ms.
func BenchmarkTUIStartup(b *testing.B) {
	dir := repo(b, calcProject)
	m := newModel(b, text("unused"))
	p := openTPane(b, dir, 120, 40, "--version")
	p.exited()
	var env []string
	for _, kv := range ultraEnv(b) {
		if !strings.HasPrefix(kv, "TMUX") && !strings.HasPrefix(kv, "TERM=") {
			env = append(env, shellQuote(kv))
		}
	}
	cmd := fmt.Sprintf("env -i %s TERM=xterm-256color %s --base-url %s --model scripted", strings.Join(env, " "), shellQuote(ultraBin), shellQuote(m.url))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		p.tmux("respawn-pane", "-k", "-t", "lm", cmd)
		for !strings.Contains(p.text(), "ultra build | autonomous") {
			if time.Since(start) > 10*time.Second {
				b.Fatalf("no first frame:\n%s", p.text())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// The TUI streams: the model's answer appears while it is written, and a
// command's output while the command runs.
func TestTUIStreamsAnswerAndOutput(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	f := fixSteps()
	first := step{"text": "Reading calc.go first. The end of this answer comes later: end-of-answer.", "chunk_size": 4, "chunk_delay_ms": 60,
		"thinking":   "Add looks wrong in calc.go, so I should read it before I change anything. thought-ends-here.",
		"tool_calls": f[0]["tool_calls"]}
	slowBash := calls(call("bash", map[string]any{"command": "for i in 1 2 3 4 5 6; do echo out-$i; sleep 0.4; done"}))
	steps := append([]step{first, f[1], slowBash}, f[2:]...)
	m := newModel(t, steps...)
	// The Anthropic wire, whose answers carry readable thinking.
	p := openTPane(t, dir, 120, 40, "--provider", "anthropic", "--base-url", m.url, "--model", "scripted")
	p.waitText("ultra build | autonomous")
	p.enter("fix Add in calc")
	p.waitFor("the thinking while it streams, folded to its newest line", func(s string) bool {
		return strings.Contains(s, "▸ thinking") && strings.Contains(s, "Add looks wrong") && !strings.Contains(s, "thought-ends-here") &&
			strings.Contains(s, "the model is thinking")
	})
	p.waitFor("part of the answer while it streams", func(s string) bool {
		return strings.Contains(s, "Reading calc.go") && !strings.Contains(s, "end-of-answer") && strings.Contains(s, "the model is answering")
	})
	p.waitFor("the command's first lines while it runs", func(s string) bool {
		return strings.Contains(s, "out-1") && !strings.Contains(s, "out-6") && strings.Contains(s, "running `for i in")
	})
	p.waitFor("the run complete", func(s string) bool { return strings.Contains(header(s), "▸ complete") })
}

// answer presses a prompt's key as a person does: after reading it (a
// prompt ignores keys in its first moments, tui.askGrace).
func (p *pane) answer(key string) {
	time.Sleep(800 * time.Millisecond)
	p.keys(key)
}

// The input shows one prompt mark, and /help's wrapped summaries stay in
// their column: no row of the command list starts at column 0.
func TestTUIOnePromptAndHelpWrap(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, text("unused"))
	p := openTPane(t, dir, 70, 150, tuiArgs(m)...)
	s := p.waitFor("the compact badge", func(s string) bool { return strings.HasPrefix(header(s), "ultra [B][A][N][S]") })
	prompts := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "›") {
			prompts++
		}
	}
	if prompts != 1 {
		t.Fatalf("%d prompt marks, want 1:\n%s", prompts, s)
	}
	p.enter("/help")
	s = p.waitText("Commands (/help COMMAND")
	in := false
	rows := 0
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "Commands (/help COMMAND"):
			in = true
		case l == "keys":
			in = false
		case in && l != "":
			rows++
			if !strings.HasPrefix(l, "  ") {
				t.Errorf("a /help row at column 0: %q", l)
			}
		}
	}
	if rows < 20 {
		t.Fatalf("only %d rows of /help:\n%s", rows, s)
	}
}
