// Package workspace holds what ultra does with git: the identity of a
// working tree, and (later) worktrees, branches and the commit guard.
package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// TreeHash returns the git tree hash of dir's working tree as it is on
// disk: tracked files with their changes and untracked files that are not
// ignored. The repository's index and HEAD are not touched: the hash is
// computed with a private copy of the index.
func TreeHash(ctx context.Context, dir string) (string, error) {
	indexPath, err := gitOut(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp("", "ultra-index-*")
	if err != nil {
		return "", err
	}
	tmpPath := tmp.Name()
	defer os.Remove(tmpPath)
	if src, err := os.Open(indexPath); err == nil {
		// Starting from the real index lets git reuse its stat cache.
		_, err = io.Copy(tmp, src)
		src.Close()
		if err != nil {
			tmp.Close()
			return "", err
		}
	}
	tmp.Close()
	env := []string{"GIT_INDEX_FILE=" + tmpPath}
	if st, _ := os.Stat(tmpPath); st != nil && st.Size() == 0 {
		os.Remove(tmpPath) // git wants no file rather than an empty one
	}
	if _, err := gitOut(ctx, dir, env, "add", "-A", "--", "."); err != nil {
		return "", err
	}
	return gitOut(ctx, dir, env, "write-tree")
}

// Root returns the top directory of the git repository holding dir.
func Root(ctx context.Context, dir string) (string, error) {
	root, err := gitOut(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return root, nil
}

func gitOut(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(string(out)), nil
}
