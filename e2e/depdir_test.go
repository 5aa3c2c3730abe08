package e2e

import (
	"strings"
	"testing"
)

// A tree that adds files under a dependency directory (a planted
// node_modules/.bin runner) fails the gate, whatever its tests say; the
// branch never holds it.
func TestPlantedDependencyDirFailsTheGate(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	s := fixSteps()
	plant := calls(call("write", map[string]any{"file_path": "node_modules/.bin/go-runner", "content": "#!/bin/sh\necho PASS\n"}))
	unplant := calls(call("bash", map[string]any{"command": "rm -rf node_modules"}))
	steps := append(s[:3:3], plant, s[3], s[4], // verify: fails
		unplant, calls(call("phase", map[string]any{"to": "verifying"})), s[4], s[5], s[6])
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	var first map[string]any
	for _, e := range ofType(res.events(t), "verify_result") {
		first = data(e)
		break
	}
	if first == nil || first["status"] == "pass" || !strings.Contains(first["reason"].(string), "dependency directories (node_modules/.bin/go-runner)") {
		t.Fatalf("the first verification: %v\nexit %d\n%s", first, res.code, res.stderr)
	}
	if out := git(t, dir, "log", "--all", "--name-only", "--format="); strings.Contains(out, "node_modules") {
		t.Fatalf("a commit holds the planted runner:\n%s", out)
	}
}
