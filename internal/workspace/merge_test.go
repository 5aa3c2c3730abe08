package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A worker's work moved onto a branch that moved on: merged with what
// landed, its conflicts marked, its branch at the new tip and what it
// had made uncommitted; a merge commit has both parents.
func TestMergeMarkedAndMoveWorktree(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "b.txt": "b\n"})
	base := strings.TrimSpace(run(t, dir, "rev-parse", "HEAD"))
	w := newWorktree(t, dir, "w1")
	id := Identity{Name: "ultra", Email: "ultra@example.com"}
	// What lands on main meanwhile: a.txt's middle line, and c.txt.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\nTWO (main)\nthree\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("c\n"), 0o644)
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "landed")
	tip := strings.TrimSpace(run(t, dir, "rev-parse", "HEAD"))
	// The worker's work, uncommitted: the same line otherwise, and b.txt.
	os.WriteFile(filepath.Join(w.Path, "a.txt"), []byte("one\ntwo (worker)\nthree\n"), 0o644)
	os.WriteFile(filepath.Join(w.Path, "b.txt"), []byte("b, the worker's\n"), 0o644)
	cur, err := TreeHash(ctx, w.Path)
	if err != nil {
		t.Fatal(err)
	}
	work, err := CommitOf(ctx, w.Path, cur, "work", id, base)
	if err != nil {
		t.Fatal(err)
	}
	merged, conflicts, err := MergeMarked(ctx, dir, tip, work)
	if err != nil || !slices.Equal(conflicts, []string{"a.txt"}) {
		t.Fatalf("merge: %v %v", conflicts, err)
	}
	if tr, cs, _ := MergeTrees(ctx, dir, tip, work); tr != "" || len(cs) != 1 {
		t.Fatalf("MergeTrees of a conflict gave a tree %q", tr)
	}
	if err := MoveWorktree(ctx, w.Path, w.Branch, base, tip, merged); err != nil {
		t.Fatal(err)
	}
	if BranchTip(ctx, dir, w.Branch) != tip {
		t.Fatal("the branch did not move to the tip")
	}
	a, _ := os.ReadFile(filepath.Join(w.Path, "a.txt"))
	b, _ := os.ReadFile(filepath.Join(w.Path, "b.txt"))
	c, _ := os.ReadFile(filepath.Join(w.Path, "c.txt"))
	if !strings.Contains(string(a), "<<<<<<<") || !strings.Contains(string(a), "TWO (main)") || !strings.Contains(string(a), "two (worker)") ||
		string(b) != "b, the worker's\n" || string(c) != "c\n" {
		t.Fatalf("files after the move:\n%s%s%s", a, b, c)
	}
	if st := run(t, w.Path, "status", "--porcelain"); !strings.Contains(st, "M a.txt") || !strings.Contains(st, "M b.txt") || strings.Contains(st, "c.txt") {
		t.Fatalf("status after the move:\n%s", st)
	}
	// The branch moves only from where it was.
	if err := MoveWorktree(ctx, w.Path, w.Branch, base, tip, merged); err == nil {
		t.Fatal("moved a branch that was no longer at from")
	}
	// A merge commit of the worker's: two parents, even of the tip's tree.
	tipTree, _ := TreeOf(ctx, dir, tip)
	m, err := CommitTree(ctx, w.Path, w.Branch, tipTree, "merge", id, nil, work)
	if err != nil || m == "" {
		t.Fatalf("merge commit: %q %v", m, err)
	}
	if ps := strings.Fields(run(t, dir, "log", "-1", "--format=%P", m)); !slices.Equal(ps, []string{tip, work}) {
		t.Fatalf("parents %v", ps)
	}
	// The lines the work changed, without what skip names.
	diff, err := DiffLines(ctx, dir, base, work, "b.txt")
	if err != nil || !strings.Contains(diff, "@@ -2 +2 @@") || strings.Contains(diff, "b.txt") {
		t.Fatalf("diff %q %v", diff, err)
	}
}

// A merged tree put in a worktree and taken out again: the files the two
// trees differ in go back and forth; a file changed on disk that neither
// touches (ultra's records) stays as it is.
func TestSwitchTree(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.txt": "a\n", "records.txt": "r1\n"})
	w := newWorktree(t, dir, "w1")
	tip := strings.TrimSpace(run(t, w.Path, "rev-parse", "HEAD^{tree}"))
	os.WriteFile(filepath.Join(w.Path, "records.txt"), []byte("r2, newer on disk\n"), 0o644)
	// The merged tree: a.txt changed, b.txt added.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a, merged\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644)
	run(t, dir, "add", "a.txt", "b.txt")
	run(t, dir, "commit", "-q", "-m", "merged")
	merged := strings.TrimSpace(run(t, dir, "rev-parse", "HEAD^{tree}"))
	if err := CheckoutTree(ctx, w.Path, merged); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(w.Path, name)); return string(b) }
	if read("a.txt") != "a, merged\n" || read("b.txt") != "b\n" || read("records.txt") != "r2, newer on disk\n" {
		t.Fatalf("merged in: %q %q %q", read("a.txt"), read("b.txt"), read("records.txt"))
	}
	if idx, _ := IndexTree(ctx, w.Path); idx != merged {
		t.Fatalf("index %s, want the merged tree", idx)
	}
	if err := SwitchTree(ctx, w.Path, merged, tip); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(w.Path, "b.txt")); err == nil || read("a.txt") != "a\n" || read("records.txt") != "r2, newer on disk\n" {
		t.Fatalf("taken out: %q %q", read("a.txt"), read("records.txt"))
	}
	if idx, _ := IndexTree(ctx, w.Path); idx != tip {
		t.Fatalf("index %s, want the tip's tree", idx)
	}
}
