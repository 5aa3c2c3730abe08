package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// projectView is the person's project as their hooks and MCP servers
// see it: in a run with a worktree, a checkout ultra makes once of the
// commit the person's checkout is on (never the run's base, which may be
// a branch a model wrote), with the person's own copies of .claude/,
// .mcp.json and every file a hook or a server's command names laid over
// it (so a script they have not committed runs too). It lies in ultra's
// state, which the model's commands cannot see, and is shown read-only
// to the hooks and servers. The MCP servers start there; the hooks work
// in the run's tree but run their scripts from there. In a read-only
// mode, the person's checkout, which the run reads and nothing writes.
func (r *runner) projectView(ctx context.Context) (string, error) {
	if !phase.Worktree(r.row.Axes.Mode) || r.row.Repo == "" {
		return r.row.Workdir, nil
	}
	r.hookMu.Lock() // the hooks of one event run side by side; servers start meanwhile
	defer r.hookMu.Unlock()
	dest := filepath.Join(RunDir(r.o.StateRoot, r.row.ID), "project")
	if _, err := os.Stat(filepath.Join(dest, ".ultra-exported")); err == nil {
		return dest, nil
	}
	os.RemoveAll(dest)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", err
	}
	tree, err := workspace.Git(ctx, r.row.Repo, "rev-parse", "HEAD^{tree}")
	if err != nil {
		return "", err
	}
	if err := workspace.ExportTree(ctx, r.row.Repo, tree, dest); err != nil {
		return "", err
	}
	var budget int64 = overlayBudget
	for _, rel := range r.personsFiles() {
		if err := overlay(r.row.Repo, dest, rel, &budget); err != nil {
			return "", fmt.Errorf("copying %s of your checkout: %w", rel, err)
		}
	}
	return dest, os.WriteFile(filepath.Join(dest, ".ultra-exported"), nil, 0o644)
}

// personsFiles are the paths of the person's checkout laid over the
// project view: the Claude Code configuration directory, the servers'
// file, the scripts the hooks run, and the relative paths the servers'
// commands name.
func (r *runner) personsFiles() []string {
	files := []string{".claude", ".mcp.json"}
	files = append(files, r.o.Hooks.Scripts()...)
	for _, s := range r.o.MCP {
		for _, a := range append([]string{s.Command}, s.Args...) {
			if p := filepath.Clean(a); a != "" && !filepath.IsAbs(p) && p != "." && p != ".." && !strings.HasPrefix(p, "../") && !strings.HasPrefix(a, "-") {
				files = append(files, p)
			}
		}
	}
	return files
}

// overlayBudget bounds what overlay copies of the person's checkout into
// a project view, in bytes.
const overlayBudget = 64 << 20

// overlay copies path rel of the checkout at root (a file, or a
// directory's files) over dest's, while budget lasts. It follows no
// symbolic link out of the checkout: a link whose target lies outside it
// (the person's home, ultra's config, a secret the sandbox hides) is not
// copied, for the view is what the repository's own hooks and servers
// read. In dest it writes through no link either (the view's checkout of
// the commit holds the repository's links): a link on the way is
// replaced by a directory, a file by a new one. A path the checkout does
// not hold is no error.
func overlay(root, dest, rel string, budget *int64) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	return overlayIn(realRoot, dest, rel, budget)
}

func overlayIn(root, dest, rel string, budget *int64) error {
	if rel == ".git" || strings.HasPrefix(rel, ".git/") || rel == ".ultra" || strings.HasPrefix(rel, ".ultra/") {
		return nil
	}
	src, err := filepath.EvalSymlinks(filepath.Join(root, rel))
	if err != nil || !within(root, src) || within(filepath.Join(root, ".git"), src) || within(filepath.Join(root, ".ultra"), src) {
		return nil // absent, or a link out of the checkout (or into its git directory or ultra's state)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := overlayIn(root, dest, filepath.Join(rel, e.Name()), budget); err != nil {
				return err
			}
		}
		return nil
	}
	if !fi.Mode().IsRegular() || fi.Size() > *budget {
		return nil
	}
	*budget -= fi.Size()
	to, err := plainPath(dest, rel)
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, fi.Mode().Perm()|0o400)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// plainPath makes rel's directories in dest real directories (a link
// there is removed first) and removes what rel itself is: the path a new
// file can be made at without writing through a link.
func plainPath(dest, rel string) (string, error) {
	parts := strings.Split(filepath.Clean(rel), string(filepath.Separator))
	cur := dest
	for _, part := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			if err := os.Remove(cur); err != nil {
				return "", err
			}
		}
		if err := os.Mkdir(cur, 0o755); err != nil {
			return "", err
		}
	}
	to := filepath.Join(cur, parts[len(parts)-1])
	if fi, err := os.Lstat(to); err == nil {
		if fi.IsDir() {
			err = os.RemoveAll(to)
		} else {
			err = os.Remove(to)
		}
		if err != nil {
			return "", err
		}
	}
	return to, nil
}

// within says path p is dir or lies below it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
