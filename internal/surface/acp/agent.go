// Package acp is ultra's Agent Client Protocol agent (ultra acp): an
// editor (Zed, JetBrains, a Neovim plugin) drives ultra over stdio. Like
// every surface it reads the one event stream of the repository's store
// and acts only by running ultra's own commands, each in its own
// process: a prompt starts or continues a run, an answer to a permission
// request is ultra approve, a slash command is the command table's argv.
// Work modes are ACP session modes; the other axes are session config
// options. The translation of events into session updates (Fold) is pure.
package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/ultra-dev/ultra/internal/event"
	"path/filepath"
	"slices"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/store"
)

// Backend is what the agent reads and does outside itself for one
// repository (procs.Processes): its store, and ultra's commands.
type Backend interface {
	Row(ctx context.Context, id string) (*store.Run, error)
	EventsAfter(ctx context.Context, id string, seq int64, limit int) ([]store.StoredEvent, error)
	// Exec runs `ultra ARGS` to its end: what it printed, its exit code.
	Exec(ctx context.Context, args []string) (string, int)
	// Start runs `ultra ARGS`, a command that starts or continues a run,
	// and returns once the run is known, with a wait for its end.
	Start(ctx context.Context, args []string) (run string, wait func() (string, int), err error)
}

// Project is one repository a session works in.
type Project struct {
	Backend Backend
	Root    string
	// State is a directory private to ultra (in .ultra/state) for the
	// agent's files: its sessions and the editor's MCP servers.
	State string
	Close func()
}

// Options configure the agent.
type Options struct {
	// Open opens the repository of a session's working directory.
	Open func(cwd string) (*Project, error)
	// Axes are the axes of a new session's first run.
	Axes axes.Axes
	// Extra are flags for every run a session starts (--provider,
	// --base-url, --model).
	Extra   []string
	Version string
	// Poll is how often a followed run's events are read (default 10 ms).
	Poll time.Duration
}

// Agent is the ACP agent: the editor's sessions, each a chat or a run.
type Agent struct {
	o    Options
	conn *sdk.AgentSideConnection

	mu       sync.Mutex
	sessions map[string]*session
	projects map[string]*Project
}

// New returns an agent; Serve connects it.
func New(o Options) *Agent {
	if o.Poll <= 0 {
		o.Poll = 10 * time.Millisecond
	}
	if o.Axes.Mode == "" {
		o.Axes = axes.Default
	}
	o.Axes.Surface = "rpc"
	return &Agent{o: o, sessions: map[string]*session{}, projects: map[string]*Project{}}
}

// Connect binds the agent to the editor's connection.
func (a *Agent) Connect(c *sdk.AgentSideConnection) { a.conn = c }

// Close closes the repositories' stores.
func (a *Agent) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.projects {
		if p.Close != nil {
			p.Close()
		}
	}
	a.projects = map[string]*Project{}
}

var (
	_ sdk.Agent       = (*Agent)(nil)
	_ sdk.AgentLoader = (*Agent)(nil)
)

func (a *Agent) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersion(sdk.ProtocolVersionNumber),
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession: true,
			// Embedded context (a file's text) goes into the task; the
			// command line takes no images, so none are offered.
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
		},
		AgentInfo:   &sdk.Implementation{Name: "ultra", Title: sdk.Ptr("ultra"), Version: a.o.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

func (a *Agent) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// project opens (once) the repository of cwd.
func (a *Agent) project(cwd string) (*Project, error) {
	if !filepath.IsAbs(cwd) {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %q is not an absolute path", cwd)})
	}
	p, err := a.o.Open(filepath.Clean(cwd))
	if err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if have, ok := a.projects[p.Root]; ok {
		if p.Close != nil {
			p.Close()
		}
		return have, nil
	}
	a.projects[p.Root] = p
	return p, nil
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "acp-" + hex.EncodeToString(b)
}

func (a *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	proj, err := a.project(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s := &session{a: a, proj: proj, rec: record{ID: newID(), Cwd: filepath.Clean(p.Cwd), Axes: a.o.Axes}}
	if err := s.setMCP(p.McpServers); err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := s.save(); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a.mu.Lock()
	a.sessions[s.rec.ID] = s
	a.mu.Unlock()
	s.commandsLater()
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(s.rec.ID), Modes: Modes(s.rec.Axes.Mode), ConfigOptions: ConfigOptions(s.rec.Axes)}, nil
}

// LoadSession replays a session's history (every run it had) as
// updates; the id may also be a run's (ultra runs lists them).
func (a *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	proj, err := a.project(p.Cwd)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	rec, err := loadRecord(proj.State, id)
	if err != nil && command.LooksLikeRun(id) {
		row, rerr := proj.Backend.Row(ctx, id)
		if rerr != nil {
			return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": rerr.Error()})
		}
		rec, err = record{ID: id, Cwd: filepath.Clean(p.Cwd), Axes: row.Axes, Run: row.ID, Runs: []string{row.ID}}, nil
	}
	if err != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s := &session{a: a, proj: proj, rec: rec}
	if len(p.McpServers) > 0 {
		if err := s.setMCP(p.McpServers); err != nil {
			return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
	}
	if err := s.replay(ctx); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if err := s.save(); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	a.mu.Lock()
	a.sessions[id] = s
	a.mu.Unlock()
	s.commandsLater()
	ax := s.axes()
	return sdk.LoadSessionResponse{Modes: Modes(ax.Mode), ConfigOptions: ConfigOptions(ax)}, nil
}

func (a *Agent) session(id sdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[string(id)]
	if !ok {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no session %q (session/new or session/load first)", event.Truncate(string(id), 80))})
	}
	return s, nil
}

func (a *Agent) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	mode := string(p.ModeId)
	if !slices.Contains(axes.Values[axes.Mode], mode) {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%q is not a work mode (%v)", mode, axes.Values[axes.Mode])})
	}
	return sdk.SetSessionModeResponse{}, s.setAxis(ctx, axes.Mode, mode)
}

func (a *Agent) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if p.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "ultra's config options take a value, not a boolean"})
	}
	s, err := a.session(p.ValueId.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	axis, err := configAxis(string(p.ValueId.ConfigId), string(p.ValueId.Value))
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := s.setAxis(ctx, axis, string(p.ValueId.Value)); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: ConfigOptions(s.axes())}, nil
}

// Cancel: the connection cancels the prompt's context, and the prompt
// pauses its run at the next safe point (follow).
func (a *Agent) Cancel(ctx context.Context, p sdk.CancelNotification) error { return nil }

func (a *Agent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound("session/list")
}

func (a *Agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound("session/resume")
}

func (a *Agent) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, sdk.NewMethodNotFound("session/close")
}

// send sends one update of session id; an editor that went away ends
// nothing here (the runs go on).
func (a *Agent) send(ctx context.Context, id string, u sdk.SessionUpdate) {
	if a.conn == nil {
		return
	}
	if ctx.Err() != nil {
		ctx = context.Background()
	}
	_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u})
}

var errBusy = errors.New("the session has a prompt in progress")
