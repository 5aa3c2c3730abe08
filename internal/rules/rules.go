// Package rules reads a person's permission rules in Claude Code's syntax
// (permissions.allow, ask and deny of a settings.json: "Bash(go test:*)",
// "Read", "Edit(docs/**)", "mcp__server__tool") and decides a tool call
// by them: deny wins over ask, ask over allow. The rules can only make a
// run stricter or save a person an approval; the phase tables, the
// profile, the sandbox and the gate are decided elsewhere, before them.
// It is pure.
package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/jsonpos"
	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/tool"
)

// Kinds of rules, in the order they win.
const (
	Deny  = "deny"
	Ask   = "ask"
	Allow = "allow"
)

// Rule is one rule as a person wrote it.
type Rule struct {
	Kind   string `json:"kind"`
	Text   string `json:"rule"`   // as written: Bash(go test:*)
	Source string `json:"source"` // the file that holds it
	tools  []string
	arg    string // the part in parentheses ("" for none: every call)
	prefix bool   // Bash(x:*): the command starts with x
	glob   *tool.PathGlob
	abs    bool // the path pattern is absolute (//, ~/)
}

// claudeTools are Claude Code's tool names and ultra's tools they cover.
var claudeTools = map[string][]string{
	"Bash": {"bash"}, "Read": {"read", "glob", "grep"}, "Edit": {"edit", "write"}, "Write": {"write"},
	"MultiEdit": {"edit"}, "Glob": {"glob"}, "Grep": {"grep"}, "LS": {"glob"},
	"WebFetch": {"webfetch"}, "Skill": {"skill"}, "Task": {"task"}, "Agent": {"task"}, "TodoWrite": {"todo"},
	// Tools ultra has no match for: the rule is kept and matches nothing.
	"WebSearch": nil, "NotebookEdit": nil, "NotebookRead": nil,
	"ExitPlanMode": nil, "KillShell": nil, "BashOutput": nil, "SlashCommand": nil,
}

// Parse reads one rule of kind from source; home is the person's home
// (for ~/ paths).
func Parse(kind, text, source, home string) (Rule, error) {
	r := Rule{Kind: kind, Text: text, Source: source}
	name, arg, hasArg := strings.Cut(strings.TrimSpace(text), "(")
	name = strings.TrimSpace(name)
	if hasArg {
		if !strings.HasSuffix(arg, ")") {
			return r, fmt.Errorf("%s: permissions.%s: %q has no closing parenthesis", source, kind, text)
		}
		arg = strings.TrimSuffix(arg, ")")
		if strings.TrimSpace(arg) == "" {
			return r, fmt.Errorf("%s: permissions.%s: %q: empty parentheses (write %s alone for every call)", source, kind, text, name)
		}
	}
	switch {
	case strings.HasPrefix(name, "mcp__"):
		if hasArg {
			return r, fmt.Errorf("%s: permissions.%s: %q: an MCP rule takes no parentheses (mcp__server, mcp__server__tool)", source, kind, text)
		}
		r.tools = []string{strings.TrimSuffix(name, "__*")}
		return r, nil
	case name == "":
		return r, fmt.Errorf("%s: permissions.%s: an empty rule", source, kind)
	}
	tools, known := claudeTools[name]
	if !known {
		return r, fmt.Errorf("%s: permissions.%s: %q: unknown tool %q (Bash, Read, Edit, Write, Glob, Grep, mcp__…)", source, kind, text, name)
	}
	r.tools, r.arg = tools, arg
	if !hasArg || tools == nil {
		return r, nil
	}
	switch name {
	case "Bash":
		if p, ok := strings.CutSuffix(arg, ":*"); ok {
			r.arg, r.prefix = strings.TrimSpace(p), true
		}
		return r, nil
	case "WebFetch":
		d, ok := strings.CutPrefix(strings.TrimSpace(arg), "domain:")
		d = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(d), "."))
		if !ok || d == "" || strings.ContainsAny(d, "/:@ ") {
			return r, fmt.Errorf("%s: permissions.%s: %q: write WebFetch(domain:HOST)", source, kind, text)
		}
		r.arg = d
		return r, nil
	case "Skill":
		r.arg = strings.TrimSpace(arg)
		return r, nil
	case "Task", "Agent", "TodoWrite":
		r.tools = nil // a kind of helper ultra does not have: matches nothing
		return r, nil
	}
	pat := arg
	switch {
	case strings.HasPrefix(pat, "//"):
		pat, r.abs = pat[1:], true
	case strings.HasPrefix(pat, "~/"):
		pat, r.abs = path.Join(home, pat[2:]), true
	default:
		pat = strings.TrimPrefix(pat, "/")
	}
	if r.abs {
		pat = strings.TrimPrefix(pat, "/")
	}
	g, err := tool.CompileGlob(pat)
	if err != nil {
		return r, fmt.Errorf("%s: permissions.%s: %q: %v", source, kind, text, err)
	}
	r.glob = &g
	return r, nil
}

