package workspace

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// MergeMarked merges commits ours and theirs (from their common
// ancestor, as git finds it) without touching any working tree: the
// merged tree and the paths that conflict. A conflicting file holds git's
// conflict markers in the tree, so that whoever works on the tree next
// can resolve them.
func MergeMarked(ctx context.Context, repo, ours, theirs string) (tree string, conflicts []string, err error) {
	cmd := Command(ctx, repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs)
	raw, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var ee *exec.ExitError
	switch {
	case err == nil:
		return lines[0], nil, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1 && len(lines) > 1:
		return lines[0], lines[1:], nil
	}
	return "", nil, fmt.Errorf("git merge-tree %s %s: %v %s", ours, theirs, err, strings.TrimSpace(string(stderrOf(err))))
}

// CommitOf makes a commit of tree with parents, moving no branch: a
// commit to merge from, which nothing keeps once it is used.
func CommitOf(ctx context.Context, dir, tree, message string, id Identity, parents ...string) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return gitOutIn(ctx, dir, id.env(), message, append(args, "-F", "-")...)
}

// MoveWorktree puts branch, checked out in dir, at commit, and dir's
// files at tree: the index is commit's and the files are tree's, so
// what tree holds beyond commit stays uncommitted work. The branch moves
// only if it is still at from. Ignored files are left alone.
func MoveWorktree(ctx context.Context, dir, branch, from, commit, tree string) error {
	if cur := CurrentBranch(ctx, dir); cur != branch {
		return fmt.Errorf("%w: %s is on %q, not %s", ErrNotOnBranch, dir, cur, branch)
	}
	if _, err := gitOut(ctx, dir, nil, "update-ref", "-m", "ultra: onto the run's branch", "refs/heads/"+branch, commit, from); err != nil {
		return err
	}
	if _, err := gitOut(ctx, dir, nil, "read-tree", "--reset", "-u", tree); err != nil {
		return err
	}
	_, err := gitOut(ctx, dir, nil, "reset", "-q")
	return err
}

// SwitchTree makes dir's index and files those of tree to, from those
// of tree from (which its index holds): the files from and to differ in
// are changed; the others, and what dir changed beyond from, are left as
// they are.
func SwitchTree(ctx context.Context, dir, from, to string) error {
	_, err := gitOut(ctx, dir, nil, "read-tree", "-m", "-u", from, to)
	return err
}

// DiffLines is `git diff -U0` from commit or tree a to b, renames as a
// deletion and an addition, without the paths under skip (ultra's
// records): what claim.ParseDiff reads.
func DiffLines(ctx context.Context, dir, a, b string, skip ...string) (string, error) {
	args := []string{"diff", "-U0", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", a, b, "--", "."}
	for _, s := range skip {
		args = append(args, ":(exclude)"+s)
	}
	return gitOut(ctx, dir, nil, args...)
}
