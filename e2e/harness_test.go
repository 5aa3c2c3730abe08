// Package e2e drives the real ultra binary against the scripted model
// server, in temporary git repositories.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/llm/scripted"
	"github.com/ultra-dev/ultra/internal/store/pgtest"
)

var ultraBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ultra-e2e-bin")
	if err != nil {
		panic(err)
	}
	ultraBin = filepath.Join(dir, "ultra")
	build := exec.Command("go", "build", "-o", ultraBin, "../cmd/ultra")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building ultra:", err)
		os.Exit(1)
	}
	// The fleet's tests share one throwaway Postgres cluster, stopped here.
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// step builders for scripts.
type step = map[string]any

func call(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

func calls(cs ...map[string]any) step { return step{"tool_calls": cs} }

func text(s string) step { return step{"text": s} }

// model is a scripted model server for one test.
type model struct {
	srv *scripted.Server
	url string
	// refactor: the script proposes refactor goals (planGoals), which
	// only a run a person declared a refactor takes (runArgs adds
	// --refactor).
	refactor bool
}

func newModel(t testing.TB, steps ...step) *model {
	t.Helper()
	return newScript(t, map[string]any{"steps": steps})
}

// newModelServing is newModel on a server whose model list is models.
func newModelServing(t testing.TB, models []string, steps ...step) *model {
	t.Helper()
	return newScript(t, map[string]any{"models": models, "steps": steps})
}

func newScript(t testing.TB, script map[string]any) *model {
	t.Helper()
	if steps, ok := script["steps"].([]step); ok {
		script["steps"] = withCleanupEnds(steps)
	}
	b, _ := json.Marshal(script)
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scripted.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(s, "")
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &model{srv: srv, url: hs.URL + "/v1", refactor: bytes.Contains(b, []byte(`"refactor":true`))}
}

// repo creates a git repository with files and one commit.
func repo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	// Removed before the test's own removal of its temporary directory,
	// and again while a git that a run's last command left behind (git
	// detaches its housekeeping) still writes objects there.
	t.Cleanup(func() { removeSettled(dir) })
	return repoIn(t, dir, files)
}

