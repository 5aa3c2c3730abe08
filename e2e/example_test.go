package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTryScriptedExample runs docs/examples/try-scripted.sh as the README
// tells a new user to: a whole run against the scripted model, from a
// fresh project to its landing, with ultra on PATH.
func TestTryScriptedExample(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../docs/examples/try-scripted.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := append(ultraEnv(t), "PATH="+filepath.Dir(ultraBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd := exec.Command("sh", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	for _, want := range []string{"✔ complete — the final review approved", "✓ G001-C1 [happy, cli, command] pass", "+\treturn a + b", "landed run "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the example's output lacks %q:\n%s", want, out)
		}
	}
	if got := git(t, filepath.Join(dir, "calc-demo"), "show", "main:calc/calc.go"); !strings.Contains(got, "return a + b") {
		t.Errorf("main after landing:\n%s", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the example left more than its project where it ran: %v", entries)
	}
	// Run again where its project already is, it stops and touches
	// nothing (it used to go on in the directory it was run from).
	again := exec.Command("sh", script)
	again.Dir, again.Env = dir, env
	out, err = again.CombinedOutput()
	if code := again.ProcessState.ExitCode(); err == nil || code != 2 || !strings.Contains(string(out), "calc-demo already exists") {
		t.Fatalf("run again: exit %d\n%s", code, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the second run left %v", entries)
	}
}
