package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// SnapshotRef is the ref that holds a run's last snapshot in the
// repository of the machine that made it (never pushed).
func SnapshotRef(run string) string { return "refs/ultra/snapshots/" + run }

// Snapshot is a run's worktree as it stood at a step: Commit records its
// files (a commit whose parent is the worktree's HEAD), and Bundle holds
// every object another machine needs to rebuild the worktree from the
// run's base commit: the run's branch and the snapshot.
type Snapshot struct {
	Commit string
	Tree   string
	Head   string
	Bundle []byte
}

// TakeSnapshot records the worktree wt of run, whose branch was cut
// from base: nil when nothing changed since last (the tree and HEAD of
// the previous snapshot).
func TakeSnapshot(ctx context.Context, wt, run, base string, last *Snapshot) (*Snapshot, error) {
	tree, err := TreeHash(ctx, wt)
	if err != nil {
		return nil, err
	}
	head, err := gitOut(ctx, wt, nil, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	if last != nil && last.Tree == tree && last.Head == head {
		return nil, nil
	}
	commit, err := gitOutIn(ctx, wt, nil, "snapshot of run "+run+"\n", "commit-tree", tree, "-p", head)
	if err != nil {
		return nil, err
	}
	if _, err := gitOut(ctx, wt, nil, "update-ref", SnapshotRef(run), commit); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "ultra-snapshot-*.bundle")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	f.Close()
	os.Remove(path) // git bundle wants to make the file
	defer os.Remove(path)
	args := []string{"bundle", "create", "--quiet", path, SnapshotRef(run)}
	if base != "" && base != commit {
		args = append(args, "^"+base)
	}
	if _, err := gitOut(ctx, wt, nil, args...); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Commit: commit, Tree: tree, Head: head, Bundle: b}, nil
}

// RestoreSnapshot rebuilds a run's worktree at path in the repository at
// repo (which has the run's base commit) from a snapshot made on another
// machine: the run's branch at the snapshot's HEAD, its files as the
// snapshot holds them (what was not committed yet stays uncommitted).
func RestoreSnapshot(ctx context.Context, repo, run, branch string, s *Snapshot) error {
	dir, err := os.MkdirTemp("", "ultra-restore-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bundle := filepath.Join(dir, "snapshot.bundle")
	if err := os.WriteFile(bundle, s.Bundle, 0o600); err != nil {
		return err
	}
	if _, err := gitOut(ctx, repo, nil, "fetch", "--quiet", "--no-tags", bundle, "+"+SnapshotRef(run)+":"+SnapshotRef(run)); err != nil {
		return err
	}
	got, err := gitOut(ctx, repo, nil, "rev-parse", SnapshotRef(run))
	if err != nil {
		return err
	}
	if got != s.Commit {
		return fmt.Errorf("the snapshot's bundle holds %s, not %s", got, s.Commit)
	}
	if _, err := gitOut(ctx, repo, nil, "branch", "--force", branch, s.Commit+"^"); err != nil {
		return err
	}
	return nil
}

// CheckoutSnapshot makes the worktree at wt (on the run's branch, at the
// snapshot's parent) hold the snapshot's files: tracked, changed, new
// and deleted, the index left at HEAD.
func CheckoutSnapshot(ctx context.Context, wt string, s *Snapshot) error {
	if _, err := gitOut(ctx, wt, nil, "checkout", "--no-overlay", s.Commit, "--", "."); err != nil {
		return err
	}
	_, err := gitOut(ctx, wt, nil, "reset", "--quiet")
	return err
}
