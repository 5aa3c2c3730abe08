package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func gateFile(t *testing.T, dir, id string, n int) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".ultra", "state", "runs", id, "gate-"+itoa(n)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestRunWritesGateFilesAndBaseline(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	d := gateFile(t, dir, id, 1)
	if d["gate_status"] != "PASS" || d["schema_version"].(float64) != 1 || d["run"] != id || len(d["tree"].(string)) != 40 {
		t.Fatalf("gate-1.json %v", d)
	}
	if c := d["counts"].(map[string]any); c["passed"].(float64) != 2 || c["executed"].(float64) != 2 {
		t.Fatalf("counts %v", c)
	}
	// The decision is tied to the tree the run left (and committed), which
	// differs from the one the tests ran on only by ultra's own records:
	// decisions made for that tree say so and point back at decision 1.
	wt := workdirOf(t, res.events(t))
	tree := strings.TrimSpace(treeHash(t, wt))
	last := gateFile(t, dir, id, 3)
	if last["tree"] != tree || strings.TrimSpace(git(t, dir, "rev-parse", "ultra/"+id+"^{tree}")) != tree || last["gate_status"] != "PASS" {
		t.Fatalf("last decision %v, working tree %s", last, tree)
	}
	if out := git(t, wt, "diff-tree", "-r", "--name-only", d["tree"].(string), tree); strings.TrimSpace(out) != ".ultra/runs/"+id+"/goals.json\n.ultra/runs/"+id+"/ledger.jsonl" {
		t.Fatalf("the committed tree differs from the tested one beyond ultra's records:\n%s", out)
	}
	if !strings.Contains(fmt.Sprint(gateFile(t, dir, id, 2)["reasons"]), "the code decision 1 judged (it passed)") {
		t.Fatalf("decision 2 %v", gateFile(t, dir, id, 2))
	}
	fi, _ := os.Stat(filepath.Join(dir, ".ultra", "state", "runs", id, "gate-1.json"))
	if fi.Mode().Perm()&0o222 != 0 {
		t.Fatal("gate file is writable")
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".ultra", "state", "runs", id, "baseline.json"))
	var base map[string]any
	json.Unmarshal(b, &base)
	if base["evaluated"] != true || base["failed"].(float64) != 1 || base["executed"].(float64) != 2 {
		t.Fatalf("baseline %s", b)
	}
	show := ultra(t, dir, "gate", "show", id)
	if show.code != 0 || !strings.Contains(show.stdout, "gate-1") || !strings.Contains(show.stdout, "PASS") || !strings.Contains(show.stdout, "baseline") {
		t.Fatalf("gate show:\n%s%s", show.stdout, show.stderr)
	}
}

