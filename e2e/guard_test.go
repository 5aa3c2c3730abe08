package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Arguments spelled the way the bash tool also accepts them (an alias, a
// double-encoded object) are judged like plain ones.
func TestPlanningGuardCannotBeSidestepped(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	os.MkdirAll(filepath.Join(dir, "tools"), 0o755)
	os.WriteFile(filepath.Join(dir, "tools", "cat"), []byte("#!/bin/sh\ntouch PWNED\n"), 0o755)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "tools")
	m := newModel(t,
		calls(call("bash", map[string]any{"cmd": "echo one > PWNED1.txt"})),
		step{"tool_calls": []any{map[string]any{"name": "bash", "raw_arguments": `"{\"command\":\"echo two > PWNED2.txt\"}"`}}},
		calls(call("bash", map[string]any{"cmd": "echo three > .ultra/config"})),
		calls(call("bash", map[string]any{"command": "read PATH <<< tools; cat go.mod"})),
		calls(call("bash", map[string]any{"command": "printenv OPENAI_API_KEY; echo key=${OPENAI_API_KEY:-unset}"})),
		text("stop"), text("stop"), text("stop"), text("stop"), text("stop"),
	)
	cmd := runArgs(m, "fix calc")
	res := ultraWithEnv(t, dir, []string{"OPENAI_API_KEY=sk-very-secret-123"}, cmd...)
	if res.code != 3 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	wt := workdirOf(t, res.events(t))
	for _, f := range []string{"PWNED", "PWNED1.txt", "PWNED2.txt", ".ultra/config"} {
		for _, d := range []string{dir, wt} {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				t.Errorf("planning created %s in %s", f, d)
			}
		}
	}
	var layers []string
	for _, e := range ofType(res.events(t), "refusal") {
		layers = append(layers, data(e)["layer"].(string))
	}
	if strings.Join(layers, ",") != "planning-read-only,planning-read-only,planning-read-only,planning-read-only" {
		t.Fatalf("refusals %v", layers)
	}
	// The key never reaches the model, the output or the store.
	if strings.Contains(res.stdout, "sk-very-secret") {
		t.Fatal("the API key reached the event stream")
	}
	for _, r := range m.srv.Requests() {
		if strings.Contains(string(r.Body), "sk-very-secret") {
			t.Fatal("the API key reached the model")
		}
	}
	if !strings.Contains(string(m.srv.Requests()[5].Body), "key=unset") {
		t.Fatal("printenv should run and see no key")
	}
	db, _ := os.ReadFile(filepath.Join(dir, ".ultra", "state", "ultra.db"))
	wal, _ := os.ReadFile(filepath.Join(dir, ".ultra", "state", "ultra.db-wal"))
	if strings.Contains(string(db)+string(wal), "sk-very-secret") {
		t.Fatal("the API key reached the store")
	}
}

// A tool the request did not offer is refused even when the phase changed
// to one that allows it within the same answer.
func TestOnlyOfferedToolsRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(planGoalsCall("p"),
			call("write", map[string]any{"file_path": "new.txt", "content": "x"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "a - b", "new_string": "a + b"}),
			call("phase", map[string]any{"to": "verifying"}), call("verify", map[string]any{})),
		calls(call("verify", map[string]any{})),
		approve(),
	)
	res := ultra(t, dir, runArgs(m, "--control", "Autonomous", "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(workdirOf(t, res.events(t)), "new.txt")); err == nil {
		t.Fatal("write ran although planning's request did not offer it")
	}
	var refused []string
	for _, e := range ofType(res.events(t), "refusal") {
		refused = append(refused, data(e)["tool"].(string))
	}
	if strings.Join(refused, ",") != "write,verify" {
		t.Fatalf("refused %v", refused)
	}
}

// A command that writes ultra's files in a way the parser cannot see
// meets a read-only .ultra/ in the sandbox; without a sandbox it is caught
// after it runs, and the run stops for a person.
func TestStateFilesTamperingEscalates(t *testing.T) {
	t.Parallel()
	files := map[string]string{".ultra/config": "[run]\nmax_turns = 50\n"}
	for k, v := range calcProject {
		files[k] = v
	}
	tamper := calls(call("bash", map[string]any{"command": "d=.ul; echo '[run]' > ${d}tra/config"}))
	t.Run("contained", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		m := newModel(t, append(append(fixSteps()[:3:3], tamper), fixSteps()[3:]...)...)
		res := ultra(t, dir, runArgs(m, "fix calc")...)
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		id := runID(t, res.events(t))
		if got := git(t, dir, "show", "ultra/"+id+":.ultra/config"); got != files[".ultra/config"] {
			t.Fatalf("the run committed a changed .ultra/config: %q", got)
		}
		if got := readFile(t, filepath.Join(workdirOf(t, res.events(t)), ".ultra", "config")); got != files[".ultra/config"] {
			t.Fatalf("the worktree's .ultra/config changed: %q", got)
		}
	})
	t.Run("uncontained", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, files)
		m := newModel(t,
			planGoals("p"),
			tamper,
			text("x"),
		)
		res := ultraWithEnv(t, dir, uncontained, runArgs(m, "--permission-profile", "trusted", "fix calc")...)
		if res.code != 3 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		fin := data(ofType(res.events(t), "run_finished")[0])
		if !strings.Contains(fin["reason"].(string), "changed ultra's own files") {
			t.Fatalf("finish %v", fin)
		}
	})
}

// uncontained is the environment of an ultra that finds no sandbox: the
// text guards and the after-the-fact checks are all that stand.
var uncontained = []string{"ULTRA_BWRAP=/nonexistent/bwrap"}

func ultraWithEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return ultraRun(t, dir, append(ultraEnv(t), env...), args...)
}

// A repository's own config cannot send the user's key to its server.
func TestProjectConfigCannotTakeTheKey(t *testing.T) {
	t.Parallel()
	m := newModel(t, fixSteps()...)
	files := map[string]string{".ultra/config": "[model]\nbase_url = \"" + m.url + "\"\nname = \"scripted\"\n"}
	for k, v := range calcProject {
		files[k] = v
	}
	dir := repo(t, files)
	key := []string{"OPENAI_API_KEY=sk-user-key"}
	res := ultraWithEnv(t, dir, key, "run", "--output", "jsonl", "fix calc")
	if res.code != 2 || !strings.Contains(res.stderr, "does not send OPENAI_API_KEY") || len(m.srv.Requests()) != 0 {
		t.Fatalf("exit %d, %d requests\n%s", res.code, len(m.srv.Requests()), res.stderr)
	}
	// Without a key there is nothing to take: the project's server is used.
	if res := ultra(t, dir, "run", "--output", "jsonl", "fix calc"); res.code != 0 {
		t.Fatalf("without a key: exit %d\n%s", res.code, res.stderr)
	}
}
