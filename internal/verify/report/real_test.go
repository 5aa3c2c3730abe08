package report

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestRealTools runs the real runners, when installed, on tiny projects and
// parses what they print today, so that a change in their output shows up
// here. Skipped with -short.
func TestRealTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real test runners")
	}
	t.Run("go", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{
			"go.mod": "module example.com/real\n\ngo 1.21\n",
			"a/a_test.go": `package a

import "testing"

func TestPass(t *testing.T) {}

func TestSub(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Errorf("want %d", 2) })
}

func TestSkip(t *testing.T) { t.Skip("later") }
`,
			"b/b.go":      "package b\n\nfunc F() int { return \"x\" }\n",
			"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { F() }\n",
		})
		out := runTool(t, dir, "go", "test", "-json", "./...")
		r, err := GoJSON(bytes.NewReader(out))
		if errors.Is(err, ErrNotFormat) {
			t.Skipf("the tool does not work here: %s", out)
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkInvariants(t, r)
		// As go test -v's lines: TestSub fails through TestSub/bad.
		if r.Passed != 2 || r.Failed != 2 || r.Skipped != 1 || r.Errors != 1 {
			t.Errorf("got %s\n%s", dump(r), out)
		}
		if c, ok := find(r, "example.com/real/a.TestSub"); !ok || c.Kind != KindParent || c.Message != "1 of 2 subtests failed: bad" {
			t.Errorf("got %+v", c)
		}
		if c, ok := find(r, "example.com/real/b"); !ok || c.Kind != KindCollection {
			t.Errorf("got %+v", c)
		}
		if c, ok := find(r, "example.com/real/a.TestSub/bad"); !ok || c.File != "a_test.go" || c.Line != 9 {
			t.Errorf("got %+v", c)
		}
	})
	t.Run("node", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{
			"test/a.test.js": `const test = require('node:test');
const assert = require('node:assert');
test.describe('suite', () => {
  test.it('passes', () => {});
  test.it('fails', () => { assert.strictEqual(1, 2); });
  test.it('skipped', { skip: true }, () => {});
});
`,
		})
		out := runTool(t, dir, "node", "--test", "--test-reporter=tap")
		r, err := TAP(bytes.NewReader(out))
		if errors.Is(err, ErrNotFormat) {
			t.Skipf("the tool does not work here: %s", out)
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkInvariants(t, r)
		if r.Passed != 1 || r.Failed != 1 || r.Skipped != 1 {
			t.Errorf("got %s\n%s", dump(r), out)
		}
		if c, ok := find(r, "suite > fails"); !ok || filepath.Base(c.File) != "a.test.js" || c.Line != 5 {
			t.Errorf("got %+v", c)
		}
	})
	t.Run("cargo", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{
			"Cargo.toml": "[package]\nname = \"real\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"src/lib.rs": "/// ```\n/// assert_eq!(real::one(), 1);\n/// ```\npub fn one() -> i32 { 1 }\n\n" +
				"#[cfg(test)]\nmod tests {\n    #[test]\n    fn passes() {}\n    #[test]\n    fn fails() {\n        assert_eq!(super::one(), 2);\n    }\n    #[test]\n    #[ignore]\n    fn ignored() {}\n}\n",
		})
		out := runTool(t, dir, "cargo", "test", "--offline", "--no-fail-fast")
		r, err := Cargo(bytes.NewReader(out))
		if errors.Is(err, ErrNotFormat) {
			t.Skipf("the tool does not work here: %s", out)
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkInvariants(t, r)
		if r.Passed != 2 || r.Failed != 1 || r.Skipped != 1 {
			t.Errorf("got %s\n%s", dump(r), out)
		}
		if c, ok := find(r, "tests::fails"); !ok || c.File != "src/lib.rs" || c.Line != 12 {
			t.Errorf("got %+v", c)
		}
	})
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runTool runs a command in dir and returns its combined output; the test
// is skipped when the tool is not installed. A non-zero exit is expected
// (the projects have failing tests).
func runTool(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "RUST_BACKTRACE=0", "CARGO_TARGET_DIR="+filepath.Join(dir, "target"), "GOFLAGS=-mod=mod")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Skipf("%s: %v", name, err)
		}
	}
	return out.Bytes()
}