// removeSettled removes dir, trying again for a few seconds while
// something still writes in it.
func removeSettled(dir string) {
	for range 50 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// repoIn is repo made in dir.
func repoIn(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// result of one ultra invocation.
type result struct {
	code   int
	stdout string
	stderr string
}

func (r result) events(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// ultraEnv is the environment for ultra: without the caller's model
// settings or user configuration.
func ultraEnv(t testing.TB) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ULTRA_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CONFIG_HOME="+configHome(t), "XDG_STATE_HOME="+stateHome(t), "NO_COLOR=1")
}

// configHome is a fresh XDG_CONFIG_HOME with Go's telemetry off: a go
// command run there (ultra's `go env`, a gate's `go test`) would otherwise
// leave a detached child writing counter files into it after ultra has
// exited, racing the test's cleanup.
func configHome(t testing.TB) string {
	d := t.TempDir()
	tel := filepath.Join(d, "go", "telemetry")
	if err := os.MkdirAll(tel, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tel, "mode"), []byte("off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

var stateHomes sync.Map // test name → its XDG_STATE_HOME

// stateHome is one test's state directory (where runs' worktrees go),
// the same for every ultra it starts.
func stateHome(t testing.TB) string {
	if d, ok := stateHomes.Load(t.Name()); ok {
		return d.(string)
	}
	d := t.TempDir()
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	// Several goroutines of one test may ask at once: the first one's
	// directory is everyone's (each ultra must find the same gate key).
	got, loaded := stateHomes.LoadOrStore(t.Name(), d)
	if !loaded {
		t.Cleanup(func() { stateHomes.Delete(t.Name()) })
	}
	return got.(string)
}

// ultra runs the binary in dir and waits for it.
func ultra(t testing.TB, dir string, args ...string) result {
	t.Helper()
	return ultraRun(t, dir, ultraEnv(t), args...)
}

func ultraRun(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	return ultraCmd(t, exec.Command(ultraBin, args...), dir, env)
}

// ultraCmd runs an ultra command made by the caller (with a context, say)
// in dir and waits for it.
func ultraCmd(t testing.TB, cmd *exec.Cmd, dir string, env []string) result {
	t.Helper()
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// runArgs are the arguments of a headless JSONL run against m.
func runArgs(m *model, extra ...string) []string {
	args := []string{"run", "--output", "jsonl", "--provider", "openai", "--base-url", m.url, "--model", "scripted"}
	if m.refactor {
		args = append(args, "--refactor")
	}
	return append(args, extra...)
}

func runID(t testing.TB, evs []map[string]any) string {
	t.Helper()
	for _, e := range evs {
		if e["type"] == "run_started" {
			return e["run"].(string)
		}
	}
	t.Fatal("no run_started event")
	return ""
}

// judged are the criterion events of checks run on the trees the gate
// judged (not on the base tree, before the plan was accepted).
func judged(evs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, e := range ofType(evs, "criterion") {
		if data(e)["base"] == nil {
			out = append(out, e)
		}
	}
	return out
}

func ofType(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

func data(e map[string]any) map[string]any {
	d, _ := e["data"].(map[string]any)
	return d
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A small Go project whose one test fails until Add adds.
var calcProject = map[string]string{
	"go.mod":            "module example.com/calc\n\ngo 1.21\n",
	"calc/calc.go":      "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
	"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n",
}

// fixSteps is the scripted work of a model that fixes calcProject: the
// goal with its criteria, the edit, the verification and the final
// review's approval.
func fixSteps() []step {
	return []step{
		calls(call("read", map[string]any{"file_path": "calc/calc.go"}), call("glob", map[string]any{"pattern": "**/*_test.go"})),
		calls(call("goals", calcGoals())),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		endCleanup(),
		approve(),
	}
}

// endCleanup is the model's end of the final gate's cleanup pass with no
// change: the review follows at once.
func endCleanup() step { return calls(call("phase", map[string]any{"to": "verifying"})) }

// withCleanupEnds puts endCleanup between a verification and a final
// review that follows it straight away in steps: the verification's final
// gate passed into the cleanup pass, which a script written before it
// existed does not know. A script that scripts its own cleanup pass has
// none of these pairs (its review follows the end of the pass).
func withCleanupEnds(steps []step) []step {
	var out []step
	for i, s := range steps {
		if i > 0 && callsTool(s, "review") && callsTool(steps[i-1], "verify") {
			out = append(out, endCleanup())
		}
		out = append(out, s)
	}
	return out
}

// callsTool reports that s calls the tool name.
func callsTool(s step, name string) bool {
	cs, _ := s["tool_calls"].([]map[string]any)
	for _, c := range cs {
		if c["name"] == name {
			return true
		}
	}
	return false
}

// crit is one proposed criterion.
func crit(model, channel, scenario string, check map[string]any) map[string]any {
	return map[string]any{"scenario": scenario, "user_model": model, "channel": channel, "check": check, "expected_evidence": "what the check prints"}
}

// goalsOf is a goals{...} proposal of one goal.
func goalsOf(title string, criteria ...map[string]any) map[string]any {
	return map[string]any{"goals": []any{map[string]any{"title": title, "objective": title + ", shown by its criteria", "criteria": criteria}}}
}

// calcGoals is the goal of fixing calcProject, with criteria ultra runs.
func calcGoals() map[string]any {
	return goalsOf("Add adds",
		crit("happy", "command", "Add adds, as its test shows", map[string]any{"run": "go test -count=1 -run '^TestAdd$' ./calc", "expect_exit": 0}),
		crit("edge", "command", "no subtraction is left in Add", map[string]any{"run": "grep -q 'return a - b' calc/calc.go", "expect_exit": 1}),
		crit("regression", "command", "both tests are still there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2\\s*$"}))
}

// refactorOf marks the goals of a goals{...} proposal as refactors (a
// person declares the run one: runArgs adds --refactor).
func refactorOf(g map[string]any) map[string]any {
	for _, x := range g["goals"].([]any) {
		x.(map[string]any)["refactor"] = true
	}
	return g
}

// planGoals is a planning step that proposes one goal whose criteria any
// repository with files passes, before and after: for tests about
// something else. Such criteria observe no change, so the goal is a
// refactor, which only a run a person declared one takes: runArgs adds
// --refactor to a script that holds one.
func planGoals(plan string) step { return calls(planGoalsCall(plan)) }

// planGoalsCall is planGoals' call, for answers with more calls.
func planGoalsCall(plan string) map[string]any {
	g := goalsOf(plan,
		crit("happy", "command", "the tree has files", map[string]any{"run": "ls -A", "expect_stdout": "\\S"}),
		crit("edge", "command", "the tree has dot files too", map[string]any{"run": "ls -a", "expect_stdout": "\\S"}),
		crit("regression", "command", "the tree still lists", map[string]any{"run": "ls", "expect_exit": 0, "expect_stdout": "\\S"}))
	g["goals"].([]any)[0].(map[string]any)["refactor"] = true
	return call("goals", g)
}

// approve is the final reviewer's approval: a clean review, APPROVE with
// architecture CLEAR.
func approve() step {
	return calls(call("review", map[string]any{"verdict": "APPROVE", "architecture": architecture("CLEAR")}))
}

// reviseAfterReview runs a model that fixes calcProject in dir, gets the
// final review review, which sends the run back, then revises Add's
// comment, verifies again and gets a clean review; the run must exit 0.
func reviseAfterReview(t *testing.T, dir string, review step) (*model, result) {
	t.Helper()
	m := newModel(t, append(fixSteps()[:5:5], review,
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "// Add returns a plus b.", "new_string": "// Add returns the sum of a and b."})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		approve())...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	return m, res
}

// checkPhases asserts that the run's phase_changed events went to want,
// in order.
func checkPhases(t testing.TB, evs []map[string]any, want ...string) {
	t.Helper()
	var phases []string
	for _, e := range ofType(evs, "phase_changed") {
		phases = append(phases, data(e)["to"].(string))
	}
	if !slices.Equal(phases, want) {
		t.Fatalf("phases %v, want %v", phases, want)
	}
}

// architecture is a review's architecture status with its reasons.
func architecture(status string, reasons ...string) map[string]any {
	a := map[string]any{"status": status}
	if len(reasons) > 0 {
		a["reasons"] = reasons
	}
	return a
}

func execCmd(dir string, env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir, c.Env = dir, env
	return c
}

func mustScript(t *testing.T, steps []step) *scripted.Script {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"steps": steps})
	s, err := scripted.ParseScript(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// recordsIn is the directory of the records (goals.json, the ledger, the
// brief) of the one run that has them in worktree wt.
func recordsIn(t testing.TB, wt string) string {
	t.Helper()
	dirs := recordPaths(wt, "")
	if len(dirs) != 1 {
		t.Fatalf("records of runs in %s: %v, want one", wt, dirs)
	}
	return dirs[0]
}

// recordPaths lists the files called name (a glob) among the records of
// the runs in worktree wt (.ultra/runs/RUN/name); for name "", the
// records' directories.
func recordPaths(wt, name string) []string {
	paths, _ := filepath.Glob(filepath.Join(wt, ".ultra", "runs", "*", name))
	return paths
}

// withoutRecords is tree without ultra's records of runs (goals.json,
// the ledger, the brief): the code the gate judged.
func withoutRecords(t testing.TB, dir, tree string) string {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
	records := strings.Fields(git(t, dir, "ls-tree", "-r", "--name-only", tree, "--", ".ultra/runs"))
	for _, args := range [][]string{{"read-tree", tree}, append([]string{"update-index", "--force-remove", "--"}, records...)} {
		if out, err := execCmd(dir, env, "git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := execCmd(dir, env, "git", "write-tree").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// noBranchOrWorktree asserts no run left an ultra/ branch or a worktree in
// dir's repository.
func noBranchOrWorktree(t *testing.T, dir string) {
	t.Helper()
	if b := strings.TrimSpace(git(t, dir, "branch", "--list", "ultra/*")); b != "" {
		t.Errorf("a branch was made: %s", b)
	}
	if w := git(t, dir, "worktree", "list", "--porcelain"); strings.Count(w, "worktree ") != 1 {
		t.Errorf("a worktree was made:\n%s", w)
	}
}

// must fails the test on a setup error.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
