package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteNewFileCreatesParents(t *testing.T) {
	env := newTestEnv(t)
	r := mustOK(t, call(t, Write{}, env, obj{"file_path": "a/b/c.txt", "content": "1\n2\n3\n"}))
	if r.Output != "Wrote 3 lines to a/b/c.txt (new file)" {
		t.Fatalf("output %q", r.Output)
	}
	if got := readFileT(t, filepath.Join(env.Root, "a/b/c.txt")); got != "1\n2\n3\n" {
		t.Fatalf("content %q", got)
	}
	// Written files count as read: a second write or an edit needs no read.
	r = mustOK(t, call(t, Write{}, env, obj{"file_path": "a/b/c.txt", "content": "x"}))
	contains(t, r.Output, "Wrote 1 line to a/b/c.txt (overwrote)")
	mustOK(t, call(t, Edit{}, env, obj{"file_path": "a/b/c.txt", "old_string": "x", "new_string": "y"}))
}

func TestWriteRefusesUnreadOrChanged(t *testing.T) {
	env := newTestEnv(t)
	p := writeFile(t, env.Root, "exists.txt", "old\n")
	mustErr(t, call(t, Write{}, env, obj{"file_path": "exists.txt", "content": "new"}), "has not been read", "Read it first")
	if readFileT(t, p) != "old\n" {
		t.Fatal("file was overwritten")
	}
	mustOK(t, call(t, Read{}, env, obj{"file_path": "exists.txt"}))
	writeFile(t, env.Root, "exists.txt", "changed behind our back\n")
	mustErr(t, call(t, Write{}, env, obj{"file_path": "exists.txt", "content": "new"}), "changed on disk since you read it")
	mustOK(t, call(t, Read{}, env, obj{"file_path": "exists.txt"}))
	r := mustOK(t, call(t, Write{}, env, obj{"file_path": "exists.txt", "content": "new"}))
	contains(t, r.Output, "(overwrote)")
	if readFileT(t, p) != "new" {
		t.Fatal("not written")
	}
	// Empty content is valid.
	mustOK(t, call(t, Write{}, env, obj{"file_path": "empty.txt", "content": ""}))
	mustErr(t, call(t, Write{}, env, obj{"file_path": "dir/../", "content": "x"}))
}

func TestWriteEditProtectedDirs(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, ".ultra/state/run/notes.txt", "state\n")
	// Reading ultra's state is allowed.
	mustOK(t, call(t, Read{}, env, obj{"file_path": ".ultra/state/run/notes.txt"}))
	mustErr(t, call(t, Write{}, env, obj{"file_path": ".ultra/state/run/notes.txt", "content": "x"}), "managed by ultra only")
	mustErr(t, call(t, Edit{}, env, obj{"file_path": ".ultra/state/run/notes.txt", "old_string": "state", "new_string": "x"}), "managed by ultra only")
	mustErr(t, call(t, Write{}, env, obj{"file_path": ".ultra", "content": "x"}), "managed by ultra only")
	mustErr(t, call(t, Write{}, env, obj{"file_path": "sub/../.ultra/new.txt", "content": "x"}), "managed by ultra only")
	mustErr(t, call(t, Write{}, env, obj{"file_path": ".git/config", "content": "x"}), ".git")
	mustErr(t, call(t, Write{}, env, obj{"file_path": "vendor/x/.git/HEAD", "content": "x"}), ".git")
	// A symlink into .ultra does not get around it.
	if err := os.Symlink(filepath.Join(env.Root, ".ultra"), filepath.Join(env.Root, "sneaky")); err != nil {
		t.Fatal(err)
	}
	mustErr(t, call(t, Write{}, env, obj{"file_path": "sneaky/x.txt", "content": "x"}), "managed by ultra only")
	if readFileT(t, filepath.Join(env.Root, ".ultra/state/run/notes.txt")) != "state\n" {
		t.Fatal("state file changed")
	}
	// Files merely named like it are fine.
	mustOK(t, call(t, Write{}, env, obj{"file_path": "docs/.ultra.md", "content": "x"}))
}

