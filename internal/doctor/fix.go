package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// FixResult is what Fix did about one finding.
type FixResult struct {
	ID     string `json:"id"`
	Fixed  bool   `json:"fixed"`
	Would  bool   `json:"would,omitempty"` // a dry run would fix it (nothing was changed)
	Detail string `json:"detail"`          // what was (or would be) done, or why not
}

// Fix applies the report's Auto fixes. Each checks again, right before it
// acts, that what it found still holds and that no live process is on
// the run.
func Fix(ctx context.Context, e Env, r Report) []FixResult { return apply(ctx, e, r, false) }

// DryRun is Fix without changing anything: each result says what Fix
// would do, or why it would not.
func DryRun(ctx context.Context, e Env, r Report) []FixResult { return apply(ctx, e, r, true) }

func apply(ctx context.Context, e Env, r Report, dryRun bool) []FixResult {
	var out []FixResult
	var st *store.Store
	var closeStore func()
	defer func() {
		if closeStore != nil {
			closeStore()
		}
	}()
	for _, f := range r.Findings {
		if !f.Auto {
			continue
		}
		res := FixResult{ID: f.ID}
		var detail string
		var err error
		switch f.Kind() {
		case KindStaleLock, KindStaleStart:
			detail, err = fixLock(f, dryRun)
		case KindGateKey:
			detail, err = fixGateKey(f, dryRun)
		case KindOrphanedWorktree:
			detail, err = fixWorktree(ctx, e, f, dryRun)
		case KindOrphanedBranch:
			if st == nil {
				if st, closeStore, err = e.openStore(); err != nil {
					break
				}
			}
			detail, err = fixBranch(ctx, e, st, f, dryRun)
		case KindStaleHeartbeat:
			if st == nil {
				if st, closeStore, err = e.openStore(); err != nil {
					break
				}
			}
			detail, err = fixHeartbeat(ctx, st, f, dryRun)
		case KindHookMissing, KindHookChanged:
			if st == nil {
				if st, closeStore, err = e.openStore(); err != nil {
					break
				}
			}
			detail, err = fixHooks(ctx, e, st, f, dryRun)
		default:
			err = fmt.Errorf("ultra has no automatic fix for %s", f.Kind())
		}
		switch {
		case err != nil:
			res.Detail = err.Error()
		case dryRun:
			res.Would, res.Detail = true, detail
		default:
			res.Fixed, res.Detail = true, detail
		}
		out = append(out, res)
	}
	return out
}

// fixLock removes a lock or starting marker whose process is gone.
func fixLock(f Finding, dryRun bool) (string, error) {
	b, err := os.ReadFile(f.Path)
	if os.IsNotExist(err) {
		return "", fmt.Errorf("%s is already gone", f.Path)
	}
	if err != nil {
		return "", err
	}
	pid, _ := readPID(f.Path)
	if alive(pid) {
		return "", fmt.Errorf("%s is now held by process %d, which is alive", f.Path, pid)
	}
	if dryRun {
		return "would remove " + f.Path, nil
	}
	// The file must still be the one read: a process may have taken the
	// lock over since.
	if now, err := os.ReadFile(f.Path); err != nil || string(now) != string(b) {
		return "", fmt.Errorf("%s changed while doctor looked at it: left alone", f.Path)
	}
	if err := os.Remove(f.Path); err != nil {
		return "", err
	}
	return "removed " + f.Path, nil
}

func fixGateKey(f Finding, dryRun bool) (string, error) {
	if dryRun {
		return "would chmod 600 " + f.Path, nil
	}
	if err := os.Chmod(f.Path, 0o600); err != nil {
		return "", err
	}
	return "chmod 600 " + f.Path, nil
}

