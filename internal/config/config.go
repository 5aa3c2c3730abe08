// Package config reads ultra's settings: the user's file
// ($XDG_CONFIG_HOME/ultra/config.toml) and the project's .ultra/config,
// both TOML. The project's file wins over the user's; flags win over both.
// Unknown keys and bad values are errors that name the file, line and key.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/ultra-dev/ultra/internal/mcp"
)

// Config is the merged configuration.
type Config struct {
	Model  Model  `toml:"model"`
	Run    Run    `toml:"run"`
	Verify Verify `toml:"verify"`
	// Workspace is where and how runs work in git.
	Workspace Workspace `toml:"workspace"`
	// Goals says what a run does when a goal fails.
	Goals Goals `toml:"goals"`
	// Repair says what a run does when the health check before it finds
	// something that blocks verified work.
	Repair Repair `toml:"repair"`
	// Pricing overrides the built-in pricing table: model → price.
	Pricing map[string]Price `toml:"pricing"`
	// MCP are the person's MCP servers, besides the repository's
	// .mcp.json.
	MCP MCP `toml:"mcp"`
	// Permissions says where a person's permission rules are read.
	Permissions Permissions `toml:"permissions"`

	// MCPSources are the servers each file gave, user's first, in the
	// order they win (Load fills it; MCP.Servers is then empty).
	MCPSources []mcp.Source `toml:"-"`

	// ProjectSetsModelServer reports that the project's file (content of
	// the repository, not of the user) chose model.base_url or headers.
	ProjectSetsModelServer bool `toml:"-"`
}

// Model chooses the provider.
type Model struct {
	Provider   string            `toml:"provider"`
	BaseURL    string            `toml:"base_url"`
	Name       string            `toml:"name"`
	Headers    map[string]string `toml:"headers"`
	MaxRetries *int              `toml:"max_retries"`
	Modes      map[string]string `toml:"modes"` // model mode → model name
	// API picks the OpenAI wire format: "responses" (the default for
	// OpenAI's own service) or "chat" (Chat Completions, the default for
	// every other server).
	API string `toml:"api"`
	// KeyCommand prints the API key (e.g. "pass show openai"); read only
	// from the user's own config, never from a repository's.
	KeyCommand string `toml:"key_command"`
	// ThinkingBudget lets the model think, in tokens, in deep mode
	// (planning, by default); 0: off.
	ThinkingBudget int `toml:"thinking_budget"`
	// ContextWindow is the model's context window in tokens (default 128000).
	ContextWindow int   `toml:"context_window"`
	Stream        *bool `toml:"stream"`
}

// MCP configures MCP servers.
type MCP struct {
	// Servers are servers by name, in Claude Code's .mcp.json shape plus
	// ultra's timeout and per-tool policy; an entry with only a policy
	// sets it for the server of that name another file defines.
	Servers map[string]mcp.Entry `toml:"servers"`
	// ClaudeFile (default true) reads the repository's .mcp.json and
	// the servers of ~/.claude.json.
	ClaudeFile *bool `toml:"claude_file"`
	// OpenCodeFile (default true) reads the servers ("mcp") of the
	// repository's opencode.json(c) and opencode's global config.
	OpenCodeFile *bool `toml:"opencode_file"`
	// Trusted are the servers of a repository's files that may be given
	// the person's credentials (${GITHUB_TOKEN} and the like); read only
	// from the person's own config.
	Trusted []string `toml:"trusted"`
}

// Permissions configures the permission rules.
type Permissions struct {
	// ClaudeSettings (default true) reads Claude Code's settings files
	// (.claude/settings.json, .claude/settings.local.json,
	// ~/.claude/settings.json) besides .ultra/settings.json.
	ClaudeSettings *bool `toml:"claude_settings"`
}

// ReadsClaudeSettings says Claude Code's settings files are read.
func (p Permissions) ReadsClaudeSettings() bool { return p.ClaudeSettings == nil || *p.ClaudeSettings }

// ReadsClaudeFile says the repository's .mcp.json is read.
func (m MCP) ReadsClaudeFile() bool { return m.ClaudeFile == nil || *m.ClaudeFile }

// ReadsOpenCodeFile says opencode's configuration files are read.
func (m MCP) ReadsOpenCodeFile() bool { return m.OpenCodeFile == nil || *m.OpenCodeFile }

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input      float64 `toml:"input"`
	Output     float64 `toml:"output"`
	CacheRead  float64 `toml:"cache_read"`
	CacheWrite float64 `toml:"cache_write"`
}

