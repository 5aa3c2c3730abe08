package acp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
)

// fake is a repository's store (a real one) and ultra's commands as a
// test plays them: Start makes the run, the test appends its events and
// says its status; every command run is recorded.
type fake struct {
	st  *store.Store
	mu  sync.Mutex
	ran [][]string
	// status is the run's status as Row shows it.
	status string
	end    chan struct{} // closed: the started command exits
	onExec func(args []string)
}

func newFake(t testing.TB) *fake {
	st, err := store.Open(filepath.Join(t.TempDir(), "ultra.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fake{st: st, end: make(chan struct{})}
}

func (f *fake) Row(ctx context.Context, id string) (*store.Run, error) {
	r, err := f.st.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	r.Status = f.status
	f.mu.Unlock()
	return r, nil
}

func (f *fake) EventsAfter(ctx context.Context, id string, seq int64, limit int) ([]store.StoredEvent, error) {
	return f.st.EventsAfter(ctx, id, seq, limit)
}

func (f *fake) Exec(ctx context.Context, args []string) (string, int) {
	f.mu.Lock()
	f.ran = append(f.ran, args)
	on := f.onExec
	f.mu.Unlock()
	if on != nil {
		on(args)
	}
	if args[0] == "goals" {
		return "no goals", 2
	}
	return "done\n", 0
}

func (f *fake) Start(ctx context.Context, args []string) (string, func() (string, int), error) {
	f.mu.Lock()
	f.ran = append(f.ran, args)
	f.status = "running"
	f.mu.Unlock()
	now := time.Now()
	r := &store.Run{ID: run, Task: "t", Repo: "/r", Workdir: "/r", Phase: "planning", Status: "running", Axes: axes.Default,
		State: json.RawMessage(`{}`), CreatedAt: now, UpdatedAt: now}
	if err := f.st.CreateRun(ctx, r); err != nil {
		return "", nil, err
	}
	f.add(event.RunStarted, event.RunStartedData{Task: "t", Workdir: "/r", Axes: axes.Default})
	return run, func() (string, int) { <-f.end; return "", 0 }, nil
}

var seqs sync.Map

// add appends an event of the run to the store.
func (f *fake) add(typ event.Type, data any) {
	b, _ := json.Marshal(data)
	n, _ := seqs.LoadOrStore(f, new(int64))
	p := n.(*int64)
	f.mu.Lock()
	*p++
	seq := *p
	f.mu.Unlock()
	if err := f.st.AppendEvent(context.Background(), run, seq, time.Now(), string(typ), "building", b); err != nil {
		panic(err)
	}
}

func (f *fake) set(status string) {
	f.mu.Lock()
	f.status = status
	f.mu.Unlock()
}

func (f *fake) commands() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ran)
}

// editor is the Go SDK's client side of a connection to the agent.
type editor struct {
	acpClient
	conn *sdk.ClientSideConnection
	id   sdk.SessionId
}

type acpClient struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	got     chan sdk.SessionUpdate
	answer  string
}

func (c *acpClient) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.mu.Unlock()
	if c.got != nil {
		c.got <- n.Update
	}
	return nil
}

func (c *acpClient) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	if c.answer == "" {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(c.answer))}, nil
}

func (c *acpClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, nil
}
func (c *acpClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, nil
}
func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, nil
}
func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, nil
}
func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, nil
}
func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, nil
}
func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, nil
}

// connect runs an agent on the fake's repository and connects an editor
// to it over pipes; it returns the editor and a new session.
func connect(t testing.TB, f *fake, o Options) (*editor, sdk.SessionId) {
	state := t.TempDir()
	o.Open = func(cwd string) (*Project, error) { return &Project{Backend: f, Root: cwd, State: state}, nil }
	ag := New(o)
	aIn, cOut := io.Pipe()
	cIn, aOut := io.Pipe()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	asc := sdk.NewAgentSideConnection(ag, aOut, aIn)
	asc.SetLogger(quiet)
	ag.Connect(asc)
	ed := &editor{}
	ed.conn = sdk.NewClientSideConnection(ed, cOut, cIn)
	ed.conn.SetLogger(quiet)
	t.Cleanup(func() { cOut.Close(); aOut.Close() })
	ctx := context.Background()
	if _, err := ed.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	s, err := ed.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/repo", McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	ed.id = s.SessionId
	return ed, s.SessionId
}

