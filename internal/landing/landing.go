// Package landing is what a person does with a run's branch once the run
// stopped: see its diff, land it on its base, undo it, and collect the
// worktrees of finished runs. Nothing here loses work silently: every
// command says what it drops, and refuses what it cannot prove safe.
package landing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Options wire the commands to a project.
type Options struct {
	Agent agent.Options // store, state root, verifier, git settings
	Repo  string        // the person's checkout
	// WorktreeDir is where this repository's run worktrees are made.
	WorktreeDir string
	Now         func() time.Time
	// AllowOutsideLinks lands symbolic links the run added that point
	// outside the repository (Land refuses them otherwise).
	AllowOutsideLinks bool
	// Shared: the run is a fleet's, driven on another machine; its
	// decisions are the ones its steps shared (Agent.StateRoot is their
	// view), its branch the one its worker pushed, fetched here, and its
	// worktree is never used from here.
	Shared bool
}

func (o Options) now() string {
	if o.Now == nil {
		o.Now = time.Now
	}
	return o.Now().UTC().Format(time.RFC3339)
}

// ErrRefused is a refusal: the command would break an invariant.
var ErrRefused = errors.New("refused")

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// loadRun finds a run that has a branch and is not being driven now, and
// locks it against other commands; call unlock when done.
func loadRun(ctx context.Context, o Options, id string) (row *store.Run, unlock func(), err error) {
	row, err = o.Agent.Store.GetRun(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	unlock, err = agent.LockRun(o.Agent.StateRoot, row.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", agent.ErrBusy, err)
	}
	// Read again under the lock: what was checked must still hold.
	if row, err = o.Agent.Store.GetRun(ctx, row.ID); err != nil {
		unlock()
		return nil, nil, err
	}
	if err := usable(row); err != nil {
		unlock()
		return nil, nil, err
	}
	if o.Shared && row.Status == agent.StatusRunning {
		unlock()
		return nil, nil, fmt.Errorf("%w: run %s is running on another machine", agent.ErrBusy, row.ID)
	}
	return row, unlock, nil
}

func usable(row *store.Run) error {
	ws := row.Workspace
	switch {
	case ws.Branch == "":
		return refused("run %s has no branch of its own (it worked in the checkout directly)", row.ID)
	case agent.Live(row):
		return fmt.Errorf("%w: run %s (pid %d)", agent.ErrBusy, row.ID, row.PID)
	case ws.Undone != "":
		return refused("run %s was undone at %s: its branch and worktree are gone", row.ID, ws.Undone)
	}
	return nil
}

func decisions(o Options, row *store.Run) ([]gate.Decision, error) {
	return gatefile.Read(agent.RunDir(o.Agent.StateRoot, row.ID))
}

// worktreeUsable reports whether the run's worktree is still there (and
// on this machine).
func (o Options) worktreeUsable(ctx context.Context, row *store.Run) bool {
	return !o.Shared && row.Workspace.Removed == "" && workspace.Exists(ctx, row.Workspace.Worktree)
}

// DiffSpec says what to compare for Diff.
type DiffSpec struct {
	From, To string // commits or trees, for git diff
	// Uncommitted is true when To includes the worktree's uncommitted
	// changes.
	Uncommitted bool
	Header      string
}

// Diff says what `ultra diff` compares: the run's base commit against the
// worktree as it is (committed and uncommitted changes, untracked files
// included) or, when the worktree is gone or committedOnly, against the
// branch's tip.
func Diff(ctx context.Context, o Options, id string, committedOnly bool) (*DiffSpec, error) {
	row, err := o.Agent.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	ws := row.Workspace
	if ws.Branch == "" {
		return nil, fmt.Errorf("run %s has no branch of its own (it worked in the checkout directly)", row.ID)
	}
	spec := &DiffSpec{From: ws.BaseCommit}
	if !committedOnly && ws.Undone == "" && o.worktreeUsable(ctx, row) {
		tree, err := workspace.TreeHash(ctx, ws.Worktree)
		if err != nil {
			return nil, err
		}
		spec.To, spec.Uncommitted = tree, true
		spec.Header = fmt.Sprintf("run %s: %s@%s → worktree %s (committed and uncommitted changes)", row.ID, ws.Base, workspace.Short(ws.BaseCommit), ws.Worktree)
		return spec, nil
	}
	tip := workspace.BranchTip(ctx, o.Repo, ws.Branch)
	if tip == "" {
		if ws.Landed != "" {
			tip = ws.Landed
		} else {
			return nil, fmt.Errorf("run %s's branch %s is gone", row.ID, ws.Branch)
		}
	}
	spec.To = tip
	spec.Header = fmt.Sprintf("run %s: %s@%s → %s@%s (committed changes)", row.ID, ws.Base, workspace.Short(ws.BaseCommit), ws.Branch, workspace.Short(tip))
	return spec, nil
}

// lastGreen is the newest commit of the run's branch (after its base)
// whose tree the gate let through, or "".
func lastGreen(ctx context.Context, o Options, row *store.Run, ds []gate.Decision) (string, error) {
	ws := row.Workspace
	// Each commit with its tree, newest first, in one call.
	out, err := workspace.Git(ctx, o.Repo, "log", "--format=%H %T", "refs/heads/"+ws.Branch, "^"+ws.BaseCommit)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		commit, tree, _ := strings.Cut(line, " ")
		if gate.Green(ds, tree) != nil {
			return commit, nil
		}
	}
	return "", nil
}
