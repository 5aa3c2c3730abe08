package workspace

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func git(t testing.TB, dir string, args ...string) {
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

// ExportTree writes exactly the tree's files (not ignored or untracked
// ones) and leaves the repository's index alone; IgnoredDirs finds the
// ignored dependency directories.
func TestExportTreeAndIgnoredDirs(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("init", "-q", "-b", "main")
	write := writer(dir)
	write(".gitignore", "node_modules/\nhidden.go\n.venv/\n")
	write("a.go", "package a\n")
	write("sub/b.go", "package sub\n")
	write("web/node_modules/x/index.js", "x")
	write("web/app.js", "app")
	write("node_modules/y/index.js", "y")
	write(".venv/bin/python", "")
	write("hidden.go", "package a // ignored\n")
	os.Symlink("a.go", filepath.Join(dir, "link.go"))
	run("add", "-A")
	run("commit", "-qm", "one")
	write("untracked.go", "package a\n")
	index := run("ls-files", "--stage")
	tree, err := TreeHash(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "tree")
	if err := ExportTree(context.Background(), dir, tree, dest); err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			got = append(got, rel)
		}
		return nil
	})
	sort.Strings(got)
	if strings.Join(got, " ") != ".gitignore a.go link.go sub/b.go untracked.go web/app.js" {
		t.Fatalf("exported %v", got)
	}
	if l, _ := os.Readlink(filepath.Join(dest, "link.go")); l != "a.go" {
		t.Fatalf("symlink exported as %q", l)
	}
	if run("ls-files", "--stage") != index {
		t.Fatal("the repository's index changed")
	}
	if err := ExportTree(context.Background(), dir, tree, dest); err == nil {
		t.Fatal("exported over an existing directory")
	}
	deps, err := IgnoredDirs(context.Background(), dir, "node_modules", ".venv")
	sort.Strings(deps)
	if err != nil || strings.Join(deps, " ") != ".venv node_modules web/node_modules" {
		t.Fatalf("%v %v", deps, err)
	}
}

func TestDiffTreesAndRestoreInTree(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write := writer(dir)
	write("a.go", "package a\n")
	write("a_test.go", "package a // original\n")
	write("b_test.go", "package a // b original, long enough to be found as a rename\n")
	write("c_test.go", "package a // c\n")
	ctx := context.Background()
	base, _ := TreeHash(ctx, dir)
	write("a.go", "package a // new code\n")
	write("a_test.go", "package a // weakened\n")
	os.Remove(filepath.Join(dir, "c_test.go"))
	os.Rename(filepath.Join(dir, "b_test.go"), filepath.Join(dir, "renamed_test.go"))
	write("new_test.go", "package a // TestMain\n")
	tree, _ := TreeHash(ctx, dir)
	cs, err := DiffTrees(ctx, dir, base, tree)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Status+":"+c.From+">"+c.Path)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "A:>new_test.go D:>c_test.go M:>a.go M:>a_test.go R:b_test.go>renamed_test.go" {
		t.Fatalf("changes %v", got)
	}
	prot, err := RestoreInTree(ctx, dir, tree, base, []string{"a_test.go", "c_test.go", "b_test.go", "renamed_test.go"}, []string{"new_test.go"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "p")
	if err := ExportTree(ctx, dir, prot, dest); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.go": "package a // new code\n", "a_test.go": "package a // original\n", "c_test.go": "package a // c\n",
		"b_test.go": "package a // b original, long enough to be found as a rename\n", "renamed_test.go": "", "new_test.go": ""} {
		b, _ := os.ReadFile(filepath.Join(dest, p))
		if string(b) != want {
			t.Errorf("%s = %q, want %q", p, b, want)
		}
	}
}

// writer writes files (with their directories) under dir.
func writer(dir string) func(p, s string) {
	return func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
	}
}

// A nested repository in a tree the model wrote (untracked, or committed
// as a gitlink) never gets to run its config's programs in ultra's git
// commands: status, diff, hashing, exporting.
func TestNestedRepositoryConfigDoesNotRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write := writer(dir)
	write("a.go", "package a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "one")
	marker := filepath.Join(t.TempDir(), "ran")
	for _, sub := range []string{"tracked", "untracked"} {
		nest := filepath.Join(dir, sub)
		os.MkdirAll(nest, 0o755)
		git(t, nest, "init", "-q")
		writer(nest)("x.txt", "x\n")
		git(t, nest, "add", "x.txt")
		git(t, nest, "commit", "-qm", "x")
		git(t, nest, "config", "core.fsmonitor", "touch "+marker+"; false")
		writer(nest)("x.txt", "changed\n") // a dirty submodule makes git look inside
	}
	git(t, dir, "add", "tracked")
	git(t, dir, "commit", "-qm", "gitlink")
	os.Remove(marker)
	if _, err := Changed(ctx, dir); err != nil {
		t.Fatal(err)
	}
	tree, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ExportTree(ctx, dir, tree, filepath.Join(t.TempDir(), "x")); err != nil {
		t.Fatal(err)
	}
	Git(ctx, dir, "diff", "HEAD")
	Git(ctx, dir, "diff", "--stat", "HEAD~1")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a nested repository's core.fsmonitor ran in ultra's git")
	}
}

