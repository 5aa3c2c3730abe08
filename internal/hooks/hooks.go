// Package hooks runs a person's hooks in Claude Code's format (the
// "hooks" of a settings.json): commands run at events of a run, given the
// event as JSON on their standard input, whose exit code and output can
// block a tool call, add context for the model, or send the run back to
// work. Which events exist and what a hook may change is ultra's: a
// hook's allow never bypasses a phase table, the sandbox, the safety
// harness or the gate. Reading and judging are pure; running a command
// is the caller's (Runner).
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/jsonpos"
)

// Events ultra fires.
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	UserPromptSubmit   = "UserPromptSubmit"
	Stop               = "Stop"
	SubagentStop       = "SubagentStop"
	SessionStart       = "SessionStart"
	SessionEnd         = "SessionEnd"
	PreCompact         = "PreCompact"
	Notification       = "Notification"
)

// Events lists them.
var Events = []string{PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd, PreCompact, Notification}

// DefaultTimeout bounds a hook that names none.
const DefaultTimeout = 60 * time.Second

// Hook is one command.
type Hook struct {
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Timeout float64 `json:"timeout,omitempty"` // seconds
	Source  string  `json:"-"`
}

func (h Hook) timeout() time.Duration {
	if h.Timeout > 0 {
		return time.Duration(h.Timeout * float64(time.Second))
	}
	return DefaultTimeout
}

// Group is hooks under one matcher.
type Group struct {
	Matcher string `json:"matcher,omitempty"`
	Hooks   []Hook `json:"hooks"`
	re      *regexp.Regexp
	names   []string
}

// Config is every file's hooks by event.
type Config struct {
	Events map[string][]Group
	// Notes are what of the files ultra leaves out, and why (a hook of a
	// type or an event it does not have, a matcher naming no tool): said
	// to the person at every run, and by doctor.
	Notes []string
}

// toolEvents are the events whose matchers name tools.
var toolEvents = map[string]bool{PreToolUse: true, PostToolUse: true, PostToolUseFailure: true}

// claudeOnly are Claude Code's tools ultra has none of: a matcher naming
// one is right, and matches nothing here.
var claudeOnly = map[string]bool{"WebSearch": true, "NotebookEdit": true, "NotebookRead": true, "ExitPlanMode": true,
	"KillShell": true, "BashOutput": true, "SlashCommand": true}

// claudeList is Claude Code's tool names ultra maps.
func claudeList() []string {
	var out []string
	for _, n := range claudeNames {
		if !slices.Contains(out, n.claude) {
			out = append(out, n.claude)
		}
	}
	return out
}

// Empty says no hook is configured.
func (c Config) Empty() bool { return len(c.Events) == 0 }

var nameList = regexp.MustCompile(`^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$`)

