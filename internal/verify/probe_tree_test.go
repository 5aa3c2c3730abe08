package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Detection runs outside the sandbox on the model's tree: no program of
// the tree is ever started to probe for pytest, even when the person's
// PATH leads into it (an activated virtualenv), and .python-version only
// names a version, never a path.
func TestPytestProbeNeverRunsTheTree(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	bin := filepath.Join(dir, ".venv", "bin")
	os.MkdirAll(bin, 0o755)
	for _, p := range []string{"python3", "python", "pytest", "pytest-3", "py.test"} {
		os.WriteFile(filepath.Join(bin, p), []byte("#!/bin/sh\ntouch "+marker+"\nexit 0\n"), 0o755)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	t.Setenv("VIRTUAL_ENV", filepath.Join(dir, ".venv"))
	for _, p := range []string{"python3", "pytest", "py.test"} {
		commandWorks(dir, p, "--version")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program of the tree ran outside the sandbox")
	}
	env := strings.Join(outsideTree(dir, os.Environ()), "\n")
	if strings.Contains(env, bin) || strings.Contains(env, "VIRTUAL_ENV=") {
		t.Fatalf("the probe's environment leads into the tree:\n%s", env)
	}

	for text, want := range map[string]string{"3.11.7\n": "3.11.7", "pypy3.10-7.3\n3.12\n": "pypy3.10-7.3",
		"../../tree/bin\n": "", "/usr/bin\n": "", "system": "system", "3.11/../x": ""} {
		os.WriteFile(filepath.Join(dir, ".python-version"), []byte(text), 0o644)
		if got := pythonVersionIn(dir); got != want {
			t.Errorf(".python-version %q: %q, want %q", text, got, want)
		}
	}
}

// Configuration is read only inside the tree: a symlink, or a symlinked
// directory on the way, that leads out of it is not followed, and a
// symlinked configuration file no longer stops detection.
func TestConfigReadStaysInTheTree(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "x.txt"), []byte("pytest\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "package.json"), []byte(`{"scripts":{"test":"jest"}}`), 0o644)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "setup.py"), []byte("from setuptools import setup\n"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "requirements"))
	os.Symlink(filepath.Join(outside, "package.json"), filepath.Join(dir, "package.json"))
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n\ngo 1.21\n"), 0o644)
	found, err := Detect(dir)
	if err != nil {
		t.Fatalf("a symlinked configuration file stopped detection: %v", err)
	}
	for _, d := range found {
		if d.Kind == "node" || d.Kind == "pytest" || strings.Contains(d.Reason, "requirements/x.txt") {
			t.Errorf("read through a link out of the tree: %+v", d)
		}
	}
	if len(found) == 0 || found[0].Kind != "go" {
		t.Fatalf("detection: %+v", found)
	}
	if _, ok := readIn(dir, "requirements/x.txt", maxConfig); ok {
		t.Error("readIn followed a symlinked directory out of the tree")
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "in.txt"), []byte("ok"), 0o644)
	os.Symlink("sub/in.txt", filepath.Join(dir, "link.txt"))
	if text, ok := readIn(dir, "link.txt", maxConfig); !ok || text != "ok" {
		t.Errorf("a link inside the tree: %q %v", text, ok)
	}
}
