package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ultra-dev/ultra/internal/policy"
)

// resolved is a path named by the model, checked to lie inside the root.
type resolved struct {
	Abs  string // real path: absolute, symlinks resolved (what is opened)
	Rel  string // as the model should see it: relative to the root, slash-separated
	Root string // the root, absolute with symlinks resolved
}

// rootOf returns the workspace root, absolute and with symlinks resolved.
func rootOf(env *Env) (string, error) {
	if env == nil || env.Root == "" {
		return "", errors.New("no workspace root configured")
	}
	root, err := filepath.Abs(env.Root)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return filepath.Clean(root), nil
}

// within reports whether p is root or lies below it. Both must be clean
// absolute paths.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// relTo returns p relative to root, slash-separated ("." for the root).
func relTo(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

// resolvePath turns a path given by the model (relative to the root or
// absolute inside it) into a checked real path. It refuses paths that
// leave the root lexically (..) or through a symlink, including dangling
// symlinks whose target would be created outside.
func resolvePath(env *Env, p string) (resolved, error) {
	root, err := rootOf(env)
	if err != nil {
		return resolved{}, err
	}
	p = strings.TrimSpace(p)
	if p == "" {
		return resolved{}, errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return resolved{}, errors.New("path contains a NUL byte")
	}
	lex := p
	if !filepath.IsAbs(lex) {
		lex = filepath.Join(root, lex)
	}
	lex = filepath.Clean(lex)
	if !within(root, lex) {
		// An absolute path may name the root through another spelling
		// (a symlinked parent); accept it when it resolves inside.
		real, rerr := realPath(lex)
		if !filepath.IsAbs(p) || rerr != nil || !within(root, real) {
			return resolved{}, fmt.Errorf("path %s is outside the workspace root %s; only files inside it can be accessed", p, root)
		}
		lex = real
	}
	real, err := realPath(lex)
	if err != nil {
		return resolved{}, fmt.Errorf("resolving %s: %v", p, err)
	}
	if !within(root, real) {
		return resolved{}, fmt.Errorf("path %s resolves through a symlink to %s, outside the workspace root; access refused", p, real)
	}
	return resolved{Abs: real, Rel: relTo(root, lex), Root: root}, nil
}

// realPath resolves every symlink of an absolute path, like
// filepath.EvalSymlinks, but tolerates a missing tail: components that do
// not exist are appended as they are. A dangling symlink is followed to
// where its target would be.
func realPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("not an absolute path: %s", p)
	}
	vol := filepath.VolumeName(p)
	queue := splitComponents(p[len(vol):])
	cur := vol + string(filepath.Separator)
	hops := 0
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// The rest does not exist: append it lexically.
				rest := filepath.Join(append([]string{next}, queue...)...)
				return filepath.Clean(rest), nil
			}
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > 255 {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tv := filepath.VolumeName(target)
			cur = tv + string(filepath.Separator)
			target = target[len(tv):]
		}
		queue = append(splitComponents(target), queue...)
	}
	return cur, nil
}

func splitComponents(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == filepath.Separator || r == '/' })
}

// checkWritable refuses writes to ultra's own state (.ultra at the root)
// and into any .git directory.
func checkWritable(r resolved) error {
	for _, rel := range []string{r.Rel, relTo(r.Root, r.Abs)} {
		parts := strings.Split(rel, "/")
		if policy.IsStatePath(rel) {
			return fmt.Errorf("refusing to write %s: files under .ultra/ are ultra's state files, managed by ultra only", r.Rel)
		}
		for _, part := range parts {
			if strings.EqualFold(part, ".git") {
				return fmt.Errorf("refusing to write %s: files inside .git/ must not be changed directly; use git commands through bash", r.Rel)
			}
		}
	}
	if r.Abs == r.Root {
		return errors.New("refusing to write the workspace root itself")
	}
	return nil
}

// writableTarget resolves a path the model wants to change, checks that it
// may be written, and returns the run's file tracker; fail is the result
// to return when any of it goes wrong.
func writableTarget(env *Env, p string) (resolved, *FileTracker, *Result) {
	rp, err := resolvePath(env, p)
	if err != nil {
		r := errorf("%v", err)
		return rp, nil, &r
	}
	if err := checkWritable(rp); err != nil {
		r := errorf("%v", err)
		return rp, nil, &r
	}
	files, err := env.tracker()
	if err != nil {
		r := errorf("%v", err)
		return rp, nil, &r
	}
	return rp, files, nil
}

// ReplaceFile writes data to path through a new file renamed over it, so
// that the write lands in the directory's own entry: neither a symbolic
// link at path nor a hard link it shares with a file elsewhere (the
// person's checkout, ultra's state) is written through. An existing file
// keeps its mode.
func ReplaceFile(path string, data []byte, perm fs.FileMode) error {
	if fi, err := os.Lstat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", filepath.Base(path))
		}
		perm = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".ultra-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
