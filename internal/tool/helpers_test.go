package tool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newTestEnv returns an Env on a fresh workspace with its state under
// .ultra/state/run.
func newTestEnv(t *testing.T) *Env {
	t.Helper()
	dir := t.TempDir()
	env, err := NewEnv(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	env.StateDir = filepath.Join(env.Root, ".ultra", "state", "run")
	return env
}

// call runs tool with args (a JSON string, or any value to marshal).
func call(t *testing.T, tl Tool, env *Env, args any) Result {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case json.RawMessage:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	return tl.Run(context.Background(), env, raw)
}

type obj = map[string]any

func mustOK(t *testing.T, r Result) Result {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", r.Output)
	}
	return r
}

func mustErr(t *testing.T, r Result, want ...string) Result {
	t.Helper()
	if !r.IsError {
		t.Fatalf("expected an error result, got: %s", r.Output)
	}
	for _, w := range want {
		if !strings.Contains(r.Output, w) {
			t.Fatalf("error %q does not mention %q", r.Output, w)
		}
	}
	return r
}

func contains(t *testing.T, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Fatalf("output does not contain %q:\n%s", w, s)
		}
	}
}

func notContains(t *testing.T, s string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(s, b) {
			t.Fatalf("output unexpectedly contains %q:\n%s", b, s)
		}
	}
}

func writeFile(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFileT(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// setMtime sets the modification time of root/rel to base+offset.
func setMtime(t *testing.T, root, rel string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(root, rel), at, at); err != nil {
		t.Fatal(err)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
