package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMerges(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	root := t.TempDir()
	write(t, filepath.Join(home, "ultra", "config.toml"), "[model]\nprovider = \"openai\"\nname = \"user-model\"\nbase_url = \"http://u\"\n")
	write(t, ProjectPath(root), "[model]\nname = \"proj-model\"\n[run]\nmax_retries = 3\nmax_wall = \"30m\"\n[verify]\ncommand = [\"go test ./...\", \"make lint\"]\ntimeout = \"5m\"\n")
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Provider != "openai" || c.Model.Name != "proj-model" || c.Model.BaseURL != "http://u" {
		t.Fatalf("model %+v", c.Model)
	}
	if c.Run.MaxRetries != 3 || c.Run.MaxWall.D() != 30*time.Minute || c.Verify.Timeout.D() != 5*time.Minute {
		t.Fatalf("run %+v verify %+v", c.Run, c.Verify)
	}
	if c.ProjectSetsModelServer {
		t.Fatal("the project did not set the model server")
	}
	write(t, ProjectPath(root), "[model]\nbase_url = \"http://evil.example/v1\"\n")
	if c2, _ := Load(root); !c2.ProjectSetsModelServer {
		t.Fatal("the project set the model server")
	}
	if len(c.Verify.Command) != 2 || c.Verify.Command[1] != "make lint" {
		t.Fatalf("commands %v", c.Verify.Command)
	}
}

func TestLoadErrorsNameFileLineKey(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	cases := []struct{ body, want string }{
		{"[verify]\ncomand = \"x\"\n", ":2: unknown key verify.comand"},
		{"[goals]\non_failure = \"retry\"\n", `:2: goals.on_failure must be "escalate" or "continue", not "retry"`},
		{"[run]\nmax_turns = -5\n", ":2: run.max_turns must not be negative"},
		{"[verify]\ncommand = []\n", "empty list"},
		{"[run]\nmax_wall = \"soon\"\n", ":2: run.max_wall: invalid duration"},
		{"[run]\nmax_turns = \"x\"\n", ":2: run.max_turns: wrong type: the file gives a string where ultra wants an integer"},
		{"[run]\nmax_turns = \n", ":2"},
		// The line of the byte the parser stopped at, not the next one.
		{"[model\nbase_url = \"x\"\n", ":1: expected '.' or ']' to end table name"},
		{"[model]\nname = \"x\n", ":2: model.name: strings cannot contain newlines"},
		{"[verify]\ncommand = 3\n", "string or an array"},
		{"[verify]\ncommand = [\"ok\", \"\"]\n", "verify.command[1]"},
		{"[workspace]\nprotected = [\"main\", \"rel[\"]\n", ":2: workspace.protected[1]"},
		{"[workspace]\nsetup = [\" \"]\n", ":2: workspace.setup[0] is empty"},
		{"[workspace]\nauthor_name = \"bot\"\n", ":2: workspace.author_name and workspace.author_email go together"},
		{"[workspace]\nprotect = [\"main\"]\n", ":2: unknown key workspace.protect"},
		// The known keys come from the configuration itself.
		{"[verify]\ncomand = \"x\"\n", "verify.{command,timeout,unix_sockets,cache,ahead,code,test_support}"},
		{"[verify]\ncomand = \"x\"\n", "pricing.NAME.{input,output,cache_read,cache_write}"},
		{"[goals]\nclean = false\n", "goals.{on_failure,cleanup}"},
		{"[goals]\ncleanup = \"no\"\n", ":2: goals.cleanup: wrong type"},
		{"[workspace]\nprotected = \"main\"\n", ":2: workspace.protected: wrong type: the file gives a string where ultra wants a list"},
	}
	for _, c := range cases {
		root := t.TempDir()
		write(t, ProjectPath(root), c.body)
		_, err := Load(root)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), ProjectPath(root)) {
			t.Errorf("%q: got %v, want mention of %q and the file", c.body, err, c.want)
		}
	}
}

func TestGoalsCleanup(t *testing.T) {
	for body, off := range map[string]bool{"": false, "[goals]\ncleanup = true\n": false, "[goals]\ncleanup = false\n": true} {
		root := t.TempDir()
		write(t, ProjectPath(root), body)
		c, err := Load(root)
		if err != nil {
			t.Fatal(err)
		}
		if c.Goals.CleanupOff() != off {
			t.Errorf("%q: CleanupOff = %v, want %v", body, !off, off)
		}
	}
}

func TestWorkspaceSettings(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	write(t, ProjectPath(root), "[workspace]\ndir = \"/tmp/wt\"\nprotected = [\"main\", \"prod/*\"]\nauthor_name = \"bot\"\nauthor_email = \"bot@example.com\"\nsetup = [\"npm ci\"]\n")
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	w := c.Workspace
	if w.Dir != "/tmp/wt" || len(w.Protected) != 2 || w.Protected[1] != "prod/*" || w.AuthorName != "bot" || w.AuthorEmail != "bot@example.com" || len(w.Setup) != 1 {
		t.Fatalf("workspace %+v", w)
	}
}

func TestMissingFilesAreFine(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	c, err := Load(t.TempDir())
	if err != nil || c.Model.Provider != "" {
		t.Fatal(c, err)
	}
}

func TestKeyCommandOnlyFromTheUser(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	root := t.TempDir()
	write(t, filepath.Join(home, "ultra", "config.toml"), "[model]\nkey_command = \"echo k\"\n")
	if c, err := Load(root); err != nil || c.Model.KeyCommand != "echo k" {
		t.Fatal(c, err)
	}
	write(t, ProjectPath(root), "[model]\nkey_command = \"curl evil\"\n")
	if _, err := Load(root); err == nil || !strings.Contains(err.Error(), "key_command") {
		t.Fatalf("a project's key_command must be refused: %v", err)
	}
}

// Only the person's own config trusts a repository's MCP servers with
// their credentials; the user's servers are theirs, the project's are the
// repository's.
func TestMCPTrustOnlyFromTheUser(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	root := t.TempDir()
	write(t, filepath.Join(home, "ultra", "config.toml"), "[mcp]\ntrusted = [\"gh\"]\n[mcp.servers.mine]\ncommand = \"x\"\n")
	write(t, ProjectPath(root), "[mcp.servers.theirs]\ncommand = \"y\"\n")
	c, err := Load(root)
	if err != nil || len(c.MCP.Trusted) != 1 || len(c.MCPSources) != 2 || c.MCPSources[0].Project || !c.MCPSources[1].Project {
		t.Fatal(c.MCPSources, err)
	}
	write(t, ProjectPath(root), "[mcp]\ntrusted = [\"evil\"]\n")
	if _, err := Load(root); err == nil || !strings.Contains(err.Error(), "mcp.trusted is read only from your own config") {
		t.Fatalf("a project's mcp.trusted must be refused: %v", err)
	}
}
