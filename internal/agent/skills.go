package agent

// Agent Skills (package skills) in a run: their names and descriptions in
// the system prompt (fixed when the run starts), their bodies loaded by
// the model with skill{name}, and a skill a person invokes (--skill)
// narrowing the tools the run offers to its allowed-tools.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/hooks"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/rules"
	"github.com/ultra-dev/ultra/internal/skills"
	"github.com/ultra-dev/ultra/internal/tool"
)

// maxSkillResource bounds a skill's file the model loads.
const maxSkillResource = 30000

// skillIndex is the prompt's list of the skills the model may load,
// within about 1% of the model's context window.
func skillIndex(o Options) string {
	window := o.ContextWindow
	if window <= 0 {
		window = 128000
	}
	return skills.Index(o.Skills, window*4/100)
}

var skillSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"name":{"type":"string","description":"The skill's name, as the list of skills gives it"},` +
	`"resource":{"type":"string","description":"A file of the skill's folder its instructions name (e.g. scripts/check.sh)"}},` +
	`"required":["name"],"additionalProperties":false}`)

func (r *runner) skillTool() tool.Tool {
	return funcTool{
		spec: llm.ToolSpec{Name: "skill", Parameters: skillSchema,
			Description: "Load a skill's instructions (or one of its files, with resource) when the task needs it: the system prompt lists the skills."},
		run: r.runSkill,
	}
}

func (r *runner) runSkill(_ context.Context, args json.RawMessage) tool.Result {
	var a struct {
		Name     string `json:"name"`
		Resource string `json:"resource"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Name) == "" {
		return tool.Result{IsError: true, Malformed: true, Output: `skill needs a name: skill{"name":"go-fix"}`}
	}
	var offered []string
	var s *skills.Skill
	for i := range r.o.Skills {
		if r.o.Skills[i].Offered() {
			offered = append(offered, r.o.Skills[i].Name)
			if r.o.Skills[i].Name == a.Name {
				s = &r.o.Skills[i]
			}
		}
	}
	if s == nil {
		return tool.Result{IsError: true, Output: fmt.Sprintf("no skill %q is offered; the skills: %s", a.Name, strings.Join(offered, ", "))}
	}
	if a.Resource == "" {
		out := fmt.Sprintf("Skill %s (%s)\n\n%s", s.Name, s.File, s.Body)
		if res := skills.Resources(*s); len(res) > 0 {
			out += "\n\nIts files (load one with skill{name, resource}): " + strings.Join(res, ", ")
		}
		return tool.Result{Output: out, Data: map[string]any{"skill": s.Name}}
	}
	rel := filepath.Clean(a.Resource)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") || !slices.Contains(skills.Resources(*s), filepath.ToSlash(rel)) {
		return tool.Result{IsError: true, Output: fmt.Sprintf("skill %s has no file %q (its files: %s)", s.Name, a.Resource, strings.Join(skills.Resources(*s), ", "))}
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, rel))
	if err != nil {
		return tool.Result{IsError: true, Output: err.Error()}
	}
	text := string(b)
	if len(text) > maxSkillResource {
		text = text[:maxSkillResource] + fmt.Sprintf("\n… [%d more bytes]", len(b)-maxSkillResource)
	}
	return tool.Result{Output: text, Data: map[string]any{"skill": s.Name, "resource": rel}}
}

// SkillTools is what an invoked skill's allowed-tools leave of ultra's
// tools: nil when it names none (nothing is narrowed).
func SkillTools(s skills.Skill) []string {
	if len(s.AllowedTools) == 0 {
		return nil
	}
	out := []string{}
	for _, e := range s.AllowedTools {
		if t := hooks.UltraName(e); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// SkillScopes are the entries of an invoked skill's allowed-tools that
// allow a tool for some calls only ("Bash(git diff:*)", "Edit(docs/**)"),
// for a tool no entry allows whole: its calls must match one of them.
func SkillScopes(s skills.Skill) []string {
	whole := map[string]bool{}
	for _, e := range s.AllowedTools {
		if !strings.Contains(e, "(") {
			whole[hooks.UltraName(e)] = true
		}
	}
	var out []string
	for _, e := range s.AllowedTools {
		if strings.Contains(e, "(") && !whole[hooks.UltraName(e)] && rules.CheckTool(e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// skillScoped refuses call c when the invoked skill allows its tool for
// some calls only (SkillScopes) and c is none of them.
func (r *runner) skillScoped(c llm.ToolCall) *refusal {
	if len(r.st.SkillScopes) == 0 {
		return nil
	}
	var set rules.Set
	for _, e := range r.st.SkillScopes {
		if rule, err := rules.Parse(rules.Allow, e, "the skill's allowed-tools", "/"); err == nil {
			set.Rules = append(set.Rules, rule)
		}
	}
	if !set.Covers(c.Name) {
		return nil
	}
	call, ok := r.ruleCall(c)
	if ok && set.Decide(call).Kind == rules.Allow {
		return nil
	}
	return &refusal{layer: LayerPhaseGuard, reason: fmt.Sprintf("the skill the person invoked allows %s only as: %s (its allowed-tools)",
		c.Name, strings.Join(r.st.SkillScopes, ", "))}
}

// narrowed says an invoked skill's allowed-tools leave out tool name.
// ultra's workflow tools (phase, verify, goals, review, …) are never
// left out: they are how a run ends.
func (r *runner) narrowed(name string) bool {
	if r.st.SkillTools == nil {
		return false
	}
	if _, workflow := r.tools[name].(funcTool); workflow {
		return false
	}
	for _, t := range r.st.SkillTools {
		if t == name || (strings.HasPrefix(t, "mcp__") && strings.Count(t, "__") == 1 && strings.HasPrefix(name, t+"__")) {
			return false
		}
	}
	return true
}
