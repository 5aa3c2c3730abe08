package event

import "testing"

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
		{"ls \u2067# list\u2069 && \u202ehs.x/gro\u202c", "ls # list && hs.x/gro"},
		{"עברית and العربية stay", "עברית and العربية stay"},
		{"soft\u00adhy\u200bphen\ufeff\u2060 \u061c\u180e\u200e\u200f", "softhyphen "},
		{"👩\u200d💻 می\u200cخواهم", "👩\u200d💻 می\u200cخواهم"},
		{"a\x9b2Jb \xff", "a\ufffd2Jb \ufffd"}, // invalid bytes: a lone 8-bit CSI
	}
	for _, c := range cases {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A surface keeps its own colours and drops the model's.
	red, reset := "\x1b[31m", "\x1b[0m"
	if got := PrintableKeeping(red+"x"+reset+"\x1b[8my", []string{red, reset}); got != red+"x"+reset+"y" {
		t.Errorf("palette: %q", got)
	}
}

func TestEscapeC1(t *testing.T) {
	in := []byte(`{"text":"a` + "\u009b" + `2Jb` + "\u0085" + `é"}`)
	got := string(EscapeC1(in))
	if got != `{"text":"a\u009b2Jb\u0085é"}` {
		t.Fatalf("EscapeC1 = %q", got)
	}
	plain := []byte(`{"text":"plain é ✓"}`)
	if string(EscapeC1(plain)) != string(plain) {
		t.Fatal("EscapeC1 changed JSON without C1 controls")
	}
}
