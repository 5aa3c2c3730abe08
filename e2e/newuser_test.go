package e2e

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// closedURL is the base URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// nothingMade fails the test when a run, an ultra/* branch or a worktree
// was made in dir.
func nothingMade(t *testing.T, dir string) {
	t.Helper()
	noBranchOrWorktree(t, dir)
	r := ultra(t, dir, "runs", "--json")
	var runs []any
	if err := json.Unmarshal([]byte(r.stdout), &runs); r.code != 0 || err != nil || len(runs) != 0 {
		t.Errorf("runs after a refused start: exit %d %v\n%s", r.code, err, r.stdout)
	}
}

// A model server that cannot be reached is found before anything is
// made, for run and for plan; so is a provider's service without its key.
func TestNewUserUnreachableModelServer(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	url := closedURL(t)
	for _, verb := range []string{"run", "plan"} {
		res := ultra(t, dir, verb, "--base-url", url, "--model", "m", "fix calc")
		if res.code != 1 || !strings.Contains(res.stderr, "cannot reach the model server at "+url) ||
			!strings.Contains(res.stderr, "no run was started") || !strings.Contains(res.stderr, "--base-url") {
			t.Errorf("%s against a closed port: exit %d\n%s%s", verb, res.code, res.stdout, res.stderr)
		}
	}
	// A bare run: no key, so the local Ollama address, where nothing
	// listens here (unless this machine serves one).
	if c, err := net.DialTimeout("tcp", "127.0.0.1:11434", time.Second); err == nil {
		c.Close()
	} else {
		res := ultra(t, dir, "run", "x")
		if res.code != 1 || !strings.Contains(res.stderr, "http://127.0.0.1:11434/v1") || !strings.Contains(res.stderr, "ollama serve") {
			t.Errorf("bare run: exit %d\n%s", res.code, res.stderr)
		}
	}
	// Anthropic's own service without ANTHROPIC_API_KEY: refused without
	// asking it.
	env := append(ultraEnv(t), "ANTHROPIC_API_KEY=")
	res := ultraRun(t, dir, env, "run", "--provider", "anthropic", "x")
	if res.code != 2 || !strings.Contains(res.stderr, "ANTHROPIC_API_KEY is not set") || !strings.Contains(res.stderr, "https://api.anthropic.com") {
		t.Errorf("anthropic without a key: exit %d\n%s", res.code, res.stderr)
	}
	nothingMade(t, dir)
}

