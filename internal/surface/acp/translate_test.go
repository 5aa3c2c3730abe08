package acp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
)

func ev(seq int64, typ event.Type, data any) store.StoredEvent {
	b, _ := json.Marshal(data)
	return store.StoredEvent{Run: "20261122-020815-a3f9c1", Seq: seq, Type: string(typ), Data: b}
}

// kindOfUpdate is the sessionUpdate discriminator of u.
func kindOfUpdate(u sdk.SessionUpdate) string {
	b, _ := json.Marshal(u)
	var v struct {
		Kind string `json:"sessionUpdate"`
	}
	_ = json.Unmarshal(b, &v)
	return v.Kind
}

func started(wd string) store.StoredEvent {
	return ev(1, event.RunStarted, event.RunStartedData{Task: "fix calc", Workdir: wd, Branch: "ultra/x", Axes: axes.Default, Provider: "openai", Model: "m"})
}

func TestFoldUpdates(t *testing.T) {
	wd := "/work/tree"
	args := func(m map[string]any) json.RawMessage { b, _ := json.Marshal(m); return b }
	cases := []struct {
		name  string
		ev    store.StoredEvent
		kinds []string
		check func(t *testing.T, us []sdk.SessionUpdate, f *Fold)
	}{
		{"assistant text and thinking", ev(2, event.AssistantText, event.AssistantTextData{Text: "hello", Thinking: "hmm"}),
			[]string{"agent_thought_chunk", "agent_message_chunk"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if us[1].AgentMessageChunk.Content.Text.Text != "hello" || us[0].AgentThoughtChunk.Content.Text.Text != "hmm\n" {
					t.Fatalf("%+v", us)
				}
			}},
		{"escape sequences are stripped", ev(2, event.AssistantText, event.AssistantTextData{Text: "a\x1b]52;c;x\x07b"}),
			[]string{"agent_message_chunk"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if strings.ContainsRune(us[0].AgentMessageChunk.Content.Text.Text, 0x1b) {
					t.Fatalf("escape kept: %q", us[0].AgentMessageChunk.Content.Text.Text)
				}
			}},
		{"an edit is a diff at its file", ev(2, event.ToolCall, event.ToolCallData{CallID: "call_1", Tool: "edit", Args: args(map[string]any{"file_path": "calc/calc.go", "old_string": "a - b", "new_string": "a + b"})}),
			[]string{"tool_call"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				tc := us[0].ToolCall
				if tc.Kind != sdk.ToolKindEdit || tc.Status != sdk.ToolCallStatusInProgress || len(tc.Locations) != 1 || tc.Locations[0].Path != "/work/tree/calc/calc.go" {
					t.Fatalf("%+v", tc)
				}
				d := tc.Content[0].Diff
				if d == nil || d.NewText != "a + b" || d.OldText == nil || *d.OldText != "a - b" || d.Path != "/work/tree/calc/calc.go" {
					t.Fatalf("diff %+v", d)
				}
			}},
		{"a write is a diff of a new text", ev(2, event.ToolCall, event.ToolCallData{CallID: "call_1", Tool: "write", Args: args(map[string]any{"file_path": "/work/tree/n.txt", "content": "x"})}),
			[]string{"tool_call"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				d := us[0].ToolCall.Content[0].Diff
				if d == nil || d.OldText != nil || d.NewText != "x" {
					t.Fatalf("diff %+v", d)
				}
			}},
		{"a path outside the tree gives no location", ev(2, event.ToolCall, event.ToolCallData{CallID: "call_1", Tool: "edit", Args: args(map[string]any{"file_path": "../../etc/passwd", "old_string": "a", "new_string": "b"})}),
			[]string{"tool_call"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if tc := us[0].ToolCall; len(tc.Locations) != 0 || len(tc.Content) != 0 {
					t.Fatalf("a path outside the run's tree reached the editor: %+v", tc)
				}
			}},
		{"a read has its line", ev(2, event.ToolCall, event.ToolCallData{CallID: "call_1", Tool: "read", Args: args(map[string]any{"file_path": "a.go", "offset": 40})}),
			[]string{"tool_call"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				tc := us[0].ToolCall
				if tc.Kind != sdk.ToolKindRead || tc.Locations[0].Line == nil || *tc.Locations[0].Line != 40 {
					t.Fatalf("%+v", tc)
				}
			}},
		{"bash executes", ev(2, event.ToolCall, event.ToolCallData{CallID: "call_1", Tool: "bash", Args: args(map[string]any{"command": "go test ./..."})}),
			[]string{"tool_call"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if tc := us[0].ToolCall; tc.Kind != sdk.ToolKindExecute || tc.Title != "bash go test ./..." {
					t.Fatalf("%+v", tc)
				}
			}},
		{"the mode follows the run", ev(2, event.AxisChanged, event.AxisChangedData{Axis: axes.Mode, From: "plan", To: "build", Axes: axes.Axes{Mode: "build", Control: "autonomous", Permission: "normal", ModelMode: "smart"}}),
			[]string{"agent_thought_chunk", "current_mode_update"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if us[1].CurrentModeUpdate.CurrentModeId != "build" || f.Axes.Mode != "build" {
					t.Fatalf("%+v", us[1])
				}
			}},
		{"another axis is a config option", ev(2, event.AxisChanged, event.AxisChangedData{Axis: axes.Control, From: "assisted", To: "autonomous", Axes: axes.Axes{Mode: "build", Control: "autonomous", Permission: "normal", ModelMode: "smart"}}),
			[]string{"agent_thought_chunk", "config_option_update"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if us[1].ConfigOptionUpdate.ConfigOptions[0].Select.CurrentValue != "autonomous" {
					t.Fatalf("%+v", us[1].ConfigOptionUpdate.ConfigOptions[0].Select)
				}
			}},
		{"a proposed plan waits", ev(2, event.PlanProposed, event.PlanProposedData{Plan: "1. fix Add"}),
			[]string{"agent_message_chunk"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if f.Plan != "1. fix Add" || f.PlanSeq != 2 || !f.PlanChanged {
					t.Fatalf("%+v", f)
				}
			}},
		{"a waiting call waits", ev(2, event.Approval, event.ApprovalData{CallID: "call_0", Tool: "bash", State: "waiting"}),
			nil, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if f.Waiting == nil || f.Waiting.CallID != "call_0" {
					t.Fatalf("%+v", f.Waiting)
				}
			}},
		{"usage", ev(2, event.ModelResponse, event.ModelResponseData{Usage: event.Usage{InputTokens: 900, OutputTokens: 100}, Cost: 0.5}),
			[]string{"usage_update"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				u := us[0].UsageUpdate
				if u.Used != 1000 || u.Size != defaultWindow || u.Cost == nil || u.Cost.Amount != 0.5 || u.Cost.Currency != "USD" {
					t.Fatalf("%+v", u)
				}
			}},
		{"the end offers /land", ev(2, event.RunFinished, event.RunFinishedData{Status: "complete", Reason: "all goals complete"}),
			[]string{"agent_message_chunk"}, func(t *testing.T, us []sdk.SessionUpdate, f *Fold) {
				if txt := us[0].AgentMessageChunk.Content.Text.Text; !strings.Contains(txt, "complete") || !strings.Contains(txt, "/land") || f.Finished == nil {
					t.Fatalf("%q", txt)
				}
			}},
		{"an unknown event says nothing", ev(2, "from_the_future", map[string]any{"x": 1}), nil, nil},
		{"malformed data says nothing", store.StoredEvent{Seq: 2, Type: string(event.ToolCall), Data: json.RawMessage(`{"call_id": 7`)}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &Fold{}
			f.Updates(started(wd))
			f.Updates(ev(1, event.ToolCall, nil)) // an old event: ignored
			us := f.Updates(c.ev)
			var kinds []string
			for _, u := range us {
				kinds = append(kinds, kindOfUpdate(u))
			}
			if !slices.Equal(kinds, c.kinds) {
				t.Fatalf("updates %v, want %v", kinds, c.kinds)
			}
			if c.check != nil {
				c.check(t, us, f)
			}
		})
	}
}

