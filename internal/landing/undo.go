package landing

import (
	"context"
	"fmt"

	"github.com/ultra-dev/ultra/internal/workspace"
)

// Undone is what Undo dropped (or, with DryRun, would drop).
type Undone struct {
	Run    string
	Branch string
	// To is the commit the branch was reset to (--to-last-green); "" when
	// the run's branch and worktree were removed.
	To          string
	Tip         string   // the branch's tip before, to recover dropped commits
	Commits     []string // commits dropped from the branch
	Uncommitted []string // worktree files whose changes were dropped
	Worktree    string   // the worktree removed, if any
	DryRun      bool
}

// Undo drops a stopped run's work: its worktree and branch, or with
// toLastGreen the commits and changes after its last green commit.
func Undo(ctx context.Context, o Options, id string, toLastGreen, dryRun bool) (*Undone, error) {
	row, unlock, err := loadRun(ctx, o, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ws := row.Workspace
	if ws.Landed != "" {
		return nil, refused("run %s was landed on %s as %s; undo it there with git revert", row.ID, ws.Base, workspace.Short(ws.Landed))
	}
	if o.Shared {
		return nil, refused("run %s ran on a fleet worker's machine, where its branch and worktree are: undo it there (a copy of its branch you fetched here is yours: git branch -D %s deletes it)", row.ID, ws.Branch)
	}
	res := &Undone{Run: row.ID, Branch: ws.Branch, DryRun: dryRun, Tip: workspace.BranchTip(ctx, o.Repo, ws.Branch)}
	usable := o.worktreeUsable(ctx, row)
	if usable {
		if res.Uncommitted, err = workspace.Changed(ctx, ws.Worktree); err != nil {
			return nil, err
		}
	}
	if toLastGreen {
		if !usable {
			return nil, fmt.Errorf("run %s's worktree was removed; `ultra undo %s` drops its branch", row.ID, row.ID)
		}
		ds, err := decisions(o, row)
		if err != nil {
			return nil, err
		}
		green, err := lastGreen(ctx, o, row, ds)
		if err != nil {
			return nil, err
		}
		if green == "" {
			return nil, refused("run %s has no green commit to go back to; `ultra undo %s` drops all of its work", row.ID, row.ID)
		}
		res.To = green
		res.Commits, _ = workspace.Commits(ctx, o.Repo, green, ws.Branch)
		if dryRun {
			return res, nil
		}
		if workspace.CurrentBranch(ctx, ws.Worktree) != ws.Branch {
			return nil, refused("the run's worktree %s is not on %s", ws.Worktree, ws.Branch)
		}
		return res, workspace.ResetHard(ctx, ws.Worktree, green)
	}
	if res.Tip != "" {
		res.Commits, _ = workspace.Commits(ctx, o.Repo, ws.BaseCommit, ws.Branch)
	}
	if ws.Removed == "" {
		res.Worktree = ws.Worktree
	}
	if dryRun {
		return res, nil
	}
	if ws.Removed == "" {
		if err := workspace.Remove(ctx, o.Repo, ws.Worktree); err != nil {
			return nil, err
		}
		ws.Removed = o.now()
	}
	if err := workspace.DeleteBranch(ctx, o.Repo, ws.Branch); err != nil {
		return nil, err
	}
	ws.Undone = o.now()
	return res, o.Agent.Store.SetWorkspace(ctx, row.ID, ws)
}
