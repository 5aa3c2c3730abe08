package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// worktreeRoot is where ultra makes dir's run worktrees in this test.
func worktreeRoot(t *testing.T, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(stateHome(t), "ultra", "worktrees", filepath.Base(dir)+"-"+hex.EncodeToString(sum[:4]))
}

func TestDoctorFixesStaleLocksAndOrphanedWorktrees(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	root := worktreeRoot(t, dir)
	// A worktree no run knows, at the base: nothing would be lost.
	clean := filepath.Join(root, "20000101-000000-dead00")
	git(t, dir, "worktree", "add", "-q", "-b", "ultra/20000101-000000-dead00", clean)
	// One whose branch holds a commit no other ref has.
	work := filepath.Join(root, "20000101-000000-dead01")
	git(t, dir, "worktree", "add", "-q", "-b", "ultra/20000101-000000-dead01", work)
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("work\n"), 0o644)
	git(t, work, "add", "notes.txt")
	git(t, work, "commit", "-qm", "work only this branch has")
	// A run lock left by a process that is gone.
	lock := filepath.Join(dir, ".ultra", "state", "runs", "20000101-000000-dead02", "lock")
	os.MkdirAll(filepath.Dir(lock), 0o755)
	os.WriteFile(lock, []byte(fmt.Sprint(deadPID(t))), 0o644)

	d := ultra(t, dir, "doctor")
	if d.code != 1 {
		t.Fatalf("doctor exit %d, want 1\n%s%s", d.code, d.stdout, d.stderr)
	}
	for _, want := range []string{
		"stale-lock:20000101-000000-dead02", "rm " + lock,
		"orphaned-worktree:" + clean, "git worktree remove --force " + clean,
		"orphaned-worktree:" + work,
	} {
		if !strings.Contains(d.stdout, want) {
			t.Fatalf("doctor does not say %q:\n%s", want, d.stdout)
		}
	}

	// --json: the whole report.
	j := ultra(t, dir, "doctor", "--json")
	var rep struct {
		Findings []struct {
			ID, Severity, Subject, Problem, Fix string
			Auto                                bool
		}
		Notes       []string
		Environment map[string]any
	}
	if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil || j.code != 1 {
		t.Fatalf("doctor --json: exit %d, %v\n%s", j.code, err, j.stdout)
	}
	ids := map[string]bool{}
	for _, f := range rep.Findings {
		ids[f.ID] = f.Auto
		if f.Severity != "warning" || f.Problem == "" || f.Fix == "" || f.Subject == "" {
			t.Fatalf("finding %+v", f)
		}
	}
	if len(rep.Findings) != 3 || !ids["stale-lock:20000101-000000-dead02"] || !ids["orphaned-worktree:"+clean] || !ids["orphaned-worktree:"+work] {
		t.Fatalf("findings %+v", rep.Findings)
	}
	if rep.Environment["sandbox"] == nil || rep.Environment["git"] == nil || rep.Notes == nil {
		t.Fatalf("report %s", j.stdout)
	}

	// A dry run changes nothing.
	dry := ultra(t, dir, "doctor", "fix", "--dry-run")
	if dry.code != 1 || strings.Count(dry.stdout, "would fix ") != 3 {
		t.Fatalf("dry run: exit %d\n%s%s", dry.code, dry.stdout, dry.stderr)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("the dry run removed the lock")
	}
	if _, err := os.Stat(clean); err != nil {
		t.Fatal("the dry run removed a worktree")
	}

	fix := ultra(t, dir, "doctor", "fix")
	for _, want := range []string{"fixed stale-lock:20000101-000000-dead02", "fixed orphaned-worktree:" + clean, "fixed orphaned-worktree:" + work,
		"branch ultra/20000101-000000-dead01 kept"} {
		if !strings.Contains(fix.stdout, want) {
			t.Fatalf("doctor fix does not say %q:\n%s%s", want, fix.stdout, fix.stderr)
		}
	}
	// The branch with work of its own is never deleted: it is left for a
	// person, so something still needs fixing.
	if fix.code != 1 || !strings.Contains(fix.stdout, "orphaned-branch:ultra/20000101-000000-dead01") || !strings.Contains(fix.stdout, "git branch -D ultra/20000101-000000-dead01") {
		t.Fatalf("doctor fix: exit %d\n%s%s", fix.code, fix.stdout, fix.stderr)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatal("the stale lock is still there")
	}
	for _, p := range []string{clean, work} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s is still there", p)
		}
	}
	if out := git(t, dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Fatalf("git still lists worktrees:\n%s", out)
	}
	if out := git(t, dir, "branch", "--list", "ultra/*"); strings.Contains(out, "dead00") || !strings.Contains(out, "dead01") {
		t.Fatalf("branches after fix: %s", out)
	}
	if log := git(t, dir, "log", "--format=%s", "ultra/20000101-000000-dead01"); !strings.Contains(log, "work only this branch has") {
		t.Fatal("the branch's commit was lost")
	}

	// The person deletes the branch as doctor says; then all is well.
	git(t, dir, "branch", "-D", "ultra/20000101-000000-dead01")
	if d := ultra(t, dir, "doctor"); d.code != 0 || !strings.Contains(d.stdout, "no findings") {
		t.Fatalf("doctor after the fixes: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if out := git(t, dir, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Fatalf("doctor changed the checkout:\n%s", out)
	}
}

