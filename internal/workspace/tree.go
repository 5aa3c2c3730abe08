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
	var srcInfo os.FileInfo
	if src, err := os.Open(indexPath); err == nil {
		// Starting from the real index lets git reuse its stat cache.
		srcInfo, _ = src.Stat()
		_, err = io.Copy(tmp, src)
		src.Close()
		if err != nil {
			tmp.Close()
			return "", err
		}
	}
	tmp.Close()
	if srcInfo != nil {
		// Keep the index's own time: git trusts the stat cache only for
		// files older than the index, and re-reads the rest ("racy git").
		// A copy stamped now would make a file edited in the same second
		// as the index look unchanged.
		_ = os.Chtimes(tmpPath, srcInfo.ModTime(), srcInfo.ModTime())
	}
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
