package headless

import (
	"fmt"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// LiveOptions tune the live part of a log on a terminal.
type LiveOptions struct {
	// Width reports the terminal's columns; nil, or 0 when unknown,
	// means 80. It is asked at every redraw, so a resized terminal is
	// followed.
	Width func() int
	// Every is how often the spinner moves (default 100ms).
	Every time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// progress is the live part of a terminal log, below the ordinary
// lines: the line of the answer streaming in that has not ended yet,
// and a spinner line saying what the run does, for how long, and what
// it has spent. Log.mu guards it.
type progress struct {
	now   func() time.Time
	width func() int
	every time.Duration

	activity string    // printable; "" when the run does nothing a person waits on
	since    time.Time // when activity began
	idle     time.Time // when activity became ""
	tokens   int64     // input and output tokens of this run's answers
	cost     float64   // US dollars
	frame    int

	// tail is the streamed line not ended yet (printable, no newline);
	// thinking says it is the model's thinking. answered and thought say
	// the current answer's text and thinking were shown as they streamed,
	// so the assistant_text event does not show them again.
	tail              string
	thinking          bool
	answered, thought bool

	drawn    int  // lines of the live part on the screen; the cursor ends the last
	finished bool // the run ended: nothing is drawn until another starts
	spin     *spinner
}

// spinner is the goroutine that moves the spinner.
type spinner struct{ stop, done chan struct{} }

// idleStop is how long the spinner goroutine outlives the last activity.
const idleStop = 2 * time.Second

// frames are the spinner's frames.
var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// eraseLine returns the cursor to the start of the line and erases it;
// lineUp moves the cursor one line up. These and the palette are the
// only escape sequences the log writes.
const (
	eraseLine = "\r\x1b[K"
	lineUp    = "\x1b[A"
)

// EnableLive makes l show, on a terminal, what the run is doing as it
// happens: the model's answer as it streams in, and a spinner line with
// the current activity, how long it has lasted, and the tokens and cost
// spent so far. Call it before the first event. Close ends it.
func (l *Log) EnableLive(o LiveOptions) {
	if o.Every <= 0 {
		o.Every = 100 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live = &progress{now: o.Now, width: o.Width, every: o.Every}
}

// Live shows the run's passing state: an activity (started or ended) or
// a fragment of the answer streaming in. A running command's output is
// not shown: the log says which command runs, and its result's event
// says how it went. Without EnableLive it does nothing.
func (l *Log) Live(lv event.Live) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.live
	if p == nil || p.finished {
		return
	}
	var b strings.Builder
	if lv.Text != "" {
		if lv.Thinking && !l.Verbose {
			return
		}
		l.stream(&b, lv.Text, lv.Thinking)
	} else {
		// A new activity ends the answer that streamed before it.
		l.endAnswer(&b)
		p.activity, p.since = event.Printable(lv.Activity), lv.Since
		if p.since.IsZero() {
			p.since = p.now()
		}
		if p.activity == "" {
			p.idle = p.now()
		} else if p.spin == nil {
			s := &spinner{stop: make(chan struct{}), done: make(chan struct{})}
			p.spin = s
			go l.animate(s, p.every)
		}
		l.redraw(&b)
	}
	l.flush(&b)
}

// Close ends the live part: the unfinished streamed line is ended, the
// spinner line erased and its goroutine stopped. It is safe to call
// more than once, and on a log that never showed anything live.
func (l *Log) Close() {
	l.mu.Lock()
	var b strings.Builder
	s := l.finishLive(&b)
	l.flush(&b)
	l.mu.Unlock()
	if s != nil {
		<-s.done
	}
}

// animate moves the spinner every period until it is stopped or the run
// has been idle for idleStop.
func (l *Log) animate(s *spinner, every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if !l.tick(s) {
			return
		}
	}
}

// tick draws the next frame of the spinner; false when s should end.
func (l *Log) tick(s *spinner) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.live
	if p.spin != s {
		return false
	}
	if p.activity == "" {
		if p.now().Sub(p.idle) >= idleStop {
			p.spin = nil
			return false
		}
		return true
	}
	p.frame++
	var b strings.Builder
	l.redraw(&b)
	l.flush(&b)
	return true
}

