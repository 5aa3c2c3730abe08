//go:build unix

package tool

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLitFilter(t *testing.T) {
	cases := []struct {
		pattern string
		fold    bool
		lits    string // literals joined by |, "" for no prefilter
		exact   bool
	}{
		{"ErrUnexpectedEOF", false, "ErrUnexpectedEOF", true},
		{"foo|bar", false, "foo|bar", true},
		{"colou?r", false, "color|colour", true},
		{"a[bc]d", false, "abd|acd", true},
		{`func \(\w+ \*\w+\) Close\(\)`, false, ") Close()", false},
		{`^package`, false, "package", false},
		{`\bif\b`, false, "if", false},
		{`[A-Z][a-z]+[0-9]`, false, "", false},
		{`x+y`, false, "x", false},
		{`\d{4}-\d{2}`, false, "-", false},
		{`.*`, false, "", false},
		{"unexpected eof", true, "unexpected eof", true},
		{"Straße", true, "stra", false},
		{"(?i)Hello", false, "hello", true},
		{"mask", true, "mask", true},
		{`return (nil|err)`, false, "return nil|return err", true},
		{`é`, false, "é", true},
		{`(?i)é`, false, "", false},
	}
	for _, c := range cases {
		if _, err := regexp.Compile(c.pattern); err != nil {
			t.Fatal(err)
		}
		f := newLitFilter(c.pattern, c.fold)
		got, exact := "", false
		if f != nil {
			var ls []string
			for _, n := range f.lits {
				ls = append(ls, string(n.s))
			}
			slices.Sort(ls)
			got, exact = strings.Join(ls, "|"), f.exact
		}
		want := strings.Split(c.lits, "|")
		slices.Sort(want)
		if got != strings.Join(want, "|") || exact != c.exact {
			t.Errorf("%q (fold %v): lits %q exact %v, want %q %v", c.pattern, c.fold, got, exact, c.lits, c.exact)
		}
	}
	if f := newLitFilter("mask", true); len(f.special) != 2 {
		t.Errorf("mask: special runes %q, want K and ſ", f.special)
	}
}

func TestNeedleIndex(t *testing.T) {
	data := []byte("xx Foo fOO foo bar\nFOO")
	for _, c := range []struct {
		lit  string
		fold bool
		from int
		want int
	}{
		{"foo", false, 0, 11},
		{"foo", true, 0, 3},
		{"foo", true, 4, 7},
		{"foo", true, 12, 19},
		{"foo", true, 20, -1},
		{"o b", false, 0, 13},
		{"FOO", false, 0, 19},
		{"xx", false, 1, -1},
		{"\nFOO", false, 0, 18},
	} {
		n := makeNeedle([]byte(c.lit), c.fold)
		if got := n.index(data, c.from, c.fold); got != c.want {
			t.Errorf("index(%q, fold %v, from %d) = %d, want %d", c.lit, c.fold, c.from, got, c.want)
		}
	}
}