// Run holds budgets and limits.
type Run struct {
	MaxRetries      int      `toml:"max_retries"`
	MaxTurns        int      `toml:"max_turns"`
	MaxInputTokens  int64    `toml:"max_input_tokens"`
	MaxOutputTokens int64    `toml:"max_output_tokens"`
	MaxWall         Duration `toml:"max_wall"`
	MaxCost         float64  `toml:"max_cost"`
	BashTimeout     Duration `toml:"bash_timeout"`
}

// Goals configures the goal loop.
type Goals struct {
	// OnFailure is what a run does when a goal fails its caps: "escalate"
	// (the default: a person decides) or "continue" (the run moves on to
	// the next goal; it escalates at the end, listing the failed goals).
	OnFailure string `toml:"on_failure"`
	// Cleanup: after the final gate passes, a cleanup pass over the files
	// the run changed, judged by the gate again, before the review (the
	// default); false goes straight to the review.
	Cleanup *bool `toml:"cleanup"`
}

// CleanupOff reports whether goals.cleanup is set to false.
func (g Goals) CleanupOff() bool { return g.Cleanup != nil && !*g.Cleanup }

// Repair configures the health check before a run starts.
type Repair struct {
	// OnUnhealthy: "auto" (ultra fixes what code can, and the run starts
	// in repair mode to fix the rest), "ask" (the default: a person is
	// asked; without a terminal the run does not start) or "log-only"
	// (the run starts and the findings are recorded).
	OnUnhealthy string `toml:"on_unhealthy"`
}

// Verify overrides test detection.
type Verify struct {
	Command Commands `toml:"command"`
	Timeout Duration `toml:"timeout"`
	// UnixSockets lets the tests create Unix domain sockets (some suites
	// serve on one); off, a socket file the tests can see cannot connect
	// them to a service outside the sandbox.
	UnixSockets bool `toml:"unix_sockets"`
	// Cache (default true) lets a verification reuse the recorded result
	// of the same tree with the same commands and environment, measured
	// by any run in the repository; false runs the tests every time.
	Cache *bool `toml:"cache"`
	// Ahead (default true) starts the tests as soon as the model's calls
	// leave the tree changed, while the model thinks; a verification of
	// that same tree judges their results. false: the tests run only
	// when the model calls verify.
	Ahead *bool `toml:"ahead"`
	// Code and TestSupport declare, as path globs (** for any depth),
	// what files are to the tests when ultra cannot tell by itself: code
	// under test, or test support (restored with the original tests when
	// a run changes them). A declaration wins over ultra's own reading.
	Code        []string `toml:"code"`
	TestSupport []string `toml:"test_support"`
}

// CacheOff reports whether verify.cache is set to false.
func (v Verify) CacheOff() bool { return v.Cache != nil && !*v.Cache }

// AheadOff reports whether verify.ahead is set to false.
func (v Verify) AheadOff() bool { return v.Ahead != nil && !*v.Ahead }

// Workspace configures runs' worktrees and branches.
type Workspace struct {
	// Dir holds the runs' worktrees (default: $XDG_STATE_HOME/ultra/worktrees).
	Dir string `toml:"dir"`
	// Protected are branch patterns no run commits, resets or pushes to
	// (default: main, master, release/*).
	Protected []string `toml:"protected"`
	// AuthorName and AuthorEmail author ultra's commits (default: ultra).
	AuthorName  string `toml:"author_name"`
	AuthorEmail string `toml:"author_email"`
	// Setup are shell commands run in a new worktree before anything else
	// (e.g. "npm ci"), each must succeed.
	Setup []string `toml:"setup"`
}

// Duration is a time.Duration written as "90s", "10m", "2h".
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("invalid duration %q (use e.g. 90s, 10m, 2h)", string(b))
	}
	if v < 0 {
		return fmt.Errorf("invalid duration %q: negative", string(b))
	}
	*d = Duration(v)
	return nil
}

// D is the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Commands is one command or a list of them.
type Commands []string

// UnmarshalTOML accepts a string or an array of strings.
func (c *Commands) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return errors.New("verify.command is empty")
		}
		*c = Commands{x}
	case []any:
		out := Commands{}
		for i, e := range x {
			s, ok := e.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return fmt.Errorf("verify.command[%d] must be a non-empty string", i)
			}
			out = append(out, s)
		}
		*c = out
	default:
		return fmt.Errorf("verify.command must be a string or an array of strings, not %T", v)
	}
	return nil
}

