package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Go module without any test: the gate can verify nothing here.
var untestedProject = map[string]string{
	"go.mod":       "module example.com/untested\n\ngo 1.21\n",
	"calc/calc.go": "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
}

// The health check before a run: a checkout whose suite cannot run is
// found by doctor; under the default policy (ask) a run without a
// terminal does not start; ultra doctor heal repairs it in a repair run
// verified by the gate and doctor.
func TestHealthCheckAndHeal(t *testing.T) {
	t.Parallel()
	dir := repo(t, untestedProject)
	// A first run measures the checkout's suite: there is none.
	m := newModel(t, step{"text": "looking", "delay_ms": 6000})
	first := ultra(t, dir, runArgs(m, "--max-turns", "1", "look around")...)
	if first.code != 4 {
		t.Fatalf("first run: exit %d\n%s", first.code, first.stderr)
	}
	// The baseline is measured in the background: wait for doctor to see it.
	var doc result
	for i := 0; i < 100; i++ {
		doc = ultra(t, dir, "doctor", "--json")
		if strings.Contains(doc.stdout, `"base-gate-broken"`) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if doc.code != 1 || !strings.Contains(doc.stdout, `"base-gate-broken"`) || !strings.Contains(doc.stdout, "ultra doctor heal") {
		t.Fatalf("doctor: exit %d\n%s", doc.code, doc.stdout)
	}
	branches := git(t, dir, "branch", "--list", "ultra/*")
	// ask, without a terminal: the run does not start.
	m2 := newModel(t, text("never asked"))
	res := ultra(t, dir, runArgs(m2, "add Sub")...)
	if res.code != 3 || !strings.Contains(res.stderr, "base-gate-broken") || !strings.Contains(res.stderr, "ultra doctor heal") {
		t.Fatalf("run under ask: exit %d\n%s", res.code, res.stderr)
	}
	if len(m2.srv.Requests()) != 0 || git(t, dir, "branch", "--list", "ultra/*") != branches {
		t.Fatal("a run refused by the health check reached the model or made a branch")
	}
	// log-only: the run starts, and says what it found. (The policy is
	// the user's: a project file would change the checkout's tree.)
	confDir := configHome(t)
	env := append(ultraEnv(t), "XDG_CONFIG_HOME="+confDir)
	writeConfig := func(policy string) {
		os.MkdirAll(filepath.Join(confDir, "ultra"), 0o755)
		os.WriteFile(filepath.Join(confDir, "ultra", "config.toml"), []byte("[repair]\non_unhealthy = \""+policy+"\"\n"), 0o644)
	}
	writeConfig("log-only")
	m3 := newModel(t, text("thinking"))
	if r := ultraRun(t, dir, env, runArgs(m3, "--max-turns", "1", "add Sub")...); r.code != 4 || !strings.Contains(r.stderr, "log-only") {
		t.Fatalf("run under log-only: exit %d\n%s", r.code, r.stderr)
	}
	// auto: the run starts in repair mode, the switch recorded as ultra's.
	writeConfig("auto")
	m4 := newModel(t, text("thinking"))
	auto := ultraRun(t, dir, env, runArgs(m4, "--max-turns", "1", "add Sub")...)
	if auto.code != 4 {
		t.Fatalf("run under auto: exit %d\n%s", auto.code, auto.stderr)
	}
	id := runID(t, auto.events(t))
	if ax := data(auto.events(t)[0])["axes"].(map[string]any); ax["mode"] != "repair" {
		t.Fatalf("the run did not start in repair mode: %v", ax)
	}
	var s struct {
		Transitions []struct{ Kind, Axis, From, To, By, Reason string }
	}
	json.Unmarshal([]byte(ultra(t, dir, "status", id, "--json").stdout), &s)
	found := false
	for _, tr := range s.Transitions {
		if tr.Kind == "axis" && tr.Axis == "mode" && tr.From == "build" && tr.To == "repair" && tr.By == "system" && strings.Contains(tr.Reason, "base-gate-broken") {
			found = true
		}
	}
	if !found {
		t.Fatalf("the switch to repair was not recorded: %+v", s.Transitions)
	}
	if body := string(m4.srv.Requests()[0].Body); !strings.Contains(body, "health check") || !strings.Contains(body, "add Sub") {
		t.Fatalf("the repair run was not told why:\n%.2000s", body)
	}

	// heal: a repair run adds the missing suite; the gate and doctor
	// verify it.
	heal := newModel(t,
		calls(call("goals", goalsOf("give the module a test suite",
			crit("happy", "command", "the module has tests that pass", map[string]any{"run": "go test -count=1 ./calc", "expect_stdout": "^ok"}),
			crit("edge", "command", "the test checks a sum", map[string]any{"run": "grep -c 'Add(2, 3) != 5' calc/calc_test.go", "expect_stdout": "^1$"}),
			crit("regression", "command", "Add is still there", map[string]any{"run": "grep -c 'func Add' calc/calc.go", "expect_stdout": "^1$"})))),
		calls(call("write", map[string]any{"file_path": "calc/calc_test.go", "content": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		approve(),
	)
	h := ultra(t, dir, "doctor", "heal", "--output", "jsonl", "--provider", "openai", "--base-url", heal.url, "--model", "scripted")
	if h.code != 0 {
		t.Fatalf("heal: exit %d\n%s\n%s", h.code, h.stdout, h.stderr)
	}
	var healID string
	for _, line := range strings.Split(h.stdout, "\n") {
		if strings.Contains(line, `"run_started"`) {
			var e map[string]any
			json.Unmarshal([]byte(line), &e)
			healID = e["run"].(string)
			if data(e)["axes"].(map[string]any)["mode"] != "repair" {
				t.Fatalf("heal did not run in repair mode: %v", data(e)["axes"])
			}
		}
	}
	if healID == "" || !strings.Contains(h.stdout, "starting a repair run for") {
		t.Fatalf("heal started no run:\n%s", h.stdout)
	}
	if st := ultra(t, dir, "status", healID, "--json"); !strings.Contains(st.stdout, `"status": "complete"`) {
		t.Fatalf("heal's run:\n%s", st.stdout)
	}
}