// Both scans (for the rarest byte, and for the two rarest at once) find
// every occurrence a naive search finds.
func TestNeedleIndexAgreesWithNaive(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAeEtTxXzZ  \n({_"
	for round := range 300 {
		data := make([]byte, rnd.IntN(300))
		for i := range data {
			data[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		lit := make([]byte, 1+rnd.IntN(5))
		for i := range lit {
			lit[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		for _, fold := range []bool{false, true} {
			s := lit
			if fold {
				s = []byte(asciiLower(string(lit)))
			}
			for _, pair := range []bool{false, true} {
				n := makeNeedle(s, fold)
				n.pair = pair && len(s) > 1
				for from := 0; from <= len(data); from++ {
					want := -1
					for i := from; i+len(s) <= len(data); i++ {
						if matchAt(data[i:i+len(s)], s, fold) {
							want = i
							break
						}
					}
					if got := n.index(data, from, fold); got != want {
						t.Fatalf("round %d: index(%q in %q, fold %v, pair %v, from %d) = %d, want %d", round, s, data, fold, n.pair, from, got, want)
					}
				}
			}
		}
	}
}

// Case-insensitive search matches what Go's (?i) matches, the non-ASCII
// runes that fold to ASCII letters included.
func TestGrepFoldsLikeRegexp(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "kelvin.txt", "a MAS\u212a here\n")  // K: Kelvin sign
	writeFile(t, env.Root, "longs.txt", "\u017fTRASSE\nmask\n") // ſ: long s
	writeFile(t, env.Root, "plain.txt", "MaSk\nnothing\n")
	writeFile(t, env.Root, "umlaut.txt", "ÉCOLE école\n")
	r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "mask", "-i": true, "output_mode": "content"}))
	if r.Output != "kelvin.txt:1:a MAS\u212a here\nlongs.txt:2:mask\nplain.txt:1:MaSk" {
		t.Fatalf("mask -i: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "strasse", "-i": true, "output_mode": "content"}))
	if r.Output != "longs.txt:1:\u017fTRASSE" {
		t.Fatalf("strasse -i: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "école", "-i": true, "output_mode": "count"}))
	contains(t, r.Output, "umlaut.txt:1")
}

// The lines grep reports do not depend on how a file's lines end, where
// the match sits or how many workers search.
func TestGrepLineShapes(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "a.txt", "needle")
	writeFile(t, env.Root, "b.txt", "x\r\nneedle\r\n\r\nneedle needle\r\n")
	writeFile(t, env.Root, "c.txt", "")
	writeFile(t, env.Root, "d.txt", "\n\nneedle\n")
	want := "a.txt:1:needle\nb.txt:2:needle\nb.txt:4:needle needle\nd.txt:3:needle"
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, p := range []string{"needle", "need(le)", "^needle", "needle$"} {
			r := mustOK(t, call(t, Grep{}, env, obj{"pattern": p, "output_mode": "content"}))
			if r.Output != want {
				t.Errorf("%s with %d procs: %q", p, procs, r.Output)
			}
		}
		runtime.GOMAXPROCS(old)
	}
	r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "needle", "output_mode": "count"}))
	contains(t, r.Output, "a.txt:1\nb.txt:2\nd.txt:1", "4 matching lines in 3 files")
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "x", "output_mode": "content", "-A": 1}))
	if r.Output != "b.txt:1:x\nb.txt-2-needle" {
		t.Fatalf("context on CRLF: %q", r.Output)
	}
}

// Content and count modes stop once the output is full; what they show is
// what a search of every file would show, and the same on every run.
func TestGrepEarlyStopIsDeterministic(t *testing.T) {
	env := newTestEnv(t)
	for i := range 600 {
		body := "nothing\n"
		if i%3 == 0 {
			body = fmt.Sprintf("hit %d\nhit again\n", i)
		}
		writeFile(t, env.Root, fmt.Sprintf("d%d/f%03d.txt", i%7, i), body)
	}
	full := mustOK(t, call(t, Grep{}, env, obj{"pattern": "^hit", "output_mode": "content", "head_limit": 100000}))
	all := lines(full.Output)
	if len(all) != 400 {
		t.Fatalf("%d lines", len(all))
	}
	for _, limit := range []int{1, 7, 250} {
		var first string
		for range 5 {
			r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "^hit", "output_mode": "content", "head_limit": limit}))
			if first == "" {
				first = r.Output
			} else if r.Output != first {
				t.Fatalf("head_limit %d: output changed between runs", limit)
			}
		}
		want := strings.Join(all[:limit], "\n") + fmt.Sprintf("\n\n[Output capped at %d lines; more matches exist. Narrow the search (path, glob, pattern) or raise head_limit.]", limit)
		if first != want {
			t.Fatalf("head_limit %d:\n%s", limit, first)
		}
		r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "^hit", "output_mode": "count", "head_limit": limit}))
		if n := strings.Count(r.Output, ":2"); n != min(limit, 200) {
			t.Fatalf("count head_limit %d: %d files shown", limit, n)
		}
	}
	// Without head_limit's help the output stops at maxGrepOutput bytes.
	big := strings.Repeat("x", 400)
	for i := range 400 {
		writeFile(t, env.Root, fmt.Sprintf("big/%03d.txt", i), "hit "+big+"\n")
	}
	r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "^hit", "output_mode": "content", "head_limit": 100000, "path": "big"}))
	if len(r.Output) > maxGrepOutput+200 || !strings.Contains(r.Output, "Output capped") {
		t.Fatalf("%d bytes", len(r.Output))
	}
	r = mustOK(t, Grep{}.Run(WithoutOutputCap(context.Background()), env, []byte(`{"pattern":"^hit","output_mode":"content","head_limit":100000,"path":"big"}`)))
	if n := len(lines(r.Output)); n != 400 {
		t.Fatalf("without the output cap: %d lines", n)
	}
}

