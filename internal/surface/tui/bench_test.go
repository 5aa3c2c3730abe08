package tui

import (
	"encoding/json"
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
)

// bigRun is a run of n messages of every kind the conversation shows.
func bigRun(n int) (*fake, string) {
	f := newFake()
	id := "20261124-180000-ffffff"
	f.setRow(&store.Run{ID: id, Task: "a long run", Phase: "building", Status: "running", Axes: axes.Default})
	f.add(id, event.RunStarted, "planning", event.RunStartedData{Task: "a long run", Axes: axes.Default})
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			f.add(id, event.AssistantText, "building", event.AssistantTextData{Text: fmt.Sprintf("## Step %d\nI will **change** `calc.go` now, then run the tests:\n- first\n- second\n\n```go\nfunc Add(a, b int) int { return a + b }\n```", i)})
		case 1:
			f.add(id, event.ToolCall, "building", event.ToolCallData{CallID: fmt.Sprint("c", i), Tool: "edit",
				Args: json.RawMessage(`{"file_path":"calc.go","old_string":"return a - b\n// x","new_string":"return a + b\n// y"}`)})
		case 2:
			f.add(id, event.ToolResult, "building", event.ToolResultData{CallID: fmt.Sprint("c", i-1), Tool: "edit", Output: "ok"})
		case 3:
			f.add(id, event.ToolCall, "building", event.ToolCallData{CallID: fmt.Sprint("c", i), Tool: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)})
			f.add(id, event.ToolResult, "building", event.ToolResultData{CallID: fmt.Sprint("c", i), Tool: "bash", Output: "ok\nok\nok\nok\nFAIL x"})
		case 4:
			f.add(id, event.VerifyResult, "verifying", event.VerifyResultData{Status: "FAIL", Reason: "tests failed", Passed: 3, Failed: 1, Failing: []string{"calc.TestMul"}})
		}
	}
	return f, id
}

// bigModel follows a run whose conversation has n messages.
func bigModel(b *testing.B, n int) *Model {
	f, id := bigRun(n * 5 / 4)
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	pump(b, m, m.pollCmd())
	if len(m.sess.Items()) < n {
		b.Fatalf("%d items", len(m.sess.Items()))
	}
	return m
}

// BenchmarkFrame5000 renders a frame of a 5,000-message conversation as
// it grows (the newest message changes), at the bottom and scrolled to
// the middle and the top. Goal: a frame under 16 ms.
func BenchmarkFrame5000(b *testing.B) {
	for _, at := range []string{"bottom", "middle", "top"} {
		b.Run(at, func(b *testing.B) {
			m := bigModel(b, 5000)
			switch at {
			case "middle":
				m.scroll(5000 * 3)
			case "top":
				m.scroll(1 << 30)
			}
			m.Render()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.sess.Items()[len(m.sess.Items())-1].touch()
				m.tick++
				_ = m.Render()
			}
		})
	}
}

// BenchmarkFirstFrame is the TUI's start on a run of 5,000 messages: its
// events read and folded, then the first frame. Goal: under 150 ms.
func BenchmarkFirstFrame(b *testing.B) {
	f, id := bigRun(5000 * 5 / 4)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		pump(b, m, m.pollCmd())
		_ = m.Render()
	}
}

// TestFrameMemoryIsTheScreen: after frames at the bottom and the top of
// a long conversation, only the items of the last frame hold rendered
// lines.
func TestFrameMemoryIsTheScreen(t *testing.T) {
	f, id := bigRun(2000)
	m := New(Options{Backend: f, Attach: id, Axes: axes.Default})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	pump(t, m, m.pollCmd())
	m.scroll(1 << 30)
	m.Render()
	m.scroll(-(1 << 30))
	m.Render()
	cached := 0
	for _, it := range m.sess.Items() {
		if it.cacheLines != nil {
			cached++
		}
	}
	if cached == 0 || cached > 40 {
		t.Fatalf("%d items hold rendered lines after a frame of 40 rows", cached)
	}
}
