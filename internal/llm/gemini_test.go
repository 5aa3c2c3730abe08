package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestGeminiContents(t *testing.T) {
	msgs := []Message{
		{Role: RoleUser, Content: "go"},
		{Role: RoleAssistant, Content: "ok", ToolCalls: []ToolCall{{ID: "a", Name: "read", Arguments: `{"p":1}`}, {ID: "b", Name: "grep", Arguments: `not json`}}},
		{Role: RoleTool, ToolCallID: "a", ToolName: "read", Content: "text"},
		{Role: RoleTool, ToolCallID: "b", Content: "boom", IsError: true}, // name from the call
		{Role: RoleAssistant}, // empty: dropped
		{Role: RoleUser, Content: "more"},
	}
	sig := func(id string) []byte {
		if id == "a" {
			return []byte("sig-a")
		}
		return nil
	}
	got, err := geminiContents(msgs, sig, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `[{"parts":[{"text":"go"}],"role":"user"},` +
		`{"parts":[{"text":"ok"},{"functionCall":{"id":"a","args":{"p":1},"name":"read"},"thoughtSignature":"c2lnLWE="},{"functionCall":{"id":"b","name":"grep"}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"id":"a","name":"read","response":{"output":"text"}}},{"functionResponse":{"id":"b","name":"grep","response":{"error":"boom"}}}],"role":"user"},` +
		`{"parts":[{"text":"more"}],"role":"user"}]`
	if string(b) != want {
		t.Errorf("contents\n got %s\nwant %s", b, want)
	}

	// Gemini 3 needs a signature on the first call of a turn.
	got, _ = geminiContents(msgs[:2], nil, true)
	if s := string(got[1].Parts[1].ThoughtSignature); s != string(geminiSkipSignature) || got[1].Parts[2].ThoughtSignature != nil {
		t.Errorf("signatures %q %q", s, got[1].Parts[2].ThoughtSignature)
	}

	if _, err := geminiContents([]Message{{Role: RoleTool, ToolCallID: "x", Content: "?"}}, nil, false); err == nil {
		t.Error("tool result without a name accepted")
	}
	if _, err := geminiContents([]Message{{Role: "system"}}, nil, false); err == nil {
		t.Error("unknown role accepted")
	}
}

func TestGeminiParams(t *testing.T) {
	p, err := NewGemini(GeminiConfig{APIKey: "k", Model: "m", MaxTokens: 77})
	if err != nil {
		t.Fatal(err)
	}
	params, err := p.params(Request{System: "sys", Messages: []Message{{Role: RoleUser, Content: "hi"}},
		Tools: []ToolSpec{{Name: "t", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false}`)}, {Name: "empty"}}}, "m")
	if err != nil {
		t.Fatal(err)
	}
	c := params.config
	if c.MaxOutputTokens != 77 || c.SystemInstruction.Parts[0].Text != "sys" || len(c.Tools) != 1 || len(c.Tools[0].FunctionDeclarations) != 2 {
		t.Fatalf("config %+v", c)
	}
	b, _ := json.Marshal(c.Tools[0].FunctionDeclarations)
	want := `[{"description":"d","name":"t","parametersJsonSchema":{"additionalProperties":false,"properties":{"x":{"type":"string"}},"type":"object"}},{"name":"empty","parametersJsonSchema":{"properties":{},"type":"object"}}]`
	if string(b) != want {
		t.Errorf("declarations\n got %s\nwant %s", b, want)
	}
	if _, err := p.params(Request{Tools: []ToolSpec{{Name: "bad", Parameters: json.RawMessage(`[1]`)}}}, "m"); err == nil {
		t.Error("array schema accepted")
	}
	if params, _ := p.params(Request{MaxTokens: 5}, "m"); params.config.MaxOutputTokens != 5 {
		t.Errorf("request max tokens not used: %d", params.config.MaxOutputTokens)
	}
}

func TestGeminiConfig(t *testing.T) {
	if _, err := NewGemini(GeminiConfig{BaseURL: "ftp://x"}); err == nil {
		t.Error("bad base URL accepted")
	}
	for base, want := range map[string][2]string{
		"https://h.example":           {"https://h.example", "v1beta"},
		"https://h.example/v1":        {"https://h.example", "v1"},
		"https://h.example/gw/v1beta": {"https://h.example/gw", "v1beta"},
		"https://h.example/gw":        {"https://h.example/gw", "v1beta"},
	} {
		if r, v := splitGeminiVersion(base); r != want[0] || v != want[1] {
			t.Errorf("%s: %s %s", base, r, v)
		}
	}
}

// TestGeminiWire checks headers, the missing key, and generated call ids.
func TestGeminiWire(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "from-env")
	t.Setenv("GOOGLE_API_KEY", "from-env")
	var key, custom string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, custom = r.Header.Get("x-goog-api-key"), r.Header.Get("X-Team")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hm","thought":true},{"functionCall":{"name":"a","args":{"x":1}}},{"functionCall":{"name":"b"}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"cachedContentTokenCount":4,"candidatesTokenCount":3,"thoughtsTokenCount":2}}`))
	}))
	defer srv.Close()
	no := false
	p, err := NewGemini(GeminiConfig{BaseURL: srv.URL, Model: "m", Stream: &no, Headers: map[string]string{"X-Team": "t"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" || custom != "t" {
		t.Errorf("key %q, X-Team %q", key, custom)
	}
	if len(resp.ToolCalls) != 2 || !strings.HasPrefix(resp.ToolCalls[0].ID, "call_") || resp.ToolCalls[0].ID == resp.ToolCalls[1].ID ||
		resp.ToolCalls[0].Arguments != `{"x":1}` || resp.ToolCalls[1].Arguments != `{}` || resp.Text != "" || resp.StopReason != "tool_calls" {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage != (Usage{InputTokens: 6, OutputTokens: 5, CacheReadTokens: 4}) {
		t.Errorf("usage %+v", resp.Usage)
	}
}

func geminiServe(t *testing.T, status int, header map[string]string, body string) *Gemini {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	p, err := NewGemini(GeminiConfig{BaseURL: srv.URL, APIKey: "k", Model: "gemini-x"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func geminiErr(t *testing.T, p *Gemini) *Error {
	t.Helper()
	_, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *Error", err, err)
	}
	if e.Provider != "gemini" {
		t.Errorf("provider %q", e.Provider)
	}
	return e
}

func TestGeminiErrors(t *testing.T) {
	e := geminiErr(t, geminiServe(t, 401, nil, `{"error":{"code":401,"message":"bad key","status":"UNAUTHENTICATED"}}`))
	if e.StatusCode != 401 || e.Retryable || !strings.Contains(e.Message, "GEMINI_API_KEY") || !strings.Contains(e.Message, "bad key") {
		t.Errorf("401: %+v", e)
	}
	e = geminiErr(t, geminiServe(t, 400, nil, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`))
	if e.StatusCode != 400 || e.Retryable || !strings.Contains(e.Message, "GEMINI_API_KEY") {
		t.Errorf("400 key: %+v", e)
	}
	e = geminiErr(t, geminiServe(t, 429, map[string]string{"Retry-After": "7"}, `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`))
	if e.StatusCode != 429 || !e.Retryable || e.RetryAfter != 7*time.Second {
		t.Errorf("429: %+v", e)
	}
	e = geminiErr(t, geminiServe(t, 429, nil, `{"error":{"code":429,"message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`))
	if !e.Retryable || e.RetryAfter != 12*time.Second {
		t.Errorf("429 RetryInfo: %+v", e)
	}
	e = geminiErr(t, geminiServe(t, 500, nil, `<html>oops</html>`))
	if e.StatusCode != 500 || !e.Retryable || !strings.Contains(e.Message, "oops") {
		t.Errorf("500: %+v", e)
	}
	e = geminiErr(t, geminiServe(t, 404, nil, `{"error":{"code":404,"message":"models/gemini-x is not found"}}`))
	if e.StatusCode != 404 || e.Retryable || !strings.Contains(e.Message, "gemini-x") {
		t.Errorf("404: %+v", e)
	}
	// A stream that stops before a finish reason, and one with no candidates.
	sse := map[string]string{"Content-Type": "text/event-stream"}
	e = geminiErr(t, geminiServe(t, 200, sse, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"hal\"}]}}]}\r\n\r\n"))
	if !e.Retryable || !strings.Contains(e.Message, "finish reason") {
		t.Errorf("truncated: %+v", e)
	}
	e = geminiErr(t, geminiServe(t, 200, sse, "data: {\"usageMetadata\":{\"promptTokenCount\":3}}\r\n\r\n"))
	if !e.Retryable || !strings.Contains(e.Message, "no candidates") {
		t.Errorf("no candidates: %+v", e)
	}
	e = geminiErr(t, geminiServe(t, 200, sse, "data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\r\n\r\n"))
	if e.Retryable || !strings.Contains(e.Message, "SAFETY") {
		t.Errorf("blocked: %+v", e)
	}
	e = geminiErr(t, geminiServe(t, 200, sse, "data: {\"error\":{\"code\":503,\"message\":\"overloaded\"}}\r\n\r\n"))
	if !e.Retryable || !strings.Contains(e.Message, "overloaded") {
		t.Errorf("error event: %+v", e)
	}
}

func TestGeminiConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p, err := NewGemini(GeminiConfig{BaseURL: "http://" + addr, APIKey: "k", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	e := geminiErr(t, p)
	if !e.Retryable || e.StatusCode != 0 || !strings.Contains(e.Message, addr) {
		t.Errorf("refused: %+v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Stream(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
