package policy

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// StateDir is the workspace directory that holds ultra's own state.
const StateDir = ".ultra"

// CleanRel resolves p, relative to root or absolute, to a clean path
// relative to root with forward slashes ("." for root itself). It fails
// when p is empty, climbs out of root with "..", or is absolute outside
// root. It is purely lexical: symbolic links are not followed.
func CleanRel(root, p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(p))
		if err != nil || escapes(filepath.ToSlash(rel)) {
			return "", fmt.Errorf("path %q is outside the workspace %s", p, root)
		}
		return filepath.ToSlash(rel), nil
	}
	rel := filepath.ToSlash(filepath.Clean(p))
	if escapes(rel) {
		return "", fmt.Errorf("path %q escapes the workspace with ..", p)
	}
	return rel, nil
}

func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, "../")
}

// IsStatePath reports whether rel, relative to the workspace root, is the
// state directory .ultra or anything under it: the model may read these
// but never write them. The comparison ignores case and trailing dots and
// spaces, which some file systems ignore too.
func IsStatePath(rel string) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	first, _, _ := strings.Cut(rel, "/")
	first = strings.TrimRight(first, ". ")
	return first != "" && strings.EqualFold(first, StateDir)
}
