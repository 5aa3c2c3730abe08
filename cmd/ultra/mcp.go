package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/mcp"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/rules"
)

// mcpServers are the person's MCP servers for runs in the project, from
// every place people keep them, later ones winning a name: ultra's user
// config; Claude Code's user-scoped servers (~/.claude.json) and
// opencode's global config; the repository's .mcp.json (less the servers
// the person turned off: disabledMcpjsonServers) and opencode.json(c),
// read from the person's checkout, never from a run's worktree; Claude
// Code's local-scoped servers for this project; the project's
// .ultra/config. more are the files of --mcp-config, read where
// .mcp.json is and under its rules.
func (p *project) mcpServers(more ...mcp.Source) ([]mcp.Server, error) {
	var user, rest []mcp.Source
	for _, s := range p.Config.MCPSources {
		if s.Path == config.UserPath() {
			user = append(user, s)
		} else {
			rest = append(rest, s)
		}
	}
	sources := user
	var local []mcp.Source
	var disabled []string
	home, _ := os.UserHomeDir()
	if p.Config.MCP.ReadsClaudeFile() && home != "" {
		path := filepath.Join(home, ".claude.json")
		if data, err := os.ReadFile(path); err == nil {
			cj, err := mcp.ParseClaudeJSON(path, data, p.Root)
			if err != nil {
				return nil, err
			}
			if len(cj.User) > 0 {
				sources = append(sources, mcp.Source{Path: path, Entries: cj.User, Text: data})
			}
			if len(cj.Local) > 0 {
				local = append(local, mcp.Source{Path: path, Entries: cj.Local, Text: data})
			}
			disabled = cj.Disabled
		}
	}
	if p.Config.MCP.ReadsOpenCodeFile() {
		src, err := readOpenCode(configDirs("opencode"), false)
		if err != nil {
			return nil, err
		}
		sources = append(sources, src...)
	}
	if p.Config.MCP.ReadsClaudeFile() {
		src, err := mcp.ReadClaude(filepath.Join(p.Root, ".mcp.json"))
		if err != nil {
			return nil, err
		}
		if src != nil {
			src.Project = true
			for _, n := range append(disabled, p.disabledMCPJSON()...) {
				delete(src.Entries, n)
			}
			sources = append(sources, *src)
		}
	}
	sources = append(sources, more...)
	if p.Config.MCP.ReadsOpenCodeFile() {
		src, err := readOpenCode([]string{p.Root}, true)
		if err != nil {
			return nil, err
		}
		sources = append(sources, src...)
	}
	sources = append(sources, local...)
	return mcp.Resolve(append(sources, rest...), os.LookupEnv, p.Config.MCP.Trusted)
}

// readMCPConfigs reads the files of --mcp-config: each must be there and
// hold {"mcpServers": {...}}. They are taken as a repository's .mcp.json
// is (Project): their servers get the person's credentials only when
// the person trusts them by name, and run in the run's sandbox.
func readMCPConfigs(paths []string) ([]mcp.Source, error) {
	var out []mcp.Source
	for _, path := range paths {
		src, err := mcp.ReadClaude(path)
		if err != nil {
			return nil, fmt.Errorf("--mcp-config %s: %w", path, err)
		}
		if src == nil {
			return nil, fmt.Errorf("--mcp-config %s: no such file", path)
		}
		src.Project = true
		out = append(out, *src)
	}
	return out, nil
}

// configDirs is $XDG_CONFIG_HOME/name (default ~/.config/name).
func configDirs(name string) []string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return []string{filepath.Join(d, name)}
	}
	if home, err := os.UserHomeDir(); err == nil {
		return []string{filepath.Join(home, ".config", name)}
	}
	return nil
}

// readOpenCode reads the MCP servers of the opencode.json or
// opencode.jsonc in each of dirs (the first of the two there is); project:
// the files are a repository's.
func readOpenCode(dirs []string, project bool) ([]mcp.Source, error) {
	var out []mcp.Source
	for _, d := range dirs {
		for _, name := range []string{"opencode.json", "opencode.jsonc"} {
			path := filepath.Join(d, name)
			data, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			entries, err := mcp.ParseOpenCode(path, data)
			if err != nil {
				return nil, err
			}
			if len(entries) > 0 {
				out = append(out, mcp.Source{Path: path, Entries: entries, Text: mcp.StripJSONC(data), Project: project})
			}
			break
		}
	}
	return out, nil
}

// disabledMCPJSON are the .mcp.json servers the settings files turn off
// (Claude Code's disabledMcpjsonServers).
func (p *project) disabledMCPJSON() []string {
	var out []string
	for _, f := range p.settingsFiles() {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc struct {
			Disabled []string `json:"disabledMcpjsonServers"`
		}
		if json.Unmarshal(data, &doc) == nil {
			out = append(out, doc.Disabled...)
		}
	}
	return out
}

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "The MCP servers runs use: list them, their tools, test one",
		Long: `The MCP servers runs use, from the repository's .mcp.json (Claude Code's
format), the project's .ultra/config and your own config ([mcp.servers.NAME]).
Their tools are offered to the model as mcp__SERVER__TOOL: read-only tools
(readOnlyHint) where the phase reads, every tool where it changes code.
Stdio servers run in the run's sandbox. See docs/ecosystem.md.`,
	}
	cmd.AddCommand(newMCPListCmd(), newMCPToolsCmd(), newMCPTestCmd())
	return cmd
}

