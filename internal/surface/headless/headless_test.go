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
	emit("iterating", event.VerifyResultData{Status: "FAIL", Reason: "1 of 2 tests failed", Passed: 1, Failed: 1, Failing: []string{"pkg.TestA"},
		FailingWhy: []string{"a_test.go:7: got 1, want \x1b[31m2"}})
	emit("planning", event.ToolCallData{Tool: "goals", Args: json.RawMessage(`{"goals":[{"title":"a"},{"title":"b"}]}`)})
	emit("verifying", event.CriterionData{Goal: "G001-a", Criterion: "G001-C1", Channel: "http", Status: "fail", Summary: "http GET / → 500",
		Reason: "expect_status 200 ✗ got 500", Evidence: []string{".ultra/state/evidence/r1/G001-a/G001-C1/cycle-1/http.txt"}, Duration: "40ms"})
	emit("verifying", event.CriterionData{Goal: "G001-a", Criterion: "G001-C2", Channel: "command", Status: "pass", Summary: "command ls → exit 0",
		Evidence: []string{"hidden-unless-verbose.txt"}})
	emit("verifying", event.LedgerData{Seq: 7, Kind: "goal_completed", Goal: "G001-a", Text: "every essential criterion passed"})
	emit("verifying", event.LedgerData{Seq: 8, Kind: "evidence_captured", Goal: "G001-a", Criterion: "G001-C1"})
	// An older record's verdict is shown in the one word of today's.
	emit("iterating", event.ReviewData{Round: 1, Verdict: "REQUEST_CHANGES", Blockers: []string{"a.go:3: wrong"}})
	emit("building", event.ApprovalData{CallID: "call_3", Tool: "bash", Args: json.RawMessage(`{"command":"ls"}`), State: "waiting"})
	emit("building", event.ApprovalData{CallID: "call_3", Tool: "bash", State: "denied", Reason: "not now"})
	emit("building", event.ControlData{Request: 4, Kind: "steer", Scope: "after-current-unit", Outcome: "pending"})
	fast := axes.Default
	fast.ModelMode = "fast"
	emit("building", event.AxisChangedData{Axis: "model_mode", From: "smart", To: "fast", By: "person", Scope: "now", Reason: "cheaper", Axes: fast})
	for _, w := range []event.WorkerData{{Worker: "w1", Goal: "G002-b", Event: "started", Branch: "ultra/w1"},
		{Worker: "w1", Goal: "G002-b", Event: "released", Reason: "2 claims released"},
		{Worker: "w1", Goal: "G002-b", Event: "landed", Commit: "0123456789abcdef"},
		{Worker: "w2", Goal: "G003-c", Event: "sent_back", Reason: "the commit conflicts with what landed"},
		{Worker: "w2", Goal: "G003-c", Event: "ended", Status: "escalated", Reason: "caps"}} {
		emit("building", w)
	}
	emit("complete", event.RunFinishedData{Status: "complete", Reason: "verification passed", Turns: 5})
	out := buf.String()
	if strings.Contains(out, "hidden-unless-verbose") || strings.Contains(out, "evidence_captured") {
		t.Errorf("a passing criterion's evidence and minor ledger entries are shown only with -v:\n%s", out)
	}
	for _, want := range []string{
		"goals 2 goals proposed", "✗ G001-C1 fail [http] http GET / → 500 (40ms)", "expect_status 200 ✗ got 500",
		"evidence: .ultra/state/evidence/r1/G001-a/G001-C1/cycle-1/http.txt", "✓ G001-C2 pass [command]",
		"ledger #7 goal_completed G001-a every essential criterion passed", "review round 1: blockers", "✗ a.go:3: wrong",
		"[planning ] run r1", "build | autonomous | normal | smart | headless", "[planning ] read a.go",
		"refused [phase-guard]: not allowed in planning", "[building ] phase planning → building (model)",
		"gate FAIL: 1 of 2 tests failed", "✗ pkg.TestA", "a_test.go:7: got 1, want 2\n", // why, with no escape from the runner
		"[complete ] ✔ complete — verification passed",
		`approval call call_3 (bash {"command":"ls"}) waits for a person: ultra approve r1 --call call_3`,
		"--read-only: every read-only call",
		"approval call call_3 (bash) denied: not now", "control steer request #4 [after-current-unit]: pending",
		"axis model_mode: smart → fast by person [now]: cheaper · now build | autonomous | normal | fast | headless",
		"worker w1 started G002-b on ultra/w1", "worker G002-b: 2 claims released", "worker G002-b landed as 0123456789ab",
		"worker G003-c sent back: the commit conflicts with what landed", "worker w2 (G003-c) escalated: caps",
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

// A request cut short by Ctrl-C is not a model error: the run's end says
// "interrupted", once.
func TestInterruptedRunShowsNoModelError(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, false)
	l.Emit(event.Event{Run: "r1", Phase: "planning", Data: event.ModelResponseData{Turn: 1, Error: &event.ModelError{Provider: "openai", Message: "context canceled"}}})
	l.Emit(event.Event{Run: "r1", Phase: "planning", Data: event.RunFinishedData{Status: "interrupted", Reason: "interrupted", ExitCode: 130}})
	out := buf.String()
	if strings.Contains(out, "model error") || strings.Count(out, "interrupted") != 1 || !strings.Contains(out, "✗ interrupted\n") {
		t.Fatalf("log:\n%s", out)
	}
	// A model error that ends the run otherwise is shown, before the end.
	buf.Reset()
	l.Emit(event.Event{Run: "r1", Phase: "planning", Data: event.ModelResponseData{Turn: 1, Error: &event.ModelError{Provider: "openai", Message: "HTTP 500: boom"}}})
	l.Emit(event.Event{Run: "r1", Phase: "planning", Data: event.RunFinishedData{Status: "failed", Reason: "model request failed", ExitCode: 1}})
	out = buf.String()
	if i, j := strings.Index(out, "model error"), strings.Index(out, "✗ failed — model request failed"); i < 0 || j < i || !strings.Contains(out, "boom") {
		t.Fatalf("log:\n%s", out)
	}
}

