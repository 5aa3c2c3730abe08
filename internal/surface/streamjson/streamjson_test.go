package streamjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
)

func TestSubtype(t *testing.T) {
	for _, c := range []struct{ status, reason, want string }{
		{"complete", "verification passed", "success"},
		{"escalated", "the model answered 3 times", "error_during_execution"},
		{"budget_exhausted", "turn budget exhausted: 2 of 2", "error_max_turns"},
		{"budget_exhausted", "cost budget exhausted: $1 of $1", "error_max_budget_usd"},
		{"budget_exhausted", "wall time budget exhausted", "error_during_execution"},
		{"needs_approval", "the plan waits", "error_during_execution"},
		{"failed", "model request failed", "error_during_execution"},
	} {
		if got := Subtype(c.status, c.reason); got != c.want {
			t.Errorf("Subtype(%q, %q) = %q, want %q", c.status, c.reason, got, c.want)
		}
	}
}

// events is a small run: a request, a call and its result, an answer.
func events(status, reason string, withResult bool) []event.Event {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := []event.Event{
		{Type: event.RunStarted, Phase: "planning", Data: event.RunStartedData{Workdir: "/w", Model: "m"}},
		{Type: event.ModelRequest, Data: event.ModelRequestData{Turn: 1, Model: "m", Tools: []string{"read"}}},
		{Type: event.ModelResponse, Data: event.ModelResponseData{Turn: 1, Usage: event.Usage{InputTokens: 10, OutputTokens: 2}, Duration: "1.5s"}},
		{Type: event.ToolCall, Data: event.ToolCallData{CallID: "c1", Tool: "read", Args: json.RawMessage(`{"file_path":"a"}`)}},
	}
	if withResult {
		evs = append(evs, event.Event{Type: event.ToolResult, Data: event.ToolResultData{CallID: "c1", Tool: "read", Output: "x"}})
	}
	evs = append(evs,
		event.Event{Type: event.AssistantText, Data: event.AssistantTextData{Text: "done"}},
		event.Event{Type: event.RunFinished, Phase: "complete", Data: event.RunFinishedData{Status: status, Reason: reason, Turns: 1, Cost: 0.5}})
	for i := range evs {
		evs[i].Run, evs[i].Seq, evs[i].Time = "r1", int64(i+1), t0.Add(time.Duration(i)*time.Second)
	}
	return evs
}

func render(format Format, evs []event.Event) []map[string]any {
	var b bytes.Buffer
	r := New(&b, Options{Format: format})
	for _, e := range evs {
		r.Emit(e)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestRender(t *testing.T) {
	for _, c := range []struct {
		name       string
		format     Format
		status     string
		withResult bool
		types      []string
		subtype    string
		result     string
	}{
		{"stream", Stream, "complete", true, []string{"system", "assistant", "user", "assistant", "result"}, "success", "done"},
		{"json prints the result alone", JSON, "complete", true, []string{"result"}, "success", "done"},
		{"an escalated run is an error", Stream, "escalated", true, []string{"system", "assistant", "user", "assistant", "result"}, "error_during_execution", "why"},
		{"an unanswered call is answered at the end", Stream, "interrupted", false, []string{"system", "assistant", "assistant", "user", "result"}, "error_during_execution", "why"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := render(c.format, events(c.status, "why", c.withResult))
			var types []string
			for _, m := range ms {
				types = append(types, m["type"].(string))
			}
			if strings.Join(types, ",") != strings.Join(c.types, ",") {
				t.Fatalf("types %v, want %v", types, c.types)
			}
			last := ms[len(ms)-1]
			if last["subtype"] != c.subtype || last["result"] != c.result || last["is_error"] != (c.subtype != "success") ||
				last["session_id"] != "r1" || last["duration_ms"] != float64(1000*(len(events(c.status, "", c.withResult))-1)) || last["duration_api_ms"] != float64(1500) {
				t.Fatalf("result %v", last)
			}
			if u := last["ultra"].(map[string]any); u["status"] != c.status || u["phase"] != "complete" {
				t.Fatalf("ultra facts %v", u)
			}
			if c.format == Stream {
				init := ms[0]
				if init["subtype"] != "init" || init["cwd"] != "/w" || init["model"] != "m" || init["permissionMode"] != "acceptEdits" {
					t.Fatalf("init %v", init)
				}
			}
		})
	}
}

func TestTextPrintsTheResultAlone(t *testing.T) {
	var b bytes.Buffer
	r := New(&b, Options{Format: Text})
	for _, e := range events("complete", "ok", true) {
		r.Emit(e)
	}
	if b.String() != "done\n" {
		t.Fatalf("%q", b.String())
	}
}

// The run's MCP servers, as they started, are init's mcp_servers.
func TestInitNamesMCPServers(t *testing.T) {
	evs := events("complete", "done", true)
	mcp := event.Event{Type: event.MCP, Run: "r1", Data: event.MCPData{Servers: []event.MCPServerData{
		{Name: "github", State: "connected", Tools: 3}, {Name: "db", State: "failed", Error: "exit 1"}}}}
	evs = append(evs[:1], append([]event.Event{mcp}, evs[1:]...)...)
	init := render(Stream, evs)[0]
	got, _ := json.Marshal(init["mcp_servers"])
	if init["subtype"] != "init" || string(got) != `[{"name":"github","status":"connected"},{"name":"db","status":"failed"}]` {
		t.Fatalf("init %v", init)
	}
}
