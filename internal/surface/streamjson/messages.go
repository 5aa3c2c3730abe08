package streamjson

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
)

// The messages, in Claude Code's field names. Ultra's own facts are in
// the field "ultra" of each.
type (
	Init struct {
		Type           string      `json:"type"`
		Subtype        string      `json:"subtype"`
		SessionID      string      `json:"session_id"`
		Cwd            string      `json:"cwd"`
		Model          string      `json:"model"`
		Tools          []string    `json:"tools"`
		MCPServers     []MCPServer `json:"mcp_servers"`
		PermissionMode string      `json:"permissionMode"`
		APIKeySource   string      `json:"apiKeySource"`
		Ultra          *InitFacts  `json:"ultra,omitempty"`
	}
	MCPServer struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	}
	InitFacts struct {
		RunID string     `json:"run_id"`
		Axes  *axes.Axes `json:"axes,omitempty"`
	}
	Assistant struct {
		Type            string           `json:"type"`
		Message         AssistantMessage `json:"message"`
		ParentToolUseID *string          `json:"parent_tool_use_id"`
		SessionID       string           `json:"session_id"`
		Ultra           *MsgFacts        `json:"ultra,omitempty"`
	}
	AssistantMessage struct {
		ID         string  `json:"id"`
		Type       string  `json:"type"`
		Role       string  `json:"role"`
		Model      string  `json:"model"`
		Content    []Block `json:"content"`
		StopReason *string `json:"stop_reason"`
		Usage      *Usage  `json:"usage"`
	}
	User struct {
		Type            string      `json:"type"`
		Message         UserMessage `json:"message"`
		ParentToolUseID *string     `json:"parent_tool_use_id"`
		SessionID       string      `json:"session_id"`
		Ultra           *MsgFacts   `json:"ultra,omitempty"`
	}
	UserMessage struct {
		Role    string  `json:"role"`
		Content []Block `json:"content"`
	}
	// Block is an Anthropic content block: text, thinking, tool_use or
	// tool_result.
	Block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		Thinking  string          `json:"thinking,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   string          `json:"content,omitempty"`
		IsError   *bool           `json:"is_error,omitempty"`
	}
	// MsgFacts say where in the run a message was made.
	MsgFacts struct {
		Phase string `json:"phase,omitempty"`
		Turn  int    `json:"turn,omitempty"`
	}
	Usage struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	}
	Result struct {
		Type          string   `json:"type"`
		Subtype       string   `json:"subtype"`
		IsError       bool     `json:"is_error"`
		DurationMS    int64    `json:"duration_ms"`
		DurationAPIMS int64    `json:"duration_api_ms"`
		NumTurns      int      `json:"num_turns"`
		Result        string   `json:"result"`
		SessionID     string   `json:"session_id"`
		TotalCostUSD  float64  `json:"total_cost_usd"`
		Usage         Usage    `json:"usage"`
		Errors        []string `json:"errors,omitempty"`
		Ultra         Facts    `json:"ultra"`
	}
	// Facts are ultra's own account of how the run ended.
	Facts struct {
		RunID    string     `json:"run_id"`
		Status   string     `json:"status"` // complete, escalated, budget_exhausted, …
		Reason   string     `json:"reason"`
		ExitCode int        `json:"exit_code"`
		Phase    string     `json:"phase,omitempty"` // the final phase
		Mode     string     `json:"mode,omitempty"`
		Gate     *Gate      `json:"gate,omitempty"` // the last gate decision
		Goals    []GoalFact `json:"goals,omitempty"`
		Review   string     `json:"review,omitempty"`
		Commit   string     `json:"commit,omitempty"`
		Branch   string     `json:"branch,omitempty"`
	}
	// Gate is a gate decision in short.
	Gate struct {
		Decision int    `json:"decision,omitempty"`
		Status   string `json:"status"`
		Reason   string `json:"reason,omitempty"`
		Passed   int    `json:"passed"`
		Failed   int    `json:"failed"`
		Tree     string `json:"tree,omitempty"`
		File     string `json:"file,omitempty"`
	}
	// GoalFact is a goal with the last status of each of its criteria.
	GoalFact struct {
		Goal     string            `json:"goal"`
		Criteria map[string]string `json:"criteria"`
	}
)

func usageOf(u event.Usage) Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheCreationInputTokens: u.CacheWriteTokens, CacheReadInputTokens: u.CacheReadTokens}
}

// Subtype is the result's subtype for a run that ended with status and
// reason: success only for a complete run; a budget that ran out is
// error_max_turns or error_max_budget_usd when it was the turns or the
// cost, and anything else (escalated, failed, waiting for a person,
// interrupted) is error_during_execution.
func Subtype(status, reason string) string {
	switch {
	case status == "complete":
		return "success"
	case status == "budget_exhausted" && strings.HasPrefix(reason, "turn budget"):
		return "error_max_turns"
	case status == "budget_exhausted" && strings.HasPrefix(reason, "cost budget"):
		return "error_max_budget_usd"
	}
	return "error_during_execution"
}

func (r *Renderer) result(e event.Event, d event.RunFinishedData) Result {
	sub := Subtype(d.Status, d.Reason)
	text := r.answer
	if text == "" {
		text = r.lastText
	}
	if text == "" || sub != "success" {
		text = d.Reason
	}
	res := Result{Type: "result", Subtype: sub, IsError: sub != "success", NumTurns: d.Turns, Result: text,
		SessionID: r.run, TotalCostUSD: d.Cost, Usage: usageOf(d.Usage),
		DurationAPIMS: r.apiTime.Milliseconds()}
	if !r.start.IsZero() {
		res.DurationMS = e.Time.Sub(r.start).Milliseconds()
	} else if w, err := time.ParseDuration(d.Wall); err == nil {
		res.DurationMS = w.Milliseconds()
	}
	if res.IsError {
		res.Errors = []string{d.Reason}
	}
	f := Facts{RunID: r.run, Status: d.Status, Reason: d.Reason, ExitCode: d.ExitCode, Phase: r.phase, Gate: r.gate, Review: r.review}
	if r.axes != nil {
		f.Mode = r.axes.Mode
	}
	if r.commit != nil {
		f.Commit, f.Branch = r.commit.Commit, r.commit.Branch
	}
	for _, g := range r.goalOrder {
		f.Goals = append(f.Goals, GoalFact{Goal: g, Criteria: r.goals[g]})
	}
	res.Ultra = f
	return res
}
