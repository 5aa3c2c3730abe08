// Package mcp is ultra's Model Context Protocol client: the servers a
// person configured (Claude Code's .mcp.json, ultra's own config), their
// tools offered to the model as mcp__SERVER__TOOL, and their calls, each
// bounded in time and size. Stdio servers run in the run's sandbox: the
// package starts them through a wrapper it is given and never decides
// containment itself.
package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
)

// Server types.
const (
	Stdio = "stdio"
	HTTP  = "http"
	SSE   = "sse"
)

// Tool policies a person sets per tool (Server.Tools).
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// DefaultTimeout bounds one call of a server's tool.
const DefaultTimeout = 60 * time.Second

// Server is one configured server, its variables expanded.
type Server struct {
	Name    string            `json:"name"`
	Type    string            `json:"type"` // stdio, http or sse
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"-"` // may hold secrets: never printed
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"-"`
	// Timeout bounds one call (0: DefaultTimeout).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Tools is the person's policy per tool name ("*": every other
	// tool): allow, ask or deny.
	Tools map[string]string `json:"tools,omitempty"`
	// Source is the file that defined it, for messages.
	Source string `json:"source"`
}

// CallTimeout is how long one call may take.
func (s Server) CallTimeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// Policy is the person's word on tool (one of the server's own names):
// allow, ask, deny, or "" when they said nothing.
func (s Server) Policy(tool string) string {
	if p, ok := s.Tools[tool]; ok {
		return p
	}
	return s.Tools["*"]
}

// Remote says the server is reached over the network.
func (s Server) Remote() bool { return s.Type == HTTP || s.Type == SSE }

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$`)

// Entry is one server as a file gives it, before expansion: Claude
// Code's .mcp.json shape, which ultra's TOML shares.
type Entry struct {
	Type    string            `json:"type" toml:"type"`
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env" toml:"env"`
	URL     string            `json:"url" toml:"url"`
	Headers map[string]string `json:"headers" toml:"headers"`
	// Timeout and Tools are ultra's (TOML only).
	Timeout string            `json:"-" toml:"timeout"`
	Tools   map[string]string `json:"-" toml:"tools"`
}

// policyOnly says the entry names no server, only a policy for one
// another file defines.
func (e Entry) policyOnly() bool {
	return e.Type == "" && e.Command == "" && e.URL == "" && len(e.Args) == 0 && len(e.Env) == 0 && len(e.Headers) == 0
}

// ParseClaude reads a .mcp.json file's text: {"mcpServers": {NAME:
// entry}}. Errors name the file, the line and the server.
func ParseClaude(path string, data []byte) (map[string]Entry, error) {
	var doc struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s:%d: %s", path, jsonErrLine(data, err), jsonErrText(err))
	}
	if doc.Servers == nil {
		return nil, fmt.Errorf("%s:1: no \"mcpServers\" object (Claude Code's format: {\"mcpServers\": {\"NAME\": {\"command\": …}}})", path)
	}
	return entries(path, data, doc.Servers)
}

