package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// The recorded provider exchanges live outside the repository, in the
// shared directory beside it (see its README). The tests replay the
// recorded response bodies and check what the adapter makes of them.

// fixtureSuites are the cassette directories that record Chat Completions
// traffic.
var fixtureSuites = []string{"TestOpenAICommon", "TestOpenAICompatibleCommon"}

// providerFixtures returns the recorded-provider directory, skipping the
// test when it is absent. It looks for shared/fixtures/providers beside the
// package directory and each of its parents, so it finds ../../../shared
// from internal/llm whatever the checkout is called.
func providerFixtures(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("ULTRA_PROVIDER_FIXTURES"); dir != "" {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Skipf("no working directory: %v", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		candidate := filepath.Join(dir, "shared", "fixtures", "providers")
		if fi, err := os.Stat(candidate); err == nil && fi.IsDir() {
			return candidate
		}
		if filepath.Dir(dir) == dir {
			t.Skipf("recorded provider fixtures not found (shared/fixtures/providers beside %s or a parent)", wd)
		}
	}
}

func TestOpenAIFixtures(t *testing.T) {
	root := providerFixtures(t)
	found := 0
	for _, suite := range fixtureSuites {
		files, _ := filepath.Glob(filepath.Join(root, suite, "*", "*.yaml"))
		for _, file := range files {
			found++
			rel, _ := filepath.Rel(root, file)
			t.Run(strings.TrimSuffix(rel, ".yaml"), func(t *testing.T) { replayFixture(t, file) })
		}
	}
	if found == 0 {
		t.Skipf("no cassettes under %s", root)
	}
}

// replay serves recorded responses in order and records the requests.
type replay struct {
	mu       sync.Mutex
	recorded []interaction
	requests []map[string]any
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	r.mu.Lock()
	n := len(r.requests)
	r.requests = append(r.requests, body)
	r.mu.Unlock()
	if !strings.HasSuffix(req.URL.Path, "/chat/completions") || n >= len(r.recorded) {
		http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusTeapot)
		return
	}
	rec := r.recorded[n]
	w.Header().Set("Content-Type", rec.ContentType)
	w.WriteHeader(rec.Status)
	_, _ = io.WriteString(w, rec.Body)
}

// scenario is the conversation a cassette recorded.
type scenario struct {
	system string
	prompt string
	tools  []ToolSpec
	result func(ToolCall) string // tool results for the second turn
}

var scenarios = map[string]scenario{
	"simple": {system: "You are a helpful assistant", prompt: "Say hi in Portuguese"},
	"tool": {
		system: "You are a helpful assistant",
		prompt: "What's the weather in Florence?",
		tools: []ToolSpec{{Name: "weather", Description: "Get weather information for a location",
			Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string","description":"the city"}},"required":["location"]}`)}},
		result: func(ToolCall) string { return "40 C" },
	},
	"multi_tool": {
		system: "You are a helpful assistant. Always use both add and multiply at the same time.",
		prompt: "Add and multiply the number 2 and 3",
		tools: []ToolSpec{
			{Name: "add", Description: "Add two numbers", Parameters: json.RawMessage(numberPair)},
			{Name: "multiply", Description: "Multiply two numbers", Parameters: json.RawMessage(numberPair)},
		},
		result: func(c ToolCall) string {
			if c.Name == "add" {
				return "5"
			}
			return "6"
		},
	},
}

const numberPair = `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`

func replayFixture(t *testing.T, file string) {
	recorded, err := readCassette(file)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(filepath.Base(file), ".yaml")
	streaming := strings.HasSuffix(base, "_streaming")
	sc, ok := scenarios[strings.TrimSuffix(base, "_streaming")]
	if !ok {
		t.Skipf("no scenario for %s", base)
	}
	rp := &replay{recorded: recorded}
	srv := httptest.NewServer(rp)
	defer srv.Close()
	p := newTestOpenAI(t, srv.URL+"/v1", streaming, nil)

	req := Request{System: sc.system, Messages: []Message{{Role: RoleUser, Content: sc.prompt}}, Tools: sc.tools, MaxTokens: 4000}
	for turn := range recorded {
		var deltas []Delta
		resp, err := p.Stream(context.Background(), req, func(d Delta) { deltas = append(deltas, d) })
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		want := referenceDecode(t, recorded[turn].Body, streaming)
		checkAgainstReference(t, turn, resp, want)
		checkDeltas(t, resp, deltas)
		checkSent(t, rp.requests[turn], req, streaming)
		if turn == 0 {
			checkScenario(t, base, resp)
		} else if resp.Text == "" || resp.StopReason != "stop" {
			t.Errorf("turn %d: final answer %+v", turn, resp)
		}
		req.Messages = append(req.Messages, Message{Role: RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		for _, c := range resp.ToolCalls {
			req.Messages = append(req.Messages, Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: sc.result(c)})
		}
	}
}

// checkScenario checks the first answer means what the prompt asked for.
func checkScenario(t *testing.T, base string, resp *Response) {
	t.Helper()
	switch strings.TrimSuffix(base, "_streaming") {
	case "simple":
		if !strings.Contains(strings.ToLower(resp.Text), "o") || resp.StopReason != "stop" || len(resp.ToolCalls) != 0 {
			t.Errorf("simple answer %+v", resp)
		}
	case "tool":
		if len(resp.ToolCalls) != 1 || resp.StopReason != "tool_calls" {
			t.Fatalf("tool answer %+v", resp)
		}
		var args struct{ Location string }
		c := resp.ToolCalls[0]
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || c.Name != "weather" || c.ID == "" || !strings.Contains(args.Location, "Florence") {
			t.Errorf("weather call %+v (%v)", c, err)
		}
	case "multi_tool":
		if len(resp.ToolCalls) != 2 || resp.StopReason != "tool_calls" {
			t.Fatalf("multi-tool answer %+v", resp)
		}
		names := map[string]bool{}
		for _, c := range resp.ToolCalls {
			var args struct{ A, B int }
			if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || args.A != 2 || args.B != 3 || c.ID == "" {
				t.Errorf("call %+v (%v)", c, err)
			}
			names[c.Name] = true
		}
		if !names["add"] || !names["multiply"] || resp.ToolCalls[0].ID == resp.ToolCalls[1].ID {
			t.Errorf("calls %+v", resp.ToolCalls)
		}
	}
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
