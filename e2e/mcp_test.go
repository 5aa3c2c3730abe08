package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/mcp/mcptest"
)

// mcpRepo is calcProject with a .mcp.json naming the three servers from
// the npm registry, and the project's policy for two of the filesystem
// server's tools; marker is an argument of the everything server's
// command, to find its processes.
func mcpRepo(t *testing.T, marker string) string {
	t.Helper()
	node, everything := mcptest.Script(t, "server-everything")
	_, fs := mcptest.Script(t, "server-filesystem")
	_, memory := mcptest.Script(t, "server-memory")
	servers := map[string]any{
		"everything": map[string]any{"command": node, "args": []string{everything, "stdio", marker},
			"env": map[string]string{"SERVICE_TOKEN": "${E2E_SERVICE_TOKEN}", "GREETING": "${E2E_UNSET:-hello}"}},
		// "/": the server itself would allow the whole file system; the
		// run's roots and its sandbox confine it.
		"fs":     map[string]any{"command": node, "args": []string{fs, "/"}},
		"memory": map[string]any{"command": node, "args": []string{memory}, "env": map[string]string{"MEMORY_FILE_PATH": "/tmp/memory.jsonl"}},
	}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	files := maps.Clone(calcProject)
	files[".mcp.json"] = string(b)
	files[".ultra/config"] = "[mcp.servers.fs.tools]\nwrite_file = \"allow\"\nmove_file = \"deny\"\n"
	return repo(t, files)
}