// treeHash computes the working tree's hash the way ultra does.
func treeHash(t *testing.T, dir string) string {
	idx := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
	run := func(args ...string) string {
		c := execCmd(dir, env, "git", args...)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	run("add", "-A", "--", ".")
	return run("write-tree")
}

func TestDeletedFailingTestFailsTheGate(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc_test.go"})),
		planGoals("make the suite green the easy way"),
		calls(call("edit", map[string]any{"file_path": "calc/calc_test.go",
			"old_string": "func TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n", "new_string": ""})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
	)
	id := failedGate(t, dir, ultra(t, dir, runArgs(m, "--max-retries", "1", "fix calc")...),
		"previously failing tests are missing: example.com/calc/calc.TestAdd", "fewer tests than at the start")
	// A person may still accept the work, on the record: the waiver of the
	// tests, and the goals' criteria and the review as ever, when resumed.
	w := ultra(t, dir, "gate", "waive", id, "--reason", "TestAdd was obsolete", "--by", "ann")
	if w.code != 0 || !strings.Contains(w.stdout, "WAIVED") || !strings.Contains(w.stdout, "ultra resume "+id) {
		t.Fatalf("waive: %d\n%s%s", w.code, w.stdout, w.stderr)
	}
	d2 := gateFile(t, dir, id, 2)
	if d2["gate_status"] != "WAIVED" || d2["waiver"].(map[string]any)["by"] != "ann" {
		t.Fatalf("gate-2 %v", d2)
	}
	if out := git(t, dir, "rev-list", "main..ultra/"+id); strings.TrimSpace(out) != "" {
		t.Fatal("a waiver of the gate committed a goal whose criteria never ran")
	}
	m2 := newModel(t, calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})), approve())
	if r := ultra(t, dir, "resume", id, "--output", "jsonl", "--base-url", m2.url); r.code != 0 {
		t.Fatalf("resume after the waiver: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var s map[string]any
	json.Unmarshal([]byte(ultra(t, dir, "status", id, "--json").stdout), &s)
	if s["phase"] != "complete" || s["status"] != "complete" {
		t.Fatalf("status after waiver %v %v", s["phase"], s["status"])
	}
	// What status shows of the last verification is read from the gate's file.
	if lv, _ := s["last_verify"].(map[string]any); lv["status"] != "WAIVED" {
		t.Fatalf("last_verify after waiver %v", s["last_verify"])
	}
	// The waived tree is committed on the run's branch, and says so.
	msg := git(t, dir, "log", "-1", "--format=%B", "ultra/"+id+"~1")
	if !strings.Contains(msg, "WAIVED") || !strings.Contains(msg, "Waived by ann: TestAdd was obsolete") || !strings.Contains(msg, "Ultra-Goal: ") {
		t.Fatalf("waiver commit:\n%s", msg)
	}
	if tree := strings.TrimSpace(git(t, dir, "rev-parse", "ultra/"+id+"~1^{tree}")); withoutRecords(t, dir, tree) != withoutRecords(t, dir, d2["tree"].(string)) {
		t.Fatalf("committed tree %s, waived %v", tree, d2["tree"])
	}
	if again := ultra(t, dir, "gate", "waive", id, "--reason", "x"); again.code != 2 {
		t.Fatalf("waiving a complete run: %d %s", again.code, again.stderr)
	}
	// Landing it says that a person, not the tests, let it through.
	if l := ultra(t, dir, "land", id); l.code != 0 || !strings.Contains(l.stdout, "let through by a person's waiver, not by its tests (decision") {
		t.Fatalf("land of waived work: %d\n%s%s", l.code, l.stdout, l.stderr)
	}
	if none := ultra(t, dir, "gate", "waive", id); none.code != 2 || !strings.Contains(none.stderr, "reason") {
		t.Fatalf("waiver without reason: %d %s", none.code, none.stderr)
	}
}

func TestFailedTestsRunFirstWhenIterating(t *testing.T) {
	t.Parallel()
	// A suite long enough that running its failing test alone first can
	// save time (a short one is run whole: focusOn).
	files := map[string]string{"slow/slow_test.go": "package slow\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestSlow(t *testing.T) { time.Sleep(4 * time.Second) }\n"}
	for k, v := range calcProject {
		files[k] = v
	}
	dir := repo(t, files)
	m := newModel(t,
		planGoals("p"),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		// A change that does not fix it: the failing test runs first.
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "// Add returns", "new_string": "// Add (still wrong) returns"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		// Nothing changed since: the same tree is not run again.
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
	)
	res := ultra(t, dir, runArgs(m, "--max-retries", "3", "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	d1, d2, d3 := gateFile(t, dir, id, 1), gateFile(t, dir, id, 2), gateFile(t, dir, id, 3)
	if d1["focused"] == true || d2["focused"] != true || d2["gate_status"] != "FAIL" {
		t.Fatalf("gate-1 focused=%v, gate-2 focused=%v status %v", d1["focused"], d2["focused"], d2["gate_status"])
	}
	// gate-1 judged the tree the run started from, which the baseline had
	// just measured; gate-3 the tree of gate-2, whose focused run is not
	// a full measurement: it ran.
	if r, _ := d1["reused"].(string); !strings.Contains(r, "baseline") || !strings.Contains(r, id) {
		t.Fatalf("gate-1 of the unchanged tree ran the suite again: reused=%q", r)
	}
	if d3["reused"] != nil || d3["focused"] != true || d3["gate_status"] != "FAIL" {
		t.Fatalf("gate-3: reused=%v focused=%v status=%v", d3["reused"], d3["focused"], d3["gate_status"])
	}
	if c := d2["counts"].(map[string]any); c["executed"].(float64) != 1 {
		t.Fatalf("the focused run should run only the failing test: %v", c)
	}
}

func TestNoTestsEscalates(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"go.mod": "module example.com/x\n\ngo 1.21\n", "x.go": "package x\n\nfunc X() {}\n"})
	m := newModel(t,
		planGoals("p"),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
	)
	res := ultra(t, dir, runArgs(m, "add X")...)
	if res.code != 3 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	if d := gateFile(t, dir, id, 1); d["gate_status"] != "NOT_EVALUATED" {
		t.Fatalf("gate %v", d)
	}
	fin := data(ofType(res.events(t), "run_finished")[0])
	if !strings.Contains(fin["reason"].(string), "verification proved nothing") {
		t.Fatalf("finish %v", fin)
	}
}

func TestStandaloneVerify(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	res := ultra(t, dir, "verify", "--json")
	if res.code != 5 {
		t.Fatalf("exit %d, want 5 (FAIL)\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var out struct {
		Decision map[string]any `json:"decision"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatal(err, res.stdout)
	}
	c := out.Decision["counts"].(map[string]any)
	if out.Decision["gate_status"] != "FAIL" || c["passed"].(float64) != 1 || c["failed"].(float64) != 1 {
		t.Fatalf("decision %v", out.Decision)
	}
	// --only-failed runs the failing test alone first.
	again := ultra(t, dir, "verify", "--only-failed", "--json")
	json.Unmarshal([]byte(again.stdout), &out)
	if again.code != 5 || out.Decision["focused"] != true {
		t.Fatalf("only-failed: %d %v", again.code, out.Decision)
	}
	os.WriteFile(filepath.Join(dir, "calc", "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644)
	ok := ultra(t, dir, "verify", "--only-failed")
	if ok.code != 0 || !strings.Contains(ok.stdout, "gate: PASS") {
		t.Fatalf("after the fix: %d\n%s%s", ok.code, ok.stdout, ok.stderr)
	}
	empty := t.TempDir()
	if ne := ultra(t, empty, "verify", empty); ne.code != 6 || !strings.Contains(ne.stdout, "NOT_EVALUATED") {
		t.Fatalf("no tests: %d\n%s%s", ne.code, ne.stdout, ne.stderr)
	}
}

// ultra verify --json reads real runners' results in other ecosystems.
func TestStandaloneVerifyOtherEcosystems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, tool string
		files      map[string]string
		passed     float64
		failed     float64
	}{
		{"node --test", "node", map[string]string{
			"package.json":      `{"name":"x","version":"1.0.0","scripts":{"test":"node --test"}}`,
			"test/math.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.strictEqual(1 + 1, 2));\ntest('breaks', () => assert.strictEqual(1 + 1, 3));\n",
		}, 1, 1},
		{"pytest", "python3", map[string]string{
			"pytest.ini":         "[pytest]\n",
			"tests/test_calc.py": "def test_ok():\n    assert 1 + 1 == 2\n\ndef test_bad():\n    assert 1 + 1 == 3\n\ndef test_ok2():\n    assert True\n",
		}, 2, 1},
		{"make", "make", map[string]string{
			"Makefile": "test:\n\t@echo '3 passed, 0 failed'\n",
		}, 3, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.tool); err != nil {
				t.Skip(c.tool + " not installed")
			}
			dir := repo(t, c.files)
			res := ultra(t, dir, "verify", "--json")
			var out struct {
				Decision map[string]any `json:"decision"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
				t.Fatalf("%v\n%s\n%s", err, res.stdout, res.stderr)
			}
			counts := out.Decision["counts"].(map[string]any)
			if counts["passed"].(float64) != c.passed || counts["failed"].(float64) != c.failed {
				t.Fatalf("counts %v, want %v passed %v failed (%s)", counts, c.passed, c.failed, res.stdout)
			}
			want := 0
			if c.failed > 0 {
				want = 5
			}
			if res.code != want {
				t.Fatalf("exit %d, want %d", res.code, want)
			}
		})
	}
}

