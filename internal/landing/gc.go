package landing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Collected is one thing GC did or left alone, and why.
type Collected struct {
	Run    string // "" for a worktree no run knows
	Path   string
	Action string // ActionRemoved, ActionKept; with a dry run ActionWouldRemove instead of ActionRemoved
	Detail string
}

// What GC did with a worktree.
const (
	ActionRemoved     = "removed"
	ActionKept        = "kept"
	ActionWouldRemove = "would remove"
)

// dryRunWording says what a dry run would do, not what it did: "would
// remove" for "removed", "would drop" for "dropped".
func dryRunWording(out []Collected) {
	for i := range out {
		if out[i].Action == ActionRemoved {
			out[i].Action = ActionWouldRemove
		}
		out[i].Detail = strings.ReplaceAll(out[i].Detail, "dropped ", "would drop ")
	}
}

// GC removes the worktrees of finished runs (complete, cancelled, landed)
// and of runs whose worktree broke, and worktrees no run knows (left by a
// run killed while it was being made). It never drops uncommitted changes,
// unmerged commits or a run that can still be resumed unless force; it
// never touches a run in progress. A branch is deleted with its worktree
// when its work is on the base (or force); otherwise it is kept.
func GC(ctx context.Context, o Options, force, dryRun bool) ([]Collected, error) {
	runs, err := o.Agent.Store.ListRuns(ctx, 1<<30)
	if err != nil {
		return nil, err
	}
	var out []Collected
	known := map[string]bool{} // branches and (resolved) paths of worktrees accounted for
	for _, row := range runs {
		ws := row.Workspace
		if ws.Branch != "" {
			known[ws.Branch] = true
		}
		if ws.Worktree == "" || ws.Removed != "" {
			continue
		}
		known[canon(ws.Worktree)] = true
		out = append(out, collectRun(ctx, o, row, force, dryRun))
	}
	// Worktrees no run knows: left by starts that were killed, unless a
	// live process is still making them.
	listed, err := workspace.List(ctx, o.Repo)
	if err != nil {
		if dryRun {
			dryRunWording(out)
		}
		return out, err
	}
	for _, w := range listed {
		p := canon(w.Path)
		if known[p] || known[w.Branch] || !strings.HasPrefix(w.Branch, workspace.BranchPrefix) {
			known[p] = true
			continue
		}
		known[p] = true
		if agent.Starting(o.Agent.StateRoot, filepath.Base(w.Path)) {
			out = append(out, Collected{Path: w.Path, Action: "kept", Detail: "a run is starting in it"})
			continue
		}
		out = append(out, collectOrphan(ctx, o, w.Path, w.Branch, force, dryRun))
	}
	if o.WorktreeDir != "" {
		dir := canon(o.WorktreeDir)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if !e.IsDir() || known[canon(p)] {
				continue
			}
			c := Collected{Path: p, Action: "removed", Detail: "not a worktree of this repository (left by an interrupted start)"}
			switch {
			case agent.Starting(o.Agent.StateRoot, e.Name()):
				c.Action, c.Detail = "kept", "a run is starting in it"
			case hasGit(p) && !force:
				c.Action, c.Detail = "kept", "it holds a .git git does not list for this repository; --force removes it"
			case !dryRun:
				if err := os.RemoveAll(p); err != nil {
					c.Action, c.Detail = "kept", err.Error()
				}
			}
			out = append(out, c)
		}
	}
	if n := agent.PruneGateCache(o.Agent.StateRoot, agent.GateCacheMaxAge, time.Now(), dryRun); n > 0 {
		out = append(out, Collected{Path: gatefile.CacheDir(o.Agent.StateRoot), Action: "removed",
			Detail: fmt.Sprintf("%d gate cache record(s) not used for %d days", n, int(agent.GateCacheMaxAge.Hours()/24))})
	}
	if dryRun {
		dryRunWording(out)
	} else {
		_ = workspace.Prune(ctx, o.Repo)
		if o.WorktreeDir != "" {
			// The repository's folder of worktrees goes with its last one
			// (os.Remove removes only an empty directory).
			_ = os.Remove(o.WorktreeDir)
		}
	}
	return out, nil
}

