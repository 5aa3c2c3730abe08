package tool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGlobMatcher(t *testing.T) {
	cases := []struct {
		pattern string
		path    string
		want    bool
	}{
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "a/b/c.gox", false},
		{"*.go", "main.go", true},
		{"*.go", "a/main.go", false},
		{"src/*.ts", "src/a.ts", true},
		{"src/*.ts", "src/x/a.ts", false},
		{"src/**/*.ts", "src/a.ts", true},
		{"src/**/*.ts", "src/x/y/a.ts", true},
		{"src/**", "src/x/y/a.ts", true},
		{"*.{js,ts}", "a.ts", true},
		{"*.{js,ts}", "a.js", true},
		{"*.{js,ts}", "a.tsx", false},
		{"{src,lib}/**/*.{c,h}", "lib/x/y.h", true},
		{"{src,lib}/**/*.{c,h}", "test/x/y.h", false},
		{"a{b,c{d,e}}f", "acef", true},
		{"file?.txt", "file1.txt", true},
		{"file[0-9].txt", "file7.txt", true},
		{"file[!0-9].txt", "file7.txt", false},
		{"file[!0-9].txt", "filex.txt", true},
		{"**/test_*.py", "pkg/tests/test_x.py", true},
		{"a/**/b/**/c.txt", "a/x/b/y/z/c.txt", true},
		{"a/**/b/**/c.txt", "a/b/c.txt", true},
		{"./*.md", "README.md", true},
		{`\*.txt`, "*.txt", true},
		{`\*.txt`, "a.txt", false},
		{"*", ".hidden", true},
	}
	for _, c := range cases {
		g, err := compileGlob(c.pattern, false)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := g.Match(c.path); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
	// Basename mode, as grep's glob filter uses it.
	g, _ := compileGlob("*.{go,md}", true)
	if !g.Match("a/b/c.go") || !g.Match("x.md") || g.Match("a/b.txt") {
		t.Error("basename matching wrong")
	}
	if _, err := compileGlob("[a-", false); err == nil {
		t.Error("bad pattern accepted")
	}
	if got := splitGlobList("*.go, *.{ts,tsx} !vendor/**"); strings.Join(got, "|") != "*.go|*.{ts,tsx}|!vendor/**" {
		t.Errorf("splitGlobList: %q", got)
	}
}

func TestGlobTool(t *testing.T) {
	env := newTestEnv(t)
	base := time.Now().Add(-time.Hour)
	files := []string{"main.go", "pkg/a.go", "pkg/deep/b.go", "web/app.ts", "web/app.js", "web/app.css", "README.md"}
	for i, f := range files {
		writeFile(t, env.Root, f, "x\n")
		setMtime(t, env.Root, f, base.Add(time.Duration(i)*time.Minute))
	}
	writeFile(t, env.Root, ".ultra/state/x.go", "state\n")
	writeFile(t, env.Root, "node_modules/dep/index.js", "junk\n")

	r := mustOK(t, call(t, Glob{}, env, obj{"pattern": "**/*.go"}))
	// Newest first.
	if r.Output != "pkg/deep/b.go\npkg/a.go\nmain.go" {
		t.Fatalf("got %q", r.Output)
	}
	r = mustOK(t, call(t, Glob{}, env, obj{"pattern": "web/*.{js,ts}"}))
	if r.Output != "web/app.js\nweb/app.ts" {
		t.Fatalf("got %q", r.Output)
	}
	r = mustOK(t, call(t, Glob{}, env, obj{"pattern": "*.go", "path": "pkg"}))
	if r.Output != "pkg/a.go" {
		t.Fatalf("got %q", r.Output)
	}
	r = mustOK(t, call(t, Glob{}, env, obj{"pattern": "**/*.js"}))
	if r.Output != "web/app.js" {
		t.Fatalf("node_modules not skipped: %q", r.Output)
	}
	r = mustOK(t, call(t, Glob{}, env, obj{"pattern": "*.rs"}))
	contains(t, r.Output, "No files found", "**/*.rs")
	// Absolute pattern inside the root.
	r = mustOK(t, call(t, Glob{}, env, obj{"pattern": env.Root + "/pkg/**/*.go"}))
	if r.Output != "pkg/deep/b.go\npkg/a.go" {
		t.Fatalf("got %q", r.Output)
	}
	// Ties in mtime sort by path.
	for _, f := range files {
		setMtime(t, env.Root, f, base)
	}
	r = mustOK(t, call(t, Glob{}, env, obj{"pattern": "**/*.go"}))
	if r.Output != "main.go\npkg/a.go\npkg/deep/b.go" {
		t.Fatalf("got %q", r.Output)
	}
	mustErr(t, call(t, Glob{}, env, obj{"pattern": "*", "path": "main.go"}), "not a directory")
	if r := call(t, Glob{}, env, obj{}); !r.Malformed {
		t.Fatal("missing pattern not malformed")
	}
}

