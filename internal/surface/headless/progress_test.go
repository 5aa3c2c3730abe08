package headless

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// clock is a fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// safeBuffer is a writer the spinner goroutine and the test share.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// screen plays raw terminal output the way a terminal shows it, for the
// sequences the log writes: text, \r, \n, erase to the end of the line,
// one line up, and colours (which take no room).
func screen(t *testing.T, raw string) []string {
	t.Helper()
	lines := []string{""}
	row, col := 0, 0
	put := func(r rune) {
		line := []rune(lines[row])
		for len(line) < col {
			line = append(line, ' ')
		}
		if col < len(line) {
			line[col] = r
		} else {
			line = append(line, r)
		}
		lines[row] = string(line)
		col++
	}
	for i := 0; i < len(raw); {
		switch {
		case strings.HasPrefix(raw[i:], "\x1b[K"):
			if line := []rune(lines[row]); col < len(line) {
				lines[row] = string(line[:col])
			}
			i += 3
		case strings.HasPrefix(raw[i:], "\x1b[A"):
			if row == 0 {
				t.Fatalf("cursor up past the first line at byte %d of %q", i, raw)
			}
			row--
			i += 3
		case raw[i] == 0x1b:
			m := regexp.MustCompile(`^\x1b\[[0-9;]*m`).FindString(raw[i:])
			if m == "" {
				t.Fatalf("unexpected escape sequence at byte %d: %q", i, raw[i:min(i+10, len(raw))])
			}
			i += len(m)
		case raw[i] == '\r':
			col = 0
			i++
		case raw[i] == '\n':
			row, col = row+1, 0
			if row == len(lines) {
				lines = append(lines, "")
			}
			i++
		default:
			r := []rune(raw[i:])[0]
			put(r)
			i += len(string(r))
		}
	}
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// liveLog is a live log on a fake terminal of width columns and a fake
// clock; its spinner goroutine never ticks by itself (the test calls
// step).
func liveLog(color bool, width int) (*Log, *safeBuffer, *clock) {
	out := &safeBuffer{}
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	l := New(out, color)
	l.EnableLive(LiveOptions{Width: func() int { return width }, Every: time.Hour, Now: c.now})
	return l, out, c
}

// step draws the spinner's next frame, as its goroutine would.
func (l *Log) step(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	s := l.live.spin
	l.mu.Unlock()
	if s == nil {
		t.Fatal("no spinner is running")
	}
	l.tick(s)
}

func emitTo(l *Log) func(phase string, d any) {
	return func(phase string, d any) { l.Emit(event.Event{Run: "r1", Phase: phase, Data: d}) }
}

func last(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

func TestLiveSpinnerShowsActivityTimeAndSpend(t *testing.T) {
	l, out, c := liveLog(false, 100)
	emit := emitTo(l)
	emit("planning", event.RunStartedData{Task: "fix it", Axes: axes.Default, Provider: "openai", Model: "m"})
	l.Live(event.Live{Activity: "waiting for the model", Since: c.now()})
	if got := last(screen(t, out.String())); got != "⠋ waiting for the model 0s" {
		t.Fatalf("spinner line %q", got)
	}
	c.add(3 * time.Second)
	l.step(t)
	if got := last(screen(t, out.String())); got != "⠙ waiting for the model 3s" {
		t.Fatalf("after 3s and one tick: %q", got)
	}
	emit("planning", event.ModelResponseData{Turn: 1, Usage: event.Usage{InputTokens: 12000, OutputTokens: 400}, Cost: 0.0123})
	emit("planning", event.ModelResponseData{Turn: 2, Usage: event.Usage{InputTokens: 600, OutputTokens: 50}, Cost: 0.0002})
	l.Live(event.Live{Activity: "running `go test ./...`", Since: c.now()})
	c.add(75 * time.Second)
	l.step(t)
	sc := screen(t, out.String())
	if got := last(sc); got != "⠹ running `go test ./...` 1m15s · 13.1k tokens · $0.0125" {
		t.Fatalf("spinner line %q\n%s", got, strings.Join(sc, "\n"))
	}
	// The spinner is one line at the bottom, whatever happened before.
	n := 0
	for _, line := range sc {
		if strings.ContainsAny(line, strings.Join(frames, "")) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d spinner lines on the screen:\n%s", n, strings.Join(sc, "\n"))
	}
	if strings.Contains(out.String(), "\x1b[2m") || strings.Contains(out.String(), "\x1b[36m") {
		t.Errorf("colours without colour: %q", out.String())
	}
}

// An ordinary line is printed above the spinner, which is drawn again
// under it; the run's end erases the spinner for good.
func TestLiveLinesGoAboveTheSpinnerAndTheEndErasesIt(t *testing.T) {
	l, out, c := liveLog(true, 100)
	emit := emitTo(l)
	emit("building", event.RunStartedData{Task: "fix it", Axes: axes.Default, Provider: "openai", Model: "m"})
	l.Live(event.Live{Activity: "running the tests", Since: c.now()})
	emit("verifying", event.VerifyResultData{Status: "FAIL", Reason: "1 of 2 tests failed", Passed: 1, Failed: 1, Failing: []string{"calc.TestAdd", "calc.TestSub"}})
	sc := screen(t, out.String())
	if n := len(sc); n < 4 || !strings.Contains(sc[n-4], "gate FAIL: 1 of 2 tests failed") || !strings.HasSuffix(sc[n-3], "✗ calc.TestAdd") ||
		!strings.HasSuffix(sc[n-2], "✗ calc.TestSub") || !strings.HasSuffix(sc[n-1], "running the tests 0s") {
		t.Fatalf("screen:\n%s", strings.Join(sc, "\n"))
	}
	before := out.String()
	emit("escalated", event.RunFinishedData{Status: "escalated", Reason: "retries exhausted", Turns: 3, ExitCode: 4})
	end := out.String()
	if !strings.HasSuffix(end, "\n") {
		t.Fatalf("the log does not end with a whole line: %q", end[len(before):])
	}
	sc = screen(t, end)
	if strings.Contains(strings.Join(sc, "\n"), "running the tests") || !strings.Contains(sc[len(sc)-2], "✗ escalated — retries exhausted") ||
		!strings.Contains(last(sc), "exit 4") {
		t.Fatalf("final screen:\n%s", strings.Join(sc, "\n"))
	}
	// The spinner's goroutine is gone: nothing is drawn any more, even
	// if the run says it is busy after its end.
	l.mu.Lock()
	spin := l.live.spin
	l.mu.Unlock()
	if spin != nil {
		t.Fatal("the spinner still runs after the run's end")
	}
	l.Live(event.Live{Activity: "waiting for the model", Since: c.now()})
	l.Close()
	l.Close()
	if out.String() != end {
		t.Fatalf("written after the end: %q", out.String()[len(end):])
	}
}

// The answer appears as it streams in, dim, above the spinner; the
// assistant_text event does not show it again.
func TestLiveStreamsTheAnswerOnce(t *testing.T) {
	l, out, c := liveLog(true, 100)
	emit := emitTo(l)
	emit("planning", event.RunStartedData{Task: "fix it", Axes: axes.Default, Provider: "openai", Model: "m"})
	l.Live(event.Live{Activity: "waiting for the model", Since: c.now()})
	l.Live(event.Live{Text: "I will read"})
	sc := screen(t, out.String())
	if n := len(sc); sc[n-2] != "[planning ] I will read" || !strings.HasSuffix(sc[n-1], "waiting for the model 0s") {
		t.Fatalf("screen while the first line streams:\n%s", strings.Join(sc, "\n"))
	}
	l.Live(event.Live{Text: " calc.go.\n\nThen"})
	l.Live(event.Live{Text: " fix Add."})
	sc = screen(t, out.String())
	if n := len(sc); sc[n-3] != "[planning ] I will read calc.go." || sc[n-2] != "[planning ] Then fix Add." || !strings.Contains(sc[n-1], "waiting for the model") {
		t.Fatalf("screen while the answer streams:\n%s", strings.Join(sc, "\n"))
	}
	if !strings.Contains(out.String(), dim+"I will read calc.go."+reset) {
		t.Errorf("streamed text is not dim: %q", out.String())
	}
	emit("planning", event.ModelResponseData{Turn: 1, Usage: event.Usage{InputTokens: 10, OutputTokens: 5}})
	emit("planning", event.AssistantTextData{Text: "I will read calc.go.\n\nThen fix Add."})
	emit("planning", event.ToolCallData{Tool: "read", Args: json.RawMessage(`{"file_path":"calc.go"}`)})
	l.Live(event.Live{Activity: "running read", Since: c.now()})
	sc = screen(t, out.String())
	all := strings.Join(sc, "\n")
	if strings.Count(all, "I will read calc.go.") != 1 || strings.Count(all, "Then fix Add.") != 1 {
		t.Fatalf("the answer is not shown exactly once:\n%s", all)
	}
	if n := len(sc); sc[n-3] != "[planning ] Then fix Add." || sc[n-2] != "[planning ] read calc.go" || !strings.Contains(sc[n-1], "running read") {
		t.Fatalf("screen after the answer:\n%s", all)
	}
	// Without streaming (--no-stream) the event shows the answer.
	l.Live(event.Live{Activity: "waiting for the model", Since: c.now()})
	emit("planning", event.ModelResponseData{Turn: 2})
	emit("planning", event.AssistantTextData{Text: "whole answer"})
	if all := strings.Join(screen(t, out.String()), "\n"); !strings.Contains(all, "[planning ] whole answer") {
		t.Fatalf("an answer that did not stream is not shown:\n%s", all)
	}
}

// A line that streams without an end is cut where it would reach the
// terminal's last column, at a space: the live part stays one screen
// line per line, so erasing it erases all of it.
func TestLiveWrapsLongStreamedLines(t *testing.T) {
	for _, ph := range []string{"building", "researching"} {
		t.Run(ph, func(t *testing.T) { wrapsIn(t, ph) })
	}
}

// wrapsIn streams long lines in phase, whose badge may be wider than
// the others'.
func wrapsIn(t *testing.T, ph string) {
	l, out, c := liveLog(false, 40)
	emit := emitTo(l)
	emit(ph, event.AnswerData{}) // a phase, no line
	l.Live(event.Live{Activity: "waiting for the model with a very long activity name", Since: c.now()})
	for _, w := range strings.Fields("one two three four five six seven eight nine ten eleven twelve thirteen") {
		l.Live(event.Live{Text: w + " "})
	}
	l.Live(event.Live{Text: strings.Repeat("x", 70)})
	sc := screen(t, out.String())
	for _, line := range sc {
		if cells(line) > 39 {
			t.Errorf("line of %d columns on a 40-column terminal: %q", cells(line), line)
		}
	}
	all := strings.Join(sc, "\n")
	badge := l.plainBadge(ph)
	if !strings.Contains(all, badge+" one two three") || last(sc) != "⠋ waiting for the model with a very… 0s" {
		t.Fatalf("screen:\n%s", all)
	}
	words := strings.Join(strings.Fields(strings.ReplaceAll(all, badge, "")), " ")
	if !strings.Contains(words, "ten eleven twelve thirteen") || strings.Count(words, "x") < 70 {
		t.Fatalf("text lost in wrapping:\n%s", all)
	}
}

// Streamed text is made printable fragment by fragment: an escape
// sequence split between fragments reaches the terminal in no part.
func TestLiveStreamStripsSplitEscapes(t *testing.T) {
	for _, color := range []bool{true, false} {
		l, out, c := liveLog(color, 100)
		emit := emitTo(l)
		emit("building", event.RunStartedData{Task: "x", Axes: axes.Default})
		l.Live(event.Live{Activity: "waiting for \x1b]0;evil\x07the model", Since: c.now()})
		for _, f := range []string{"ok \x1b", "]52;c;ZXZpbA==\x07 \x1b[", "2J done \x1b[3", "1mred\r\n"} {
			l.Live(event.Live{Text: f})
		}
		emit("building", event.RunFinishedData{Status: "complete"})
		raw := out.String()
		own := regexp.MustCompile(`\r\x1b\[K|\x1b\[A|\x1b\[[0-9]+m`)
		if rest := own.ReplaceAllString(raw, ""); strings.ContainsAny(rest, "\x1b\x07\r") {
			t.Fatalf("color %v: a control character of the model's reached the terminal: %q", color, raw)
		}
		if !color && strings.Contains(raw, "m\x1b") || !color && regexp.MustCompile(`\x1b\[[0-9]+m`).MatchString(raw) {
			t.Errorf("colours without colour: %q", raw)
		}
		if !strings.Contains(raw, "\r\x1b[K") {
			t.Errorf("color %v: the spinner was never erased: %q", color, raw)
		}
	}
}

// Thinking alone is no line; with -v it is shown, dim.
func TestThinkingOnlyAnswer(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, false)
	emit := emitTo(l)
	emit("planning", event.AssistantTextData{Thinking: "let me think"})
	if buf.Len() != 0 {
		t.Fatalf("a thinking-only answer printed %q", buf.String())
	}
	l = New(&buf, true)
	l.Verbose = true
	emit = emitTo(l)
	emit("planning", event.AssistantTextData{Thinking: "let me think", Text: "the answer"})
	out := buf.String()
	if !strings.Contains(out, dim+"    let me think"+reset) || !strings.Contains(out, "model says:") || strings.Index(out, "let me think") > strings.Index(out, "the answer") {
		t.Fatalf("verbose thinking: %q", out)
	}
}

// --quiet: warnings, errors, what waits for a person, and the end.
func TestQuiet(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, false)
	l.Quiet = true
	emit := emitTo(l)
	emit("planning", event.RunStartedData{Task: "fix it", Axes: axes.Default, Provider: "openai", Model: "m"})
	emit("planning", event.ToolCallData{Tool: "read", Args: json.RawMessage(`{"file_path":"a.go"}`)})
	emit("planning", event.AssistantTextData{Text: "chatter"})
	emit("planning", event.PlanProposedData{Plan: "1. fix", Accepted: true, By: "model"})
	emit("planning", event.PlanProposedData{Plan: "1. fix it"})
	emit("building", event.PhaseChangedData{From: "planning", To: "building", By: "person", Reason: "ok"})
	emit("building", event.ApprovalData{CallID: "call_3", Tool: "bash", Args: json.RawMessage(`{"command":"rm x"}`), State: "waiting"})
	emit("building", event.ApprovalData{CallID: "call_3", Tool: "bash", State: "approved"})
	emit("building", event.WarningData{Message: "disk nearly full"})
	emit("building", event.ModelRetryData{Turn: 2, Attempt: 1, Error: "HTTP 503", Wait: "1s"})
	emit("building", event.ModelResponseData{Turn: 2, Error: &event.ModelError{Provider: "openai", Message: "HTTP 500: boom"}})
	emit("iterating", event.VerifyResultData{Status: "FAIL", Reason: "1 of 2 tests failed", Failing: []string{"pkg.TestA"}})
	emit("escalated", event.RunFinishedData{Status: "escalated", Reason: "model request failed", Turns: 2, ExitCode: 4})
	out := buf.String()
	for _, gone := range []string{"openai/m", "read a.go", "chatter", "accepted", "phase", "approved", "gate", "pkg.TestA"} {
		if strings.Contains(out, gone) {
			t.Errorf("--quiet shows %q:\n%s", gone, out)
		}
	}
	for _, want := range []string{"plan waiting for approval", "1. fix it", "waits for a person: ultra approve r1 --call call_3", "warning: disk nearly full",
		"retry 1 in 1s", "model error: openai: HTTP 500: boom", "✗ escalated — model request failed", "run r1 · turns 2", "exit 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("--quiet lacks %q:\n%s", want, out)
		}
	}
}

