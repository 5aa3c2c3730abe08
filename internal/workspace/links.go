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
// own (see LinkEscapes, which follows the links of b's tree on the way).
// Landing such a link puts, in a person's checkout, a path that reads
// their files elsewhere: whatever copies or publishes the tree follows it.
func LinksOutside(ctx context.Context, dir, a, b string) ([]Link, error) {
	out, err := Command(ctx, dir, "diff-tree", "-r", "--no-renames", "--no-commit-id", "-z", a, b).Output()
	if err != nil {
		return nil, fmt.Errorf("git diff-tree %s %s: %w", Short(a), Short(b), err)
	}
	var changed []string
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		// ":old-mode new-mode old-blob new-blob status", then the path.
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) >= 5 && meta[1] == "120000" && meta[4] != "D" {
			changed = append(changed, f[i+1])
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	tree, err := linksOf(ctx, dir, b)
	if err != nil {
		return nil, err
	}
	var links []Link
	for _, p := range changed {
		if LinkEscapes(tree, p, tree[p]) {
			links = append(links, Link{Path: p, Target: tree[p]})
		}
	}
	return links, nil
}

// linksOf maps every symbolic link of commit c's tree to its target.
func linksOf(ctx context.Context, dir, c string) (map[string]string, error) {
	out, err := Command(ctx, dir, "ls-tree", "-r", "-z", "--full-tree", c).Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s: %w", Short(c), err)
	}
	links := map[string]string{}
	for _, e := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(e, "\t")
		fs := strings.Fields(meta)
		if !ok || len(fs) < 3 || fs[0] != "120000" {
			continue
		}
		target, err := gitOut(ctx, dir, nil, "cat-file", "blob", fs[2])
		if err != nil {
			return nil, fmt.Errorf("reading the link %s: %w", p, err)
		}
		links[p] = target
	}
	return links, nil
}

// LinkEscapes says whether a link at path p (slash-separated, relative to
// the repository's root) holding target points outside the repository
// (an absolute path, or .. past the root) or into git's or ultra's own
// files (.git, .ultra, .ultra/state), resolving the path as the kernel
// does: component by component, through the other links of the tree
// (links, path → target), so a link through a link is followed.
func LinkEscapes(links map[string]string, p, target string) bool {
	if target == "" {
		return false
	}
	var at []string // the resolved directory so far, from the root
	if d := path.Dir(p); d != "." {
		at = strings.Split(d, "/")
	}
	rest := strings.Split(target, "/")
	if path.IsAbs(target) {
		return true
	}
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(at) == 0 {
				return true // past the root
			}
			at = at[:len(at)-1]
			continue
		}
		at = append(at, c)
		t, isLink := links[strings.Join(at, "/")]
		if !isLink {
			continue
		}
		if hops++; hops > 40 || path.IsAbs(t) {
			return true // a loop, or out of the tree
		}
		at = at[:len(at)-1]
		rest = append(strings.Split(t, "/"), rest...)
	}
	to := strings.Join(at, "/")
	if to == ".ultra" {
		return true
	}
	for _, own := range []string{".git", ".ultra/state"} {
		if to == own || strings.HasPrefix(to, own+"/") {
			return true
		}
	}
	return false
}
