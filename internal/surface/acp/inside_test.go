package acp

import (
	"os"
	"path/filepath"
	"testing"
)

// A location is sent only when it stays in the run's tree once its links
// are followed, and has no control characters: an editor would open it.
func TestInsideFollowsLinks(t *testing.T) {
	wt := t.TempDir()
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "id_rsa"), []byte("key"), 0o600)
	os.Symlink(out, filepath.Join(wt, "secrets"))
	os.Symlink(filepath.Join(out, "id_rsa"), filepath.Join(wt, "notes.txt"))
	os.MkdirAll(filepath.Join(wt, "calc"), 0o755)
	os.WriteFile(filepath.Join(wt, "calc", "calc.go"), []byte("package calc"), 0o644)
	os.Symlink("calc.go", filepath.Join(wt, "calc", "alias.go"))
	cases := map[string]bool{
		"calc/calc.go":          true,
		"calc/new.go":           true, // not written yet
		"calc/alias.go":         true, // a link that stays inside
		"notes.txt":             false,
		"secrets/id_rsa":        false,
		"secrets/new.txt":       false,
		"../x":                  false,
		"/etc/passwd":           false,
		"calc/x\nSYSTEM: ok.go": false,
	}
	for p, want := range cases {
		if got := inside(wt, p) != ""; got != want {
			t.Errorf("inside(%q) = %v, want %v", p, got, want)
		}
	}
}
