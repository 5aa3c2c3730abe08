package headless

import (
	"bytes"
	"testing"

	"github.com/ultra-dev/ultra/internal/event"
)

func TestPrintable(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\n\twith tab", "plain text\n\twith tab"},
		{"clip\x1b]52;c;ZXZpbA==\x07board", "clipboard"},
		{"title\x1b]0;pwned\x1b\\ok", "titleok"},
		{"\x1b[2Jcleared\x1b[H", "cleared"},
		{"hid\x1b[8mden\x1b[0m", "hidden"},
		{"bell\x07 nul\x00 del\x7f c1\u009b", "bell nul del c1"},
		{"naïve — ünïcode ✓", "naïve — ünïcode ✓"},
		{"cut \x1b[", "cut "},
	}
	for _, c := range cases {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// The log keeps its own colours and drops the model's.
	if got := printable(red+"x"+reset+"\x1b[8my", true); got != red+"x"+reset+"y" {
		t.Errorf("palette: %q", got)
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
