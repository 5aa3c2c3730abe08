package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/llm"
)

// anthropicProvider is the real Anthropic adapter pointed at the scripted
// server (whose OpenAI-style base URL it accepts).
func anthropicProvider(t *testing.T, baseURL string, stream bool) *llm.Anthropic {
	t.Helper()
	p, err := llm.NewAnthropic(llm.AnthropicConfig{BaseURL: baseURL, APIKey: "k", Model: "claude-fake", Stream: &stream})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func askAnthropic(p *llm.Anthropic, msgs []llm.Message, deltas *[]llm.Delta) (*llm.Response, error) {
	req := llm.Request{System: "you are a test", Messages: msgs, Tools: tools}
	return p.Stream(context.Background(), req, func(d llm.Delta) {
		if deltas != nil {
			*deltas = append(*deltas, d)
		}
	})
}

func user(text string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: text}} }

func TestAnthropicConversation(t *testing.T) {
	bothModes(t, func(t *testing.T, stream bool) {
		srv, url := start(t, conversation, "")
		p := anthropicProvider(t, url, stream)
		want := []llm.Response{
			{Text: "I'll look around.", StopReason: "end_turn"},
			{ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "read", Arguments: `{"file_path":"main.go"}`}}, StopReason: "tool_use"},
			{ToolCalls: []llm.ToolCall{{ID: "toolu_2", Name: "read", Arguments: `{"file_path":"a"}`}, {ID: "toolu_3", Name: "glob", Arguments: `{"pattern":"**/*.go"}`}}, StopReason: "tool_use"},
			{ToolCalls: []llm.ToolCall{{ID: "toolu_4", Name: "edit", Arguments: "{not json"}}, StopReason: "tool_use"},
			{Text: "done", StopReason: "end_turn", Usage: llm.Usage{InputTokens: 40, OutputTokens: 20, CacheReadTokens: 60}},
		}
		for i, w := range want {
			var deltas []llm.Delta
			resp, err := askAnthropic(p, user("step "+string(rune('0'+i))), &deltas)
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if w.Usage == (llm.Usage{}) {
				if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
					t.Errorf("step %d: estimated usage missing: %+v", i, resp.Usage)
				}
				w.Usage = resp.Usage
			}
			w.Model = "claude-fake"
			if !reflect.DeepEqual(*resp, w) {
				t.Errorf("step %d:\n got %+v\nwant %+v", i, *resp, w)
			}
			checkAnthropicDeltas(t, i, resp, deltas, stream)
		}
		log := srv.Requests()
		if len(log) != len(want) {
			t.Fatalf("logged %d requests", len(log))
		}
		for i, e := range log {
			if e.Path != "/v1/messages" || e.Stream != stream || e.Step != i || e.Model != "claude-fake" {
				t.Errorf("log %d: %+v", i, e)
			}
		}
	})
}

// checkAnthropicDeltas checks the fragments add up to the answer and that
// streamed arguments came in several pieces.
func checkAnthropicDeltas(t *testing.T, step int, resp *llm.Response, deltas []llm.Delta, stream bool) {
	t.Helper()
	var text strings.Builder
	args := make([]string, len(resp.ToolCalls))
	pieces := make([]int, len(resp.ToolCalls))
	usage := 0
	for _, d := range deltas {
		switch d.Kind {
		case llm.DeltaText:
			text.WriteString(d.Text)
		case llm.DeltaToolCall:
			if d.ToolID != "" && d.ToolID != resp.ToolCalls[d.ToolIndex].ID {
				t.Errorf("step %d: delta id %q", step, d.ToolID)
			}
			args[d.ToolIndex] += d.Text
			if d.Text != "" {
				pieces[d.ToolIndex]++
			}
		case llm.DeltaUsage:
			usage++
			if d.Usage != resp.Usage {
				t.Errorf("step %d: usage delta %+v", step, d.Usage)
			}
		}
	}
	if text.String() != resp.Text || usage != 1 {
		t.Errorf("step %d: text deltas %q, %d usage deltas", step, text.String(), usage)
	}
	for i, c := range resp.ToolCalls {
		if args[i] != c.Arguments {
			t.Errorf("step %d: argument deltas %q, want %q", step, args[i], c.Arguments)
		}
		if stream && len(c.Arguments) > 3 && pieces[i] < 2 {
			t.Errorf("step %d: call %d arguments came in %d pieces", step, i, pieces[i])
		}
	}
}

