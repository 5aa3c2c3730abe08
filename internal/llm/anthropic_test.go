package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sseEvents renders Messages stream events.
func sseEvents(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var head struct{ Type string }
		_ = json.Unmarshal([]byte(e), &head)
		b.WriteString("event: " + head.Type + "\ndata: " + e + "\n\n")
	}
	return b.String()
}

const (
	evStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":50,"cache_read_input_tokens":100,"output_tokens":1}}}`
	evDelta = `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}`
	evStop  = `{"type":"message_stop"}`
)

func TestAnthropicStreamingAssembly(t *testing.T) {
	body := sseEvents(evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Let me "}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"look."}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{}}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":""}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"\"a.go\"}"}}`,
		`{"type":"content_block_stop","index":3}`,
		`{"type":"content_block_start","index":4,"content_block":{"type":"tool_use","id":"toolu_b","name":"status","input":{}}}`,
		`{"type":"content_block_stop","index":4}`,
		`{"type":"content_block_start","index":5,"content_block":{"type":"tool_use","id":"toolu_c","name":"edit","input":{}}}`,
		`{"type":"content_block_delta","index":5,"delta":{"type":"input_json_delta","partial_json":"{not json"}}`,
		`{"type":"content_block_stop","index":5}`,
		evDelta, evStop)
	var c capture
	srv := c.server(t, 200, "text/event-stream", body, nil)
	p := newTestAnthropic(t, srv.URL, true, nil)
	resp, deltas, err := streamDeltas(p, Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text: "Let me look.",
		ToolCalls: []ToolCall{
			{ID: "toolu_a", Name: "read", Arguments: `{"path":"a.go"}`},
			{ID: "toolu_b", Name: "status", Arguments: `{}`},
			{ID: "toolu_c", Name: "edit", Arguments: `{not json`},
		},
		Usage:      Usage{InputTokens: 10, OutputTokens: 42, CacheReadTokens: 100, CacheWriteTokens: 50},
		StopReason: "tool_use",
		Model:      "claude-x",
		Thinking:   []Thinking{{Text: "hmm", Signature: "sig"}, {Redacted: "opaque"}},
	}
	got, _ := json.Marshal(resp)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("response\n got %s\nwant %s", got, exp)
	}
	checkDeltas(t, resp, deltas)
	if c.headers[0].Get("X-Api-Key") != "test-key" || c.headers[0].Get("Anthropic-Version") == "" {
		t.Errorf("headers %v", c.headers[0])
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[
	  {"type":"thinking","thinking":"hmm","signature":"s"},
	  {"type":"redacted_thinking","data":"opaque"},
	  {"type":"text","text":"Sure."},
	  {"type":"tool_use","id":"toolu_a","name":"read","input":{"path": "a.go"}},
	  {"type":"tool_use","id":"toolu_b","name":"edit","input":"{not json"}],
	 "stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":7,"cache_read_input_tokens":3,"cache_creation_input_tokens":2}}`
	var c capture
	srv := c.server(t, 200, "application/json", body, nil)
	p := newTestAnthropic(t, srv.URL, false, nil)
	// A large max_tokens is sent, not refused by the SDK as "needs streaming".
	resp, deltas, err := streamDeltas(p, Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, MaxTokens: 64000})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Sure." || len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Arguments != `{"path":"a.go"}` || resp.ToolCalls[1].Arguments != "{not json" ||
		resp.Usage != (Usage{InputTokens: 5, OutputTokens: 7, CacheReadTokens: 3, CacheWriteTokens: 2}) || resp.StopReason != "tool_use" {
		t.Errorf("response %+v", resp)
	}
	if want := []Thinking{{Text: "hmm", Signature: "s"}, {Redacted: "opaque"}}; !reflect.DeepEqual(resp.Thinking, want) {
		t.Errorf("thinking %+v, want %+v", resp.Thinking, want)
	}
	checkDeltas(t, resp, deltas)
	if _, ok := c.bodies[0]["stream"]; ok {
		t.Errorf("non-streaming request asked for a stream")
	}
}

