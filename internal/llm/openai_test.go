package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// capture is a test server that records request bodies and headers and
// answers with a fixed status, content type and body.
type capture struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
}

func (c *capture) server(t *testing.T, status int, contentType, body string, extra http.Header) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		c.mu.Lock()
		c.bodies = append(c.bodies, m)
		c.headers = append(c.headers, r.Header.Clone())
		c.mu.Unlock()
		for k, v := range extra {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newTestOpenAI(t *testing.T, url string, stream bool, mod func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{BaseURL: url, Model: "test-model", Stream: &stream}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const okCompletion = `{"id":"x","object":"chat.completion","created":1,"model":"m",
 "choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],
 "usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`

func TestOpenAIRequestMapping(t *testing.T) {
	var c capture
	srv := c.server(t, 200, "application/json", okCompletion, nil)
	p := newTestOpenAI(t, srv.URL+"/v1", false, func(cfg *OpenAIConfig) {
		cfg.Headers = map[string]string{"X-Test": "yes"}
	})
	req := Request{
		System: "be brief",
		Messages: []Message{
			{Role: RoleUser, Content: "read it"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "read", Arguments: `{"file_path":"a"}`}}},
			{Role: RoleTool, ToolCallID: "c1", ToolName: "read", Content: "contents", IsError: true},
			{Role: RoleAssistant, Content: "done"},
		},
		Tools: []ToolSpec{
			{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}}}`)},
			{Name: "verify"},
		},
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := c.bodies[0]
	if body["model"] != "test-model" {
		t.Errorf("model = %v", body["model"])
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens", "stream", "stream_options"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent although unset: %v", k, body[k])
		}
	}
	msgs := body["messages"].([]any)
	wantRoles := []string{"system", "user", "assistant", "tool", "assistant"}
	if len(msgs) != len(wantRoles) {
		t.Fatalf("messages = %v", msgs)
	}
	for i, m := range msgs {
		if role := m.(map[string]any)["role"]; role != wantRoles[i] {
			t.Errorf("message %d role = %v, want %s", i, role, wantRoles[i])
		}
	}
	if got := msgs[0].(map[string]any)["content"]; got != "be brief" {
		t.Errorf("system content = %v", got)
	}
	asst := msgs[2].(map[string]any)
	if _, ok := asst["content"]; ok {
		t.Errorf("assistant tool-call message has content: %v", asst)
	}
	call := asst["tool_calls"].([]any)[0].(map[string]any)
	fn := call["function"].(map[string]any)
	if call["id"] != "c1" || call["type"] != "function" || fn["name"] != "read" || fn["arguments"] != `{"file_path":"a"}` {
		t.Errorf("tool call = %v", call)
	}
	tool := msgs[3].(map[string]any)
	if tool["tool_call_id"] != "c1" || tool["content"] != "contents" {
		t.Errorf("tool message = %v", tool)
	}
	tools := body["tools"].([]any)
	f0 := tools[0].(map[string]any)["function"].(map[string]any)
	if f0["name"] != "read" || f0["description"] != "Read a file" || f0["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("tool 0 = %v", f0)
	}
	f1 := tools[1].(map[string]any)["function"].(map[string]any)
	if f1["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("tool 1 without schema = %v", f1)
	}
	h := c.headers[0]
	if h.Get("X-Test") != "yes" {
		t.Errorf("custom header missing: %v", h)
	}
	if a := h.Get("Authorization"); a != "" {
		t.Errorf("empty API key sent Authorization %q", a)
	}
}

func TestOpenAIMaxTokensAndKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/never")
	var c capture
	srv := c.server(t, 200, "application/json", okCompletion, nil)
	p := newTestOpenAI(t, srv.URL, false, func(cfg *OpenAIConfig) { cfg.APIKey = "sk-test" })
	if _, err := p.Stream(context.Background(), Request{Model: "other", MaxTokens: 77}, nil); err != nil {
		t.Fatal(err)
	}
	q := newTestOpenAI(t, srv.URL, false, func(cfg *OpenAIConfig) { cfg.MaxCompletionTokens = true })
	if _, err := q.Stream(context.Background(), Request{MaxTokens: 5}, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.bodies[0]["max_tokens"]; got != 77.0 {
		t.Errorf("max_tokens = %v", got)
	}
	if got := c.bodies[0]["model"]; got != "other" {
		t.Errorf("request model did not win: %v", got)
	}
	if got := c.bodies[1]["max_completion_tokens"]; got != 5.0 {
		t.Errorf("max_completion_tokens = %v", got)
	}
	if got := c.headers[0].Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if got := c.headers[1].Get("Authorization"); got != "" {
		t.Errorf("key leaked from the environment: %q", got)
	}
}

func TestOpenAIStreamingAssembly(t *testing.T) {
	chunks := []string{
		`{"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"content":"look."}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"read","arguments":""}}]}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_pa"}}]}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"glob","arguments":"{not json"}}]}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"x\"}"}}]}}]}`,
		// same index, new id: a server that numbers every call 0
		`{"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"grep","arguments":"{}"}}]}}]}`,
		`{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4}}}`,
	}
	body := ""
	for _, c := range chunks {
		body += "data: " + c + "\n\n"
	}
	body += "data: [DONE]\n\n"
	var c capture
	srv := c.server(t, 200, "text/event-stream", body, nil)
	p := newTestOpenAI(t, srv.URL, true, nil)
	resp, deltas, err := streamDeltas(p, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if so, _ := c.bodies[0]["stream_options"].(map[string]any); so["include_usage"] != true || c.bodies[0]["stream"] != true {
		t.Errorf("stream flags = %v %v", c.bodies[0]["stream"], c.bodies[0]["stream_options"])
	}
	want := []ToolCall{{ID: "a", Name: "read", Arguments: `{"file_path":"x"}`}, {ID: "b", Name: "glob", Arguments: "{not json"}, {ID: "c", Name: "grep", Arguments: "{}"}}
	if resp.Text != "Let me look." || resp.StopReason != "tool_calls" || resp.Model != "m" {
		t.Errorf("resp = %+v", resp)
	}
	if len(resp.ToolCalls) != 3 {
		t.Fatalf("tool calls = %+v", resp.ToolCalls)
	}
	for i := range want {
		if resp.ToolCalls[i] != want[i] {
			t.Errorf("call %d = %+v, want %+v", i, resp.ToolCalls[i], want[i])
		}
	}
	if (resp.Usage != Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 4}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	checkDeltas(t, resp, deltas)
}

