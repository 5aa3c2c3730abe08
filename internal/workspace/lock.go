package workspace

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// worktreeGit runs a git worktree command in repo under its worktree lock.
func worktreeGit(ctx context.Context, repo string, args ...string) (string, error) {
	return LockedGit(ctx, repo, repo, append([]string{"worktree"}, args...)...)
}

// LockedGit runs git in dir while holding repo's worktree lock. git reads
// every worktree's administrative files while it adds, lists, removes or
// prunes one, sets worktree-scoped configuration (config --worktree) or
// deletes a branch (branch -d/-D), and dies on one another process is
// half-way through making ("failed to read .git/worktrees/…/commondir"):
// ultra's processes take turns for all of these.
func LockedGit(ctx context.Context, repo, dir string, args ...string) (string, error) {
	unlock := lockWorktrees(ctx, repo)
	defer unlock()
	return gitOut(ctx, dir, nil, args...)
}

// lockWorktrees takes an advisory lock on a file in the repository's git
// directory (best effort: without the file, no lock), waiting while ctx
// lasts.
func lockWorktrees(ctx context.Context, repo string) func() {
	common := filepath.Join(repo, ".git")
	if fi, err := os.Stat(common); err != nil || !fi.IsDir() {
		c, err := gitOut(ctx, repo, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			return func() {}
		}
		common = c
	}
	f, err := os.OpenFile(WorktreeLockFile(common), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return func() {}
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK || ctx.Err() != nil {
			f.Close()
			return func() {}
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// WorktreeLockFile is the lock ultra's processes take turns on, in the
// repository's git directory common: contained commands must not see it
// (one that held it would stall every other run's start and end).
func WorktreeLockFile(common string) string {
	return filepath.Join(common, "ultra-worktrees.lock")
}

// EnsureWorktreeLock makes the lock file of git directory common exist,
// so that a sandbox can hide it, and returns its path.
func EnsureWorktreeLock(common string) (string, error) {
	p := WorktreeLockFile(common)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return "", err
	}
	return p, f.Close()
}

// Prune forgets worktrees whose directories are gone.
func Prune(ctx context.Context, repo string) error {
	_, err := worktreeGit(ctx, repo, "prune")
	return err
}
