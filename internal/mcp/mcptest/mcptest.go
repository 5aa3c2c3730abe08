// Package mcptest finds the real MCP servers from the npm registry that
// the tests talk to (.ci/run installs them into ULTRA_TEST_NODE_MODULES).
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Script is the entry point of package pkg (e.g. "server-everything")
// of @modelcontextprotocol, and node to run it; the test skips, saying
// why, when either is missing.
func Script(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the MCP servers' tests need it (.ci/run installs the servers)")
	}
	dirs := []string{os.Getenv("ULTRA_TEST_NODE_MODULES")}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cache", "ultra-test-node", "node_modules"))
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "@modelcontextprotocol", pkg, "dist", "index.js")
		if _, err := os.Stat(p); err == nil {
			return node, p
		}
	}
	t.Skipf("@modelcontextprotocol/%s is not installed (ULTRA_TEST_NODE_MODULES or ~/.cache/ultra-test-node; .ci/run installs it)", pkg)
	return "", ""
}