// Add reads the "hooks" of a settings file's text; an error names the
// file, the event and the entry.
func (c *Config) Add(source string, data []byte) error {
	var doc struct {
		Hooks map[string][]Group `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return jsonpos.Error(source, data, err)
	}
	events := make([]string, 0, len(doc.Hooks))
	for event := range doc.Hooks {
		events = append(events, event)
	}
	sort.Strings(events)
	for _, event := range events {
		groups := doc.Hooks[event]
		if !slices.Contains(Events, event) {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: hooks.%s: an event ultra does not have (%s): its hooks never run", source, event, strings.Join(Events, ", ")))
			continue
		}
		for i, g := range groups {
			where := fmt.Sprintf("%s: hooks.%s[%d]", source, event, i)
			switch m := g.Matcher; {
			case m == "" || m == "*":
			case nameList.MatchString(m):
				g.names = strings.Split(m, "|")
			default:
				re, err := regexp.Compile("^(?:" + m + ")$")
				if err != nil {
					return fmt.Errorf("%s.matcher: %q is not a regular expression: %v", where, m, err)
				}
				g.re = re
			}
			if len(g.Hooks) == 0 {
				return fmt.Errorf("%s: no hooks (give \"hooks\": [{\"type\": \"command\", \"command\": …}])", where)
			}
			if toolEvents[event] {
				for _, n := range g.names {
					if UltraName(n) == "" && !claudeOnly[n] {
						c.Notes = append(c.Notes, fmt.Sprintf("%s.matcher: %q names no tool (Claude Code's names: %s, mcp__…): these hooks never run", where, n, strings.Join(claudeList(), ", ")))
					}
				}
			}
			var kept []Hook
			for j := range g.Hooks {
				h := &g.Hooks[j]
				if h.Type != "command" {
					c.Notes = append(c.Notes, fmt.Sprintf("%s.hooks[%d]: a hook of type %q, which ultra does not run (it runs type \"command\"): it is left out", where, j, h.Type))
					continue
				}
				if strings.TrimSpace(h.Command) == "" {
					return fmt.Errorf("%s.hooks[%d]: an empty command", where, j)
				}
				if h.Timeout < 0 {
					return fmt.Errorf("%s.hooks[%d]: a negative timeout", where, j)
				}
				h.Source = source
				kept = append(kept, *h)
			}
			if g.Hooks = kept; len(kept) == 0 {
				continue
			}
			if c.Events == nil {
				c.Events = map[string][]Group{}
			}
			c.Events[event] = append(c.Events[event], g)
		}
	}
	return nil
}

// matches says group g applies to the target (a tool's name in Claude
// Code's naming, or an event's kind such as a SessionStart's source).
func (g Group) matches(target string) bool {
	switch {
	case g.re != nil:
		return g.re.MatchString(target)
	case g.names != nil:
		return slices.Contains(g.names, target)
	}
	return true
}

// For lists the hooks of event whose matcher takes target.
func (c Config) For(event, target string) []Hook {
	var out []Hook
	for _, g := range c.Events[event] {
		if g.matches(target) {
			out = append(out, g.Hooks...)
		}
	}
	return out
}

// claudeNames pairs ultra's tools with Claude Code's names for them, the
// name Claude Code's hooks see first.
var claudeNames = []struct{ ultra, claude string }{
	{"bash", "Bash"}, {"read", "Read"}, {"edit", "Edit"}, {"edit", "MultiEdit"},
	{"write", "Write"}, {"glob", "Glob"}, {"glob", "LS"}, {"grep", "Grep"},
	{"todo", "TodoWrite"}, {"webfetch", "WebFetch"}, {"skill", "Skill"}, {"task", "Task"}, {"task", "Agent"},
}

// ClaudeName is a tool of ultra's as Claude Code's hooks and matchers
// name it ("" for ultra's workflow tools, which no hook sees).
func ClaudeName(tool string) string {
	for _, n := range claudeNames {
		if n.ultra == tool {
			return n.claude
		}
	}
	if strings.HasPrefix(tool, "mcp__") {
		return tool
	}
	return ""
}

// UltraName is the tool of ultra's a Claude Code tool name stands for
// ("Edit(docs/**)" is edit; "" for a name ultra has no tool for).
func UltraName(claude string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(claude), "(")
	for _, n := range claudeNames {
		if n.claude == name {
			return n.ultra
		}
	}
	if strings.HasPrefix(name, "mcp__") {
		return name
	}
	return ""
}

// Exec is one hook's run: what it printed and how it ended. Err is set
// when it could not start, or did not end in time (TimedOut).
type Exec struct {
	Stdout, Stderr string
	Exit           int
	TimedOut       bool
	Err            error
}

// Runner runs a hook's command with input on its standard input.
type Runner func(ctx context.Context, h Hook, input []byte) Exec

// Output is a hook's JSON answer (exit 0, stdout starting with '{').
type Output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`
	Specific       struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Result is what the hooks of one event said together.
type Result struct {
	// Block: a hook blocked (exit 2, or decision "block"/"deny"); Reason
	// is what the model reads.
	Block  bool
	Reason string
	// Permission is a PreToolUse's decision: allow, deny or ask ("" none).
	Permission string
	// UpdatedInput replaces a tool call's input (PreToolUse).
	UpdatedInput json.RawMessage
	// Context is text for the model (additionalContext, and a
	// SessionStart's or UserPromptSubmit's plain stdout).
	Context string
	// Stop: a hook asked that the run stop (continue false), StopReason why.
	Stop       bool
	StopReason string
	// Messages are for the person: systemMessage, and hooks that failed
	// without blocking (other exit codes).
	Messages []string
	// Failed are hooks that could not start or timed out.
	Failed []string
	Ran    int
}

// Fire runs the hooks of event that take target, side by side, with
// input (the event's fields; hook_event_name is added) and combines what
// they said: any block blocks, deny wins over ask over allow.
func (c Config) Fire(ctx context.Context, run Runner, event, target string, input map[string]any) Result {
	hs := c.For(event, target)
	var res Result
	if len(hs) == 0 {
		return res
	}
	in := map[string]any{}
	for k, v := range input {
		in[k] = v
	}
	in["hook_event_name"] = event
	body, _ := json.Marshal(in)
	execs := make([]Exec, len(hs))
	var wg sync.WaitGroup
	for i, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hctx, cancel := context.WithTimeout(ctx, h.timeout())
			defer cancel()
			execs[i] = run(hctx, h, body)
		}()
	}
	wg.Wait()
	res.Ran = len(hs)
	for i, h := range hs {
		judge(&res, event, h, execs[i])
	}
	return res
}

