package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --mcp-config's file is read as a repository's .mcp.json: it must be
// there and well formed, and its servers get no credential of the
// person's unless trusted.
func TestReadMCPConfigs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"mcpServers": {"files": {"command": "srv", "args": ["-v"]}}}`), 0o600)
	srcs, err := readMCPConfigs([]string{good})
	if err != nil || len(srcs) != 1 || !srcs[0].Project || srcs[0].Entries["files"].Command != "srv" {
		t.Fatalf("%+v %v", srcs, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"mcpServers": {"x": {"command": 7}}}`), 0o600)
	for path, want := range map[string]string{filepath.Join(dir, "none.json"): "no such file", bad: "bad.json"} {
		if _, err := readMCPConfigs([]string{path}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", path, err, want)
		}
	}
}