// grep reads regular files only: a symlink only when it stays inside the
// workspace, never a FIFO (which would block).
func TestGrepReadsOnlyWhatItMay(t *testing.T) {
	env := newTestEnv(t)
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "needle outside\n")
	writeFile(t, env.Root, "in.txt", "needle inside\n")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(env.Root, "out.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, env.Root, "dir/x.txt", "no\n")
	for link, target := range map[string]string{
		"link.txt":     "in.txt",
		"link2.txt":    "link.txt", // a chain, inside
		"via-out.txt":  filepath.Join(outside, "..", filepath.Base(outside), "secret.txt"),
		"dirlink.txt":  "dir", // a directory
		"dangling.txt": "nowhere.txt",
	} {
		if err := os.Symlink(target, filepath.Join(env.Root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(env.Root, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- call(t, Grep{}, env, obj{"pattern": "needle", "output_mode": "content"}) }()
	select {
	case r := <-done:
		if r.Output != "in.txt:1:needle inside\nlink.txt:1:needle inside\nlink2.txt:1:needle inside" {
			t.Fatalf("got %q", r.Output)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("grep blocked (on the FIFO?)")
	}
}

// On a git repository grep finds the files ripgrep finds, with the flags
// the benchmarks use.
func TestGrepAgreesWithRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg (ripgrep) is not installed: no comparison")
	}
	env := newTestEnv(t)
	gitInit(t, env.Root)
	writeFile(t, env.Root, ".gitignore", "build/\n*.log\n")
	writeFile(t, env.Root, "src/main.go", "package main\n\nfunc main() { println(\"Needle\") }\n")
	writeFile(t, env.Root, "src/main_test.go", "package main // needle\n")
	writeFile(t, env.Root, "src/crlf.txt", "one\r\nNEEDLE two\r\n")
	writeFile(t, env.Root, ".hidden/h.txt", "needle in a hidden dir\n")
	writeFile(t, env.Root, "build/out.txt", "needle\n")
	writeFile(t, env.Root, "debug.log", "needle\n")
	writeFile(t, env.Root, "bin.dat", "needle\x00\x01")
	writeFile(t, env.Root, "deep/a/b/c.md", "a needle, deep down\nfunc main\n")
	writeFile(t, env.Root, "k.txt", "KELVIN \u212a\n")
	for _, c := range []searchCase{
		{"literal", obj{"pattern": "needle"}, []string{"-l", "-e", "needle"}},
		{"ignorecase", obj{"pattern": "needle", "-i": true}, []string{"-l", "-i", "-e", "needle"}},
		{"regex", obj{"pattern": `func \w+\(`}, []string{"-l", "-e", `func \w+\(`}},
		{"anchored", obj{"pattern": `^func`}, []string{"-l", "-e", `^func`}},
		{"globfilter", obj{"pattern": "needle", "glob": "*_test.go"}, []string{"-l", "-g", "*_test.go", "-e", "needle"}},
		{"kelvin", obj{"pattern": "k", "-i": true}, []string{"-l", "-i", "-e", "k"}},
	} {
		out, _, err := runRG(rg, env.Root, c.rg)
		if err != nil {
			t.Fatalf("%s: rg: %v", c.name, err)
		}
		sameFiles(t, c.name, grepFileSet(t, env, c.args), rgFileSet(out, false))
	}
}

// Files over grepKeepBuffer are read one at a time, whatever the number
// of workers; files over maxGrepFileSize are skipped with a note.
func TestGrepBigFiles(t *testing.T) {
	env := newTestEnv(t)
	big := strings.Repeat(strings.Repeat("y", 99)+"\n", 15000) + "needle\n" // 1.5 MB
	for i := range 6*grepChunk - 1 {                                        // and a-huge.txt first
		body := "nothing\n"
		if (i+1)%grepChunk == grepChunk-1 {
			body = big // the last file of each chunk of files
		}
		writeFile(t, env.Root, fmt.Sprintf("f%03d.txt", i), body)
	}
	f, err := os.Create(filepath.Join(env.Root, "a-huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(maxGrepFileSize + 1) // sparse
	f.Close()
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		done := make(chan [2]Result, 1)
		go func() {
			done <- [2]Result{
				call(t, Grep{}, env, obj{"pattern": "needle", "output_mode": "content", "head_limit": 2}),
				call(t, Grep{}, env, obj{"pattern": "needle", "output_mode": "count"}),
			}
		}()
		select {
		case r := <-done:
			want := "f014.txt:15001:needle\nf030.txt:15001:needle\n\n[1 file larger than 32.0 MB skipped. Output capped at 2 lines; more matches exist. Narrow the search (path, glob, pattern) or raise head_limit.]"
			if r[0].Output != want {
				t.Fatalf("%d procs: %q", procs, r[0].Output)
			}
			contains(t, r[1].Output, "f094.txt:1\n\n[1 file larger than 32.0 MB skipped. 6 matching lines in 6 files.]")
		case <-time.After(60 * time.Second):
			t.Fatalf("grep with %d procs did not finish", procs)
		}
		runtime.GOMAXPROCS(old)
	}
}

// A listed path through a symlinked directory (an index entry
// link/secret.txt the model added, with link -> a directory outside) is
// not read or listed: ultra's grep and glob open every file beneath the
// workspace root, whatever lies on the way.
func TestSearchDoesNotLeaveTheRootThroughALinkedDirectory(t *testing.T) {
	env := newTestEnv(t)
	gitInit(t, env.Root)
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "TOPSECRET=hunter2\n")
	writeFile(t, env.Root, "in.txt", "TOPSECRET inside\n")
	if err := os.Symlink(outside, filepath.Join(env.Root, "link")); err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(gitOut(t, env.Root, "hash-object", "-w", "in.txt"))
	gitOut(t, env.Root, "update-index", "--add", "--cacheinfo", "100644,"+blob+",link/secret.txt")
	if !strings.Contains(gitOut(t, env.Root, "ls-files"), "link/secret.txt") {
		t.Skip("git would not list a path beneath a symlink here; nothing to check")
	}
	for _, mode := range []string{"content", "files_with_matches", "count"} {
		r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "TOPSECRET", "output_mode": mode}))
		if strings.Contains(r.Output, "hunter2") || strings.Contains(r.Output, "link/") {
			t.Fatalf("%s: read through a linked directory: %q", mode, r.Output)
		}
	}
	if r := mustOK(t, call(t, Glob{}, env, obj{"pattern": "**/*.txt"})); strings.Contains(r.Output, "link/") {
		t.Fatalf("glob listed a file through a linked directory: %q", r.Output)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
