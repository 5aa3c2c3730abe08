package event

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestBusNumbersAndFansOut(t *testing.T) {
	var a, b []Event
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	bus := NewBus("r1", 41, func() time.Time { return now }, SinkFunc(func(e Event) { a = append(a, e) }))
	bus.Add(SinkFunc(func(e Event) { b = append(b, e) }))
	bus.Emit(ToolCall, "building", ToolCallData{Tool: "read"})
	bus.Emit(Warning, "building", WarningData{Message: "x"})
	if len(a) != 2 || len(b) != 2 || a[0].Seq != 42 || a[1].Seq != 43 || a[0].Run != "r1" || !a[0].Time.Equal(now) {
		t.Fatalf("%+v %+v", a, b)
	}
}

func TestJSONLOneObjectPerLine(t *testing.T) {
	var buf bytes.Buffer
	j := NewJSONL(&buf)
	j.Emit(Event{Seq: 1, Run: "r", Type: RefusalType(), Phase: "planning", Data: RefusalData{Tool: "edit", Layer: "phase-guard", Reason: "no"}})
	j.Emit(Event{Seq: 2, Run: "r", Type: Warning, Data: make(chan int)}) // unencodable
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &e); err != nil || e["type"] != "refusal" || e["data"].(map[string]any)["layer"] != "phase-guard" {
		t.Fatalf("%v %v", e, err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &e); err != nil || e["type"] != "warning" {
		t.Fatalf("unencodable event must become a warning: %s", lines[1])
	}
}

func RefusalType() Type { return Refusal }

func TestTruncateKeepsUTF8(t *testing.T) {
	s := strings.Repeat("é", 10)
	got := Truncate(s, 5)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "[truncated]") {
		t.Fatalf("%q", got)
	}
	if Truncate("short", 10) != "short" {
		t.Fatal("short strings are kept")
	}
}
