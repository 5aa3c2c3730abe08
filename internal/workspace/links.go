package workspace

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// Link is a symbolic link in a commit and the path it holds.
type Link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// LinksOutside lists the symbolic links commit b adds or changes
// relative to commit a whose target is not a file of the repository's
// own (see LinkEscapes). Landing such a link puts, in a person's
// checkout, a path that reads their files elsewhere: whatever copies or
// publishes the tree follows it.
func LinksOutside(ctx context.Context, dir, a, b string) ([]Link, error) {
	out, err := Command(ctx, dir, "diff-tree", "-r", "--no-renames", "--no-commit-id", "-z", a, b).Output()
	if err != nil {
		return nil, fmt.Errorf("git diff-tree %s %s: %w", Short(a), Short(b), err)
	}
	var links []Link
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		// ":old-mode new-mode old-blob new-blob status", then the path.
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) < 5 || meta[1] != "120000" || meta[4] == "D" {
			continue
		}
		target, err := gitOut(ctx, dir, nil, "cat-file", "blob", meta[3])
		if err != nil {
			return nil, fmt.Errorf("reading the link %s: %w", f[i+1], err)
		}
		if LinkEscapes(f[i+1], target) {
			links = append(links, Link{Path: f[i+1], Target: target})
		}
	}
	return links, nil
}

// LinkEscapes says whether a link at path p (slash-separated, relative to
// the repository's root) holding target points outside the repository
// (an absolute path, or .. past the root) or into git's or ultra's own
// files (.git, .ultra/state).
func LinkEscapes(p, target string) bool {
	if target == "" {
		return false
	}
	if path.IsAbs(target) {
		return true
	}
	to := path.Clean(path.Join(path.Dir(p), target))
	for _, own := range []string{"..", ".git", ".ultra/state"} {
		if to == own || strings.HasPrefix(to, own+"/") {
			return true
		}
	}
	return false
}
