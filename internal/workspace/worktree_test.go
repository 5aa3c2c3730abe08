package workspace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "init", "-q", "-b", "main")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// newWorktree makes run id's worktree of repo dir, as a run starts.
func newWorktree(t *testing.T, dir, id string) *Worktree {
	t.Helper()
	ctx := context.Background()
	w, err := Prepare(ctx, Start{Repo: dir, RunID: id, Dir: filepath.Join(t.TempDir(), "wt")})
	if err != nil {
		t.Fatal(err)
	}
	if err := Create(ctx, dir, w); err != nil {
		t.Fatal(err)
	}
	return w
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestProtected(t *testing.T) {
	for _, c := range []struct {
		branch string
		want   bool
	}{
		{"main", true}, {"master", true}, {"release/1.2", true}, {"refs/heads/main", true},
		{"release", false}, {"release/1/2", false}, {"ultra/x", false}, {"mainline", false},
	} {
		if got := Protected(DefaultProtected, c.branch); got != c.want {
			t.Errorf("Protected(%q) = %v, want %v", c.branch, got, c.want)
		}
	}
}

func TestPreflight(t *testing.T) {
	ctx := context.Background()
	t.Run("no commit", func(t *testing.T) {
		dir := t.TempDir()
		run(t, dir, "init", "-q", "-b", "main")
		_, err := Prepare(ctx, Start{Repo: dir, RunID: "r"})
		assertPreflight(t, err, "no commit yet")
	})
	t.Run("detached", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a": "1"})
		run(t, dir, "checkout", "-q", "--detach")
		_, err := Prepare(ctx, Start{Repo: dir, RunID: "r"})
		assertPreflight(t, err, "--base")
		w, err := Prepare(ctx, Start{Repo: dir, RunID: "r", Base: "main"})
		if err != nil || w.Base != "main" {
			t.Fatalf("--base main from a detached HEAD: %v %+v", err, w)
		}
	})
	t.Run("unknown base", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a": "1"})
		_, err := Prepare(ctx, Start{Repo: dir, RunID: "r", Base: "nope"})
		assertPreflight(t, err, "no such local branch")
	})
	t.Run("uncommitted", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a": "1"})
		os.WriteFile(filepath.Join(dir, "a"), []byte("2"), 0o644)
		os.WriteFile(filepath.Join(dir, "new"), []byte("n"), 0o644)
		os.WriteFile(filepath.Join(dir, "staged"), []byte("s"), 0o644)
		run(t, dir, "add", "staged")
		// The run starts from the committed tree: what it does not see is
		// listed, new files apart from changed tracked ones, never refused.
		w, err := Prepare(ctx, Start{Repo: dir, RunID: "r"})
		if err != nil {
			t.Fatalf("uncommitted files refused a start: %v", err)
		}
		if w.StartCommit != w.BaseCommit || !slices.Equal(w.Untracked, []string{"new"}) || !slices.Equal(w.Modified, []string{"a", "staged"}) {
			t.Fatalf("start %s base %s untracked %v modified %v", w.StartCommit, w.BaseCommit, w.Untracked, w.Modified)
		}
		head := run(t, dir, "rev-parse", "HEAD")
		status := run(t, dir, "status", "--porcelain")
		w, err = Prepare(ctx, Start{Repo: dir, RunID: "r", IncludeUncommitted: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Untracked)+len(w.Modified) != 0 {
			t.Errorf("the snapshot took them, yet %v %v are said to be unseen", w.Untracked, w.Modified)
		}
		if w.StartCommit == w.BaseCommit || w.BaseCommit != head {
			t.Fatalf("start %s base %s head %s", w.StartCommit, w.BaseCommit, head)
		}
		if got := run(t, dir, "show", w.StartCommit+":a"); got != "2" {
			t.Errorf("the snapshot has a = %q", got)
		}
		if got := run(t, dir, "show", w.StartCommit+":new"); got != "n" {
			t.Errorf("the snapshot has new = %q", got)
		}
		if run(t, dir, "rev-parse", "HEAD") != head || run(t, dir, "status", "--porcelain") != status {
			t.Error("the checkout changed")
		}
	})
	t.Run("another base ignores the checkout's changes", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"a": "1"})
		run(t, dir, "branch", "dev")
		os.WriteFile(filepath.Join(dir, "a"), []byte("2"), 0o644)
		if _, err := Prepare(ctx, Start{Repo: dir, RunID: "r", Base: "dev"}); err != nil {
			t.Fatal(err)
		}
		_, err := Prepare(ctx, Start{Repo: dir, RunID: "r", Base: "dev", IncludeUncommitted: true})
		assertPreflight(t, err, "cannot start a run cut from dev")
	})
}

func assertPreflight(t *testing.T, err error, want string) {
	t.Helper()
	var pe *PreflightError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
		t.Fatalf("want a preflight error about %q, got %v", want, err)
	}
}

