package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// acpClient is an editor driving `ultra acp` over its stdio with the Go
// SDK's client side: it records every update and answers permission
// requests with answer.
type acpClient struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	asked   []sdk.RequestPermissionRequest
	answer  func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome
	conn    *sdk.ClientSideConnection
	stderr  strings.Builder
}

func (c *acpClient) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	return nil
}

func (c *acpClient) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	answer := c.answer
	c.mu.Unlock()
	if answer == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: answer(p)}, nil
}

func (c *acpClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (c *acpClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// startACP starts `ultra acp` in dir with args and connects a client.
func startACP(t *testing.T, dir string, args ...string) *acpClient {
	t.Helper()
	cmd := exec.Command(ultraBin, append([]string{"acp"}, args...)...)
	cmd.Dir, cmd.Env = dir, ultraEnv(t)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &acpClient{}
	cmd.Stderr = &syncWriter{mu: &c.mu, w: &c.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	c.conn = sdk.NewClientSideConnection(c, in, out)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init, err := c.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if init.ProtocolVersion != 1 || !init.AgentCapabilities.LoadSession || !init.AgentCapabilities.PromptCapabilities.EmbeddedContext || init.AgentCapabilities.PromptCapabilities.Image {
		t.Fatalf("initialize: %+v", init)
	}
	return c
}

// kinds are the session update kinds the client received, in order.
func (c *acpClient) kinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.updates {
		b, _ := json.Marshal(n.Update)
		var v struct {
			Kind string `json:"sessionUpdate"`
		}
		json.Unmarshal(b, &v)
		out = append(out, v.Kind)
	}
	return out
}

// text is every agent message chunk's text.
func (c *acpClient) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.updates {
		if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
			b.WriteString(m.Content.Text.Text)
		}
	}
	return b.String()
}

func selected(id string) sdk.RequestPermissionOutcome {
	return sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(id))
}

func prompt(t *testing.T, c *acpClient, sid sdk.SessionId, text string) sdk.StopReason {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		t.Fatalf("prompt %q: %v\nstderr: %s", text, err, c.stderr.String())
	}
	return r.StopReason
}

// An editor drives a whole run: the plan waits for its acceptance as a
// permission request, the build streams tool calls with their diffs and
// locations, the goals arrive as a plan, the mode follows the run, and
// the end says the result and offers /land, which runs as a command.
func TestACPPlanBuildComplete(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, fixSteps()...)
	c := startACP(t, dir, "--provider", "openai", "--base-url", m.url, "--model", "scripted", "--control", "assisted")
	c.answer = func(p sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected("allow_always") }
	ctx := context.Background()
	s, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Modes == nil || s.Modes.CurrentModeId != "build" || len(s.Modes.AvailableModes) != 6 || len(s.ConfigOptions) != 3 {
		t.Fatalf("new session: %+v", s)
	}
	if r := prompt(t, c, s.SessionId, "fix calc"); r != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %s\n%s", r, c.text())
	}
	if len(c.asked) != 1 || !strings.Contains(*c.asked[0].ToolCall.Title, "plan") {
		t.Fatalf("permission requests: %+v\n%s\n%v", c.asked, c.text(), c.kinds())
	}
	var edit *sdk.SessionUpdateToolCall
	var plan *sdk.SessionUpdatePlan
	usage := false
	for _, n := range c.updates {
		if tc := n.Update.ToolCall; tc != nil && tc.Kind == sdk.ToolKindEdit {
			edit = tc
		}
		if n.Update.Plan != nil {
			plan = n.Update.Plan
		}
		usage = usage || n.Update.UsageUpdate != nil
	}
	if edit == nil || len(edit.Content) != 1 || edit.Content[0].Diff == nil || edit.Content[0].Diff.NewText != "return a + b" ||
		len(edit.Locations) != 1 || !strings.HasSuffix(edit.Locations[0].Path, "/calc/calc.go") || !filepath.IsAbs(edit.Locations[0].Path) {
		t.Fatalf("the edit's tool call: %+v", edit)
	}
	if plan == nil || len(plan.Entries) != 4 || plan.Entries[0].Status != sdk.PlanEntryStatusCompleted || !strings.Contains(plan.Entries[0].Content, "Add adds") {
		t.Fatalf("the last plan: %+v", plan)
	}
	if !usage {
		t.Fatalf("no usage update: %v", c.kinds())
	}
	if txt := c.text(); !strings.Contains(txt, "The run is complete") || !strings.Contains(txt, "/land") || !strings.Contains(txt, "Plan proposed") {
		t.Fatalf("the messages:\n%s", txt)
	}
	if k := strings.Join(c.kinds(), " "); !strings.Contains(k, "available_commands_update") || !strings.Contains(k, "current_mode_update") {
		t.Fatalf("update kinds: %s", k)
	}
	// /land is the command table's: it merges the run's branch.
	if r := prompt(t, c, s.SessionId, "/land"); r != sdk.StopReasonEndTurn {
		t.Fatalf("/land: %s", r)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "calc", "calc.go")); err != nil || !strings.Contains(string(got), "return a + b") {
		t.Fatalf("after /land the checkout has:\n%s\n%s", got, c.text())
	}
}