func (e *editor) prompt(text string) (sdk.StopReason, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := e.conn.Prompt(ctx, sdk.PromptRequest{SessionId: e.id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	return r.StopReason, err
}

// waitFor waits until the fake has run a command starting with prefix.
func waitFor(t *testing.T, f *fake, prefix ...string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, c := range f.commands() {
			if len(c) >= len(prefix) && slices.Equal(c[:len(prefix)], prefix) {
				return c
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no command %q; ran %q", prefix, f.commands())
	return nil
}

// A prompt starts a run with the session's axes and the agent's flags,
// streams its events as updates in order, and ends with the run.
func TestPromptStartsAndFollowsARun(t *testing.T) {
	f := newFake(t)
	ed, _ := connect(t, f, Options{Extra: []string{"--base-url", "http://m/v1"}})
	done := make(chan sdk.StopReason)
	go func() { r, _ := ed.prompt("fix calc"); done <- r }()
	argv := waitFor(t, f, "run")
	if strings.Join(argv, " ") != "run --mode build --control autonomous --permission-profile normal --model-mode smart --base-url http://m/v1 --output jsonl -- fix calc" {
		t.Fatalf("argv %q", argv)
	}
	f.add(event.AssistantText, event.AssistantTextData{Text: "looking"})
	f.add(event.ToolCall, event.ToolCallData{CallID: "c1", Tool: "read", Args: json.RawMessage(`{"file_path":"a.go"}`)})
	f.add(event.ToolResult, event.ToolResultData{CallID: "c1", Tool: "read", Output: "package a"})
	f.add(event.RunFinished, event.RunFinishedData{Status: "complete", Reason: "done"})
	f.set("complete")
	close(f.end)
	if r := <-done; r != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %s", r)
	}
	var kinds []string
	for _, u := range ed.updates {
		if k := kindOfUpdate(u); k != "available_commands_update" {
			kinds = append(kinds, k)
		}
	}
	want := "agent_thought_chunk current_mode_update agent_message_chunk tool_call tool_call_update agent_message_chunk"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("updates %v\nwant      %s", kinds, want)
	}
}

// session/cancel pauses the run at its next safe point; the prompt ends
// cancelled once the run is no longer working.
func TestCancelPausesTheRun(t *testing.T) {
	f := newFake(t)
	f.onExec = func(args []string) {
		if args[0] == "pause" {
			go func() { time.Sleep(30 * time.Millisecond); f.set("paused") }()
		}
	}
	ed, sid := connect(t, f, Options{})
	done := make(chan sdk.StopReason)
	go func() { r, _ := ed.prompt("fix calc"); done <- r }()
	waitFor(t, f, "run")
	if err := ed.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, f, "pause"); strings.Join(got, " ") != "pause "+run+" --reason cancelled in the editor" {
		t.Fatalf("%q", got)
	}
	select {
	case r := <-done:
		if r != sdk.StopReasonCancelled {
			t.Fatalf("stop reason %s", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt did not end")
	}
	// Guidance continues the paused run.
	go func() { r, _ := ed.prompt("try again"); done <- r }()
	if got := waitFor(t, f, "resume"); strings.Join(got, " ") != "resume "+run+" try again --output jsonl" {
		t.Fatalf("%q", got)
	}
	f.set("complete")
	close(f.end)
	<-done
}

// A call that waits becomes a permission request; rejecting it for good
// denies it with ultra approve --deny and refuses the tool's next call
// without asking.
func TestPermissionDenial(t *testing.T) {
	f := newFake(t)
	ed, _ := connect(t, f, Options{})
	ed.answer = RejectAlways
	done := make(chan sdk.StopReason)
	go func() { r, _ := ed.prompt("fix calc"); done <- r }()
	waitFor(t, f, "run")
	f.add(event.ToolCall, event.ToolCallData{CallID: "c1", Tool: "bash", Args: json.RawMessage(`{"command":"rm x"}`)})
	f.add(event.Approval, event.ApprovalData{CallID: "c1", Tool: "bash", State: "waiting"})
	got := waitFor(t, f, "approve", run, "--call", "c1")
	if !slices.Contains(got, "--deny") {
		t.Fatalf("%q", got)
	}
	ed.answer = AllowOnce // never asked again for bash
	f.add(event.Approval, event.ApprovalData{CallID: "c1", Tool: "bash", State: "denied"})
	f.add(event.ToolCall, event.ToolCallData{CallID: "c2", Tool: "bash", Args: json.RawMessage(`{"command":"rm y"}`)})
	f.add(event.Approval, event.ApprovalData{CallID: "c2", Tool: "bash", State: "waiting"})
	if got := waitFor(t, f, "approve", run, "--call", "c2"); !slices.Contains(got, "--deny") {
		t.Fatalf("the second bash call: %q", got)
	}
	f.set("complete")
	close(f.end)
	<-done
}

// A slash command runs as the command table says, its output returned as
// a message; one the editor does not offer says why.
func TestSlashCommands(t *testing.T) {
	f := newFake(t)
	ed, _ := connect(t, f, Options{})
	if r, err := ed.prompt("/tasks --all"); err != nil || r != sdk.StopReasonEndTurn {
		t.Fatal(r, err)
	}
	if c := f.commands(); len(c) != 1 || strings.Join(c[0], " ") != "tasks --all" {
		t.Fatalf("%q", c)
	}
	ed.prompt("/clear")
	ed.prompt("/status")
	ed.prompt("/mode plan --manual")
	var text []string
	for _, u := range ed.updates {
		if u.AgentMessageChunk != nil {
			text = append(text, u.AgentMessageChunk.Content.Text.Text)
		}
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"done", "the editor owns the conversation", "/status needs a run", "The next run: plan | manual"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
	if len(f.commands()) != 1 {
		t.Fatalf("commands ran: %q", f.commands())
	}
	// The next run has the axes the command set.
	go ed.prompt("plan it")
	if got := waitFor(t, f, "plan"); strings.Join(got[:3], " ") != "plan --control manual" {
		t.Fatalf("%q", got)
	}
	f.set("complete")
	close(f.end)
}

// Malformed input gets an error, never a crash.
func TestBadInput(t *testing.T) {
	f := newFake(t)
	ed, sid := connect(t, f, Options{})
	ctx := context.Background()
	if _, err := ed.conn.Prompt(ctx, sdk.PromptRequest{SessionId: "nope", Prompt: []sdk.ContentBlock{sdk.TextBlock("x")}}); err == nil {
		t.Error("a prompt of no session")
	}
	if _, err := ed.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sid, ModeId: "yolo"}); err == nil {
		t.Error("an unknown mode")
	}
	if _, err := ed.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: "control", Value: "wild"}}); err == nil {
		t.Error("an unknown control")
	}
	if _, err := ed.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "relative", McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("a relative cwd")
	}
	if _, err := ed.conn.LoadSession(ctx, sdk.LoadSessionRequest{Cwd: "/repo", SessionId: "../../etc/passwd", McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("a session id that is a path")
	}
	r, err := ed.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: sid, ConfigId: "permission_profile", Value: "restricted"}})
	if err != nil || r.ConfigOptions[1].Select.CurrentValue != "restricted" {
		t.Fatalf("%+v %v", r, err)
	}
}

// BenchmarkEventLatency is the time from an event appended to the store
// to its session/update at the editor (the median is reported; the goal
// is under 50 ms).
func BenchmarkEventLatency(b *testing.B) {
	f := newFake(b)
	ed, _ := connect(b, f, Options{})
	ed.got = make(chan sdk.SessionUpdate, 64)
	go ed.prompt("fix calc")
	for u := range ed.got {
		if u.CurrentModeUpdate != nil { // the run_started event arrived
			break
		}
	}
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		f.add(event.AssistantText, event.AssistantTextData{Text: "x"})
		for u := range ed.got {
			if u.AgentMessageChunk != nil {
				break
			}
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	med := ds[len(ds)/2]
	b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
	if med > 50*time.Millisecond {
		b.Errorf("median latency %s, want under 50ms", med)
	}
	f.set("complete")
	close(f.end)
}