// WithoutPaths leaves ultra's records out of a tree, whatever the files on
// disk and the repository's index hold.
func TestWithoutPaths(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.go": "package a\n", ".ultra/goals.json": "{}\n", ".ultra/config": "x = 1\n"})
	// The tree's goals.json is neither HEAD's nor the one on disk.
	os.WriteFile(filepath.Join(dir, ".ultra", "goals.json"), []byte("{\"v\":2}\n"), 0o644)
	with, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".ultra", "goals.json"), []byte("{\"v\":3}\n"), 0o644)
	got, err := WithoutPaths(ctx, dir, with, []string{".ultra/goals.json", ".ultra/ledger.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("git", "-C", dir, "ls-tree", "-r", "--name-only", got).Output()
	if string(out) != ".ultra/config\na.go\n" {
		t.Fatalf("tree without the records holds:\n%s", out)
	}
	if same, _ := WithoutPaths(ctx, dir, got, []string{".ultra/goals.json"}); same != got {
		t.Fatal("a tree without the paths must come back as it is")
	}
}

// A directory among the paths goes with every file under it, and nothing
// beside it.
func TestWithoutPathsDirectory(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, map[string]string{"a.go": "package a\n", ".ultra/config": "x = 1\n",
		".ultra/runs/r1/goals.json": "{}\n", ".ultra/runs/r1/ledger.jsonl": "\n", ".ultra/runs/r2/goals.json": "{}\n", ".ultra/runsx/keep": "k\n"})
	with, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := WithoutPaths(ctx, dir, with, []string{".ultra/runs", ".ultra/goals.json"})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("git", "-C", dir, "ls-tree", "-r", "--name-only", got).Output()
	if string(out) != ".ultra/config\n.ultra/runsx/keep\na.go\n" {
		t.Fatalf("tree without the runs' records holds:\n%s", out)
	}
}

func TestCaseVariant(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{".ultra", false}, {".git", false}, {".ULTRA", true}, {".Ultra", true}, {".uLtRa", true},
		{".GIT", true}, {".Git", true}, {".ultras", false}, {"ultra", false}, {".gitignore", false}, {"src", false},
		{".ultra.", true}, {".ultra ", true}, {".ULTRA. .", true}, {"ULTRA~1", true}, {"ultra~12", true}, {"GIT~1", true},
		{".ultr\u200ca", true}, {".\u200cultra", true}, {".ultra::$INDEX_ALLOCATION", true}, {".git:stream", true},
		{"ultra~x", false}, {"ULTRAX~1", false}, {".ultra-notes", false}, {"", false},
	} {
		if got := CaseVariant(tc.name); got != tc.want {
			t.Errorf("CaseVariant(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCheckoutChanged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "calc"), 0o755)
	for name, body := range map[string]string{"calc/calc.go": "package calc\n", "calc/other.go": "package calc\n", "README": "r\n", "x.sh": "#!/bin/sh\n"} {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	os.Chmod(filepath.Join(dir, "x.sh"), 0o755)
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "x")
	tree, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "co")
	if err := ExportTree(ctx, dir, tree, dest); err != nil {
		t.Fatal(err)
	}
	if cs, err := CheckoutChanged(ctx, dir, tree, dest); err != nil || len(cs) != 0 {
		t.Fatalf("a fresh checkout: %v %v", cs, err)
	}
	// What tests leave beside the tree's files is theirs.
	os.WriteFile(filepath.Join(dest, "calc", "out.txt"), []byte("scratch"), 0o644)
	if cs, _ := CheckoutChanged(ctx, dir, tree, dest); len(cs) != 0 {
		t.Fatalf("a new file counted: %v", cs)
	}
	os.WriteFile(filepath.Join(dest, "calc", "calc.go"), []byte("package calc\n// changed\n"), 0o644)
	os.Remove(filepath.Join(dest, "README"))
	os.Chmod(filepath.Join(dest, "x.sh"), 0o644)
	cs, err := CheckoutChanged(ctx, dir, tree, dest)
	sort.Strings(cs)
	if err != nil || strings.Join(cs, " ") != "README calc/calc.go x.sh" {
		t.Fatalf("changed %v, %v", cs, err)
	}
	// The repository's own index is untouched.
	if out, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); len(out) != 0 {
		t.Fatalf("status not clean: %s", out)
	}
}