func TestGlobCap(t *testing.T) {
	env := newTestEnv(t)
	for i := 0; i < 250; i++ {
		writeFile(t, env.Root, fmt.Sprintf("d/f%03d.txt", i), "x")
	}
	r := mustOK(t, call(t, Glob{}, env, obj{"pattern": "**/*.txt"}))
	ls := lines(r.Output)
	if len(ls) != maxGlobResults+2 {
		t.Fatalf("got %d lines", len(ls))
	}
	contains(t, r.Output, "Showing the 200 most recently modified of 250 matching files")
}

func TestGlobGrepGitignore(t *testing.T) {
	env := newTestEnv(t)
	gitInit(t, env.Root)
	writeFile(t, env.Root, ".gitignore", "build/\n*.log\n.ultra/\n")
	writeFile(t, env.Root, "src/main.go", "needle\n")
	writeFile(t, env.Root, "build/out.go", "needle\n")
	writeFile(t, env.Root, "debug.log", "needle\n")
	writeFile(t, env.Root, "notes.txt", "needle\n")
	writeFile(t, env.Root, ".ultra/state/log.txt", "needle\n")

	r := mustOK(t, call(t, Glob{}, env, obj{"pattern": "**/*"}))
	contains(t, r.Output, "src/main.go", "notes.txt", ".gitignore")
	notContains(t, r.Output, "build/", "debug.log", ".ultra", ".git/")

	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "needle"}))
	contains(t, r.Output, "Found 2 files", "src/main.go", "notes.txt")
	notContains(t, r.Output, "build/", "debug.log", ".ultra")

	// An ignored directory named explicitly is still searched.
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "needle", "path": "build"}))
	contains(t, r.Output, "build/out.go")
	r = mustOK(t, call(t, Glob{}, env, obj{"pattern": "build/*.go"}))
	contains(t, r.Output, "build/out.go")
	// And ultra's own state can be searched when asked for.
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "needle", "path": ".ultra"}))
	contains(t, r.Output, ".ultra/state/log.txt")
}

func grepEnv(t *testing.T) *Env {
	env := newTestEnv(t)
	base := time.Now().Add(-time.Hour)
	writeFile(t, env.Root, "a.go", "package a\n\nfunc Hello() {}\n// hello again\n")
	writeFile(t, env.Root, "b.go", "package b\n\nvar x = 1\n")
	writeFile(t, env.Root, "docs/readme.md", "Say Hello\n")
	writeFile(t, env.Root, "bin.dat", "Hello\x00binary")
	setMtime(t, env.Root, "a.go", base)
	setMtime(t, env.Root, "b.go", base.Add(time.Minute))
	setMtime(t, env.Root, "docs/readme.md", base.Add(2*time.Minute))
	return env
}

