package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/mcp/mcptest"
)

// plain starts stdio servers as they are (the agent's tests contain them).
func plain(s Server, _ bool) (*exec.Cmd, func(), error) {
	cmd := exec.Command(s.Command, s.Args...)
	return cmd, func() {}, nil
}

func everything(t *testing.T) *Manager {
	node, script := mcptest.Script(t, "server-everything")
	m := NewManager([]Server{{Name: "everything", Type: Stdio, Command: node, Args: []string{script, "stdio"}, Source: "test"}},
		Options{Launch: plain, LogDir: t.TempDir()})
	t.Cleanup(m.Close)
	m.Start(context.Background(), true)
	return m
}

func TestEverythingStdio(t *testing.T) {
	m := everything(t)
	st := m.Statuses()
	if len(st) != 1 || st[0].State != "connected" || st[0].Tools == 0 {
		t.Fatalf("statuses %+v", st)
	}
	var names []string
	for _, ti := range m.Tools() {
		names = append(names, ti.Name)
	}
	t.Logf("tools: %s", strings.Join(names, " "))
	echo, ok := m.Tool("mcp__everything__echo")
	if !ok || !json.Valid(echo.Schema) {
		t.Fatalf("no echo tool among %v", names)
	}
	res := m.Call(context.Background(), "mcp__everything__echo", json.RawMessage(`{"message":"hello from ultra"}`), true)
	if res.IsError || !strings.Contains(res.Text, "hello from ultra") {
		t.Fatalf("echo: %+v", res)
	}
	bad := m.Call(context.Background(), "mcp__everything__echo", json.RawMessage(`{"message":`), true)
	if !bad.IsError || !bad.Malformed {
		t.Fatalf("malformed arguments: %+v", bad)
	}
}

// A server that works in the roots is given the run's tree, and its
// first call comes after it applied them: a relative path is read
// against the tree, not against what its arguments named.
func TestRootsAreTheRunsTree(t *testing.T) {
	node, fs := mcptest.Script(t, "server-filesystem")
	root := t.TempDir()
	m := NewManager([]Server{{Name: "fs", Type: Stdio, Command: node, Args: []string{fs, "/"}}}, Options{Launch: plain, Roots: []string{root}})
	t.Cleanup(m.Close)
	m.Start(context.Background(), true)
	r := m.Call(context.Background(), "mcp__fs__list_allowed_directories", nil, true)
	if r.IsError || !strings.Contains(r.Text, root) || strings.Contains(r.Text, "\n/\n") {
		t.Fatalf("allowed directories: %+v", r)
	}
	if r := m.Call(context.Background(), "mcp__fs__write_file", json.RawMessage(`{"path":"rel.txt","content":"x"}`), true); r.IsError {
		t.Fatalf("write_file: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(root, "rel.txt")); err != nil || string(b) != "x" {
		t.Fatalf("rel.txt in the root: %q, %v", b, err)
	}
}