// mcpEnv is ultra's environment for mcpRepo's runs: the person's own
// config trusts the everything server with the credential it names.
func mcpEnv(t *testing.T, token string) []string {
	home := configHome(t)
	if err := os.MkdirAll(filepath.Join(home, "ultra"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "ultra", "config.toml"), []byte("[mcp]\ntrusted = [\"everything\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(ultraEnv(t), "XDG_CONFIG_HOME="+home, "E2E_SERVICE_TOKEN="+token)
}

// A repository's .mcp.json gets none of the person's credentials for a
// server they do not trust: the run does not start, and says how.
func TestMCPProjectServerNeedsTrustForACredential(t *testing.T) {
	t.Parallel()
	dir := mcpRepo(t, "e2e-marker-untrusted")
	m := newModel(t, fixSteps()...)
	res := ultraRun(t, dir, append(ultraEnv(t), "E2E_SERVICE_TOKEN=tok-abc"), runArgs(m, "fix calc")...)
	if res.code != 2 || !strings.Contains(res.stderr, `${E2E_SERVICE_TOKEN} names a credential, which a repository's file gets only for a server you trust: add "everything" to mcp.trusted`) {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if n := len(m.srv.Requests()); n != 0 {
		t.Fatalf("%d model requests", n)
	}
}

// A run uses the person's MCP servers inside its rules: read-only tools in
// planning, the others only in building, a denied tool never; what the
// servers write lands in the worktree only (the sandbox and the roots),
// a credential they print is redacted, and nothing of them outlives the
// run.
func TestMCPServersInARun(t *testing.T) {
	t.Parallel()
	marker := "e2e-marker-" + strings.ReplaceAll(t.Name(), "/", "-")
	dir := mcpRepo(t, marker)
	escape := filepath.Join(dir, "escaped.txt")
	steps := []step{
		calls(call("read", map[string]any{"file_path": "calc/calc.go"}),
			call("mcp__everything__echo", map[string]any{"message": "hello through MCP"}),
			call("mcp__everything__get-env", map[string]any{}),
			call("mcp__fs__write_file", map[string]any{"path": "calc/planned.txt", "content": "planning writes nothing"})),
		calls(call("goals", calcGoals())),
		// In building the three servers' 37 tools weigh too much to offer
		// at once: the model loads the ones it needs.
		calls(call("mcp__fs__write_file", map[string]any{"path": "calc/early.txt", "content": "not loaded yet"}),
			call("mcp_search", map[string]any{"query": "write_file create_entities move_file"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"}),
			call("mcp__fs__write_file", map[string]any{"path": "calc/notes.txt", "content": "written through MCP"}),
			call("mcp__fs__write_file", map[string]any{"path": escape, "content": "outside"}),
			call("mcp__fs__move_file", map[string]any{"source": "calc/notes.txt", "destination": "calc/moved.txt"}),
			call("mcp__memory__create_entities", map[string]any{"entities": []any{map[string]any{"name": "calc", "entityType": "package", "observations": []any{"Add adds"}}}})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		endCleanup(),
		calls(call("mcp__memory__read_graph", map[string]any{})),
		approve(),
	}
	m := newModel(t, steps...)
	res := ultraRun(t, dir, mcpEnv(t, "tok-9f8e7d6c5b4a3210"), runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	if mcp := ofType(evs, "mcp"); len(mcp) != 1 || len(data(mcp[0])["servers"].([]any)) != 3 {
		t.Fatalf("the mcp event: %v", mcp)
	}
	out := map[string][]map[string]any{}
	for _, e := range ofType(evs, "tool_result") {
		out[data(e)["tool"].(string)] = append(out[data(e)["tool"].(string)], data(e))
	}
	first := func(tool string) map[string]any {
		t.Helper()
		if len(out[tool]) == 0 {
			t.Fatalf("no result of %s", tool)
		}
		return out[tool][0]
	}
	if o := first("mcp__everything__echo"); o["is_error"] == true || !strings.Contains(o["output"].(string), "hello through MCP") {
		t.Fatalf("echo in planning: %v", o)
	}
	// What the model read of the server's environment: the next request.
	reqs := m.srv.Requests()
	envOut := string(reqs[1].Body)
	if strings.Contains(envOut, "tok-9f8e7d6c5b4a3210") || !strings.Contains(envOut, "SERVICE_TOKEN") || !strings.Contains(envOut, "redacted") ||
		!strings.Contains(envOut, `\"GREETING\": \"hello\"`) {
		t.Fatalf("the server's environment as the model read it (the token must be redacted, the default expanded):\n%s", envOut)
	}
	if strings.Contains(envOut, `\"HOME\": \"/root\"`) || strings.Contains(envOut, "OPENAI_") {
		t.Fatalf("the server saw the person's home or ultra's environment:\n%s", envOut)
	}
	writes := out["mcp__fs__write_file"]
	if len(writes) != 4 {
		t.Fatalf("%d write_file results, want 4", len(writes))
	}
	if o := writes[0]["output"].(string); !strings.Contains(o, "Refused [phase-guard]") {
		t.Fatalf("write_file in planning was not refused by the phase guard: %s", o)
	}
	if o := writes[1]["output"].(string); !strings.Contains(o, "Refused [phase-guard]") || !strings.Contains(o, "mcp_search") {
		t.Fatalf("write_file before it was loaded: %s", o)
	}
	if o := first("mcp_search")["output"].(string); !strings.Contains(o, "mcp__fs__write_file") || !strings.Contains(o, "mcp__memory__create_entities") || strings.Contains(o, "move_file") {
		t.Fatalf("mcp_search loaded:\n%s", o)
	}
	writes = writes[1:]
	if writes[1]["is_error"] == true {
		t.Fatalf("write_file into the worktree in building: %v", writes[1])
	}
	if writes[2]["is_error"] != true {
		t.Fatalf("write_file outside the worktree succeeded: %v", writes[2])
	}
	if _, err := os.Stat(escape); err == nil {
		t.Fatal("a server wrote into the person's checkout")
	}
	if o := first("mcp__fs__move_file")["output"].(string); !strings.Contains(o, "Refused [policy]") || !strings.Contains(o, `tools.move_file = "deny"`) {
		t.Fatalf("the denied move_file: %s", o)
	}
	if o := first("mcp__memory__read_graph"); o["is_error"] == true || !strings.Contains(o["output"].(string), "Add adds") {
		t.Fatalf("the memory server lost its graph between building and the review: %v", o)
	}
	// What the model was offered, request by request.
	planning, building, loaded := reqs[0].Tools, reqs[2].Tools, reqs[3].Tools
	for _, c := range []struct {
		tools []string
		name  string
		want  bool
	}{
		{planning, "mcp__everything__echo", true}, {planning, "mcp__fs__read_text_file", true},
		{planning, "mcp__fs__write_file", false}, {planning, "mcp__memory__create_entities", false},
		{planning, "mcp_search", false},
		{building, "mcp_search", true}, {building, "mcp__fs__write_file", false}, {building, "mcp__everything__echo", false},
		{loaded, "mcp__fs__write_file", true}, {loaded, "mcp__memory__create_entities", true},
		{loaded, "mcp__fs__move_file", false}, {loaded, "mcp__everything__echo", false},
	} {
		if slices.Contains(c.tools, c.name) != c.want {
			t.Errorf("offered %s: %v, want %v (tools %v)", c.name, !c.want, c.want, c.tools)
		}
	}
	// The server's file is on the run's branch; the planning write is not.
	id := runID(t, evs)
	if got := git(t, dir, "show", "ultra/"+id+":calc/notes.txt"); got != "written through MCP" {
		t.Fatalf("calc/notes.txt on the branch: %q", got)
	}
	for _, f := range []string{"calc/planned.txt", "calc/early.txt"} {
		if _, err := exec.Command("git", "-C", dir, "cat-file", "-e", "ultra/"+id+":"+f).Output(); err == nil {
			t.Fatalf("the refused write of %s is on the branch", f)
		}
	}
	// What the servers' definitions cost a request: the planning request
	// offers the 19 read-only tools, the building one mcp_search alone.
	t.Logf("request bytes: planning %d, building %d, after loading %d", len(reqs[0].Body), len(reqs[2].Body), len(reqs[3].Body))
	if b, _ := exec.Command("pgrep", "-f", marker).Output(); len(b) > 0 {
		t.Fatalf("MCP server processes outlived the run: %s", b)
	}
}

// A tool its server marks destructive, of which the person's config says
// nothing, waits for a person under autonomous control too; allowed, it
// runs, and the run goes on.
func TestMCPDestructiveToolWaitsForAPerson(t *testing.T) {
	t.Parallel()
	dir := mcpRepo(t, "e2e-marker-destructive")
	m := newModel(t,
		calls(call("goals", calcGoals())),
		calls(call("mcp_search", map[string]any{"query": "create_entities delete_entities"})),
		calls(call("mcp__memory__create_entities", map[string]any{"entities": []any{map[string]any{"name": "calc", "entityType": "package", "observations": []any{"x"}}}})),
		calls(call("mcp__memory__delete_entities", map[string]any{"entityNames": []any{"calc"}})),
		step{"text": "waiting", "delay_ms": 20000},
	)
	res := ultraRun(t, dir, mcpEnv(t, "x"), runArgs(m, "--no-wait", "fix calc")...)
	if res.code != 3 || !strings.Contains(res.stderr, "(mcp__memory__delete_entities) waits for a person's approval") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	evs := res.events(t)
	for _, e := range ofType(evs, "tool_result") {
		if data(e)["tool"] == "mcp__memory__delete_entities" && data(e)["is_error"] != true {
			t.Fatalf("the destructive call ran without a person: %v", data(e))
		}
	}
	var created bool
	for _, e := range ofType(evs, "tool_result") {
		created = created || (data(e)["tool"] == "mcp__memory__create_entities" && data(e)["is_error"] != true)
	}
	if !created {
		t.Fatal("the non-destructive write did not run without a person")
	}
}
