package workspace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Link is a symbolic link in a commit and the path it holds.
type Link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
	Why    string `json:"why,omitempty"` // where it leads that a landing refuses
}

// LinksOutside lists the symbolic links of commit b that leave the
// repository (LinkEscapes, following the tree's other links), or whose
// target the repository does not hold (an ignored or missing path: in a
// person's checkout it can be anything, `.venv/bin/python` a link to the
// host's), other than those that were in commit a as they are and left
// it there too (the person's own). Every link of b is checked, not only
// those the run changed: replacing a directory with a link re-aims the
// links through it. Landing such a link puts, in a person's checkout, a
// path that reads their files elsewhere: whatever copies or publishes the
// tree follows it.
func LinksOutside(ctx context.Context, dir, a, b string) ([]Link, error) {
	tb, err := treeLinks(ctx, dir, b)
	if err != nil || len(tb.links) == 0 {
		return nil, err
	}
	ta, err := treeLinks(ctx, dir, a)
	if err != nil {
		return nil, err
	}
	var out []Link
	for _, p := range slices.Sorted(maps.Keys(tb.links)) {
		t := tb.links[p]
		why := tb.leaves(p, t)
		if why == "" {
			continue
		}
		if old, ok := ta.links[p]; ok && old == t && ta.leaves(p, old) != "" {
			continue
		}
		out = append(out, Link{Path: p, Target: t, Why: why})
	}
	return out, nil
}

// linkTree is what a commit's tree holds: its paths (files, directories,
// links) and its links' targets.
type linkTree struct {
	paths  map[string]bool
	links  map[string]string
	folded map[string]string // links by their lower-case path
}

// leaves says where the link at p holding target leads that a landing
// refuses ("" nowhere such): out of the repository, into git's or
// ultra's own files, or to a path the tree does not hold.
func (t linkTree) leaves(p, target string) string {
	to, escapes := resolveLink(t.links, t.folded, p, target)
	first, _, _ := strings.Cut(to, "/")
	switch {
	case escapes && to == "":
		return "leaves the repository"
	case escapes && strings.EqualFold(first, ".git"):
		return "reaches git's own files"
	case escapes:
		return "reaches ultra's own files"
	case to != "" && !t.paths[to]:
		return "points at a path the repository does not hold"
	}
	return ""
}

// treeLinks reads commit c's tree: its paths, and its links' targets in
// one `git cat-file --batch`.
func treeLinks(ctx context.Context, dir, c string) (linkTree, error) {
	t := linkTree{paths: map[string]bool{}, links: map[string]string{}, folded: map[string]string{}}
	out, err := Command(ctx, dir, "ls-tree", "-r", "-t", "-z", "--full-tree", c).Output()
	if err != nil {
		return t, fmt.Errorf("git ls-tree %s: %w", Short(c), err)
	}
	var shas, paths []string
	for _, e := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(e, "\t")
		fs := strings.Fields(meta)
		if !ok || len(fs) < 3 {
			continue
		}
		t.paths[p] = true
		if fs[0] == "120000" {
			shas, paths = append(shas, fs[2]), append(paths, p)
		}
	}
	if len(shas) == 0 {
		return t, nil
	}
	cmd := Command(ctx, dir, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(shas, "\n") + "\n")
	raw, err := cmd.Output()
	if err != nil {
		return t, fmt.Errorf("reading the links of %s: %w", Short(c), err)
	}
	r := bufio.NewReader(bytes.NewReader(raw))
	for _, p := range paths {
		head, err := r.ReadString('\n')
		fs := strings.Fields(head)
		if err != nil || len(fs) != 3 {
			return t, fmt.Errorf("reading the link %s: git cat-file said %q", p, head)
		}
		n, err := strconv.Atoi(fs[2])
		if err != nil {
			return t, fmt.Errorf("reading the link %s: %w", p, err)
		}
		body := make([]byte, n+1) // the content and its newline
		if _, err := io.ReadFull(r, body); err != nil {
			return t, fmt.Errorf("reading the link %s: %w", p, err)
		}
		t.links[p] = string(body[:n])
		t.folded[strings.ToLower(p)] = string(body[:n])
	}
	return t, nil
}

// LinkEscapes says whether a link at path p (slash-separated, relative to
// the repository's root) holding target leaves the repository, following
// the tree's other links (links, path → target): see ResolveLink.
func LinkEscapes(links map[string]string, p, target string) bool {
	_, escapes := ResolveLink(links, p, target)
	return escapes
}

// ResolveLink resolves a link at path p holding target as the kernel
// does: component by component, through the other links of the tree
// (links, path → target), so a link through a link is followed. It
// returns the path reached ("" the root) and whether the way leaves the
// repository (an absolute target, .. past the root, a loop) or reaches
// git's or ultra's own files (.git, .ultra, .ultra/state; compared
// without case, as a case-insensitive file system finds them).
func ResolveLink(links map[string]string, p, target string) (to string, escapes bool) {
	return resolveLink(links, nil, p, target)
}

// resolveLink is ResolveLink that also follows a link named in another
// case (folded: links by lower-case path), as a case-insensitive file
// system of a person's checkout would.
func resolveLink(links, folded map[string]string, p, target string) (to string, escapes bool) {
	if target == "" {
		return p, false
	}
	if path.IsAbs(target) {
		return "", true
	}
	var at []string // the resolved directory so far, from the root
	if d := path.Dir(p); d != "." {
		at = strings.Split(d, "/")
	}
	rest := strings.Split(target, "/")
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(at) == 0 {
				return "", true // past the root
			}
			at = at[:len(at)-1]
			continue
		}
		at = append(at, c)
		t, isLink := links[strings.Join(at, "/")]
		if !isLink && folded != nil {
			t, isLink = folded[strings.ToLower(strings.Join(at, "/"))]
		}
		if !isLink {
			continue
		}
		if hops++; hops > 40 || path.IsAbs(t) {
			return "", true // a loop, or out of the tree
		}
		at = at[:len(at)-1]
		rest = append(strings.Split(t, "/"), rest...)
	}
	to = strings.Join(at, "/")
	switch {
	case len(at) >= 1 && strings.EqualFold(at[0], ".git"),
		len(at) == 1 && strings.EqualFold(at[0], ".ultra"),
		len(at) >= 2 && strings.EqualFold(at[0], ".ultra") && strings.EqualFold(at[1], "state"):
		return to, true
	}
	return to, false
}
