package workspace

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestLinkEscapes(t *testing.T) {
	for _, c := range []struct {
		path, target string
		want         bool
	}{
		{"docs/key", "/home/u/.ssh/id_rsa", true},
		{"key", "../outside", true},
		{"a/b/key", "../../../etc/passwd", true},
		{"a/b/key", "../../..", true},
		{"a/hooks", "../.git/hooks", true},
		{"db", ".ultra/state/ultra.db", true},
		{"a/db", "../.ultra/state", true},
		{"a/b/link", "../../c.txt", false},
		{"a/link", "b/c.txt", false},
		{"link", ".ultra/config.toml", false},
		{"u", ".ultra", true},
		{"u", ".ultra/", true},
		{"link", ".gitignore", false},
		{"link", "", false},
		{"a/link", "./../b", false},
	} {
		if got := LinkEscapes(nil, c.path, c.target); got != c.want {
			t.Errorf("LinkEscapes(%q, %q) = %v, want %v", c.path, c.target, got, c.want)
		}
	}
}

// A link through another link of the tree is followed as the kernel
// follows it: a/b/up/../x is not a/b/x when a/b/up is a link.
func TestLinkEscapesThroughLinks(t *testing.T) {
	links := map[string]string{"a/b/up": "../..", "loop": "loop2", "loop2": "loop", "in": "a", "abs": "/etc"}
	for _, c := range []struct {
		path, target string
		want         bool
	}{
		{"leak", "a/b/up/../SECRET.txt", true},
		{"parent", "a/b/up/..", true},
		{"g", "a/b/up/.git/config", true},
		{"fine", "a/b/up/README", false},
		{"x", "loop/y", true},
		{"y", "in/b/c.txt", false},
		{"z", "abs/passwd", true},
	} {
		if got := LinkEscapes(links, c.path, c.target); got != c.want {
			t.Errorf("LinkEscapes(%q, %q) = %v, want %v", c.path, c.target, got, c.want)
		}
	}
}

// The links a commit adds or changes that leave the repository are
// found; the repository's own links, links inside it, and removed links
// are not.
func TestLinksOutside(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "a", "docs/readme": "r"})
	os.Symlink("/etc/hostname", filepath.Join(dir, "old-outside"))
	os.Symlink("a.txt", filepath.Join(dir, "inside"))
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "links of the person's")
	base := run(t, dir, "rev-parse", "HEAD")
	os.Symlink("/home/u/.ssh/id_rsa", filepath.Join(dir, "docs", "key"))
	os.Symlink("readme", filepath.Join(dir, "docs", "fine"))
	os.Symlink("../a.txt", filepath.Join(dir, "docs", "through")) // a link to a link that leaves
	os.Remove(filepath.Join(dir, "inside"))
	os.Symlink("../../outside", filepath.Join(dir, "inside")) // changed to escape
	os.Remove(filepath.Join(dir, "a.txt"))
	os.Symlink(".git/config", filepath.Join(dir, "a.txt")) // a file become a link
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "the run's")
	got, err := LinksOutside(ctx, dir, base, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{{"a.txt", ".git/config", "reaches git's own files"}, {"docs/key", "/home/u/.ssh/id_rsa", "leaves the repository"},
		{"docs/through", "../a.txt", "reaches git's own files"}, {"inside", "../../outside", "leaves the repository"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("links %+v, want %+v", got, want)
	}
}

// A link the run did not touch that a changed directory re-aims, a link
// to a path the tree does not hold (an ignored directory), and git's
// directory in another case are all found.
func TestLinksOutsideReaimedAndUnheld(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"d/x": "x", "notes.txt": "n", ".gitignore": ".venv/\n"})
	os.Symlink("d/../notes.txt", filepath.Join(dir, "cfg")) // inside, through the directory d
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "the person's link")
	base := run(t, dir, "rev-parse", "HEAD")
	os.RemoveAll(filepath.Join(dir, "d"))
	os.Symlink(".", filepath.Join(dir, "d"))                 // d/.. is now the repository's parent
	os.Symlink(".venv/bin/python", filepath.Join(dir, "py")) // not held by the tree
	os.Symlink(".GIT/config", filepath.Join(dir, "g"))       // .git on a case-insensitive file system
	os.Symlink("notes.txt", filepath.Join(dir, "ok"))        // held
	os.Symlink(".", filepath.Join(dir, "c"))
	os.Symlink("C/C/../..", filepath.Join(dir, "p")) // through c, on a case-insensitive file system
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "the run's")
	got, err := LinksOutside(ctx, dir, base, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{{"cfg", "d/../notes.txt", "leaves the repository"}, {"g", ".GIT/config", "reaches git's own files"},
		{"p", "C/C/../..", "leaves the repository"}, {"py", ".venv/bin/python", "points at a path the repository does not hold"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("links %+v, want %+v", got, want)
	}
	// Nothing new: nothing to say.
	if got, err := LinksOutside(ctx, dir, "HEAD", "HEAD"); err != nil || len(got) != 0 {
		t.Fatalf("the same tree: %+v %v", got, err)
	}
}