func TestPathsEscapingRootRefused(t *testing.T) {
	env := newTestEnv(t)
	outside := t.TempDir()
	secret := writeFile(t, outside, "secret.txt", "secret\n")

	for _, p := range []string{"../x.txt", "a/../../x.txt", secret, "/etc/passwd"} {
		mustErr(t, call(t, Read{}, env, obj{"file_path": p}), "outside the workspace")
		mustErr(t, call(t, Write{}, env, obj{"file_path": p, "content": "x"}), "outside the workspace")
	}
	// Through a symlinked directory and a symlinked file.
	if err := os.Symlink(outside, filepath.Join(env.Root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(env.Root, "secret-link.txt")); err != nil {
		t.Fatal(err)
	}
	mustErr(t, call(t, Read{}, env, obj{"file_path": "link/secret.txt"}), "symlink")
	mustErr(t, call(t, Read{}, env, obj{"file_path": "secret-link.txt"}), "symlink")
	mustErr(t, call(t, Write{}, env, obj{"file_path": "link/new.txt", "content": "x"}), "symlink")
	mustErr(t, call(t, Write{}, env, obj{"file_path": "link/deeper/new.txt", "content": "x"}), "symlink")
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "secret-link.txt", "old_string": "secret", "new_string": "x"}), "symlink")
	mustErr(t, call(t, Glob{}, env, obj{"pattern": "*", "path": "link"}), "symlink")
	mustErr(t, call(t, Grep{}, env, obj{"pattern": "secret", "path": "link"}), "symlink")
	// A dangling symlink pointing outside: writing through it is refused.
	if err := os.Symlink(filepath.Join(outside, "created.txt"), filepath.Join(env.Root, "dangling.txt")); err != nil {
		t.Fatal(err)
	}
	mustErr(t, call(t, Write{}, env, obj{"file_path": "dangling.txt", "content": "x"}), "symlink")
	if _, err := os.Stat(filepath.Join(outside, "created.txt")); err == nil {
		t.Fatal("file created outside the root")
	}
	if readFileT(t, secret) != "secret\n" {
		t.Fatal("secret changed")
	}
	// grep and glob do not follow symlinked files out of the root.
	r := call(t, Grep{}, env, obj{"pattern": "secret"})
	notContains(t, r.Output, "secret-link.txt")

	// Symlinks that stay inside are fine; .. that stays inside is fine.
	writeFile(t, env.Root, "real/f.txt", "inside\n")
	if err := os.Symlink("real", filepath.Join(env.Root, "alias")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, Read{}, env, obj{"file_path": "alias/f.txt"}))
	mustOK(t, call(t, Read{}, env, obj{"file_path": "real/../real/f.txt"}))
	mustOK(t, call(t, Edit{}, env, obj{"file_path": "real/f.txt", "old_string": "inside", "new_string": "edited"}))
}

func TestEditUniqueReplace(t *testing.T) {
	env := newTestEnv(t)
	p := writeFile(t, env.Root, "code.go", "package x\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() int {\n\treturn 1\n}\n")
	mustOK(t, call(t, Read{}, env, obj{"file_path": "code.go"}))

	r := mustErr(t, call(t, Edit{}, env, obj{"file_path": "code.go", "old_string": "return 1", "new_string": "return 2"}), "found 2 matches", "replace_all", "context")
	contains(t, r.Output, "lines 4, 8")

	r = mustOK(t, call(t, Edit{}, env, obj{"file_path": "code.go", "old_string": "func b() int {\n\treturn 1", "new_string": "func b() int {\n\treturn 3"}))
	contains(t, r.Output, "replaced 1 occurrence", "--- a/code.go", "+++ b/code.go", "@@ -5,5 +5,5 @@", "-\treturn 1", "+\treturn 3", " func b() int {")
	notContains(t, r.Output, "-func b")
	if got := readFileT(t, p); !strings.Contains(got, "return 3") || strings.Count(got, "return 1") != 1 {
		t.Fatalf("content %q", got)
	}

	// The edit recorded the new state: another edit needs no read.
	r = mustOK(t, call(t, Edit{}, env, obj{"file_path": "code.go", "old_string": "int", "new_string": "int64", "replace_all": true}))
	contains(t, r.Output, "replaced 2 occurrences")
	if got := readFileT(t, p); strings.Count(got, "int64") != 2 {
		t.Fatalf("content %q", got)
	}
	// replace_all given as a string.
	mustOK(t, call(t, Edit{}, env, `{"file_path":"code.go","old_string":"int64","new_string":"uint","replace_all":"true"}`))
}

