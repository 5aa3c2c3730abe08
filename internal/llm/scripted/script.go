package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Script is what the server answers, step by step. See the package
// documentation for the JSON format.
type Script struct {
	// Model is the name /v1/models lists and answers carry when a request
	// names none. Default "scripted".
	Model string `json:"model,omitempty"`
	// Models are the names /v1/models lists, when it should list others
	// than Model (a server with several models, or one without the model
	// a run asks for). Default: Model alone.
	Models []string `json:"models,omitempty"`
	// Steps answer consecutive requests.
	Steps []Step `json:"steps"`
	// Lanes answer the requests of conversations apart from Steps: a
	// request whose first user message contains a lane's Match takes the
	// lane's next step (the first lane that matches), so that several
	// runs talking to one server at once (a parallel run's workers) each
	// follow their own script.
	Lanes []Lane `json:"lanes,omitempty"`
	// OnExhausted is "error" (the default) or "text".
	OnExhausted string `json:"on_exhausted,omitempty"`
}

// Lane is the script of the conversations whose first user message
// contains Match.
type Lane struct {
	Match string `json:"match"`
	Steps []Step `json:"steps"`
}

// Step is one scripted answer.
type Step struct {
	Text         string     `json:"text,omitempty"`
	Thinking     string     `json:"thinking,omitempty"` // Anthropic wire only
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"`
	Usage        *Usage     `json:"usage,omitempty"`
	Status       int        `json:"status,omitempty"`
	Error        string     `json:"error,omitempty"`
	RetryAfter   int        `json:"retry_after,omitempty"` // seconds
	DelayMS      int        `json:"delay_ms,omitempty"`
	Repeat       int        `json:"repeat,omitempty"`
	ChunkSize    int        `json:"chunk_size,omitempty"`
	ChunkDelayMS int        `json:"chunk_delay_ms,omitempty"`
	Truncate     bool       `json:"truncate,omitempty"`
}

// ToolCall is one scripted tool call. Arguments is a JSON object;
// RawArguments, when set, is sent verbatim instead.
type ToolCall struct {
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	RawArguments *string         `json:"raw_arguments,omitempty"`
}

// Usage is the token count a step reports.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	CachedTokens     int64 `json:"cached_tokens,omitempty"`
}

// Exhaustion behaviours.
const (
	ExhaustedError = "error"
	ExhaustedText  = "text"
)

// LoadScript reads and validates the script in the file at path. Errors
// name the file and, where they can, the step and field at fault, e.g.
// `script.json: step 3: tool_calls[0]: missing "name"`.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScript decodes and validates a script. Unknown fields are errors.
func ParseScript(data []byte) (*Script, error) {
	var top struct {
		Model  string            `json:"model"`
		Models []string          `json:"models"`
		Steps  []json.RawMessage `json:"steps"`
		Lanes  []struct {
			Match string            `json:"match"`
			Steps []json.RawMessage `json:"steps"`
		} `json:"lanes"`
		OnExhausted string `json:"on_exhausted"`
	}
	if err := decodeStrict(data, &top); err != nil {
		return nil, err
	}
	steps := func(where string, raws []json.RawMessage) ([]Step, error) {
		out := make([]Step, len(raws))
		for i, raw := range raws {
			if err := decodeStrict(raw, &out[i]); err != nil {
				return nil, fmt.Errorf("%sstep %d: %w", where, i, err)
			}
		}
		return out, nil
	}
	s := &Script{Model: top.Model, Models: top.Models, OnExhausted: top.OnExhausted}
	var err error
	if s.Steps, err = steps("", top.Steps); err != nil {
		return nil, err
	}
	for i, l := range top.Lanes {
		ls, err := steps(fmt.Sprintf("lane %d: ", i), l.Steps)
		if err != nil {
			return nil, err
		}
		s.Lanes = append(s.Lanes, Lane{Match: l.Match, Steps: ls})
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeStrict decodes one JSON value, rejecting unknown fields and
// trailing data, and places syntax errors by line and column.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return errors.New("unexpected data after the JSON value")
		}
		return nil
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := position(data, syn.Offset)
		return fmt.Errorf("line %d, column %d: %v", line, col, err)
	}
	if errors.Is(err, io.EOF) {
		return errors.New("empty script")
	}
	return err
}

