package llm

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"

	"google.golang.org/genai"
)

// geminiCallIDs numbers the function calls Gemini sent without an id.
var geminiCallIDs atomic.Int64

// geminiAssembler builds a Response from the answers of one call (one
// for generateContent, a sequence of chunks for the stream), forwarding
// each fragment to onDelta as it arrives. Gemini sends function calls
// whole, so each becomes one DeltaToolCall with its id, name and
// arguments.
type geminiAssembler struct {
	answer
	signatures map[string][]byte
	finish     genai.FinishReason
	blocked    string // promptFeedback.blockReason
	candidates bool
}

func newGeminiAssembler(onDelta func(Delta)) *geminiAssembler {
	return &geminiAssembler{answer: answer{onDelta: onDelta}, signatures: map[string][]byte{}}
}

// add folds one answer in. Only the first candidate counts (ultra never
// asks for more than one); thought parts are skipped.
func (a *geminiAssembler) add(res *genai.GenerateContentResponse) {
	if res == nil {
		return
	}
	if res.ModelVersion != "" {
		a.model = res.ModelVersion
	}
	// Each chunk repeats the usage so far; the last one wins.
	if u := res.UsageMetadata; u != nil {
		cached := int64(u.CachedContentTokenCount)
		a.usage = Usage{
			InputTokens:     max(int64(u.PromptTokenCount)-cached, 0),
			OutputTokens:    int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			CacheReadTokens: cached,
		}
		a.haveUsage = true
	}
	if f := res.PromptFeedback; f != nil && f.BlockReason != "" {
		a.blocked = string(f.BlockReason)
		if f.BlockReasonMessage != "" {
			a.blocked += ": " + f.BlockReasonMessage
		}
	}
	for _, c := range res.Candidates {
		if c == nil || c.Index != 0 {
			continue
		}
		a.candidates = true
		if c.Content != nil {
			for _, part := range c.Content.Parts {
				a.addPart(part)
			}
		}
		if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
			a.finish = c.FinishReason
		}
	}
}

func (a *geminiAssembler) addPart(part *genai.Part) {
	switch {
	case part == nil || part.Thought:
	case part.FunctionCall != nil:
		fc := part.FunctionCall
		id := fc.ID
		if id == "" {
			id = "call_" + strconv.FormatInt(geminiCallIDs.Add(1), 10)
		}
		args := "{}"
		if fc.Args != nil {
			if b, err := json.Marshal(fc.Args); err == nil {
				args = string(b)
			}
		}
		if len(part.ThoughtSignature) > 0 {
			a.signatures[id] = part.ThoughtSignature
		}
		a.addCall(ToolCall{ID: id, Name: fc.Name, Arguments: args})
	default:
		a.addText(part.Text)
	}
}

// result returns the assembled answer. An answer cut short (no candidate,
// no finish reason) is a retryable failure: a stream that just stops is not
// trusted. A prompt Gemini refused to answer is not retryable.
func (a *geminiAssembler) result(model string) (*Response, error) {
	if a.finish == "" {
		if a.blocked != "" {
			return nil, &Error{Provider: geminiName, Message: "the prompt was blocked (" + a.blocked + ")"}
		}
		msg := "the answer ended without a finish reason"
		if !a.candidates {
			msg = "the answer had no candidates"
		}
		return nil, &Error{Provider: geminiName, Message: msg, Retryable: true}
	}
	if a.model == "" {
		a.model = model
	}
	// Every call has an id already (addPart makes one up), so response
	// adds none.
	a.stop = geminiStopReason(a.finish, len(a.calls) > 0)
	return a.response(), nil
}

// geminiStopReason names a finish reason in the words the other adapters
// use where they mean the same.
func geminiStopReason(r genai.FinishReason, calls bool) string {
	switch r {
	case genai.FinishReasonStop:
		if calls {
			return "tool_calls"
		}
		return "stop"
	case genai.FinishReasonMaxTokens:
		return "length"
	}
	return strings.ToLower(string(r))
}