// liveEvent keeps the live part in step with event e, before its line is
// printed: the spend, the answer shown as it streamed, a new run.
func (l *Log) liveEvent(b *strings.Builder, e *event.Event) {
	p := l.live
	switch d := e.Data.(type) {
	case event.RunStartedData, event.RunResumedData:
		*p = progress{now: p.now, width: p.width, every: p.every, spin: p.spin, drawn: p.drawn}
	case event.ModelResponseData:
		if d.Error != nil {
			l.endAnswer(b) // the retry streams the answer again
			return
		}
		p.tokens += d.Usage.InputTokens + d.Usage.OutputTokens
		p.cost += d.Cost
		l.endLine(b) // the answer is whole: its last line is printed before the event's
	case event.ModelRetryData:
		l.endAnswer(b)
	case event.AssistantTextData:
		if p.answered {
			d.Text = ""
		}
		if p.thought {
			d.Thinking = ""
		}
		e.Data = d
		l.endAnswer(b)
	}
}

// finishLive ends the live part for good (until another run starts)
// and returns the spinner to wait for, if one ran.
func (l *Log) finishLive(b *strings.Builder) *spinner {
	p := l.live
	if p == nil {
		return nil
	}
	l.endAnswer(b)
	l.clear(b)
	p.finished, p.activity = true, ""
	s := p.spin
	if s != nil {
		p.spin = nil
		close(s.stop)
	}
	return s
}

// stream shows a fragment of the answer: its ended lines above the live
// part, its unended rest as the live part's first line. The fragment is
// made printable on its own, so an escape sequence split between two
// fragments cannot reach the terminal either.
func (l *Log) stream(b *strings.Builder, text string, thinking bool) {
	p := l.live
	text = strings.ReplaceAll(event.Printable(text), "\t", "    ")
	if text == "" {
		return
	}
	l.clear(b)
	if thinking != p.thinking && p.tail != "" {
		// Thinking and text do not share a line.
		if strings.TrimSpace(p.tail) != "" {
			b.WriteString(l.textLine(p.tail, p.thinking) + "\n")
		}
		p.tail = ""
	}
	p.thinking = thinking
	if thinking {
		p.thought = true
	} else {
		p.answered = true
	}
	var ended []string
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			p.tail += text
			break
		}
		ended = append(ended, p.tail+text[:i])
		p.tail, text = "", text[i+1:]
	}
	// A line longer than the terminal is cut where it would wrap (at a
	// space when there is one): the live part must stay one screen line
	// per line to be erased and drawn again.
	room := l.textRoom(thinking)
	for cells(p.tail) > room {
		head, rest := wrap(p.tail, room)
		ended = append(ended, head)
		p.tail = rest
	}
	for _, s := range ended {
		if strings.TrimSpace(s) != "" {
			b.WriteString(l.textLine(s, thinking) + "\n")
		}
	}
	l.draw(b)
}

// endAnswer ends the streamed answer: its unended line becomes an
// ordinary line, and the next answer starts afresh.
func (l *Log) endAnswer(b *strings.Builder) {
	l.endLine(b)
	p := l.live
	p.thinking, p.answered, p.thought = false, false, false
}

// endLine prints the streamed line not ended yet as an ordinary line.
func (l *Log) endLine(b *strings.Builder) {
	p := l.live
	tail := p.tail
	p.tail = ""
	if strings.TrimSpace(tail) != "" {
		l.printLive(b, []string{l.textLine(tail, p.thinking)})
	} else if tail != "" {
		l.redraw(b)
	}
}

