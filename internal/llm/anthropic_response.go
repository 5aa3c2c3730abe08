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
	answer
	slots   map[int64]int // content block index -> position in calls
	think   []Thinking
	tslots  map[int64]int // content block index -> position in think
	stopped bool          // message_stop arrived
}

func newAnthropicAssembler(onDelta func(Delta)) *anthropicAssembler {
	// The usage is always known: message_start carries it.
	return &anthropicAssembler{answer: answer{onDelta: onDelta, haveUsage: true}, slots: map[int64]int{}, tslots: map[int64]int{}}
}

// add folds one event in.
func (a *anthropicAssembler) add(ev anthropic.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		if ev.Message.Model != "" {
			a.model = string(ev.Message.Model)
		}
		a.usage = anthropicUsage(ev.Message.Usage)
	case "content_block_start":
		b := ev.ContentBlock
		switch b.Type {
		case "text":
			a.addText(b.Text)
		case "tool_use":
			a.slots[ev.Index] = a.addCall(ToolCall{ID: b.ID, Name: b.Name})
		case "thinking":
			a.tslots[ev.Index] = len(a.think)
			a.think = append(a.think, Thinking{Text: b.Thinking, Signature: b.Signature})
			a.thinking(b.Thinking)
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
				a.thinking(d.Thinking)
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
	r := a.response()
	r.Thinking = a.think
	return r, nil
}

// fromAnthropicMessage converts a non-streamed answer, replaying it to
// onDelta as one fragment per part so callers see the same events in both
// modes.
func fromAnthropicMessage(m *anthropic.Message, onDelta func(Delta)) (*Response, error) {
	if m == nil || m.StopReason == "" {
		return nil, &Error{Provider: anthropicName, Message: "response has no stop reason", Retryable: true}
	}
	var text strings.Builder
	var calls []ToolCall
	var thinking []Thinking
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
			calls = append(calls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		case "thinking":
			thinking = append(thinking, Thinking{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			thinking = append(thinking, Thinking{Redacted: b.Data})
		}
	}
	a := &answer{onDelta: onDelta, usage: anthropicUsage(m.Usage), haveUsage: true, stop: string(m.StopReason), model: string(m.Model)}
	for _, th := range thinking {
		a.thinking(th.Text)
	}
	a.addText(text.String())
	for _, c := range calls {
		a.addCall(c)
	}
	r := a.response()
	r.Thinking = thinking
	return r, nil
}

// anthropicUsage maps Anthropic usage, whose input_tokens excludes the
// cached tokens.
func anthropicUsage(u anthropic.Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}