// position converts a byte offset to a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	offset = min(offset, int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}

// Validate checks a script, for example one built in code.
func (s *Script) Validate() error {
	switch s.OnExhausted {
	case "", ExhaustedError, ExhaustedText:
	default:
		return fmt.Errorf(`"on_exhausted" is %q, want "error" or "text"`, s.OnExhausted)
	}
	if len(s.Steps) == 0 {
		return errors.New(`no "steps"`)
	}
	for i := range s.Steps {
		if err := s.Steps[i].validate(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	for i, l := range s.Lanes {
		if l.Match == "" {
			return fmt.Errorf(`lane %d: no "match"`, i)
		}
		if len(l.Steps) == 0 {
			return fmt.Errorf(`lane %d: no "steps"`, i)
		}
		for j := range l.Steps {
			if err := l.Steps[j].validate(); err != nil {
				return fmt.Errorf("lane %d: step %d: %w", i, j, err)
			}
		}
	}
	return nil
}

func (st *Step) validate() error {
	for _, f := range []struct {
		name  string
		value int
	}{{"repeat", st.Repeat}, {"delay_ms", st.DelayMS}, {"chunk_size", st.ChunkSize}, {"chunk_delay_ms", st.ChunkDelayMS}, {"retry_after", st.RetryAfter}} {
		if f.value < 0 {
			return fmt.Errorf("%q is %d, want 0 or more", f.name, f.value)
		}
	}
	if st.Status != 0 {
		if st.Status < 400 || st.Status > 599 {
			return fmt.Errorf(`"status" is %d, want an error status (400-599)`, st.Status)
		}
		if st.Text != "" || st.Thinking != "" || len(st.ToolCalls) > 0 || st.Usage != nil || st.FinishReason != "" || st.Truncate || st.ChunkSize != 0 || st.ChunkDelayMS != 0 {
			return errors.New(`a "status" step answers with an error only: drop "text", "thinking", "tool_calls", "usage", "finish_reason", "truncate", "chunk_size" and "chunk_delay_ms"`)
		}
		return nil
	}
	if st.Error != "" {
		return errors.New(`"error" needs a "status" (400-599)`)
	}
	if st.RetryAfter != 0 {
		return errors.New(`"retry_after" needs a "status" (400-599)`)
	}
	if st.Text == "" && len(st.ToolCalls) == 0 && !st.Truncate && st.FinishReason == "" {
		return errors.New(`empty step: give "text", "tool_calls", "status", or "finish_reason" alone for an empty answer`)
	}
	for j, tc := range st.ToolCalls {
		if err := tc.validate(); err != nil {
			return fmt.Errorf("tool_calls[%d]: %w", j, err)
		}
	}
	return nil
}

func (tc *ToolCall) validate() error {
	if tc.Name == "" {
		return errors.New(`missing "name"`)
	}
	if tc.Arguments != nil && tc.RawArguments != nil {
		return errors.New(`give "arguments" or "raw_arguments", not both`)
	}
	if tc.Arguments != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(tc.Arguments, &obj); err != nil || obj == nil {
			return errors.New(`"arguments" must be a JSON object (use "raw_arguments" to send anything else)`)
		}
	}
	return nil
}

// arguments is the argument text the call is answered with.
func (tc *ToolCall) arguments() string {
	switch {
	case tc.RawArguments != nil:
		return *tc.RawArguments
	case tc.Arguments != nil:
		var buf bytes.Buffer
		if json.Compact(&buf, tc.Arguments) == nil {
			return buf.String()
		}
		return string(tc.Arguments)
	default:
		return "{}"
	}
}

// times is how many requests a step answers.
func (st *Step) times() int { return max(st.Repeat, 1) }