// mcpSession is the project's servers, connected for ultra mcp, and the
// person's permission rules.
type mcpSession struct {
	m       *mcp.Manager
	done    func()
	servers []mcp.Server // those started
	names   []string     // every configured server's
	rules   rules.Set
}

// warn prints the policies and rules that name a server or tool there
// is not.
func (x mcpSession) warn(cmd *cobra.Command) {
	for _, w := range agent.MCPStrays(x.servers, x.rules, x.m.Offered(), x.names...) {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w)
	}
}

// policy is tool t's policy in a run, with the rule or setting that
// makes it: the servers' policies and the permission rules, deny
// winning over ask over allow.
func (x mcpSession) policy(t mcp.ToolInfo) string {
	d := x.rules.Decide(rules.Call{Tool: t.Name})
	switch {
	case t.Policy == mcp.Deny:
		return "deny"
	case d.Kind == rules.Deny:
		return "deny (" + d.Rule.Text + ")"
	case t.Policy == mcp.Ask:
		return "ask"
	case d.Kind == rules.Ask:
		return "ask (" + d.Rule.Text + ")"
	case t.Policy == "" && t.Destructive && d.Kind == rules.Allow:
		return "allow (" + d.Rule.Text + ")"
	case t.Policy == "" && t.Destructive:
		return "ask (destructive)"
	}
	return "allow"
}

func mcpSetup(cmd *cobra.Command, only string) (mcpSession, error) {
	m, done, servers, set, names, err := mcpConnect(cmd, only)
	return mcpSession{m: m, done: done, servers: servers, names: names, rules: set}, err
}

// mcpConnect loads the project's servers and connects them (only those
// named, when any are), contained as a read-only chat would.
func mcpConnect(cmd *cobra.Command, only string) (*mcp.Manager, func(), []mcp.Server, rules.Set, []string, error) {
	var set rules.Set
	p, err := findProject(cmd)
	if err != nil {
		return nil, nil, nil, set, nil, err
	}
	servers, err := p.mcpServers()
	if err != nil {
		return nil, nil, nil, set, nil, &exitError{code: agent.ExitUsage, err: err}
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if set, _, err = p.settings(); err != nil {
		// The rules only add a column and warnings here: say why they are
		// missing, and go on (runs refuse to start until it is fixed).
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v (the permission rules are left out here; runs refuse to start until it is fixed)\n", err)
		set = rules.Set{}
	}
	if only != "" {
		var kept []mcp.Server
		for _, s := range servers {
			if s.Name == only {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			return nil, nil, nil, set, nil, usageErr("no MCP server %q is configured (%s)", only, serverNames(servers))
		}
		servers = kept
	}
	if err := os.MkdirAll(p.StateRoot, 0o755); err != nil {
		return nil, nil, nil, set, nil, err
	}
	ensureIgnored(p.StateRoot)
	o := p.agentOptions(nil)
	o.Version = rootVersion(cmd)
	m, done := agent.MCPCheck(cmd.Context(), o, p.Root, servers, true)
	return m, done, servers, set, names, nil
}

func serverNames(servers []mcp.Server) string {
	if len(servers) == 0 {
		return "none is: add one to .mcp.json or [mcp.servers.NAME] in .ultra/config"
	}
	var n []string
	for _, s := range servers {
		n = append(n, s.Name)
	}
	return "configured: " + strings.Join(n, ", ")
}

func rootVersion(cmd *cobra.Command) string { return cmd.Root().Version }

func newMCPListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Each server, where it is configured, and whether it answers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			x, err := mcpSetup(cmd, "")
			if err != nil {
				return err
			}
			defer x.done()
			m, servers := x.m, x.servers
			st := m.Statuses()
			x.warn(cmd)
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(st)
			}
			out := cmd.OutOrStdout()
			if len(servers) == 0 {
				fmt.Fprintln(out, "no MCP servers: add them to .mcp.json (Claude Code's format) or [mcp.servers.NAME] in .ultra/config")
				return nil
			}
			w := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
			fmt.Fprintln(w, "SERVER\tTYPE\tSTATE\tTOOLS\tFROM")
			failed := 0
			for _, s := range st {
				state := s.State
				if s.Error != "" {
					state += " (below)"
					failed++
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", s.Name, s.Type, state, s.Tools, s.Source)
			}
			w.Flush()
			for _, s := range st {
				if s.Error != "" {
					fmt.Fprintf(out, "\n%s: %s\n", s.Name, s.Error)
				}
			}
			if failed > 0 {
				return &exitError{code: agent.ExitError, err: fmt.Errorf("%d of %d MCP servers do not answer", failed, len(st))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the statuses as JSON")
	return cmd
}

func newMCPToolsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [SERVER]",
		Short: "The tools the servers offer, and in which phases a run offers each",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			only := ""
			if len(args) == 1 {
				only = args[0]
			}
			x, err := mcpSetup(cmd, only)
			if err != nil {
				return err
			}
			defer x.done()
			m := x.m
			tools := m.Tools()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(tools)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 2, 2, ' ', 0)
			fmt.Fprintln(w, "TOOL\tKIND\tPOLICY\tOFFERED IN\tDESCRIPTION")
			for _, t := range tools {
				pol := x.policy(t)
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.Name, toolKind(t), pol, offeredIn(t, pol), clipLine(t.Description, 60))
			}
			w.Flush()
			x.warn(cmd)
			failed := 0
			for _, s := range m.Statuses() {
				if s.Error != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "MCP server %s: %s\n", s.Name, s.Error)
					failed++
				}
			}
			if failed > 0 {
				return &exitError{code: agent.ExitError, err: fmt.Errorf("%d of %d MCP servers do not answer", failed, len(m.Statuses()))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools as JSON (with their input schemas)")
	return cmd
}

func toolKind(t mcp.ToolInfo) string {
	switch {
	case t.ReadOnly:
		return "read-only"
	case t.Destructive:
		return "destructive"
	}
	return "writes"
}

// offeredIn names the phases of a build run that offer t, whose policy
// is pol.
func offeredIn(t mcp.ToolInfo, pol string) string {
	if strings.HasPrefix(pol, "deny") {
		return "never (denied)"
	}
	var in []string
	for _, p := range phase.All {
		if phase.AllowsMCPIn(phase.Build, p, t.ReadOnly) {
			in = append(in, string(p))
		}
	}
	if t.ReadOnly {
		in = append(in, "chat", "research", "review")
	}
	return strings.Join(in, ",")
}

func clipLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > n {
		s = s[:n-1] + "…"
	}
	return s
}

