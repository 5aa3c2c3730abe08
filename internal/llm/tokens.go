package llm

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
)

// CountTokens estimates the tokens of s with an embedded BPE tokenizer
// (cl100k; nothing is downloaded). Providers tokenize differently, so it
// is an estimate, good enough to know how close a request is to a
// model's context window; it falls back to four bytes a token.
func CountTokens(s string) int {
	codecOnce.Do(func() { codec, _ = tokenizer.Get(tokenizer.Cl100kBase) })
	if codec != nil {
		if n, err := codec.Count(s); err == nil {
			return n
		}
	}
	return len(s)/4 + 1
}

// MessageTokens estimates one message, with a small overhead for its role
// and framing.
func MessageTokens(m Message) int {
	n := 4 + CountTokens(m.Content)
	for _, c := range m.ToolCalls {
		n += 4 + CountTokens(c.Name) + CountTokens(c.Arguments)
	}
	return n
}
