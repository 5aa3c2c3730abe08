package llm

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// geminiFixtureDirs are the cassette directories that record Gemini API
// (or Vertex AI Gemini, same answer format) traffic.
var geminiFixtureDirs = []string{"TestGoogleCommon/gemini-*", "TestGoogleCommon/vertex-gemini-*", "TestGoogleThinking/*"}

func TestGeminiFixtures(t *testing.T) {
	var globs []string
	for _, dir := range geminiFixtureDirs {
		globs = append(globs, dir+"/*.yaml")
	}
	runFixtures(t, "Gemini ", globs, replayGeminiFixture)
}

func geminiScenario(base string) (scenario, bool) {
	if base == "thinking" {
		sc := scenarios["tool"]
		sc.prompt = "What's the weather in Florence, Italy?"
		return sc, true
	}
	sc, ok := scenarios[base]
	return sc, ok
}

func replayGeminiFixture(t *testing.T, file string) {
	recorded, err := readCassette(file)
	if err != nil {
		t.Fatal(err)
	}
	name, streaming := cassetteName(file)
	sc, ok := geminiScenario(name)
	if !ok {
		t.Skipf("no scenario for %s", filepath.Base(file))
	}
	rp, srv := serveReplay(t, recorded, nil, `{"error":{"code":418,"message":"unexpected request"}}`)
	p, err := NewGemini(GeminiConfig{BaseURL: srv.URL, APIKey: "test-key", Model: "gemini-test", Stream: &streaming, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	replayTurns(t, p, scenarioRequest(sc), len(recorded), func(turn int, req Request, resp *Response) {
		checkGeminiAgainstReference(t, turn, resp, geminiReferenceDecode(t, recorded[turn].Body, streaming))
		checkGeminiSent(t, rp, turn, req, streaming)
		checkAnswer(t, turn, name, resp, "stop", "tool_calls")
	}, func(_ int, c ToolCall) string { return sc.result(c) })
}

// checkGeminiSent checks the request the adapter sent for req.
func checkGeminiSent(t *testing.T, rp *replay, turn int, req Request, streaming bool) {
	t.Helper()
	sent := rp.requests[turn]
	if sent == nil {
		t.Fatal("request body was not JSON")
	}
	wantPath := "/v1beta/models/gemini-test:generateContent"
	if streaming {
		wantPath = "/v1beta/models/gemini-test:streamGenerateContent"
	}
	if rp.paths[turn] != wantPath {
		t.Errorf("path %s, want %s", rp.paths[turn], wantPath)
	}
	if key := rp.headers[turn].Get("x-goog-api-key"); key != "test-key" {
		t.Errorf("x-goog-api-key %q", key)
	}
	gc, _ := sent["generationConfig"].(map[string]any)
	if gc["maxOutputTokens"] != float64(req.MaxTokens) {
		t.Errorf("generationConfig = %v", sent["generationConfig"])
	}
	si, _ := sent["systemInstruction"].(map[string]any)
	if parts, _ := si["parts"].([]any); len(parts) != 1 || parts[0].(map[string]any)["text"] != req.System {
		t.Errorf("systemInstruction = %v", sent["systemInstruction"])
	}
	// user, then per answered turn: model, user (all results together).
	contents, _ := sent["contents"].([]any)
	if want := 1 + 2*turn; len(contents) != want {
		t.Fatalf("sent %d contents, want %d: %v", len(contents), want, contents)
	}
	for i, c := range contents {
		role := c.(map[string]any)["role"]
		if want := map[bool]string{true: "user", false: "model"}[i%2 == 0]; role != want {
			t.Errorf("content %d role %v, want %s", i, role, want)
		}
	}
	if turn > 0 {
		calls := req.Messages[1].ToolCalls
		model := contents[1].(map[string]any)["parts"].([]any)
		results := contents[2].(map[string]any)["parts"].([]any)
		if len(results) != len(calls) {
			t.Errorf("sent %d function responses for %d calls", len(results), len(calls))
		}
		n := 0
		for _, part := range model {
			if fc, ok := part.(map[string]any)["functionCall"].(map[string]any); ok {
				if fc["id"] != calls[n].ID || fc["name"] != calls[n].Name {
					t.Errorf("function call %v, want %+v", fc, calls[n])
				}
				n++
			}
		}
		if n != len(calls) {
			t.Errorf("sent %d function calls, want %d", n, len(calls))
		}
		for i, part := range results {
			fr, _ := part.(map[string]any)["functionResponse"].(map[string]any)
			out, _ := fr["response"].(map[string]any)
			if fr["name"] != calls[i].Name || fr["id"] != calls[i].ID || out["output"] == nil {
				t.Errorf("function response %v", part)
			}
		}
	}
	tools, _ := sent["tools"].([]any)
	if len(req.Tools) == 0 {
		if len(tools) != 0 {
			t.Errorf("sent tools %v", tools)
		}
		return
	}
	if len(tools) != 1 {
		t.Fatalf("sent tools %v", tools)
	}
	decls, _ := tools[0].(map[string]any)["functionDeclarations"].([]any)
	if len(decls) != len(req.Tools) {
		t.Fatalf("sent %d declarations, want %d", len(decls), len(req.Tools))
	}
	for i, d := range decls {
		d := d.(map[string]any)
		var want any
		_ = json.Unmarshal(req.Tools[i].Parameters, &want)
		if d["name"] != req.Tools[i].Name || !reflect.DeepEqual(d["parametersJsonSchema"], want) {
			t.Errorf("declaration %v", d)
		}
	}
}

// geminiWire is the part of a recorded answer the reference decoder reads.
type geminiWire struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text         string `json:"text"`
				Thought      bool   `json:"thought"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
	} `json:"usageMetadata"`
}

// geminiReferenceDecode decodes a recorded body without the SDK.
func geminiReferenceDecode(t *testing.T, body string, streaming bool) reference {
	t.Helper()
	var ref reference
	fold := func(data string) {
		var w geminiWire
		if err := json.Unmarshal([]byte(data), &w); err != nil {
			t.Fatalf("recorded answer %q: %v", data, err)
		}
		ref.chunks++
		if u := w.UsageMetadata; u != nil {
			ref.usage = Usage{InputTokens: u.PromptTokenCount - u.CachedContentTokenCount,
				OutputTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount, CacheReadTokens: u.CachedContentTokenCount}
		}
		for _, c := range w.Candidates {
			for _, p := range c.Content.Parts {
				switch {
				case p.Thought:
				case p.FunctionCall != nil:
					args := "{}"
					if len(p.FunctionCall.Args) > 0 {
						args = string(p.FunctionCall.Args)
					}
					ref.calls = append(ref.calls, ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: args})
				default:
					ref.text += p.Text
				}
			}
			if c.FinishReason != "" {
				ref.stop = c.FinishReason
			}
		}
	}
	if !streaming {
		fold(body)
		return ref
	}
	for _, line := range strings.Split(body, "\n") {
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data: "); ok {
			fold(data)
		}
	}
	if ref.chunks == 0 {
		t.Fatal("recorded stream has no chunks")
	}
	return ref
}

func checkGeminiAgainstReference(t *testing.T, turn int, resp *Response, want reference) {
	t.Helper()
	if resp.Text != want.text {
		t.Errorf("turn %d: text %q, recorded %q", turn, resp.Text, want.text)
	}
	if len(resp.ToolCalls) != len(want.calls) {
		t.Fatalf("turn %d: tool calls %+v, recorded %+v", turn, resp.ToolCalls, want.calls)
	}
	ids := map[string]bool{}
	for i, c := range resp.ToolCalls {
		w := want.calls[i]
		var got, rec any
		_ = json.Unmarshal([]byte(c.Arguments), &got)
		_ = json.Unmarshal([]byte(w.Arguments), &rec)
		if c.Name != w.Name || !reflect.DeepEqual(got, rec) || c.ID == "" || (w.ID != "" && c.ID != w.ID) || ids[c.ID] {
			t.Errorf("turn %d: call %d %+v, recorded %+v", turn, i, c, w)
		}
		ids[c.ID] = true
	}
	stop := map[string]string{"STOP": "stop", "MAX_TOKENS": "length"}[want.stop]
	if stop == "stop" && len(want.calls) > 0 {
		stop = "tool_calls"
	}
	if resp.StopReason != stop {
		t.Errorf("turn %d: stop reason %q, recorded %q", turn, resp.StopReason, want.stop)
	}
	if resp.Usage != want.usage {
		t.Errorf("turn %d: usage %+v, recorded %+v", turn, resp.Usage, want.usage)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("turn %d: usage missing: %+v", turn, resp.Usage)
	}
}
