package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// devTool runs `ultra -C dir dev tool ARGS...` and returns what it
// printed, its exit code and its error.
func devTool(t *testing.T, dir string, args ...string) (string, int, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"-C", dir, "dev", "tool"}, args...))
	err := root.Execute()
	code := 0
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		} else if isUsage(err) {
			code = 2
		}
	}
	return out.String(), code, err
}

func TestDevTool(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a\n\nfunc Hello() {}\n")
	write("sub/b.txt", "hello\n")

	out, code, err := devTool(t, dir, "grep", `{"pattern":"(?i)hello","output_mode":"content"}`)
	if code != 0 || out != "a.go:3:func Hello() {}\nsub/b.txt:1:hello\n" {
		t.Fatalf("grep: code %d, err %v, output %q", code, err, out)
	}
	out, code, _ = devTool(t, dir, "glob", `{"pattern":"**/*.txt"}`)
	if code != 0 || out != "sub/b.txt\n" {
		t.Fatalf("glob: code %d, output %q", code, out)
	}
	out, code, _ = devTool(t, dir, "read", `{"file_path":"a.go"}`)
	if code != 0 || !strings.Contains(out, "3\tfunc Hello() {}") {
		t.Fatalf("read: code %d, output %q", code, out)
	}
	// write and edit change a file as the model would, having read it.
	out, code, _ = devTool(t, dir, "edit", `{"file_path":"a.go","old_string":"Hello","new_string":"Bye"}`)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.go")); code != 0 || !strings.Contains(string(b), "func Bye()") {
		t.Fatalf("edit: code %d, output %q, file %q", code, out, b)
	}

	// An error result is printed as the model reads it, and exits 1.
	out, code, _ = devTool(t, dir, "read", `{"file_path":"missing.go"}`)
	if code != 1 || out != "Error: file not found: missing.go\n" {
		t.Fatalf("missing file: code %d, output %q", code, out)
	}
	// Usage errors name the problem and exit 2.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch", "{}"}, `unknown tool "nosuch"`},
		{[]string{"bash", `{"command":"true"}`}, "not be sandboxed"},
		{[]string{"grep", `{"pattern":`}, "invalid JSON arguments for grep"},
		{[]string{"grep", `[1]`}, "invalid JSON arguments for grep"},
		{[]string{}, "accepts between 1 and 2 arg"},
	} {
		_, code, err := devTool(t, dir, c.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: code %d, error %v; want 2 and %q", c.args, code, err, c.want)
		}
	}
}

// With a head_limit large enough, grep prints every match, past the
// output cap a model's call has.
func TestDevToolGrepPrintsEveryMatch(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "match %d %s\n", i, strings.Repeat("x", 60))
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err := devTool(t, dir, "grep", `{"pattern":"^match","output_mode":"content","head_limit":100000}`)
	if code != 0 {
		t.Fatalf("code %d: %v", code, err)
	}
	if n := strings.Count(out, "\n"); n != 3000 || len(out) < 200<<10 {
		t.Fatalf("%d lines, %d bytes", n, len(out))
	}
}
