package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/tool"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/mcp"
)

// record is what a session keeps between editor connections, in the
// repository's private state: its runs, the next run's axes and model,
// the editor's MCP servers, and the tools it refuses.
type record struct {
	ID     string    `json:"id"`
	Cwd    string    `json:"cwd"`
	Axes   axes.Axes `json:"axes"` // the next run's
	Model  string    `json:"model,omitempty"`
	Run    string    `json:"run,omitempty"` // the run the session shows
	Runs   []string  `json:"runs,omitempty"`
	MCP    string    `json:"mcp,omitempty"` // the editor's servers, a .mcp.json-shaped file
	Denied []string  `json:"denied,omitempty"`
}

// session is one editor session: a chat or a run at a time.
type session struct {
	a    *Agent
	proj *Project

	mu   sync.Mutex
	rec  record
	fold *Fold // of rec.Run
	busy bool
	// carryFailed: a command carrying out a person's answer failed (the
	// turn ends with what it said).
	carryFailed atomic.Bool
}

var sessionID = regexp.MustCompile(`^acp-[0-9a-f]{16}$`)

func recordPath(state, id string) string { return filepath.Join(state, "acp", "sessions", id+".json") }

// loadRecord reads session id's record.
func loadRecord(state, id string) (record, error) {
	var r record
	if !sessionID.MatchString(id) {
		return r, fmt.Errorf("no session %q: a session id is acp-<16 hex digits>, or a run's id", event.Truncate(id, 80))
	}
	b, err := os.ReadFile(recordPath(state, id))
	if err != nil {
		return r, fmt.Errorf("no session %q here: %v", event.Truncate(id, 80), err)
	}
	if err := json.Unmarshal(b, &r); err != nil || r.ID != id {
		return r, fmt.Errorf("session %q: its record is damaged (%v)", id, err)
	}
	if r.Axes, err = r.Axes.Normalize(); err != nil {
		return r, fmt.Errorf("session %q: %v", id, err)
	}
	return r, nil
}

// writePrivate writes a file only its owner reads, never through a link.
func writePrivate(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// The folders are ultra's (a repository can commit a link in their
	// place): never write where one points.
	for d := filepath.Dir(path); d != filepath.Dir(filepath.Dir(filepath.Dir(path))); d = filepath.Dir(d) {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is not a folder of ultra's state (a link?): remove it", d)
		}
	}
	return tool.ReplaceFile(path, data, 0o600)
}

// save writes the session's record (a session id only ultra made: the
// path is never the editor's to choose).
func (s *session) save() error {
	if !sessionID.MatchString(s.rec.ID) {
		return nil // a run loaded by its id keeps no record
	}
	b, _ := json.MarshalIndent(s.rec, "", "  ")
	return writePrivate(recordPath(s.proj.State, s.rec.ID), b)
}

