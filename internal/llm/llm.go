// Package llm holds the model interface ultra talks to, the provider
// adapters, and the scripted model server used by tests.
package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Role is the author of a message in a conversation.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one call the model asked for. Arguments is the raw JSON text
// the model produced; it may be invalid, and callers must not trust it.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one entry of the conversation history. The system prompt is
// not a message: it travels in Request.System.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // for RoleTool
	ToolName   string     `json:"tool_name,omitempty"`    // for RoleTool
	IsError    bool       `json:"is_error,omitempty"`     // for RoleTool
	// Thinking is the reasoning of an assistant message, as the provider
	// returned it (Response.Thinking). Providers that need it back (the
	// Anthropic API requires the thinking blocks of the last assistant
	// turn with tool use) send it unchanged, ahead of the text and calls.
	Thinking []Thinking `json:"thinking,omitempty"`
}

// Thinking is one block of a model's extended thinking. It must be passed
// back unchanged: Signature and Redacted are opaque values the provider
// verifies.
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Redacted is the data of a redacted_thinking block (encrypted
	// reasoning); Text and Signature are empty then.
	Redacted string `json:"redacted,omitempty"`
}

// ToolSpec describes a tool offered to the model. Parameters is a JSON
// Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one call to the model.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	// ThinkingBudget enables extended thinking with this many tokens of
	// reasoning where the provider supports it; 0 leaves it off.
	ThinkingBudget int
}

// Usage counts the tokens of one response.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
	}
}

// Response is the whole answer of one model call, assembled from the stream.
type Response struct {
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	Usage      Usage      `json:"usage"`
	StopReason string     `json:"stop_reason,omitempty"`
	Model      string     `json:"model,omitempty"`
	// Thinking is the model's reasoning, in order, when it returned any.
	// Store it on the assistant Message so it can be passed back.
	Thinking []Thinking `json:"thinking,omitempty"`
}

// DeltaKind says what a streamed Delta carries.
type DeltaKind int

const (
	DeltaText     DeltaKind = iota // a fragment of answer text
	DeltaToolCall                  // a tool call started (ID, Name) or its arguments grew
	DeltaUsage                     // usage became known
	DeltaThinking                  // a fragment of the model's readable thinking
)

// Delta is one streamed fragment, delivered while the answer is produced.
type Delta struct {
	Kind      DeltaKind
	Text      string // DeltaText, DeltaThinking: the fragment; DeltaToolCall: an argument fragment
	ToolIndex int    // DeltaToolCall: which call of the answer
	ToolID    string // DeltaToolCall: set on the first fragment of a call
	ToolName  string // DeltaToolCall: set on the first fragment of a call
	Usage     Usage  // DeltaUsage
}

// Provider is a model backend. Stream sends req and calls onDelta (which may
// be nil) for every fragment as it arrives, then returns the assembled
// answer. Implementations must be safe for use by one goroutine at a time.
type Provider interface {
	Name() string
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error)
}

// Error is a provider failure with enough context for a person to act on.
type Error struct {
	Provider   string `json:"provider"`
	StatusCode int    `json:"status_code,omitempty"` // HTTP status, 0 when there was none
	Message    string `json:"message"`               // what went wrong
	Retryable  bool   `json:"retryable"`             // retrying later may succeed
	// RetryAfter is how long the server asked to wait before retrying
	// (Retry-After header), 0 when it did not say.
	RetryAfter time.Duration `json:"retry_after,omitempty"`
}

func (e *Error) Error() string {
	if e.StatusCode != 0 {
		return e.Provider + ": HTTP " + itoa(e.StatusCode) + ": " + e.Message
	}
	return e.Provider + ": " + e.Message
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// dispatch is the common start of a provider's Stream: it picks the model
// (the request's, else the configured one), builds the provider's
// parameters, and hands them to send with a non-nil onDelta.
func dispatch[P any](ctx context.Context, provider string, req Request, cfgModel string, onDelta func(Delta),
	build func(Request, string) (P, error), send func(context.Context, P, string, func(Delta)) (*Response, error)) (*Response, error) {
	model := req.Model
	if model == "" {
		model = cfgModel
	}
	if model == "" {
		return nil, &Error{Provider: provider, Message: "no model configured: set the model name"}
	}
	params, err := build(req, model)
	if err != nil {
		return nil, &Error{Provider: provider, Message: err.Error()}
	}
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	return send(ctx, params, model, onDelta)
}