// A checkout of a tree is what a person's fresh checkout of it holds:
// the tree's own .gitattributes apply, and one lying untracked or ignored
// in the working tree does not (git would read it for the paths the tree
// has no attributes file for).
func TestExportTreeReadsOnlyTheTreesAttributes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write := writer(dir)
	write(".gitattributes", "*.go ident\n")
	write(".gitignore", "calc/.gitattributes\nnotes/.gitattributes\n")
	write("calc/calc.go", "package calc\n\nconst rev = \"$Id$\"\n")
	write("notes/a.txt", "$Id$\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "one")
	// The model's attribute files, ignored (TreeHash leaves them out).
	write("calc/.gitattributes", "*.go -ident\n")
	write("notes/.gitattributes", "*.txt ident\n")
	tree, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "tree")
	if err := ExportTree(ctx, dir, tree, dest); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dest, "calc/calc.go"))
	if !strings.Contains(string(got), "$Id: ") {
		t.Fatalf("the tree's ident attribute was not applied: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dest, "notes/a.txt")); string(got) != "$Id$\n" {
		t.Fatalf("an untracked attributes file applied: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dest, "calc/.gitattributes")); err == nil {
		t.Fatal("an ignored file was exported")
	}
	changed, err := CheckoutChanged(ctx, dir, tree, dest)
	if err != nil || len(changed) != 0 {
		t.Fatalf("a fresh checkout changed: %v %v", changed, err)
	}
}

// ultra's records are committed as they are on disk: a .gitattributes
// that gives them a filter (ident here) changes what git add stores of
// the code, never of .ultra.
func TestTreeHashStoresTheRecordsAsWritten(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write := writer(dir)
	write("a.go", "package a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "one")
	write(".gitattributes", "/.ultra/** ident\n*.go ident\n")
	record := `{"text":"Add adds $Id: forged $"}` + "\n"
	write(".ultra/ledger.jsonl", record)
	write("b.go", "package a // $Id: anything $\n")
	tree, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	show := func(p string) string {
		out, err := exec.Command("git", "-C", dir, "cat-file", "blob", tree+":"+p).Output()
		if err != nil {
			t.Fatal(p, err)
		}
		return string(out)
	}
	if got := show(".ultra/ledger.jsonl"); got != record {
		t.Fatalf("the record was stored as %q, not as written", got)
	}
	if got := show("b.go"); got != "package a // $Id$\n" {
		t.Fatalf("the code's attributes no longer apply: %q", got)
	}
}

// The attributes git add applies may come from the index it starts from
// (a .gitattributes removed from the working tree but still in the
// index): the records are stored as written all the same.
func TestTreeHashStoresTheRecordsAsWrittenWhateverTheIndexHolds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write := writer(dir)
	write(".gitattributes", "* ident\n")
	write(".editorconfig", "root = true\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "one")
	os.Remove(filepath.Join(dir, ".gitattributes"))
	write(".editorconfig", "root = false\n")
	record := `{"text":"$Id: forged $"}` + "\n"
	write(".ultra/ledger.jsonl", record)
	tree, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", dir, "cat-file", "blob", tree+":.ultra/ledger.jsonl").Output()
	if err != nil || string(out) != record {
		t.Fatalf("the record was stored as %q (%v), not as written", out, err)
	}
}

func TestBlobAndFilesContaining(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write := writer(dir)
	write("a.go", "\n//go:debug panicnil=1\npackage a\n\n")
	write("b[1].go", "package a // no directive\n")
	write("*.go", "//go:debug x=1\npackage a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "one")
	tree, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := Blob(ctx, dir, tree, "a.go"); err != nil || b != "\n//go:debug panicnil=1\npackage a\n\n" {
		t.Fatalf("blob %q %v: not byte for byte", b, err)
	}
	got, err := FilesContaining(ctx, dir, tree, "//go:debug", []string{"a.go", "b[1].go"})
	if err != nil || !got["a.go"] || len(got) != 1 {
		t.Fatalf("files with the text: %v %v", got, err)
	}
	// Paths are paths, not patterns: "*.go" is the file of that name.
	if got, err := FilesContaining(ctx, dir, tree, "//go:debug", []string{"b[1].go"}); err != nil || len(got) != 0 {
		t.Fatalf("no file has it: %v %v", got, err)
	}
	if got, err := FilesContaining(ctx, dir, tree, "//go:debug", []string{"*.go"}); err != nil || !got["*.go"] || len(got) != 1 {
		t.Fatalf("a literal path: %v %v", got, err)
	}
	if _, err := Blob(ctx, dir, tree, "missing.go"); err == nil {
		t.Fatal("a missing file read")
	}
}

// TestTreeHashRecordsFromDiskAlone: whatever the index holds under
// .ultra/ (a skip-worktree link over another run's ledger, an
// assume-unchanged entry with other bytes, a new entry with no file, a
// gitlink), the tree holds .ultra/ as it is on disk.
func TestTreeHashRecordsFromDiskAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".ultra", "runs", "A"), 0o755)
	os.WriteFile(filepath.Join(dir, ".ultra", "runs", "A", "ledger.jsonl"), []byte("{\"seq\":1}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".ultra", "config"), []byte("[run]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "x")
	clean, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	hashOf := func(content string) string {
		cmd := exec.Command("git", "-C", dir, "hash-object", "-w", "--stdin")
		cmd.Stdin = strings.NewReader(content)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	forged := hashOf("forged\n")
	link := hashOf("../../../a.txt")
	head, _ := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	moves := []struct {
		name string
		args [][]string
	}{
		{"skip-worktree link over a ledger", [][]string{
			{"update-index", "--cacheinfo", "120000," + link + ",.ultra/runs/A/ledger.jsonl"},
			{"update-index", "--skip-worktree", ".ultra/runs/A/ledger.jsonl"}}},
		{"assume-unchanged other bytes", [][]string{
			{"update-index", "--cacheinfo", "100644," + forged + ",.ultra/config"},
			{"update-index", "--assume-unchanged", ".ultra/config"}}},
		{"an entry with no file", [][]string{
			{"update-index", "--add", "--cacheinfo", "120000," + link + ",.ultra/state/planted"},
			{"update-index", "--skip-worktree", ".ultra/state/planted"}}},
		{"a gitlink", [][]string{
			{"update-index", "--add", "--cacheinfo", "160000," + strings.TrimSpace(string(head)) + ",.ultra/runs/B"}}},
	}
	for _, m := range moves {
		t.Run(m.name, func(t *testing.T) {
			git(t, dir, "read-tree", "HEAD")
			for _, a := range m.args {
				git(t, dir, a...)
			}
			if got, err := TreeHash(ctx, dir); err != nil || got != clean {
				out, _ := exec.Command("git", "-C", dir, "ls-tree", "-r", got, "--", ".ultra").CombinedOutput()
				t.Errorf("tree %s (%v), want %s; its .ultra:\n%s", got, err, clean, out)
			}
		})
	}
	git(t, dir, "read-tree", "HEAD")
	// A file ultra writes on disk is in the tree.
	os.WriteFile(filepath.Join(dir, ".ultra", "runs", "A", "goals.json"), []byte("{}\n"), 0o644)
	if got, _ := TreeHash(ctx, dir); got == clean {
		t.Error("a record written on disk is not in the tree")
	}
}

// TestNoHookRunsForUltrasGit: ultra's own git commands run no hook of the
// repository (a run's worktree takes its hooks from the person's
// checkout), while what a person's git reads of the setting is unchanged.
func TestNoHookRunsForUltrasGit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	os.MkdirAll(hooks, 0o755)
	ran := filepath.Join(dir, "RAN")
	for _, h := range []string{"post-index-change", "post-checkout", "pre-commit", "post-commit", "reference-transaction"} {
		os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\necho "+h+" >> "+ran+"\n"), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	git(t, dir, "init", "-q")
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-qm", "x", "--no-verify")
	git(t, dir, "config", "core.hooksPath", hooks)
	os.Remove(ran)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644)
	tree, err := TreeHash(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CommitTree(ctx, dir, CurrentBranch(ctx, dir), tree, "y", Identity{Name: "t", Email: "t@t"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Errorf("hooks ran for ultra's git: %s", b)
	}
	if got := PersonConfigValue(ctx, dir, "core.hooksPath"); got != hooks {
		t.Errorf("the repository's hooks path as a person reads it: %q, want %q", got, hooks)
	}
}

func TestForeignUltraPaths(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	write(".ultra/config", "[run]\n")
	write(".ultra/runs/A/ledger.jsonl", "a\n")
	write("a.txt", "a\n")
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "base")
	base, _ := Head(ctx, dir)
	own := []string{".ultra/runs/B/brief.md", ".ultra/runs/B/goals.json", ".ultra/runs/B/ledger.jsonl"}
	cases := []struct {
		name string
		do   func()
		bad  string
	}{
		{"code and own records", func() { write("a.txt", "b\n"); write(".ultra/runs/B/goals.json", "{}\n") }, ""},
		{"another run's records", func() { write(".ultra/runs/A/ledger.jsonl", "forged\n") }, ".ultra/runs/A/ledger.jsonl"},
		{"ultra's state", func() { write(".ultra/state/x", "x\n") }, ".ultra/state/x"},
		{"the project's config", func() { write(".ultra/config", "[model]\n") }, ".ultra/config"},
		{"own records as a link", func() {
			os.MkdirAll(filepath.Join(dir, ".ultra/runs/B"), 0o755)
			os.Symlink("../../../a.txt", filepath.Join(dir, ".ultra/runs/B/ledger.jsonl"))
		}, ".ultra/runs/B/ledger.jsonl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			git(t, dir, "reset", "-q", "--hard", base)
			git(t, dir, "clean", "-qfdx")
			c.do()
			tree, err := TreeHash(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			bad, err := ForeignUltraPaths(ctx, dir, base, tree, own)
			if err != nil || strings.Join(bad, " ") != c.bad {
				t.Errorf("ForeignUltraPaths = %q, %v; want %q", bad, err, c.bad)
			}
		})
	}
}

// TestTreeHashIsWhatIsOnDisk: an index entry marked skip-worktree or
// assume-unchanged does not keep in the tree what is on no disk.
func TestTreeHashIsWhatIsOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("package a\n\nfunc B() {}\n"), 0o644)
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "x")
	clean, _ := TreeHash(ctx, dir)
	hash := func(content string) string {
		cmd := exec.Command("git", "-C", dir, "hash-object", "-w", "--stdin")
		cmd.Stdin = strings.NewReader(content)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	hidden := hash("package a\n\nfunc init() { panic(\"hidden\") }\n")
	for _, c := range []struct {
		name string
		args [][]string
	}{
		{"a new file on no disk, skip-worktree", [][]string{{"update-index", "--add", "--cacheinfo", "100644," + hidden + ",hidden.go"}, {"update-index", "--skip-worktree", "hidden.go"}}},
		{"other bytes, assume-unchanged", [][]string{{"update-index", "--cacheinfo", "100644," + hidden + ",b.go"}, {"update-index", "--assume-unchanged", "b.go"}}},
		{"other bytes, skip-worktree", [][]string{{"update-index", "--cacheinfo", "100644," + hidden + ",a.go"}, {"update-index", "--skip-worktree", "a.go"}}},
		{"both marks", [][]string{{"update-index", "--cacheinfo", "100644," + hidden + ",a.go"}, {"update-index", "--skip-worktree", "a.go"}, {"update-index", "--assume-unchanged", "a.go"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			git(t, dir, "read-tree", "HEAD")
			for _, a := range c.args {
				git(t, dir, a...)
			}
			if got, err := TreeHash(ctx, dir); err != nil || got != clean {
				t.Errorf("tree %s (%v), want the files' %s", got, err, clean)
			}
		})
	}
	// As HEAD has it in the index, other bytes on disk (the model's
	// change, hidden from the gate but not from the reviewer): the tree
	// is the disk's.
	git(t, dir, "read-tree", "HEAD")
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("package a\n\nfunc B() { panic(\"on disk\") }\n"), 0o644)
	onDisk, _ := TreeHash(ctx, dir)
	git(t, dir, "update-index", "--skip-worktree", "b.go")
	if got, err := TreeHash(ctx, dir); err != nil || got != onDisk || onDisk == clean {
		t.Errorf("a change on disk hidden by skip-worktree: tree %s (%v), want the disk's %s", got, err, onDisk)
	}
	git(t, dir, "update-index", "--no-skip-worktree", "b.go")
	git(t, dir, "checkout", "--", "b.go")
	// A sparse checkout's file outside its cone: marked, as HEAD has it,
	// not on disk. It stays in the tree.
	git(t, dir, "read-tree", "HEAD")
	git(t, dir, "update-index", "--skip-worktree", "b.go")
	os.Remove(filepath.Join(dir, "b.go"))
	if got, err := TreeHash(ctx, dir); err != nil || got != clean {
		t.Errorf("a sparse checkout's file left out: tree %s (%v), want %s", got, err, clean)
	}
}