func TestAnthropicErrorSteps(t *testing.T) {
	bothModes(t, func(t *testing.T, stream bool) {
		_, url := start(t, `{"steps": [
			{"status": 529, "retry_after": 2},
			{"status": 429, "error": "slow down", "retry_after": 1},
			{"status": 500, "error": "boom"},
			{"status": 401, "error": "invalid x-api-key"},
			{"status": 400, "error": "prompt is too long"}
		]}`, "")
		p := anthropicProvider(t, url, stream)
		cases := []struct {
			status    int
			retryable bool
			after     time.Duration
			message   []string
		}{
			{529, true, 2 * time.Second, []string{"overloaded_error", "Overloaded"}},
			{429, true, time.Second, []string{"rate_limit_error", "slow down"}},
			{500, true, 0, []string{"api_error", "boom"}},
			{401, false, 0, []string{"invalid x-api-key", "ANTHROPIC_API_KEY"}},
			{400, false, 0, []string{"prompt is too long"}},
		}
		for _, c := range cases {
			_, err := askAnthropic(p, user("hi"), nil)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("status %d: error %v", c.status, err)
			}
			if e.Provider != "anthropic" || e.StatusCode != c.status || e.Retryable != c.retryable || e.RetryAfter != c.after {
				t.Errorf("status %d: %+v", c.status, e)
			}
			for _, m := range c.message {
				if !strings.Contains(e.Message, m) {
					t.Errorf("status %d: message %q lacks %q", c.status, e.Message, m)
				}
			}
		}
	})
}

func TestAnthropicTruncatedAndExhausted(t *testing.T) {
	bothModes(t, func(t *testing.T, stream bool) {
		_, url := start(t, `{"steps": [
			{"text": "this answer is cut short", "tool_calls": [{"name": "read", "arguments": {"file_path": "x"}}], "truncate": true}
		]}`, "")
		p := anthropicProvider(t, url, stream)
		cut := "failed" // a JSON body cut short does not decode
		if stream {
			cut = "without message_stop"
		}
		for i, want := range []string{cut, "script exhausted"} {
			_, err := askAnthropic(p, user("hi"), nil)
			var e *llm.Error
			if !errors.As(err, &e) || !e.Retryable || !strings.Contains(e.Message, want) {
				t.Errorf("request %d: %v", i, err)
			}
		}
	})
}

func TestAnthropicLogAndCacheControl(t *testing.T) {
	srv, url := start(t, `{"steps": [{"text": "ok", "repeat": 2}]}`, "")
	p := anthropicProvider(t, url, true)
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "first question"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "read", Arguments: `{"file_path":"a"}`}, {ID: "toolu_2", Name: "glob", Arguments: `{bad`}}},
		{Role: llm.RoleTool, ToolCallID: "toolu_1", ToolName: "read", Content: "contents"},
		{Role: llm.RoleTool, ToolCallID: "toolu_2", ToolName: "glob", Content: "bad arguments", IsError: true},
		{Role: llm.RoleUser, Content: "and now?"},
	}
	for range 2 {
		if _, err := askAnthropic(p, history, nil); err != nil {
			t.Fatal(err)
		}
	}
	log := srv.Requests()
	e := log[0]
	if !reflect.DeepEqual(e.Tools, []string{"read", "glob", "edit"}) || e.System != "you are a test" || e.LastUser != "and now?" || e.Messages != 4 {
		t.Errorf("logged %+v", e)
	}
	var body struct {
		System   []map[string]any `json:"system"`
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(e.Body, &body); err != nil {
		t.Fatal(err)
	}
	cached := func(v map[string]any) bool {
		cc, _ := v["cache_control"].(map[string]any)
		return cc["type"] == "ephemeral"
	}
	if len(body.System) != 1 || !cached(body.System[0]) {
		t.Errorf("system %v", body.System)
	}
	for i, tool := range body.Tools {
		if cached(tool) != (i == len(body.Tools)-1) {
			t.Errorf("tool %d: %v", i, tool)
		}
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, []string{"user", "assistant", "user"}) {
		t.Fatalf("roles %v", roles)
	}
	last := body.Messages[2].Content
	if len(last) != 3 || last[0]["type"] != "tool_result" || last[1]["is_error"] != true || last[2]["text"] != "and now?" || !cached(last[2]) || cached(last[0]) {
		t.Errorf("last user turn %v", last)
	}
	if in, _ := body.Messages[1].Content[1]["input"].(map[string]any); in == nil || len(in) != 0 {
		t.Errorf("broken arguments sent as %v, want {}", body.Messages[1].Content[1]["input"])
	}
	// The stable prefix is byte-identical from request to request.
	prefix := func(raw json.RawMessage) string {
		var b map[string]json.RawMessage
		_ = json.Unmarshal(raw, &b)
		return string(b["system"]) + string(b["tools"])
	}
	if prefix(log[0].Body) != prefix(log[1].Body) {
		t.Error("system and tools differ between requests")
	}
}

