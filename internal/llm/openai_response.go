package llm

import (
	"strconv"
	"sync/atomic"

	"github.com/openai/openai-go/v3"
)

// assembler builds a Response from streamed chunks, forwarding each
// fragment to onDelta as it arrives.
type assembler struct {
	answer
	slots map[int64]int // wire index -> position in calls
}

func newAssembler(onDelta func(Delta)) *assembler {
	return &assembler{answer: answer{onDelta: onDelta}, slots: map[int64]int{}}
}

// add folds one chunk in. Only the first choice counts (ultra never asks
// for more than one).
func (a *assembler) add(c openai.ChatCompletionChunk) {
	if c.Model != "" {
		a.model = c.Model
	}
	// Some servers repeat usage (groq sends it twice); the last one wins.
	if c.JSON.Usage.Valid() {
		a.usage = usageOf(c.Usage)
		a.haveUsage = true
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		a.addText(ch.Delta.Content)
		a.addText(ch.Delta.Refusal)
		for _, tc := range ch.Delta.ToolCalls {
			a.addToolCall(tc)
		}
		if ch.FinishReason != "" {
			a.stop = ch.FinishReason
		}
	}
}

// addToolCall appends one tool call fragment. The id and name come with the
// first fragment of a call, the arguments in pieces after it.
func (a *assembler) addToolCall(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	pos := a.slot(tc)
	call := &a.calls[pos]
	d := Delta{Kind: DeltaToolCall, ToolIndex: pos, Text: tc.Function.Arguments}
	if call.ID == "" && tc.ID != "" {
		call.ID, d.ToolID = tc.ID, tc.ID
	}
	if call.Name == "" && tc.Function.Name != "" {
		call.Name, d.ToolName = tc.Function.Name, tc.Function.Name
	}
	call.Arguments += tc.Function.Arguments
	if d.Text != "" || d.ToolID != "" || d.ToolName != "" {
		a.onDelta(d)
	}
}

// slot returns the position of the call a fragment belongs to, starting a
// new call when needed. Calls are keyed by their wire index; a fragment
// without an index continues the latest call, and a fragment bringing a
// different id under a known index starts a new call (some servers number
// every call 0).
func (a *assembler) slot(tc openai.ChatCompletionChunkChoiceDeltaToolCall) int {
	last := len(a.calls) - 1
	if !tc.JSON.Index.Valid() {
		if last >= 0 && (tc.ID == "" || tc.ID == a.calls[last].ID) {
			return last
		}
		a.calls = append(a.calls, ToolCall{})
		return last + 1
	}
	if pos, ok := a.slots[tc.Index]; ok {
		id := a.calls[pos].ID
		if tc.ID == "" || id == "" || tc.ID == id {
			return pos
		}
	}
	a.calls = append(a.calls, ToolCall{})
	a.slots[tc.Index] = last + 1
	return last + 1
}

// result returns the assembled answer. A stream that ended without a finish
// reason was cut short (a dropped connection, a proxy timeout) even when it
// ended cleanly, so its content cannot be trusted.
func (a *assembler) result() (*Response, error) {
	if a.stop == "" {
		return nil, &Error{Provider: openAIName, Message: "stream ended without a finish reason", Retryable: true}
	}
	return a.response(), nil
}

// fromCompletion converts a non-streamed answer, replaying it to onDelta as
// one fragment per part so callers see the same events in both modes.
func fromCompletion(c *openai.ChatCompletion, onDelta func(Delta)) (*Response, error) {
	if c == nil || len(c.Choices) == 0 {
		return nil, &Error{Provider: openAIName, Message: "response has no choices", Retryable: true}
	}
	ch := c.Choices[0]
	for _, choice := range c.Choices {
		if choice.Index == 0 {
			ch = choice
			break
		}
	}
	a := &answer{onDelta: onDelta, stop: ch.FinishReason, model: c.Model}
	a.addText(ch.Message.Content + ch.Message.Refusal)
	for _, tc := range ch.Message.ToolCalls {
		call := ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if tc.Type == "custom" {
			call.Name, call.Arguments = tc.Custom.Name, tc.Custom.Input
		}
		a.addCall(call)
	}
	if c.JSON.Usage.Valid() {
		a.usage, a.haveUsage = usageOf(c.Usage), true
	}
	return a.response(), nil
}

// generatedIDs numbers the tool call ids made up for servers that send
// none.
var generatedIDs atomic.Int64

// ensureIDs gives every call an id: tool results are matched to calls by
// id, and a few servers leave it out.
func ensureIDs(calls []ToolCall) {
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = "call_ultra_" + strconv.FormatInt(generatedIDs.Add(1), 10)
		}
	}
}

// usageOf maps OpenAI usage. InputTokens is prompt_tokens as reported,
// which includes the cached part that CacheReadTokens repeats.
func usageOf(u openai.CompletionUsage) Usage {
	return Usage{
		InputTokens:      u.PromptTokens,
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
	}
}
