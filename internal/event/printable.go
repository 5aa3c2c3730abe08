package event

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable is s without what a terminal would act on rather than show:
// escape sequences (a model's text could clear the screen, retitle the
// window, write the clipboard or hide text), every other control
// character but newline and tab, and the bidirectional controls that
// reorder text. Text a model wrote passes through it
// before it reaches a person's terminal.
func Printable(s string) string { return PrintableKeeping(s, nil) }

// PrintableKeeping is Printable, keeping the escape sequences of keep (a
// surface's own colours).
func PrintableKeeping(s string, keep []string) string {
	// Invalid bytes first: a lone 0x9B is an 8-bit CSI to a terminal that
	// reads bytes.
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if len(keep) > 0 {
				kept := false
				for _, p := range keep {
					if strings.HasPrefix(s[i:], p) {
						b.WriteString(p)
						i += len(p)
						kept = true
						break
					}
				}
				if kept {
					continue
				}
			}
			i += escapeLen(s[i:])
			continue
		}
		r, size := rune(s[i]), 1
		if r >= 0x80 {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if !isControl(r) {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isControl(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || r == 0x1b || formatChar(r))
}

// formatChar recognises the invisible format characters: those that
// reorder the text around them (embeddings, overrides, isolates), so a
// terminal that honours them could show a command other than the one
// that runs, and the others (below).
func formatChar(r rune) bool {
	if r == 0x200C || r == 0x200D {
		return false // joiners: scripts and emoji need them
	}
	// Format characters (soft hyphen, zero-width spaces, marks, BOM, the
	// embeddings and isolates) are invisible, or measured differently by
	// terminals: they can hide or shift text.
	return unicode.Is(unicode.Cf, r)
}

// escapeLen is the length of the escape sequence s starts with: CSI
// (ESC [ … final), OSC, DCS, SOS, PM and APC strings (ESC ] … BEL or ST),
// or ESC and one more byte.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return len(s)
	case ']', 'P', 'X', '^', '_':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	return 2
}

// OneLine is s on one line (runs of white space made one space), cut to n
// runes with an ellipsis: how a surface shows text in a line of its own.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	n = max(n, 1)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
