package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// TakeOver moves a fleet's run whose machine is gone (or that stopped
// short, and a person asked to go on with it anywhere) to this one, in the
// repository repo (a clone with the run's base commit): the run's
// branch and worktree are rebuilt, under dir, from the snapshot its last
// saved step kept (Options.Snapshots), or from its base commit when it
// saved none; the worktree gets the run's hooks and its setup (run on
// the base commit, as a new run's is), its gate decisions come back from
// the shared store, and the run's row points at it. ultra resume then goes on
// from the last saved step: what the dead machine did after it was never
// recorded, and is done once, here.
func TakeOver(ctx context.Context, o Options, row *store.Run, repo, dir string, setup []string) error {
	o = o.withDefaults()
	if row.Status != StatusRunning && !Resumable(row.Status) {
		return fmt.Errorf("run %s is %s: only a run whose machine stopped mid-run, or that stopped short, is taken over", row.ID, row.Status)
	}
	if host, live := drivenElsewhere(ctx, o.Store, row, o.Now()); live {
		return fmt.Errorf("run %s is driven on %s, whose heartbeat is fresh: it is not taken over", row.ID, host)
	}
	ws := row.Workspace
	if ws.Branch == "" || ws.BaseCommit == "" {
		return fmt.Errorf("run %s has no branch to take over", row.ID)
	}
	path := filepath.Join(dir, row.ID)
	// A take-over that failed half-way here left its worktree: it goes.
	_ = workspace.Command(ctx, repo, "worktree", "remove", "--force", path).Run()
	_ = workspace.Command(ctx, repo, "worktree", "prune").Run()
	snap, err := o.Store.SnapshotOf(ctx, row.ID)
	if err != nil {
		return err
	}
	var ws2 *workspace.Snapshot
	if snap != nil {
		ws2 = &workspace.Snapshot{Commit: snap.Commit, Tree: snap.Tree, Head: snap.Head, Bundle: snap.Bundle}
		if err := workspace.RestoreSnapshot(ctx, repo, row.ID, ws.Branch, ws2); err != nil {
			return fmt.Errorf("run %s's snapshot: %w", row.ID, err)
		}
	} else if out, err := workspace.Command(ctx, repo, "branch", "--force", ws.Branch, ws.BaseCommit).CombinedOutput(); err != nil {
		return fmt.Errorf("run %s's branch from its base %s: %s", row.ID, ws.BaseCommit, out)
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("run %s: %s is in the way", row.ID, path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The worktree's setup runs as a new run's does: on the base commit,
	// the person's code, never on files the model wrote (setup is not
	// contained); then the worktree moves to the run's branch and files,
	// keeping what setup made that git ignores.
	if out, err := workspace.Command(ctx, repo, "worktree", "add", "--quiet", "--detach", path, ws.BaseCommit).CombinedOutput(); err != nil {
		return fmt.Errorf("run %s's worktree: %s", row.ID, out)
	}
	for _, c := range setup {
		if err := runSetup(ctx, path, c, 0); err != nil {
			return err
		}
	}
	if out, err := workspace.Command(ctx, path, "checkout", "--quiet", ws.Branch).CombinedOutput(); err != nil {
		return fmt.Errorf("run %s's branch in its worktree: %s", row.ID, out)
	}
	if ws2 != nil {
		if err := workspace.CheckoutSnapshot(ctx, path, ws2); err != nil {
			return fmt.Errorf("run %s's files: %w", row.ID, err)
		}
	}
	check := o.Git.Hook
	if check == "" {
		check = "false"
	} else {
		check += " --state " + workspace.ShellQuote(o.StateRoot) + " --run " + workspace.ShellQuote(row.ID)
	}
	if err := workspace.InstallHooks(ctx, repo, path, filepath.Join(RunDir(o.StateRoot, row.ID), "hooks"), check); err != nil {
		return fmt.Errorf("installing the worktree's pre-commit hook: %w", err)
	}
	if err := restoreShared(ctx, o.Store, row.ID, RunDir(o.StateRoot, row.ID)); err != nil {
		return err
	}
	ws.Worktree = path
	return o.Store.Relocate(ctx, row.ID, repo, path, ws)
}