func TestWorktreeCommitAndHook(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a": "1"})
	w := newWorktree(t, dir, "r1")
	if CurrentBranch(ctx, w.Path) != "ultra/r1" || CurrentBranch(ctx, dir) != "main" {
		t.Fatalf("branches: worktree %q, checkout %q", CurrentBranch(ctx, w.Path), CurrentBranch(ctx, dir))
	}
	if root, _ := ProjectRoot(ctx, w.Path); root != dir {
		t.Errorf("ProjectRoot from the run's worktree = %q, want %q", root, dir)
	}
	// A person's own linked worktree is a project of its own.
	own := filepath.Join(t.TempDir(), "feat")
	run(t, dir, "worktree", "add", "-q", "-b", "feat", own)
	own, _ = filepath.EvalSymlinks(own)
	if root, _ := ProjectRoot(ctx, own); root != own {
		t.Errorf("ProjectRoot from a person's worktree = %q, want %q", root, own)
	}
	run(t, dir, "worktree", "remove", own)
	// A hook that accepts only a marker file's presence.
	hooks := filepath.Join(t.TempDir(), "hooks")
	if err := InstallHooks(ctx, dir, w.Path, hooks, "test -e "+ShellQuote(filepath.Join(hooks, "ok"))); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.Path, "a"), []byte("changed"), 0o644)
	run(t, w.Path, "add", "-A")
	cmd := exec.Command("git", "commit", "-q", "-m", "x")
	cmd.Dir = w.Path
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the hook should refuse the commit: %s", out)
	}
	// Pushing from the worktree is refused by its pre-push hook.
	remote := t.TempDir()
	run(t, remote, "init", "-q", "--bare")
	push := exec.Command("git", "push", "-q", remote, "HEAD:refs/heads/x")
	push.Dir = w.Path
	if out, err := push.CombinedOutput(); err == nil || !strings.Contains(string(out), "a run never publishes") {
		t.Fatalf("a push from the worktree: %v %s", err, out)
	}
	if got, _ := exec.Command("git", "-C", dir, "config", "--get", "core.hooksPath").Output(); len(got) != 0 {
		t.Errorf("the checkout's hooks changed: %q", got)
	}

	tree, err := TreeHash(ctx, w.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CommitTree(ctx, w.Path, "main", tree, "m", Identity{}, DefaultProtected); err == nil {
		t.Fatal("committing to main must be refused")
	}
	c, err := CommitTree(ctx, w.Path, "ultra/r1", tree, "ultra: change", Identity{}, DefaultProtected)
	if err != nil || c == "" {
		t.Fatalf("commit: %q %v", c, err)
	}
	if run(t, dir, "log", "-1", "--format=%an <%ae>", "ultra/r1") != "ultra <ultra@localhost>" {
		t.Error("ultra's commit is not authored by ultra")
	}
	if got, _ := TreeOf(ctx, w.Path, "HEAD"); got != tree {
		t.Errorf("committed tree %s, want %s", got, tree)
	}
	if changed, _ := Changed(ctx, w.Path); len(changed) != 0 {
		t.Errorf("after the commit the worktree shows changes: %v", changed)
	}
	if again, err := CommitTree(ctx, w.Path, "ultra/r1", tree, "again", Identity{}, DefaultProtected); again != "" || err != nil {
		t.Errorf("the same tree again: %q %v", again, err)
	}
	if run(t, dir, "rev-parse", "main") != w.BaseCommit {
		t.Error("main moved")
	}
	if got, _ := Commits(ctx, dir, "main", "ultra/r1"); len(got) != 1 {
		t.Errorf("commits on the branch: %v", got)
	}

	// Merging a moved base: clean and conflicting.
	os.WriteFile(filepath.Join(dir, "b"), []byte("b"), 0o644)
	run(t, dir, "add", "b")
	run(t, dir, "commit", "-q", "-m", "b")
	merged, conflicts, err := MergeTrees(ctx, dir, c, "main")
	if err != nil || merged == "" || len(conflicts) != 0 {
		t.Fatalf("clean merge: %q %v %v", merged, conflicts, err)
	}
	os.WriteFile(filepath.Join(dir, "a"), []byte("main's"), 0o644)
	run(t, dir, "commit", "-q", "-am", "a")
	_, conflicts, err = MergeTrees(ctx, dir, c, "main")
	if err != nil || len(conflicts) != 1 || conflicts[0] != "a" {
		t.Fatalf("conflicting merge: %v %v", conflicts, err)
	}

	// Removal, even of a broken worktree.
	os.Remove(filepath.Join(w.Path, ".git"))
	if err := Remove(ctx, dir, w.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
		t.Error("the worktree directory is still there")
	}
	if list, _ := List(ctx, dir); len(list) != 1 {
		t.Errorf("git still lists %d worktrees", len(list))
	}
	if err := DeleteBranch(ctx, dir, "ultra/r1"); err != nil || BranchTip(ctx, dir, "ultra/r1") != "" {
		t.Errorf("branch not deleted: %v", err)
	}
}

// What ultra reads from the checkout for every run is in the run,
// committed or not: it is never said to be left out.
func TestUntrackedNoteLeavesOutTheSetup(t *testing.T) {
	if n := UntrackedNote([]string{".claude/skills/x/SKILL.md", ".mcp.json", "opencode.jsonc", ".agents/skills/y/SKILL.md"}); n != "" {
		t.Fatalf("%q", n)
	}
	if n := UntrackedNote([]string{".claude/settings.local.json", "notes.txt"}); !strings.Contains(n, "1 untracked file(s) of your checkout (notes.txt)") {
		t.Fatalf("%q", n)
	}
}
