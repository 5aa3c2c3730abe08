package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// overlay copies the person's files into the view, never through a link
// out of the checkout: a committed .claude/k -> DIR neither empties DIR's
// files (the view's checkout holds the same link) nor hands them over.
func TestOverlayFollowsNoLinkOut(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.txt")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, dest := t.TempDir(), t.TempDir()
	for _, d := range []string{".claude/hooks", "scripts", ".git"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, ".claude/hooks/g.sh"), []byte("exit 2"), 0o755)
	os.WriteFile(filepath.Join(root, "scripts/lint.sh"), []byte("lint"), 0o644)
	os.WriteFile(filepath.Join(root, ".git/config"), []byte("[core]"), 0o644)
	os.Symlink(outside, filepath.Join(root, ".claude/k"))
	os.Symlink(victim, filepath.Join(root, ".claude/key"))
	os.Symlink("../scripts", filepath.Join(root, ".claude/in"))
	os.Symlink("../.git/config", filepath.Join(root, ".claude/gitconfig"))
	// The view's checkout of the commit holds the same links.
	os.MkdirAll(filepath.Join(dest, ".claude"), 0o755)
	os.Symlink(outside, filepath.Join(dest, ".claude/k"))
	os.Symlink(victim, filepath.Join(dest, ".claude/key"))

	budget := int64(overlayBudget)
	if err := overlay(root, dest, ".claude", &budget); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the file outside became %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(dest, ".claude/hooks/g.sh")); err != nil || string(b) != "exit 2" {
		t.Fatalf("the hook script: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, ".claude/in/lint.sh")); err != nil || string(b) != "lint" {
		t.Fatalf("a link inside the checkout: %q %v", b, err)
	}
	for _, p := range []string{".claude/gitconfig"} {
		if _, err := os.Lstat(filepath.Join(dest, p)); err == nil {
			t.Errorf("%s was copied", p)
		}
	}
	// What a link out names is not copied into the view (the links
	// stay links, read in the sandbox, which hides the person's secrets).
	for _, p := range []string{".claude/key", ".claude/k"} {
		if fi, err := os.Lstat(filepath.Join(dest, p)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the checkout's link: %v", p, err)
		}
	}
}
