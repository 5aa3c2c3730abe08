package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Listed is one worktree as git lists it.
type Listed struct {
	Path   string
	Branch string // without refs/heads/; "" when detached
	Head   string
	Locked bool
}

// List returns the repository's worktrees, the main one first.
func List(ctx context.Context, repo string) ([]Listed, error) {
	out, err := worktreeGit(ctx, repo, "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var all []Listed
	var cur *Listed
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "worktree":
			all = append(all, Listed{Path: v})
			cur = &all[len(all)-1]
		case "branch":
			if cur != nil {
				cur.Branch = strings.TrimPrefix(v, "refs/heads/")
			}
		case "HEAD":
			if cur != nil {
				cur.Head = v
			}
		case "locked":
			if cur != nil {
				cur.Locked = true
			}
		}
	}
	return all, nil
}

// CheckedOut returns the worktree where branch is checked out ("" if none).
func CheckedOut(ctx context.Context, repo, branch string) string {
	all, _ := List(ctx, repo)
	for _, w := range all {
		if w.Branch == branch {
			return w.Path
		}
	}
	return ""
}

// Remove deletes a worktree, even a broken or half-made one, and prunes
// git's record of it. It does not touch the branch.
func Remove(ctx context.Context, repo, path string) error {
	_, err := worktreeGit(ctx, repo, "remove", "--force", "--force", path)
	if err != nil {
		// A worktree git no longer knows (or cannot read): remove the
		// directory and let prune forget it.
		if rmErr := os.RemoveAll(path); rmErr != nil {
			return fmt.Errorf("removing %s: %w (git: %v)", path, rmErr, err)
		}
	}
	return Prune(ctx, repo)
}

// DeleteBranch deletes a local branch whatever it holds.
func DeleteBranch(ctx context.Context, repo, branch string) error {
	if BranchTip(ctx, repo, branch) == "" {
		return nil
	}
	_, err := LockedGit(ctx, repo, repo, "branch", "-D", "--", branch)
	return err
}

// MergeTrees merges commits ours and theirs without touching any working
// tree: the merged tree, or the conflicting paths.
func MergeTrees(ctx context.Context, repo, ours, theirs string) (tree string, conflicts []string, err error) {
	tree, conflicts, err = MergeMarked(ctx, repo, ours, theirs)
	if len(conflicts) > 0 {
		tree = ""
	}
	return tree, conflicts, err
}

// MergeTreesKeeping is MergeTrees, except that the given paths are
// ours whatever theirs holds: a conflict in them is no conflict (ultra's
// own records of a run, which every run writes at the same place).
func MergeTreesKeeping(ctx context.Context, repo, ours, theirs string, keep []string) (string, []string, error) {
	merged, all, err := MergeMarked(ctx, repo, ours, theirs)
	if err != nil {
		return "", nil, err
	}
	var conflicts []string
	for _, c := range all {
		if !slices.Contains(keep, c) {
			conflicts = append(conflicts, c)
		}
	}
	if len(conflicts) > 0 {
		return "", conflicts, nil
	}
	tmp, err := os.CreateTemp("", "ultra-index-*")
	if err != nil {
		return "", nil, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := gitOut(ctx, repo, env, "read-tree", merged); err != nil {
		return "", nil, err
	}
	for _, p := range keep {
		entry, err := gitOut(ctx, repo, nil, "ls-tree", ours, "--", p)
		if err != nil {
			return "", nil, err
		}
		if entry == "" {
			if _, err := gitOut(ctx, repo, env, "rm", "--cached", "-q", "--ignore-unmatch", "--", p); err != nil {
				return "", nil, err
			}
			continue
		}
		// "<mode> blob <oid>\t<path>"
		f := strings.Fields(strings.SplitN(entry, "\t", 2)[0])
		if len(f) != 3 {
			return "", nil, fmt.Errorf("git ls-tree %s %s: unexpected %q", ours, p, entry)
		}
		if _, err := gitOut(ctx, repo, env, "update-index", "--add", "--cacheinfo", f[0]+","+f[2]+","+p); err != nil {
			return "", nil, err
		}
	}
	tree, err := gitOut(ctx, repo, env, "write-tree")
	return tree, nil, err
}

func stderrOf(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}

// CheckoutTree makes dir's index and files those of tree, from those of
// its HEAD; dir must have no changes.
func CheckoutTree(ctx context.Context, dir, tree string) error {
	_, err := gitOut(ctx, dir, nil, "read-tree", "-m", "-u", "HEAD", tree)
	return err
}

// ResetHard puts dir's branch, index and files at commit and removes the
// untracked files that are not ignored.
func ResetHard(ctx context.Context, dir, commit string) error {
	if _, err := gitOut(ctx, dir, nil, "reset", "-q", "--hard", commit); err != nil {
		return err
	}
	_, err := gitOut(ctx, dir, nil, "clean", "-fdq")
	return err
}

// Exists reports whether path is a directory git can work in.
func Exists(ctx context.Context, path string) bool {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return false
	}
	top, err := gitOut(ctx, path, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	a, _ := filepath.EvalSymlinks(top)
	b, _ := filepath.EvalSymlinks(path)
	return a == b
}

// ProjectRoot is the checkout whose .ultra holds the state of work done
// in dir: dir's own worktree, except inside a run's worktree (on an
// ultra/ branch), where it is the main checkout the run was made from. It
// fails when dir is not in a git repository.
func ProjectRoot(ctx context.Context, dir string) (string, error) {
	out, err := gitOut(ctx, dir, nil, "rev-parse", "--show-toplevel", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	top, common, _ := strings.Cut(out, "\n")
	root := top
	if filepath.Base(common) == ".git" && filepath.Dir(common) != top &&
		strings.HasPrefix(CurrentBranch(ctx, top), BranchPrefix) {
		root = filepath.Dir(common)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return root, nil
}

// ClearStaleLock removes the index lock a git process killed in worktree
// dir left behind. Call it only when nothing else can be using dir's
// index (the run that owns the worktree is not running).
func ClearStaleLock(ctx context.Context, dir string) (bool, error) {
	gitDir, err := gitOut(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-dir")
	if err != nil {
		return false, err
	}
	lock := filepath.Join(gitDir, "index.lock")
	if _, err := os.Stat(lock); err != nil {
		return false, nil
	}
	return true, os.Remove(lock)
}
