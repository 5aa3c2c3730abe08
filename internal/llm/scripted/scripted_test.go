package scripted_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/llm/scripted"
)

// start serves script (JSON text) and returns the server and its base URL.
func start(t *testing.T, script, logPath string) (*scripted.Server, string) {
	t.Helper()
	sc, err := scripted.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(sc, logPath)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs.URL + "/v1"
}

// provider is the real OpenAI adapter pointed at the scripted server.
func provider(t *testing.T, baseURL string, stream bool) *llm.OpenAI {
	t.Helper()
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: baseURL, Model: "fake", Stream: &stream})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var tools = []llm.ToolSpec{
	{Name: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}}}`)},
	{Name: "glob", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}}}`)},
	{Name: "edit"},
}

func ask(p *llm.OpenAI, user string, deltas *[]llm.Delta) (*llm.Response, error) {
	req := llm.Request{System: "you are a test", Messages: []llm.Message{{Role: llm.RoleUser, Content: user}}, Tools: tools}
	return p.Stream(context.Background(), req, func(d llm.Delta) {
		if deltas != nil {
			*deltas = append(*deltas, d)
		}
	})
}

func bothModes(t *testing.T, f func(t *testing.T, stream bool)) {
	for _, stream := range []bool{true, false} {
		name := "json"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) { f(t, stream) })
	}
}

const conversation = `{"steps": [
  {"text": "I'll look around."},
  {"tool_calls": [{"name": "read", "arguments": {"file_path": "main.go"}}]},
  {"tool_calls": [{"name": "read", "arguments": {"file_path": "a"}}, {"name": "glob", "arguments": {"pattern": "**/*.go"}}]},
  {"tool_calls": [{"name": "edit", "raw_arguments": "{not json"}]},
  {"text": "done", "usage": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 60}}
]}`