// MCPConfig is the editor's MCP servers as a .mcp.json file's text (the
// shape ultra run --mcp-config reads), checked as ultra checks that
// file: names, types, commands and addresses.
func MCPConfig(servers []sdk.McpServer) ([]byte, error) {
	doc := map[string]map[string]mcp.Entry{"mcpServers": {}}
	add := func(name string, e mcp.Entry) error {
		if _, dup := doc["mcpServers"][name]; dup {
			return fmt.Errorf("MCP server %q is given twice", name)
		}
		doc["mcpServers"][name] = e
		return nil
	}
	headers := func(hs []sdk.HttpHeader) map[string]string {
		if len(hs) == 0 {
			return nil
		}
		m := map[string]string{}
		for _, h := range hs {
			m[h.Name] = h.Value
		}
		return m
	}
	for _, sv := range servers {
		var err error
		switch {
		case sv.Stdio != nil:
			env := map[string]string{}
			for _, v := range sv.Stdio.Env {
				env[v.Name] = v.Value
			}
			if len(env) == 0 {
				env = nil
			}
			err = add(sv.Stdio.Name, mcp.Entry{Type: mcp.Stdio, Command: sv.Stdio.Command, Args: sv.Stdio.Args, Env: env})
		case sv.Http != nil:
			err = add(sv.Http.Name, mcp.Entry{Type: mcp.HTTP, URL: sv.Http.Url, Headers: headers(sv.Http.Headers)})
		case sv.Sse != nil:
			err = add(sv.Sse.Name, mcp.Entry{Type: mcp.SSE, URL: sv.Sse.Url, Headers: headers(sv.Sse.Headers)})
		case sv.Acp != nil:
			err = fmt.Errorf("MCP server %q: servers over ACP are not supported (give a stdio or http server)", sv.Acp.Name)
		default:
			err = fmt.Errorf("an MCP server of no known type (stdio, http or sse)")
		}
		if err != nil {
			return nil, err
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	// The same checks a run makes of the file: a repository's .mcp.json
	// (Project), so ${VAR} names no credential of the person's.
	entries, err := mcp.ParseClaude("the editor's MCP servers", b)
	if err == nil {
		none := func(string) (string, bool) { return "", true }
		_, err = mcp.Resolve([]mcp.Source{{Path: "the editor's MCP servers", Entries: entries, Text: b, Project: true}}, none, nil)
	}
	return b, err
}

// setMCP keeps the editor's servers in a file of ultra's state, which
// the session's runs read with --mcp-config.
func (s *session) setMCP(servers []sdk.McpServer) error {
	if len(servers) == 0 {
		s.rec.MCP = ""
		return nil
	}
	b, err := MCPConfig(servers)
	if err != nil {
		return err
	}
	path := filepath.Join(s.proj.State, "acp", "mcp", s.rec.ID+".json")
	if !sessionID.MatchString(s.rec.ID) {
		path = filepath.Join(s.proj.State, "acp", "mcp", "run-"+s.rec.ID+".json")
	}
	if err := writePrivate(path, b); err != nil {
		return err
	}
	s.rec.MCP = path
	return nil
}

// takesRunFlags are the commands that start or continue a run, which
// take --mcp-config.
var takesRunFlags = []string{"run", "plan", "chat", "research", "resume", "approve", "next", "repair", "review"}

// withMCP adds the editor's servers to argv of a command that drives a
// run.
func (s *session) withMCP(argv []string) []string {
	if s.rec.MCP == "" || len(argv) == 0 || !slices.Contains(takesRunFlags, argv[0]) {
		return argv
	}
	out := append([]string{argv[0], "--mcp-config", s.rec.MCP}, argv[1:]...)
	return out
}

// axes are the session's axes: its run's while it works or waits, else
// the next run's.
func (s *session) axes() axes.Axes {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fold != nil && s.fold.Axes.Mode != "" && s.rec.Run != "" {
		if row, err := s.proj.Backend.Row(context.Background(), s.rec.Run); err == nil && onRun(row.Status) {
			return s.fold.Axes
		}
	}
	return s.rec.Axes
}

// onRun says axis changes and typed text act on the session's run in
// this status (it works, or waits to be resumed), not on the next run.
func onRun(status string) bool { return status == "running" || resumable(status) }

// resumable says a person's message continues a run in this status.
func resumable(status string) bool {
	switch status {
	case "paused", "stopped", "escalated", "interrupted", "failed", "budget_exhausted", "needs_approval":
		return true
	}
	return false
}

// setAxis sets one axis: of the session's run with ultra steer when it
// works or waits, else of its next run.
func (s *session) setAxis(ctx context.Context, axis, value string) error {
	run := s.currentRun()
	if run != "" {
		row, err := s.proj.Backend.Row(ctx, run)
		if err == nil && onRun(row.Status) {
			name := map[string]string{axes.Mode: "mode", axes.Control: "control", axes.Permission: "permission-profile", axes.ModelMode: "model-mode"}[axis]
			argv, err := argvOf(name, run, []string{value}, map[string]string{"reason": "set in the editor"})
			if err != nil {
				return err
			}
			if out, code := s.proj.Backend.Exec(ctx, argv); code != 0 {
				return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("ultra %s: %s", strings.Join(argv, " "), strings.TrimSpace(out))})
			}
			return nil
		}
	}
	s.mu.Lock()
	next, err := s.rec.Axes.Set(axis, value)
	if err == nil {
		s.rec.Axes = next
	}
	s.mu.Unlock()
	if err != nil {
		return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return s.save()
}

func (s *session) currentRun() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Run
}

// show makes run the session's run.
func (s *session) show(run string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec.Run != run || s.fold == nil {
		s.fold = &Fold{Run: run}
	}
	s.rec.Run = run
	if !slices.Contains(s.rec.Runs, run) {
		s.rec.Runs = append(s.rec.Runs, run)
	}
}

// commandsLater sends the slash commands once the editor has the
// session's id (the response to session/new goes first).
func (s *session) commandsLater() {
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.a.send(context.Background(), s.rec.ID, sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: Commands()}})
	}()
}

// replay sends the history of every run of the session.
func (s *session) replay(ctx context.Context) error {
	for _, run := range s.rec.Runs {
		f := &Fold{Run: run, Replay: true}
		if err := s.drain(ctx, f); err != nil {
			return err
		}
		f.Replay = false
		if run == s.rec.Run {
			s.fold = f
		}
		s.sendPlan(ctx, f)
	}
	return nil
}

// drain sends every event of f's run after f.Seq.
func (s *session) drain(ctx context.Context, f *Fold) error {
	for {
		evs, err := s.proj.Backend.EventsAfter(ctx, f.Run, f.Seq, 1000)
		if err != nil {
			return err
		}
		for _, e := range evs {
			for _, u := range f.Updates(e) {
				s.a.send(ctx, s.rec.ID, u)
			}
		}
		if len(evs) < 1000 {
			return nil
		}
	}
}