func TestAnthropicMaxTokensHeadersAndNoEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	var c capture
	srv := c.server(t, 200, "text/event-stream", sseEvents(evStart, evDelta, evStop), nil)
	for _, tc := range []struct {
		cfg, req int
		want     float64
	}{{0, 0, 8192}, {1000, 0, 1000}, {1000, 77, 77}} {
		p := newTestAnthropic(t, srv.URL+"/v1/", true, func(cfg *AnthropicConfig) {
			cfg.APIKey, cfg.MaxTokens = "", tc.cfg
			cfg.Headers = map[string]string{"X-Gateway": "g"}
		})
		if _, err := p.Stream(context.Background(), Request{MaxTokens: tc.req}, nil); err != nil {
			t.Fatal(err)
		}
		n := len(c.bodies) - 1
		if c.bodies[n]["max_tokens"] != tc.want {
			t.Errorf("max_tokens = %v, want %v", c.bodies[n]["max_tokens"], tc.want)
		}
		if h := c.headers[n]; h.Get("X-Api-Key") != "" || h.Get("X-Gateway") != "g" {
			t.Errorf("headers %v", h)
		}
	}
}

func TestAnthropicStreamWithoutStop(t *testing.T) {
	text := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"partial"}}`
	for _, body := range []string{
		sseEvents(evStart, text),
		sseEvents(evStart, text, evStop), // message_stop without a stop reason
		sseEvents(evStart, text, evDelta),
	} {
		var c capture
		srv := c.server(t, 200, "text/event-stream", body, nil)
		_, err := newTestAnthropic(t, srv.URL, true, nil).Stream(context.Background(), Request{}, nil)
		var e *Error
		if !errors.As(err, &e) || !e.Retryable || e.Provider != "anthropic" || !strings.Contains(e.Message, "message_stop") {
			t.Errorf("err = %v", err)
		}
	}
}

func TestAnthropicStreamCutConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sseEvents(evStart))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer srv.Close()
	_, err := newTestAnthropic(t, srv.URL, true, nil).Stream(context.Background(), Request{}, nil)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable {
		t.Errorf("err = %v", err)
	}
}

func TestAnthropicStreamErrorEvent(t *testing.T) {
	body := sseEvents(evStart) + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	var c capture
	srv := c.server(t, 200, "text/event-stream", body, nil)
	_, err := newTestAnthropic(t, srv.URL, true, nil).Stream(context.Background(), Request{}, nil)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable || e.StatusCode != 0 || !strings.Contains(e.Message, "overloaded_error: Overloaded") || !strings.Contains(e.Message, "mid-stream") {
		t.Errorf("err = %#v", err)
	}
}

func TestAnthropicErrors(t *testing.T) {
	errBody := func(kind, msg string) string {
		return `{"type":"error","error":{"type":"` + kind + `","message":"` + msg + `"}}`
	}
	cases := []struct {
		status    int
		ctype     string
		body      string
		header    http.Header
		retryable bool
		after     time.Duration
		message   []string
	}{
		{401, "application/json", errBody("authentication_error", "invalid x-api-key"), nil, false, 0, []string{"invalid x-api-key", "ANTHROPIC_API_KEY", "claude-sonnet-4"}},
		{404, "application/json", errBody("not_found_error", "model: nope"), nil, false, 0, []string{"model: nope", "model name"}},
		{413, "application/json", errBody("request_too_large", "too big"), nil, false, 0, []string{"request too large"}},
		{400, "application/json", errBody("invalid_request_error", "prompt is too long"), nil, false, 0, []string{"prompt is too long"}},
		{429, "application/json", errBody("rate_limit_error", "slow down"), http.Header{"Retry-After": {"7"}}, true, 7 * time.Second, []string{"rate limited", "slow down"}},
		{529, "application/json", errBody("overloaded_error", "Overloaded"), nil, true, 0, []string{"overloaded"}},
		{500, "application/json", errBody("api_error", "Internal server error"), nil, true, 0, []string{"server error", "Internal server error"}},
		{503, "text/html", "<html>upstream unavailable</html>", nil, true, 0, []string{"upstream unavailable"}},
	}
	for _, stream := range []bool{true, false} {
		for _, tc := range cases {
			var c capture
			srv := c.server(t, tc.status, tc.ctype, tc.body, tc.header)
			_, err := newTestAnthropic(t, srv.URL, stream, nil).Stream(context.Background(), Request{}, nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%d: err = %v", tc.status, err)
			}
			if e.Provider != "anthropic" || e.StatusCode != tc.status || e.Retryable != tc.retryable || e.RetryAfter != tc.after {
				t.Errorf("stream=%v %d: %+v", stream, tc.status, e)
			}
			for _, m := range tc.message {
				if !strings.Contains(e.Message, m) {
					t.Errorf("stream=%v %d: message %q lacks %q", stream, tc.status, e.Message, m)
				}
			}
		}
	}
}

func TestAnthropicConnectionRefusedAndCancelled(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := newTestAnthropic(t, url, true, nil).Stream(context.Background(), Request{}, nil)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable || e.StatusCode != 0 {
		t.Errorf("refused: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var c capture
	live := c.server(t, 200, "text/event-stream", sseEvents(evStart, evDelta, evStop), nil)
	_, err = newTestAnthropic(t, live.URL, true, nil).Stream(ctx, Request{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestAnthropicConfigErrors(t *testing.T) {
	for _, cfg := range []AnthropicConfig{
		{BaseURL: "api.anthropic.com"},
		{BaseURL: "ftp://x"},
		{MaxRetries: -1},
		{MaxTokens: -5},
	} {
		if _, err := NewAnthropic(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	p, err := NewAnthropic(AnthropicConfig{})
	if err != nil || p.Name() != "anthropic" || p.baseURL != DefaultAnthropicBaseURL {
		t.Fatalf("%v %v", p, err)
	}
	if _, err := p.Stream(context.Background(), Request{}, nil); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("no model: %v", err)
	}
}

func TestAnthropicMessageMapping(t *testing.T) {
	p := newTestAnthropic(t, "http://x", true, nil)
	req := Request{
		System: "sys",
		Tools:  []ToolSpec{{Name: "a", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false}`)}, {Name: "b"}},
		Messages: []Message{
			{Role: RoleUser, Content: "q1"},
			{Role: RoleAssistant, Content: "thinking aloud", ToolCalls: []ToolCall{{ID: "t1", Name: "a", Arguments: `{"x":"1"}`}, {ID: "t2", Name: "b", Arguments: `[1]`}}},
			{Role: RoleTool, ToolCallID: "t1", Content: "r1"},
			{Role: RoleTool, ToolCallID: "t2", Content: "", IsError: true},
			{Role: RoleAssistant, Content: "done?"},
			{Role: RoleUser, Content: "q2"},
			{Role: RoleAssistant},
			{Role: RoleUser, Content: "q3"},
		},
	}
	params, err := p.params(req, "m")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(params)
	var body struct {
		Tools []struct {
			InputSchema  map[string]any `json:"input_schema"`
			CacheControl any            `json:"cache_control"`
		} `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Tools[0].InputSchema["additionalProperties"] != false || body.Tools[0].CacheControl != nil || body.Tools[1].CacheControl == nil || body.Tools[1].InputSchema["type"] != "object" {
		t.Errorf("tools %s", raw)
	}
	var shape []string
	for _, m := range body.Messages {
		var types []string
		for _, b := range m.Content {
			types = append(types, b["type"].(string))
		}
		shape = append(shape, m.Role+":"+strings.Join(types, ","))
	}
	want := []string{"user:text", "assistant:text,tool_use,tool_use", "user:tool_result,tool_result", "assistant:text", "user:text,text"}
	if strings.Join(shape, " ") != strings.Join(want, " ") {
		t.Errorf("shape %v, want %v", shape, want)
	}
	if in, _ := body.Messages[1].Content[2]["input"].(map[string]any); in == nil || len(in) != 0 {
		t.Errorf("non-object arguments sent as %v", body.Messages[1].Content[2]["input"])
	}
	if r := body.Messages[2].Content[1]; r["is_error"] != true || r["tool_use_id"] != "t2" {
		t.Errorf("error result %v", r)
	}
	last := body.Messages[4].Content
	if last[1]["cache_control"] == nil || last[0]["cache_control"] != nil || body.Messages[2].Content[1]["cache_control"] != nil {
		t.Errorf("user breakpoint %s", raw)
	}
	if _, err := p.params(Request{Messages: []Message{{Role: RoleTool, Content: "x"}}}, "m"); err == nil {
		t.Error("tool result without id accepted")
	}
	if _, err := p.params(Request{Tools: []ToolSpec{{Name: "x", Parameters: json.RawMessage(`[1]`)}}}, "m"); err == nil {
		t.Error("non-object schema accepted")
	}
}