// fixWorktree removes a left-over worktree; its branch goes only when no
// commit would be lost.
func fixWorktree(ctx context.Context, e Env, f Finding, dryRun bool) (string, error) {
	id := f.Run
	if id == "" {
		id = filepath.Base(f.Path)
		if strings.HasPrefix(f.Branch, workspace.BranchPrefix) {
			id = strings.TrimPrefix(f.Branch, workspace.BranchPrefix)
		}
	}
	// Other ultra commands (gc, land, undo, resume) keep off meanwhile.
	var unlock func()
	if !dryRun {
		var err error
		if unlock, err = agent.LockRun(e.StateRoot, id); err != nil {
			return "", err
		}
		defer unlock()
	}
	st, closeStore, err := e.openStore()
	if err != nil {
		return "", err
	}
	defer closeStore()
	rows, err := st.ListRuns(ctx, 1<<30)
	if err != nil {
		return "", err
	}
	listed := false
	if all, err := workspace.List(ctx, e.Root); err == nil {
		for _, l := range all {
			if canon(l.Path) == canon(f.Path) {
				listed = true
			}
		}
	}
	w := observeWorktree(ctx, e, rows, f.Path, f.Branch, listed)
	switch {
	case w.Starting:
		return "", fmt.Errorf("a run is starting in %s", f.Path)
	case w.Live:
		return "", fmt.Errorf("run %s is in progress in %s", w.Run, f.Path)
	case w.Run != "" && w.RunState == "":
		return "", fmt.Errorf("%s is run %s's worktree again", f.Path, w.Run)
	case w.Changed != 0:
		return "", fmt.Errorf("%s has uncommitted changes now", f.Path)
	case !listed && w.HasGit:
		return "", fmt.Errorf("%s holds a .git of its own", f.Path)
	}
	if dryRun {
		return "would remove the worktree " + f.Path + branchPlan(ctx, e, f.Branch), nil
	}
	if listed {
		if err := workspace.Remove(ctx, e.Root, f.Path); err != nil {
			return "", err
		}
	} else if err := os.RemoveAll(f.Path); err != nil {
		return "", err
	}
	_ = workspace.Prune(ctx, e.Root)
	detail := "removed the worktree " + f.Path
	if f.Branch == "" || !strings.HasPrefix(f.Branch, workspace.BranchPrefix) || workspace.BranchTip(ctx, e.Root, f.Branch) == "" {
		return detail, nil
	}
	if row := runOf(rows, "", f.Branch); row != nil && runState(row) != "undone" {
		return detail + "; branch " + f.Branch + " kept: run " + row.ID + " has it", nil
	}
	switch n := uniqueCommits(ctx, e.Root, f.Branch); {
	case n == 0:
		if err := workspace.DeleteBranch(ctx, e.Root, f.Branch); err != nil {
			return detail + "; branch " + f.Branch + " kept: " + err.Error(), nil
		}
		return detail + " and its branch " + f.Branch + " (its commits are on other refs)", nil
	case n < 0:
		return detail + "; branch " + f.Branch + " kept: git could not tell whether its commits are elsewhere", nil
	default:
		return fmt.Sprintf("%s; branch %s kept: it holds %d commit(s) no other ref has (git log %s)", detail, f.Branch, n, f.Branch), nil
	}
}

func branchPlan(ctx context.Context, e Env, branch string) string {
	if branch == "" || !strings.HasPrefix(branch, workspace.BranchPrefix) {
		return ""
	}
	if n := uniqueCommits(ctx, e.Root, branch); n != 0 {
		return " (its branch " + branch + " would be kept: commits only it has)"
	}
	return " and its branch " + branch
}

