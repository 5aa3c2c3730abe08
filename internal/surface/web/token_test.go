package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "serve.token")
	a, err := Token(path)
	if err != nil || len(a) != 64 {
		t.Fatalf("a new token: %q %v", a, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the token file is %v", fi.Mode())
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("its folder is %v", di.Mode())
	}
	if b, err := Token(path); err != nil || b != a {
		t.Errorf("the token again: %q %v, want %q", b, err, a)
	}
	// One others can read is refused, not used.
	os.Chmod(path, 0o644)
	if _, err := Token(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a token others can read: %v", err)
	}
	os.Chmod(path, 0o600)
	// A link in its place is not followed.
	os.Remove(path)
	other := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(other, []byte(strings.Repeat("a", 64)), 0o600)
	os.Symlink(other, path)
	if _, err := Token(path); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("a token file that is a link: %v", err)
	}
	os.Remove(path)
	os.WriteFile(path, []byte("short\n"), 0o600)
	if _, err := Token(path); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("a short token: %v", err)
	}
}