// The false completions a model could try: skipping the failing test,
// tests that rewrite the code after passing, a second command's failures.
func TestGateResistsFalseCompletion(t *testing.T) {
	t.Parallel()
	t.Run("skip the failing test", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t,
			calls(call("read", map[string]any{"file_path": "calc/calc_test.go"})),
			planGoals("p"),
			calls(call("edit", map[string]any{"file_path": "calc/calc_test.go", "old_string": "func TestAdd(t *testing.T) {\n", "new_string": "func TestAdd(t *testing.T) {\n\tt.Skip(\"later\")\n"})),
			calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		)
		res := ultra(t, dir, runArgs(m, "--max-retries", "1", "fix calc")...)
		d := gateFile(t, dir, runID(t, res.events(t)), 1)
		if res.code != 3 || d["gate_status"] != "FAIL" || !strings.Contains(strings.Join(toStrings(d["reasons"]), ";"), "now skipped") {
			t.Fatalf("exit %d gate %v", res.code, d)
		}
	})
	t.Run("tests that change the tree", func(t *testing.T) {
		t.Parallel()
		files := map[string]string{}
		for k, v := range calcProject {
			files[k] = v
		}
		files["calc/calc.go"] = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
		files["calc/zz_test.go"] = "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestZZ(t *testing.T) { os.WriteFile(\"generated.txt\", []byte(\"x\"), 0o644) }\n"
		dir := repo(t, files)
		res := ultra(t, dir, "verify", "--json")
		var out struct {
			Decision map[string]any `json:"decision"`
		}
		json.Unmarshal([]byte(res.stdout), &out)
		if res.code != 5 || !strings.Contains(strings.Join(toStrings(out.Decision["reasons"]), ";"), "changed files of the working tree") {
			t.Fatalf("exit %d %v", res.code, out.Decision)
		}
	})
	t.Run("a second command fails", func(t *testing.T) {
		t.Parallel()
		files := map[string]string{}
		for k, v := range calcProject {
			files[k] = v
		}
		files["calc/calc.go"] = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
		dir := repo(t, files)
		res := ultra(t, dir, "verify", "--command", "go test -json ./...", "--command", "echo '1 passed, 1 failed'; exit 1")
		if res.code != 5 || !strings.Contains(res.stdout, "FAIL") {
			t.Fatalf("exit %d\n%s", res.code, res.stdout)
		}
		ok := ultra(t, dir, "verify", "--command", "go test -json ./...", "--command", "go vet ./...")
		if ok.code != 0 {
			t.Fatalf("a passing check beside the tests: exit %d\n%s", ok.code, ok.stdout)
		}
	})
	t.Run("tests do not see the API key", func(t *testing.T) {
		t.Parallel()
		files := map[string]string{
			"go.mod":    "module example.com/k\n\ngo 1.21\n",
			"k_test.go": "package k\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestKey(t *testing.T) { t.Fatal(\"key=\" + os.Getenv(\"OPENAI_API_KEY\")) }\n",
		}
		dir := repo(t, files)
		res := ultraWithEnv(t, dir, []string{"OPENAI_API_KEY=sk-test-secret"}, "verify")
		if strings.Contains(res.stdout, "sk-test-secret") || !strings.Contains(res.stdout, "key=") {
			t.Fatalf("%s", res.stdout)
		}
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// A gate file rewritten FAIL→PASS (size, mode and time made to match) is
// never believed: not as a cache hit when the run verifies the same tree
// again, not by land.
func TestForgedGateFileIsNeverBelieved(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := append(fixSteps()[:2:2], // read, plan; no fix
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		text("done"), text("done"), text("done"), text("done"), text("done"))
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	path := filepath.Join(dir, ".ultra", "state", "runs", id, "gate-1.json")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	raw := readFile(t, path)
	forged := strings.Replace(raw, `"gate_status": "FAIL"`, `"gate_status": "PASS"`, 1)
	if forged == raw {
		t.Fatalf("no FAIL to forge in:\n%s", raw)
	}
	os.Chmod(path, 0o644)
	os.WriteFile(path, []byte(forged+strings.Repeat(" ", len(raw)-len(forged))), 0o644)
	os.Chmod(path, before.Mode())
	os.Chtimes(path, before.ModTime(), before.ModTime())

	mainBefore := head(t, dir, "main")
	if land := ultra(t, dir, "land", id); land.code == 0 {
		t.Fatalf("land of a forged decision: exit %d\n%s%s", land.code, land.stdout, land.stderr)
	}
	if head(t, dir, "main") != mainBefore {
		t.Fatal("main moved")
	}
	m.srv.SetScript(mustScript(t, []step{calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{}))}))
	r := ultra(t, dir, "resume", id, "--output", "jsonl", "--base-url", m.url)
	if r.code != 3 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	vr := ofType(r.events(t), "verify_result")
	if len(vr) != 1 || data(vr[0])["status"] == "PASS" || !strings.Contains(fmt.Sprint(data(vr[0])), "not signed by ultra") {
		t.Fatalf("verify after the forgery: %v", vr)
	}
	if out := git(t, dir, "rev-list", "main..ultra/"+id); strings.TrimSpace(out) != "" {
		t.Fatalf("ultra committed on a forged decision: %s", out)
	}
}

