package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestTreeHashFollowsTheWorkingTree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n"), 0o644)
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "x")

	h1, err := TreeHash(ctx, dir)
	if err != nil || len(h1) < 40 {
		t.Fatal(h1, err)
	}
	os.WriteFile(filepath.Join(dir, "x.log"), []byte("ignored"), 0o644)
	if h, _ := TreeHash(ctx, dir); h != h1 {
		t.Fatal("an ignored file changed the hash")
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b\n"), 0o644)
	h2, _ := TreeHash(ctx, dir)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("n\n"), 0o644)
	h3, _ := TreeHash(ctx, dir)
	if h2 == h1 || h3 == h2 {
		t.Fatal("changes and untracked files must change the hash")
	}
	os.Remove(filepath.Join(dir, "new.txt"))
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	if h, _ := TreeHash(ctx, dir); h != h1 {
		t.Fatal("the same content must give the same hash")
	}
	// The repository's own index is untouched.
	out, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
	if len(out) != 0 {
		t.Fatalf("status not clean: %s", out)
	}
	if _, err := TreeHash(ctx, t.TempDir()); err == nil {
		t.Fatal("not a repository must be an error")
	}
}

func TestTreeHashInEmptyRepo(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	if h, err := TreeHash(context.Background(), dir); err != nil || h == "" {
		t.Fatal(h, err)
	}
}

// A file changed within the same second as the index, keeping its size,
// must still change the hash.
func TestTreeHashSeesRacyEdits(t *testing.T) {
	for i := 0; i < 3; i++ {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a.go"), []byte("return a - b\n"), 0o644)
		git(t, dir, "init", "-q")
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-qm", "x")
		before, _ := TreeHash(context.Background(), dir)
		os.WriteFile(filepath.Join(dir, "a.go"), []byte("return a + b\n"), 0o644)
		// Hash in a later second than the edit: a copy of the index
		// stamped now would then trust the stale stat data.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
		after, _ := TreeHash(context.Background(), dir)
		if before == after {
			t.Fatal("a same-size edit in the index's second was missed")
		}
	}
}
