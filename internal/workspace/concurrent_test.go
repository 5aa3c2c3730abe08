package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// git reads every worktree's administrative files when it sets
// worktree-scoped configuration or deletes a branch, and dies on one that
// another process is half-way through adding (an empty commondir). While
// the repository's worktree lock is held (as worktree add holds it), those
// commands wait for it instead of failing.
func TestWorktreeReadersWaitForTheLock(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a": "1"})
	w := newWorktree(t, dir, "r1")
	run(t, dir, "branch", "spare")
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"InstallHooks", func() error {
			return InstallHooks(ctx, dir, w.Path, filepath.Join(t.TempDir(), "hooks"), "true")
		}},
		{"DeleteBranch", func() error { return DeleteBranch(ctx, dir, "spare") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			unlock := lockWorktrees(ctx, dir)
			half := filepath.Join(dir, ".git", "worktrees", "half")
			if err := os.MkdirAll(half, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(half, "gitdir"), []byte(filepath.Join(t.TempDir(), ".git")+"\n"), 0o644)
			os.WriteFile(filepath.Join(half, "commondir"), nil, 0o644)
			done := make(chan error, 1)
			go func() { done <- c.do() }()
			select {
			case err := <-done:
				unlock()
				t.Fatalf("ran while another process was adding a worktree (err %v)", err)
			case <-time.After(300 * time.Millisecond):
			}
			os.RemoveAll(half)
			unlock()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
	if BranchTip(ctx, dir, "spare") != "" {
		t.Error("the branch was not deleted")
	}
	if got := run(t, w.Path, "config", "--worktree", "--get", "core.hooksPath"); got == "" {
		t.Error("the worktree has no hooks setting")
	}
}

// A wait for the lock ends with its context: a holder that never lets go
// (a process stuck, or one that should not have reached the lock) does
// not stall ultra for ever.
func TestWorktreeLockWaitEndsWithTheContext(t *testing.T) {
	dir := newRepo(t, map[string]string{"a": "1"})
	unlock := lockWorktrees(context.Background(), dir)
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := LockedGit(ctx, dir, dir, "worktree", "list"); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("ran while the lock was held")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting after its context ended")
	}
	if p, err := EnsureWorktreeLock(filepath.Join(dir, ".git")); err != nil || p != filepath.Join(dir, ".git", "ultra-worktrees.lock") {
		t.Fatalf("lock file %q %v", p, err)
	}
}