func TestEditErrors(t *testing.T) {
	env := newTestEnv(t)
	p := writeFile(t, env.Root, "f.txt", "hello world\n    indented line\n")
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "f.txt", "old_string": "hello", "new_string": "bye"}), "has not been read", "read")
	mustOK(t, call(t, Read{}, env, obj{"file_path": "f.txt"}))
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "f.txt", "old_string": "", "new_string": "x"}), "must not be empty")
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "f.txt", "old_string": "hello", "new_string": "hello"}), "identical")
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "f.txt", "old_string": "absent", "new_string": "x"}), "not found")
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "f.txt", "old_string": "indented  line", "new_string": "x"}), "line 2")
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "missing.txt", "old_string": "a", "new_string": "b"}), "not found", "write")

	// Changed on disk since read: same size, different content.
	later := time.Now().Add(time.Hour)
	if err := os.WriteFile(p, []byte("HELLO world\n    indented line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "f.txt", "old_string": "world", "new_string": "there"}), "file changed on disk since you read it; read it again")
	mustOK(t, call(t, Read{}, env, obj{"file_path": "f.txt"}))
	// Touched only (same content, new mtime): still fine.
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, Edit{}, env, obj{"file_path": "f.txt", "old_string": "world", "new_string": "there"}))
	// Deleted since read.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	mustErr(t, call(t, Edit{}, env, obj{"file_path": "f.txt", "old_string": "there", "new_string": "x"}), "not found")
}

func TestEditCRLFAndPermissions(t *testing.T) {
	env := newTestEnv(t)
	p := writeFile(t, env.Root, "win.txt", "one\r\ntwo\r\nthree\r\n")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, Read{}, env, obj{"file_path": "win.txt"}))
	mustOK(t, call(t, Edit{}, env, obj{"file_path": "win.txt", "old_string": "one\ntwo", "new_string": "uno\ndos"}))
	if got := readFileT(t, p); got != "uno\r\ndos\r\nthree\r\n" {
		t.Fatalf("content %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode changed to %v", fi.Mode())
	}
}

func TestUnifiedDiff(t *testing.T) {
	cases := []struct {
		name, old, oldStr, newStr string
		want                      []string
		absent                    []string
	}{
		{"delete line", "a\nb\nc\n", "b\n", "", []string{"@@ -1,3 +1,2 @@", " a", "-b", " c"}, []string{"\n+"}},
		{"join lines", "a\nb\nc\n", "a\n", "x", []string{"-a", "-b", "+xb"}, nil},
		{"insert", "a\nc\n", "a\n", "a\nb\n", []string{"@@ -1,2 +1,3 @@", " a", "+b", " c"}, []string{"\n-a"}},
		{"no final newline", "a\nb", "b", "B", []string{"-b", "+B"}, nil},
		{"same line twice", "x x\ny\n", "x", "z", []string{"-x x", "+z z"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			updated := strings.ReplaceAll(c.old, c.oldStr, c.newStr)
			d := unifiedDiff("f", c.old, updated, indexAll(c.old, c.oldStr), len(c.oldStr), len(c.newStr))
			body := strings.SplitN(d, "\n", 3)[2]
			contains(t, d, c.want...)
			notContains(t, body, c.absent...)
		})
	}
	// Far-apart changes make separate hunks; the diff is capped.
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString("keep\nchange\n")
	}
	old := b.String()
	updated := strings.ReplaceAll(old, "change", "changed")
	d := unifiedDiff("f", old, updated, indexAll(old, "change"), 6, 7)
	if n := len(lines(strings.TrimSuffix(d, "\n"))); n > maxDiffLines+4 {
		t.Fatalf("diff not capped: %d lines", n)
	}
	contains(t, d, "more diff lines not shown")
	old = "c\n" + strings.Repeat("k\n", 20) + "c\n"
	d = unifiedDiff("f", old, strings.ReplaceAll(old, "c", "d"), indexAll(old, "c"), 1, 1)
	if strings.Count(d, "@@ -") != 2 {
		t.Fatalf("want 2 hunks:\n%s", d)
	}
}

// A file hard-linked to one outside the workspace is replaced in the
// workspace, never written through the link.
func TestWriteAndEditDoNotFollowHardLinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "person.txt")
	os.WriteFile(outside, []byte("the person's file\n"), 0o640)
	env := newTestEnv(t)
	for i, c := range []struct {
		tool Tool
		args obj
	}{
		{Write{}, obj{"file_path": "w.txt", "content": "model\n"}},
		{Edit{}, obj{"file_path": "e.txt", "old_string": "person's", "new_string": "model's"}},
	} {
		name := []string{"w.txt", "e.txt"}[i]
		link := filepath.Join(env.Root, name)
		if err := os.Link(outside, link); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
		mustOK(t, call(t, Read{}, env, obj{"file_path": name}))
		mustOK(t, call(t, c.tool, env, c.args))
		if b, _ := os.ReadFile(outside); string(b) != "the person's file\n" {
			t.Fatalf("%s wrote through the hard link: %q", name, b)
		}
		if fi, _ := os.Stat(link); fi.Mode().Perm() != 0o640 {
			t.Fatalf("%s lost its mode: %v", name, fi.Mode())
		}
	}
}