// UserPath is the user's config file.
func UserPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "ultra", "config.toml")
}

// UserDir is ultra's directory in the user's configuration
// ($XDG_CONFIG_HOME/ultra, ~/.config/ultra).
func UserDir() string {
	if p := UserPath(); p != "" {
		return filepath.Dir(p)
	}
	return ""
}

// StateDir is ultra's per-user state directory ($XDG_STATE_HOME/ultra,
// ~/.local/state/ultra): the runs' worktrees and the installation's gate
// key live there.
func StateDir() (string, error) {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "ultra"), nil
}

// ProjectPath is the project's config file under root.
func ProjectPath(root string) string { return filepath.Join(root, ".ultra", "config") }

// Load reads the user's config and then the project's under root; a
// missing file is not an error.
func Load(root string) (Config, error) {
	var c Config
	if p := UserPath(); p != "" {
		if err := loadFile(p, &c); err != nil {
			return Config{}, err
		}
		c.takeMCP(p)
	}
	url, headers, keyCmd := c.Model.BaseURL, len(c.Model.Headers), c.Model.KeyCommand
	trusted := slices.Clone(c.MCP.Trusted)
	if err := loadFile(ProjectPath(root), &c); err != nil {
		return Config{}, err
	}
	c.takeMCP(ProjectPath(root))
	if !slices.Equal(c.MCP.Trusted, trusted) {
		return Config{}, fmt.Errorf("config %s: mcp.trusted is read only from your own config (%s): a repository may not trust its own servers with your credentials", ProjectPath(root), UserPath())
	}
	if c.Model.KeyCommand != keyCmd {
		return Config{}, fmt.Errorf("config %s: model.key_command is read only from your own config (%s): a repository may not run commands to get your keys", ProjectPath(root), UserPath())
	}
	c.ProjectSetsModelServer = c.Model.BaseURL != url || len(c.Model.Headers) != headers
	return c, nil
}

// takeMCP moves the servers the file just read into MCPSources.
func (c *Config) takeMCP(path string) {
	if len(c.MCP.Servers) > 0 {
		text, _ := os.ReadFile(path)
		c.MCPSources = append(c.MCPSources, mcp.Source{Path: path, Entries: c.MCP.Servers, Text: text, Project: path != UserPath()})
	}
	c.MCP.Servers = nil
}

// loadFile decodes path over c: keys present in the file replace c's.
func loadFile(path string, c *Config) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			if pe.LastKey != "" && !strings.Contains(pe.Message, pe.LastKey) {
				// A value a field's own decoding refused (a duration).
				return fmt.Errorf("config %s:%d: %s: %s", path, errorLine(data, pe.Position), pe.LastKey, pe.Message)
			}
			return fmt.Errorf("config %s:%d: %s", path, errorLine(data, pe.Position), pe.Message)
		}
		// A value of the wrong type: "toml: line 2 (last key "a.b"):
		// incompatible types: TOML value has type string; destination
		// has type slice".
		if m := decodeErr().FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("config %s:%s: %s: %s", path, m[1], m[2], strings.ReplaceAll(typeWords.Replace(m[3]), " a integer", " an integer"))
		}
		return fmt.Errorf("config %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return fmt.Errorf("config %s:%d: unknown key %s (known: %s)", path, keyLine(string(data), k[len(k)-1]), k.String(), knownKeys())
	}
	return c.validate(path, string(data))
}

var (
	// Compiled when needed: ultra's sandboxed helper processes load
	// this package too.
	decodeErr = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]+)"\): (.*)$`)
	})
	typeWords = strings.NewReplacer("incompatible types: TOML value has type ", "wrong type: the file gives a ",
		"; destination has type ", " where ultra wants a ", "slice", "list", "map", "table", "struct", "table")
)

// knownKeys lists the keys of the configuration, from Config's fields:
// "model.{provider,base_url,…}, run.{…}, …".
func knownKeys() string {
	var out []string
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("toml"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		ft := f.Type
		prefix := name
		if ft.Kind() == reflect.Map {
			ft, prefix = ft.Elem(), name+".NAME"
		}
		if ft.Kind() != reflect.Struct {
			out = append(out, name)
			continue
		}
		var keys []string
		for j := range ft.NumField() {
			if k := strings.Split(ft.Field(j).Tag.Get("toml"), ",")[0]; k != "" && k != "-" {
				keys = append(keys, k)
			}
		}
		out = append(out, prefix+".{"+strings.Join(keys, ",")+"}")
	}
	return strings.Join(out, ", ")
}

