package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A small Python project: three goals add an HTTP service, a CLI and a
// web page; its one test passes throughout.
var svcProject = map[string]string{
	"README.md":   "# svc\n",
	"pytest.ini":  "[pytest]\n",
	"test_app.py": "import os\n\n\ndef test_readme():\n    assert os.path.exists('README.md')\n",
}

const svcServer = `import http.server, json, sys

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            self.send(200, b"ok")
        else:
            self.send(404, b"not found")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(n).decode()
        self.send(200, json.dumps({"echo": body}).encode(), "application/json")

    def send(self, code, body, ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass

http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

const svcShout = `import sys
for line in sys.stdin:
    line = line.rstrip("\n")
    print(line.upper() if line else "(empty)", flush=True)
`

const svcPage = `<!doctype html>
<html><body>
<h1>Counter</h1>
<button id="go" onclick="document.getElementById('out').textContent = 'Clicked ' + (++n)">Go</button>
<input id="name">
<button id="hi" onclick="document.getElementById('out').textContent = 'Hi ' + document.getElementById('name').value">Hi</button>
<p id="out">none</p>
<script>var n = 0</script>
</body></html>
`

func httpGoal(port int) map[string]any {
	start := fmt.Sprintf("python3 server.py %d", port)
	return map[string]any{"title": "Health service", "objective": "an HTTP service answers /health and echoes what is posted", "criteria": []any{
		crit("happy", "http", "GET /health answers ok", map[string]any{"start": start, "port": port, "path": "/health", "expect_status": 200, "expect_body": "^ok$"}),
		crit("edge", "http", "an unknown path is a 404", map[string]any{"start": start, "port": port, "path": "/nope", "expect_status": 404}),
		crit("adversarial", "http", "markup posted comes back as data", map[string]any{"start": start, "port": port, "method": "POST", "path": "/echo", "body": "<script>",
			"expect_status": 200, "expect_json": map[string]any{"echo": "^<script>$"}}),
	}}
}

func cliGoal() map[string]any {
	return map[string]any{"title": "Shouting CLI", "objective": "a CLI that repeats each line upper-cased", "criteria": []any{
		crit("happy", "tmux", "a typed line comes back upper-cased", map[string]any{"start": "python3 shout.py", "steps": []any{map[string]any{"keys": "hello Enter", "expect": "HELLO"}}}),
		crit("edge", "tmux", "an empty line says so", map[string]any{"start": "python3 shout.py", "steps": []any{map[string]any{"keys": "Enter", "expect": `\(empty\)`}}}),
		crit("adversarial", "command", "it works in a pipe too", map[string]any{"run": "printf 'abc\\n' | python3 shout.py", "expect_stdout": "^ABC"}),
	}}
}

func pageGoal() map[string]any {
	start := "python3 -m http.server 18090 --bind 127.0.0.1 --directory web"
	url := "http://127.0.0.1:18090/index.html"
	return map[string]any{"title": "Counter page", "objective": "a web page whose buttons answer", "criteria": []any{
		crit("happy", "browser", "Go counts a click", map[string]any{"start": start, "url": url,
			"steps": []any{map[string]any{"click": "#go"}, map[string]any{"wait_text": "Clicked 1"}}, "expect_text": "Clicked 1"}),
		crit("edge", "browser", "Hi greets the name typed", map[string]any{"start": start, "url": url,
			"steps": []any{map[string]any{"type": map[string]any{"selector": "#name", "text": "Ann"}}, map[string]any{"click": "#hi"}, map[string]any{"wait_text": "Hi Ann"}}, "expect_selector": "#out"}),
		crit("adversarial", "command", "the page has exactly its two buttons", map[string]any{"run": "grep -c '<button' web/index.html", "expect_stdout": "^2$"}),
	}}
}

const threeGoalBrief = `# Service, CLI and page

A small demo with three parts.

## Goals
- an HTTP health service
- a shouting CLI
- a counter page