// Resume checks the model server the same way, and leaves the run as it
// was when it cannot reach it.
func TestNewUserResumeChecksTheModelServer(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := []step{planGoals("1. give up")}
	for i := 0; i < 5; i++ {
		steps = append(steps, text("I cannot."))
	}
	res := ultra(t, dir, runArgs(newModel(t, steps...), "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3 (escalated)\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	url := closedURL(t)
	r := ultra(t, dir, "resume", id, "--base-url", url)
	if r.code != 1 || !strings.Contains(r.stderr, "cannot reach the model server at "+url) {
		t.Fatalf("resume against a closed port: exit %d\n%s", r.code, r.stderr)
	}
	var s map[string]any
	st := ultra(t, dir, "status", id, "--json")
	if err := json.Unmarshal([]byte(st.stdout), &s); err != nil || s["status"] != "escalated" {
		t.Fatalf("status after a refused resume: %v %v", err, s["status"])
	}
}

// ultra dev fakemodel, as a person would start it, passes the check.
func TestNewUserFakemodelPassesThePreflight(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	b, _ := json.Marshal(map[string]any{"steps": fixSteps()})
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, b, 0o644)
	url := startFakemodel(t, script)
	res := ultra(t, dir, "run", "--output", "jsonl", "--base-url", url, "--model", "scripted", "fix calc")
	if res.code != 0 {
		t.Fatalf("run against ultra dev fakemodel: exit %d\n%s", res.code, res.stderr)
	}
	m := ultra(t, dir, "models", "--base-url", url, "--model", "scripted")
	if m.code != 0 || !strings.Contains(m.stdout, "scripted") || !strings.Contains(m.stdout, "ultra run uses it") {
		t.Fatalf("models: exit %d\n%s%s", m.code, m.stdout, m.stderr)
	}
}

// ultra models lists what the server serves; an unreachable one is an
// error naming its URL.
func TestNewUserModels(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	// A server with one model: ultra run, naming none, would use it.
	m := newModel(t, text("unused"))
	res := ultra(t, dir, "models", "--base-url", m.url, "--json")
	var l struct {
		BaseURL  string   `json:"base_url"`
		Models   []string `json:"models"`
		Model    string   `json:"model"`
		Unlisted []string `json:"unlisted"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &l); res.code != 0 || err != nil || l.BaseURL != m.url ||
		len(l.Models) != 1 || l.Models[0] != "scripted" || l.Model != "scripted" || len(l.Unlisted) != 0 {
		t.Fatalf("models --json: exit %d %v %+v\n%s%s", res.code, err, l, res.stdout, res.stderr)
	}
	res = ultra(t, dir, "models", "--base-url", m.url)
	if res.code != 0 || !strings.Contains(res.stdout, "serves 1 model(s)") || !strings.Contains(res.stdout, "  scripted  ultra run uses it") ||
		strings.Contains(res.stdout, "does not list") {
		t.Fatalf("models: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// With several, the default model it does not list is named.
	two := newModelServing(t, []string{"a", "b"}, text("unused"))
	res = ultra(t, dir, "models", "--base-url", two.url)
	if res.code != 0 || !strings.Contains(res.stdout, "serves 2 model(s)") ||
		!strings.Contains(res.stdout, "ultra run would ask for qwen3-coder, which this server does not list") {
		t.Fatalf("models: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	url := closedURL(t)
	res = ultra(t, dir, "models", "--base-url", url)
	if res.code != 1 || !strings.Contains(res.stderr, "cannot reach the model server at "+url) {
		t.Fatalf("models against a closed port: exit %d\n%s", res.code, res.stderr)
	}
	// Anthropic's own service without a key is not asked.
	res = ultraRun(t, dir, append(ultraEnv(t), "ANTHROPIC_API_KEY="), "models", "--provider", "anthropic")
	if res.code != 2 || !strings.Contains(res.stderr, "ANTHROPIC_API_KEY is not set") {
		t.Fatalf("models --provider anthropic without a key: exit %d\n%s", res.code, res.stderr)
	}
}

// Ctrl-C while the model thinks: the run says "interrupted" once, shows
// no model error, and says how to resume.
func TestNewUserInterruptSaysItOnce(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, step{"delay_ms": 60000, "text": "too late"})
	cmd := exec.Command(ultraBin, "run", "--base-url", m.url, "--model", "scripted", "fix calc")
	cmd.Dir, cmd.Env = dir, ultraEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(m.srv.Requests()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no model request arrived")
		}
	}
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s%s", err, stdout.String(), stderr.String())
	}
	all := stdout.String() + stderr.String()
	id := regexp.MustCompile(`run (\d{8}-\d{6}-[0-9a-f]+)`).FindStringSubmatch(stdout.String())
	if id == nil {
		t.Fatalf("no run id in the log:\n%s", all)
	}
	if n := strings.Count(all, "interrupted"); n != 1 {
		t.Errorf("the output says interrupted %d times, want once:\n%s", n, all)
	}
	if strings.Contains(all, "model error") || strings.Contains(all, "context canceled") {
		t.Errorf("an interrupted request shown as a model error:\n%s", all)
	}
	if !strings.Contains(all, "ultra resume "+id[1]) {
		t.Errorf("no resume line:\n%s", all)
	}
}

// A run id given empty is a usage error, as an unknown one is.
func TestNewUserEmptyRunID(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	// One run exists, so an empty id cannot quietly mean it.
	res := ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	for _, args := range [][]string{
		{"status", ""}, {"status", " "}, {"resume", ""}, {"approve", ""}, {"cancel", ""}, {"goals", ""},
		{"goals", "criteria", "G001", "--run", ""}, {"goals", "ledger", "--run", ""},
		{"goals", "steer", "", "--kind", "annotate_ledger", "--evidence", "e", "--rationale", "r"},
		{"diff", ""}, {"land", ""}, {"undo", ""}, {"undo", "", "--dry-run"},
	} {
		r := ultra(t, dir, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "the run id is empty") {
			t.Errorf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := ultra(t, dir, "status", "nope"); r.code != 2 {
		t.Errorf("unknown id: exit %d", r.code)
	}
}

// --dry-run says what would be removed, and removes nothing.
func TestNewUserDryRunSaysWould(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	res := ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	undo := ultra(t, dir, "undo", id, "--dry-run")
	if undo.code != 0 || !strings.Contains(undo.stdout, "would remove its worktree and branch ultra/"+id) ||
		!strings.Contains(undo.stdout, "would drop") || strings.Contains(undo.stdout, "removed") {
		t.Fatalf("undo --dry-run: exit %d\n%s%s", undo.code, undo.stdout, undo.stderr)
	}
	// A complete run that is not landed keeps its worktree (landing a
	// moved base verifies the merge there)...
	if keep := ultra(t, dir, "gc"); keep.code != 0 || !strings.Contains(keep.stdout, "complete and not landed: ultra land "+id) {
		t.Fatalf("gc of a complete, unlanded run: exit %d\n%s%s", keep.code, keep.stdout, keep.stderr)
	}
	if out := git(t, dir, "worktree", "list"); !strings.Contains(out, id) {
		t.Fatalf("gc removed an unlanded run's worktree:\n%s", out)
	}
	// ... unless forced; a dry run only says what it would do.
	gc := ultra(t, dir, "gc", "--force", "--dry-run")
	if gc.code != 0 || !strings.Contains(gc.stdout, "would remove") || strings.Contains(gc.stdout, "removed") ||
		strings.Contains(gc.stdout, "dropped") {
		t.Fatalf("gc --dry-run: exit %d\n%s%s", gc.code, gc.stdout, gc.stderr)
	}
	if out := git(t, dir, "branch", "--list", "ultra/*"); !strings.Contains(out, id) {
		t.Fatalf("a dry run removed the branch: %q", out)
	}
	if out := git(t, dir, "worktree", "list"); !strings.Contains(out, id) {
		t.Fatalf("a dry run removed the worktree:\n%s", out)
	}
	gc = ultra(t, dir, "gc", "--force")
	if gc.code != 0 || !strings.Contains(gc.stdout, "removed") || strings.Contains(gc.stdout, "would") {
		t.Fatalf("gc: exit %d\n%s%s", gc.code, gc.stdout, gc.stderr)
	}
}

// A run killed with its row saying running: ultra runs and ultra gc both
// call it interrupted.
func TestNewUserGCAndRunsAgreeOnAKilledRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	cmd, id, _ := startInLongCommand(t, dir)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	settle(t, dir)
	var runs []map[string]any
	r := ultra(t, dir, "runs", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 1 || runs[0]["status"] != "interrupted" {
		t.Fatalf("runs: %v\n%s", err, r.stdout)
	}
	gc := ultra(t, dir, "gc", "--dry-run")
	if gc.code != 0 || !strings.Contains(gc.stdout, "the run is interrupted and can be resumed (ultra resume "+id+")") ||
		strings.Contains(gc.stdout, "is running") || strings.Contains(gc.stdout, "in progress") {
		t.Fatalf("gc --dry-run:\n%s%s", gc.stdout, gc.stderr)
	}
}

// Budgets and timeouts given as 0 are refused with what the default is.
func TestNewUserZeroBudgetsRefused(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, text("unused"))
	for flag, want := range map[string]string{
		"--max-turns": "the default, 200", "--max-retries": "the default, 10", "--max-cost": "no cost limit",
		"--max-wall": "the default, 2h", "--max-input-tokens": "the default, 20000000", "--bash-timeout": "the default, 2m",
	} {
		res := ultra(t, dir, runArgs(m, flag, "0", "fix calc")...)
		if res.code != 2 || !strings.Contains(res.stderr, flag+" 0 is refused") || !strings.Contains(res.stderr, want) {
			t.Errorf("%s 0: exit %d\n%s", flag, res.code, res.stderr)
		}
	}
	if len(m.srv.Requests()) != 0 {
		t.Error("a refused start reached the model")
	}
	nothingMade(t, dir)
	help := ultra(t, dir, "run", "--help")
	if !strings.Contains(help.stdout, "at least 1 (default 200)") || !strings.Contains(help.stdout, "(default: no cost limit)") {
		t.Errorf("run --help does not say the budgets' defaults:\n%s", help.stdout)
	}
}

// -v is --verbose everywhere; --version has no short form and names the
// commit the binary was built from.
func TestNewUserVersionAndV(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	v := ultra(t, dir, "--version")
	info, _ := exec.Command("go", "version", "-m", ultraBin).Output()
	rev := regexp.MustCompile(`(?m)^\s*build\s+vcs\.revision=([0-9a-f]+)`).FindSubmatch(info)
	if rev != nil {
		if v.code != 0 || !regexp.MustCompile(`^ultra \S+ \(commit `+string(rev[1][:7])+`(, modified)?\)\n$`).MatchString(v.stdout) {
			t.Errorf("--version: exit %d %q (built from %s)", v.code, v.stdout, rev[1])
		}
	} else if v.code != 0 || !regexp.MustCompile(`^ultra \S+\n$`).MatchString(v.stdout) {
		t.Errorf("--version without VCS information: exit %d %q", v.code, v.stdout)
	}
	// -v is never the version: where a command has no --verbose, it is
	// an unknown flag that says where -v belongs.
	if short := ultra(t, dir, "-v"); strings.Contains(short.stdout, v.stdout) {
		t.Errorf("ultra -v prints the version: %q", short.stdout)
	}
	short := ultra(t, dir, "runs", "-v")
	if short.code != 2 || !strings.Contains(short.stderr, "-v is --verbose") || !strings.Contains(short.stderr, "ultra --version") {
		t.Errorf("ultra runs -v: exit %d %q", short.code, short.stderr)
	}
	help := ultra(t, dir, "run", "--help")
	if !strings.Contains(help.stdout, "-v, --verbose") {
		t.Errorf("run --help lacks -v, --verbose:\n%s", help.stdout)
	}
}

// settle waits (up to 10s) until no process works under dir any more: the
// sandboxed tests of a killed run die with it, but not in the same instant.
func settle(t *testing.T, dir string) {
	t.Helper()
	t.Cleanup(func() {
		var out []byte
		for i := 0; i < 100; i++ {
			if out, _ = exec.Command("pgrep", "-af", dir).Output(); len(bytes.TrimSpace(out)) == 0 {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("processes of the killed run outlived it by 10s:\n%s", out)
	})
}

// A model the server does not list is refused before anything is made,
// naming what it serves; a server without a model list is left to the
// run.
func TestNewUserWrongModelRefusedBeforeAnything(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModelServing(t, []string{"alpha", "beta"}, fixSteps()...)
	for _, verb := range []string{"run", "plan"} {
		res := ultra(t, dir, verb, "--base-url", m.url, "--model", "nope", "fix calc")
		if res.code != 2 || !strings.Contains(res.stderr, "model nope is not served by "+m.url+"; it serves: alpha, beta") ||
			!strings.Contains(res.stderr, "--model") {
			t.Errorf("%s with a model the server does not list: exit %d\n%s%s", verb, res.code, res.stdout, res.stderr)
		}
	}
	if n := len(m.srv.Requests()); n != 0 {
		t.Errorf("a refused start sent %d model request(s)", n)
	}
	nothingMade(t, dir)
}

// When no model is named and the server serves exactly one, the run
// uses it and says so.
func TestNewUserOneModelServerUsedWithoutModel(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModelServing(t, []string{"only-one"}, fixSteps()[:2]...)
	res := ultra(t, dir, "plan", "--base-url", m.url, "fix calc")
	if res.code != 3 || !strings.Contains(res.stderr, "no model is named and "+m.url+" serves only only-one, so the run uses it") {
		t.Fatalf("plan without --model on a one-model server: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	reqs := m.srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	for _, r := range reqs {
		if r.Model != "only-one" {
			t.Errorf("request %d asked for %q", r.N, r.Model)
		}
	}
}

// A run whose first model request fails (the model list said yes, the
// chat request no) made nothing: it leaves no branch and no worktree,
// ultra gc has nothing to keep, and ultra runs still says why it failed.
func TestNewUserFirstRequestFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, step{"status": 404, "error": "the model scripted does not exist"})
	res := ultra(t, dir, "run", "--base-url", m.url, "--model", "scripted", "fix calc")
	if res.code != 1 || !strings.Contains(res.stdout+res.stderr, "the run made nothing, so its branch and worktree are removed") {
		t.Fatalf("a failed first request: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	noBranchOrWorktree(t, dir)
	r := ultra(t, dir, "runs", "--json")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v\n%s", err, r.stdout)
	}
	if b, _ := json.Marshal(runs[0]); !strings.Contains(string(b), `"failed"`) || !strings.Contains(string(b), "does not exist") {
		t.Errorf("the run's record does not say why it failed: %s", b)
	}
	if tk := ultra(t, dir, "tasks", "--json", "--all"); !strings.Contains(tk.stdout, "made nothing") || strings.Contains(tk.stdout, "ultra resume") {
		t.Errorf("tasks offers to resume a run that made nothing: exit %d\n%s%s", tk.code, tk.stdout, tk.stderr)
	}
	if gc := ultra(t, dir, "gc"); gc.code != 0 || strings.TrimSpace(gc.stdout) != "nothing to collect" {
		t.Errorf("gc after a run that made nothing: exit %d\n%s%s", gc.code, gc.stdout, gc.stderr)
	}
}
