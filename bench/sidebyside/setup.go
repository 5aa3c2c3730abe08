package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// fixed reports whether Add adds in the work tree or in any commit (ultra
// commits the fix on its run's branch, the peers leave it in the tree).
func fixed(dir string) bool {
	if b, err := os.ReadFile(filepath.Join(dir, "calc", "calc.go")); err == nil && bytes.Contains(b, []byte("return a + b")) {
		return true
	}
	revs, err := exec.Command("git", "-C", dir, "rev-list", "--all").Output()
	if err != nil {
		return false
	}
	args := append([]string{"-C", dir, "grep", "-q", "return a + b"}, strings.Fields(string(revs))...)
	return exec.Command("git", append(args, "--", "calc/calc.go")...).Run() == nil
}

// tail is the end of an agent's output, for a failure.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// project is BenchmarkFullCycle's project: calc, whose TestAdd fails until
// Add adds, and three packages with passing tests (17 tests in all).
func project() map[string]string {
	files := map[string]string{
		"go.mod":            "module example.com/calc\n\ngo 1.21\n",
		"calc/calc.go":      "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n",
	}
	for i := range 3 {
		p := fmt.Sprintf("util%d", i)
		files[p+"/"+p+".go"] = fmt.Sprintf("package %s\n\nfunc Double(n int) int { return 2 * n }\n", p)
		files[p+"/"+p+"_test.go"] = fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tfor i := 0; i < 1000; i++ {\n\t\tif Double(i) != i+i {\n\t\t\tt.Fatal(i)\n\t\t}\n\t}\n}\n\nfunc TestTable(t *testing.T) {\n\tfor _, c := range []int{1, 2, 3} {\n\t\tt.Run(\"case\", func(t *testing.T) {\n\t\t\tif Double(c) != 2*c {\n\t\t\t\tt.Fatal(c)\n\t\t\t}\n\t\t})\n\t}\n}\n", p)
	}
	return files
}

// makeRepo writes the project into a new git repository at dir.
func makeRepo(dir string) (string, error) {
	for name, body := range project() {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir, nil
}

// makeHome makes an agent's home: its own configuration, state and
// caches, with Go's telemetry off.
func makeHome(home string) error {
	tel := filepath.Join(home, ".config", "go", "telemetry")
	if err := os.MkdirAll(tel, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(tel, "mode"), []byte("off\n"), 0o644)
}

// baseEnv is every agent's environment: the caller's, without model or
// agent settings, with home as HOME and the caller's Go caches, so that
// every agent's go test finds the same warm build cache.
func baseEnv(home string, goEnv []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains([]string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "PWD", "GOCACHE", "GOMODCACHE", "GOPATH"}, name) {
			continue
		}
		skip := false
		for _, p := range []string{"OPENAI_", "ANTHROPIC_", "CLAUDE_", "OPENCODE_", "ULTRA_"} {
			skip = skip || strings.HasPrefix(name, p)
		}
		if !skip {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"NO_COLOR=1")
	return append(env, goEnv...)
}

// goCaches are the caller's Go cache settings, as environment entries.
func goCaches() ([]string, error) {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 3 {
		return nil, fmt.Errorf("go env: %q", out)
	}
	return []string{"GOCACHE=" + vals[0], "GOMODCACHE=" + vals[1], "GOPATH=" + vals[2]}, nil
}

// moduleDir is the root of this module's checkout.
func moduleDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", errors.New("run me inside ultra's module, or give ultra=PATH in -agents")
	}
	return filepath.Dir(mod), nil
}

// buildUltra builds ultra from this module into dir/bin.
func buildUltra(dir string) (string, error) {
	src, err := moduleDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bin", "ultra")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ultra")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building ultra: %v\n%s", err, out)
	}
	return bin, nil
}

// moduleCommit names the commit of this module's checkout, "+" marking
// uncommitted changes.
func moduleCommit() string {
	src, err := moduleDir()
	if err != nil {
		return ""
	}
	out, err := exec.Command("git", "-C", src, "describe", "--always", "--dirty=+", "--abbrev=7").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// agentVersion is the first line of `BIN --version`.
func agentVersion(bin string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "version unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