// Set is every rule that holds, from every file.
type Set struct {
	Rules []Rule `json:"rules"`
	// Notes are keys of the files' permissions ultra does not know (a
	// typo such as "alow" would leave its rules out): said at every run.
	Notes []string `json:"-"`
}

// permissionKeys are the keys of Claude Code's permissions object.
var permissionKeys = []string{"allow", "ask", "deny", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode"}

// Settings is the part of a settings.json the rules come from.
type Settings struct {
	Permissions struct {
		Allow []string `json:"allow"`
		Ask   []string `json:"ask"`
		Deny  []string `json:"deny"`
	} `json:"permissions"`
}

// Add reads a settings file's text into the set; an error names the file.
func (s *Set) Add(source string, data []byte, home string) error {
	var st Settings
	if err := json.Unmarshal(data, &st); err != nil {
		return jsonpos.Error(source, data, err)
	}
	var raw struct {
		Permissions map[string]json.RawMessage `json:"permissions"`
	}
	if json.Unmarshal(data, &raw) == nil {
		var unknown []string
		for k := range raw.Permissions {
			if !slices.Contains(permissionKeys, k) {
				unknown = append(unknown, k)
			}
		}
		slices.Sort(unknown)
		for _, k := range unknown {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: permissions.%s is no key ultra or Claude Code reads (allow, ask, deny): its rules are left out", source, k))
		}
	}
	for _, k := range []struct {
		kind string
		list []string
	}{{Deny, st.Permissions.Deny}, {Ask, st.Permissions.Ask}, {Allow, st.Permissions.Allow}} {
		for _, text := range k.list {
			r, err := Parse(k.kind, text, source, home)
			if err != nil {
				return err
			}
			s.Rules = append(s.Rules, r)
		}
	}
	return nil
}

// Call is a tool call as the rules see it.
type Call struct {
	Tool    string // ultra's tool name (bash, read, edit, mcp__s__t, …)
	Command string // bash's command
	Path    string // a file tool's path, absolute
	Root    string // the run's tree, absolute
	Host    string // webfetch's host
	Skill   string // the skill tool's skill
}

// Decision is what the rules say of a call: Kind "" when none matched.
type Decision struct {
	Kind string
	Rule *Rule
	Why  string // for a deny of a command the rules cannot read
}

// Decide judges c: deny wins over ask, ask over allow. A bash command
// line is denied when any of its commands matches a deny rule (or a
// wrapped one: sudo, env, timeout …), and when a Bash deny rule exists
// and the line hides what it runs (policy.SimpleCommands); it is allowed
// only when every command matches an allow rule and it hides nothing.
func (s Set) Decide(c Call) Decision {
	if c.Tool == "bash" {
		return s.decideBash(c.Command)
	}
	for _, kind := range []string{Deny, Ask, Allow} {
		for i := range s.Rules {
			r := &s.Rules[i]
			if r.Kind == kind && r.matchesTool(c.Tool) && r.matchesArg(c) {
				return Decision{Kind: kind, Rule: r}
			}
		}
	}
	return Decision{}
}

func (r *Rule) matchesTool(name string) bool {
	for _, t := range r.tools {
		if t == name || (strings.HasPrefix(t, "mcp__") && strings.Count(t, "__") == 1 && strings.HasPrefix(name, t+"__")) {
			return true
		}
	}
	return false
}

// matchesArg says c is a call the rule's parentheses name: its path, its
// host (the domain or below it), its skill.
func (r *Rule) matchesArg(c Call) bool {
	switch {
	case r.arg == "":
		return true
	case c.Tool == "webfetch":
		h := strings.ToLower(strings.TrimSuffix(c.Host, "."))
		return h == r.arg || strings.HasSuffix(h, "."+r.arg)
	case c.Tool == "skill":
		return c.Skill == r.arg
	}
	return r.matchesPath(c)
}

func (r *Rule) matchesPath(c Call) bool {
	if r.glob == nil {
		return true // the tool alone: every call
	}
	if c.Path == "" {
		return false
	}
	p := path.Clean(c.Path)
	if r.abs {
		return r.glob.Match(strings.TrimPrefix(p, "/"))
	}
	rel, ok := strings.CutPrefix(p, strings.TrimSuffix(path.Clean(c.Root), "/")+"/")
	return ok && r.glob.Match(rel)
}

func (s Set) decideBash(command string) Decision {
	cmds, opaque := policy.SimpleCommands(command)
	var bashDeny, bashAsk *Rule
	for i := range s.Rules {
		r := &s.Rules[i]
		if !r.matchesTool("bash") {
			continue
		}
		switch {
		case r.Kind == Deny && bashDeny == nil:
			bashDeny = r
		case r.Kind == Ask && bashAsk == nil:
			bashAsk = r
		}
		if r.Kind == Allow {
			continue
		}
		for _, words := range cmds {
			for _, w := range unwrapped(words) {
				if r.matchesWords(w) {
					return Decision{Kind: r.Kind, Rule: r}
				}
			}
		}
	}
	if opaque != "" {
		if bashDeny != nil {
			return Decision{Kind: Deny, Rule: bashDeny, Why: "ultra cannot tell whether it matches: " + opaque}
		}
		if bashAsk != nil {
			return Decision{Kind: Ask, Rule: bashAsk, Why: "ultra cannot tell whether it matches: " + opaque}
		}
		return Decision{}
	}
	if len(cmds) == 0 {
		return Decision{}
	}
	var first *Rule
	for _, words := range cmds {
		var hit *Rule
		for i := range s.Rules {
			r := &s.Rules[i]
			if r.Kind == Allow && r.matchesTool("bash") && r.matchesWords(words) {
				hit = r
				break
			}
		}
		if hit == nil {
			return Decision{}
		}
		if first == nil {
			first = hit
		}
	}
	return Decision{Kind: Allow, Rule: first}
}

// unwrapped is a command and the commands its wrappers run, the program
// named by its base name too (/bin/rm as rm).
func unwrapped(words []string) [][]string {
	var out [][]string
	for _, w := range policy.Unwrap(words) {
		out = append(out, w)
		if b := path.Base(w[0]); b != w[0] {
			out = append(out, append([]string{b}, w[1:]...))
		}
	}
	return out
}

// matchesWords matches one simple command: Bash alone matches every
// command; Bash(x:*) a command whose words start with x's; Bash(x) with
// a * a command the pattern matches (* any text); else exactly x.
func (r *Rule) matchesWords(words []string) bool {
	if r.arg == "" {
		return true
	}
	line := strings.Join(words, " ")
	switch {
	case r.prefix:
		return line == r.arg || strings.HasPrefix(line, r.arg+" ")
	case strings.Contains(r.arg, "*"):
		return wildcard(r.arg, line)
	}
	return line == r.arg
}

// wildcard matches s against p, where * is any text.
func wildcard(p, s string) bool {
	parts := strings.Split(p, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, part := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, part)
		}
		j := strings.Index(s, part)
		if j < 0 {
			return false
		}
		s = s[j+len(part):]
	}
	return true
}