// A model's answer cannot drive the terminal through the log.
func TestLogStripsEscapes(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, true)
	l.Emit(event.Event{Run: "r1", Phase: "answering", Data: event.AssistantTextData{Text: "ok\x1b]52;c;ZXZpbA==\x07\x1b[2J done"}})
	if bytes.Contains(buf.Bytes(), []byte("]52;")) || bytes.Contains(buf.Bytes(), []byte("\x1b[2J")) || !bytes.Contains(buf.Bytes(), []byte("ok done")) {
		t.Fatalf("log: %q", buf.String())
	}
}

// One word per verdict, and a run is shown as a success only when it
// completes with exit 0: a review that found blockers completes, exits 3,
// and gets no ✔.
func TestVerdictWordsAndSuccessMark(t *testing.T) {
	for _, c := range []struct {
		d    any
		want string
		not  string
	}{
		{event.ReviewData{Round: 1, Verdict: "blockers"}, "review round 1: blockers", "REQUEST_CHANGES"},
		{event.ReviewData{Round: 1, Verdict: "REQUEST_CHANGES"}, "review round 1: blockers", "REQUEST_CHANGES"},
		{event.ReviewData{Round: 2, Verdict: "APPROVE"}, "review round 2: approve", "APPROVE"},
		{event.ReviewData{Round: 1, Verdict: "approve", Architecture: "CONCERNS", ArchitectureReasons: []string{"a second parser beside the lexer"}},
			"review round 1: approve, architecture CONCERNS\n", "CLEAR"},
		{event.ReviewData{Round: 1, Verdict: "approve", Architecture: "CONCERNS", ArchitectureReasons: []string{"a second parser beside the lexer"}},
			"   ✗ architecture: a second parser beside the lexer", "✔"},
		{event.RunFinishedData{Status: "complete", Reason: "the review found 1 blocker(s) (2 findings)", ExitCode: 3}, "✗ complete — the review found 1 blocker(s)", "✔"},
		{event.RunFinishedData{Status: "complete", Reason: "the review approved (0 findings, no blockers)"}, "✔ complete — the review approved", "✗"},
	} {
		var buf bytes.Buffer
		New(&buf, false).Emit(event.Event{Run: "r1", Phase: "complete", Data: c.d})
		if out := buf.String(); !strings.Contains(out, c.want) || strings.Contains(out, c.not) {
			t.Errorf("%+v: %q, want %q and no %q", c.d, out, c.want, c.not)
		}
	}
}

// A run that stops to wait for a person, as asked, ends with no failure
// mark.
func TestWaitingEndIsNoFailure(t *testing.T) {
	for _, status := range []string{"needs_approval", "paused", "stopped"} {
		var buf bytes.Buffer
		New(&buf, false).Emit(event.Event{Run: "r1", Phase: "planning", Data: event.RunFinishedData{Status: status, Reason: "the plan waits for a person", ExitCode: 3}})
		if out := buf.String(); strings.Contains(out, "✗") || !strings.Contains(out, "⏸ "+status) {
			t.Errorf("%s:\n%s", status, out)
		}
	}
}

// Success styling (green) only for a clean review: it approves and its
// architecture is CLEAR; an approval with architecture concerns is red.
func TestReviewSuccessStylingOnlyWhenClean(t *testing.T) {
	for _, c := range []struct {
		d     event.ReviewData
		green bool
	}{
		{event.ReviewData{Round: 1, Verdict: "approve", Architecture: "CLEAR"}, true},
		{event.ReviewData{Round: 1, Verdict: "approve"}, true},
		{event.ReviewData{Round: 1, Verdict: "approve", Architecture: "CONCERNS", ArchitectureReasons: []string{"r"}}, false},
		{event.ReviewData{Round: 3, Verdict: "approve", Architecture: "BLOCKED", ArchitectureReasons: []string{"r"}}, false},
		{event.ReviewData{Round: 1, Verdict: "blockers", Architecture: "CLEAR", Blockers: []string{"a.go: wrong"}}, false},
	} {
		var buf bytes.Buffer
		New(&buf, true).Emit(event.Event{Run: "r1", Phase: "reviewing", Data: c.d})
		out := buf.String()
		if strings.Contains(out, green) != c.green || strings.Contains(out, red) == c.green {
			t.Errorf("%+v: green %v, want %v:\n%q", c.d, strings.Contains(out, green), c.green, out)
		}
	}
}
