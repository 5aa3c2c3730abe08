package llm

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// responsesSuites are the cassette directories that record Responses API
// traffic.
var responsesSuites = []string{"TestOpenAIResponsesCommon", "TestOpenAIResponsesWithSummaryThinking"}

func TestResponsesFixtures(t *testing.T) {
	runFixtures(t, "Responses ", suiteGlobs(responsesSuites...), replayResponsesFixture)
}

// cassetteRequests reads the request bodies of a go-vcr v2 cassette, in
// the layout readCassette understands.
func cassetteRequests(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []map[string]any
	section := ""
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		switch {
		case strings.HasPrefix(line, "- id:"):
			section = ""
			continue
		case line == "  request:" || line == "  response:":
			section = strings.TrimSuffix(strings.TrimSpace(line), ":")
			continue
		}
		if section != "request" || indent(line) != 4 {
			continue
		}
		key, value, _ := strings.Cut(strings.TrimSpace(line), ":")
		if key != "body" {
			continue
		}
		body, next, err := scalar(lines, i, strings.TrimSpace(value), 4)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		i = next
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%s:%d: request body: %v", path, i+1, err)
		}
		out = append(out, m)
	}
	return out
}

// requestFromRecorded rebuilds the first turn's Request from the recorded
// request body.
func requestFromRecorded(t *testing.T, rec map[string]any) Request {
	t.Helper()
	req := Request{Model: str(rec["model"])}
	if n, ok := rec["max_output_tokens"].(float64); ok {
		req.MaxTokens = int(n)
	}
	if s := str(rec["instructions"]); s != "" {
		req.System = s
	}
	items, _ := rec["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		switch m["role"] {
		case "system", "developer":
			req.System = str(m["content"])
		case "user":
			req.Messages = append(req.Messages, Message{Role: RoleUser, Content: inputText(m["content"])})
		}
	}
	tools, _ := rec["tools"].([]any)
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		params, _ := json.Marshal(m["parameters"])
		req.Tools = append(req.Tools, ToolSpec{Name: str(m["name"]), Description: str(m["description"]), Parameters: params})
	}
	if len(req.Messages) == 0 {
		t.Fatalf("recorded request has no user message: %v", rec)
	}
	return req
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// inputText is the text of a message content, a string or a list of parts.
func inputText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	parts, _ := v.([]any)
	var b strings.Builder
	for _, p := range parts {
		m, _ := p.(map[string]any)
		b.WriteString(str(m["text"]))
	}
	return b.String()
}

func replayResponsesFixture(t *testing.T, file string) {
	recorded, err := readCassette(file)
	if err != nil {
		t.Fatal(err)
	}
	requests := cassetteRequests(t, file)
	if len(requests) != len(recorded) {
		t.Fatalf("%d requests for %d responses", len(requests), len(recorded))
	}
	name, streaming := cassetteName(file)
	rp, srv := serveReplay(t, recorded, func(path string) bool { return strings.HasSuffix(path, "/responses") },
		`{"error":{"message":"unexpected request"}}`)
	p, err := NewResponses(ResponsesConfig{BaseURL: srv.URL + "/v1", APIKey: "test-key", Stream: &streaming})
	if err != nil {
		t.Fatal(err)
	}

	var prevReasoning []wireResponsesItem
	replayTurns(t, p, requestFromRecorded(t, requests[0]), len(recorded), func(turn int, req Request, resp *Response) {
		want, reasoning := responsesReferenceDecode(t, recorded[turn].Body, streaming)
		checkAgainstReference(t, turn, resp, want)
		checkResponsesSent(t, rp.requests[turn], requests[turn], req, streaming, prevReasoning)
		checkAnswer(t, turn, name, resp, "stop", "tool_calls")
		if turn+1 < len(recorded) && len(resp.ToolCalls) == 0 {
			t.Fatalf("turn %d: no tool calls, but the cassette goes on", turn)
		}
		prevReasoning = reasoning
	}, func(turn int, c ToolCall) string {
		out, ok := recordedOutputs(requests[turn+1])[c.ID]
		if !ok {
			t.Fatalf("turn %d: no recorded output for call %s", turn, c.ID)
		}
		return out
	})
}

// recordedOutputs maps call ids to the tool results a recorded request
// sent.
func recordedOutputs(rec map[string]any) map[string]string {
	out := map[string]string{}
	items, _ := rec["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["type"] == "function_call_output" {
			out[str(m["call_id"])] = str(m["output"])
		}
	}
	return out
}