// A tool's result completes its call, a failure fails it, and a refused
// call fails with the refusal's reason.
func TestFoldCallLifecycle(t *testing.T) {
	f := &Fold{}
	f.Updates(started("/w"))
	f.Updates(ev(2, event.ToolCall, event.ToolCallData{CallID: "c1", Tool: "bash", Args: json.RawMessage(`{"command":"ls"}`)}))
	us := f.Updates(ev(3, event.ToolResult, event.ToolResultData{CallID: "c1", Tool: "bash", Output: "a.go"}))
	if u := us[0].ToolCallUpdate; *u.Status != sdk.ToolCallStatusCompleted || u.Content[0].Content.Content.Text.Text != "a.go" {
		t.Fatalf("%+v", u)
	}
	f.Updates(ev(4, event.ToolCall, event.ToolCallData{CallID: "c2", Tool: "bash", Args: json.RawMessage(`{"command":"rm -rf /"}`)}))
	us = f.Updates(ev(5, event.Refusal, event.RefusalData{CallID: "c2", Tool: "bash", Layer: "policy", Reason: "destructive"}))
	if u := us[0].ToolCallUpdate; *u.Status != sdk.ToolCallStatusFailed || !strings.Contains(u.Content[0].Content.Content.Text.Text, "destructive") {
		t.Fatalf("%+v", u)
	}
	f.Updates(ev(7, event.ToolCall, event.ToolCallData{CallID: "c3", Tool: "bash", Args: json.RawMessage(`{"command":"make"}`)}))
	us = f.Updates(ev(8, event.Approval, event.ApprovalData{CallID: "c3", Tool: "bash", State: "waiting"}))
	if u := us[0].ToolCallUpdate; *u.Status != sdk.ToolCallStatusPending || f.Waiting == nil {
		t.Fatalf("%+v", u)
	}
	f.Updates(ev(9, event.Approval, event.ApprovalData{CallID: "c3", Tool: "bash", State: "denied"}))
	if f.Waiting != nil {
		t.Fatal("a denied call still waits")
	}
	if us := f.Updates(ev(10, event.ToolResult, event.ToolResultData{CallID: "nobody", Tool: "bash"})); len(us) != 0 {
		t.Fatalf("a result of no known call: %+v", us)
	}
}