// streamDeltas sends req to p and returns the answer with the fragments
// delivered on the way.
func streamDeltas(p Provider, req Request) (*Response, []Delta, error) {
	var deltas []Delta
	resp, err := p.Stream(context.Background(), req, func(d Delta) { deltas = append(deltas, d) })
	return resp, deltas, err
}

// checkDeltas verifies that the fragments add up to the final answer.
func checkDeltas(t *testing.T, resp *Response, deltas []Delta) {
	t.Helper()
	var text, thinking strings.Builder
	calls := make([]ToolCall, len(resp.ToolCalls))
	var usage *Usage
	for _, d := range deltas {
		switch d.Kind {
		case DeltaText:
			text.WriteString(d.Text)
		case DeltaThinking:
			thinking.WriteString(d.Text)
		case DeltaToolCall:
			if d.ToolIndex < 0 || d.ToolIndex >= len(calls) {
				t.Fatalf("delta for tool index %d of %d", d.ToolIndex, len(calls))
			}
			c := &calls[d.ToolIndex]
			if d.ToolID != "" {
				if c.ID != "" {
					t.Errorf("tool %d: id delivered twice", d.ToolIndex)
				}
				c.ID = d.ToolID
			}
			if d.ToolName != "" {
				c.Name = d.ToolName
			}
			c.Arguments += d.Text
		case DeltaUsage:
			if usage != nil {
				t.Errorf("usage delivered twice")
			}
			usage = &d.Usage
		}
	}
	if text.String() != resp.Text {
		t.Errorf("text deltas = %q, response text %q", text.String(), resp.Text)
	}
	// Readable thinking streams too, apart from the text.
	var want strings.Builder
	for _, th := range resp.Thinking {
		want.WriteString(th.Text)
	}
	if thinking.String() != want.String() {
		t.Errorf("thinking deltas = %q, response thinking %q", thinking.String(), want.String())
	}
	for i := range calls {
		if calls[i] != resp.ToolCalls[i] {
			t.Errorf("tool deltas %d = %+v, response %+v", i, calls[i], resp.ToolCalls[i])
		}
	}
	if usage != nil && *usage != resp.Usage {
		t.Errorf("usage delta %+v, response %+v", *usage, resp.Usage)
	}
}

func TestOpenAIStreamWithoutFinishReason(t *testing.T) {
	body := `data: {"model":"m","choices":[{"index":0,"delta":{"content":"partial"}}]}` + "\n\n"
	for _, tail := range []string{"", "data: [DONE]\n\n"} {
		var c capture
		srv := c.server(t, 200, "text/event-stream", body+tail, nil)
		p := newTestOpenAI(t, srv.URL, true, nil)
		_, err := p.Stream(context.Background(), Request{}, nil)
		var e *Error
		if !errors.As(err, &e) || !e.Retryable || e.Message != "stream ended without a finish reason" {
			t.Errorf("tail %q: err = %v", tail, err)
		}
	}
}

func TestOpenAIStreamCutConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"model":"m","choices":[{"index":0,"delta":{"content":"par"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer srv.Close()
	p := newTestOpenAI(t, srv.URL, true, nil)
	_, err := p.Stream(context.Background(), Request{}, nil)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAIStreamErrorEvent(t *testing.T) {
	body := `data: {"error":{"message":"overloaded","code":502}}` + "\n\n"
	var c capture
	srv := c.server(t, 200, "text/event-stream", body, nil)
	p := newTestOpenAI(t, srv.URL, true, nil)
	_, err := p.Stream(context.Background(), Request{}, nil)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable || !strings.Contains(e.Message, "overloaded") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAIErrors(t *testing.T) {
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		header      http.Header
		retryable   bool
		contains    []string
		retryAfter  time.Duration
	}{
		{"unauthorized", 401, "application/json", `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`, nil, false,
			[]string{"Incorrect API key provided", "OPENAI_API_KEY"}, 0},
		{"forbidden", 403, "application/json", `{"error":{"message":"no access"}}`, nil, false, []string{"no access", "OPENAI_API_KEY"}, 0},
		{"not found", 404, "application/json", `{"error":{"message":"The model does not exist"}}`, nil, false,
			[]string{"The model does not exist", `"test-model"`, "base URL"}, 0},
		{"rate limited", 429, "application/json", `{"error":{"message":"slow down"}}`, http.Header{"Retry-After": {"7"}}, true,
			[]string{"rate limited", "slow down"}, 7 * time.Second},
		{"server error html", 502, "text/html", "<html><body>Bad gateway</body></html>", nil, true, []string{"server error", "Bad gateway"}, 0},
		{"string error", 400, "application/json", `{"error":"model 'x' not found, try pulling it first"}`, nil, false, []string{"try pulling it first"}, 0},
		{"empty body", 503, "application/json", ``, nil, true, []string{"service unavailable"}, 0},
		{"bad request", 400, "application/json", `{"error":{"message":"context too long"}}`, nil, false, []string{"context too long"}, 0},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			var c capture
			srv := c.server(t, tc.status, tc.contentType, tc.body, tc.header)
			p := newTestOpenAI(t, srv.URL, stream, nil)
			_, err := p.Stream(context.Background(), Request{}, nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%s (stream %v): err = %#v, want *Error", tc.name, stream, err)
				continue
			}
			if e.Provider != "openai" || e.StatusCode != tc.status || e.Retryable != tc.retryable || e.RetryAfter != tc.retryAfter {
				t.Errorf("%s (stream %v): err = %+v", tc.name, stream, e)
			}
			for _, s := range tc.contains {
				if !strings.Contains(e.Error(), s) {
					t.Errorf("%s (stream %v): %q lacks %q", tc.name, stream, e.Error(), s)
				}
			}
			if len(c.bodies) != 1 {
				t.Errorf("%s: %d requests, want 1 (MaxRetries 0)", tc.name, len(c.bodies))
			}
		}
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p := newTestOpenAI(t, url, true, nil)
	_, err := p.Stream(context.Background(), Request{}, nil)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable || e.StatusCode != 0 {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAICancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	p := newTestOpenAI(t, srv.URL, true, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Stream(ctx, Request{}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
}

func TestOpenAIConfigErrors(t *testing.T) {
	if _, err := NewOpenAI(OpenAIConfig{BaseURL: "localhost:11434"}); err == nil {
		t.Error("base URL without scheme accepted")
	}
	if _, err := NewOpenAI(OpenAIConfig{MaxRetries: -1}); err == nil {
		t.Error("negative retries accepted")
	}
	p, err := NewOpenAI(OpenAIConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "openai" {
		t.Errorf("Name = %q", p.Name())
	}
	if _, err := p.Stream(context.Background(), Request{}, nil); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("missing model: err = %v", err)
	}
	if _, err := p.Stream(context.Background(), Request{Model: "m", Messages: []Message{{Role: "robot"}}}, nil); err == nil {
		t.Error("unknown role accepted")
	}
}

func TestOpenAIToolCallsWithoutIndexOrID(t *testing.T) {
	chunks := []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"read","arguments":"{\"a\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x2","function":{"name":"glob","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	body := ""
	for _, c := range chunks {
		body += "data: " + c + "\n\n"
	}
	var c capture
	srv := c.server(t, 200, "text/event-stream", body, nil)
	p := newTestOpenAI(t, srv.URL, true, nil)
	resp, _, err := streamDeltas(p, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("calls = %+v", resp.ToolCalls)
	}
	first, second := resp.ToolCalls[0], resp.ToolCalls[1]
	if first.Name != "read" || first.Arguments != `{"a":1}` || !strings.HasPrefix(first.ID, "call_ultra_") {
		t.Errorf("first = %+v", first)
	}
	if second != (ToolCall{ID: "x2", Name: "glob", Arguments: "{}"}) {
		t.Errorf("second = %+v", second)
	}
}