func TestDoctorInterruptedRunAndLedger(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	cmd, id, _ := startInLongCommand(t, dir)
	// A live run is nobody's business but its own.
	if d := ultra(t, dir, "doctor"); d.code != 0 || strings.Contains(d.stdout, id) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("doctor during a run: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if f := ultra(t, dir, "doctor", "fix"); f.code != 0 || !strings.Contains(f.stdout, "nothing to fix") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("doctor fix during a run: exit %d\n%s%s", f.code, f.stdout, f.stderr)
	}
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// The row still says running, for a process that is gone.
	d := ultra(t, dir, "doctor")
	if d.code != 1 || !strings.Contains(d.stdout, "stale-heartbeat:"+id) || !strings.Contains(d.stdout, "ultra resume "+id) {
		t.Fatalf("doctor after kill: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	fix := ultra(t, dir, "doctor", "fix")
	if fix.code != 0 || !strings.Contains(fix.stdout, "fixed stale-heartbeat:"+id) {
		t.Fatalf("doctor fix: exit %d\n%s%s", fix.code, fix.stdout, fix.stderr)
	}
	var s map[string]any
	json.Unmarshal([]byte(ultra(t, dir, "status", id, "--json").stdout), &s)
	if s["status"] != "interrupted" {
		t.Fatalf("status after doctor fix: %v", s)
	}
	// An interrupted run is only a note.
	d = ultra(t, dir, "doctor")
	if d.code != 0 || !strings.Contains(d.stdout, "note    run "+id+" was interrupted and can be resumed: ultra resume "+id) {
		t.Fatalf("doctor on an interrupted run: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}

	// Its ledger, edited by hand, is an error a person must look at.
	wt := strings.TrimSpace(git(t, dir, "worktree", "list", "--porcelain"))
	wt = wt[strings.LastIndex(wt, "worktree ")+len("worktree "):]
	wt = wt[:strings.IndexByte(wt, '\n')]
	path := filepath.Join(recordsIn(t, wt), "ledger.jsonl")
	orig, err := os.ReadFile(path)
	if err != nil || len(orig) == 0 {
		t.Fatalf("the run's ledger: %v", err)
	}
	tampered := strings.Replace(string(orig), `"kind":"`, `"kind":"x`, 1)
	os.WriteFile(path, []byte(tampered), 0o644)
	d = ultra(t, dir, "doctor", "--json")
	var rep struct {
		Findings []struct {
			ID, Severity, Fix string
			Auto              bool
		}
	}
	json.Unmarshal([]byte(d.stdout), &rep)
	if d.code != 1 || len(rep.Findings) != 1 || rep.Findings[0].ID != "ledger-tampered:"+id || rep.Findings[0].Severity != "error" ||
		rep.Findings[0].Auto || !strings.Contains(rep.Findings[0].Fix, "ultra goals ledger --run "+id+" --verify") {
		t.Fatalf("doctor on a tampered ledger: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	// doctor fix leaves it to a person.
	if f := ultra(t, dir, "doctor", "fix"); f.code != 1 || !strings.Contains(f.stdout, "ledger-tampered:"+id) {
		t.Fatalf("doctor fix on a tampered ledger: exit %d\n%s%s", f.code, f.stdout, f.stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != tampered {
		t.Fatal("doctor fix changed the ledger")
	}

	// A torn last line names the repair.
	os.WriteFile(path, append(append([]byte{}, orig...), `{"seq":`...), 0o644)
	d = ultra(t, dir, "doctor")
	if d.code != 1 || !strings.Contains(d.stdout, "ledger-torn:"+id) || !strings.Contains(d.stdout, "ultra goals ledger --run "+id+" --repair-torn") {
		t.Fatalf("doctor on a torn ledger: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if r := ultra(t, dir, "goals", "ledger", "--run", id, "--repair-torn"); r.code != 0 {
		t.Fatalf("repair: %d %s", r.code, r.stderr)
	}
	if d := ultra(t, dir, "doctor"); d.code != 0 {
		t.Fatalf("doctor after the repair: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
}

// A run's worktree hooks, removed, are a warning doctor fix repairs.
func TestDoctorReinstallsHooks(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	cmd, id, _ := startInLongCommand(t, dir)
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	hook := filepath.Join(dir, ".ultra", "state", "runs", id, "hooks", "pre-commit")
	orig, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(hook)
	d := ultra(t, dir, "doctor")
	if d.code != 1 || !strings.Contains(d.stdout, "hook-missing:"+id) {
		t.Fatalf("doctor without the hook: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if f := ultra(t, dir, "doctor", "fix"); f.code != 0 || !strings.Contains(f.stdout, "fixed hook-missing:"+id) {
		t.Fatalf("doctor fix: exit %d\n%s%s", f.code, f.stdout, f.stderr)
	}
	if b, err := os.ReadFile(hook); err != nil || string(b) != string(orig) {
		t.Fatalf("the hook installed again differs:\n%s\nwant:\n%s", b, orig)
	}
}

// A configuration every other command refuses is doctor's finding too,
// named with its file and line, in a repository and outside one (the
// user's own config); doctor still checks the rest.
func TestDoctorReportsAConfigOthersRefuse(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{"go.mod": "module x\n\ngo 1.21\n", ".ultra/config": "[model\nname = \"x\"\n"})
	if r := ultra(t, dir, "runs"); r.code != 2 || !strings.Contains(r.stderr, ".ultra/config:") {
		t.Fatalf("runs with a broken config: exit %d %s", r.code, r.stderr)
	}
	d := ultra(t, dir, "doctor")
	if d.code != 1 || !strings.Contains(d.stdout, "error   config") || !strings.Contains(d.stdout, filepath.Join(".ultra", "config")+":") ||
		strings.Contains(d.stdout, "not in a git repository") || !strings.Contains(d.stdout, "sandbox") {
		t.Fatalf("doctor with a broken project config: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}

	env := ultraEnv(t)
	home := configHome(t)
	os.MkdirAll(filepath.Join(home, "ultra"), 0o755)
	os.WriteFile(filepath.Join(home, "ultra", "config.toml"), []byte("[run]\nmax_turns = \"many\"\n"), 0o644)
	env = append(env, "XDG_CONFIG_HOME="+home)
	outside := t.TempDir()
	u := ultraRun(t, outside, env, "doctor")
	if u.code != 1 || !strings.Contains(u.stdout, "config.toml:2") || !strings.Contains(u.stdout, "max_turns") {
		t.Fatalf("doctor with a broken user config outside a repository: exit %d\n%s%s", u.code, u.stdout, u.stderr)
	}
}