func TestConversation(t *testing.T) {
	bothModes(t, func(t *testing.T, stream bool) {
		_, url := start(t, conversation, "")
		p := provider(t, url, stream)
		want := []llm.Response{
			{Text: "I'll look around.", StopReason: "stop"},
			{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"file_path":"main.go"}`}}, StopReason: "tool_calls"},
			{ToolCalls: []llm.ToolCall{{ID: "call_2", Name: "read", Arguments: `{"file_path":"a"}`}, {ID: "call_3", Name: "glob", Arguments: `{"pattern":"**/*.go"}`}}, StopReason: "tool_calls"},
			{ToolCalls: []llm.ToolCall{{ID: "call_4", Name: "edit", Arguments: "{not json"}}, StopReason: "tool_calls"},
			{Text: "done", StopReason: "stop", Usage: llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60}},
		}
		for i, w := range want {
			var deltas []llm.Delta
			got, err := ask(p, "go", &deltas)
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if w.Usage == (llm.Usage{}) {
				if got.Usage.InputTokens <= 0 || got.Usage.OutputTokens <= 0 {
					t.Errorf("step %d: estimated usage %+v", i, got.Usage)
				}
				w.Usage = got.Usage
			}
			w.Model = "fake"
			if !reflect.DeepEqual(*got, w) {
				t.Errorf("step %d:\n got %+v\nwant %+v", i, *got, w)
			}
			if stream {
				checkFragments(t, i, got, deltas)
			}
		}
	})
}

// checkFragments checks that streamed pieces add up and that arguments
// arrived in several fragments.
func checkFragments(t *testing.T, step int, resp *llm.Response, deltas []llm.Delta) {
	t.Helper()
	text, args, frags := "", map[int]string{}, map[int]int{}
	for _, d := range deltas {
		switch d.Kind {
		case llm.DeltaText:
			text += d.Text
		case llm.DeltaToolCall:
			args[d.ToolIndex] += d.Text
			if d.Text != "" {
				frags[d.ToolIndex]++
			}
		}
	}
	if text != resp.Text {
		t.Errorf("step %d: text deltas %q", step, text)
	}
	for i, c := range resp.ToolCalls {
		if args[i] != c.Arguments {
			t.Errorf("step %d: call %d deltas %q", step, i, args[i])
		}
		if len(c.Arguments) >= 3 && frags[i] < 2 {
			t.Errorf("step %d: call %d arguments came in %d fragment(s)", step, i, frags[i])
		}
	}
}

func TestChunkSize(t *testing.T) {
	_, url := start(t, `{"steps": [{"text": "abcdef", "chunk_size": 1, "tool_calls": [{"name": "read", "arguments": {"file_path": "x"}}]}]}`, "")
	var deltas []llm.Delta
	resp, err := ask(provider(t, url, true), "go", &deltas)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range deltas {
		if d.Text != "" {
			n++
		}
	}
	if want := len("abcdef") + len(resp.ToolCalls[0].Arguments); n != want {
		t.Errorf("%d fragments, want %d", n, want)
	}
}

// chunk_delay_ms spaces a stream's pieces out, in both wire formats: the
// text arrives piece by piece, not all at the end.
func TestChunkDelay(t *testing.T) {
	const gap = 100 * time.Millisecond
	script := `{"steps": [{"text": "abcd", "chunk_size": 1, "chunk_delay_ms": 100}]}`
	for _, wire := range []string{"openai", "anthropic"} {
		t.Run(wire, func(t *testing.T) {
			_, url := start(t, script, "")
			var at []time.Time
			var text string
			on := func(d llm.Delta) {
				if d.Kind == llm.DeltaText && d.Text != "" {
					at = append(at, time.Now())
					text += d.Text
				}
			}
			req := llm.Request{Messages: user("go")}
			var err error
			if wire == "openai" {
				_, err = provider(t, url, true).Stream(context.Background(), req, on)
			} else {
				_, err = anthropicProvider(t, url, true).Stream(context.Background(), req, on)
			}
			if err != nil {
				t.Fatal(err)
			}
			if text != "abcd" || len(at) != 4 {
				t.Fatalf("text %q in %d fragments", text, len(at))
			}
			if spread := at[3].Sub(at[0]); spread < 3*gap {
				t.Errorf("the four pieces arrived within %v, want at least %v between first and last", spread, 3*gap)
			}
		})
	}
}

func TestErrorStatus(t *testing.T) {
	bothModes(t, func(t *testing.T, stream bool) {
		_, url := start(t, `{"steps": [
		  {"status": 500, "error": "boom"},
		  {"status": 429, "error": "slow down", "retry_after": 2},
		  {"status": 401},
		  {"text": "recovered"}
		]}`, "")
		p := provider(t, url, stream)
		cases := []struct {
			status    int
			retryable bool
			contains  string
			after     time.Duration
		}{
			{500, true, "boom", 0},
			{429, true, "slow down", 2 * time.Second},
			{401, false, "OPENAI_API_KEY", 0},
		}
		for _, c := range cases {
			_, err := ask(p, "go", nil)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *llm.Error", err)
			}
			if e.StatusCode != c.status || e.Retryable != c.retryable || e.RetryAfter != c.after || !strings.Contains(e.Error(), c.contains) {
				t.Errorf("status %d: got %+v (%v)", c.status, e, e)
			}
		}
		if resp, err := ask(p, "go", nil); err != nil || resp.Text != "recovered" {
			t.Errorf("after errors: %v %v", resp, err)
		}
	})
}

func TestRepeat(t *testing.T) {
	srv, url := start(t, `{"steps": [
	  {"repeat": 3, "tool_calls": [{"name": "read", "arguments": {"file_path": "x"}}]},
	  {"text": "next"}
	]}`, "")
	p := provider(t, url, true)
	seen := map[string]bool{}
	for i := range 3 {
		resp, err := ask(p, "go", nil)
		if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "read" {
			t.Fatalf("request %d: %+v %v", i, resp, err)
		}
		seen[resp.ToolCalls[0].ID] = true
	}
	if len(seen) != 3 {
		t.Errorf("ids not unique: %v", seen)
	}
	if resp, err := ask(p, "go", nil); err != nil || resp.Text != "next" {
		t.Errorf("after repeat: %+v %v", resp, err)
	}
	var steps []int
	for _, r := range srv.Requests() {
		steps = append(steps, r.Step)
	}
	if !reflect.DeepEqual(steps, []int{0, 0, 0, 1}) {
		t.Errorf("steps = %v", steps)
	}
}

func TestExhausted(t *testing.T) {
	bothModes(t, func(t *testing.T, stream bool) {
		_, url := start(t, `{"steps": [{"text": "only"}]}`, "")
		p := provider(t, url, stream)
		if _, err := ask(p, "go", nil); err != nil {
			t.Fatal(err)
		}
		_, err := ask(p, "go", nil)
		var e *llm.Error
		if !errors.As(err, &e) || e.StatusCode != 500 || !strings.Contains(e.Message, "script exhausted") {
			t.Errorf("err = %v", err)
		}

		srv, url := start(t, `{"steps": [{"text": "only"}], "on_exhausted": "text"}`, "")
		p = provider(t, url, stream)
		for range 3 {
			resp, err := ask(p, "go", nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp
		}
		resp, err := ask(p, "go", nil)
		if err != nil || resp.Text != "script exhausted" || resp.StopReason != "stop" {
			t.Errorf("exhausted text: %+v %v", resp, err)
		}
		if last := srv.Requests()[3]; last.Step != -1 {
			t.Errorf("exhausted request logged with step %d", last.Step)
		}
	})
}

func TestTruncate(t *testing.T) {
	bothModes(t, func(t *testing.T, stream bool) {
		_, url := start(t, `{"steps": [
		  {"text": "a long answer cut short", "truncate": true},
		  {"tool_calls": [{"name": "read", "arguments": {"file_path": "x"}}], "truncate": true},
		  {"text": "whole"}
		]}`, "")
		p := provider(t, url, stream)
		for i := range 2 {
			_, err := ask(p, "go", nil)
			var e *llm.Error
			if !errors.As(err, &e) || !e.Retryable {
				t.Fatalf("step %d: err = %v, want a retryable *llm.Error", i, err)
			}
			if stream && e.Message != "stream ended without a finish reason" {
				t.Errorf("step %d: message %q", i, e.Message)
			}
		}
		if resp, err := ask(p, "go", nil); err != nil || resp.Text != "whole" {
			t.Errorf("after truncation: %+v %v", resp, err)
		}
	})
}

func TestDelay(t *testing.T) {
	_, url := start(t, `{"steps": [{"text": "slow", "delay_ms": 2000}, {"text": "fast"}]}`, "")
	p := provider(t, url, true)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Stream(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("err = %v after %v", err, time.Since(start))
	}
	if resp, err := ask(p, "go", nil); err != nil || resp.Text != "fast" {
		t.Errorf("after delay: %+v %v", resp, err)
	}
}

func TestRequestLog(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	srv, url := start(t, `{"steps": [{"text": "one"}, {"text": "two"}]}`, logPath)
	if _, err := ask(provider(t, url, true), "first question", nil); err != nil {
		t.Fatal(err)
	}
	p := provider(t, url, false)
	req := llm.Request{
		System: "sys",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "q1"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "glob", Arguments: "{}"}}},
			{Role: llm.RoleTool, ToolCallID: "c", Content: "a.go"},
			{Role: llm.RoleUser, Content: "q2"},
		},
		Tools: tools[1:2],
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}

	logged := srv.Requests()
	if len(logged) != 2 {
		t.Fatalf("%d requests logged", len(logged))
	}
	first, second := logged[0], logged[1]
	if first.N != 1 || first.Path != "/v1/chat/completions" || !first.Stream || first.Model != "fake" ||
		!reflect.DeepEqual(first.Tools, []string{"read", "glob", "edit"}) || first.Messages != 2 ||
		first.System != "you are a test" || first.LastUser != "first question" || first.Step != 0 || first.Time.IsZero() {
		t.Errorf("first = %+v", first)
	}
	if second.N != 2 || second.Stream || !reflect.DeepEqual(second.Tools, []string{"glob"}) || second.Messages != 5 ||
		second.System != "sys" || second.LastUser != "q2" || second.Step != 1 {
		t.Errorf("second = %+v", second)
	}
	var body map[string]any
	if err := json.Unmarshal(first.Body, &body); err != nil || body["stream"] != true {
		t.Errorf("body = %s (%v)", first.Body, err)
	}

	// The log file holds the same entries, one JSON line each.
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fromFile []scripted.LoggedRequest
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e scripted.LoggedRequest
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		fromFile = append(fromFile, e)
	}
	if len(fromFile) != 2 || fromFile[1].LastUser != "q2" || !reflect.DeepEqual(fromFile[0].Tools, first.Tools) {
		t.Errorf("log file = %+v", fromFile)
	}

	// So does GET /_requests.
	res, err := http.Get(strings.TrimSuffix(url, "/v1") + "/_requests")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var fromHTTP []scripted.LoggedRequest
	if err := json.NewDecoder(res.Body).Decode(&fromHTTP); err != nil || len(fromHTTP) != 2 || fromHTTP[0].LastUser != "first question" {
		t.Errorf("/_requests = %+v (%v)", fromHTTP, err)
	}
}

func TestMalformedRequest(t *testing.T) {
	srv, url := start(t, `{"steps": [{"text": "one"}]}`, "")
	res, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader("{nope"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d", res.StatusCode)
	}
	if resp, err := ask(provider(t, url, true), "go", nil); err != nil || resp.Text != "one" {
		t.Errorf("malformed request took the step: %+v %v", resp, err)
	}
	if r := srv.Requests(); len(r) != 2 || r[0].Step != -1 || string(r[0].Body) != `"{nope"` {
		t.Errorf("log = %+v", r)
	}
}

func TestReplaceScriptAndModels(t *testing.T) {
	_, url := start(t, `{"steps": [{"text": "old"}, {"text": "old 2"}]}`, "")
	root := strings.TrimSuffix(url, "/v1")
	p := provider(t, url, true)
	if resp, err := ask(p, "go", nil); err != nil || resp.Text != "old" {
		t.Fatalf("%+v %v", resp, err)
	}
	post := func(body string) int {
		res, err := http.Post(root+"/_script", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode
	}
	if code := post(`{"steps": [{"txt": "typo"}]}`); code != http.StatusBadRequest {
		t.Errorf("invalid script: status %d", code)
	}
	if code := post(`{"model": "m2", "steps": [{"tool_calls": [{"name": "read"}]}, {"text": "new 2"}]}`); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	resp, err := ask(p, "go", nil)
	if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != "{}" || resp.ToolCalls[0].ID != "call_1" {
		t.Errorf("first step of new script: %+v %v", resp, err)
	}
	if resp, err := ask(p, "go", nil); err != nil || resp.Text != "new 2" {
		t.Errorf("%+v %v", resp, err)
	}

	res, err := http.Get(url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "m2" {
		t.Errorf("models = %+v (%v)", models, err)
	}
	// A script's "models" is the list, whatever its one model.
	if code := post(`{"model": "m2", "models": ["a", "b"], "steps": [{"text": "x"}]}`); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	res2, err := http.Get(url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	models.Data = nil
	if err := json.NewDecoder(res2.Body).Decode(&models); err != nil || len(models.Data) != 2 || models.Data[0].ID != "a" || models.Data[1].ID != "b" {
		t.Errorf("models = %+v (%v)", models, err)
	}
}

func TestListenAndServe(t *testing.T) {
	sc, err := scripted.ParseScript([]byte(`{"steps": [{"text": "hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := scripted.NewServer(sc, "")
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0", func(u string) { urls <- u }) }()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Errorf("url = %q", url)
	}
	if resp, err := ask(provider(t, url, true), "go", nil); err != nil || resp.Text != "hi" {
		t.Errorf("%+v %v", resp, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server did not stop")
	}
}

func TestScriptErrors(t *testing.T) {
	cases := []struct{ script, want string }{
		{`{"steps": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"tool_calls": [{"arguments": {}}]}]}`, `step 3: tool_calls[0]: missing "name"`},
		{`{"steps": [{"txt": "a"}]}`, `step 0: json: unknown field "txt"`},
		{`{"steps": [], "extra": 1}`, `unknown field "extra"`},
		{`{"steps": []}`, `no "steps"`},
		{`{"steps": [{}]}`, `step 0: empty step`},
		{`{"steps": [{"status": 200}]}`, `step 0: "status" is 200`},
		{`{"steps": [{"status": 500, "text": "x"}]}`, `step 0: a "status" step answers with an error only`},
		{`{"steps": [{"error": "x"}]}`, `step 0: "error" needs a "status"`},
		{`{"steps": [{"text": "x", "repeat": -1}]}`, `step 0: "repeat" is -1`},
		{`{"steps": [{"text": "x", "chunk_delay_ms": -5}]}`, `step 0: "chunk_delay_ms" is -5, want 0 or more`},
		{`{"steps": [{"status": 500, "chunk_delay_ms": 5}]}`, `step 0: a "status" step answers with an error only`},
		{`{"steps": [{"tool_calls": [{"name": "a", "arguments": [1]}]}]}`, `step 0: tool_calls[0]: "arguments" must be a JSON object`},
		{`{"steps": [{"tool_calls": [{"name": "a", "arguments": {}, "raw_arguments": "x"}]}]}`, `not both`},
		{`{"steps": [{"text": "x"}], "on_exhausted": "loop"}`, `"on_exhausted" is "loop"`},
		{"{\"steps\": [\n  {\"text\": \"x\",}\n]}", `line 2, column`},
		{`{"steps": [{"text": "x"}]} {}`, `unexpected data`},
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, "script.json")
		if err := os.WriteFile(path, []byte(c.script), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := scripted.LoadScript(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %q", c.script, err, c.want)
		}
	}
	if _, err := scripted.LoadScript(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestLoadScriptValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	body := `{"steps": [
	  {"text": "I'll look around."},
	  {"tool_calls": [{"name": "edit", "raw_arguments": ""}]},
	  {"status": 503, "retry_after": 1},
	  {"repeat": 2, "delay_ms": 1, "chunk_size": 4, "chunk_delay_ms": 2, "finish_reason": "length", "text": "x"},
	  {"truncate": true}
	], "on_exhausted": "text"}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scripted.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Steps) != 5 || *sc.Steps[1].ToolCalls[0].RawArguments != "" || sc.Steps[3].FinishReason != "length" || sc.Steps[3].ChunkDelayMS != 2 {
		t.Errorf("script = %+v", sc)
	}
}

// Lanes: conversations whose first user message names a lane each
// follow their own steps, whatever the order their requests arrive in;
// the others follow the script's own steps.
func TestLanes(t *testing.T) {
	srv, url := start(t, `{"steps": [{"text": "main 1"}, {"text": "main 2"}],
	  "lanes": [{"match": "goal G001", "steps": [{"text": "one a"}, {"text": "one b"}]},
	            {"match": "goal G002", "steps": [{"text": "two a", "repeat": 2}]}]}`, "")
	p := provider(t, url, true)
	for _, c := range []struct{ user, want string }{
		{"work on goal G002", "two a"}, {"work on goal G001", "one a"}, {"plan", "main 1"},
		{"work on goal G002 again", "two a"}, {"work on goal G001", "one b"}, {"plan", "main 2"},
	} {
		resp, err := ask(p, c.user, nil)
		if err != nil || resp.Text != c.want {
			t.Fatalf("%q: %v %q, want %q", c.user, err, resp.Text, c.want)
		}
	}
	if _, err := ask(p, "work on goal G001", nil); err == nil || !strings.Contains(err.Error(), "script exhausted") {
		t.Fatalf("an exhausted lane: %v", err)
	}
	log := srv.Requests()
	if log[0].Lane != 1 || log[0].Step != 0 || log[2].Lane != -1 || log[4].Step != 1 || log[0].FirstUser != "work on goal G002" {
		t.Fatalf("log %+v", log[:5])
	}
	if _, err := scripted.ParseScript([]byte(`{"steps": [{"text": "x"}], "lanes": [{"match": "", "steps": [{"text": "y"}]}]}`)); err == nil || !strings.Contains(err.Error(), `lane 0: no "match"`) {
		t.Fatalf("a lane without a match: %v", err)
	}
	if _, err := scripted.ParseScript([]byte(`{"steps": [{"text": "x"}], "lanes": [{"match": "a", "steps": [{"bogus": 1}]}]}`)); err == nil || !strings.Contains(err.Error(), "lane 0: step 0") {
		t.Fatalf("a bad lane step: %v", err)
	}
}
