package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/hooks"
	"github.com/ultra-dev/ultra/internal/llm"
)

// Compaction keeps a long run inside the model's context window. When a
// request would fill more than compactAt of the window, old tool outputs
// are pruned first; if that is not enough, the older turns are summarised
// by the model (in fast mode) into a structured summary. The system prompt,
// the plan, the latest gate result and the recent turns are always kept.
const (
	compactAt      = 0.8
	keepRecent     = 8 // messages kept as they are
	defaultContext = 128_000
	prunedNote     = "[ultra pruned this tool output (%d bytes) to save context; run the tool again if you need it]"
)

// contextWindow is the model's window in tokens.
func (r *runner) contextWindow() int {
	if r.o.ContextWindow > 0 {
		return r.o.ContextWindow
	}
	return defaultContext
}

// estimate is the request's size in tokens.
func estimate(req llm.Request) int {
	n := llm.CountTokens(req.System)
	for _, t := range req.Tools {
		n += llm.CountTokens(t.Description) + llm.CountTokens(string(t.Parameters)) + 8
	}
	for _, m := range req.Messages {
		n += llm.MessageTokens(m)
	}
	return n
}

// compact shrinks the history when req is too close to the window, and
// returns the request to send.
func (r *runner) compact(ctx context.Context, req llm.Request) llm.Request {
	limit := int(float64(r.contextWindow()) * compactAt)
	if requestBytes(req)/2 <= limit {
		return req // far from the window: no need to count
	}
	before := estimate(req)
	r.fireHooks(ctx, hooks.PreCompact, "auto", map[string]any{"trigger": "auto", "custom_instructions": ""})
	// 1. Prune tool outputs, oldest first, until the request fits; the
	// results of the latest answer are kept.
	latest := r.lastAnswer()
	need := before - limit
	freed, pruned := 0, 0
	for i := 0; i < latest && need > 0; i++ {
		m := &r.history[i]
		if m.Role != llm.RoleTool || len(m.Content) <= 200 || strings.HasPrefix(m.Content, "[ultra pruned") {
			continue
		}
		was := llm.MessageTokens(*m)
		freed += len(m.Content)
		m.Content = fmt.Sprintf(prunedNote, len(m.Content))
		need -= was - llm.MessageTokens(*m)
		pruned++
	}
	req = r.request()
	after := estimate(req)
	if pruned > 0 {
		r.emit(event.Compaction, event.CompactionData{Kind: "prune", Before: before, After: after, Window: r.contextWindow(),
			Detail: fmt.Sprintf("pruned %d old tool outputs (%d bytes)", pruned, freed)})
	}
	// 2. Summarise the older turns.
	cut := r.recentStart()
	if after <= limit || cut < 2 {
		return req
	}
	summary, err := r.summarise(ctx, r.history[:cut])
	if err != nil {
		r.emit(event.Warning, event.WarningData{Message: "compaction could not summarise: " + err.Error()})
		return req
	}
	r.history = append([]llm.Message{{Role: llm.RoleUser, Content: summary}}, r.history[cut:]...)
	req = r.request()
	r.emit(event.Compaction, event.CompactionData{Kind: "summary", Before: after, After: estimate(req), Window: r.contextWindow(),
		Detail: fmt.Sprintf("summarised %d older messages", cut)})
	return req
}

// lastAnswer is the index of the latest assistant message (len when none).
func (r *runner) lastAnswer() int {
	for i := len(r.history) - 1; i >= 0; i-- {
		if r.history[i].Role == llm.RoleAssistant {
			return i
		}
	}
	return len(r.history)
}

// recentStart is where the recent turns begin: keepRecent messages from
// the end, moved back so that no tool result is separated from its call.
func (r *runner) recentStart() int {
	i := max(0, len(r.history)-keepRecent)
	for i > 0 && r.history[i].Role == llm.RoleTool {
		i--
	}
	return i
}

// summarise asks the model (fast mode) for a structured summary of older
// turns; ultra adds what it knows itself (task, plan, phase, latest gate).
func (r *runner) summarise(ctx context.Context, older []llm.Message) (string, error) {
	var b strings.Builder
	for _, m := range older {
		fmt.Fprintf(&b, "[%s] %s\n", m.Role, clipText(m.Content, 2000))
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "  call %s %s\n", c.Name, clipText(c.Arguments, 300))
		}
	}
	model := r.o.Models["fast"]
	if model == "" {
		model = r.modelFor()
	}
	req := llm.Request{Model: model, MaxTokens: 2000,
		System:   "You summarise an autonomous coding agent's earlier work so it can go on without it. Answer with these sections: Goal; Decisions; Files touched; Current state; Open failures. Be factual and brief.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Earlier work:\n" + b.String()}}}
	resp, err := r.model.Stream(ctx, req, nil)
	if err != nil {
		return "", err
	}
	u := &r.st.Phase.Used
	u.InputTokens += resp.Usage.InputTokens
	u.OutputTokens += resp.Usage.OutputTokens
	var s strings.Builder
	s.WriteString("<ultra-summary>\nThe earlier part of this run was compacted.\n")
	fmt.Fprintf(&s, "Task: %s\n", r.row.Task)
	if r.st.Phase.Plan != "" {
		fmt.Fprintf(&s, "Plan:\n%s\n", r.st.Phase.Plan)
	}
	if v := lastVerification(RunDir(r.o.StateRoot, r.row.ID)); v != nil {
		fmt.Fprintf(&s, "Latest gate: %s — %s\n", v.Status, v.Reason)
	}
	fmt.Fprintf(&s, "Summary of the earlier turns:\n%s\n</ultra-summary>", strings.TrimSpace(resp.Text))
	return s.String(), nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// requestBytes is the size of a request's text; a token is rarely less
// than two bytes, so half of it bounds the tokens from above.
func requestBytes(req llm.Request) int {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Description) + len(t.Parameters)
	}
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	return n
}