// The npm registry's ACP client (@agentclientprotocol/sdk) drives ultra
// acp: a plan accepted to run autonomously and built to completion, a
// call denied and a prompt cancelled, then the first session loaded.
func TestACPNodeClient(t *testing.T) {
	t.Parallel()
	mods := os.Getenv("ULTRA_TEST_NODE_MODULES")
	node, err := exec.LookPath("node")
	switch {
	case err != nil:
		t.Skip("node is not installed: the ACP client of the npm registry cannot run")
	case mods == "":
		t.Skip("ULTRA_TEST_NODE_MODULES is not set (.ci/run sets it)")
	}
	if _, err := os.Stat(filepath.Join(mods, "@agentclientprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("@agentclientprotocol/sdk is not installed in %s (.ci/run installs it)", mods)
	}
	dir := repo(t, calcProject)
	m := newModel(t, text("replaced by each scenario's script"))
	scripts, _ := json.Marshal(map[string]any{
		"build": map[string]any{"steps": fixSteps()},
		"deny": map[string]any{"steps": []step{
			calls(call("bash", map[string]any{"command": "ls calc"})),
			{"delay_ms": 3000, "text": "then I will not"},
			{"delay_ms": 20000, "text": "waiting"},
		}},
	})
	script, _ := filepath.Abs("testdata/acp_client.mjs")
	cmd := exec.Command(node, script)
	cmd.Dir = dir
	cmd.Env = append(ultraEnv(t), "ULTRA_TEST_NODE_MODULES="+mods, "ULTRA_BIN="+ultraBin, "REPO="+dir,
		"MODEL_ROOT="+strings.TrimSuffix(m.url, "/v1"), "SCRIPTS="+string(scripts))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var out struct {
		ProtocolVersion int
		LoadSession     bool
		Modes           []string
		Build           struct {
			Stop                       string
			Complete, Land, Plan, Edit bool
			Asked                      int
		}
		Deny struct {
			Failed bool
			Stop   string
			Asked  []string
		}
		Load struct{ User, Complete, Edit bool }
	}
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if out.ProtocolVersion != 1 || !out.LoadSession || strings.Join(out.Modes, " ") != "chat plan build review repair research" {
		t.Errorf("initialize and session/new: %+v", out)
	}
	if b := out.Build; b.Stop != "end_turn" || !b.Complete || !b.Land || !b.Plan || !b.Edit || b.Asked != 1 {
		t.Errorf("the build: %+v\n%s\n%s", b, stdout.String(), stderr.String())
	}
	if d := out.Deny; d.Stop != "cancelled" || !d.Failed || len(d.Asked) != 1 || d.Asked[0] != "allow_once,allow_always,reject_once,reject_always" {
		t.Errorf("the denial and cancel: %+v\n%s\n%s", d, stdout.String(), stderr.String())
	}
	if l := out.Load; !l.User || !l.Complete || !l.Edit {
		t.Errorf("session/load: %+v", l)
	}
}