// validate rejects values that decode but make no sense.
func (c *Config) validate(path, text string) error {
	neg := func(key string, v int64) error {
		if v < 0 {
			return fmt.Errorf("config %s:%d: %s must not be negative (got %d)", path, keyLine(text, key[strings.LastIndexByte(key, '.')+1:]), key, v)
		}
		return nil
	}
	for _, e := range []error{
		neg("run.max_retries", int64(c.Run.MaxRetries)), neg("run.max_turns", int64(c.Run.MaxTurns)),
		neg("run.max_input_tokens", c.Run.MaxInputTokens), neg("run.max_output_tokens", c.Run.MaxOutputTokens),
	} {
		if e != nil {
			return e
		}
	}
	if c.Run.MaxCost < 0 {
		return fmt.Errorf("config %s:%d: run.max_cost must not be negative", path, keyLine(text, "max_cost"))
	}
	if c.Model.MaxRetries != nil && *c.Model.MaxRetries < 0 {
		return fmt.Errorf("config %s:%d: model.max_retries must not be negative", path, keyLine(text, "max_retries"))
	}
	if a := c.Model.API; a != "" && a != "chat" && a != "responses" {
		return fmt.Errorf("config %s:%d: model.api must be \"chat\" or \"responses\", not %q", path, keyLine(text, "api"), a)
	}
	for mode := range c.Model.Modes {
		if mode != "fast" && mode != "smart" && mode != "deep" {
			return fmt.Errorf("config %s:%d: model.modes.%s: unknown model mode (fast, smart or deep)", path, keyLine(text, mode), mode)
		}
	}
	for i, p := range c.Workspace.Protected {
		if _, err := filepath.Match(p, ""); err != nil || strings.TrimSpace(p) == "" {
			return fmt.Errorf("config %s:%d: workspace.protected[%d]: %q is not a branch pattern", path, keyLine(text, "protected"), i, p)
		}
	}
	for i, cmd := range c.Workspace.Setup {
		if strings.TrimSpace(cmd) == "" {
			return fmt.Errorf("config %s:%d: workspace.setup[%d] is empty", path, keyLine(text, "setup"), i)
		}
	}
	if (c.Workspace.AuthorName == "") != (c.Workspace.AuthorEmail == "") {
		return fmt.Errorf("config %s:%d: workspace.author_name and workspace.author_email go together", path, keyLine(text, "author_name"))
	}
	if f := c.Goals.OnFailure; f != "" && f != "escalate" && f != "continue" {
		return fmt.Errorf("config %s:%d: goals.on_failure must be \"escalate\" or \"continue\", not %q", path, keyLine(text, "on_failure"), f)
	}
	if f := c.Repair.OnUnhealthy; f != "" && f != "auto" && f != "ask" && f != "log-only" {
		return fmt.Errorf("config %s:%d: repair.on_unhealthy must be \"auto\", \"ask\" or \"log-only\", not %q", path, keyLine(text, "on_unhealthy"), f)
	}
	if c.Verify.Command != nil && len(c.Verify.Command) == 0 {
		return fmt.Errorf("config %s:%d: verify.command is an empty list: give at least one command, or remove the key to detect one", path, keyLine(text, "command"))
	}
	return nil
}

// keyLine is the first line of text that sets key (0 when none does).
func keyLine(text, key string) int {
	for i, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, key) {
			rest := strings.TrimSpace(l[len(key):])
			if strings.HasPrefix(rest, "=") {
				return i + 1
			}
		}
	}
	return 0
}

// CheckUser loads the user's own config alone (outside a repository) and
// says why it does not load, or nil.
func CheckUser() error {
	var c Config
	if p := UserPath(); p != "" {
		return loadFile(p, &c)
	}
	return nil
}

// errorLine is the line of a parse error: the line of the byte it points
// at (the decoder counts a newline it stopped at as the next line's).
func errorLine(data []byte, p toml.Position) int {
	if p.Start >= 0 && p.Start < len(data) {
		return 1 + bytes.Count(data[:p.Start], []byte("\n"))
	}
	return p.Line
}
