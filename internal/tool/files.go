package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// maxListedFiles bounds how many files one search considers.
const maxListedFiles = 500_000

// junkDirs are skipped when walking a tree that git does not describe.
var junkDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".jj": true,
	"node_modules": true, "__pycache__": true, ".venv": true,
	".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true,
	".tox": true, ".gradle": true, ".next": true, ".cache": true,
}

var errTooManyFiles = errors.New("too many files")

// listFiles returns the files under dir (an absolute real path inside
// root) as slash paths relative to dir. Inside a git work tree it asks git,
// so .gitignore is respected; otherwise, or when git lists nothing, it
// walks the tree skipping .git and common junk directories. ultra's own
// .ultra directory is left out unless dir lies inside it.
func listFiles(ctx context.Context, root, dir string) ([]string, error) {
	files, err := gitListFiles(ctx, root, dir)
	if err != nil || len(files) == 0 {
		files, err = walkFiles(ctx, dir)
		if err != nil && !errors.Is(err, errTooManyFiles) {
			return nil, err
		}
	}
	if dir == root {
		kept := files[:0]
		for _, f := range files {
			if !policy.IsStatePath(f) {
				kept = append(kept, f)
			}
		}
		files = kept
	}
	return files, ctx.Err()
}

// gitListFiles asks git for the files under dir. git runs at the
// workspace root, never in dir itself: the model may have made dir a
// repository of its own, whose configuration (core.fsmonitor) would run
// in ultra's process. ultra's safe git configuration applies too.
func gitListFiles(ctx context.Context, root, dir string) ([]string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, err
	}
	if !within(root, dir) {
		return nil, fmt.Errorf("%s is outside the workspace", dir)
	}
	rel, _ := filepath.Rel(root, dir)
	cmd := workspace.Command(ctx, root, "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", filepath.ToSlash(rel))
	// The directory is a path, not a pattern: a name with * or [ or a
	// leading : lists itself only.
	cmd.Env = append(cmd.Env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=1", "GIT_CEILING_DIRECTORIES="+filepath.Dir(root))
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	prefix := ""
	if rel != "." {
		prefix = filepath.ToSlash(rel) + "/"
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		s, ok := strings.CutPrefix(string(f), prefix)
		if !ok || s == "" || strings.HasSuffix(s, "/") || seen[s] {
			continue // nested repositories are listed as "dir/"
		}
		seen[s] = true
		files = append(files, s)
		if len(files) >= maxListedFiles {
			break
		}
	}
	return files, nil
}

func walkFiles(ctx context.Context, dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // unreadable entries are skipped
		}
		if d.IsDir() {
			if p != dir && junkDirs[d.Name()] {
				return filepath.SkipDir
			}
			if len(files)%1024 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil
		}
		files = append(files, filepath.ToSlash(rel))
		if len(files) >= maxListedFiles {
			return errTooManyFiles
		}
		return nil
	})
	return files, err
}

// statFile returns the info of a listed file when it is a regular file
// reached without leaving root (symlinks followed only inside it, also
// those of directories on the way: openBeneath); rootFD is root's
// (openRoot).
func statFile(rootFD int, root, abs string) (fs.FileInfo, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, false
	}
	fd, err := openBeneath(rootFD, root, rel, true)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), abs)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	return fi, true
}
