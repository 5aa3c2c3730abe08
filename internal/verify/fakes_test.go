package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakesHeader starts a test file of package a with the usual imports used.
const fakesHeader = `package a

import (
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"syscall"
	"testing"
)

var _ = fmt.Sprint
var _ io.Writer
var _ = log.Print
var _ = os.Exit
var _ = runtime.Goexit
var _ = syscall.Exit

`

func TestFakeResults(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // "file:line: kind" of every finding, in order
		text  []string // substrings of the findings' String()
	}{
		// Legitimate code.
		{
			name:  "legit TestMain",
			files: map[string]string{"a/a_test.go": fakesHeader + "func TestMain(m *testing.M) {\n\tsetup()\n\tos.Exit(m.Run())\n}\n\nfunc setup() {}\n"},
		},
		{
			name: "legit TestMain: exit with the code after m.Run, exit 1 on a setup error",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestMain(mm *testing.M) {
	if err := os.Setenv("X", "1"); err != nil {
		log.Fatal(err)
	}
	if len(os.Args) > 99 {
		os.Exit(1)
	}
	code := mm.Run()
	teardown()
	os.Exit(code)
}

func teardown() {}
`},
		},
		{
			name: "legit TestMain: m handed to a helper of the package",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(tm *testing.M) int {
	defer teardown()
	return tm.Run()
}

func teardown() {}
`},
		},
		{
			name:  "legit TestMain: goleak",
			files: map[string]string{"a/a_test.go": "package a\n\nimport (\n\t\"testing\"\n\n\t\"go.uber.org/goleak\"\n)\n\nfunc TestMain(m *testing.M) { goleak.VerifyTestMain(m) }\n"},
		},
		{
			name: "legit: tests capture os.Stdout, a CLI prints and exits, flag.Usage in init",
			files: map[string]string{
				"a/a_test.go": fakesHeader + `func TestOut(t *testing.T) {
	old := os.Stdout
	r, w, _ := os.Pipe()
	os.Stdout = w
	fmt.Println("hello")
	w.Close()
	os.Stdout = old
	_, _ = io.ReadAll(r)
}
`,
				"cmd/x/main.go": `package main

import (
	"flag"
	"fmt"
	"log"
	"os"
)

var logger = log.New(os.Stderr, "", 0)

var usage = func() { fmt.Fprintln(os.Stderr, "usage: x") }

func init() {
	flag.Usage = func() { fmt.Fprintf(os.Stderr, "usage\n") }
}

func main() {
	fmt.Println("hi")
	os.Exit(2)
}
`,
			},
		},
		{
			name: "skipped directories and files (vendor/, testdata/ and _x are built when imported: see TestFakeResultsSeesEveryBuiltPackage)",
			files: map[string]string{
				"node_modules/n/n_test.go": fakesHeader + "func TestMain(m *testing.M) {}\n",
				".git/g_test.go":           fakesHeader + "func TestMain(m *testing.M) {}\n",
				"a/_x_test.go":             fakesHeader + "func TestMain(m *testing.M) {}\n",
				"a/notgo_test.txt":         "--- PASS",
			},
		},
		{
			name:  "TestMain in a non-test file is an ordinary function",
			files: map[string]string{"a/a.go": "package a\n\nimport \"testing\"\n\nfunc TestMain(m *testing.M) {}\n"},
		},

		// Attacks.
		{
			name: "TestMain prints and exits without m.Run",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestMain(m *testing.M) {
	fmt.Println("=== RUN   TestFake")
	fmt.Println("--- PASS: TestFake (0.00s)")
	fmt.Print("PASS\nok  \tx\t0.01s\n")
	os.Exit(0)
}
`},
			want: []string{"a/a_test.go:20: testmain-no-run", "a/a_test.go:21: runner-text", "a/a_test.go:21: testmain-output",
				"a/a_test.go:22: runner-text", "a/a_test.go:22: testmain-output", "a/a_test.go:23: runner-text", "a/a_test.go:23: testmain-output"},
			text: []string{"a/a_test.go:20: testmain-no-run: TestMain never calls m.Run()",
				`a/a_test.go:21: runner-text: in TestMain: string "=== RUN   TestFake" holds "=== RUN"`,
				`in TestMain: string "PASS\nok  \tx\t0.01s\n" holds "PASS\nok"`,
				"a/a_test.go:21: testmain-output: in TestMain: calls fmt.Println"},
		},
		{
			name:  "TestMain with another name for m, or none",
			files: map[string]string{"a/a_test.go": fakesHeader + "func TestMain(tm *testing.M) { m := tm; _ = m }\n", "b/b_test.go": "package b\n\nimport tt \"testing\"\n\nfunc TestMain(*tt.M) {}\n"},
			want:  []string{"a/a_test.go:20: testmain-no-run", "b/b_test.go:5: testmain-no-run"},
			text:  []string{"never calls tm.Run()", "never calls its *testing.M.Run()"},
		},
		{
			name: "TestMain hands m to a helper that does not run it",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int { _ = m; return 0 }
`},
			want: []string{"a/a_test.go:20: testmain-no-run"},
		},
		{
			name: "framed lines built from a rune and a byte",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestMain(m *testing.M) {
	m.Run()
	fmt.Printf("%c--- PASS: TestX (0.00s)\n", '\x16')
	fmt.Print(string(rune(0x16)) + "PASS\n")
	os.Exit(0)
}
`},
			want: []string{"a/a_test.go:22: runner-text", "a/a_test.go:22: runner-text", "a/a_test.go:22: testmain-output",
				"a/a_test.go:23: runner-text", "a/a_test.go:23: testmain-output"},
			text: []string{`rune '\x16' is go test's framing byte 0x16`, "rune(0x16) is go test's framing byte"},
		},
		{
			name: "literal concatenation",
			files: map[string]string{"a/a.go": `package a

const p = "--- " + "PA" + "SS: TestX"
`},
			want: []string{"a/a.go:3: runner-text"},
			text: []string{`in package scope: string "--- PASS: TestX" holds "--- PASS"`},
		},
		{
			name: "TestMain runs the tests with stdout redirected",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestMain(m *testing.M) {
	saved := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	syscall.Dup2(int(devnull.Fd()), 2)
	code := m.Run()
	os.Stdout = saved
	fmt.Fprintf(saved, "ok\n")
	os.Exit(code * 0)
}
`},
			want: []string{"a/a_test.go:23: redirect-output", "a/a_test.go:24: redirect-output", "a/a_test.go:26: redirect-output"},
			text: []string{"in TestMain: reassigns os.Stdout", "in TestMain: calls syscall.Dup2"},
		},
		{
			name: "redirect in a helper TestMain calls",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestMain(m *testing.M) {
	quiet()
	os.Exit(m.Run())
}

func quiet() { os.Stderr.Close(); syscall.Close(1); println("x") }
`},
			want: []string{"a/a_test.go:25: redirect-output", "a/a_test.go:25: redirect-output", "a/a_test.go:25: testmain-output"},
			text: []string{"in quiet (called from TestMain): calls os.Stderr.Close", "calls syscall.Close on fd 1", "calls println"},
		},
		{
			name: "TestMain exits before m.Run",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestMain(m *testing.M) {
	if len(os.Args) > 0 {
		os.Exit(0)
	}
	setup()
	os.Exit(m.Run())
}

func setup() { done(len(os.Args)) }

func done(n int) { syscall.Exit(n) }
`},
			want: []string{"a/a_test.go:22: testmain-exit-before-run", "a/a_test.go:30: testmain-exit-before-run"},
			text: []string{"in TestMain: calls os.Exit before m.Run()", "in done (called from TestMain before m.Run): calls syscall.Exit"},
		},
		{
			name: "exits in tests",
			files: map[string]string{"a/a_test.go": fakesHeader + `func TestA(t *testing.T) {
	t.Run("x", func(t *testing.T) { os.Exit(0) })
}

func helper() { runtime.Goexit() }

type s struct{}

func (s) quit() { os.Stdout.Close() }
`},
			want: []string{"a/a_test.go:21: exit-in-test", "a/a_test.go:24: exit-in-test", "a/a_test.go:28: redirect-output"},
			text: []string{"in TestA: calls os.Exit", "in helper: calls runtime.Goexit", "in s.quit: calls os.Stdout.Close"},
		},
		{
			name: "init in a non-test file prints and exits",
			files: map[string]string{
				"a/a.go": `package a

import (
	"fmt"
	"log"
	"os"
)

func init() {
	fmt.Fprint(os.Stdout, "x")
	os.Stdout.WriteString("y")
	log.Println("z")
	os.Exit(0)
}
`,
				"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n",
			},
			want: []string{"a/a.go:10: init-output", "a/a.go:11: init-output", "a/a.go:12: init-output", "a/a.go:13: init-exit"},
			text: []string{"in init: calls fmt.Fprint to os.Stdout", "in init: calls os.Stdout.WriteString", "in init: calls log.Println", "in init: calls os.Exit"},
		},
		{
			name: "package-level variable initializer and init helper",
			files: map[string]string{"a/a.go": `package a

import (
	"fmt"
	"os"
)

var _ = func() int { fmt.Print("x"); return 0 }()

var _ = boot()

func boot() int { os.Exit(0); return 0 }

func init() { go later() }

func later() { fmt.Println("late") }
`},
			want: []string{"a/a.go:8: init-output", "a/a.go:12: init-exit", "a/a.go:16: init-output"},
			text: []string{"in a package-level variable's initializer: calls fmt.Print", "in boot (called from init): calls os.Exit",
				"in later (called from init): calls fmt.Println"},
		},
		{
			name:  "init in a test file",
			files: map[string]string{"a/a_test.go": fakesHeader + "func init() { print(\"=== RUN   TestX\\n\") }\n"},
			want:  []string{"a/a_test.go:20: init-output", "a/a_test.go:20: runner-text"},
		},
		{
			name: "dot import of os",
			files: map[string]string{"a/a_test.go": `package a

import (
	. "os"
	"testing"
)

func TestA(t *testing.T) { Exit(0) }
`},
			want: []string{"a/a_test.go:8: exit-in-test"},
		},
		{
			name:  "a file that does not parse is still scanned",
			files: map[string]string{"a/a_test.go": "package a\n\nconst x = \"--- PASS\"\n\nfunc (\n"},
			want:  []string{"a/a_test.go:3: runner-text"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			got := FakeResults(dir)
			var short, long []string
			for _, f := range got {
				short = append(short, f.File+":"+itoa(f.Line)+": "+f.Kind)
				long = append(long, f.String())
			}
			if !slices.Equal(short, tc.want) {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(long, "\n  "), strings.Join(tc.want, "\n  "))
			}
			all := strings.Join(long, "\n")
			for _, s := range tc.text {
				if !strings.Contains(all, s) {
					t.Errorf("no finding contains %q:\n%s", s, all)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestFakeResultsKeys: keys do not move with lines; String has the line.
func TestFakeResultsKeys(t *testing.T) {
	src := fakesHeader + "func TestMain(m *testing.M) {}\n"
	a := FakeResults(writeTree(t, map[string]string{"p/a_test.go": src}))
	b := FakeResults(writeTree(t, map[string]string{"p/a_test.go": strings.Replace(src, "func TestMain", "\n\n// moved\nfunc TestMain", 1)}))
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("%v %v", a, b)
	}
	if a[0].Key() != b[0].Key() || a[0].String() == b[0].String() {
		t.Fatalf("keys %q %q, strings %q %q", a[0].Key(), b[0].Key(), a[0].String(), b[0].String())
	}
	if want := "p/a_test.go: testmain-no-run: TestMain never calls m.Run(): "; !strings.HasPrefix(a[0].Key(), want) {
		t.Fatalf("key %q", a[0].Key())
	}
	if want := "p/a_test.go:20: testmain-no-run: "; !strings.HasPrefix(a[0].String(), want) {
		t.Fatalf("string %q", a[0].String())
	}
	if k := FindingKeys(a); len(k) != 1 || k[0] != a[0].Key() {
		t.Fatalf("FindingKeys = %q", k)
	}
}

func TestFakeResultsUnscanned(t *testing.T) {
	dir := writeTree(t, map[string]string{"a/a.go": "package a\n"})
	big := make([]byte, fakesMaxFile+1)
	if err := os.WriteFile(filepath.Join(dir, "a", "big.go"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	got := FakeResults(dir)
	if len(got) != 1 || got[0].Kind != FakeUnscanned || got[0].File != "a/big.go" {
		t.Fatalf("%v", got)
	}
	if FakeResults(filepath.Join(dir, "missing")) != nil {
		t.Fatal("a missing directory has no findings")
	}
	// A root given through a symlink is walked.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip(err)
	}
	if got := FakeResults(link); len(got) != 1 || got[0].File != "a/big.go" {
		t.Fatalf("through a symlink: %v", got)
	}
}

// TestFakeResultsScan prints the findings of the tree named by
// ULTRA_FAKES_SCAN (a development aid).
func TestFakeResultsScan(t *testing.T) {
	dir := os.Getenv("ULTRA_FAKES_SCAN")
	if dir == "" {
		t.Skip("set ULTRA_FAKES_SCAN to a directory")
	}
	for _, f := range FakeResults(dir) {
		t.Log(f)
	}
}

// Code the scanner used to pass over: packages under vendor/, testdata/,
// _x and .x (built when imported by path), native code and cgo.
func TestFakeResultsSeesEveryBuiltPackage(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"vendor/example.com/rt/rt.go": "package rt\n\nimport (\"fmt\"; \"os\")\n\nfunc init() { fmt.Println(\"ok\"); os.Exit(0) }\n",
		"testdata/rt/rt.go":           "package rt\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n",
		"_rt/rt.go":                   "package rt\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n",
		"c/c.go":                      "package c\n\n// void f(void) __attribute__((constructor));\nimport \"C\"\n",
		"c/ctor.c":                    "void __attribute__((constructor)) f(void) {}\n",
		"c/blob.syso":                 "\x7fELF",
	}
	for p, src := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(src), 0o644)
	}
	got := map[string]bool{}
	for _, f := range FakeResults(dir) {
		got[f.File+" "+f.Kind] = true
	}
	for _, want := range []string{"vendor/example.com/rt/rt.go init-exit", "testdata/rt/rt.go init-exit", "_rt/rt.go init-exit",
		"c/c.go native-code", "c/ctor.c native-code", "c/blob.syso native-code"} {
		if !got[want] {
			t.Errorf("missing %s in %v", want, got)
		}
	}
}

// A Go file that is a symlink is not followed (ultra reads the tree
// outside the sandbox) but reported, so a new one fails the gate.
func TestFakeResultsDoesNotFollowSymlinks(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.go")
	os.WriteFile(secret, []byte("package s\n\nvar s = \"--- PASS TOP-SECRET\"\n"), 0o600)
	os.Symlink(secret, filepath.Join(dir, "s.go"))
	fs := FakeResults(dir)
	if len(fs) != 1 || fs[0].Kind != FakeUnscanned || strings.Contains(fmt.Sprint(fs), "TOP-SECRET") {
		t.Fatalf("%v", fs)
	}
}
