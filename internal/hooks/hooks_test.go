package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

func config(t *testing.T, text string) Config {
	t.Helper()
	var c Config
	if err := c.Add("settings.json", []byte(text)); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMatchers(t *testing.T) {
	c := config(t, `{"hooks": {"PreToolUse": [
		{"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]},
		{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "b"}]},
		{"matcher": "mcp__.*__write.*", "hooks": [{"type": "command", "command": "c"}]},
		{"hooks": [{"type": "command", "command": "d"}]},
		{"matcher": "*", "hooks": [{"type": "command", "command": "e"}]}]}}`)
	for _, x := range []struct{ target, want string }{
		{"Bash", "a d e"}, {"Write", "b d e"}, {"Edit", "b d e"}, {"EditX", "d e"},
		{"mcp__fs__write_file", "c d e"}, {"mcp__fs__read_file", "d e"},
	} {
		var got []string
		for _, h := range c.For(PreToolUse, x.target) {
			got = append(got, h.Command)
		}
		if strings.Join(got, " ") != x.want {
			t.Errorf("%s: %v, want %s", x.target, got, x.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, x := range []struct{ text, err string }{
		{`{"hooks": {"Stop": [{"hooks": []}]}}`, "hooks.Stop[0]: no hooks"},
		{`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": " "}]}]}}`, "an empty command"},
		{`{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}}`, "is not a regular expression"},
		{`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}}`, `:1:81: field "hooks.hooks.timeout" is a JSON string where a number is wanted`},
	} {
		var c Config
		if err := c.Add("s.json", []byte(x.text)); err == nil || !strings.Contains(err.Error(), x.err) || !strings.HasPrefix(err.Error(), "s.json") {
			t.Errorf("%s: %v, want %q", x.text, err, x.err)
		}
	}
}

func TestFire(t *testing.T) {
	c := config(t, `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
		{"type": "command", "command": "one"}, {"type": "command", "command": "two"}]}]}}`)
	for _, x := range []struct {
		name  string
		execs map[string]Exec
		check func(t *testing.T, r Result)
	}{
		{"exit 2 blocks with stderr", map[string]Exec{"one": {Exit: 2, Stderr: "no rm here\n"}}, func(t *testing.T, r Result) {
			if !r.Block || r.Reason != "no rm here" {
				t.Fatalf("%+v", r)
			}
		}},
		{"deny wins", map[string]Exec{"one": {Stdout: `{"hookSpecificOutput": {"permissionDecision": "allow"}}`},
			"two": {Stdout: `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not on main"}}`}},
			func(t *testing.T, r Result) {
				if r.Permission != "deny" || r.Reason != "not on main" {
					t.Fatalf("%+v", r)
				}
			}},
		{"updated input and context", map[string]Exec{"one": {Stdout: `{"hookSpecificOutput": {"updatedInput": {"command": "ls -a"}, "additionalContext": "be brief"}, "systemMessage": "hi person"}`}},
			func(t *testing.T, r Result) {
				if string(r.UpdatedInput) != `{"command": "ls -a"}` || r.Context != "be brief" || len(r.Messages) != 1 {
					t.Fatalf("%+v", r)
				}
			}},
		{"another exit code of a guard fails closed", map[string]Exec{"one": {Exit: 1, Stderr: "SyntaxError"}}, func(t *testing.T, r Result) {
			if r.Block || len(r.Failed) != 1 || !strings.Contains(r.Failed[0], "failed (exit 1): SyntaxError") {
				t.Fatalf("%+v", r)
			}
		}},
		{"a hook that cannot run or times out", map[string]Exec{"one": {Err: errors.New("no such file")}, "two": {TimedOut: true, Err: errors.New("killed")}},
			func(t *testing.T, r Result) {
				if len(r.Failed) != 2 || r.Block {
					t.Fatalf("%+v", r)
				}
			}},
		{"decision block and continue false", map[string]Exec{"one": {Stdout: `{"decision": "block", "reason": "run lint", "continue": false, "stopReason": "enough"}`}},
			func(t *testing.T, r Result) {
				if !r.Block || r.Reason != "run lint" || !r.Stop || r.StopReason != "enough" {
					t.Fatalf("%+v", r)
				}
			}},
		{"garbage JSON", map[string]Exec{"one": {Stdout: `{not json`}}, func(t *testing.T, r Result) {
			if r.Block || len(r.Messages) != 1 {
				t.Fatalf("%+v", r)
			}
		}},
	} {
		t.Run(x.name, func(t *testing.T) {
			var seen []map[string]any
			var mu sync.Mutex
			run := func(_ context.Context, h Hook, in []byte) Exec {
				var m map[string]any
				_ = json.Unmarshal(in, &m)
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, m)
				return x.execs[h.Command]
			}
			r := c.Fire(context.Background(), run, PreToolUse, "Bash", map[string]any{"tool_name": "Bash"})
			if r.Ran != 2 {
				t.Fatalf("ran %d hooks", r.Ran)
			}
			x.check(t, r)
			if seen[0]["hook_event_name"] != PreToolUse || seen[0]["tool_name"] != "Bash" {
				t.Fatalf("input %v", seen[0])
			}
		})
	}
}

func TestToolNamesBothWays(t *testing.T) {
	for _, c := range []struct{ ultra, claude, back string }{
		{"bash", "Bash", "bash"},
		{"edit", "Edit", "edit"},
		{"glob", "Glob", "glob"},
		{"todo", "TodoWrite", "todo"},
		{"mcp__fs__read_file", "mcp__fs__read_file", "mcp__fs__read_file"},
		{"phase", "", ""},
	} {
		if got := ClaudeName(c.ultra); got != c.claude {
			t.Errorf("ClaudeName(%q) = %q, want %q", c.ultra, got, c.claude)
		}
		if got := UltraName(c.claude); got != c.back {
			t.Errorf("UltraName(%q) = %q, want %q", c.claude, got, c.back)
		}
	}
	for in, want := range map[string]string{"MultiEdit": "edit", "LS": "glob", "Edit(docs/**)": "edit", " Bash(go test:*) ": "bash", "WebSearch": ""} {
		if got := UltraName(in); got != want {
			t.Errorf("UltraName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A hook that only reports (PostToolUse) and fails tells the person; a
// hook that blocks is named to them.
func TestFireReports(t *testing.T) {
	c := config(t, `{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "one"}]}],
		"Stop": [{"hooks": [{"type": "command", "command": "two"}]}]}}`)
	run := func(_ context.Context, h Hook, _ []byte) Exec {
		if h.Command == "one" {
			return Exec{Exit: 1, Stderr: "oops"}
		}
		return Exec{Exit: 2, Stderr: "write NOTES.md\nfirst"}
	}
	if r := c.Fire(context.Background(), run, PostToolUse, "Bash", nil); len(r.Failed) != 0 || len(r.Messages) != 1 || !strings.Contains(r.Messages[0], "failed (exit 1): oops") {
		t.Fatalf("PostToolUse: %+v", r)
	}
	r := c.Fire(context.Background(), run, Stop, "", nil)
	if !r.Block || len(r.Messages) != 1 || !strings.Contains(r.Messages[0], `Stop hook "two" (settings.json) blocks: write NOTES.md`) {
		t.Fatalf("Stop: %+v", r)
	}
}

// What ultra cannot run is left out with a note, never fatal: Claude Code's
// settings files must keep working for Claude Code.
func TestConfigNotes(t *testing.T) {
	var c Config
	err := c.Add("s.json", []byte(`{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "x"}]}],
		"Stop": [{"hooks": [{"type": "prompt", "prompt": "is it done?"}, {"type": "command", "command": "y"}]}],
		"PreToolUse": [{"matcher": "bash|Bash", "hooks": [{"type": "command", "command": "z"}]}, {"matcher": "WebSearch", "hooks": [{"type": "command", "command": "w"}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"hooks.BeforeTool: an event ultra does not have", `hooks.Stop[0].hooks[0]: a hook of type "prompt"`, `hooks.PreToolUse[0].matcher: "bash" names no tool`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if len(c.Notes) != 3 || len(c.For(Stop, "")) != 1 || len(c.For(PreToolUse, "Bash")) != 1 {
		t.Fatalf("notes %q; Stop hooks %v", c.Notes, c.For(Stop, ""))
	}
}
