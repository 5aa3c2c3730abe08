package llm

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixtureSuites are the cassette directories that record Chat Completions
// traffic.
var fixtureSuites = []string{"TestOpenAICommon", "TestOpenAICompatibleCommon"}

func TestOpenAIFixtures(t *testing.T) {
	runFixtures(t, "", suiteGlobs(fixtureSuites...), replayFixture)
}

func replayFixture(t *testing.T, file string) {
	recorded, err := readCassette(file)
	if err != nil {
		t.Fatal(err)
	}
	name, streaming := cassetteName(file)
	sc, ok := scenarios[name]
	if !ok {
		t.Skipf("no scenario for %s", filepath.Base(file))
	}
	rp, srv := serveReplay(t, recorded, func(path string) bool { return strings.HasSuffix(path, "/chat/completions") },
		`{"error":{"message":"unexpected request"}}`)
	p := newTestOpenAI(t, srv.URL+"/v1", streaming, nil)
	replayTurns(t, p, scenarioRequest(sc), len(recorded), func(turn int, req Request, resp *Response) {
		checkAgainstReference(t, turn, resp, referenceDecode(t, recorded[turn].Body, streaming))
		checkSent(t, rp.requests[turn], req, streaming)
		checkAnswer(t, turn, name, resp, "stop", "tool_calls")
	}, func(_ int, c ToolCall) string { return sc.result(c) })
}

// checkSent checks the request the adapter sent for req.
func checkSent(t *testing.T, sent map[string]any, req Request, streaming bool) {
	t.Helper()
	if sent == nil {
		t.Fatal("request body was not JSON")
	}
	if got, _ := sent["stream"].(bool); got != streaming {
		t.Errorf("stream = %v", sent["stream"])
	}
	if so, _ := sent["stream_options"].(map[string]any); streaming && so["include_usage"] != true {
		t.Errorf("stream_options = %v", sent["stream_options"])
	}
	if sent["max_tokens"] != float64(req.MaxTokens) {
		t.Errorf("max_tokens = %v", sent["max_tokens"])
	}
	msgs, _ := sent["messages"].([]any)
	if len(msgs) != len(req.Messages)+1 {
		t.Fatalf("sent %d messages for %d plus system", len(msgs), len(req.Messages))
	}
	for i, m := range req.Messages {
		got := msgs[i+1].(map[string]any)
		if got["role"] != string(m.Role) {
			t.Errorf("message %d role %v, want %s", i, got["role"], m.Role)
		}
		if m.Role == RoleTool && got["tool_call_id"] != m.ToolCallID {
			t.Errorf("message %d tool_call_id %v, want %s", i, got["tool_call_id"], m.ToolCallID)
		}
		if calls, _ := got["tool_calls"].([]any); len(calls) != len(m.ToolCalls) {
			t.Errorf("message %d sent %d tool calls, want %d", i, len(calls), len(m.ToolCalls))
		}
	}
	tools, _ := sent["tools"].([]any)
	if len(tools) != len(req.Tools) {
		t.Errorf("sent %d tools, want %d", len(tools), len(req.Tools))
	}
}

// reference is an answer decoded straight from the recorded body, without
// the SDK, to compare the adapter with.
type reference struct {
	text   string
	calls  []ToolCall
	stop   string
	usage  Usage
	chunks int
}

type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *wireUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
		CacheReadTokens: u.PromptTokensDetails.CachedTokens, CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens}
}

type wireCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func referenceDecode(t *testing.T, body string, streaming bool) reference {
	t.Helper()
	var ref reference
	if !streaming {
		var c struct {
			Choices []struct {
				Message struct {
					Content   *string    `json:"content"`
					ToolCalls []wireCall `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage *wireUsage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatalf("recorded body: %v", err)
		}
		m := c.Choices[0].Message
		if m.Content != nil {
			ref.text = *m.Content
		}
		for _, wc := range m.ToolCalls {
			ref.calls = append(ref.calls, ToolCall{ID: wc.ID, Name: wc.Function.Name, Arguments: wc.Function.Arguments})
		}
		ref.stop, ref.usage = c.Choices[0].FinishReason, c.Usage.usage()
		return ref
	}
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || strings.HasPrefix(data, "[DONE]") {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   *string    `json:"content"`
					ToolCalls []wireCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *wireUsage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("recorded chunk %q: %v", data, err)
		}
		ref.chunks++
		if c.Usage != nil {
			ref.usage = c.Usage.usage()
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				ref.text += *ch.Delta.Content
			}
			for _, wc := range ch.Delta.ToolCalls {
				for len(ref.calls) <= wc.Index {
					ref.calls = append(ref.calls, ToolCall{})
				}
				rc := &ref.calls[wc.Index]
				rc.ID += wc.ID
				rc.Name += wc.Function.Name
				rc.Arguments += wc.Function.Arguments
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				ref.stop = *ch.FinishReason
			}
		}
	}
	if ref.chunks == 0 {
		t.Fatal("recorded stream has no chunks")
	}
	return ref
}

func checkAgainstReference(t *testing.T, turn int, resp *Response, want reference) {
	t.Helper()
	if resp.Text != want.text {
		t.Errorf("turn %d: text %q, recorded %q", turn, resp.Text, want.text)
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
}