// fixBranch deletes an ultra/ branch no run has, if it is still on a
// branch outside ultra/ and no run is starting on it.
func fixBranch(ctx context.Context, e Env, st *store.Store, f Finding, dryRun bool) (string, error) {
	rows, err := st.ListRuns(ctx, 1<<30)
	if err != nil {
		return "", err
	}
	if row := runOf(rows, "", f.Branch); row != nil {
		return "", fmt.Errorf("run %s has %s now", row.ID, f.Branch)
	}
	if agent.Starting(e.StateRoot, strings.TrimPrefix(f.Branch, workspace.BranchPrefix)) {
		return "", fmt.Errorf("a run is starting on %s", f.Branch)
	}
	if p := workspace.CheckedOut(ctx, e.Root, f.Branch); p != "" {
		return "", fmt.Errorf("%s is checked out in %s", f.Branch, p)
	}
	merged, unique := branchReach(ctx, e.Root, f.Branch)
	if !merged || unique != 0 {
		return "", fmt.Errorf("%s holds commits no branch outside ultra/ has now", f.Branch)
	}
	if dryRun {
		return "would delete branch " + f.Branch, nil
	}
	tip := workspace.BranchTip(ctx, e.Root, f.Branch)
	// Delete it only if it did not move since it was checked.
	if _, err := workspace.Git(ctx, e.Root, "update-ref", "-d", "refs/heads/"+f.Branch, tip); err != nil {
		return "", err
	}
	return fmt.Sprintf("deleted branch %s (was %s)", f.Branch, workspace.Short(tip)), nil
}

// fixHeartbeat records a run whose process is gone as interrupted.
func fixHeartbeat(ctx context.Context, st *store.Store, f Finding, dryRun bool) (string, error) {
	row, err := st.GetRun(ctx, f.Run)
	if err != nil {
		return "", err
	}
	if row.Status != agent.StatusRunning || row.PID != f.PID {
		return "", fmt.Errorf("run %s is %s (pid %d) now", row.ID, row.Status, row.PID)
	}
	if alive(row.PID) {
		return "", fmt.Errorf("run %s's process %d is alive", row.ID, row.PID)
	}
	if dryRun {
		return "would record run " + row.ID + " as interrupted", nil
	}
	ok, err := st.MarkInterrupted(ctx, row.ID, row.PID, fmt.Sprintf("interrupted: its process %d was gone (ultra doctor fix)", row.PID))
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("run %s changed while doctor looked at it: left alone", row.ID)
	}
	return fmt.Sprintf("recorded run %s as interrupted (ultra resume %s continues it)", row.ID, row.ID), nil
}

// fixHooks installs a run's worktree hooks again.
func fixHooks(ctx context.Context, e Env, st *store.Store, f Finding, dryRun bool) (string, error) {
	row, err := st.GetRun(ctx, f.Run)
	if err != nil {
		return "", err
	}
	check := e.hookCheck(row.ID)
	switch {
	case check == "":
		return "", fmt.Errorf("ultra does not know the hook command to install")
	case alive(row.PID) && row.Status == agent.StatusRunning:
		return "", fmt.Errorf("run %s is in progress", row.ID)
	case worktreeGone(ctx, row) != "":
		return "", fmt.Errorf("run %s's worktree is gone", row.ID)
	}
	if dryRun {
		return "would install run " + row.ID + "'s hooks again", nil
	}
	unlock, err := agent.LockRun(e.StateRoot, row.ID)
	if err != nil {
		return "", err
	}
	defer unlock()
	// InstallHooks chains to the repository's own hooks, which it finds
	// through core.hooksPath: the worktree's own setting (ultra's hooks
	// directory) must not be taken for them.
	wt := row.Workspace.Worktree
	if _, err := workspace.LockedGit(ctx, e.Root, wt, "config", "--worktree", "--get", "core.hooksPath"); err == nil {
		if _, err := workspace.LockedGit(ctx, e.Root, wt, "config", "--worktree", "--unset", "core.hooksPath"); err != nil {
			return "", fmt.Errorf("clearing the hooks setting of %s: %w", wt, err)
		}
	}
	if err := workspace.InstallHooks(ctx, e.Root, row.Workspace.Worktree, hooksDir(e.StateRoot, row.ID), check); err != nil {
		return "", fmt.Errorf("installing run %s's hooks in %s: %w", row.ID, row.Workspace.Worktree, err)
	}
	return "installed run " + row.ID + "'s hooks again in " + hooksDir(e.StateRoot, row.ID), nil
}

// AutoFixable are the findings that code can fix safely (Fix applies
// them), in order.
func AutoFixable(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Auto {
			out = append(out, f)
		}
	}
	return out
}
