package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// greenProject is calcProject already fixed: its tests pass.
var greenProject = map[string]string{
	"go.mod":            calcProject["go.mod"],
	"calc/calc.go":      strings.Replace(calcProject["calc/calc.go"], "a - b", "a + b", 1),
	"calc/calc_test.go": calcProject["calc/calc_test.go"],
}

// addFileSteps is a model that adds one file and verifies.
func addFileSteps(name, body string) []step {
	return []step{
		planGoals("1. add " + name),
		calls(call("write", map[string]any{"file_path": name, "content": body})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		approve(),
	}
}

// workdirOf is the worktree a run worked in.
func workdirOf(t *testing.T, evs []map[string]any) string {
	t.Helper()
	for _, e := range evs {
		if e["type"] == "run_started" {
			return data(e)["workdir"].(string)
		}
	}
	t.Fatal("no run_started event")
	return ""
}

func head(t *testing.T, dir, ref string) string {
	return strings.TrimSpace(git(t, dir, "rev-parse", ref))
}

func TestRunWorksInItsOwnWorktree(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	base := head(t, dir, "main")
	m := newModel(t, fixSteps()...)
	res := ultra(t, dir, runArgs(m, "make the failing test in calc pass")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id, wt := runID(t, evs), workdirOf(t, evs)
	started := data(ofType(evs, "run_started")[0])
	if wt == dir || started["branch"] != "ultra/"+id || started["base"] != "main" {
		t.Fatalf("run_started %v", started)
	}
	// The person's checkout is untouched: same branch, same commit, no changes.
	if out := git(t, dir, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("the checkout changed:\n%s", out)
	}
	if strings.TrimSpace(git(t, dir, "branch", "--show-current")) != "main" || head(t, dir, "main") != base {
		t.Fatal("the checkout's branch moved")
	}
	if !strings.Contains(readFile(t, filepath.Join(wt, "calc/calc.go")), "return a + b") {
		t.Fatal("the worktree does not hold the fix")
	}
	// Two commits on the run's branch, by ultra: the goal's, of the tree
	// the gate passed, then its records of the final gate and review.
	log := strings.Fields(git(t, dir, "rev-list", "main..ultra/"+id))
	if len(log) != 2 {
		t.Fatalf("commits on the run's branch: %v", log)
	}
	commits := ofType(evs, "commit")
	if len(commits) != 2 || data(commits[1])["commit"] != log[0] || data(commits[0])["commit"] != log[1] || data(commits[0])["status"] != "PASS" {
		t.Fatalf("commit events %v", commits)
	}
	verified := withoutRecords(t, dir, data(ofType(evs, "verify_result")[0])["tree"].(string))
	for _, c := range log {
		if tree := head(t, dir, c+"^{tree}"); withoutRecords(t, dir, tree) != verified {
			t.Fatalf("committed tree %s is not the verified one (beside ultra's records)", tree)
		}
	}
	msg := git(t, dir, "log", "-1", "--format=%an%n%B", log[1])
	for _, want := range []string{"ultra\n", "ultra: G001-add-adds Add adds", "Ultra-Run: " + id, "Ultra-Goal: G001-add-adds", "Ultra-Gate: 1 PASS"} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	// diff shows the change against the base.
	d := ultra(t, dir, "diff", id)
	if d.code != 0 || !strings.Contains(d.stdout, "-\treturn a - b") || !strings.Contains(d.stdout, "+\treturn a + b") {
		t.Fatalf("diff exit %d:\n%s%s", d.code, d.stdout, d.stderr)
	}
	// The code comes first, ultra's own records after it with --records.
	dr := ultra(t, dir, "diff", id, "--records")
	if c, r := strings.Index(dr.stdout, "diff --git a/calc/calc.go"), strings.Index(dr.stdout, "diff --git a/.ultra/runs/"+id+"/"); c < 0 || r < 0 || r < c {
		t.Errorf("diff order: code at %d, records at %d:\n%s", c, r, dr.stdout)
	}
	if s := ultra(t, dir, "diff", id, "--stat"); !strings.Contains(s.stdout, "calc/calc.go") {
		t.Fatalf("diff --stat:\n%s%s", s.stdout, s.stderr)
	}
	// A reader that goes away (one that reads nothing) ends it quietly.
	for _, args := range []string{"diff " + id, "status " + id} {
		sh := exec.Command("bash", "-c", `"$0" `+args+` | true; exit "${PIPESTATUS[0]}"`, ultraBin)
		p := ultraCmd(t, sh, dir, ultraEnv(t))
		// 141 when a write found the reader gone, 0 when all was written
		// first; never an error of ultra's.
		if (p.code != 0 && p.code != 141) || p.stderr != "" {
			t.Errorf("ultra %s | true: exit %d, stderr %q", args, p.code, p.stderr)
		}
	}
	st := ultra(t, dir, "status", id)
	if !strings.Contains(st.stdout, "branch   ultra/"+id+" from main@") {
		t.Fatalf("status:\n%s", st.stdout)
	}
	// ultra commands work from inside the worktree too.
	if r := ultra(t, wt, "status", id); r.code != 0 {
		t.Fatalf("status from the worktree: %d %s", r.code, r.stderr)
	}
}

// Uncommitted files never block a run: it starts from the committed
// tree and says what it does not see, the brief file included (ultra
// reads it; it need not be in the tree).
func TestUncommittedFilesAreSaidNotRefused(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	os.WriteFile(filepath.Join(dir, "BRIEF.md"), []byte("# Fix calc\n\nAdd must add.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "calc/calc.go"), []byte(strings.Replace(calcProject["calc/calc.go"], "a - b", "a + b", 1)), 0o644)
	before := git(t, dir, "status", "--porcelain")
	m := newModel(t, fixSteps()[:2]...)
	res := ultra(t, dir, "plan", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "--brief-file", "BRIEF.md")
	if res.code != 3 || !strings.Contains(res.stderr, "needs_approval") {
		t.Fatalf("plan over untracked files: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	out := res.stdout + res.stderr
	// The brief's file is not in the run, but its text is: said so, and
	// the model is told.
	if !strings.Contains(out, "not in the run: 1 untracked file(s) of your checkout (notes.txt)") ||
		!strings.Contains(out, "the brief BRIEF.md is not in the run as a file: its text is, kept as .ultra/runs/") {
		t.Errorf("the untracked files and the brief are not said:\n%s", out)
	}
	if body := string(m.srv.Requests()[0].Body); !strings.Contains(body, "The person's BRIEF.md is not in your worktree") {
		t.Error("the model is not told where the brief's text is")
	}
	if !strings.Contains(out, "does not see your uncommitted changes to 1 tracked file(s) (calc/calc.go): commit them, or pass --include-uncommitted") {
		t.Errorf("the changed tracked file has no warning:\n%s", out)
	}
	if body := string(m.srv.Requests()[0].Body); !strings.Contains(body, "Add must add.") {
		t.Error("the brief did not reach the model")
	}
	// The run's tree is the committed one: neither file is in it.
	wts := regexp.MustCompile(`(?m)^worktree (.+)$`).FindAllStringSubmatch(git(t, dir, "worktree", "list", "--porcelain"), -1)
	if len(wts) != 2 {
		t.Fatalf("worktrees: %v", wts)
	}
	wt := wts[1][1]
	for _, f := range []string{"BRIEF.md", "notes.txt"} {
		if _, err := os.Stat(filepath.Join(wt, f)); err == nil {
			t.Errorf("%s is in the run's worktree", f)
		}
	}
	if after := git(t, dir, "status", "--porcelain"); after != before {
		t.Fatalf("the checkout changed:\n%s\nwas\n%s", after, before)
	}
}

func TestPreflightRefusesUntrustworthyStarts(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	os.WriteFile(filepath.Join(dir, "calc/calc.go"), []byte(strings.Replace(calcProject["calc/calc.go"], "a - b", "a + b", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("mine\n"), 0o644)
	// With --include-uncommitted the run starts from them; the checkout stays as it was.
	steps := []step{
		calls(call("read", map[string]any{"file_path": "NOTES.md"})),
		planGoals("1. note what was found"),
		calls(call("write", map[string]any{"file_path": "FOUND.md", "content": "mine was there\n"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		approve(),
	}
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "check", "--include-uncommitted")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if out := m.srv.Requests()[1].Body; !strings.Contains(string(out), "mine") {
		t.Fatal("the run did not see the uncommitted file")
	}
	if out := git(t, dir, "status", "--porcelain"); !strings.Contains(out, " M calc/calc.go") || !strings.Contains(out, "?? NOTES.md") {
		t.Fatalf("the checkout's changes are gone:\n%s", out)
	}
	evs := res.events(t)
	if snap := data(ofType(evs, "run_started")[0])["snapshot"]; snap == nil {
		t.Fatal("run_started does not list the snapshot")
	}
	// Landing it over the very changes it started from is refused, with advice.
	land := ultra(t, dir, "land", runID(t, evs))
	if land.code != 3 || !strings.Contains(land.stderr, "git stash -u") || !strings.Contains(land.stderr, "main was not moved") {
		t.Fatalf("land over local changes: %d %s", land.code, land.stderr)
	}
	// A detached HEAD needs --base.
	git(t, dir, "stash", "-u")
	git(t, dir, "checkout", "-q", "--detach")
	res = ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix")...)
	if res.code != 2 || !strings.Contains(res.stderr, "--base") {
		t.Fatalf("detached: exit %d %s", res.code, res.stderr)
	}
	res = ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix", "--base", "main")...)
	if res.code != 0 {
		t.Fatalf("--base main: exit %d %s", res.code, res.stderr)
	}
}

func TestCommitGuardAtTheWire(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	base := head(t, dir, "main")
	refusedCmds := []string{
		"git add -A && git commit -m wip",
		"git push origin main",
		"sh -c 'git checkout main'",
		"env GIT_DIR=" + dir + "/.git git commit -m x",
		"git -C " + dir + " commit --allow-empty -m x",
		"cd " + dir + " && git reset --hard HEAD~1",
		"git commit --no-verify -am x",
		"git branch -f main HEAD",
		"git update-ref refs/heads/main HEAD",
	}
	var steps []step
	steps = append(steps, fixSteps()[:3]...) // read, plan, edit
	for _, c := range refusedCmds {
		steps = append(steps, calls(call("bash", map[string]any{"command": c})))
	}
	// A commit the guard cannot see (inside a script) meets the hook.
	steps = append(steps,
		calls(call("write", map[string]any{"file_path": "sneaky.sh", "content": "git add -A && git commit -qm sneaky\n"})),
		calls(call("bash", map[string]any{"command": "sh sneaky.sh"})),
		calls(call("bash", map[string]any{"command": "rm sneaky.sh && git status --short"})),
	)
	steps = append(steps, fixSteps()[3:]...)
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs := res.events(t)
	id := runID(t, evs)
	n := 0
	for _, e := range ofType(evs, "refusal") {
		if data(e)["layer"] == "git-guard" {
			n++
		}
	}
	if n != len(refusedCmds) {
		for _, e := range ofType(evs, "refusal") {
			t.Log(data(e))
		}
		t.Fatalf("%d git-guard refusals, want %d", n, len(refusedCmds))
	}
	// In the sandbox the repository is read-only: the scripted commit
	// fails before the hook is reached (uncontained, the hook refuses it:
	// TestHookBlocksUnverifiedCommits).
	var refused string
	for _, e := range ofType(evs, "tool_result") {
		if out := data(e)["output"].(string); strings.Contains(out, "commit refused") || strings.Contains(out, "Read-only file system") {
			refused = out
		}
	}
	if refused == "" {
		t.Fatal("the scripted commit was not refused")
	}
	if head(t, dir, "main") != base {
		t.Fatal("main moved")
	}
	if log := strings.Fields(git(t, dir, "rev-list", "main..ultra/"+id)); len(log) != 2 {
		t.Fatalf("the run's branch has %d commits, want ultra's two (the goal, its records)", len(log))
	}
	if out := git(t, dir, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("the checkout changed:\n%s", out)
	}
}

func TestHookBlocksUnverifiedCommits(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	res := ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	wt := workdirOf(t, res.events(t))
	os.WriteFile(filepath.Join(wt, "calc/calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return 0 }\n"), 0o644)
	cmd := exec.Command("git", "commit", "-qam", "unverified")
	cmd.Dir = wt
	cmd.Env = append(ultraEnv(t), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no passing gate decision") {
		t.Fatalf("a direct commit of an unverified tree: %v\n%s", err, out)
	}
}

func TestParallelRunsLandTheirOwnBranches(t *testing.T) {
	t.Parallel()
	dir := repo(t, greenProject)
	names := []string{"a", "b", "c"}
	ids := make([]string, len(names))
	var wg sync.WaitGroup
	errs := make(chan string, len(names))
	for i, n := range names {
		m := newModel(t, addFileSteps("notes/"+n+".txt", n+"\n")...)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := ultraRun(t, dir, ultraEnv(t), runArgs(m, "add note "+names[i])...)
			if res.code != 0 {
				errs <- res.stderr
				return
			}
			ids[i] = runID(t, res.events(t))
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	for i, id := range ids {
		files := git(t, dir, "diff", "--name-only", "main", "ultra/"+id, "--", ".", ":(exclude).ultra")
		if strings.TrimSpace(files) != "notes/"+names[i]+".txt" {
			t.Fatalf("run %s changed %q", id, files)
		}
	}
	for i, id := range ids {
		res := ultra(t, dir, "land", id)
		if res.code != 0 {
			t.Fatalf("land %s: exit %d\n%s%s", id, res.code, res.stdout, res.stderr)
		}
		if i > 0 && !strings.Contains(res.stdout, "main had moved") {
			t.Errorf("land %d should have merged the moved main first:\n%s", i, res.stdout)
		}
	}
	for _, n := range names {
		if got := readFile(t, filepath.Join(dir, "notes", n+".txt")); got != n+"\n" {
			t.Fatalf("main's checkout lacks notes/%s.txt", n)
		}
	}
	if out := git(t, dir, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("the checkout is not clean after landing:\n%s", out)
	}
	if runs := ultra(t, dir, "runs"); strings.Count(runs.stdout, " landed ") != 3 {
		t.Fatalf("runs after landing:\n%s", runs.stdout)
	}
	again := ultra(t, dir, "land", ids[0])
	if again.code == 0 || !strings.Contains(again.stderr, "already landed") {
		t.Fatalf("landing twice: %d %s", again.code, again.stderr)
	}
	// Landed runs' worktrees and branches are collected.
	gc := ultra(t, dir, "gc")
	if gc.code != 0 || strings.Count(gc.stdout, "removed") != 3 {
		t.Fatalf("gc: %d\n%s%s", gc.code, gc.stdout, gc.stderr)
	}
	if out := git(t, dir, "branch", "--list", "ultra/*"); strings.TrimSpace(out) != "" {
		t.Fatalf("branches left: %s", out)
	}
}

func TestLandRefusesWhatIsNotGreen(t *testing.T) {
	t.Parallel()
	// A run that never passed has nothing to land.
	dir := repo(t, calcProject)
	steps := []step{planGoals("1. give up")}
	for i := 0; i < 5; i++ {
		steps = append(steps, text("I cannot."))
	}
	res := ultra(t, dir, runArgs(newModel(t, steps...), "fix calc")...)
	if res.code != 3 {
		t.Fatalf("exit %d", res.code)
	}
	id := runID(t, res.events(t))
	land := ultra(t, dir, "land", id)
	if land.code != 3 || !strings.Contains(land.stderr, "no commit to land") {
		t.Fatalf("land: %d %s", land.code, land.stderr)
	}

	// The base moved and the merge fails the tests: nothing lands.
	dir = repo(t, calcProject)
	res = ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	evs := res.events(t)
	id, wt := runID(t, evs), workdirOf(t, evs)
	tip := head(t, dir, "ultra/"+id)
	os.WriteFile(filepath.Join(dir, "calc/more_test.go"), []byte("package calc\n\nimport \"testing\"\n\nfunc TestMore(t *testing.T) {\n\tif Add(1, 1) != 3 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"), 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "a test the run never saw")
	mainTip := head(t, dir, "main")
	land = ultra(t, dir, "land", id)
	if land.code != 3 || !strings.Contains(land.stderr, "did not pass the gate") {
		t.Fatalf("land of a failing merge: %d\n%s%s", land.code, land.stdout, land.stderr)
	}
	if head(t, dir, "main") != mainTip || head(t, dir, "ultra/"+id) != tip {
		t.Fatal("a refused land moved a branch")
	}
	if out := git(t, wt, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("the worktree was not put back:\n%s", out)
	}

	// Conflicts are refused too.
	os.WriteFile(filepath.Join(dir, "calc/calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return b + a }\n"), 0o644)
	git(t, dir, "commit", "-qam", "conflicting change")
	land = ultra(t, dir, "land", id)
	if land.code != 3 || !strings.Contains(land.stderr, "conflicts in calc/calc.go") {
		t.Fatalf("land of a conflicting merge: %d %s", land.code, land.stderr)
	}
}

func TestUndo(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	base := head(t, dir, "main")
	res := ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	evs := res.events(t)
	id, wt := runID(t, evs), workdirOf(t, evs)
	green := head(t, dir, "ultra/"+id)

	// Work after the last green commit is dropped by --to-last-green, and said.
	os.WriteFile(filepath.Join(wt, "calc/calc.go"), []byte("package calc\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "scratch.txt"), []byte("x"), 0o644)
	dry := ultra(t, dir, "undo", id, "--to-last-green", "--dry-run")
	if dry.code != 0 || !strings.Contains(dry.stdout, "would drop uncommitted changes to 2 file(s)") {
		t.Fatalf("dry run: %d\n%s%s", dry.code, dry.stdout, dry.stderr)
	}
	if _, err := os.Stat(filepath.Join(wt, "scratch.txt")); err != nil {
		t.Fatal("a dry run dropped something")
	}
	u := ultra(t, dir, "undo", id, "--to-last-green")
	if u.code != 0 || !strings.Contains(u.stdout, "calc/calc.go") || !strings.Contains(u.stdout, "scratch.txt") {
		t.Fatalf("undo --to-last-green: %d\n%s%s", u.code, u.stdout, u.stderr)
	}
	if head(t, dir, "ultra/"+id) != green || !strings.Contains(readFile(t, filepath.Join(wt, "calc/calc.go")), "return a + b") {
		t.Fatal("not back at the last green commit")
	}
	if _, err := os.Stat(filepath.Join(wt, "scratch.txt")); err == nil {
		t.Fatal("scratch.txt survived")
	}

	// undo drops the run's branch and worktree, saying which commits.
	u = ultra(t, dir, "undo", id)
	if u.code != 0 || !strings.Contains(u.stdout, "dropped 2 commit(s)") || !strings.Contains(u.stdout, green[:12]) {
		t.Fatalf("undo: %d\n%s%s", u.code, u.stdout, u.stderr)
	}
	if _, err := os.Stat(wt); err == nil {
		t.Fatal("the worktree is still there")
	}
	if out := git(t, dir, "branch", "--list", "ultra/*"); strings.TrimSpace(out) != "" || head(t, dir, "main") != base {
		t.Fatalf("branches after undo: %q", out)
	}
	if r := ultra(t, dir, "resume", id); r.code == 0 || !strings.Contains(r.stderr, "undone") {
		t.Fatalf("resume after undo: %d %s", r.code, r.stderr)
	}
	if r := ultra(t, dir, "undo", id); r.code != 3 {
		t.Fatalf("undo twice: exit %d %s", r.code, r.stderr)
	}
	if runs := ultra(t, dir, "runs"); !strings.Contains(runs.stdout, " undone ") {
		t.Fatalf("runs after undo:\n%s", runs.stdout)
	}
}

func TestKill9ThenGC(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	cmd, id, _ := startInLongCommand(t, dir)
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// A worktree left half-made by a start killed in git worktree add, and
	// a directory git never registered.
	roots, _ := filepath.Glob(filepath.Join(stateHome(t), "ultra", "worktrees", "*"))
	if len(roots) != 1 {
		t.Fatalf("worktree roots: %v", roots)
	}
	git(t, dir, "worktree", "add", "-q", "-b", "ultra/20000101-000000-dead00", filepath.Join(roots[0], "20000101-000000-dead00"))
	os.Remove(filepath.Join(roots[0], "20000101-000000-dead00", ".git"))
	os.MkdirAll(filepath.Join(roots[0], "20000101-000000-beef00", "half"), 0o755)

	gc := ultra(t, dir, "gc")
	if gc.code != 0 || !strings.Contains(gc.stdout, "kept") || !strings.Contains(gc.stdout, "ultra resume "+id) {
		t.Fatalf("gc should keep the resumable run:\n%s%s", gc.stdout, gc.stderr)
	}
	if strings.Count(gc.stdout, "removed") != 2 {
		t.Fatalf("gc should remove the two leftovers:\n%s", gc.stdout)
	}
	gc = ultra(t, dir, "gc", "--force")
	if gc.code != 0 || !strings.Contains(gc.stdout, "removed") {
		t.Fatalf("gc --force:\n%s%s", gc.stdout, gc.stderr)
	}
	entries, _ := os.ReadDir(roots[0])
	if len(entries) != 0 {
		t.Fatalf("left in the worktrees directory: %v", entries)
	}
	if out := git(t, dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Fatalf("git still lists worktrees:\n%s", out)
	}
	if out := git(t, dir, "branch", "--list", "ultra/*"); strings.TrimSpace(out) != "" {
		t.Fatalf("branches left: %s", out)
	}
	if out := git(t, dir, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("the checkout changed:\n%s", out)
	}
	if r := ultra(t, dir, "resume", id); r.code == 0 || !strings.Contains(r.stderr, "removed") {
		t.Fatalf("resume after gc --force: %d %s", r.code, r.stderr)
	}
}

func TestWorkspaceSetup(t *testing.T) {
	t.Parallel()
	files := map[string]string{".gitignore": "deps/\n"}
	for k, v := range greenProject {
		files[k] = v
	}
	files[".ultra/config"] = "[workspace]\nsetup = [\"mkdir -p deps && pwd > deps/made-in\"]\n"
	dir := repo(t, files)
	res := ultra(t, dir, runArgs(newModel(t, addFileSteps("notes/a.txt", "a\n")...), "add a note")...)
	if res.code != 0 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	evs := res.events(t)
	wt := workdirOf(t, evs)
	if got := strings.TrimSpace(readFile(t, filepath.Join(wt, "deps/made-in"))); got != wt {
		t.Fatalf("setup ran in %q, want the worktree %q", got, wt)
	}
	// A failing setup stops the start and leaves nothing behind.
	os.WriteFile(filepath.Join(dir, ".ultra/config"), []byte("[workspace]\nsetup = [\"echo no registry >&2; exit 7\"]\n"), 0o644)
	git(t, dir, "commit", "-qam", "broken setup")
	m := newModel(t, fixSteps()...)
	res = ultra(t, dir, runArgs(m, "fix")...)
	if res.code == 0 || !strings.Contains(res.stderr, "workspace.setup") || !strings.Contains(res.stderr, "no registry") {
		t.Fatalf("failing setup: exit %d %s", res.code, res.stderr)
	}
	if len(m.srv.Requests()) != 0 {
		t.Fatal("a failed setup reached the model")
	}
	if out := git(t, dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 2 {
		t.Fatalf("worktrees after a failed setup:\n%s", out)
	}
	if out := git(t, dir, "branch", "--list", "ultra/*"); strings.Count(out, "ultra/") != 1 {
		t.Fatalf("branches after a failed setup:\n%s", out)
	}
}

// gc leaves runs in progress alone, and runs still being started, even
// when the state directory is reached through a symlink.
func TestGCNeverTouchesLiveOrStartingRuns(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "state")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	stateHomes.Store(t.Name(), link)
	files := map[string]string{".gitignore": "slow\n"}
	for k, v := range calcProject {
		files[k] = v
	}
	dir := repo(t, files)
	cmd, id, _ := startInLongCommand(t, dir)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	gc := ultra(t, dir, "gc")
	if gc.code != 0 || strings.Contains(gc.stdout, "removed") || !strings.Contains(gc.stdout, "in progress") {
		t.Fatalf("gc during a run:\n%s%s", gc.stdout, gc.stderr)
	}
	if out := git(t, dir, "worktree", "list"); strings.Count(out, "\n") != 2 || !strings.Contains(out, id) {
		t.Fatalf("worktrees after gc:\n%s", out)
	}

	// A run whose setup is still running has a worktree but no record yet.
	os.WriteFile(filepath.Join(dir, ".ultra", "config"), []byte("[workspace]\nsetup = [\"sleep 3\"]\n"), 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "slow setup")
	m := newModel(t, fixSteps()...)
	done := make(chan result, 1)
	go func() { done <- ultra(t, dir, runArgs(m, "fix calc")...) }()
	time.Sleep(1500 * time.Millisecond)
	gc = ultra(t, dir, "gc")
	if gc.code != 0 || strings.Contains(gc.stdout, "removed") || !strings.Contains(gc.stdout, "starting") {
		t.Fatalf("gc during a start:\n%s%s", gc.stdout, gc.stderr)
	}
	if res := <-done; res.code != 0 {
		t.Fatalf("the run gc raced with: exit %d\n%s", res.code, res.stderr)
	}
}

// A commit that goes around both the guard and the hook (hidden in a
// script, with --no-verify) cannot be made in the sandbox; without one it
// is caught after the fact.
func TestCommitAroundTheGuardEscalates(t *testing.T) {
	t.Parallel()
	sneak := []step{
		calls(call("write", map[string]any{"file_path": "c.sh", "content": "git add -A && git commit -q --no-verify -m sneaky\n"})),
		calls(call("bash", map[string]any{"command": "sh c.sh; rm c.sh"})),
	}
	t.Run("contained", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t, append(append(fixSteps()[:3:3], sneak...), fixSteps()[3:]...)...)
		res := ultra(t, dir, runArgs(m, "fix calc")...)
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		id := runID(t, res.events(t))
		if log := git(t, dir, "log", "--format=%s", "main..ultra/"+id); strings.Contains(log, "sneaky") || strings.Count(log, "\n") != 2 {
			t.Fatalf("the run's branch holds:\n%s", log)
		}
	})
	t.Run("uncontained", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, calcProject)
		m := newModel(t, append(fixSteps()[:3:3], sneak...)...)
		res := ultraWithEnv(t, dir, uncontained, runArgs(m, "--permission-profile", "trusted", "fix calc")...)
		if res.code != 3 {
			t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
		}
		fin := data(ofType(res.events(t), "run_finished")[0])
		if !strings.Contains(fin["reason"].(string), "a commit that went around ultra's checks") {
			t.Fatalf("finish %v", fin)
		}
	})
}

// A link the model committed that points outside the repository is not
// landed in a person's checkout unless they say so.
func TestLandRefusesLinksOutsideTheRepository(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	f := fixSteps()
	// calc/leak reads as calc/x/README.md, but calc/x/y/up is a link to
	// calc: followed as the kernel does, it leaves the repository.
	link := calls(call("bash", map[string]any{"command": "ln -s /etc/hostname calc/host && ln -s calc.go calc/alias && " +
		"mkdir -p calc/x/y && ln -s ../.. calc/x/y/up && ln -s x/y/up/../../README.md calc/leak"}))
	steps := append([]step{f[0], f[1], f[2], link}, f[3:]...)
	res := ultra(t, dir, runArgs(newModel(t, steps...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	mainTip := head(t, dir, "main")
	land := ultra(t, dir, "land", id)
	if land.code != 3 || !strings.Contains(land.stderr, `"calc/host" -> "/etc/hostname" (leaves the repository)`) || !strings.Contains(land.stderr, `"calc/leak"`) ||
		strings.Contains(land.stderr, "calc/alias") || strings.Contains(land.stderr, `"calc/x/y/up"`) {
		t.Fatalf("land: %d\n%s%s", land.code, land.stdout, land.stderr)
	}
	if head(t, dir, "main") != mainTip {
		t.Fatal("a refused land moved main")
	}
	if _, err := os.Lstat(filepath.Join(dir, "calc/host")); err == nil {
		t.Fatal("the link reached the checkout")
	}
	land = ultra(t, dir, "land", id, "--allow-outside-links")
	if land.code != 0 || !strings.Contains(land.stdout, `"calc/host" -> "/etc/hostname"`) {
		t.Fatalf("land --allow-outside-links: %d\n%s%s", land.code, land.stdout, land.stderr)
	}
	if target, err := os.Readlink(filepath.Join(dir, "calc/host")); err != nil || target != "/etc/hostname" {
		t.Fatalf("the link in the checkout: %q %v", target, err)
	}
}

// gc that removes a repository's last worktree removes its folder of
// worktrees too.
func TestGCLeavesNoEmptyFolder(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	res := ultra(t, dir, runArgs(newModel(t, fixSteps()...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	folder := filepath.Dir(workdirOf(t, evs))
	if l := ultra(t, dir, "land", runID(t, evs)); l.code != 0 {
		t.Fatalf("land: exit %d %s", l.code, l.stderr)
	}
	if g := ultra(t, dir, "gc"); g.code != 0 || !strings.Contains(g.stdout, "removed") {
		t.Fatalf("gc: exit %d\n%s%s", g.code, g.stdout, g.stderr)
	}
	if _, err := os.Stat(folder); err == nil {
		entries, _ := os.ReadDir(folder)
		t.Fatalf("gc left the folder %s (%d entries)", folder, len(entries))
	}
}

// TestRedBaseSaidAtTheStart: tests that already fail on the base tree are
// said as soon as the baseline is in (a warning for the person, a note
// for the model), not first at the gate after the work is built.
func TestRedBaseSaidAtTheStart(t *testing.T) {
	t.Parallel()
	files := map[string]string{"sub/sub.go": "package sub\n\nfunc Sub(a, b int) int { return a + b }\n",
		"sub/sub_test.go": "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Fatal(\"Sub\")\n\t}\n}\n"}
	for k, v := range calcProject {
		files[k] = v
	}
	dir := repo(t, files)
	// The model looks around for up to 20 s: the baseline comes in
	// meanwhile, however loaded the machine.
	m := newModel(t,
		step{"repeat": 20, "delay_ms": 1000, "tool_calls": []any{call("glob", map[string]any{"pattern": "**/*_test.go"})}},
		step{"text": "done"},
	)
	res := ultra(t, dir, runArgs(m, "--max-turns", "21", "look")...)
	said := false
	for _, e := range ofType(res.events(t), "warning") {
		if msg, _ := data(e)["message"].(string); strings.Contains(msg, "already fail on the base tree") && strings.Contains(msg, "TestSub") &&
			strings.Contains(msg, "ultra gate waive") {
			said = true
		}
	}
	if !said {
		t.Errorf("no warning of the red base:\n%s", res.stderr)
	}
	reqs := m.srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "already fail on the base tree") {
		t.Error("the model was not told of the red base")
	}
}