func TestAnthropicSharesStepsWithChat(t *testing.T) {
	srv, url := start(t, `{"steps": [{"text": "one"}, {"text": "two"}]}`, "")
	if resp, err := ask(provider(t, url, true), "hi", nil); err != nil || resp.Text != "one" {
		t.Fatalf("chat: %+v %v", resp, err)
	}
	if resp, err := askAnthropic(anthropicProvider(t, url, true), user("hi"), nil); err != nil || resp.Text != "two" {
		t.Fatalf("messages: %+v %v", resp, err)
	}
	if log := srv.Requests(); len(log) != 2 || log[1].Step != 1 || log[1].N != 2 {
		t.Errorf("log %+v", log)
	}
}

func TestAnthropicMalformedRequest(t *testing.T) {
	_, url := start(t, `{"steps": [{"text": "one"}]}`, "")
	res, err := http.Post(strings.TrimSuffix(url, "/v1")+"/v1/messages", "application/json", strings.NewReader("{nope"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 400 || body.Type != "error" || body.Error.Type != "invalid_request_error" {
		t.Errorf("status %d body %+v (%v)", res.StatusCode, body, err)
	}
}

// A step's thinking reaches the real adapter as a signed thinking block
// before the text, streamed in pieces; the OpenAI wire leaves it out.
func TestAnthropicThinking(t *testing.T) {
	script := `{"steps":[{"thinking":"The user greets; I should greet back.","text":"Hello!","chunk_size":8,"repeat":3}]}`
	bothModes(t, func(t *testing.T, stream bool) {
		_, url := start(t, script, "")
		var deltas []llm.Delta
		resp, err := askAnthropic(anthropicProvider(t, url, stream), user("hi"), &deltas)
		if err != nil {
			t.Fatal(err)
		}
		want := []llm.Thinking{{Text: "The user greets; I should greet back.", Signature: "scripted-signature"}}
		if resp.Text != "Hello!" || !reflect.DeepEqual(resp.Thinking, want) {
			t.Fatalf("%+v", resp)
		}
		var thinking strings.Builder
		pieces, first := 0, -1
		for i, d := range deltas {
			if d.Kind == llm.DeltaThinking {
				thinking.WriteString(d.Text)
				pieces++
			}
			if d.Kind == llm.DeltaText && first < 0 {
				first = i
			}
		}
		if thinking.String() != want[0].Text || (stream && pieces < 2) {
			t.Errorf("thinking deltas %q in %d pieces", thinking.String(), pieces)
		}
		if first >= 0 && deltas[first-1].Kind != llm.DeltaThinking {
			t.Errorf("the text did not follow the thinking: %+v", deltas)
		}
		if stream {
			resp, err := provider(t, url, true).Stream(context.Background(), llm.Request{Messages: user("hi")}, nil)
			if err != nil || resp.Text != "Hello!" || len(resp.Thinking) != 0 {
				t.Errorf("OpenAI wire: %+v %v", resp, err)
			}
		}
	})
}
