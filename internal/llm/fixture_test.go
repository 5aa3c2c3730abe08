package llm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The recorded provider exchanges live outside the repository, in the
// shared directory beside it (see its README). The fixture tests replay the
// recorded response bodies and check what each adapter makes of them.

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

// runFixtures runs replay on every cassette the globs match under the
// recorded-provider directory, one subtest each, named by the cassette's
// path there. kind names the cassettes in the skip message.
func runFixtures(t *testing.T, kind string, globs []string, replay func(t *testing.T, file string)) {
	root := providerFixtures(t)
	found := 0
	for _, glob := range globs {
		files, _ := filepath.Glob(filepath.Join(root, glob))
		for _, file := range files {
			found++
			rel, _ := filepath.Rel(root, file)
			t.Run(strings.TrimSuffix(rel, ".yaml"), func(t *testing.T) { replay(t, file) })
		}
	}
	if found == 0 {
		t.Skipf("no %scassettes under %s", kind, root)
	}
}

// suiteGlobs matches the cassettes of every model of the suites.
func suiteGlobs(suites ...string) []string {
	var globs []string
	for _, s := range suites {
		globs = append(globs, s+"/*/*.yaml")
	}
	return globs
}

// cassetteName splits a cassette's file name into the scenario it
// recorded and whether the answers were streamed ("tool_streaming.yaml",
// "thinking-streaming.yaml").
func cassetteName(file string) (name string, streaming bool) {
	base := strings.TrimSuffix(filepath.Base(file), ".yaml")
	name = strings.TrimSuffix(strings.TrimSuffix(base, "_streaming"), "-streaming")
	return name, name != base
}

// replay serves recorded responses in order and records the requests.
type replay struct {
	recorded []interaction
	answers  func(path string) bool // the request paths answered; nil: all
	refusal  string                 // the body sent for any other request

	mu       sync.Mutex
	requests []map[string]any
	paths    []string
	headers  []http.Header
}

// serveReplay starts a server replaying recorded; see replay.
func serveReplay(t *testing.T, recorded []interaction, answers func(string) bool, refusal string) (*replay, *httptest.Server) {
	rp := &replay{recorded: recorded, answers: answers, refusal: refusal}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return rp, srv
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	r.mu.Lock()
	n := len(r.requests)
	r.requests = append(r.requests, body)
	r.paths = append(r.paths, req.URL.Path)
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	if (r.answers != nil && !r.answers(req.URL.Path)) || n >= len(r.recorded) {
		http.Error(w, r.refusal, http.StatusTeapot)
		return
	}
	rec := r.recorded[n]
	w.Header().Set("Content-Type", rec.ContentType)
	w.WriteHeader(rec.Status)
	_, _ = io.WriteString(w, rec.Body)
}

// replayTurns holds the conversation a cassette recorded with p, starting
// from req, for turns turns. Each answer's fragments must add up to it,
// and check checks it against the request sent; then the answer and the
// results of its tool calls (result gives them) join the history.
func replayTurns(t *testing.T, p Provider, req Request, turns int, check func(turn int, req Request, resp *Response), result func(turn int, c ToolCall) string) {
	t.Helper()
	for turn := range turns {
		resp, deltas, err := streamDeltas(p, req)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		checkDeltas(t, resp, deltas)
		check(turn, req, resp)
		if turn+1 == turns {
			break
		}
		req.Messages = append(req.Messages, Message{Role: RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls, Thinking: resp.Thinking})
		for _, c := range resp.ToolCalls {
			req.Messages = append(req.Messages, Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: result(turn, c)})
		}
	}
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

// scenarioRequest is the first request of a scenario.
func scenarioRequest(sc scenario) Request {
	return Request{System: sc.system, Messages: []Message{{Role: RoleUser, Content: sc.prompt}}, Tools: sc.tools, MaxTokens: 4000}
}

// checkAnswer checks an answer means what the scenario name asked for: the
// first one what the prompt asked ("thinking" asks for the weather tool),
// later ones a final text. stop and toolStop are the provider's stop
// reasons for a finished answer and for one that calls tools.
func checkAnswer(t *testing.T, turn int, name string, resp *Response, stop, toolStop string) {
	t.Helper()
	if turn > 0 {
		if resp.Text == "" || resp.StopReason != stop {
			t.Errorf("turn %d: final answer %+v", turn, resp)
		}
		return
	}
	switch name {
	case "simple":
		if !strings.Contains(strings.ToLower(resp.Text), "o") || resp.StopReason != stop || len(resp.ToolCalls) != 0 {
			t.Errorf("simple answer %+v", resp)
		}
	case "tool", "thinking":
		if len(resp.ToolCalls) != 1 || resp.StopReason != toolStop {
			t.Fatalf("tool answer %+v", resp)
		}
		var args struct{ Location string }
		c := resp.ToolCalls[0]
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || c.Name != "weather" || c.ID == "" || !strings.Contains(args.Location, "Florence") {
			t.Errorf("weather call %+v (%v)", c, err)
		}
	case "multi_tool":
		if len(resp.ToolCalls) != 2 || resp.StopReason != toolStop {
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
