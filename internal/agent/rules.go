package agent

// A person's permission rules (package rules) on the run's calls: a deny
// refuses in every run control, an ask waits for a person in every run
// control, an allow spares a manual run's person the approval. They come
// after the phase table and the profile, which they never widen.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/rules"
	"github.com/ultra-dev/ultra/internal/tool"
)

// LayerRules names refusals by a person's deny rule.
const LayerRules = "permission-rule"

// ruleDecision is what the person's rules say of call c.
func (r *runner) ruleDecision(c llm.ToolCall) rules.Decision {
	if len(r.o.Rules.Rules) == 0 {
		return rules.Decision{}
	}
	call, ok := r.ruleCall(c)
	if !ok {
		return rules.Decision{}
	}
	return r.o.Rules.Decide(call)
}

// ruleCall is call c as rules judge it (false: a bash call whose
// command does not read).
func (r *runner) ruleCall(c llm.ToolCall) (rules.Call, bool) {
	call := rules.Call{Tool: c.Name, Root: r.row.Workdir}
	switch c.Name {
	case "bash":
		cmd, ok := tool.ShellCommand(json.RawMessage(c.Arguments))
		if !ok {
			return call, false
		}
		call.Command = cmd
	case "webfetch", "skill":
		var a struct {
			URL  string `json:"url"`
			Name string `json:"name"`
		}
		_ = json.Unmarshal([]byte(c.Arguments), &a)
		call.Skill = a.Name
		if u, err := url.Parse(strings.TrimSpace(a.URL)); err == nil {
			call.Host = strings.Trim(u.Hostname(), "[]")
		}
	case "read", "edit", "write", "glob", "grep":
		var a struct {
			FilePath string `json:"file_path"`
			Path     string `json:"path"`
		}
		_ = json.Unmarshal([]byte(c.Arguments), &a)
		p := a.FilePath
		if p == "" {
			p = a.Path
		}
		if p == "" {
			p = "."
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.row.Workdir, p)
		}
		call.Path = filepath.Clean(p)
	}
	return call, true
}

// ruleRefusal is a person's deny rule refusing c, or nil.
func (r *runner) ruleRefusal(c llm.ToolCall) *refusal {
	d := r.ruleDecision(c)
	if d.Kind != rules.Deny {
		return nil
	}
	why := fmt.Sprintf("your permission rule %s refuses this call", d.Rule.Describe())
	if d.Why != "" {
		why += " (" + d.Why + "; write the command plainly)"
	}
	return &refusal{layer: LayerRules, reason: why}
}
