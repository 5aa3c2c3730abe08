package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// answer is one step made concrete for one request: ids assigned, usage
// settled.
type answer struct {
	id        string
	model     string
	created   int64
	text      string
	thinking  string // readable thinking, sent before the text on the Anthropic wire
	calls     []call
	finish    string
	usage     wireUsage
	chunkSize int
	chunkGap  time.Duration // between the pieces of a stream
	truncate  bool
}

type call struct {
	id, name, args string
}

// Wire format types, shaped like OpenAI's.
type (
	wireUsage struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		TotalTokens         int64 `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	wireFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	wireToolCall struct {
		Index    *int         `json:"index,omitempty"` // streamed calls only
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type,omitempty"`
		Function wireFunction `json:"function"`
	}
	wireMessage struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
	}
	wireChoice struct {
		Index        int          `json:"index"`
		Message      *wireMessage `json:"message,omitempty"`
		Delta        *wireMessage `json:"delta,omitempty"`
		FinishReason *string      `json:"finish_reason"`
	}
	wireCompletion struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []wireChoice `json:"choices"`
		Usage   *wireUsage   `json:"usage,omitempty"`
	}
)

// newUsage fills in the total.
func newUsage(prompt, completion, cached int64) wireUsage {
	u := wireUsage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	u.PromptTokensDetails.CachedTokens = cached
	return u
}

// writeJSON answers with one chat.completion object.
func (a *answer) writeJSON(w http.ResponseWriter) {
	msg := &wireMessage{Role: "assistant"}
	if a.text != "" || len(a.calls) == 0 {
		msg.Content = &a.text
	}
	for _, c := range a.calls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: c.id, Type: "function", Function: wireFunction{Name: c.name, Arguments: c.args}})
	}
	body, _ := json.Marshal(wireCompletion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		Choices: []wireChoice{{Message: msg, FinishReason: &a.finish}},
		Usage:   &a.usage,
	})
	w.Header().Set("Content-Type", "application/json")
	if a.truncate {
		body = body[:len(body)/2]
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	_, _ = w.Write(body)
}

// writeStream answers with server-sent events: a role chunk, the text and
// tool call pieces, the finish chunk, the usage chunk when asked for, and
// [DONE]. A truncated answer stops after half of the pieces.
func (a *answer) writeStream(ctx context.Context, w http.ResponseWriter, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	empty := ""
	pieces := []*wireMessage{{Role: "assistant", Content: &empty}}
	for _, t := range split(a.text, a.chunkSize) {
		pieces = append(pieces, &wireMessage{Content: &t})
	}
	for i, c := range a.calls {
		index := i
		pieces = append(pieces, &wireMessage{ToolCalls: []wireToolCall{{Index: &index, ID: c.id, Type: "function", Function: wireFunction{Name: c.name}}}})
		for _, frag := range split(c.args, a.chunkSize) {
			pieces = append(pieces, &wireMessage{ToolCalls: []wireToolCall{{Index: &index, Function: wireFunction{Arguments: frag}}}})
		}
	}
	if a.truncate {
		pieces = pieces[:1+len(pieces[1:])/2]
	}
	for i, p := range pieces {
		if i > 0 && !sleep(ctx, a.chunkGap) {
			return
		}
		if !a.event(w, []wireChoice{{Delta: p}}, nil) || ctx.Err() != nil {
			return
		}
	}
	if a.truncate {
		return
	}
	a.event(w, []wireChoice{{Delta: &wireMessage{}, FinishReason: &a.finish}}, nil)
	if includeUsage {
		a.event(w, []wireChoice{}, &a.usage)
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	flush(w)
}

// event writes one chunk and flushes it; false when the client is gone.
func (a *answer) event(w http.ResponseWriter, choices []wireChoice, usage *wireUsage) bool {
	chunk, _ := json.Marshal(wireCompletion{
		ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
		Choices: choices, Usage: usage,
	})
	if _, err := fmt.Fprintf(w, "data: %s\n\n", chunk); err != nil {
		return false
	}
	flush(w)
	return true
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

// split cuts s into pieces of size characters; size 0 means about three
// pieces.
func split(s string, size int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	if size <= 0 {
		size = max((len(r)+2)/3, 1)
	}
	var out []string
	for len(r) > 0 {
		n := min(size, len(r))
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// writeError answers with an OpenAI-style error.
func writeError(w http.ResponseWriter, status int, message string, retryAfter int) {
	if message == "" {
		message = http.StatusText(status)
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": errorType(status), "param": nil, "code": nil,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errorType is the OpenAI error type for a status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// sleep waits d or until ctx ends; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
