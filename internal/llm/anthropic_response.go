package llm

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
)

// anthropicAssembler builds a Response from streamed Messages events,
// forwarding each fragment to onDelta as it arrives. Thinking blocks are
// kept apart from the text, in Response.Thinking.
type anthropicAssembler struct {
	onDelta func(Delta)
	text    strings.Builder
	calls   []ToolCall
	slots   map[int64]int // content block index -> position in calls
	think   []Thinking
	tslots  map[int64]int // content block index -> position in think
	usage   Usage
	stop    string
	model   string
	stopped bool // message_stop arrived
}

func newAnthropicAssembler(onDelta func(Delta)) *anthropicAssembler {
	return &anthropicAssembler{onDelta: onDelta, slots: map[int64]int{}, tslots: map[int64]int{}}
}

// add folds one event in.
func (a *anthropicAssembler) add(ev anthropic.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		if ev.Message.Model != "" {
			a.model = string(ev.Message.Model)
		}
		u := ev.Message.Usage
		a.usage = Usage{
			InputTokens:      u.InputTokens,
			OutputTokens:     u.OutputTokens,
			CacheReadTokens:  u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens,
		}
	case "content_block_start":
		b := ev.ContentBlock
		switch b.Type {
		case "text":
			a.addText(b.Text)
		case "tool_use":
			pos := len(a.calls)
			a.calls = append(a.calls, ToolCall{ID: b.ID, Name: b.Name})
			a.slots[ev.Index] = pos
			a.onDelta(Delta{Kind: DeltaToolCall, ToolIndex: pos, ToolID: b.ID, ToolName: b.Name})
		case "thinking":
			a.tslots[ev.Index] = len(a.think)
			a.think = append(a.think, Thinking{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			a.think = append(a.think, Thinking{Redacted: b.Data})
		}
	case "content_block_delta":
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			a.addText(d.Text)
		case "input_json_delta":
			pos, ok := a.slots[ev.Index]
			if !ok || d.PartialJSON == "" {
				return
			}
			a.calls[pos].Arguments += d.PartialJSON
			a.onDelta(Delta{Kind: DeltaToolCall, ToolIndex: pos, Text: d.PartialJSON})
		case "thinking_delta":
			if pos, ok := a.tslots[ev.Index]; ok {
				a.think[pos].Text += d.Thinking
			}
		case "signature_delta":
			if pos, ok := a.tslots[ev.Index]; ok {
				a.think[pos].Signature += d.Signature
			}
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = string(ev.Delta.StopReason)
		}
		// Usage in message_delta is cumulative; input and cache counts are
		// repeated there by newer servers, and only output grows.
		u := ev.Usage
		if u.JSON.OutputTokens.Valid() {
			a.usage.OutputTokens = u.OutputTokens
		}
		if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
			a.usage.InputTokens = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() && u.CacheReadInputTokens > 0 {
			a.usage.CacheReadTokens = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() && u.CacheCreationInputTokens > 0 {
			a.usage.CacheWriteTokens = u.CacheCreationInputTokens
		}
	case "message_stop":
		a.stopped = true
	}
}

func (a *anthropicAssembler) addText(s string) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	a.onDelta(Delta{Kind: DeltaText, Text: s})
}

// result returns the assembled answer. A stream that ended without
// message_stop or a stop reason was cut short (a dropped connection, a
// proxy timeout) even when it ended cleanly, so its content cannot be
// trusted.
func (a *anthropicAssembler) result() (*Response, error) {
	if !a.stopped || a.stop == "" {
		return nil, &Error{Provider: anthropicName, Message: "stream ended without message_stop and a stop reason", Retryable: true}
	}
	for i := range a.calls {
		if a.calls[i].Arguments == "" {
			// A call without parameters streams no fragment.
			a.calls[i].Arguments = "{}"
			a.onDelta(Delta{Kind: DeltaToolCall, ToolIndex: i, Text: "{}"})
		}
	}
	a.onDelta(Delta{Kind: DeltaUsage, Usage: a.usage})
	ensureIDs(a.calls)
	return &Response{
		Text:       a.text.String(),
		ToolCalls:  a.calls,
		Usage:      a.usage,
		StopReason: a.stop,
		Model:      a.model,
		Thinking:   a.think,
	}, nil
}

// fromAnthropicMessage converts a non-streamed answer, replaying it to
// onDelta as one fragment per part so callers see the same events in both
// modes.
func fromAnthropicMessage(m *anthropic.Message, onDelta func(Delta)) (*Response, error) {
	if m == nil || m.StopReason == "" {
		return nil, &Error{Provider: anthropicName, Message: "response has no stop reason", Retryable: true}
	}
	r := &Response{StopReason: string(m.StopReason), Model: string(m.Model)}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := "{}"
			var str string
			if in := bytes.TrimSpace(b.Input); len(in) > 0 && string(in) != "null" {
				var buf bytes.Buffer
				if json.Unmarshal(in, &str) == nil {
					// Not an object: the model's text as it came (proxies
					// and the scripted server send broken input this way).
					args = str
				} else if json.Compact(&buf, in) == nil {
					args = buf.String()
				} else {
					args = string(in)
				}
			}
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		case "thinking":
			r.Thinking = append(r.Thinking, Thinking{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			r.Thinking = append(r.Thinking, Thinking{Redacted: b.Data})
		}
	}
	r.Text = text.String()
	if r.Text != "" {
		onDelta(Delta{Kind: DeltaText, Text: r.Text})
	}
	for i, c := range r.ToolCalls {
		onDelta(Delta{Kind: DeltaToolCall, ToolIndex: i, ToolID: c.ID, ToolName: c.Name, Text: c.Arguments})
	}
	u := m.Usage
	r.Usage = Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
	onDelta(Delta{Kind: DeltaUsage, Usage: r.Usage})
	ensureIDs(r.ToolCalls)
	return r, nil
}
