package scripted

// The Anthropic Messages endpoint: POST /v1/messages answers from the same
// script, step counter and request log as the Chat Completions endpoint,
// in the Messages wire format.
//
// Steps are written in Chat Completions terms and translated: the finish
// reason "stop" becomes the stop_reason "end_turn", "tool_calls" becomes
// "tool_use" and "length" becomes "max_tokens" (others are sent as given);
// tool call ids are toolu_1, toolu_2, ... (numbered with the chat ids);
// usage reports input_tokens as prompt_tokens minus cached_tokens, and
// cached_tokens as cache_read_input_tokens, as Anthropic counts them.
// Streamed answers are server-sent events (message_start, then per content
// block content_block_start, text_delta or input_json_delta fragments and
// content_block_stop, then message_delta with the stop reason and usage,
// and message_stop); raw_arguments are streamed verbatim as input_json_delta
// fragments, and in a JSON answer a tool input that is not a JSON object is
// sent as a JSON string. A truncated stream stops after half of its
// content events, before message_delta. Errors are Anthropic error bodies,
// {"type":"error","error":{"type":"overloaded_error","message":...}}, with
// the type following the status (529 is overloaded_error).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// anthropicRequest is the part of a Messages request the server reads.
type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"` // a string or text blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// summarize fills the descriptive fields of a log entry. Messages counts
// the system prompt as one message, as the chat endpoint does; LastUser is
// the text of the last user turn that has text blocks (turns carrying only
// tool results are skipped, like tool messages on the chat endpoint).
func (r *anthropicRequest) summarize(e *LoggedRequest) {
	e.Stream, e.Model = r.Stream, r.Model
	e.System = contentText(r.System)
	e.Messages = len(r.Messages)
	if e.System != "" {
		e.Messages++
	}
	e.Tools = make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		e.Tools = append(e.Tools, t.Name)
	}
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		if text := anthropicUserText(m.Content); text != "" {
			e.LastUser = text
			if e.FirstUser == "" {
				e.FirstUser = text
			}
		}
	}
}

// anthropicUserText is the text of a user turn's content: a string, or its
// text blocks joined by newlines.
func anthropicUserText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// anthropicWire is the Messages side.
var anthropicWire = wire{
	decode: func(body []byte, e *LoggedRequest) (*chatRequest, bool, error) {
		var req anthropicRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return &chatRequest{}, false, err
		}
		req.summarize(e)
		return &chatRequest{Model: req.Model}, req.Stream, nil
	},
	fail: writeAnthropicError,
	write: func(ctx context.Context, w http.ResponseWriter, a *answer, _ *chatRequest, stream bool) {
		m := newAnthropicAnswer(a)
		if stream {
			m.writeStream(ctx, w)
			return
		}
		m.writeJSON(w)
	},
}

// messages answers one Messages request with the next step.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) { s.serve(w, r, anthropicWire) }

// anthropicAnswer is an answer in Messages terms.
type anthropicAnswer struct {
	*answer
	id    string
	stop  string
	usage anthropicUsage
}

type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func newAnthropicAnswer(a *answer) *anthropicAnswer {
	m := &anthropicAnswer{answer: a, id: strings.Replace(a.id, "chatcmpl-", "msg_", 1)}
	switch a.finish {
	case "stop":
		m.stop = "end_turn"
	case "tool_calls":
		m.stop = "tool_use"
	case "length":
		m.stop = "max_tokens"
	default:
		m.stop = a.finish
	}
	cached := a.usage.PromptTokensDetails.CachedTokens
	m.usage = anthropicUsage{
		InputTokens:          max(a.usage.PromptTokens-cached, 0),
		CacheReadInputTokens: cached,
		OutputTokens:         a.usage.CompletionTokens,
	}
	return m
}

// scriptedSignature signs the scripted thinking blocks (a client passes
// it back unchanged).
const scriptedSignature = "scripted-signature"

// toolID is the Anthropic-style id of a call.
func toolID(c call) string {
	return "toolu_" + strings.TrimPrefix(c.id, "call_")
}

// blocks is the answer's content as Messages content blocks.
func (m *anthropicAnswer) blocks() []map[string]any {
	var out []map[string]any
	if m.thinking != "" {
		out = append(out, map[string]any{"type": "thinking", "thinking": m.thinking, "signature": scriptedSignature})
	}
	if m.text != "" {
		out = append(out, map[string]any{"type": "text", "text": m.text})
	}
	for _, c := range m.calls {
		var input any = json.RawMessage(c.args)
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(c.args), &obj) != nil || obj == nil {
			input = c.args // not an object: sent as a JSON string
		}
		out = append(out, map[string]any{"type": "tool_use", "id": toolID(c), "name": c.name, "input": input})
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out
}

// writeJSON answers with one message object.
func (m *anthropicAnswer) writeJSON(w http.ResponseWriter) {
	body, _ := json.Marshal(map[string]any{
		"id": m.id, "type": "message", "role": "assistant", "model": m.model,
		"content": m.blocks(), "stop_reason": m.stop, "stop_sequence": nil,
		"usage": m.usage,
	})
	w.Header().Set("Content-Type", "application/json")
	if m.truncate {
		body = body[:len(body)/2]
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	_, _ = w.Write(body)
}

// sse is one server-sent event.
type sse struct {
	name string
	data any
}

// writeStream answers with server-sent events.
func (m *anthropicAnswer) writeStream(ctx context.Context, w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	start := m.usage
	start.OutputTokens = 1
	events := []sse{{"message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": m.id, "type": "message", "role": "assistant", "model": m.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": start,
	}}}}
	index := 0
	block := func(start map[string]any, deltas []map[string]any) {
		events = append(events, sse{"content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": start}})
		for _, d := range deltas {
			events = append(events, sse{"content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d}})
		}
		events = append(events, sse{"content_block_stop", map[string]any{"type": "content_block_stop", "index": index}})
		index++
	}
	if m.thinking != "" {
		var deltas []map[string]any
		for _, t := range split(m.thinking, m.chunkSize) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": t})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": scriptedSignature})
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, deltas)
	}
	if m.text != "" {
		var deltas []map[string]any
		for _, t := range split(m.text, m.chunkSize) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": t})
		}
		block(map[string]any{"type": "text", "text": ""}, deltas)
	}
	for _, c := range m.calls {
		var deltas []map[string]any
		for _, frag := range split(c.args, m.chunkSize) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": frag})
		}
		block(map[string]any{"type": "tool_use", "id": toolID(c), "name": c.name, "input": map[string]any{}}, deltas)
	}
	if m.truncate {
		events = events[:1+len(events[1:])/2]
	} else {
		events = append(events,
			sse{"message_delta", map[string]any{"type": "message_delta",
				"delta": map[string]any{"stop_reason": m.stop, "stop_sequence": nil},
				"usage": map[string]any{"output_tokens": m.usage.OutputTokens}}},
			sse{"message_stop", map[string]any{"type": "message_stop"}})
	}
	for i, ev := range events {
		if i > 0 && !sleep(ctx, m.chunkGap) {
			return
		}
		data, _ := json.Marshal(ev.data)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, data); err != nil || ctx.Err() != nil {
			return
		}
		flush(w)
	}
}

// writeAnthropicError answers with an Anthropic-style error.
func writeAnthropicError(w http.ResponseWriter, status int, message string, retryAfter int) {
	if message == "" {
		message = http.StatusText(status)
		if status == 529 {
			message = "Overloaded"
		}
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{
		"type": anthropicErrorType(status), "message": message,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// anthropicErrorType is the Anthropic error type for a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}