func newMCPTestCmd() *cobra.Command {
	var denied bool
	cmd := &cobra.Command{
		Use:   "test SERVER [TOOL [JSON]]",
		Short: "Start one server, list its tools, and call one with JSON arguments",
		Long: `Start one server as a run would (contained, the repository read-only), list
its tools, and with TOOL call it with the JSON arguments given (default {}).
Exits 0 when the server answers (and the call succeeds), 1 otherwise.`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := mcpSetup(cmd, args[0])
			if err != nil {
				return err
			}
			defer x.done()
			m := x.m
			out := cmd.OutOrStdout()
			x.warn(cmd)
			st := m.Statuses()[0]
			if st.State != "connected" {
				return &exitError{code: agent.ExitError, err: fmt.Errorf("MCP server %s does not answer: %s", st.Name, st.Error)}
			}
			fmt.Fprintf(out, "%s: connected, %d tools\n", st.Name, st.Tools)
			if len(args) == 1 {
				for _, t := range m.Tools() {
					fmt.Fprintf(out, "  %s (%s)\n", t.Name, toolKind(t))
				}
				return nil
			}
			name := args[1]
			if !mcp.IsTool(name) {
				name = mcp.ToolName(args[0], name)
			}
			t, ok := m.Tool(name)
			if !ok {
				return usageErr("MCP server %s has no tool %q (%s)", args[0], args[1], mcp.Suggest(args[1], x.m.Offered()[args[0]]))
			}
			if pol := x.policy(t); strings.HasPrefix(pol, "deny") && !denied {
				return usageErr("%s is denied (policy: %s), so no run calls it; pass --denied to call it here anyway", name, pol)
			}
			raw := "{}"
			if len(args) == 3 {
				raw = args[2]
			}
			if !json.Valid([]byte(raw)) {
				return usageErr("the arguments %q are not JSON: give an object, e.g. '{\"message\":\"hi\"}'", raw)
			}
			res := m.Call(cmd.Context(), name, json.RawMessage(raw), false)
			fmt.Fprintln(out, res.Text)
			if res.IsError {
				return &exitError{code: agent.ExitError, err: fmt.Errorf("the call of %s failed", name)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&denied, "denied", false, "call the tool even though your configuration denies it")
	return cmd
}

// setupProblems is what doctor says of the permission rules and the MCP servers without
// starting them: why their configuration does not load, and the stdio
// servers whose program is not found.
func setupProblems(p *project) (string, []string) {
	if _, _, err := p.settings(); err != nil {
		return err.Error(), nil
	}
	servers, err := p.mcpServers()
	if err != nil {
		return err.Error(), nil
	}
	var missing []string
	for _, s := range servers {
		if s.Remote() {
			continue
		}
		if _, err := exec.LookPath(s.Command); err != nil {
			missing = append(missing, fmt.Sprintf("MCP server %s (%s): %s is not found", s.Name, s.Source, s.Command))
		}
	}
	return "", missing
}