// jsonErrLine is the line of a JSON error's offset (1 when it has none).
func jsonErrLine(data []byte, err error) int {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return 1
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

func jsonErrText(err error) string {
	if e, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Sprintf("field %q is a JSON %s where a %s is wanted", e.Field, e.Value, typeWord(e.Type.Kind().String()))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func typeWord(k string) string {
	switch k {
	case "slice":
		return "list"
	case "map", "struct":
		return "object"
	}
	return k
}

// lineOfKey is the first line of data that holds "key" as an object key.
func lineOfKey(data []byte, key string) int {
	q, _ := json.Marshal(key)
	for i, l := range bytes.Split(data, []byte("\n")) {
		if j := bytes.Index(l, q); j >= 0 && bytes.Contains(l[j+len(q):], []byte(":")) {
			return i + 1
		}
	}
	return 1
}

// Source is one file's servers, in the order files are read: later files
// win a name (a policy-only entry adds its policy to the earlier one).
type Source struct {
	Path    string
	Entries map[string]Entry
	// Text is the file's text, for the line of a server in messages.
	Text []byte
	// Project: the file is the repository's (.mcp.json, .ultra/config),
	// not the person's own: it gets their credentials only for servers
	// they trust (Resolve).
	Project bool
}

// at is "path:line" of server name in the source.
func (src Source) at(name string) string {
	if len(src.Text) == 0 {
		return src.Path
	}
	line := 0
	q, _ := json.Marshal(name)
	for i, l := range bytes.Split(src.Text, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if j := bytes.Index(t, q); j >= 0 && bytes.Contains(t[j+len(q):], []byte(":")) ||
			bytes.Contains(t, []byte("servers."+name)) || bytes.Contains(t, []byte("servers."+string(q))) {
			line = i + 1
			break
		}
	}
	if line == 0 {
		return src.Path
	}
	return fmt.Sprintf("%s:%d", src.Path, line)
}

// Resolve merges sources and expands their variables with lookup (os
// environment lookups: ${VAR}, ${VAR:-default}). A variable neither set
// nor defaulted is an error naming the file, server and field. A
// repository's file (Source.Project) may name a credential (a variable
// proc.IsSecret names) only for a server the person trusts (trusted,
// from their own config): a cloned repository must not send the person's
// tokens to a server or an address it chose.
func Resolve(sources []Source, lookup func(string) (string, bool), trusted []string) ([]Server, error) {
	byName := map[string]Server{}
	var untrusted error
	for _, src := range sources {
		names := make([]string, 0, len(src.Entries))
		for n := range src.Entries {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			e := src.Entries[name]
			if !serverName.MatchString(name) {
				return nil, fmt.Errorf("%s: server name %q: use letters, digits, '.', '_' or '-' (at most 48)", src.at(name), name)
			}
			at := src.at(name)
			pol, err := policies(at, name, e.Tools)
			if err != nil {
				return nil, err
			}
			if e.policyOnly() {
				prev, ok := byName[name]
				if !ok {
					return nil, fmt.Errorf("%s: server %q sets only a policy (tools, timeout) but no file defines the server (give command, or type and url)", at, name)
				}
				for k, v := range pol {
					prev.Tools[k] = v
				}
				if e.Timeout != "" {
					if prev.Timeout, err = timeout(at, name, e.Timeout); err != nil {
						return nil, err
					}
				}
				byName[name] = prev
				continue
			}
			look := lookup
			if src.Project && !slices.Contains(trusted, name) {
				look = func(k string) (string, bool) {
					if proc.IsSecret(k) {
						untrusted = fmt.Errorf("${%s} names a credential, which a repository's file gets only for a server you trust: add %q to mcp.trusted in your own config (%s)", k, name, "~/.config/ultra/config.toml")
						return "", false
					}
					return lookup(k)
				}
			}
			untrusted = nil
			s, err := resolveEntry(at, name, e, look)
			if untrusted != nil && err != nil {
				err = fmt.Errorf("%s: server %q: %w", at, name, untrusted)
			}
			s.Source = src.Path
			if err != nil {
				return nil, err
			}
			s.Tools = pol
			byName[name] = s
		}
	}
	out := make([]Server, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func policies(path, name string, tools map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for t, p := range tools {
		p = strings.ToLower(strings.TrimSpace(p))
		if p != Allow && p != Ask && p != Deny {
			return nil, fmt.Errorf("%s: server %q: tools.%s must be \"allow\", \"ask\" or \"deny\", not %q", path, name, t, tools[t])
		}
		out[t] = p
	}
	return out, nil
}

func timeout(path, name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: server %q: timeout %q is not a positive duration (e.g. 30s, 2m)", path, name, v)
	}
	return d, nil
}

func resolveEntry(path, name string, e Entry, lookup func(string) (string, bool)) (Server, error) {
	s := Server{Name: name, Source: path, Type: strings.ToLower(strings.TrimSpace(e.Type))}
	where := func(field string) string { return fmt.Sprintf("%s: server %q: %s", path, name, field) }
	var err error
	x := func(field, v string) string {
		if err != nil {
			return ""
		}
		var out string
		out, err = expand(v, lookup)
		if err != nil {
			err = fmt.Errorf("%s: %w", where(field), err)
		}
		return out
	}
	if s.Type == "" {
		s.Type = Stdio
		if e.Command == "" && e.URL != "" {
			s.Type = HTTP
		}
	}
	switch s.Type {
	case Stdio:
		if strings.TrimSpace(e.Command) == "" {
			return s, fmt.Errorf("%s: a stdio server needs a command", where("command"))
		}
		if e.URL != "" || len(e.Headers) > 0 {
			return s, fmt.Errorf("%s: a stdio server takes command, args and env, not url or headers (set \"type\": \"http\" or \"sse\" for a remote one)", where("type"))
		}
	case HTTP, SSE:
		if strings.TrimSpace(e.URL) == "" {
			return s, fmt.Errorf("%s: a %s server needs a url", where("url"), s.Type)
		}
		if e.Command != "" || len(e.Args) > 0 || len(e.Env) > 0 {
			return s, fmt.Errorf("%s: a %s server takes url and headers, not command, args or env", where("type"), s.Type)
		}
	default:
		return s, fmt.Errorf("%s: unknown type %q (stdio, http or sse)", where("type"), e.Type)
	}
	s.Command = x("command", e.Command)
	for i, a := range e.Args {
		s.Args = append(s.Args, x(fmt.Sprintf("args[%d]", i), a))
	}
	if len(e.Env) > 0 {
		s.Env = map[string]string{}
		for k, v := range e.Env {
			s.Env[k] = x("env."+k, v)
		}
	}
	s.URL = x("url", e.URL)
	if len(e.Headers) > 0 {
		s.Headers = map[string]string{}
		for k, v := range e.Headers {
			s.Headers[k] = x("headers."+k, v)
		}
	}
	if err != nil {
		return s, err
	}
	if s.Remote() && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
		return s, fmt.Errorf("%s: %q is not an http:// or https:// address", where("url"), s.URL)
	}
	if e.Timeout != "" {
		if s.Timeout, err = timeout(path, name, e.Timeout); err != nil {
			return s, err
		}
	}
	return s, nil
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default} in v, as Claude Code does.
func expand(v string, lookup func(string) (string, bool)) (string, error) {
	var missing string
	out := varRef.ReplaceAllStringFunc(v, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		if val, ok := lookup(m[1]); ok && (val != "" || m[2] == "") {
			return val
		}
		if m[2] != "" {
			return m[3]
		}
		if missing == "" {
			missing = m[1]
		}
		return ""
	})
	if missing != "" {
		return "", fmt.Errorf("${%s} is not set and has no default (write ${%s:-default} for one)", missing, missing)
	}
	return out, nil
}

// ReadClaude reads the .mcp.json at path: nil, nil when there is none.
func ReadClaude(path string) (*Source, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := ParseClaude(path, data)
	if err != nil {
		return nil, err
	}
	return &Source{Path: path, Entries: entries, Text: data}, nil
}