// checkResponsesSent compares the request the adapter sent with the
// recorded one: the same conversation items (reasoning items aside, which
// the recording client did not send back), tools and flags, with the
// system prompt as instructions and the previous turn's encrypted reasoning
// items before its function calls.
func checkResponsesSent(t *testing.T, sent, recorded map[string]any, req Request, streaming bool, reasoning []wireResponsesItem) {
	t.Helper()
	if sent == nil {
		t.Fatal("request body was not JSON")
	}
	if got, _ := sent["stream"].(bool); got != streaming {
		t.Errorf("stream = %v", sent["stream"])
	}
	if sent["store"] != false {
		t.Errorf("store = %v", sent["store"])
	}
	if sent["instructions"] != req.System {
		t.Errorf("instructions = %v, want %q", sent["instructions"], req.System)
	}
	if sent["model"] != recorded["model"] {
		t.Errorf("model = %v, recorded %v", sent["model"], recorded["model"])
	}
	if sent["max_output_tokens"] != recorded["max_output_tokens"] {
		t.Errorf("max_output_tokens = %v, recorded %v", sent["max_output_tokens"], recorded["max_output_tokens"])
	}
	include, _ := sent["include"].([]any)
	if wantInclude := encryptedReasoning(req.Model); wantInclude != (len(include) == 1 && include[0] == "reasoning.encrypted_content") {
		t.Errorf("include = %v for model %s", sent["include"], req.Model)
	}
	type item struct{ Type, Role, CallID, Name, Arguments, Output string }
	var got, want []item
	var sentReasoning []map[string]any
	firstCall := -1
	items, _ := sent["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["type"] == "reasoning" {
			if firstCall >= 0 {
				t.Errorf("reasoning item after a function call")
			}
			sentReasoning = append(sentReasoning, m)
			continue
		}
		if m["type"] == "function_call" && firstCall < 0 {
			firstCall = len(got)
		}
		got = append(got, item{str(m["type"]), str(m["role"]), str(m["call_id"]), str(m["name"]), str(m["arguments"]), str(m["output"])})
	}
	items, _ = recorded["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["role"] == "system" || m["role"] == "developer" || m["type"] == "reasoning" {
			continue
		}
		want = append(want, item{str(m["type"]), str(m["role"]), str(m["call_id"]), str(m["name"]), str(m["arguments"]), str(m["output"])})
	}
	// Messages may or may not carry "type":"message"; compare without it.
	for i := range got {
		if got[i].Type == "message" {
			got[i].Type = ""
		}
	}
	for i := range want {
		if want[i].Type == "message" {
			want[i].Type = ""
		}
	}
	if len(got) != len(want) {
		t.Fatalf("sent items %+v, recorded %+v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("item %d: sent %+v, recorded %+v", i, got[i], want[i])
		}
	}
	var withContent []wireResponsesItem
	for _, r := range reasoning {
		if r.EncryptedContent != "" {
			withContent = append(withContent, r)
		}
	}
	if len(sentReasoning) != len(withContent) {
		t.Fatalf("sent %d reasoning items, previous turn had %d with encrypted content", len(sentReasoning), len(withContent))
	}
	for i, r := range withContent {
		s := sentReasoning[i]
		if s["id"] != r.ID || s["encrypted_content"] != r.EncryptedContent {
			t.Errorf("reasoning item %d: sent id %v, want %s (encrypted content sent: %v)", i, s["id"], r.ID, s["encrypted_content"] == r.EncryptedContent)
		}
		if _, ok := s["summary"].([]any); !ok {
			t.Errorf("reasoning item %d: summary %v, want a list", i, s["summary"])
		}
	}
	tools, _ := sent["tools"].([]any)
	if len(tools) != len(req.Tools) {
		t.Errorf("sent %d tools, want %d", len(tools), len(req.Tools))
	}
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		if m["type"] != "function" || m["strict"] != false || m["parameters"] == nil {
			t.Errorf("tool %v", m)
		}
	}
}

// wireResponsesItem is an output item decoded without the SDK.
type wireResponsesItem struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Content          []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

type wireResponse struct {
	Status            string              `json:"status"`
	Output            []wireResponsesItem `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *struct {
		InputTokens        int64 `json:"input_tokens"`
		OutputTokens       int64 `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
}

// responsesReferenceDecode decodes a recorded answer without the SDK. For
// streams it also counts the text and argument deltas, which must add up
// to the final response's content.
func responsesReferenceDecode(t *testing.T, body string, streaming bool) (reference, []wireResponsesItem) {
	t.Helper()
	var final *wireResponse
	var streamedText string
	if !streaming {
		final = &wireResponse{}
		if err := json.Unmarshal([]byte(body), final); err != nil {
			t.Fatalf("recorded body: %v", err)
		}
	} else {
		chunks := 0
		for _, line := range strings.Split(body, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type     string        `json:"type"`
				Delta    string        `json:"delta"`
				Response *wireResponse `json:"response"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("recorded event %q: %v", data, err)
			}
			chunks++
			switch ev.Type {
			case "response.output_text.delta":
				streamedText += ev.Delta
			case "response.completed", "response.incomplete":
				final = ev.Response
			}
		}
		if final == nil {
			t.Fatalf("recorded stream (%d events) has no final response", chunks)
		}
	}
	var ref reference
	var reasoning []wireResponsesItem
	for _, it := range final.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				ref.text += c.Text + c.Refusal
			}
		case "function_call":
			ref.calls = append(ref.calls, ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "reasoning":
			reasoning = append(reasoning, it)
		}
	}
	if streaming && streamedText != ref.text {
		t.Fatalf("recorded text deltas %q differ from the final text %q", streamedText, ref.text)
	}
	switch {
	case final.Status == "incomplete":
		ref.stop = "length"
	case len(ref.calls) > 0:
		ref.stop = "tool_calls"
	default:
		ref.stop = "stop"
	}
	if u := final.Usage; u != nil {
		ref.usage = Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.InputTokensDetails.CachedTokens}
	}
	return ref, reasoning
}