## Definition of done
- each part works as its criteria show
`

// A brief of three goals, each proven through its own channel (an HTTP
// transcript, a tmux pane, a real Chromium screenshot), ends with three
// goal commits and a ledger whose chain verifies.
func TestThreeGoalBrief(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{"tmux", "chromium", "python3"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it): %v", prog, err)
		}
	}
	dir := repo(t, svcProject)
	brief := filepath.Join(t.TempDir(), "BRIEF.md")
	os.WriteFile(brief, []byte(threeGoalBrief), 0o644)
	write := func(path, body string) step {
		return calls(call("write", map[string]any{"file_path": path, "content": body}))
	}
	verifyStep := []step{calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{}))}
	steps := []step{calls(call("read", map[string]any{"file_path": "README.md"})),
		calls(call("goals", map[string]any{"goals": []any{httpGoal(18081), cliGoal(), pageGoal()}})),
		write("server.py", svcServer)}
	steps = append(steps, verifyStep...)
	steps = append(steps, write("shout.py", svcShout))
	steps = append(steps, verifyStep...)
	steps = append(steps, write("web/index.html", svcPage))
	steps = append(steps, verifyStep...)
	steps = append(steps, approve())
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "--brief-file", brief)...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id, wt := runID(t, evs), workdirOf(t, evs)
	for _, e := range judged(evs) {
		if data(e)["status"] != "pass" {
			t.Fatalf("criterion %v", data(e))
		}
	}
	// 9 criteria for the goals, then the final gate runs those of the
	// first two goals again on the final tree.
	if n := len(judged(evs)); n != 15 {
		t.Fatalf("%d criterion runs, want 15", n)
	}
	log := strings.Split(strings.TrimSpace(git(t, dir, "log", "--format=%s", "main..ultra/"+id)), "\n")
	want := []string{"ultra: final review approved", "ultra: G003-counter-page Counter page", "ultra: G002-shouting-cli Shouting CLI", "ultra: G001-health-service Health service"}
	if !slices.Equal(log, want) {
		t.Fatalf("commits %q, want %q", log, want)
	}
	for _, g := range []string{"G001-health-service", "G002-shouting-cli", "G003-counter-page"} {
		if !strings.Contains(git(t, dir, "log", "--format=%B", "main..ultra/"+id), "Ultra-Goal: "+g) {
			t.Fatalf("no commit names goal %s", g)
		}
	}
	if files := git(t, dir, "show", "--name-only", "--format=", "ultra/"+id+"~3"); !strings.Contains(files, ".ultra/runs/"+id+"/brief.md") || !strings.Contains(files, "server.py") {
		t.Fatalf("the first goal's commit holds:\n%s", files)
	}
	// The evidence files: one per channel, where the ledger says, with
	// the digests it records.
	var f struct {
		Goals []struct {
			ID              string
			Status          string
			SuccessCriteria []struct {
				ID               string
				Status           string
				CapturedEvidence struct {
					Files []struct{ Name, Path, SHA256 string }
				} `json:"capturedEvidence"`
			} `json:"successCriteria"`
		}
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(recordsIn(t, wt), "goals.json"))), &f); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, g := range f.Goals {
		if g.Status != "complete" {
			t.Fatalf("goal %s is %s", g.ID, g.Status)
		}
		for _, c := range g.SuccessCriteria {
			if c.Status != "pass" {
				t.Fatalf("criterion %s is %s", c.ID, c.Status)
			}
			for _, ef := range c.CapturedEvidence.Files {
				b, err := os.ReadFile(filepath.Join(dir, ef.Path))
				if err != nil || sha(b) != ef.SHA256 {
					t.Fatalf("evidence %s: %v (sha256 %s, recorded %s)", ef.Path, err, sha(b), ef.SHA256)
				}
				seen[ef.Name] += string(b)
			}
		}
	}
	if !strings.Contains(seen["http.txt"], "200") || !strings.Contains(seen["http.txt"], "ok") {
		t.Fatalf("http transcript:\n%s", seen["http.txt"])
	}
	if !strings.Contains(seen["tmux.txt"], "HELLO") {
		t.Fatalf("tmux capture:\n%s", seen["tmux.txt"])
	}
	if !strings.HasPrefix(seen["browser.png"], "\x89PNG\r\n\x1a\n") || strings.Count(seen["browser.png"], "\x89PNG") != 2 {
		t.Fatal("no screenshot PNG among the evidence")
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 || !strings.Contains(v.stdout, "intact") {
		t.Fatalf("ledger --verify: %d %s %s", v.code, v.stdout, v.stderr)
	}
	// Evidence changed after ultra captured it, or another brief, is found.
	var png string
	filepath.WalkDir(filepath.Join(dir, ".ultra", "state", "evidence", id), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "browser.png" {
			png = p
		}
		return nil
	})
	if png == "" {
		t.Fatal("no browser.png among the evidence")
	}
	orig := readFile(t, png)
	must(t, os.WriteFile(png, append([]byte(orig), 0), 0o644))
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 1 || !strings.Contains(v.stderr, "changed after ultra captured it") {
		t.Fatalf("ledger --verify of changed evidence: %d %s %s", v.code, v.stdout, v.stderr)
	}
	must(t, os.WriteFile(png, []byte(orig), 0o644))
	// Nor may the evidence or the records be reached through a link.
	must(t, os.Rename(png, png+".moved"))
	must(t, os.Symlink(png+".moved", png))
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 1 || !strings.Contains(v.stderr, "through a link") {
		t.Fatalf("ledger --verify of linked evidence: %d %s %s", v.code, v.stdout, v.stderr)
	}
	must(t, os.Remove(png))
	must(t, os.Rename(png+".moved", png))
	ultraDir := filepath.Join(wt, ".ultra")
	must(t, os.Rename(ultraDir, ultraDir+".moved"))
	must(t, os.Symlink(ultraDir+".moved", ultraDir))
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 1 || !strings.Contains(v.stderr, "not a directory") {
		t.Fatalf("ledger --verify of a linked .ultra: %d %s %s", v.code, v.stdout, v.stderr)
	}
	must(t, os.Remove(ultraDir))
	must(t, os.Rename(ultraDir+".moved", ultraDir))
	briefPath := filepath.Join(recordsIn(t, wt), "brief.md")
	origBrief := readFile(t, briefPath)
	os.WriteFile(briefPath, []byte(origBrief+"- and a pony\n"), 0o644)
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 1 || !strings.Contains(v.stderr, "not the brief the plan was made from") {
		t.Fatalf("ledger --verify of another brief: %d %s %s", v.code, v.stdout, v.stderr)
	}
	os.WriteFile(briefPath, []byte(origBrief), 0o644)
	if s := ultra(t, dir, "status", id); strings.Count(s.stdout, "criteria 3/3 passed") != 3 {
		t.Fatalf("ultra status:\n%s%s", s.stdout, s.stderr)
	}
	if g := ultra(t, dir, "goals", id); g.code != 0 || strings.Count(g.stdout, "(complete,") != 3 {
		t.Fatalf("ultra goals:\n%s%s", g.stdout, g.stderr)
	}
	if c := ultra(t, dir, "goals", "criteria", "G003", "--run", id); c.code != 0 || !strings.Contains(c.stdout, "browser.png") || !strings.Contains(c.stdout, "receipt:") {
		t.Fatalf("ultra goals criteria:\n%s%s", c.stdout, c.stderr)
	}
}

// A criterion whose check fails keeps its goal open although the tests
// pass; what the model says, or writes to ultra's records, counts for
// nothing.
func TestCriterionNotClaimed(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	goals := goalsOf("Add adds, documented",
		crit("happy", "command", "Add's doc says it sums", map[string]any{"run": "grep -c 'returns the sum' calc/calc.go", "expect_stdout": "^1"}),
		crit("edge", "command", "Add adds, as its test shows", map[string]any{"run": "go test -count=1 -run '^TestAdd$' ./calc", "expect_exit": 0}),
		crit("regression", "command", "both tests are still there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2"}))
	fake := `{"version":1,"goals":[{"id":"G001-add-adds-documented","status":"complete"}]}`
	m := newModel(t, calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("goals", goals)),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		text("G001-C1 passed: I checked it myself. All criteria pass."),
		calls(call("write", map[string]any{"file_path": ".ultra/goals.json", "content": fake})),
		calls(call("bash", map[string]any{"command": "python3 -c \"import glob; [open(p,'w').write('{}') for p in glob.glob('.ultra/runs/*/goals.json')]\"; for f in .ultra/runs/*/ledger.jsonl; do echo x >> $f; done; mkdir -p ../../evidence; echo fake > $HOME/pass.txt; echo ATTEMPTED"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "// Add returns a plus b.", "new_string": "// Add returns the sum of a and b."})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		approve())
	res := ultra(t, dir, runArgs(m, "fix calc and document it")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	checkPhases(t, evs, "building", "verifying", "iterating", "verifying", "cleaning", "verifying", "reviewing", "complete")
	vr := ofType(evs, "verify_result")
	if data(vr[0])["status"] != "PASS" {
		t.Fatalf("the tests passed the first time: %v", data(vr[0]))
	}
	first := judged(evs)[0]
	if data(first)["criterion"] != "G001-C1" || data(first)["status"] != "fail" {
		t.Fatalf("first criterion %v", data(first))
	}
	// The claim earned a reminder; the writes were refused or failed.
	reminded := false
	for _, r := range m.srv.Requests() {
		reminded = reminded || strings.Contains(string(r.Body), "Your answer called no tool")
	}
	if !reminded {
		t.Fatal("the claim was not answered with a reminder")
	}
	var layers []string
	for _, e := range ofType(evs, "refusal") {
		layers = append(layers, data(e)["layer"].(string))
	}
	if !slices.Contains(layers, "state-files") {
		t.Fatalf("refusals %v: writing goals.json was not refused", layers)
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", runID(t, evs)); v.code != 0 {
		t.Fatalf("the model's attempts changed ultra's records: %s %s", v.stdout, v.stderr)
	}
	if strings.Contains(readFile(t, filepath.Join(recordsIn(t, workdirOf(t, evs)), "goals.json")), `"version":1,"goals":[{"id"`) {
		t.Fatal("the model's goals.json is on disk")
	}
}

// A server a check started that ignores SIGTERM is killed, the receipt
// says so, and the result is BLOCKED, not PASS; the next attempt, with a
// server that stops, passes.
func TestServerThatRefusesToDie(t *testing.T) {
	t.Parallel()
	dir := repo(t, svcProject)
	stubborn := strings.Replace(svcServer, "import http.server, json, sys", "import http.server, json, sys, signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)", 1)
	// Its own port: tests run in parallel, and uncontained checks share
	// the host's network.
	g := httpGoal(18082)
	m := newModel(t,
		calls(call("goals", map[string]any{"goals": []any{g}})),
		calls(call("write", map[string]any{"file_path": "server.py", "content": stubborn})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		calls(call("write", map[string]any{"file_path": "server.py", "content": svcServer})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		approve())
	res := ultra(t, dir, runArgs(m, "a health service")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	cr := judged(res.events(t))
	if len(cr) < 6 {
		t.Fatalf("criterion events %v", cr)
	}
	for _, e := range cr[:3] {
		d := data(e)
		if d["status"] != "blocked" || !strings.Contains(d["receipt"].(string), "SIGKILL") {
			t.Fatalf("a server that ignored SIGTERM: %v", d)
		}
	}
	for _, e := range cr[3:6] {
		if data(e)["status"] != "pass" {
			t.Fatalf("the second attempt: %v", data(e))
		}
	}
	if out, _ := exec.Command("pgrep", "-f", "server.py 18082").Output(); len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("a server is still running: %s", out)
	}
}

// Three identical failures of one criterion fail its goal with a
// diagnosis; the run escalates.
func TestIdenticalFailuresFailTheGoal(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	goals := goalsOf("Add adds, documented",
		crit("happy", "command", "Add's doc says it sums", map[string]any{"run": "grep -c 'returns the sum' calc/calc.go", "expect_stdout": "^1"}),
		crit("edge", "command", "Add adds, as its test shows", map[string]any{"run": "go test -count=1 -run '^TestAdd$' ./calc", "expect_exit": 0}),
		crit("regression", "command", "both tests are still there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2"}))
	steps := []step{calls(call("read", map[string]any{"file_path": "calc/calc.go"})), calls(call("goals", goals)),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"}))}
	for range 4 {
		steps = append(steps, calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))
	}
	res := ultra(t, dir, runArgs(newModel(t, steps...), "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	if n := len(ofType(evs, "verify_result")); n != 3 {
		t.Fatalf("%d verifications, want 3", n)
	}
	fin := data(ofType(evs, "run_finished")[0])
	reason := fin["reason"].(string)
	if !strings.Contains(reason, "goal G001-add-adds-documented failed") || !strings.Contains(reason, "G001-C1") || !strings.Contains(reason, "3") {
		t.Fatalf("reason %q", reason)
	}
	goalsOut := ultra(t, dir, "goals", runID(t, evs), "--json")
	if !strings.Contains(goalsOut.stdout, `"status": "failed"`) {
		t.Fatalf("goals:\n%s", goalsOut.stdout)
	}
	if l := ultra(t, dir, "goals", "ledger", "--run", runID(t, evs)); !strings.Contains(l.stdout, "goal_failed") {
		t.Fatalf("ledger:\n%s", l.stdout)
	}
	// A person's resume reopens the goal with its caps counted afresh.
	m := newModel(t,
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "// Add returns a plus b.", "new_string": "// Add returns the sum of a and b."})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		approve())
	r := ultra(t, dir, "resume", runID(t, evs), "--output", "jsonl", "--base-url", m.url, "the doc must say sum")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if l := ultra(t, dir, "goals", "ledger", "--run", runID(t, evs)); !strings.Contains(l.stdout, "reopened by a person's resume") || !strings.Contains(l.stdout, "goal_completed") {
		t.Fatalf("ledger:\n%s", l.stdout)
	}
}

// Five build/verify cycles without completing fail the goal.
func TestFiveCyclesFailTheGoal(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := []step{calls(call("goals", calcGoals()))}
	for range 6 {
		steps = append(steps, calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))
	}
	res := ultra(t, dir, runArgs(newModel(t, steps...), "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	if n := len(ofType(evs, "verify_result")); n != 5 {
		t.Fatalf("%d verifications, want 5", n)
	}
	if r := data(ofType(evs, "run_finished")[0])["reason"].(string); !strings.Contains(r, "goal G001-add-adds failed") || !strings.Contains(r, "5") {
		t.Fatalf("reason %q", r)
	}
}

// A later goal that breaks an earlier goal's criterion is caught by the
// final gate, although every test passes.
func TestFinalGateCatchesABrokenEarlierGoal(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	g1 := goalsOf("Add adds")["goals"].([]any)[0].(map[string]any)
	g1["criteria"] = append(calcGoals()["goals"].([]any)[0].(map[string]any)["criteria"].([]map[string]any),
		crit("edge", "command", "Add's code reads a + b", map[string]any{"run": "grep -c 'return a + b' calc/calc.go", "expect_stdout": "^1"}))
	g2 := map[string]any{"title": "Add is documented", "objective": "Add's comment says what it does", "refactor": true, "criteria": []any{
		crit("happy", "command", "the doc says sum", map[string]any{"run": "grep -c 'the sum' calc/calc.go", "expect_stdout": "^1"}),
		crit("edge", "command", "the old doc is gone", map[string]any{"run": "grep -q 'a plus b' calc/calc.go", "expect_exit": 1}),
		crit("regression", "command", "the package still says calc", map[string]any{"run": "grep -c '^package calc' calc/calc.go", "expect_stdout": "^1"}),
	}}
	m := newModel(t, calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("goals", map[string]any{"goals": []any{g1, g2}})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		// The second goal's change also rewrites Add: the tests still pass.
		calls(call("write", map[string]any{"file_path": "calc/calc.go", "content": "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn b + a\n}\n"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return b + a", "new_string": "return a + b"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		approve())
	res := ultra(t, dir, runArgs(m, "fix and document Add")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	checkPhases(t, evs, "building", "verifying", "building", "verifying", "iterating", "verifying", "cleaning", "verifying", "reviewing", "complete")
	for _, v := range ofType(evs, "verify_result") {
		if data(v)["status"] != "PASS" {
			t.Fatalf("the tests passed every time: %v", data(v))
		}
	}
	caught := false
	for _, e := range judged(evs) {
		if d := data(e); d["goal"] == "G001-add-adds" && d["status"] == "fail" {
			caught = true
		}
	}
	if !caught {
		t.Fatal("the final gate did not run the first goal's criteria and fail one")
	}
	if l := ultra(t, dir, "goals", "ledger", "--run", runID(t, evs)); strings.Count(l.stdout, "final_gate") != 2 {
		t.Fatalf("ledger:\n%s", l.stdout)
	}
}

// A check that cannot fail is refused at planning, with the reason.
func TestTrivialCheckRefused(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	trivial := goalsOf("Add adds",
		crit("happy", "command", "it works", map[string]any{"run": "echo ok", "expect_stdout": "ok"}),
		crit("edge", "command", "always fine", map[string]any{"run": "go test ./... || true", "expect_exit": 0}),
		crit("regression", "command", "anything", map[string]any{"run": "ls", "expect_stdout": ".*"}))
	steps := append([]step{fixSteps()[0], calls(call("goals", trivial))}, fixSteps()[1:]...)
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var out string
	for _, e := range ofType(res.events(t), "tool_result") {
		if data(e)["tool"] == "goals" {
			out = data(e)["output"].(string)
			break
		}
	}
	for _, want := range []string{"refused", "criteria[0]", "criteria[1]", "criteria[2]", "cannot fail"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the refusal lacks %q:\n%s", want, out)
		}
	}
}

// Steering: a person's change needs evidence and a rationale; a refused
// one is in the ledger too. A model that asks to weaken an essential
// criterion escalates the run.
func TestSteering(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("goals", calcGoals())),
		calls(call("steer", map[string]any{"kind": "revise_criterion", "goal": "G001-add-adds", "criterion": "G001-C1", "essential": false,
			"evidence": "it is hard", "rationale": "skip it"})))
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	if r := data(ofType(evs, "run_finished")[0])["reason"].(string); !strings.Contains(r, "essential") || !strings.Contains(r, "person") {
		t.Fatalf("reason %q", r)
	}
	c := ultra(t, dir, "goals", "criteria", "G001", "--run", id, "--json")
	if !strings.Contains(c.stdout, `"essential": true`) {
		t.Fatalf("the criterion was weakened:\n%s", c.stdout)
	}
	// A person: no evidence, refused (a usage error: nothing recorded);
	// with it, accepted. The model's attempt was recorded, refused.
	s := ultra(t, dir, "goals", "steer", id, "--kind", "annotate_ledger", "--note", "looked at it", "--rationale", "r")
	if s.code != 2 || !strings.Contains(s.stderr, "--evidence is required") {
		t.Fatalf("steer without evidence: %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	s = ultra(t, dir, "goals", "steer", id, "--kind", "revise_criterion", "--goal", "G001", "--criterion", "G001-C1", "--essential=false",
		"--evidence", "the doc check duplicates C3", "--rationale", "keep the run focused")
	if s.code != 0 {
		t.Fatalf("a person's steer: %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	l := ultra(t, dir, "goals", "ledger", "--run", id)
	for _, want := range []string{"steering_rejected", "steering_accepted"} {
		if strings.Count(l.stdout, want) < 1 {
			t.Fatalf("ledger lacks %s:\n%s", want, l.stdout)
		}
	}
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 {
		t.Fatalf("verify after steering: %s%s", v.stdout, v.stderr)
	}
}

// A hand-edited ledger line or goals.json is detected by --verify and
// stops a resume until a person repairs it.
func TestHandEditedRecordsDetected(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, calls(call("goals", calcGoals())))
	res := ultra(t, dir, runArgs(m, "--control", "assisted", "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3 (waiting for approval)\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	id, wt := runID(t, evs), workdirOf(t, evs)
	ledgerPath := filepath.Join(recordsIn(t, wt), "ledger.jsonl")
	orig := readFile(t, ledgerPath)
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 0 {
		t.Fatalf("verify of the untouched ledger: %s%s", v.stdout, v.stderr)
	}
	os.WriteFile(ledgerPath, []byte(strings.Replace(orig, "1 goals, 3 criteria", "1 goals, 2 criteria", 1)), 0o644)
	v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id)
	if v.code != 1 || !strings.Contains(v.stderr, "line") {
		t.Fatalf("verify of an edited ledger: %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	if r := ultra(t, dir, "approve", id); r.code == 0 || !strings.Contains(r.stderr, "goal records") {
		t.Fatalf("approve with an edited ledger: %d\n%s", r.code, r.stderr)
	}
	os.WriteFile(ledgerPath, []byte(orig), 0o644)
	// A line a crash cut short is reported, and only a person's repair cuts
	// it off (keeping its bytes).
	os.WriteFile(ledgerPath, []byte(orig+`{"seq":99,"ki`), 0o644)
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 1 || !strings.Contains(v.stderr, "torn") {
		t.Fatalf("verify of a torn ledger: %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	if r := ultra(t, dir, "goals", "ledger", "--repair-torn", "--run", id); r.code != 0 || readFile(t, ledgerPath) != orig {
		t.Fatalf("repair-torn: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A well-chained line appended after the head ultra recorded, with the
	// digest of a goals.json rewritten to match: the chain holds, the
	// signature does not.
	goalsPath := filepath.Join(recordsIn(t, wt), "goals.json")
	forged := strings.Replace(readFile(t, goalsPath), `"essential": true`, `"essential": false`, 1)
	lines := strings.Split(strings.TrimSuffix(orig, "\n"), "\n")
	var last map[string]any
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	entry, _ := json.Marshal(map[string]any{"seq": last["seq"].(float64) + 1, "time": time.Now().UTC(), "kind": "steering_accepted", "run": id,
		"text": "by person", "data": map[string]any{"goals": sha([]byte(forged))}, "prev": sha([]byte(lines[len(lines)-1]))})
	os.WriteFile(ledgerPath, []byte(orig+string(entry)+"\n"), 0o644)
	os.WriteFile(goalsPath, []byte(forged), 0o644)
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 1 || !strings.Contains(v.stderr, "signature") {
		t.Fatalf("verify of a forged, well-chained entry: %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	os.WriteFile(ledgerPath, []byte(orig), 0o644)
	os.WriteFile(goalsPath, []byte(strings.Replace(readFile(t, goalsPath), `"essential": true`, `"essential": false`, 1)), 0o644)
	if v := ultra(t, dir, "goals", "ledger", "--verify", "--run", id); v.code != 1 || !strings.Contains(v.stderr, "changed outside ultra") {
		t.Fatalf("verify of an edited goals.json: %d\n%s%s", v.code, v.stdout, v.stderr)
	}
}
