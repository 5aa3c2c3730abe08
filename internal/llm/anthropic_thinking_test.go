package llm

import (
	"encoding/json"
	"testing"
)

// anthropicBody marshals the parameters built for req and decodes them
// back as plain JSON.
func anthropicBody(t *testing.T, p *Anthropic, req Request) map[string]any {
	t.Helper()
	params, err := p.params(req, "m")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func TestAnthropicThinkingPassedBackFirst(t *testing.T) {
	p := newTestAnthropic(t, "http://x", true, nil)
	req := Request{Messages: []Message{
		{Role: RoleUser, Content: "q"},
		{Role: RoleAssistant, Content: "Let me look.", ToolCalls: []ToolCall{{ID: "t1", Name: "read", Arguments: `{}`}},
			Thinking: []Thinking{{Text: "hmm", Signature: "sig1"}, {Redacted: "opaque"}, {Text: "more", Signature: "sig2"}}},
		{Role: RoleTool, ToolCallID: "t1", Content: "r"},
		// Thinking alone still makes a turn.
		{Role: RoleAssistant, Thinking: []Thinking{{Text: "", Signature: "sig3"}}},
		{Role: RoleUser, Content: "q2"},
	}}
	body := anthropicBody(t, p, req)
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 5 {
		t.Fatalf("messages %v", msgs)
	}
	blocks := msgs[1].(map[string]any)["content"].([]any)
	want := []map[string]any{
		{"type": "thinking", "thinking": "hmm", "signature": "sig1"},
		{"type": "redacted_thinking", "data": "opaque"},
		{"type": "thinking", "thinking": "more", "signature": "sig2"},
		{"type": "text", "text": "Let me look."},
		{"type": "tool_use", "id": "t1", "name": "read"},
	}
	if len(blocks) != len(want) {
		t.Fatalf("assistant blocks %v", blocks)
	}
	for i, w := range want {
		b := blocks[i].(map[string]any)
		for k, v := range w {
			if b[k] != v {
				t.Errorf("block %d: %s = %v, want %v (%v)", i, k, b[k], v, b)
			}
		}
	}
	only := msgs[3].(map[string]any)["content"].([]any)
	if b := only[0].(map[string]any); len(only) != 1 || b["type"] != "thinking" || b["signature"] != "sig3" {
		t.Errorf("thinking-only turn %v", only)
	}
	if _, ok := body["thinking"]; ok {
		t.Errorf("thinking param %v sent without a budget", body["thinking"])
	}
}

func TestAnthropicThinkingBudget(t *testing.T) {
	p := newTestAnthropic(t, "http://x", true, nil)
	for _, tc := range []struct {
		max, budget int
		wantMax     float64
	}{
		{4096, 4000, 4096},                            // already above the budget
		{0, 2048, DefaultAnthropicMaxTokens},          // the default is above it
		{2000, 2048, 4048},                            // raised: the answer keeps its allowance
		{0, 10000, DefaultAnthropicMaxTokens + 10000}, // likewise for the default
	} {
		body := anthropicBody(t, p, Request{Messages: []Message{{Role: RoleUser, Content: "q"}}, MaxTokens: tc.max, ThinkingBudget: tc.budget})
		th, _ := body["thinking"].(map[string]any)
		if th["type"] != "enabled" || th["budget_tokens"] != float64(tc.budget) {
			t.Errorf("max %d budget %d: thinking = %v", tc.max, tc.budget, body["thinking"])
		}
		if got := body["max_tokens"].(float64); got != tc.wantMax || got <= float64(tc.budget) {
			t.Errorf("max %d budget %d: max_tokens = %v, want %v", tc.max, tc.budget, got, tc.wantMax)
		}
		if _, ok := body["temperature"]; ok {
			t.Errorf("temperature sent with thinking: %v", body["temperature"])
		}
	}
}
