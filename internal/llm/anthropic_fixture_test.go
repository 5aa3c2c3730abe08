package llm

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// anthropicFixtureSuites are the cassette directories that record Messages
// API traffic.
var anthropicFixtureSuites = []string{
	"TestAnthropicCommon", "TestAnthropicCommonWithCacheControl",
	"TestAnthropicThinking", "TestAnthropicThinkingWithCacheControl",
}

func TestAnthropicFixtures(t *testing.T) {
	runFixtures(t, "Anthropic ", suiteGlobs(anthropicFixtureSuites...), replayAnthropicFixture)
}

var anthropicScenarios = map[string]scenario{
	"simple":     scenarios["simple"],
	"tool":       scenarios["tool"],
	"multi_tool": scenarios["multi_tool"],
	"thinking":   scenarios["tool"],
}

func replayAnthropicFixture(t *testing.T, file string) {
	recorded, err := readCassette(file)
	if err != nil {
		t.Fatal(err)
	}
	name, streaming := cassetteName(file)
	sc, ok := anthropicScenarios[name]
	if !ok {
		t.Skipf("no scenario for %s", filepath.Base(file))
	}
	rp, srv := serveReplay(t, recorded, func(path string) bool { return path == "/v1/messages" },
		`{"type":"error","error":{"type":"invalid_request_error","message":"unexpected request"}}`)
	p := newTestAnthropic(t, srv.URL, streaming, nil)

	req := scenarioRequest(sc)
	if name == "thinking" {
		// As recorded: the budget must stay below max_tokens.
		req.ThinkingBudget, req.MaxTokens = 4000, 4096
	}
	replayTurns(t, p, req, len(recorded), func(turn int, req Request, resp *Response) {
		checkAgainstAnthropicReference(t, turn, resp, anthropicReferenceDecode(t, recorded[turn].Body, streaming))
		checkAnthropicSent(t, rp.requests[turn], req, streaming)
		if name == "thinking" && turn == 0 && (len(resp.Thinking) == 0 || resp.Thinking[0].Text == "" || resp.Thinking[0].Signature == "") {
			t.Errorf("turn %d: thinking %+v, want text with a signature", turn, resp.Thinking)
		}
		checkAnswer(t, turn, name, resp, "end_turn", "tool_use")
	}, func(_ int, c ToolCall) string { return sc.result(c) })
}

func newTestAnthropic(t *testing.T, url string, stream bool, mod func(*AnthropicConfig)) *Anthropic {
	t.Helper()
	cfg := AnthropicConfig{BaseURL: url, APIKey: "test-key", Model: "claude-sonnet-4-20250514", Stream: &stream}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewAnthropic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkAnthropicSent checks the request the adapter sent for req: turns
// alternate, tool results travel in user turns, and the cache breakpoints
// sit on the system prompt, the last tool and the last user block.
func checkAnthropicSent(t *testing.T, sent map[string]any, req Request, streaming bool) {
	t.Helper()
	if sent == nil {
		t.Fatal("request body was not JSON")
	}
	if got, _ := sent["stream"].(bool); got != streaming {
		t.Errorf("stream = %v", sent["stream"])
	}
	if sent["max_tokens"] != float64(req.MaxTokens) {
		t.Errorf("max_tokens = %v", sent["max_tokens"])
	}
	if req.ThinkingBudget > 0 {
		th, _ := sent["thinking"].(map[string]any)
		if th["type"] != "enabled" || th["budget_tokens"] != float64(req.ThinkingBudget) {
			t.Errorf("thinking = %v", sent["thinking"])
		}
		if _, ok := sent["temperature"]; ok {
			t.Errorf("temperature %v sent with thinking", sent["temperature"])
		}
	} else if _, ok := sent["thinking"]; ok {
		t.Errorf("thinking = %v, want none", sent["thinking"])
	}
	system, _ := sent["system"].([]any)
	if len(system) != 1 || !hasCacheControl(system[0]) || system[0].(map[string]any)["text"] != req.System {
		t.Errorf("system = %v", sent["system"])
	}
	tools, _ := sent["tools"].([]any)
	if len(tools) != len(req.Tools) {
		t.Errorf("sent %d tools, want %d", len(tools), len(req.Tools))
	}
	for i, tool := range tools {
		if hasCacheControl(tool) != (i == len(tools)-1) {
			t.Errorf("tool %d: cache_control %v", i, tool)
		}
	}
	msgs, _ := sent["messages"].([]any)
	var toolCalls, toolResults int
	for _, m := range req.Messages {
		toolCalls += len(m.ToolCalls)
		if m.Role == RoleTool {
			toolResults++
		}
	}
	var assistants []Message
	for _, m := range req.Messages {
		if m.Role == RoleAssistant {
			assistants = append(assistants, m)
		}
	}
	var sentCalls, sentResults, breakpoints int
	for i, raw := range msgs {
		m := raw.(map[string]any)
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m["role"] != want {
			t.Errorf("message %d role %v, want %s (turns must alternate)", i, m["role"], want)
		}
		blocks, _ := m["content"].([]any)
		if want == "assistant" && i/2 < len(assistants) {
			// The thinking blocks come back first, unchanged.
			for j, th := range assistants[i/2].Thinking {
				b, _ := blocks[j].(map[string]any)
				if b["type"] != "thinking" || b["thinking"] != th.Text || b["signature"] != th.Signature || th.Signature == "" {
					t.Errorf("message %d block %d: %v, want thinking %+v", i, j, b, th)
				}
			}
		}
		for j, b := range blocks {
			switch b.(map[string]any)["type"] {
			case "tool_use":
				sentCalls++
				if _, ok := b.(map[string]any)["input"].(map[string]any); !ok {
					t.Errorf("message %d block %d: input %v", i, j, b)
				}
			case "tool_result":
				sentResults++
			}
			if hasCacheControl(b) {
				breakpoints++
				if i != len(msgs)-1 || j != len(blocks)-1 {
					t.Errorf("message %d block %d: unexpected cache_control", i, j)
				}
			}
		}
	}
	if sentCalls != toolCalls || sentResults != toolResults || breakpoints != 1 {
		t.Errorf("sent %d tool_use, %d tool_result blocks, %d message breakpoints; want %d, %d, 1", sentCalls, sentResults, breakpoints, toolCalls, toolResults)
	}
}

func hasCacheControl(v any) bool {
	m, _ := v.(map[string]any)
	cc, _ := m["cache_control"].(map[string]any)
	return cc["type"] == "ephemeral"
}

// anthropicReference is an answer decoded straight from a recorded body,
// without the SDK, to compare the adapter with.
type anthropicReference struct {
	text     string
	calls    []ToolCall
	stop     string
	usage    Usage
	thinking string
	sigs     []string // signatures of the thinking blocks, in order
	events   int
}

type anthropicWireUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
}