// land re-checks the decision of the tree it lands: a green run whose
// decision file was changed afterwards is not landed.
func TestLandRefusesAnUnsignedDecision(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	gates, _ := filepath.Glob(filepath.Join(dir, ".ultra", "state", "runs", id, "gate-*.json"))
	for _, p := range gates {
		raw := readFile(t, p)
		os.Chmod(p, 0o644)
		os.WriteFile(p, []byte(strings.Replace(raw, `"run": "`, `"run": "x`, 1)), 0o444)
	}
	mainBefore := head(t, dir, "main")
	land := ultra(t, dir, "land", id)
	if land.code == 0 || !strings.Contains(land.stderr+land.stdout, "not signed by ultra") {
		t.Fatalf("land: exit %d\n%s%s", land.code, land.stdout, land.stderr)
	}
	if head(t, dir, "main") != mainBefore {
		t.Fatal("main moved")
	}
}

// Changing the project's existing tests never passes by itself: the
// original tests run against the new code, a weakened test that hides a
// bug fails the gate, and an honest fix that also touched a test waits
// for a person's waiver unless the person allowed test changes.
func TestChangedTestsAreProtected(t *testing.T) {
	t.Parallel()
	weaken := calls(call("read", map[string]any{"file_path": "calc/calc_test.go"}),
		call("edit", map[string]any{"file_path": "calc/calc_test.go", "old_string": "got != 5", "new_string": "got != -1"}))
	touch := calls(call("read", map[string]any{"file_path": "calc/calc_test.go"}), call("edit", map[string]any{"file_path": "calc/calc_test.go", "old_string": "func TestAddZero", "new_string": "// TestAddZero checks zero.\nfunc TestAddZero"}))
	fix := fixSteps()[2]
	t.Run("weakened test", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t, append(fixSteps()[:2:2], weaken,
			calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))...)
		id := failedGate(t, dir, ultra(t, dir, runArgs(m, "--max-retries", "1", "fix calc")...),
			"original tests do not pass against the new code", "changed calc/calc_test.go")
		if out := git(t, dir, "rev-list", "main..ultra/"+id); strings.TrimSpace(out) != "" {
			t.Fatal("a weakened test was committed")
		}
	})
	t.Run("honest fix with a touched test", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t, append(fixSteps()[:2:2], fix, touch,
			calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})))...)
		res := ultra(t, dir, runArgs(m, "fix calc")...)
		if res.code != 3 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		id := runID(t, res.events(t))
		d := gateFile(t, dir, id, 1)
		if d["gate_status"] != "CONCERNS" || d["needs_waiver"] != true || fmt.Sprint(d["changed_tests"]) != "[changed calc/calc_test.go]" {
			t.Fatalf("gate %v", d)
		}
		if out := git(t, dir, "rev-list", "main..ultra/"+id); strings.TrimSpace(out) != "" {
			t.Fatal("committed before a person waived")
		}
		if land := ultra(t, dir, "land", id); land.code == 0 {
			t.Fatal("landed before a person waived")
		}
		if w := ultra(t, dir, "gate", "waive", id, "--reason", "the comment is fine", "--by", "ann"); w.code != 0 {
			t.Fatalf("waive: %d\n%s%s", w.code, w.stdout, w.stderr)
		}
		m2 := newModel(t, calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})), approve())
		if r := ultra(t, dir, "resume", id, "--output", "jsonl", "--base-url", m2.url); r.code != 0 {
			t.Fatalf("resume after the waiver: %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if out := git(t, dir, "rev-list", "main..ultra/"+id); len(strings.Fields(out)) != 2 {
			t.Fatalf("after the waiver the branch holds %q", out)
		}
	})
	t.Run("allowed test changes", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t, append(fixSteps()[:2:2], fix, touch,
			calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})), approve())...)
		res := ultra(t, dir, runArgs(m, "--allow-test-changes", "fix calc")...)
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		d := gateFile(t, dir, runID(t, res.events(t)), 1)
		if d["gate_status"] != "PASS" || d["test_changes_allowed"] != true || d["changed_tests"] == nil {
			t.Fatalf("gate %v", d)
		}
	})
}