func TestGrepModes(t *testing.T) {
	env := grepEnv(t)
	r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "Hello"}))
	if r.Output != "Found 2 files\ndocs/readme.md\na.go" {
		t.Fatalf("files_with_matches: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "hello", "-i": true}))
	if r.Output != "Found 2 files\ndocs/readme.md\na.go" {
		t.Fatalf("-i: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "hello", "-i": true, "output_mode": "count"}))
	contains(t, r.Output, "a.go:2\ndocs/readme.md:1", "3 matching lines in 2 files")
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "Hello", "output_mode": "content"}))
	if r.Output != "a.go:3:func Hello() {}\ndocs/readme.md:1:Say Hello" {
		t.Fatalf("content: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "Hello", "output_mode": "content", "-n": false}))
	if r.Output != "a.go:func Hello() {}\ndocs/readme.md:Say Hello" {
		t.Fatalf("content -n false: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "nothing here"}))
	if r.Output != "No matches found" {
		t.Fatalf("no match: %q", r.Output)
	}
	// Single file path.
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "package", "path": "b.go", "output_mode": "content"}))
	if r.Output != "b.go:1:package b" {
		t.Fatalf("file path: %q", r.Output)
	}
	mustErr(t, call(t, Grep{}, env, obj{"pattern": "(?=x)"}), "RE2")
	if r := call(t, Grep{}, env, obj{"pattern": "x", "output_mode": "lines!"}); !r.Malformed {
		t.Fatal("bad output_mode not malformed")
	}
}

func TestGrepContext(t *testing.T) {
	env := newTestEnv(t)
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		if i == 5 || i == 7 || i == 15 {
			fmt.Fprintf(&b, "match %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	writeFile(t, env.Root, "f.txt", b.String())
	r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "^match", "output_mode": "content", "-C": 1}))
	want := "f.txt-4-line 4\nf.txt:5:match 5\nf.txt-6-line 6\nf.txt:7:match 7\nf.txt-8-line 8\n--\nf.txt-14-line 14\nf.txt:15:match 15\nf.txt-16-line 16"
	if r.Output != want {
		t.Fatalf("-C 1:\n%s\nwant:\n%s", r.Output, want)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "match 15", "output_mode": "content", "-A": 2, "-B": "1"}))
	if r.Output != "f.txt-14-line 14\nf.txt:15:match 15\nf.txt-16-line 16\nf.txt-17-line 17" {
		t.Fatalf("-A/-B: %q", r.Output)
	}
	// Multiline: a match spanning lines shows each line.
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "match 5.line 6", "multiline": true, "output_mode": "content"}))
	if r.Output != "f.txt:5:match 5\nf.txt:6:line 6" {
		t.Fatalf("multiline: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "match 5.line 6"}))
	contains(t, r.Output, "No matches")
}

func TestGrepGlobFilterAndLimit(t *testing.T) {
	env := grepEnv(t)
	r := mustOK(t, call(t, Grep{}, env, obj{"pattern": "Hello", "glob": "*.md"}))
	if r.Output != "Found 1 file\ndocs/readme.md" {
		t.Fatalf("glob filter: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "Hello", "glob": "**/*.{go,txt}"}))
	if r.Output != "Found 1 file\na.go" {
		t.Fatalf("glob filter: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "Hello", "glob": "!*.go"}))
	if r.Output != "Found 1 file\ndocs/readme.md" {
		t.Fatalf("negated glob filter: %q", r.Output)
	}

	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	writeFile(t, env.Root, "many.txt", b.String())
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "^hit", "output_mode": "content"}))
	if n := strings.Count(r.Output, "many.txt:"); n != defaultHeadLimit {
		t.Fatalf("want %d lines, got %d", defaultHeadLimit, n)
	}
	contains(t, r.Output, "Output capped at 250 lines")
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "^hit", "output_mode": "content", "head_limit": 3}))
	contains(t, r.Output, "many.txt:1:hit 0\nmany.txt:2:hit 1\nmany.txt:3:hit 2\n\n[Output capped at 3 lines")
	for i := 0; i < 5; i++ {
		writeFile(t, env.Root, fmt.Sprintf("more/m%d.txt", i), "hit\n")
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "^hit", "head_limit": 2}))
	contains(t, r.Output, "Found 6 files", "Showing 2 of 6 files")
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": "^hit", "output_mode": "count", "head_limit": 2}))
	contains(t, r.Output, "many.txt:300", "Showing the first 2 files")
}

func TestGrepLineSemantics(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, env.Root, "crlf.txt", "one {\r\ntwo\r\n")
	writeFile(t, env.Root, "anchors.txt", "first\nsecond\n")
	r := mustOK(t, call(t, Grep{}, env, obj{"pattern": `\{$`, "output_mode": "content"}))
	if r.Output != "crlf.txt:1:one {" {
		t.Fatalf("CRLF line end: %q", r.Output)
	}
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": `\Asecond`, "output_mode": "content"}))
	if r.Output != "anchors.txt:2:second" {
		t.Fatalf(`\A per line: %q`, r.Output)
	}
	// A class that matches newline does not join lines outside multiline.
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": `first\ssecond`}))
	contains(t, r.Output, "No matches")
	r = mustOK(t, call(t, Grep{}, env, obj{"pattern": `first\ssecond`, "multiline": true, "output_mode": "count"}))
	contains(t, r.Output, "anchors.txt:1", "1 match in 1 file")
}

// A directory the model made a repository of its own, with a config that
// runs a program whenever git reads its index, is searched without that
// program ever running in ultra's process.
func TestSearchDoesNotRunANestedRepositorysConfig(t *testing.T) {
	env := newTestEnv(t)
	run := func(dir string, args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(env.Root, "init", "-q")
	nest := filepath.Join(env.Root, "nest")
	os.MkdirAll(nest, 0o755)
	run(nest, "init", "-q")
	marker := filepath.Join(t.TempDir(), "ran")
	run(nest, "config", "core.fsmonitor", "touch "+marker+"; false")
	os.WriteFile(filepath.Join(nest, "x.go"), []byte("package x // needle\n"), 0o644)
	run(nest, "add", "x.go")
	os.Remove(marker) // git add above ran it, as git does
	mustOK(t, call(t, Glob{}, env, obj{"pattern": "**/*.go", "path": "nest"}))
	mustOK(t, call(t, Glob{}, env, obj{"pattern": "nest/*.go"}))
	call(t, Grep{}, env, obj{"pattern": "needle", "path": "nest"})
	call(t, Grep{}, env, obj{"pattern": "needle"})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the nested repository's core.fsmonitor ran in ultra's process")
	}
}