// Without EnableLive (a pipe, a file) the passing state shows nothing:
// the log is one plain line per event.
func TestNotLiveIgnoresThePassingState(t *testing.T) {
	var with, without bytes.Buffer
	for _, buf := range []*bytes.Buffer{&with, &without} {
		l := New(buf, false)
		emit := emitTo(l)
		emit("planning", event.RunStartedData{Task: "fix it", Axes: axes.Default, Provider: "openai", Model: "m"})
		if buf == &with {
			l.Live(event.Live{Activity: "waiting for the model", Since: time.Now()})
			l.Live(event.Live{Text: "streamed "})
		}
		emit("planning", event.ModelResponseData{Turn: 1, Usage: event.Usage{InputTokens: 10}})
		emit("planning", event.AssistantTextData{Text: "streamed answer"})
		emit("complete", event.RunFinishedData{Status: "complete"})
		l.Close()
	}
	if with.String() != without.String() || strings.ContainsAny(with.String(), "\x1b\r") || strings.Count(with.String(), "streamed answer") != 1 {
		t.Fatalf("with the passing state:\n%q\nwithout:\n%q", with.String(), without.String())
	}
}

// The spinner's goroutine moves the spinner by itself, ends a while after
// the run goes idle, starts again with the next activity, and Close ends
// it for good.
func TestSpinnerGoroutine(t *testing.T) {
	out := &safeBuffer{}
	c := &clock{t: time.Now()}
	l := New(out, false)
	l.Close() // never started: nothing happens
	if out.String() != "" {
		t.Fatalf("Close of a log that never went live wrote %q", out.String())
	}
	l.EnableLive(LiveOptions{Width: func() int { return 80 }, Every: time.Millisecond, Now: c.now})
	l.Live(event.Live{Activity: "running read", Since: c.now()})
	waitFor(t, "the spinner to move", func() bool {
		return strings.Contains(out.String(), frames[1]) && strings.Contains(out.String(), frames[2])
	})
	running := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.live.spin != nil
	}
	l.Live(event.Live{Activity: "", Since: c.now()})
	if !running() {
		t.Fatal("the spinner stopped at once when the run went idle")
	}
	if got := last(screen(t, out.String())); got != "" {
		t.Fatalf("an idle run shows %q", got)
	}
	c.add(idleStop)
	waitFor(t, "the idle spinner to stop", func() bool { return !running() })
	l.Live(event.Live{Activity: "waiting for the model", Since: c.now()})
	if !running() {
		t.Fatal("the spinner did not start again")
	}
	l.Close()
	if running() {
		t.Fatal("Close left the spinner running")
	}
	end := out.String()
	if got := last(screen(t, end)); got != "" {
		t.Fatalf("Close left %q on the screen", got)
	}
	time.Sleep(5 * time.Millisecond) // a goroutine that was not stopped would draw now
	if out.String() != end {
		t.Fatalf("drawn after Close: %q", out.String()[len(end):])
	}
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestElapsedAndCount(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Second: "0s", 999 * time.Millisecond: "0s", 59 * time.Second: "59s",
		61 * time.Second: "1m01s", 3599 * time.Second: "59m59s", 3660 * time.Second: "1h01m"} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 12400: "12.4k", 3_100_000: "3.1M"} {
		if got := tasks.Tokens(n); got != want {
			t.Errorf("tasks.Tokens(%d) = %q, want %q", n, got, want)
		}
	}
	if got := cut("abcdef", 4); got != "abc…" {
		t.Errorf("cut = %q", got)
	}
	if head, rest := wrap("aaaa bbbb cccc", 11); head != "aaaa bbbb" || rest != "cccc" {
		t.Errorf("wrap = %q, %q", head, rest)
	}
	if head, rest := wrap("aaaaaaaaaaaa", 5); head != "aaaaa" || rest != "aaaaaaa" {
		t.Errorf("wrap without spaces = %q, %q", head, rest)
	}
}

