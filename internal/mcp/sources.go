package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ultra-dev/ultra/internal/jsonpos"
)

// Claude Code keeps the servers a person added with `claude mcp add` in
// ~/.claude.json: user-scoped ones at its top, local-scoped ones under
// the project's path, with the .mcp.json servers the person turned off
// there.

// ClaudeJSON is what ~/.claude.json says of MCP for the project at root.
type ClaudeJSON struct {
	User, Local map[string]Entry
	// Disabled are the project's .mcp.json servers the person turned off.
	Disabled []string
}

// ParseClaudeJSON reads ~/.claude.json's text for the project at root.
// Its other keys (history, settings of Claude Code's own) are left alone.
func ParseClaudeJSON(path string, data []byte, root string) (ClaudeJSON, error) {
	var doc struct {
		Servers  map[string]json.RawMessage `json:"mcpServers"`
		Projects map[string]struct {
			Servers  map[string]json.RawMessage `json:"mcpServers"`
			Disabled []string                   `json:"disabledMcpjsonServers"`
		} `json:"projects"`
	}
	var out ClaudeJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return out, jsonpos.Error(path, data, err)
	}
	var err error
	if out.User, err = entries(path, data, doc.Servers); err != nil {
		return out, err
	}
	if p, ok := doc.Projects[root]; ok {
		out.Disabled = p.Disabled
		if out.Local, err = entries(path, data, p.Servers); err != nil {
			return out, err
		}
	}
	return out, nil
}

// entries decodes servers in .mcp.json's shape; an error names the
// file, the server's line and the server.
func entries(path string, data []byte, raw map[string]json.RawMessage) (map[string]Entry, error) {
	out := map[string]Entry{}
	for name, r := range raw {
		var e Entry
		d := json.NewDecoder(bytes.NewReader(r))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s:%d: server %q: %s", path, lineOfKey(data, name), name, jsonErrText(err))
		}
		out[name] = e
	}
	return out, nil
}

// openCodeEntry is one server of opencode's configuration ("mcp").
type openCodeEntry struct {
	Type        string            `json:"type"` // local or remote
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers"`
	Enabled     *bool             `json:"enabled"`
	Timeout     json.Number       `json:"timeout"` // milliseconds
	OAuth       json.RawMessage   `json:"oauth"`
}

// openCodeVar is opencode's {env:NAME}, which ultra reads as ${NAME}.
var openCodeVar = regexp.MustCompile(`\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// ParseOpenCode reads the MCP servers of an opencode.json (or .jsonc)
// text: {"mcp": {NAME: {"type": "local", "command": [...], "environment":
// {...}} | {"type": "remote", "url": ..., "headers": {...}}}}. A server
// turned off ("enabled": false) is left out; {env:VAR} is ${VAR}.
func ParseOpenCode(path string, data []byte) (map[string]Entry, error) {
	clean := StripJSONC(data)
	var doc struct {
		MCP map[string]json.RawMessage `json:"mcp"`
	}
	if err := json.Unmarshal(clean, &doc); err != nil {
		return nil, jsonpos.Error(path, clean, err)
	}
	names := make([]string, 0, len(doc.MCP))
	for n := range doc.MCP {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]Entry{}
	for _, name := range names {
		var o openCodeEntry
		if err := json.Unmarshal(doc.MCP[name], &o); err != nil {
			return nil, fmt.Errorf("%s:%d: server %q: %s", path, lineOfKey(clean, name), name, jsonErrText(err))
		}
		if o.Enabled != nil && !*o.Enabled {
			continue
		}
		at := fmt.Sprintf("%s:%d: server %q", path, lineOfKey(clean, name), name)
		env := func(m map[string]string) map[string]string {
			if len(m) == 0 {
				return nil
			}
			x := map[string]string{}
			for k, v := range m {
				x[k] = openCodeVar.ReplaceAllString(v, "$${$1}")
			}
			return x
		}
		var e Entry
		switch o.Type {
		case "local", "":
			if len(o.Command) == 0 {
				return nil, fmt.Errorf("%s: a local server needs \"command\": [program, args…]", at)
			}
			e = Entry{Type: Stdio, Command: o.Command[0], Args: o.Command[1:], Env: env(o.Environment)}
		case "remote":
			if len(o.OAuth) > 0 && string(o.OAuth) != "false" {
				return nil, fmt.Errorf("%s: OAuth is not supported: give the token in \"headers\" ({env:VAR})", at)
			}
			e = Entry{Type: HTTP, URL: o.URL, Headers: env(o.Headers)}
		default:
			return nil, fmt.Errorf("%s: unknown type %q (local or remote)", at, o.Type)
		}
		for i, a := range e.Args {
			e.Args[i] = openCodeVar.ReplaceAllString(a, "$${$1}")
		}
		e.Command = openCodeVar.ReplaceAllString(e.Command, "$${$1}")
		e.URL = openCodeVar.ReplaceAllString(e.URL, "$${$1}")
		if ms, err := o.Timeout.Int64(); err == nil && ms > 0 {
			e.Timeout = fmt.Sprintf("%dms", ms)
		}
		out[name] = e
	}
	return out, nil
}

// StripJSONC is JSON with comments (// and /* */) and trailing commas
// blanked out, byte for byte, so lines and columns stay where they were.
func StripJSONC(data []byte) []byte {
	out := bytes.Clone(data)
	outside(out, func(i int) int {
		switch {
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
			return i
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			end := len(out)
			if j := bytes.Index(out[i+2:], []byte("*/")); j >= 0 {
				end = i + 2 + j + 2
			}
			for ; i < end; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			return i
		}
		return i + 1
	})
	outside(out, func(i int) int {
		if out[i] == ',' {
			j := i + 1
			for j < len(out) && strings.IndexByte(" \t\r\n", out[j]) >= 0 {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
		return i + 1
	})
	return out
}

// outside calls at with each index of data outside its strings; at
// returns the index to go on from.
func outside(data []byte, at func(i int) int) {
	for i := 0; i < len(data); {
		if data[i] == '"' {
			i++
			for i < len(data) && data[i] != '"' {
				if data[i] == '\\' {
					i++
				}
				i++
			}
			i++
			continue
		}
		i = at(i)
	}
}
