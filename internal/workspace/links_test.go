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
		{"link", ".gitignore", false},
		{"link", "", false},
		{"a/link", "./../b", false},
	} {
		if got := LinkEscapes(c.path, c.target); got != c.want {
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
	os.Symlink("../a.txt", filepath.Join(dir, "docs", "fine"))
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
	want := []Link{{"a.txt", ".git/config"}, {"docs/key", "/home/u/.ssh/id_rsa"}, {"inside", "../../outside"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("links %+v, want %+v", got, want)
	}
}