// An answer cut short by a model error ends its line; the retry streams
// the answer again, and that one is not shown twice either. Streamed
// thinking is shown only with -v, on lines of its own.
func TestLiveRetriedAnswerAndThinking(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		l, out, c := liveLog(false, 100)
		l.Verbose = verbose
		emit := emitTo(l)
		emit("building", event.AnswerData{})
		l.Live(event.Live{Activity: "waiting for the model", Since: c.now()})
		l.Live(event.Live{Text: "Half an ans"})
		emit("building", event.ModelResponseData{Turn: 1, Error: &event.ModelError{Provider: "openai", Message: "stream cut"}})
		emit("building", event.ModelRetryData{Turn: 1, Attempt: 1, Error: "stream cut", Wait: "1s"})
		l.Live(event.Live{Text: "Let me ", Thinking: true})
		l.Live(event.Live{Text: "check.", Thinking: true})
		l.Live(event.Live{Text: "The whole answer."})
		emit("building", event.ModelResponseData{Turn: 1})
		emit("building", event.AssistantTextData{Text: "The whole answer.", Thinking: "Let me check."})
		emit("complete", event.RunFinishedData{Status: "complete"})
		sc := screen(t, out.String())
		all := strings.Join(sc, "\n")
		want := []string{"[building ] Half an ans", "[building ] model error: openai: stream cut", "[building ] model error: stream cut; retry 1 in 1s"}
		if verbose {
			want = append(want, "[building ] thinking: Let me check.", "[building ] The whole answer.", "[building ] usage turn 1")
		} else {
			want = append(want, "[building ] The whole answer.", "[complete ] ✔ complete")
		}
		if len(sc) < len(want) {
			t.Fatalf("verbose %v: screen:\n%s", verbose, all)
		}
		for i, w := range want {
			if !strings.HasPrefix(sc[i], w) {
				t.Fatalf("verbose %v: line %d is %q, want %q; screen:\n%s", verbose, i, sc[i], w, all)
			}
		}
		if strings.Count(all, "The whole answer.") != 1 || strings.Count(all, "Let me check.") != map[bool]int{false: 0, true: 1}[verbose] {
			t.Fatalf("verbose %v: screen:\n%s", verbose, all)
		}
	}
}