// A runner planted in the tree (a fake .venv/bin/python that writes a
// passing report) is never what the gate runs.
func TestPlantedRunnerIsNotRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := repo(t, map[string]string{
		"pytest.ini":   "[pytest]\n",
		"calc.py":      "def add(a, b):\n    return a - b\n",
		"test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
		".gitignore":   "__pycache__/\n",
	})
	fake := "#!/bin/sh\ncat > \"$ULTRA_REPORT\" <<'X'\n<testsuite tests=\"1\" failures=\"0\"><testcase classname=\"test_calc\" name=\"test_add\" file=\"test_calc.py\" line=\"3\"/></testsuite>\nX\necho '1 passed'\n"
	m := newModel(t,
		planGoals("p"),
		calls(call("write", map[string]any{"file_path": ".venv/bin/python", "content": fake})),
		calls(call("bash", map[string]any{"command": "chmod +x .venv/bin/python"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		text("done"), text("done"), text("done"), text("done"), text("done"))
	res := ultra(t, dir, runArgs(m, "--max-retries", "1", "fix calc")...)
	if res.code == 0 {
		t.Fatalf("a planted runner completed the run:\n%s", res.stdout)
	}
	id := runID(t, res.events(t))
	if d := gateFile(t, dir, id, 1); d["gate_status"] == "PASS" || d["gate_status"] == "CONCERNS" {
		t.Fatalf("gate %v", d)
	}
	if out := git(t, dir, "rev-list", "main..ultra/"+id); strings.TrimSpace(out) != "" {
		t.Fatal("ultra committed the planted runner")
	}
}

// The go command of the gate fills the host's build cache; the tests it
// runs (the model's code) cannot write it, and still write their checkout
// and /tmp.
func TestGoTestsCannotWriteTheBuildCache(t *testing.T) {
	t.Parallel()
	canary := fmt.Sprintf("ultra-poison-%d", time.Now().UnixNano())
	dir := repo(t, map[string]string{
		"go.mod": "module example.com/ll\n\ngo 1.21\n",
		"ll_test.go": `package ll

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrites(t *testing.T) {
	cache := os.Getenv("GOCACHE")
	if cache == "" {
		t.Fatal("no GOCACHE")
	}
	if err := os.WriteFile(filepath.Join(cache, "` + canary + `"), []byte("x"), 0o644); err == nil {
		t.Fatal("wrote the build cache")
	}
	if err := os.WriteFile("local.txt", []byte("x"), 0o644); err != nil {
		t.Fatal("cannot write the checkout:", err)
	}
	if err := os.WriteFile(filepath.Join(os.TempDir(), "t.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal("cannot write tmp:", err)
	}
}
`,
	})
	m := newModel(t,
		planGoals("p"),
		calls(call("write", map[string]any{"file_path": "doc.go", "content": "// Package ll is a test.\npackage ll\n"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})), approve())
	res := ultra(t, dir, runArgs(m, "document ll")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	out, _ := exec.Command("go", "env", "GOCACHE").Output()
	if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), canary)); err == nil {
		t.Fatal("a test wrote the host's build cache")
	}
	d := gateFile(t, dir, runID(t, res.events(t)), 1)
	if !strings.Contains(fmt.Sprint(d["commands"]), "go test") {
		t.Fatalf("gate %v", d)
	}
}

