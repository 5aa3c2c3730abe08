package e2e

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A person's deny rules, in Claude Code's settings.json, refuse in an
// autonomous run: a command they name, one that hides what it runs, an
// edit of a file they name; a settings file the model writes into its
// worktree changes nothing. The run still completes by its gate.
func TestPermissionRulesDeny(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	files[".claude/settings.json"] = `{"permissions": {"deny": ["Bash(rm:*)", "Edit(calc/calc_test.go)"]}, "model": "sonnet"}`
	dir := repo(t, files)
	m := newModel(t, append([]step{
		fixSteps()[0],
		calls(call("goals", calcGoals())),
		calls(call("read", map[string]any{"file_path": ".claude/settings.json"}),
			call("write", map[string]any{"file_path": ".claude/settings.json", "content": `{"permissions": {"allow": ["Bash"]}}`}),
			call("bash", map[string]any{"command": "rm -f calc/calc_test.go"}),
			call("bash", map[string]any{"command": "X=rm; $X -f calc/calc_test.go"}),
			call("edit", map[string]any{"file_path": "calc/calc_test.go", "old_string": "got != 5", "new_string": "false"})),
	}, fixSteps()[2:]...)...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		for _, e := range ofType(res.events(t), "tool_result") {
			t.Logf("%s: %.300s", data(e)["tool"], data(e)["output"])
		}
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var outs []string
	for _, e := range ofType(res.events(t), "tool_result") {
		if tool := data(e)["tool"]; tool == "bash" || tool == "edit" {
			outs = append(outs, data(e)["output"].(string))
		}
	}
	for i, want := range []string{
		"Refused [permission-rule]: your permission rule deny Bash(rm:*) (" + dir + "/.claude/settings.json) refuses this call",
		"ultra cannot tell whether it matches: the word $X expands when it runs",
		"your permission rule deny Edit(calc/calc_test.go)",
	} {
		if i >= len(outs) || !strings.Contains(outs[i], want) {
			t.Fatalf("result %d lacks %q: %q", i, want, outs)
		}
	}
	id := runID(t, res.events(t))
	if got := git(t, dir, "show", "ultra/"+id+":calc/calc_test.go"); got != calcProject["calc/calc_test.go"] {
		t.Fatalf("the test file changed on the branch:\n%s", got)
	}
}

// A person's allow rules are their approval ahead: under manual control
// the calls they cover run without waiting; the first one they do not
// cover waits.
func TestPermissionRulesAllowUnderManualControl(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	files[".ultra/settings.json"] = `{"permissions": {"allow": ["Read", "Glob"]}}`
	dir := repo(t, files)
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("glob", map[string]any{"pattern": "**/*.go"})),
		calls(call("bash", map[string]any{"command": "ls"})),
		step{"text": "waiting", "delay_ms": 20000},
	)
	res := ultra(t, dir, runArgs(m, "--control", "manual", "--no-wait", "fix calc")...)
	if res.code != 3 || !strings.Contains(res.stderr, "(bash) waits for a person's approval") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	for _, e := range ofType(res.events(t), "approval") {
		if tool := data(e)["tool"]; tool == "read" || tool == "glob" {
			t.Fatalf("an allowed call waited: %v", data(e))
		}
	}
	ran := 0
	for _, e := range ofType(res.events(t), "tool_result") {
		if tool := data(e)["tool"]; (tool == "read" || tool == "glob") && data(e)["is_error"] != true {
			ran++
		}
	}
	if ran != 2 {
		t.Fatalf("%d allowed calls ran, want 2", ran)
	}
}