// A replay sends the person's own words back as user messages; a live
// follow does not (the editor shows what it sent).
func TestFoldReplaysUserText(t *testing.T) {
	live, replay := &Fold{}, &Fold{Replay: true}
	if us := live.Updates(started("/w")); slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool { return u.UserMessageChunk != nil }) {
		t.Fatal("a live follow echoes the task")
	}
	us := replay.Updates(started("/w"))
	if us[0].UserMessageChunk == nil || us[0].UserMessageChunk.Content.Text.Text != "fix calc" {
		t.Fatalf("%+v", us)
	}
}

func TestPlanEntries(t *testing.T) {
	js := `{"goals":[{"id":"G001-add","title":"Add adds","status":"in_progress","successCriteria":[
		{"id":"G001-C1","scenario":"adds","essential":true,"status":"pass"},
		{"id":"G001-C2","scenario":"edge","status":"fail"}]},
		{"id":"G002-x","title":"later","status":"pending","successCriteria":[]},
		{"id":"G003-y","title":"done","status":"complete"}]}`
	got, err := PlanEntries([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	want := []sdk.PlanEntry{
		{Content: "G001-add Add adds", Priority: sdk.PlanEntryPriorityHigh, Status: sdk.PlanEntryStatusInProgress},
		{Content: "G001-C1 adds", Priority: sdk.PlanEntryPriorityHigh, Status: sdk.PlanEntryStatusCompleted},
		{Content: "G001-C2 edge (fail)", Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusInProgress},
		{Content: "G002-x later", Priority: sdk.PlanEntryPriorityHigh, Status: sdk.PlanEntryStatusPending},
		{Content: "G003-y done", Priority: sdk.PlanEntryPriorityHigh, Status: sdk.PlanEntryStatusCompleted},
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Fatalf("got  %s\nwant %s", gb, wb)
	}
	if _, err := PlanEntries([]byte("not json")); err == nil {
		t.Fatal("malformed goals gave no error")
	}
}

// What a tool call sends raw (its input, its output) is printable too: no
// escape sequence of the model's reaches the editor.
func TestRawIsPrintable(t *testing.T) {
	f := &Fold{Run: "20261129-010101-abcdef", Workdir: "/w"}
	esc := "x\x1b]52;c;aGVsbG8=\x07\x1b[2Jy"
	var us []sdk.SessionUpdate
	us = append(us, f.Updates(ev(1, event.ToolCall, event.ToolCallData{CallID: "c1", Tool: "bash", Args: json.RawMessage(`{"command":"printf '\u001b[2J'"}`)}))...)
	us = append(us, f.Updates(ev(2, event.ToolResult, event.ToolResultData{CallID: "c1", Tool: "bash", Output: esc}))...)
	n := 0
	for _, u := range us {
		var raw any
		switch {
		case u.ToolCall != nil:
			raw = u.ToolCall.RawInput
		case u.ToolCallUpdate != nil:
			raw = u.ToolCallUpdate.RawOutput
		}
		if raw != nil {
			n++
			if strings.ContainsRune(fmt.Sprint(raw), 0x1b) {
				t.Errorf("sent raw %q", raw)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d raw fields sent, want the input and the output: %+v", n, us)
	}
}
