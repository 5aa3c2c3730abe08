package mcp

import (
	"slices"
	"testing"
)

func TestNPX(t *testing.T) {
	for _, c := range []struct {
		command string
		args    []string
		want    *Package
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, &Package{Spec: "@modelcontextprotocol/server-memory", Name: "@modelcontextprotocol/server-memory"}},
		{"/usr/bin/npx", []string{"--yes", "@upstash/context7-mcp@1.0.3", "--api-key", "k"}, &Package{Spec: "@upstash/context7-mcp@1.0.3", Name: "@upstash/context7-mcp", Args: []string{"--api-key", "k"}}},
		{"npx", []string{"-y", "mcp-remote@latest", "https://x.example/mcp"}, &Package{Spec: "mcp-remote@latest", Name: "mcp-remote", Args: []string{"https://x.example/mcp"}}},
		{"npx", []string{"-y", "-p", "@a/b@2", "b-cli", "serve"}, &Package{Spec: "@a/b@2", Name: "@a/b", Bin: "b-cli", Args: []string{"serve"}}},
		{"npx", []string{"--package=tool", "--", "tool-bin", "-x"}, &Package{Spec: "tool", Name: "tool", Bin: "tool-bin", Args: []string{"-x"}}},
		{"npx", []string{"-y", "./local/server"}, nil},
		{"npx", []string{"-y", "github:owner/repo"}, nil},
		{"npx", []string{"owner/repo"}, nil},
		{"npx", []string{"-y", "foo@/abs/dir"}, nil},
		{"npx", []string{"-y", "foo@~/x"}, nil},
		{"npx", []string{"-y", "foo@../../x"}, nil},
		{"npx", []string{"-y", "foo@user/repo"}, nil},
		{"npx", []string{"-y", "@s/foo@git+ssh://x"}, nil},
		{"npx", []string{"-y", "foo@^1.2.0"}, &Package{Spec: "foo@^1.2.0", Name: "foo"}},
		{"npx", []string{"-y", "foo@~1.2"}, &Package{Spec: "foo@~1.2", Name: "foo"}},
		{"npx", []string{"-c", "server --x"}, nil},
		{"npx", []string{"-y"}, nil},
		{"node", []string{"server.js"}, nil},
	} {
		got, ok := NPX(Server{Type: Stdio, Command: c.command, Args: c.args})
		if c.want == nil {
			if ok {
				t.Errorf("NPX(%s %q) = %+v, want none", c.command, c.args, got)
			}
			continue
		}
		if !ok || got.Spec != c.want.Spec || got.Name != c.want.Name || got.Bin != c.want.Bin || !slices.Equal(got.Args, c.want.Args) {
			t.Errorf("NPX(%s %q) = %+v %v, want %+v", c.command, c.args, got, ok, *c.want)
		}
	}
}

func TestBinOf(t *testing.T) {
	for _, c := range []struct {
		name, want string
		bin        any
		out        string
	}{
		{"@modelcontextprotocol/server-memory", "", map[string]any{"mcp-server-memory": "dist/index.js"}, "dist/index.js"},
		{"tool", "", "cli.js", "cli.js"},
		{"@a/tool", "", map[string]any{"tool": "a.js", "other": "b.js"}, "a.js"},
		{"@a/tool", "other", map[string]any{"tool": "a.js", "other": "b.js"}, "b.js"},
		{"@a/tool", "", map[string]any{"x": "a.js", "y": "b.js"}, ""},
		{"tool", "", nil, ""},
	} {
		got, ok := BinOf(c.name, c.want, c.bin)
		if got != c.out || ok != (c.out != "") {
			t.Errorf("BinOf(%q, %q, %v) = %q %v, want %q", c.name, c.want, c.bin, got, ok, c.out)
		}
	}
}