// A settings file that does not load stops a run before anything is
// made, naming the file.
func TestPermissionRulesBadFile(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	files[".claude/settings.json"] = `{"permissions": {"allow": ["Bash(go test"]}}`
	dir := repo(t, files)
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 2 || !strings.Contains(res.stderr, ".claude/settings.json: permissions.allow: \"Bash(go test\" has no closing parenthesis") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if n := len(m.srv.Requests()); n != 0 {
		t.Fatalf("%d model requests", n)
	}
	d := ultra(t, dir, "doctor")
	if !strings.Contains(d.stdout, "setup") || !strings.Contains(d.stdout, "no closing parenthesis") {
		t.Fatalf("doctor:\n%s", d.stdout)
	}
	// A file that is not JSON is named with the line and column.
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.local.json"), []byte("{\n  \"permissions\": {\"deny\": [\"Bash(rm:*)\",]}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 2 || !strings.Contains(res.stderr, ".claude/settings.local.json:2:41: invalid character ']'") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
}

// Allowing a tool for the rest of a manual run spares manual control's
// wait only: a later call of that tool that a person's ask rule covers
// still waits (a harmless first call buys no blanket allowance).
func TestForRunKeepsAskRules(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for k, v := range calcProject {
		files[k] = v
	}
	files[".claude/settings.json"] = `{"permissions": {"ask": ["Bash(cat:*)"]}}`
	files["secret.txt"] = "s3cret\n"
	dir := repo(t, files)
	m := newModel(t,
		calls(call("bash", map[string]any{"command": "ls"})),
		calls(call("bash", map[string]any{"command": "wc -l calc/calc.go"})),
		calls(call("bash", map[string]any{"command": "cat secret.txt"})),
		step{"text": "waiting", "delay_ms": 20000},
	)
	l := startLive(t, dir, runArgs(m, "--control", "manual", "look")...)
	w := l.waitEvent(t, "the ls waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting"
	})
	id := w["run"].(string)
	if a := ultra(t, dir, "approve", id, "--for-run"); a.code != 0 {
		t.Fatalf("approve --for-run: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	l.waitEvent(t, "the cat waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && strings.Contains(fmt.Sprint(data(e)), "cat secret.txt")
	})

	if body := string(m.srv.Requests()[len(m.srv.Requests())-1].Body); strings.Contains(body, "s3cret") {
		t.Fatalf("the model read the secret without a person's answer")
	}
	var waited int
	for _, e := range l.events() {
		if e["type"] == "approval" && data(e)["state"] == "waiting" {
			waited++
		}
	}
	if waited != 2 {
		t.Errorf("%d calls waited, want the ls and the cat (the wc ran on the allowance)", waited)
	}
	ultra(t, dir, "cancel", id)
	l.wait(t)
}

// Refusing a call with --for-run refuses its tool for the rest of the
// run, by the guard: after the run control turns autonomous (no call
// waits any more), the tool's calls are still refused, and do nothing.
func TestDenyForRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("bash", map[string]any{"command": "wc -l calc/calc.go"})),
		step{"text": "thinking", "delay_ms": 3000},
		calls(call("bash", map[string]any{"command": "ls calc"})),
		step{"text": "done"},
	)
	l := startLive(t, dir, runArgs(m, "--control", "manual", "--max-turns", "4", "look")...)
	w := l.waitEvent(t, "the bash call waiting", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting"
	})
	id := w["run"].(string)
	if a := ultra(t, dir, "approve", id, "--deny", "no shell in this run", "--for-run"); a.code != 0 {
		t.Fatalf("deny --for-run: exit %d %s %s", a.code, a.stdout, a.stderr)
	}
	l.waitEvent(t, "the denial for the run", func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "denied_for_run"
	})
	if s := ultra(t, dir, "steer", id, "--control", "autonomous", "--scope", "now"); s.code != 0 {
		t.Fatalf("steer: exit %d %s %s", s.code, s.stdout, s.stderr)
	}
	l.waitEvent(t, "the later bash call refused", func(e map[string]any) bool {
		return e["type"] == "refusal" && data(e)["layer"] == "person"
	})
	l.wait(t)
	for _, e := range l.events() {
		if e["type"] == "tool_result" && data(e)["tool"] == "bash" && data(e)["is_error"] != true {
			t.Errorf("a bash call ran after the tool was refused for the run: %v", data(e))
		}
	}
	reqs := m.srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "a person refused tool") || !strings.Contains(body, "no shell in this run") {
		t.Errorf("the model did not read why the tool is refused")
	}
}
