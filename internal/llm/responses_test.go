package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3/responses"
)

func TestResponsesRequestMapping(t *testing.T) {
	p, err := NewResponses(ResponsesConfig{Model: "gpt-5"})
	if err != nil {
		t.Fatal(err)
	}
	var item responses.ResponseOutputItemUnion
	if err := json.Unmarshal([]byte(`{"type":"reasoning","id":"rs_1","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"think"}]}`), &item); err != nil {
		t.Fatal(err)
	}
	r, ok := reasoningParam(item)
	if !ok {
		t.Fatal("reasoning item with encrypted content was dropped")
	}
	p.remember("call_a", []responses.ResponseReasoningItemParam{r})

	req := Request{
		System: "be brief",
		Messages: []Message{
			{Role: RoleUser, Content: "add and multiply"},
			{Role: RoleAssistant, Content: "on it", ToolCalls: []ToolCall{{ID: "call_a", Name: "add", Arguments: `{"a":1}`}, {ID: "call_b", Name: "mul", Arguments: `{}`}}},
			{Role: RoleTool, ToolCallID: "call_a", Content: "5"},
			{Role: RoleTool, ToolCallID: "call_b", Content: "6", IsError: true},
		},
		Tools:     []ToolSpec{{Name: "add", Description: "Add", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)}, {Name: "mul"}},
		MaxTokens: 100,
	}
	params, err := p.params(req, "gpt-5")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Instructions    string           `json:"instructions"`
		Store           *bool            `json:"store"`
		Include         []string         `json:"include"`
		MaxOutputTokens int              `json:"max_output_tokens"`
		Input           []map[string]any `json:"input"`
		Tools           []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Instructions != "be brief" || body.Store == nil || *body.Store || body.MaxOutputTokens != 100 {
		t.Errorf("body %s", raw)
	}
	if len(body.Include) != 1 || body.Include[0] != "reasoning.encrypted_content" {
		t.Errorf("include %v", body.Include)
	}
	wantTypes := []string{"message", "reasoning", "message", "function_call", "function_call", "function_call_output", "function_call_output"}
	if len(body.Input) != len(wantTypes) {
		t.Fatalf("input %s", raw)
	}
	for i, want := range wantTypes {
		got, _ := body.Input[i]["type"].(string)
		if got == "" && body.Input[i]["role"] != nil {
			got = "message"
		}
		if got != want {
			t.Errorf("input %d: type %q, want %q (%v)", i, got, want, body.Input[i])
		}
	}
	if in := body.Input[0]; in["role"] != "user" || in["content"] != "add and multiply" {
		t.Errorf("user message %v", in)
	}
	rs := body.Input[1]
	if summary, _ := rs["summary"].([]any); rs["id"] != "rs_1" || rs["encrypted_content"] != "ENC" || len(summary) != 1 {
		t.Errorf("reasoning item %v", rs)
	}
	if in := body.Input[2]; in["role"] != "assistant" || in["content"] != "on it" {
		t.Errorf("assistant message %v", in)
	}
	if fc := body.Input[3]; fc["call_id"] != "call_a" || fc["name"] != "add" || fc["arguments"] != `{"a":1}` {
		t.Errorf("function call %v", fc)
	}
	if fc := body.Input[4]; fc["call_id"] != "call_b" || fc["name"] != "mul" {
		t.Errorf("function call %v", fc)
	}
	if out := body.Input[5]; out["call_id"] != "call_a" || out["output"] != "5" {
		t.Errorf("function call output %v", out)
	}
	if out := body.Input[6]; out["call_id"] != "call_b" || out["output"] != "6" {
		t.Errorf("function call output %v", out)
	}
	if len(body.Tools) != 2 {
		t.Fatalf("tools %v", body.Tools)
	}
	for _, tl := range body.Tools {
		if tl["type"] != "function" || tl["strict"] != false {
			t.Errorf("tool %v", tl)
		}
		if params, _ := tl["parameters"].(map[string]any); params["type"] != "object" {
			t.Errorf("tool parameters %v", tl["parameters"])
		}
	}
	if body.Tools[0]["description"] != "Add" {
		t.Errorf("tool %v", body.Tools[0])
	}

	// Without remembered reasoning, and for a model that rejects the include.
	req.Messages[1].ToolCalls[0].ID = "call_other"
	params, _ = p.params(req, "gpt-4o")
	if len(params.Include) != 0 {
		t.Errorf("include for gpt-4o: %v", params.Include)
	}
	for _, in := range params.Input.OfInputItemList {
		if in.OfReasoning != nil {
			t.Errorf("reasoning item sent for an unknown turn")
		}
	}

	// Bad history.
	if _, err := p.params(Request{Messages: []Message{{Role: RoleTool, Content: "x"}}}, "gpt-5"); err == nil {
		t.Error("tool result without id accepted")
	}
}

func TestResponsesReasoningWithoutContentDropped(t *testing.T) {
	var item responses.ResponseOutputItemUnion
	_ = json.Unmarshal([]byte(`{"type":"reasoning","id":"rs_1","summary":[]}`), &item)
	if _, ok := reasoningParam(item); ok {
		t.Error("reasoning item without encrypted content kept (store:false cannot resolve it)")
	}
}

func TestEncryptedReasoningModels(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-5": true, "gpt-5-mini": true, "o4-mini": true, "o3": true, "openai/gpt-5.1-codex": true,
		"gpt-4o": false, "gpt-4.1": false, "gpt-5-chat-latest": false, "omni": false,
	} {
		if got := encryptedReasoning(model); got != want {
			t.Errorf("encryptedReasoning(%q) = %v", model, got)
		}
	}
}

func responsesServe(t *testing.T, stream bool, status int, contentType, body string) *Responses {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	p, err := NewResponses(ResponsesConfig{BaseURL: srv.URL, Model: "gpt-5", Stream: &stream})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResponsesStreamCutShort(t *testing.T) {
	p := responsesServe(t, true, 200, "text/event-stream",
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n")
	_, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable || e.Provider != "openai" {
		t.Fatalf("err = %v", err)
	}
}

func TestResponsesStreamFailed(t *testing.T) {
	p := responsesServe(t, true, 200, "text/event-stream",
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n")
	_, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	var e *Error
	if !errors.As(err, &e) || !e.Retryable {
		t.Fatalf("err = %v", err)
	}
}

func TestResponsesIncomplete(t *testing.T) {
	p := responsesServe(t, false, 200, "application/json",
		`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-5","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"partial"}]}],"usage":{"input_tokens":3,"output_tokens":4,"input_tokens_details":{"cached_tokens":2}}}`)
	resp, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "partial" || resp.StopReason != "length" || resp.Usage != (Usage{InputTokens: 3, OutputTokens: 4, CacheReadTokens: 2}) {
		t.Errorf("resp %+v", resp)
	}
}

func TestResponsesHTTPError(t *testing.T) {
	p := responsesServe(t, false, 429, "application/json", `{"error":{"message":"slow down","type":"rate_limit"}}`)
	_, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, nil)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 429 || !e.Retryable || e.Provider != "openai" {
		t.Fatalf("err = %v", err)
	}
}