// printLive prints ordinary lines above the live part: the live part is
// erased, the lines written, and the live part drawn again under them.
func (l *Log) printLive(b *strings.Builder, lines []string) {
	if len(lines) == 0 {
		return
	}
	l.clear(b)
	for _, s := range lines {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	l.draw(b)
}

// redraw draws the live part again.
func (l *Log) redraw(b *strings.Builder) {
	l.clear(b)
	l.draw(b)
}

// clear erases the live part, leaving the cursor where its first line
// began.
func (l *Log) clear(b *strings.Builder) {
	p := l.live
	if p.drawn == 0 {
		return
	}
	b.WriteString(eraseLine)
	for i := 1; i < p.drawn; i++ {
		b.WriteString(lineUp + eraseLine)
	}
	p.drawn = 0
}

// draw writes the live part where the cursor is (at the start of a
// line), without a final newline.
func (l *Log) draw(b *strings.Builder) {
	p := l.live
	if p.finished {
		return
	}
	var lines []string
	if p.tail != "" {
		lines = append(lines, l.textLine(p.tail, p.thinking))
	}
	if p.activity != "" {
		lines = append(lines, l.spinnerLine())
	}
	b.WriteString(strings.Join(lines, "\n"))
	p.drawn = len(lines)
}

// flush writes what an operation drew.
func (l *Log) flush(b *strings.Builder) {
	if b.Len() > 0 {
		_, _ = l.w.Write([]byte(b.String()))
	}
}

// thinkingLabel marks the lines of the model's thinking.
const thinkingLabel = "thinking: "

// textLine is one line of streamed text, under the current phase's badge.
func (l *Log) textLine(s string, thinking bool) string {
	if thinking {
		s = thinkingLabel + s
	}
	return l.badge(l.phase) + " " + l.paint(dim, s)
}

// textRoom is how many columns a line of streamed text may take after
// its badge (and label) without reaching the terminal's last column.
func (l *Log) textRoom(thinking bool) int {
	// The badge is as wide as its phase's name ("[researching]" is wider
	// than "[building ]").
	room := l.columns() - 1 - cells(l.plainBadge(l.phase)) - 1
	if thinking {
		room -= len(thinkingLabel)
	}
	return max(room, 10)
}

// columns is the terminal's width.
func (l *Log) columns() int {
	if l.live.width != nil {
		if w := l.live.width(); w > 0 {
			return w
		}
	}
	return 80
}

// spinnerLine is the spinner, the activity and how long it has lasted,
// and the run's spend so far, within the terminal's width.
func (l *Log) spinnerLine() string {
	p := l.live
	frame := frames[p.frame%len(frames)]
	took := " " + elapsed(p.now().Sub(p.since))
	if p.tokens > 0 {
		took += " · " + tasks.Tokens(p.tokens) + " tokens"
	}
	if p.cost > 0 {
		took += fmt.Sprintf(" · $%.4f", p.cost)
	}
	room := l.columns() - 1
	activity := p.activity
	if over := cells(frame+" "+activity+took) - room; over > 0 {
		activity = cut(activity, max(cells(activity)-over, 1))
	}
	if over := cells(frame+" "+activity+took) - room; over > 0 {
		took = cut(took, max(cells(took)-over, 0))
	}
	return l.paint(cyan, frame) + " " + activity + l.paint(dim, took)
}

// elapsed is a short duration: 7s, 2m05s, 1h03m.
func elapsed(d time.Duration) string {
	s := int(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

// cells is how many columns s may take on a terminal, never less than it
// does: a rune is taken as one column below U+1100 and in a few blocks of
// narrow symbols (punctuation such as "…", arrows, box drawing, braille),
// as two anywhere else (wide scripts and emoji take two; taking two for a
// narrow one only shortens a line).
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	switch {
	case r < 0x1100,
		r >= 0x2010 && r <= 0x2027, // dashes, quotes, bullets, "…"
		r >= 0x2190 && r <= 0x21FF, // arrows
		r >= 0x2500 && r <= 0x257F, // box drawing
		r >= 0x2800 && r <= 0x28FF: // braille (the spinner)
		return 1
	}
	return 2
}

// cut shortens s to n columns, ending with "…" when it had to cut.
func cut(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	w := 0
	for i, r := range s {
		if w+runeCells(r) > n-1 {
			return s[:i] + "…"
		}
		w += runeCells(r)
	}
	return s
}

// wrap splits s, wider than n columns, into a head of at most n columns,
// cut at its last space when that leaves a fair part of the line, and the
// rest.
func wrap(s string, n int) (head, rest string) {
	w, end, space := 0, len(s), -1
	for i, r := range s {
		if w+runeCells(r) > n {
			end = i
			break
		}
		if r == ' ' {
			space = i
		}
		w += runeCells(r)
	}
	if space > len(s[:end])/3 {
		return s[:space], strings.TrimLeft(s[space+1:], " ")
	}
	return s[:end], s[end:]
}
