package headless

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
)

func TestLog(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, false)
	emit := func(phase string, d any) { l.Emit(event.Event{Run: "r1", Phase: phase, Data: d}) }
	emit("planning", event.RunStartedData{Task: "fix it", Axes: axes.Default, Provider: "openai", Model: "m"})
	emit("planning", event.ToolCallData{Tool: "read", Args: json.RawMessage(`{"file_path":"a.go"}`)})
	emit("planning", event.ToolResultData{Tool: "read", Output: "1\tpackage a"})
	emit("planning", event.RefusalData{Tool: "edit", Layer: "phase-guard", Reason: "not allowed in planning"})
	emit("building", event.PhaseChangedData{From: "planning", To: "building", By: "model", Reason: "plan accepted"})
	emit("iterating", event.VerifyResultData{Status: "FAIL", Reason: "1 of 2 tests failed", Passed: 1, Failed: 1, Failing: []string{"pkg.TestA"}})
	emit("complete", event.RunFinishedData{Status: "complete", Reason: "verification passed", Turns: 5})
	out := buf.String()
	for _, want := range []string{
		"[planning ] run r1", "build | autonomous | normal | smart | headless", "[planning ] read a.go",
		"refused [phase-guard]: not allowed in planning", "[building ] phase planning → building (model)",
		"gate FAIL: 1 of 2 tests failed", "✗ pkg.TestA", "[complete ] ✔ complete — verification passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "package a") {
		t.Error("successful results are shown only with -v")
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without a terminal")
	}
}