// A conftest.py added to turn failures into passes does not complete a
// run. Written plainly, the fake-result scan sees its hook; with the
// hook's name built at run time, the original tests run without it,
// against the new code, and fail.
func TestAddedConftestCannotHideFailures(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pytest"); err != nil {
		if err := exec.Command("python3", "-m", "pytest", "--version").Run(); err != nil {
			t.Skip("pytest is not installed (.ci/run installs python3-pytest)")
		}
	}
	wrapper := `import pytest

def _wrap(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None

`
	for _, c := range []struct{ name, conftest, reason string }{
		{"plain", "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    report.outcome = \"passed\"\n    report.longrepr = None\n",
			"conftest.py: python-result-hook: pytest_runtest_makereport defined"},
		{"hidden", wrapper + "globals()['_'.join(['pytest', 'runtest', 'makereport'])] = pytest.hookimpl(hookwrapper=True)(_wrap)\n",
			"original tests do not pass"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := repo(t, map[string]string{
				"pytest.ini":   "[pytest]\n",
				"calc.py":      "def add(a, b):\n    return a - b\n",
				"test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
				".gitignore":   "__pycache__/\n.pytest_cache/\n",
			})
			m := newModel(t,
				planGoals("p"),
				calls(call("write", map[string]any{"file_path": "conftest.py", "content": c.conftest})),
				calls(call("phase", map[string]any{"to": "verifying"})),
				calls(call("verify", map[string]any{})),
				text("done"), text("done"), text("done"), text("done"), text("done"))
			res := ultra(t, dir, runArgs(m, "--max-retries", "1", "fix calc")...)
			if res.code == 0 {
				t.Fatalf("a conftest that hides failures completed the run:\n%s", res.stdout)
			}
			id := runID(t, res.events(t))
			d := gateFile(t, dir, id, 1)
			if d["gate_status"] != "FAIL" || !strings.Contains(fmt.Sprint(d["reasons"]), c.reason) {
				t.Fatalf("gate %v", d)
			}
			if out := git(t, dir, "rev-list", "main..ultra/"+id); strings.TrimSpace(out) != "" {
				t.Fatal("ultra committed the conftest")
			}
		})
	}
}