// judge folds one hook's run into res.
func judge(res *Result, event string, h Hook, x Exec) {
	name := fmt.Sprintf("%s hook %q (%s)", event, clip(h.Command, 80), h.Source)
	switch {
	case x.TimedOut:
		res.Failed = append(res.Failed, fmt.Sprintf("%s did not end within %s", name, h.timeout()))
		return
	case x.Err != nil:
		res.Failed = append(res.Failed, fmt.Sprintf("%s could not run: %v", name, x.Err))
		return
	case x.Exit == 126 || x.Exit == 127:
		// The shell could not find or run the command.
		res.Failed = append(res.Failed, fmt.Sprintf("%s could not run (exit %d): %s", name, x.Exit, clip(strings.TrimSpace(x.Stderr), 300)))
		return
	case x.Exit == 2:
		res.Block = true
		res.Reason = join(res.Reason, strings.TrimSpace(x.Stderr))
		res.Messages = append(res.Messages, fmt.Sprintf("%s blocks: %s", name, clip(firstLine(x.Stderr), 200)))
		return
	case x.Exit != 0 && guards(event):
		// A guard that errs is a guard that did not decide: unlike Claude
		// Code, ultra does not let the call (or the finish) through. The
		// model must not be able to break a person's guard into silence
		// (a planted .python-version, a module it shadows).
		res.Failed = append(res.Failed, fmt.Sprintf("%s failed (exit %d): %s", name, x.Exit, clip(strings.TrimSpace(x.Stderr), 300)))
		return
	case x.Exit != 0:
		res.Messages = append(res.Messages, fmt.Sprintf("%s failed (exit %d): %s", name, x.Exit, clip(strings.TrimSpace(x.Stderr), 300)))
		return
	}
	out := bytes.TrimSpace([]byte(x.Stdout))
	if len(out) == 0 || out[0] != '{' {
		if (event == SessionStart || event == UserPromptSubmit) && len(out) > 0 {
			res.Context = join(res.Context, string(out))
		}
		return
	}
	var o Output
	if err := json.Unmarshal(out, &o); err != nil {
		res.Messages = append(res.Messages, fmt.Sprintf("%s printed JSON ultra cannot read: %v", name, err))
		return
	}
	if o.Continue != nil && !*o.Continue {
		res.Stop, res.StopReason = true, join(res.StopReason, o.StopReason)
	}
	if o.SystemMessage != "" {
		res.Messages = append(res.Messages, o.SystemMessage)
	}
	switch strings.ToLower(o.Decision) {
	case "block", "deny":
		res.Block, res.Reason = true, join(res.Reason, o.Reason)
		res.Messages = append(res.Messages, fmt.Sprintf("%s blocks: %s", name, clip(firstLine(o.Reason), 200)))
	case "approve", "allow":
		res.Permission = stronger(res.Permission, "allow")
	}
	s := o.Specific
	switch p := strings.ToLower(s.PermissionDecision); p {
	case "allow", "deny", "ask":
		res.Permission = stronger(res.Permission, p)
		if p == "deny" {
			res.Reason = join(res.Reason, s.PermissionDecisionReason)
		}
	}
	if len(s.UpdatedInput) > 0 && string(s.UpdatedInput) != "null" {
		res.UpdatedInput = s.UpdatedInput
	}
	res.Context = join(res.Context, s.AdditionalContext)
}

// guards says a hook of event decides whether something goes on (a
// call, a finish): one that fails refuses it.
func guards(event string) bool { return event == PreToolUse || event == Stop }

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// stronger is the decision that wins of two: deny, then ask, then allow.
func stronger(a, b string) string {
	rank := map[string]int{"": 0, "allow": 1, "ask": 2, "deny": 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func join(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "\n" + b
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