// Describe says where a rule comes from, for messages.
func (r Rule) Describe() string {
	return fmt.Sprintf("%s %s (%s)", r.Kind, r.Text, r.Source)
}

// StrayMCP are the rules that name an MCP server none of servers is, or
// a tool a server that answered (offered: its tools, by server) does
// not offer: a typo that would leave a deny rule denying nothing.
// suggest words the closest name.
func (s Set) StrayMCP(servers []string, offered map[string][]string, suggest func(string, []string) string) []string {
	var out []string
	for _, r := range s.Rules {
		if len(r.tools) != 1 || !strings.HasPrefix(r.tools[0], "mcp__") {
			continue
		}
		server, tool, _ := strings.Cut(strings.TrimPrefix(r.tools[0], "mcp__"), "__")
		switch tools, answered := offered[server]; {
		case !slices.Contains(servers, server):
			out = append(out, fmt.Sprintf("%s: permissions.%s %q names MCP server %q, which is not configured, so it matches nothing (%s)",
				r.Source, r.Kind, r.Text, server, suggest(server, servers)))
		case tool != "" && answered && !slices.Contains(tools, tool):
			out = append(out, fmt.Sprintf("%s: permissions.%s %q names a tool MCP server %q does not offer, so it matches nothing (%s)",
				r.Source, r.Kind, r.Text, server, suggest(tool, tools)))
		}
	}
	return out
}

// CheckTool says what is wrong with text as one entry of a skill's
// allowed-tools, which take the rules' syntax ("Bash(git diff:*)",
// "Read", "mcp__server__tool"); nil when it reads.
func CheckTool(text string) error {
	_, err := Parse(Allow, text, "", "/")
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), ": permissions.allow: "))
	}
	return nil
}

// Covers says a rule of the set is about tool.
func (s Set) Covers(tool string) bool {
	for i := range s.Rules {
		if s.Rules[i].matchesTool(tool) {
			return true
		}
	}
	return false
}
