package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Launch makes the process of a stdio server, contained: writable says
// whether the run's tree may be written from it (a phase that changes
// code), done releases what the sandbox gave it once it started.
type Launch func(s Server, writable bool) (cmd *exec.Cmd, done func(), err error)

// Options are what a Manager's servers may use.
type Options struct {
	// Launch starts stdio servers (nil: they are not started).
	Launch Launch
	// Network says remote servers may be reached (the run's permission
	// profile allows the network); nil: never.
	Network func() bool
	// Roots are the directories offered to the servers as roots (the
	// run's tree).
	Roots []string
	// LogDir keeps each stdio server's standard error ("": discarded).
	LogDir string
	// StartTimeout bounds connecting and listing tools (0: 30s).
	StartTimeout time.Duration
	// Version is ultra's, sent as the client's.
	Version string
}

// Status is what a server is doing, as `ultra mcp list` shows it.
type Status struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Source string `json:"source"`
	// State: connected, failed, off (not started: why in Error).
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	Tools int    `json:"tools"`
}

// ToolInfo is one tool a server offers, as ultra offers it.
type ToolInfo struct {
	Name        string          `json:"name"` // mcp__SERVER__TOOL
	Server      string          `json:"server"`
	Tool        string          `json:"tool"` // the server's own name
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"input_schema"`
	ReadOnly    bool            `json:"read_only"`   // readOnlyHint
	Destructive bool            `json:"destructive"` // destructiveHint set true
	Policy      string          `json:"policy,omitempty"`
}

// Manager holds one run's servers: connected on Start, each call bounded
// by its server's timeout; a server that crashed or hung is started
// again on the next call.
type Manager struct {
	opts    Options
	servers []Server

	mu     sync.Mutex
	conns  map[string]*conn
	status map[string]*Status
	tools  []ToolInfo
	byName map[string]ToolInfo
	// asksRoots are the servers that asked for the roots once.
	asksRoots map[string]bool
}

type conn struct {
	// rootsRead is closed once the server asked for the roots;
	// rootsSettled once a call waited for it (Manager.rootsFirst; set
	// under Manager.mu).
	rootsRead    chan struct{}
	rootsSettled bool
	stop         context.CancelFunc // ends what the session reads in the background
	server       Server
	session      *sdk.ClientSession
	cmd          *exec.Cmd
	writable     bool
	log          *os.File
}

// NewManager makes a manager of servers; nothing starts until Start.
func NewManager(servers []Server, opts Options) *Manager {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	m := &Manager{opts: opts, servers: servers, conns: map[string]*conn{}, status: map[string]*Status{}, byName: map[string]ToolInfo{}, asksRoots: map[string]bool{}}
	for _, s := range servers {
		m.status[s.Name] = &Status{Name: s.Name, Type: s.Type, Source: s.Source, State: "off"}
	}
	return m
}

// Start connects every server at once and lists its tools; a server that
// cannot start is recorded as failed (Statuses), never fatal.
func (m *Manager) Start(ctx context.Context, writable bool) {
	var wg sync.WaitGroup
	lists := make([][]ToolInfo, len(m.servers))
	for i, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lists[i] = m.startOne(ctx, s, writable)
		}()
	}
	wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tools = nil
	for _, l := range lists {
		m.tools = append(m.tools, l...)
	}
	names := map[string]bool{}
	for i, t := range m.tools {
		// Two servers' tools may sanitise to one name: the later gets a
		// number.
		for n := 2; names[t.Name]; n++ {
			t.Name = clip(ToolName(t.Server, t.Tool), 60) + fmt.Sprintf("_%d", n)
		}
		names[t.Name] = true
		m.tools[i] = t
		m.byName[t.Name] = t
	}
}

func (m *Manager) startOne(ctx context.Context, s Server, writable bool) []ToolInfo {
	st := &Status{Name: s.Name, Type: s.Type, Source: s.Source}
	defer func() {
		m.mu.Lock()
		m.status[s.Name] = st
		m.mu.Unlock()
	}()
	if why := m.unavailable(s); why != "" {
		st.State, st.Error = "off", why
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	c, err := m.connect(ctx, s, writable)
	if err != nil {
		st.State, st.Error = "failed", err.Error()
		return nil
	}
	var out []ToolInfo
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			c.close()
			st.State, st.Error = "failed", "listing its tools: "+describe(err, m.logPath(s), m.opts.StartTimeout)
			return nil
		}
		out = append(out, info(s, t))
	}
	m.mu.Lock()
	m.conns[s.Name] = c
	m.mu.Unlock()
	st.State, st.Tools = "connected", len(out)
	return out
}

// unavailable says why s cannot be used here ("" when it can).
func (m *Manager) unavailable(s Server) string {
	switch {
	case s.Remote() && (m.opts.Network == nil || !m.opts.Network()):
		return "a remote server needs a permission profile with the network (this run's has none)"
	case !s.Remote() && m.opts.Launch == nil:
		return "stdio servers cannot be started here"
	}
	return ""
}

func info(s Server, t *sdk.Tool) ToolInfo {
	schema, _ := json.Marshal(t.InputSchema)
	if len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	ti := ToolInfo{Name: ToolName(s.Name, t.Name), Server: s.Name, Tool: t.Name, Title: t.Title,
		Description: t.Description, Schema: schema, Policy: s.Policy(t.Name)}
	if a := t.Annotations; a != nil {
		ti.ReadOnly = a.ReadOnlyHint
		ti.Destructive = !a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint
		if ti.Title == "" {
			ti.Title = a.Title
		}
	}
	return ti
}

func (m *Manager) logPath(s Server) string {
	if m.opts.LogDir == "" || s.Remote() {
		return ""
	}
	return filepath.Join(m.opts.LogDir, s.Name+".log")
}

// connect starts or reaches s and opens a session.
func (m *Manager) connect(ctx context.Context, s Server, writable bool) (*conn, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "ultra", Version: firstNonEmpty(m.opts.Version, "dev")}, nil)
	for _, r := range m.opts.Roots {
		client.AddRoots(&sdk.Root{URI: "file://" + r, Name: filepath.Base(r)})
	}
	c := &conn{server: s, writable: writable, rootsRead: make(chan struct{})}
	// A server that works in the roots asks for them as soon as it is
	// initialised, and applies them a moment later: a call must not come
	// before (a relative path would be read against what its arguments
	// named). The manager remembers the servers that ask (rootsFirst).
	var once sync.Once
	client.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if method == "roots/list" {
				once.Do(func() {
					m.mu.Lock()
					m.asksRoots[s.Name] = true
					m.mu.Unlock()
					close(c.rootsRead)
				})
			}
			return res, err
		}
	})
	var t sdk.Transport
	switch s.Type {
	case Stdio:
		cmd, done, err := m.opts.Launch(s, writable)
		if err != nil {
			return nil, fmt.Errorf("starting %s: %w", s.Command, err)
		}
		if p := m.logPath(s); p != "" {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
					c.log, cmd.Stderr = f, f
				}
			}
		}
		c.cmd = cmd
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
		defer done()
	case HTTP:
		t = &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: headerClient(s.Headers), MaxRetries: -1, DisableStandaloneSSE: true}
	case SSE:
		t = &sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: headerClient(s.Headers)}
	}
	// The session outlives ctx (an SSE stream is read as long as the
	// session lives): ctx bounds only the connecting.
	live, stop := context.WithCancel(context.WithoutCancel(ctx))
	c.stop = stop
	type connected struct {
		sess *sdk.ClientSession
		err  error
	}
	ch := make(chan connected, 1)
	go func() {
		sess, err := client.Connect(live, t, nil)
		ch <- connected{sess, err}
	}()
	var got connected
	select {
	case got = <-ch:
	case <-ctx.Done():
		stop()
		got = <-ch
		if got.err == nil {
			got.sess.Close()
		}
		got.err = ctx.Err() // the start's bound, not the connection's own end
	}
	if got.err != nil {
		c.close()
		return nil, errors.New(describe(got.err, m.logPath(s), m.opts.StartTimeout))
	}
	sess := got.sess
	c.session = sess
	return c, nil
}

// rootsFirst holds the first call of a session until its server has read
// the roots, when the server is one that asks for them (it did in this
// session or an earlier one): as long as a start may take, then two
// round trips and rootsSettle for it to apply them.
func (m *Manager) rootsFirst(ctx context.Context, c *conn) {
	m.mu.Lock()
	asks := m.asksRoots[c.server.Name]
	settled := c.rootsSettled
	if asks {
		c.rootsSettled = true // under m.mu: calls of one session may come at once
	}
	m.mu.Unlock()
	if !asks || settled || len(m.opts.Roots) == 0 {
		return
	}
	select {
	case <-c.rootsRead:
		for range 2 {
			_ = c.session.Ping(ctx, nil)
		}
		time.Sleep(rootsSettle)
	case <-time.After(m.opts.StartTimeout):
	case <-ctx.Done():
	}
}

// rootsSettle is how long a server is given to apply the roots it read.
const rootsSettle = 100 * time.Millisecond

func (c *conn) close() {
	if c.stop != nil {
		defer c.stop()
	}
	if c.session != nil {
		done := make(chan struct{})
		go func() { _ = c.session.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
		}
	}
	if c.cmd != nil {
		killGroup(c.cmd)
		if c.cmd.Process != nil {
			// Reap it (the session's close may not have).
			go func(cmd *exec.Cmd) { _, _ = cmd.Process.Wait() }(c.cmd)
		}
	}
	if c.log != nil {
		c.log.Close()
	}
}

// describe turns a connection error into words, with the server's own
// last words when it wrote any.
func describe(err error, log string, bound time.Duration) string {
	msg := err.Error()
	if errors.Is(err, context.DeadlineExceeded) {
		msg = fmt.Sprintf("it did not answer within %s", bound)
	}
	if log != "" {
		if tail := lastLines(log, 3); tail != "" {
			msg += " (its stderr: " + tail + ")"
		}
	}
	return msg
}

func lastLines(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return clip(strings.Join(lines, " | "), 400)
}

type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

func headerClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: headerTransport{headers: headers, base: http.DefaultTransport}}
}

// Tools lists the tools of the connected servers, in server order.
func (m *Manager) Tools() []ToolInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.tools)
}

// Tool is the tool ultra offers as name.
func (m *Manager) Tool(name string) (ToolInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.byName[name]
	return t, ok
}

// Statuses says what each server is doing, by name.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.status))
	for _, s := range m.status {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Close ends every session and kills every server it started.
func (m *Manager) Close() {
	m.mu.Lock()
	conns := m.conns
	m.conns = map[string]*conn{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.close() }()
	}
	wg.Wait()
}

// Call runs tool name (mcp__SERVER__TOOL) with args, bounded by its
// server's timeout. writable says whether the run's tree may be written
// now: a stdio server started under the other answer is started again
// under this one. Every failure (a server that crashed, hung or answered
// garbage) comes back as an error result for the model.
func (m *Manager) Call(ctx context.Context, name string, args json.RawMessage, writable bool) Result {
	t, ok := m.Tool(name)
	if !ok {
		return errResult(fmt.Sprintf("unknown MCP tool %q", name))
	}
	var s Server
	for _, x := range m.servers {
		if x.Name == t.Server {
			s = x
		}
	}
	var a map[string]any
	if len(strings.TrimSpace(string(args))) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return Result{IsError: true, Malformed: true, Text: fmt.Sprintf("invalid arguments for %s: send a JSON object (%v)", name, err)}
		}
	}
	if a == nil {
		a = map[string]any{}
	}
	c, err := m.session(ctx, s, writable)
	if err != nil {
		return errResult(fmt.Sprintf("MCP server %q is not available: %v", s.Name, err))
	}
	m.rootsFirst(ctx, c)
	cctx, cancel := context.WithTimeout(ctx, s.CallTimeout())
	defer cancel()
	res, err := c.session.CallTool(cctx, &sdk.CallToolParams{Name: t.Tool, Arguments: a})
	if err != nil {
		why := describe(err, m.logPath(s), s.CallTimeout())
		switch {
		case ctx.Err() != nil:
			return errResult("the call was interrupted")
		case cctx.Err() != nil:
			why = fmt.Sprintf("it did not answer within %s", s.CallTimeout())
		}
		// A hung or broken server is not trusted with the next call:
		// it starts again.
		m.drop(s.Name, c)
		return errResult(fmt.Sprintf("MCP server %q failed on %s: %s (it is started again on the next call)", s.Name, t.Tool, why))
	}
	return convert(res)
}

// session is s's live session under writable, started (again) when it
// has none, or one under the other answer, or one whose server exited.
func (m *Manager) session(ctx context.Context, s Server, writable bool) (*conn, error) {
	m.mu.Lock()
	c := m.conns[s.Name]
	m.mu.Unlock()
	if c != nil && (s.Remote() || c.writable == writable) && !c.exited() {
		return c, nil
	}
	if c != nil {
		m.drop(s.Name, c)
	}
	if why := m.unavailable(s); why != "" {
		return nil, errors.New(why)
	}
	sctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	c, err := m.connect(sctx, s, writable)
	if err != nil {
		m.setState(s.Name, "failed", err.Error())
		return nil, err
	}
	m.mu.Lock()
	m.conns[s.Name] = c
	m.mu.Unlock()
	m.setState(s.Name, "connected", "")
	return c, nil
}

func (c *conn) exited() bool {
	return c.cmd != nil && c.cmd.ProcessState != nil
}

func (m *Manager) drop(name string, c *conn) {
	m.mu.Lock()
	if m.conns[name] == c {
		delete(m.conns, name)
	}
	m.mu.Unlock()
	c.close()
}

func (m *Manager) setState(name, state, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.status[name]; st != nil {
		st.State, st.Error = state, why
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