// failedGate checks that a run escalated after its first gate decision
// failed for each of reasons, and returns the run's id.
func failedGate(t *testing.T, dir string, res result, reasons ...string) string {
	t.Helper()
	if res.code != 3 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	d := gateFile(t, dir, id, 1)
	got, _ := json.Marshal(d["reasons"])
	if d["gate_status"] != "FAIL" {
		t.Fatalf("gate %v", d)
	}
	for _, r := range reasons {
		if !strings.Contains(string(got), r) {
			t.Fatalf("gate reasons lack %q: %s", r, got)
		}
	}
	return id
}

// A base any run measured is not run again by the next run from it; the
// tree the first run committed is judged from the cache when the second
// run arrives at the same tree. --no-gate-cache runs everything.
func TestGateCacheAcrossRuns(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	first := ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix calc")...)
	if first.code != 0 {
		t.Fatalf("first run: exit %d\n%s", first.code, first.stderr)
	}
	firstID := runID(t, first.events(t))
	if b := data(ofType(first.events(t), "baseline")[0]); b["reused"] != nil {
		t.Fatalf("the first run's baseline came from a cache: %v", b)
	}

	second := ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix calc again")...)
	if second.code != 0 {
		t.Fatalf("second run: exit %d\n%s", second.code, second.stderr)
	}
	evs := second.events(t)
	id := runID(t, evs)
	b := data(ofType(evs, "baseline")[0])
	if r, _ := b["reused"].(string); !strings.Contains(r, firstID) || !strings.Contains(r, "baseline") || b["failed"].(float64) != 1 {
		t.Fatalf("the second run measured the base again: %v", b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ultra", "state", "runs", id, "verify", "baseline")); err == nil {
		t.Fatal("the second run's baseline ran tests")
	}
	d := gateFile(t, dir, id, 1)
	if r, _ := d["reused"].(string); d["gate_status"] != "PASS" || !strings.Contains(r, firstID) {
		t.Fatalf("the same fixed tree was run again: %v %v", d["gate_status"], d["reused"])
	}
	// The commit of a cached decision is still of exactly that tree (with
	// ultra's own records of the run).
	if tree := strings.TrimSpace(git(t, dir, "rev-parse", "ultra/"+id+"^{tree}")); withoutRecords(t, dir, tree) != withoutRecords(t, dir, d["tree"].(string)) {
		t.Fatalf("committed tree %s, judged %v", tree, d["tree"])
	}

	third := ultra(t, dir, runArgs(newModel(t, fixSteps()...), "--no-gate-cache", "fix calc once more")...)
	if third.code != 0 {
		t.Fatalf("third run: exit %d\n%s", third.code, third.stderr)
	}
	evs = third.events(t)
	if b := data(ofType(evs, "baseline")[0]); b["reused"] != nil {
		t.Fatalf("--no-gate-cache: the baseline came from the cache: %v", b)
	}
	if d := gateFile(t, dir, runID(t, evs), 1); d["reused"] != nil {
		t.Fatalf("--no-gate-cache: the decision came from the cache: %v", d["reused"])
	}
}

// Test first: the run adds a test beside the existing ones, sees it fail,
// fixes the code, and the gate passes (the original tests, run without the
// added test file, are judged against the run's start, where the added
// test did not exist).
func TestAddedTestFailsThenPasses(t *testing.T) {
	t.Parallel()
	dir := repo(t, greenProject)
	subTest := "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(5, 3) != 2 {\n\t\tt.Fatal(\"Sub(5, 3) != 2\")\n\t}\n}\n"
	goals := goalsOf("Sub subtracts",
		crit("happy", "command", "Sub subtracts, as its test shows", map[string]any{"run": "go test -count=1 -v -run '^TestSub$' ./calc", "expect_stdout": "--- PASS: TestSub"}),
		crit("edge", "command", "Sub subtracts", map[string]any{"run": "grep -q 'return a - b' calc/sub.go", "expect_exit": 0}),
		crit("regression", "command", "Add's tests are still there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2"}))
	m := newModel(t,
		calls(call("goals", goals)),
		calls(call("write", map[string]any{"file_path": "calc/sub_test.go", "content": subTest}),
			call("write", map[string]any{"file_path": "calc/sub.go", "content": "package calc\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		calls(call("edit", map[string]any{"file_path": "calc/sub.go", "old_string": "return a + b", "new_string": "return a - b"})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		approve())
	res := ultra(t, dir, runArgs(m, "add Sub, test first")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	vr := ofType(res.events(t), "verify_result")
	if len(vr) != 2 || data(vr[0])["status"] != "FAIL" || data(vr[1])["status"] != "PASS" {
		t.Fatalf("verifications %v", vr)
	}
}

// Code the tests import prints unittest's results and ends the process
// with status 0 before any test runs: the constructs are new since the
// run started, so the gate fails instead of counting the printed passes.
func TestGateRefusesForgedUnittestResults(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{
		"calc.py":            "def add(a, b):\n    return a - b\n",
		"tests/test_calc.py": "import unittest\n\nfrom calc import add\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
		".gitignore":         "__pycache__/\n",
	})
	forged := "import os\nimport sys\n\n\ndef add(a, b):\n    return a - b\n\n\n" +
		"sys.stderr.write('test_add (test_calc.TestCalc.test_add) ... ok\\n\\n' + '-' * 70 + '\\nRan 1 test in 0.001s\\n\\nOK\\n')\n" +
		"sys.stderr.flush()\nos._exit(0)\n"
	m := newModel(t,
		planGoals("p"),
		calls(call("read", map[string]any{"file_path": "calc.py"})),
		calls(call("write", map[string]any{"file_path": "calc.py", "content": forged})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		text("done"), text("done"), text("done"), text("done"), text("done"))
	res := ultra(t, dir, runArgs(m, "--max-retries", "1", "fix calc")...)
	id := failedGate(t, dir, res, "can fake their results", "calc.py: python-exit: os._exit(0)", "runner-text")
	if out := git(t, dir, "rev-list", "main..ultra/"+id); strings.TrimSpace(out) != "" {
		t.Fatal("ultra committed the forgery")
	}
	// ultra verify, outside a run, has no baseline to judge them by: it
	// names them rather than letting its preview look clean.
	v := ultra(t, dir, "verify", workdirOf(t, res.events(t)))
	if !strings.Contains(v.stdout, "construct(s) in the tree can fake test results") || !strings.Contains(v.stdout, "calc.py: python-exit") {
		t.Fatalf("ultra verify of the forged tree:\n%s%s", v.stdout, v.stderr)
	}
}