func (u *anthropicWireUsage) into(dst *Usage) {
	set := func(p *int64, d *int64) {
		if p != nil {
			*d = *p
		}
	}
	set(u.InputTokens, &dst.InputTokens)
	set(u.OutputTokens, &dst.OutputTokens)
	set(u.CacheReadInputTokens, &dst.CacheReadTokens)
	set(u.CacheCreationInputTokens, &dst.CacheWriteTokens)
}

type anthropicWireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

func anthropicReferenceDecode(t *testing.T, body string, streaming bool) anthropicReference {
	t.Helper()
	var ref anthropicReference
	if !streaming {
		var m struct {
			Content    []anthropicWireBlock `json:"content"`
			StopReason string               `json:"stop_reason"`
			Usage      anthropicWireUsage   `json:"usage"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("recorded body: %v", err)
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				ref.text += b.Text
			case "thinking":
				ref.thinking += b.Thinking
				ref.sigs = append(ref.sigs, b.Signature)
			case "tool_use":
				var buf bytes.Buffer
				if err := json.Compact(&buf, b.Input); err != nil {
					t.Fatalf("recorded input %s: %v", b.Input, err)
				}
				ref.calls = append(ref.calls, ToolCall{ID: b.ID, Name: b.Name, Arguments: buf.String()})
			}
		}
		ref.stop = m.StopReason
		m.Usage.into(&ref.usage)
		return ref
	}
	slots, sigSlots := map[int]int{}, map[int]int{}
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				Usage anthropicWireUsage `json:"usage"`
			} `json:"message"`
			ContentBlock anthropicWireBlock `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage *anthropicWireUsage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("recorded event %q: %v", data, err)
		}
		ref.events++
		switch ev.Type {
		case "message_start":
			ev.Message.Usage.into(&ref.usage)
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				slots[ev.Index] = len(ref.calls)
				ref.calls = append(ref.calls, ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name})
			}
			if ev.ContentBlock.Type == "thinking" {
				sigSlots[ev.Index] = len(ref.sigs)
				ref.sigs = append(ref.sigs, ev.ContentBlock.Signature)
				ref.thinking += ev.ContentBlock.Thinking
			}
			ref.text += ev.ContentBlock.Text
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				ref.text += ev.Delta.Text
			case "thinking_delta":
				ref.thinking += ev.Delta.Thinking
			case "signature_delta":
				ref.sigs[sigSlots[ev.Index]] += ev.Delta.Signature
			case "input_json_delta":
				ref.calls[slots[ev.Index]].Arguments += ev.Delta.PartialJSON
			}
		case "message_delta":
			ref.stop = ev.Delta.StopReason
			if ev.Usage != nil {
				ev.Usage.into(&ref.usage)
			}
		}
	}
	for i := range ref.calls {
		if ref.calls[i].Arguments == "" {
			ref.calls[i].Arguments = "{}"
		}
	}
	if ref.events == 0 {
		t.Fatal("recorded stream has no events")
	}
	return ref
}

func checkAgainstAnthropicReference(t *testing.T, turn int, resp *Response, want anthropicReference) {
	t.Helper()
	if resp.Text != want.text {
		t.Errorf("turn %d: text %q, recorded %q", turn, resp.Text, want.text)
	}
	if want.thinking != "" && strings.Contains(resp.Text, want.thinking) {
		t.Errorf("turn %d: thinking leaked into the text", turn)
	}
	var thinking string
	var sigs []string
	for _, th := range resp.Thinking {
		thinking += th.Text
		sigs = append(sigs, th.Signature)
	}
	if thinking != want.thinking || !reflect.DeepEqual(sigs, want.sigs) {
		t.Errorf("turn %d: thinking %q signatures %q, recorded %q %q", turn, thinking, sigs, want.thinking, want.sigs)
	}
	if !reflect.DeepEqual(resp.ToolCalls, want.calls) {
		t.Errorf("turn %d: tool calls %+v, recorded %+v", turn, resp.ToolCalls, want.calls)
	}
	if resp.StopReason != want.stop {
		t.Errorf("turn %d: stop reason %q, recorded %q", turn, resp.StopReason, want.stop)
	}
	if resp.Usage != want.usage {
		t.Errorf("turn %d: usage %+v, recorded %+v", turn, resp.Usage, want.usage)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("turn %d: usage missing: %+v", turn, resp.Usage)
	}
	if resp.Model == "" {
		t.Errorf("turn %d: model missing", turn)
	}
}
