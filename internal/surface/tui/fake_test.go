package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// fake is a Backend with runs in memory: it records the commands the TUI
// runs instead of running them.
type fake struct {
	mu      sync.Mutex
	rows    map[string]*store.Run
	events  map[string][]store.StoredEvent
	rts     map[string]store.Runtime
	execs   [][]string
	starts  [][]string
	startID string
	tasks   []tasks.Row
	execOut map[string]string // what a command prints, by its name ("done" otherwise)
}

func newFake() *fake {
	return &fake{rows: map[string]*store.Run{}, events: map[string][]store.StoredEvent{}, rts: map[string]store.Runtime{}}
}

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// add appends an event of run.
func (f *fake) add(run string, typ event.Type, phase string, data any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := json.Marshal(data)
	seq := int64(len(f.events[run]) + 1)
	f.events[run] = append(f.events[run], store.StoredEvent{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Second), Type: string(typ), Phase: phase, Data: b})
}

func (f *fake) setRow(r *store.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows[r.ID] = r
}

func (f *fake) Row(_ context.Context, id string) (*store.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.rows[id]
	if !ok {
		return nil, fmt.Errorf("run not found: %s", id)
	}
	c := *r
	return &c, nil
}

func (f *fake) EventsAfter(_ context.Context, id string, seq int64, limit int) ([]store.StoredEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.StoredEvent
	for _, e := range f.events[id] {
		if e.Seq > seq && (limit == 0 || len(out) < limit) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (f *fake) Runtime(_ context.Context, id string) (store.Runtime, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rts[id], nil
}

func (f *fake) Exec(_ context.Context, args []string) (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execs = append(f.execs, args)
	if out, ok := f.execOut[args[0]]; ok {
		return out, 0
	}
	return "done", 0
}

func (f *fake) Start(_ context.Context, args []string) (string, func() (string, int), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts = append(f.starts, args)
	return f.startID, func() (string, int) { return "", 0 }, nil
}

func (f *fake) Tasks(context.Context, bool) ([]tasks.Row, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tasks, nil
}

func (f *fake) lastExec() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.execs) == 0 {
		return nil
	}
	return f.execs[len(f.execs)-1]
}

// demoRun is a run in the middle of its work: an edit, a failing gate, a
// refusal, and a call waiting for approval under manual control.
func demoRun(f *fake, id string, control string) {
	a := axes.Axes{Mode: "build", Control: control, Permission: "trusted", ModelMode: "smart", Surface: "headless"}
	f.setRow(&store.Run{ID: id, Task: "make the calc tests pass", Phase: "iterating", Status: "running", Axes: a,
		TaskRow: store.Task{Retries: 1, MaxRetries: 10, InputTokens: 12000, OutputTokens: 450, SpentCost: 0.0321, Goal: "g1",
			LimitWhat: "cycles of goal g1", LimitUsed: 3, LimitMax: 5}})
	f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "make the calc tests pass", Axes: a, Provider: "openai", Model: "scripted",
		Branch: "ultra/" + id, Workdir: "/wt/" + id})
	f.add(id, event.AssistantText, "planning", event.AssistantTextData{Text: "## Plan\nFix **Add** in `calc.go`:\n- read the test\n- edit the code", Thinking: "The test expects 2+2=4.\nAdd subtracts."})
	f.add(id, event.PhaseChanged, "building", event.PhaseChangedData{From: "planning", To: "building", By: "model", Reason: "plan accepted"})
	f.add(id, event.ToolCall, "building", event.ToolCallData{CallID: "c1", Tool: "edit", Args: json.RawMessage(`{"file_path":"calc.go","old_string":"return a - b","new_string":"return a + b"}`)})
	f.add(id, event.ToolResult, "building", event.ToolResultData{CallID: "c1", Tool: "edit", Output: "edited calc.go"})
	f.add(id, event.ToolCall, "building", event.ToolCallData{CallID: "c2", Tool: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)})
	f.add(id, event.ToolResult, "building", event.ToolResultData{CallID: "c2", Tool: "bash", IsError: true, Output: "line 1\nline 2\nline 3\nline 4\nline 5"})
	f.add(id, event.VerifyResult, "verifying", event.VerifyResultData{Status: "FAIL", Reason: "tests failed", Passed: 3, Failed: 2, Duration: "1.2s",
		Failing: []string{"calc.TestMul", "calc.TestDiv"}, FailingWhy: []string{"calc_test.go:9: Mul(2, 3) = 5, want 6", ""}})
	f.add(id, event.Refusal, "iterating", event.RefusalData{Tool: "bash", Layer: "policy", Reason: "git push is not allowed"})
	if control == "manual" {
		f.add(id, event.Approval, "iterating", event.ApprovalData{CallID: "c9", Tool: "write", Args: json.RawMessage(`{"file_path":"calc.go"}`), State: "waiting"})
	}
}
