package e2e

import (
	"maps"
	"strings"
	"testing"
)

// Hook scripts in the shapes people publish for Claude Code, unmodified.
var hookScripts = map[string]string{
	// A command blocker on PreToolUse.
	".claude/hooks/block_rm.py": `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
cmd = data.get("tool_input", {}).get("command", "")
if cmd.startswith("rm") or " rm " in cmd:
    print("Blocked: rm is not allowed in this project", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
`,
	// A formatter on PostToolUse.
	".claude/hooks/format.sh": `#!/bin/sh
f=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"].get("file_path",""))')
case "$f" in *.go) gofmt -w "$f" ;; esac
exit 0
`,
	// A Stop hook that insists on a check.
	".claude/hooks/stop_check.sh": `#!/bin/sh
cat >/dev/null
if [ ! -f NOTES.md ]; then
  echo "Write NOTES.md describing the change before you finish" >&2
  exit 2
fi
`,
	".claude/settings.json": `{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR/.claude/hooks/block_rm.py\""}]}],
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR/.claude/hooks/format.sh\""}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR/.claude/hooks/stop_check.sh\"", "timeout": 30}]}]
  }
}`,
}

// A run follows the person's Claude Code hooks: the blocker refuses a
// command even after the model rewrote the script in its worktree, the
// formatter formats what the model wrote, and the Stop hook sends a
// finished run back to work (a review round) until its check holds.
func TestClaudeCodeHooks(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	maps.Copy(files, hookScripts)
	dir := repo(t, files)
	m := newModel(t,
		fixSteps()[0],
		calls(call("goals", calcGoals())),
		calls(call("read", map[string]any{"file_path": ".claude/hooks/block_rm.py"})),
		calls(call("write", map[string]any{"file_path": ".claude/hooks/block_rm.py", "content": "import sys\nsys.exit(0)\n"}),
			call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return   a+b"})),
		calls(call("bash", map[string]any{"command": "rm -f calc/calc_test.go"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		approve(),
		calls(call("write", map[string]any{"file_path": "NOTES.md", "content": "Add adds.\n"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		approve(),
	)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	evs := res.events(t)
	if res.code != 0 {
		for _, e := range ofType(evs, "tool_result") {
			t.Logf("%s: %.300s", data(e)["tool"], data(e)["output"])
		}
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	for _, e := range ofType(evs, "tool_result") {
		if data(e)["tool"] == "bash" {
			if o := data(e)["output"].(string); !strings.Contains(o, "Refused [hook]") || !strings.Contains(o, "Blocked: rm is not allowed") {
				t.Fatalf("the rm: %s", o)
			}
		}
	}
	// Every event's hooks leave a hooks event: the blocker's refusal, the
	// formatter, the Stop hook's block.
	var blocked, formatted, stopped bool
	for _, e := range ofType(evs, "hooks") {
		d := data(e)
		switch {
		case d["event"] == "PreToolUse" && d["target"] == "Bash" && d["decision"] == "block":
			blocked = true
		case d["event"] == "PostToolUse" && d["target"] == "Edit":
			formatted = true
		case d["event"] == "Stop" && d["decision"] == "block":
			stopped = true
		}
	}
	if !blocked || !formatted || !stopped {
		t.Fatalf("hooks events: %v", ofType(evs, "hooks"))
	}
	id := runID(t, evs)
	if got := git(t, dir, "show", "ultra/"+id+":calc/calc_test.go"); got != calcProject["calc/calc_test.go"] {
		t.Fatal("the test file changed")
	}
	if got := git(t, dir, "show", "ultra/"+id+":calc/calc.go"); !strings.Contains(got, "return a + b") {
		t.Fatalf("the formatter did not format calc.go:\n%s", got)
	}
	reviews := ofType(evs, "review")
	if len(reviews) != 2 {
		t.Fatalf("%d reviews, want 2 (the Stop hook sends the first back)", len(reviews))
	}
	var sentBack bool
	for _, e := range ofType(evs, "phase_changed") {
		if data(e)["to"] == "iterating" && strings.Contains(data(e)["reason"].(string), "Write NOTES.md") {
			sentBack = true
		}
	}
	if !sentBack {
		t.Fatal("no move back to iterating names the Stop hook's reason")
	}
}

// A PreToolUse hook that cannot run, or does not end in time, refuses
// the call (ultra fails closed) and says so.
func TestPreToolUseHookFailsClosed(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	files[".claude/settings.json"] = `{"hooks": {"PreToolUse": [
		{"matcher": "Read", "hooks": [{"type": "command", "command": "/nonexistent/guard.sh"}]},
		{"matcher": "Glob", "hooks": [{"type": "command", "command": "sleep 30", "timeout": 1}]}]}}`
	dir := repo(t, files)
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("glob", map[string]any{"pattern": "**/*.go"})),
		step{"text": "waiting", "delay_ms": 1},
		step{"text": "waiting", "delay_ms": 1},
		step{"text": "waiting", "delay_ms": 1},
		step{"text": "waiting", "delay_ms": 1},
		step{"text": "waiting", "delay_ms": 1},
	)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	var outs []string
	for _, e := range ofType(res.events(t), "tool_result") {
		outs = append(outs, data(e)["output"].(string))
	}
	if len(outs) < 2 || !strings.Contains(outs[0], "Refused [hook]") || !strings.Contains(outs[0], "could not run") ||
		!strings.Contains(outs[1], "Refused [hook]") || !strings.Contains(outs[1], "did not end within 1s") {
		t.Fatalf("exit %d; results %q", res.code, outs)
	}
}
