package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadLineNumbers(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "a.txt", "alpha\nbeta\r\n\tgamma")
	r := mustOK(t, call(t, Read{}, env, obj{"file_path": "a.txt"}))
	want := "     1\talpha\n     2\tbeta\n     3\t\tgamma"
	if r.Output != want {
		t.Fatalf("got %q want %q", r.Output, want)
	}
}

func TestReadOffsetLimit(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "n.txt", numbered(10))
	r := mustOK(t, call(t, Read{}, env, obj{"file_path": "n.txt", "offset": 3, "limit": 2}))
	ls := lines(r.Output)
	if ls[0] != "     3\tline 3" || ls[1] != "     4\tline 4" {
		t.Fatalf("unexpected lines: %q", r.Output)
	}
	contains(t, r.Output, "Showing lines 3-4 of 10", "offset=5")

	// Numbers as strings, from weak models.
	r = mustOK(t, call(t, Read{}, env, `{"file_path":"n.txt","offset":"9","limit":"5"}`))
	if got := lines(r.Output); len(got) != 2 || got[0] != "     9\tline 9" {
		t.Fatalf("unexpected output %q", r.Output)
	}
	notContains(t, r.Output, "Showing")

	r = call(t, Read{}, env, obj{"file_path": "n.txt", "offset": 50})
	contains(t, r.Output, "only 10 lines", "past the end")
}

func TestReadDefaultLimitNote(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "big.txt", numbered(2500))
	r := mustOK(t, call(t, Read{}, env, obj{"file_path": "big.txt"}))
	contains(t, r.Output, "  2000\tline 2000", "Showing lines 1-2000 of 2500", "offset=2001")
	notContains(t, r.Output, "line 2001\n")
}

func TestReadLongLineTruncated(t *testing.T) {
	env := newTestEnv(t)
	long := strings.Repeat("é", 5000)
	writeFile(t, env.Root, "long.txt", "short\n"+long+"\nend\n")
	r := mustOK(t, call(t, Read{}, env, obj{"file_path": "long.txt"}))
	ls := lines(r.Output)
	if !strings.HasPrefix(ls[1], "     2\t"+strings.Repeat("é", 2000)+" … [line truncated") {
		t.Fatalf("long line not truncated as expected: %.100q", ls[1])
	}
	if ls[2] != "     3\tend" {
		t.Fatalf("line after the long one wrong: %q", ls[2])
	}
	contains(t, r.Output, "cut at 2000 characters")
}

func TestReadHugeFile(t *testing.T) {
	env := newTestEnv(t)
	// ~600 KB in 3000 lines of 200 bytes.
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "%-199d\n", i)
	}
	writeFile(t, env.Root, "huge.txt", b.String())
	r := mustOK(t, call(t, Read{}, env, obj{"file_path": "huge.txt"}))
	contains(t, r.Output, "File is large", "Use offset=")
	if len(r.Output) > maxReadOutput+1000 {
		t.Fatalf("output too large: %d bytes", len(r.Output))
	}
	// The read is recorded even though only part was shown.
	if err := env.Files.Check(filepath.Join(env.Root, "huge.txt")); err != nil {
		t.Fatalf("huge read not recorded: %v", err)
	}
}

func TestReadBinaryRefused(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "bin.dat", "abc\x00def")
	mustErr(t, call(t, Read{}, env, obj{"file_path": "bin.dat"}), "binary")

	junk := make([]byte, 4000)
	for i := range junk {
		junk[i] = byte(0x80 + i%64)
	}
	writeFile(t, env.Root, "latin.bin", string(junk))
	mustErr(t, call(t, Read{}, env, obj{"file_path": "latin.bin"}), "binary")

	// Mostly valid UTF-8 with a stray byte is text.
	writeFile(t, env.Root, "ok.txt", "héllo wörld \xff fine\n")
	mustOK(t, call(t, Read{}, env, obj{"file_path": "ok.txt"}))
}

func TestReadDirectoryListing(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "d/b.txt", "x")
	writeFile(t, env.Root, "d/a.txt", "x")
	writeFile(t, env.Root, "d/sub/c.txt", "x")
	r := mustOK(t, call(t, Read{}, env, obj{"file_path": "d"}))
	contains(t, r.Output, "a.txt\nb.txt\nsub/")
	r = mustOK(t, call(t, Read{}, env, obj{"file_path": "."}))
	contains(t, r.Output, "d/")
}

func TestReadEmptyAndMissing(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "empty.txt", "")
	r := mustOK(t, call(t, Read{}, env, obj{"file_path": "empty.txt"}))
	contains(t, r.Output, "empty")
	if err := env.Files.Check(filepath.Join(env.Root, "empty.txt")); err != nil {
		t.Fatalf("empty read not recorded: %v", err)
	}
	mustErr(t, call(t, Read{}, env, obj{"file_path": "nope.txt"}), "not found")
}

func TestReadRecordsFile(t *testing.T) {
	env := newTestEnv(t)
	p := writeFile(t, env.Root, "f.txt", "one\n")
	if err := env.Files.Check(p); err != ErrNotRead {
		t.Fatalf("want ErrNotRead before reading, got %v", err)
	}
	mustOK(t, call(t, Read{}, env, obj{"file_path": "f.txt", "limit": 1}))
	rec, ok := env.Files.Get(p)
	if !ok || rec.Size != 4 || rec.Hash != hashBytes([]byte("one\n")) {
		t.Fatalf("bad record %+v %v", rec, ok)
	}
	if err := env.Files.Check(p); err != nil {
		t.Fatal(err)
	}
	// Absolute paths inside the root work too.
	mustOK(t, call(t, Read{}, env, obj{"file_path": p}))
	if err := os.WriteFile(p, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := env.Files.Check(p); err == nil {
		t.Fatal("same-size change not detected")
	}
}

func TestReadLineHelper(t *testing.T) {
	// readLine handles lines longer than the reader's buffer.
	env := newTestEnv(t)
	long := strings.Repeat("x", 200_000)
	writeFile(t, env.Root, "l.txt", long+"\r\nnext")
	r := mustOK(t, call(t, Read{}, env, obj{"file_path": "l.txt"}))
	contains(t, r.Output, "[line truncated: 200000 bytes in total]", "     2\tnext")
}
