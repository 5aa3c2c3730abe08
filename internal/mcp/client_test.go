package mcp

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/mcp/mcptest"
)

// plain starts stdio servers as they are (the agent's tests contain them).
func plain(s Server, _ bool) (*exec.Cmd, func(), error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
	m.Start(context.Background(), false)
	for i := 0; ; i++ {
		m.mu.Lock()
		asked := m.asksRoots["fs"]
		m.mu.Unlock()
		if asked {
			break
		}
		if i == 200 {
			t.Fatal("the filesystem server never asked for the roots")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The call wants the tree writable: the server starts again, and its
	// first call waits until it has read the roots.
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

// A server that crashed, hung or answers garbage becomes an error the
// model reads, never a crash or a hang; the next call starts it again.
func TestBrokenServers(t *testing.T) {
	node, script := mcptest.Script(t, "server-everything")
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.sh")
	if err := os.WriteFile(garbage, []byte("#!/bin/sh\necho 'this is not JSON-RPC'\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := NewManager([]Server{
		{Name: "everything", Type: Stdio, Command: node, Args: []string{script, "stdio"}, Timeout: time.Second},
		{Name: "garbage", Type: Stdio, Command: garbage},
		{Name: "missing", Type: Stdio, Command: filepath.Join(dir, "nothing-here")},
	}, Options{Launch: plain, StartTimeout: 2 * time.Second, LogDir: dir})
	t.Cleanup(m.Close)
	start := time.Now()
	m.Start(context.Background(), true)
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("starting took %s", took)
	}
	states := map[string]Status{}
	for _, s := range m.Statuses() {
		states[s.Name] = s
	}
	if states["everything"].State != "connected" || states["garbage"].State != "failed" || states["missing"].State != "failed" {
		t.Fatalf("statuses: %+v", states)
	}
	// Hung: the call's timeout ends it, and the server starts again.
	hung := m.Call(context.Background(), "mcp__everything__trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":3}`), true)
	if !hung.IsError || !strings.Contains(hung.Text, "did not answer within 1s") {
		t.Fatalf("a hung call: %+v", hung)
	}
	if r := m.Call(context.Background(), "mcp__everything__echo", json.RawMessage(`{"message":"again"}`), true); r.IsError || !strings.Contains(r.Text, "again") {
		t.Fatalf("the call after a hang: %+v", r)
	}
	// Crashed: its process killed under it.
	m.mu.Lock()
	c := m.conns["everything"]
	m.mu.Unlock()
	killGroup(c.cmd)
	time.Sleep(200 * time.Millisecond)
	r := m.Call(context.Background(), "mcp__everything__echo", json.RawMessage(`{"message":"after the crash"}`), true)
	if r.IsError && !strings.Contains(r.Text, "started again on the next call") {
		t.Fatalf("the call after a crash: %+v", r)
	}
	if r := m.Call(context.Background(), "mcp__everything__echo", json.RawMessage(`{"message":"later"}`), true); r.IsError {
		t.Fatalf("a later call: %+v", r)
	}
	// The server's images become a line, their bytes kept aside.
	img := m.Call(context.Background(), "mcp__everything__get-tiny-image", nil, true)
	if img.IsError || len(img.Images) == 0 || !strings.Contains(img.Text, "[image image/png") {
		t.Fatalf("an image result: %+v", img.Text)
	}
}

// startRemote starts server-everything on transport (streamableHttp or
// sse) on a free port and returns its base address.
func startRemote(t *testing.T, transport string) string {
	t.Helper()
	node, script := mcptest.Script(t, "server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := exec.Command(node, script, transport)
	srv.Env = append(os.Environ(), "PORT="+addr[strings.LastIndexByte(addr, ':')+1:])
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "http://" + addr
}

// Remote servers, over streamable HTTP and SSE, are reached only when
// the network is allowed.
func TestRemoteServers(t *testing.T) {
	for _, c := range []struct{ typ, transport, path string }{{HTTP, "streamableHttp", "/mcp"}, {SSE, "sse", "/sse"}} {
		t.Run(c.typ, func(t *testing.T) {
			servers := []Server{{Name: "remote", Type: c.typ, URL: startRemote(t, c.transport) + c.path, Headers: map[string]string{"X-Test": "1"}}}
			off := NewManager(servers, Options{Network: func() bool { return false }})
			off.Start(context.Background(), false)
			if st := off.Statuses()[0]; st.State != "off" || !strings.Contains(st.Error, "needs a permission profile with the network") {
				t.Fatalf("without the network: %+v", st)
			}
			on := NewManager(servers, Options{Network: func() bool { return true }})
			t.Cleanup(on.Close)
			on.Start(context.Background(), false)
			if st := on.Statuses()[0]; st.State != "connected" {
				t.Fatalf("with the network: %+v", st)
			}
			if r := on.Call(context.Background(), "mcp__remote__echo", json.RawMessage(`{"message":"over the network"}`), false); r.IsError || !strings.Contains(r.Text, "over the network") {
				t.Fatalf("echo: %+v", r)
			}
		})
	}
}
