package agent

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestLockRun(t *testing.T) {
	root := t.TempDir()
	unlock, err := LockRun(root, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockRun(root, "r1"); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second lock while held: %v", err)
	}
	if RunLocked(root, "r1") {
		t.Error("the holder itself counts as locking out")
	}
	unlock()
	if _, err := os.Stat(filepath.Join(RunDir(root, "r1"), "lock")); !os.IsNotExist(err) {
		t.Fatal("unlock left the lock file")
	}
	// A lock left by a process that died is taken over.
	os.WriteFile(filepath.Join(RunDir(root, "r1"), "lock"), []byte("999999999"), 0o644)
	if RunLocked(root, "r1") {
		t.Error("a dead holder still locks")
	}
	unlock, err = LockRun(root, "r1")
	if err != nil {
		t.Fatalf("a stale lock was not taken over: %v", err)
	}
	unlock()
}
