package landing

import (
	"context"
	"fmt"
	"strings"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Landed is what Land did.
type Landed struct {
	Run     string
	Base    string
	From    string   // the base's tip before
	Commit  string   // the base's new tip
	Commits []string // the run's commits that reached the base
	// Merge is set when the base had moved: the merge of the base into
	// the run's branch, verified by the gate before landing.
	Merge     string
	MergeGate *gate.Decision
	// Uncommitted lists worktree files changed after the last commit;
	// they were not landed.
	Uncommitted []string
	// Links are the symbolic links the run added that point outside the
	// repository, landed because Options.AllowOutsideLinks said so.
	Links []workspace.Link
	// Waived is the decision that let the tip through when it was a
	// person's waiver rather than the tests.
	Waived *gate.Decision
}

// Land merges a stopped run's branch into its base, only if the branch's
// tip is a tree the gate let through. When the base moved since the run
// started, the base is first merged into the run's branch in its worktree
// and that tree verified; only a green merge is committed and landed. The
// base moves by fast-forward: in the checkout that has it checked out
// (git refuses if that would overwrite local changes), else by ref.
func Land(ctx context.Context, o Options, id string) (*Landed, error) {
	row, unlock, err := loadRun(ctx, o, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ws := row.Workspace
	if p := row.TaskRow.Parent; p != "" {
		return nil, refused("run %s is a worker of the parallel run %s: its goal lands on that run's branch, and that run lands (ultra land %s)", row.ID, p, p)
	}
	if ws.Landed != "" {
		return nil, refused("run %s was already landed on %s as %s", row.ID, ws.Base, workspace.Short(ws.Landed))
	}
	tip := workspace.BranchTip(ctx, o.Repo, ws.Branch)
	if tip == "" && o.Shared {
		return nil, refused("run %s ran on another machine, and its branch %s is not in this checkout: fetch the branch its worker pushed (git fetch origin %s:%s), then land again",
			row.ID, ws.Branch, ws.Branch, ws.Branch)
	}
	if tip == "" {
		return nil, refused("run %s's branch %s is gone", row.ID, ws.Branch)
	}
	if tip == ws.BaseCommit {
		return nil, refused("run %s has no commit to land: ultra commits a run's work when its gate passes, and this run's gate never did", row.ID)
	}
	ds, err := decisions(o, row)
	if err != nil {
		return nil, err
	}
	tipTree, err := workspace.TreeOf(ctx, o.Repo, tip)
	if err != nil {
		return nil, err
	}
	green := gate.Green(ds, tipTree)
	if green == nil {
		return nil, refused("the tip of %s (%s) is a tree the gate never passed; `ultra undo %s --to-last-green` goes back to the last green commit", ws.Branch, workspace.Short(tip), row.ID)
	}
	// Another spelling of .ultra or .git would be ultra's records or git's
	// own files in a case-insensitive checkout (ultra never commits one;
	// a branch changed outside ultra might hold one).
	if vs, err := workspace.CaseVariants(ctx, o.Repo, tipTree); err != nil {
		return nil, err
	} else if len(vs) > 0 {
		return nil, refused("the tip of %s holds %s, another spelling of .ultra or .git, which a case-insensitive checkout takes for ultra's records or git's own files: nothing lands", ws.Branch, strings.Join(vs, ", "))
	}
	// Nothing under .ultra/ lands but the run's own records, as files:
	// not another run's records, not ultra's state (where a link would
	// lead ultra's writes, or a hook be run), not the project's config.
	if bad, err := workspace.ForeignUltraPaths(ctx, o.Repo, ws.From(), tip, agent.RecordsOf(row).Paths()); err != nil {
		return nil, err
	} else if len(bad) > 0 {
		return nil, refused("the tip of %s changes %s under .ultra/, which no run may: only a run's own records land. Nothing was landed", ws.Branch, workspace.ListSome(bad, 5))
	}
	res := &Landed{Run: row.ID, Base: ws.Base}
	if green.Status == gate.Waived || green.Waiver != nil {
		res.Waived = green // a person accepted it; the tests did not pass it
	}
	// A link the model committed may point at the person's keys: the
	// gate's tests pass through it, and in the person's checkout whatever
	// copies or publishes the tree would follow it.
	if res.Links, err = outsideLinks(ctx, o, row, ws.BaseCommit, tip); err != nil {
		return nil, err
	}
	if o.worktreeUsable(ctx, row) {
		res.Uncommitted, _ = workspace.Changed(ctx, ws.Worktree)
	}
	baseTip := workspace.BranchTip(ctx, o.Repo, ws.Base)
	if baseTip == "" {
		return nil, fmt.Errorf("the base branch %s of run %s no longer exists", ws.Base, row.ID)
	}
	if !workspace.IsAncestor(ctx, o.Repo, baseTip, tip) {
		merge, d, err := mergeBase(ctx, o, row, tip, baseTip, res.Uncommitted)
		if err != nil {
			return nil, err
		}
		res.Merge, res.MergeGate, tip = merge, d, merge
		// What lands is the merge: its links against the base as it is
		// now (the person's own links stay theirs).
		if res.Links, err = outsideLinks(ctx, o, row, baseTip, tip); err != nil {
			return nil, err
		}
	}
	res.Commits, _ = workspace.Commits(ctx, o.Repo, baseTip, tip)
	if where := workspace.CheckedOut(ctx, o.Repo, ws.Base); where != "" {
		if _, err := workspace.Git(ctx, where, "merge", "--ff-only", "--quiet", tip); err != nil {
			kept := "the run's branch keeps its work"
			if res.Merge != "" {
				kept = fmt.Sprintf("the run's branch keeps its work and the verified merge %s", workspace.Short(res.Merge))
			}
			advice := ""
			if changed, _ := workspace.Changed(ctx, where); len(changed) > 0 {
				advice = fmt.Sprintf(" %s has local changes (%s): commit or stash them (git stash -u; if the run started from them with --include-uncommitted, they are in what lands), then land again.",
					where, workspace.ListSome(changed, 5))
			}
			return nil, refused("fast-forwarding %s in %s failed: %v. %s was not moved; %s.%s", ws.Base, where, err, ws.Base, kept, advice)
		}
	} else if _, err := workspace.Git(ctx, o.Repo, "update-ref", "-m", "ultra land "+row.ID, "refs/heads/"+ws.Base, tip, baseTip); err != nil {
		return nil, fmt.Errorf("moving %s: %w", ws.Base, err)
	}
	res.From, res.Commit = baseTip, tip
	ws.Landed, ws.LandedAt = tip, o.now()
	if err := o.Agent.Store.SetWorkspace(ctx, row.ID, ws); err != nil {
		return res, err
	}
	return res, nil
}

// outsideLinks are the links tree `to` would bring into the person's
// checkout that leave the repository (workspace.LinksOutside); an error
// refuses landing unless the person allowed them.
func outsideLinks(ctx context.Context, o Options, row *store.Run, from, to string) ([]workspace.Link, error) {
	links, err := workspace.LinksOutside(ctx, o.Repo, from, to)
	if err != nil || len(links) == 0 || o.AllowOutsideLinks {
		return links, err
	}
	var ls []string
	for _, l := range links {
		ls = append(ls, fmt.Sprintf("%q -> %q (%s)", l.Path, l.Target, l.Why)) // model-chosen: quoted for the terminal
	}
	return nil, refused("run %s's branch brings %d symbolic link(s) that a landing refuses: %s. Nothing was landed; check them (ultra diff %s), then land with --allow-outside-links, or resume the run with guidance to remove them",
		row.ID, len(ls), workspace.ListSome(ls, 5), row.ID)
}

// mergeBase merges the moved base into the run's branch in its worktree,
// verifies the merged tree and commits it only if the gate lets it
// through; otherwise the worktree is put back as it was.
func mergeBase(ctx context.Context, o Options, row *store.Run, tip, baseTip string, uncommitted []string) (string, *gate.Decision, error) {
	ws := row.Workspace
	// ultra's records (goals.json, the ledger, the brief) are the run's:
	// each run keeps its own, and legacy records of a run landed before it
	// give way.
	tree, conflicts, err := workspace.MergeTreesKeeping(ctx, o.Repo, tip, baseTip, agent.RecordsOf(row).Paths())
	if err != nil {
		return "", nil, err
	}
	if len(conflicts) > 0 {
		return "", nil, refused("%s moved since run %s started and merging it into %s conflicts in %s: merge by hand, or resume the run with guidance",
			ws.Base, row.ID, ws.Branch, strings.Join(conflicts, ", "))
	}
	if o.Shared {
		return "", nil, refused("%s moved since run %s started, and the merged tree must be verified before landing, in the run's worktree, which is on the machine that ran it: land it there, or merge %s by hand", ws.Base, row.ID, ws.Branch)
	}
	if !o.worktreeUsable(ctx, row) {
		return "", nil, refused("%s moved since run %s started, and the merged tree must be verified before landing, but the run's worktree was removed", ws.Base, row.ID)
	}
	if len(uncommitted) > 0 {
		return "", nil, refused("%s moved since run %s started, and the merge must be verified in the run's worktree, which has uncommitted changes (%s): `ultra undo %s --to-last-green` drops them",
			ws.Base, row.ID, strings.Join(uncommitted, ", "), row.ID)
	}
	if workspace.CurrentBranch(ctx, ws.Worktree) != ws.Branch {
		return "", nil, refused("the run's worktree %s is not on %s", ws.Worktree, ws.Branch)
	}
	if err := workspace.CheckoutTree(ctx, ws.Worktree, tree); err != nil {
		return "", nil, err
	}
	restore := func() { _ = workspace.ResetHard(context.Background(), ws.Worktree, tip) }
	d, _, path, err := agent.VerifyTree(ctx, o.Agent, row)
	if err != nil {
		restore()
		return "", nil, fmt.Errorf("verifying the merge: %w", err)
	}
	if d.Tree != tree || !d.Status.Advances() {
		restore()
		why := strings.Join(d.Reasons, "; ")
		if d.Tree != tree {
			why = "the verified tree is not the merged tree"
		}
		return "", &d, refused("%s moved since run %s started; the merge of it into %s did not pass the gate (decision %d, %s: %s; %s). Nothing was landed",
			ws.Base, row.ID, ws.Branch, d.N, d.Status, why, path)
	}
	// The goals' criteria too: the merge must keep what they proved.
	if failed, err := agent.CriteriaOn(ctx, o.Agent, row, tree); err != nil || len(failed) > 0 {
		restore()
		why := strings.Join(failed, "; ")
		if err != nil {
			why = "the criteria could not be run: " + err.Error()
		}
		return "", &d, refused("%s moved since run %s started; on the merge of it into %s the tests pass but the run's goals do not: %s. Nothing was landed; resume the run with guidance, or merge by hand",
			ws.Base, row.ID, ws.Branch, why)
	}
	msg := fmt.Sprintf("ultra: merge %s into %s\n\nGate decision %d: %s (%d passed, %d failed, %d skipped).\n\nUltra-Run: %s\nUltra-Gate: %d %s\n",
		ws.Base, ws.Branch, d.N, d.Status, d.Counts.Passed, d.Counts.Failed+d.Counts.Errors, d.Counts.Skipped, row.ID, d.N, d.Status)
	commit, err := workspace.GitAs(ctx, ws.Worktree, o.Agent.Git.Identity, "commit-tree", tree, "-p", tip, "-p", baseTip, "-m", msg)
	if err == nil {
		_, err = workspace.Git(ctx, ws.Worktree, "update-ref", "-m", "ultra: verified merge of "+ws.Base, "refs/heads/"+ws.Branch, commit, tip)
	}
	if err != nil {
		restore()
		return "", &d, err
	}
	_, _ = workspace.Git(ctx, ws.Worktree, "reset", "-q")
	return commit, &d, nil
}