// canon is path with symlinks resolved, so that paths compare.
func canon(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

func hasGit(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

func collectRun(ctx context.Context, o Options, row *store.Run, force, dryRun bool) Collected {
	ws := row.Workspace
	c := Collected{Run: row.ID, Path: ws.Worktree, Action: "kept"}
	// A run is in progress, or was killed, as ultra runs shows it.
	status := agent.ShownStatus(row)
	if status == agent.StatusRunning {
		c.Detail = "in progress"
		return c
	}
	unlock, err := agent.LockRun(o.Agent.StateRoot, row.ID)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	defer unlock()
	// A resume may have begun since the runs were listed.
	if fresh, err := o.Agent.Store.GetRun(ctx, row.ID); err != nil || agent.ShownStatus(fresh) == agent.StatusRunning {
		c.Detail = "in progress"
		return c
	}
	finished := row.Status == agent.StatusComplete || row.Status == agent.StatusCancelled || ws.Landed != ""
	var dropped []string
	if workspace.Exists(ctx, ws.Worktree) {
		changed, err := workspace.Changed(ctx, ws.Worktree)
		if row.Status == agent.StatusCancelled {
			// A cancelled run's own records (.ultra/) are nobody's work.
			changed = slices.DeleteFunc(changed, func(p string) bool { return strings.HasPrefix(p, ".ultra/") })
		}
		switch {
		case row.Status == agent.StatusComplete && ws.Landed == "" && ws.Undone == "" && !force:
			// Landing a run whose base moved verifies the merge in its
			// worktree: it stays until the run is landed or undone.
			c.Detail = fmt.Sprintf("the run is complete and not landed: ultra land %s (or ultra undo %s); --force removes it", row.ID, row.ID)
			return c
		case !finished && !force:
			// Uncommitted files of a run that can go on are its work in
			// progress (and ultra's records of it): resume keeps them.
			c.Detail = fmt.Sprintf("the run is %s and can be resumed (ultra resume %s); --force removes it", status, row.ID)
			if len(changed) > 0 {
				c.Detail += fmt.Sprintf(", with %d uncommitted file(s)", len(changed))
			}
			return c
		case err != nil && !force:
			c.Detail = "the worktree cannot be read (" + err.Error() + "); --force removes it"
			return c
		case len(changed) > 0 && !force:
			c.Detail = fmt.Sprintf("%d uncommitted file(s) (%s); land or undo the run, or --force drops them", len(changed), workspace.ListSome(changed, 3))
			return c
		case len(changed) > 0:
			dropped = append(dropped, fmt.Sprintf("%d uncommitted file(s)", len(changed)))
		}
	} else if _, err := os.Stat(ws.Worktree); err == nil && !force {
		c.Detail = "the worktree is there but git cannot read it; --force removes it"
		return c
	} else {
		dropped = append(dropped, "a missing or broken worktree")
	}
	// Commits the base does not have (the base as it is now, or as it was
	// when the run started if it is gone).
	unmerged := 0
	tip := workspace.BranchTip(ctx, o.Repo, ws.Branch)
	if ws.Landed == "" && tip != "" {
		base := workspace.BranchTip(ctx, o.Repo, ws.Base)
		if base == "" {
			base = ws.BaseCommit
		}
		commits, _ := workspace.Commits(ctx, o.Repo, base, ws.Branch)
		unmerged = len(commits)
	}
	deleteBranch := unmerged == 0 || force
	c.Action = "removed"
	switch {
	case unmerged > 0 && force:
		dropped = append(dropped, fmt.Sprintf("branch %s with %d unmerged commit(s) (tip %s)", ws.Branch, unmerged, workspace.Short(tip)))
	case unmerged > 0:
		c.Detail = fmt.Sprintf("branch %s kept: %d unmerged commit(s) (ultra land %s, or ultra undo %s)", ws.Branch, unmerged, row.ID, row.ID)
	}
	if len(dropped) > 0 {
		c.Detail = strings.TrimPrefix(c.Detail+"; dropped "+strings.Join(dropped, ", "), "; ")
	}
	if dryRun {
		return c
	}
	if err := workspace.Remove(ctx, o.Repo, ws.Worktree); err != nil {
		c.Action, c.Detail = "kept", err.Error()
		return c
	}
	if deleteBranch {
		_ = workspace.DeleteBranch(ctx, o.Repo, ws.Branch)
	}
	ws.Removed = o.now()
	if err := o.Agent.Store.SetWorkspace(ctx, row.ID, ws); err != nil {
		c.Detail += "; " + err.Error()
	}
	return c
}

func collectOrphan(ctx context.Context, o Options, path, branch string, force, dryRun bool) Collected {
	c := Collected{Path: path, Action: "removed", Detail: "a worktree no run knows (left by an interrupted start)"}
	if changed, _ := workspace.Changed(ctx, path); len(changed) > 0 && !force {
		c.Action, c.Detail = "kept", fmt.Sprintf("a worktree no run knows, with %d uncommitted file(s); --force removes it", len(changed))
		return c
	}
	if dryRun {
		return c
	}
	if err := workspace.Remove(ctx, o.Repo, path); err != nil {
		c.Action, c.Detail = "kept", err.Error()
		return c
	}
	// Delete the branch only when nothing is lost: git's safe delete.
	if _, err := workspace.LockedGit(ctx, o.Repo, o.Repo, "branch", "-d", "--", branch); err != nil && force {
		_ = workspace.DeleteBranch(ctx, o.Repo, branch)
	}
	return c
}
