package report

import (
	"io"
	"strings"
	"unicode/utf8"
)

// ---- input cleaning ----

// xmlSanitizer removes what the XML decoder rejects and test output often
// contains: ANSI escape sequences (raw, or as &#27;/&#x1b; references
// followed by "[31m"), other control characters, and U+FFFE/U+FFFF.
type xmlSanitizer struct {
	r     io.Reader
	in    []byte // unprocessed input (an incomplete sequence at its end)
	out   []byte // processed, not yet returned
	err   error
	chunk [32 << 10]byte
}

func (s *xmlSanitizer) Read(b []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			if len(s.in) > 0 {
				s.out, s.in = sanitizeXML(s.out[:0], s.in, true)
				continue
			}
			return 0, s.err
		}
		n, err := s.r.Read(s.chunk[:])
		s.in = append(s.in, s.chunk[:n]...)
		s.err = err
		if n == 0 && err == nil {
			continue
		}
		var rest []byte
		s.out, rest = sanitizeXML(s.out[:0], s.in, err != nil)
		s.in = append(s.in[:0], rest...)
	}
	n := copy(b, s.out)
	s.out = s.out[n:]
	return n, nil
}

// sanitizeXML appends the cleaned data to out and returns the unprocessed
// tail (an escape sequence or character reference cut by the chunk end).
func sanitizeXML(out, data []byte, atEOF bool) ([]byte, []byte) {
	const maxSeq = 64
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == 0x1b:
			n, complete := ansiLen(data[i:])
			if !complete && !atEOF && len(data)-i < maxSeq {
				return out, data[i:]
			}
			i += max(n, 1)
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			i++
		case c == '&':
			next, keep, done := charRefEnd(data, i, atEOF)
			if keep {
				return out, data[i:]
			}
			if !done {
				out = append(out, c)
				i++
				continue
			}
			i = next
		case c == 0xef && i+2 < len(data) && data[i+1] == 0xbf && (data[i+2] == 0xbe || data[i+2] == 0xbf):
			i += 3
		case c == 0xef && !atEOF && len(data)-i < 3:
			return out, data[i:]
		default:
			out = append(out, c)
			i++
		}
	}
	return out, nil
}

// charRefEnd looks at the "&" at data[i]. When it starts a character
// reference to a character XML forbids, done is true and next is the
// position after it (and after the rest of an ANSI sequence, for ESC).
// keep asks for more input first.
func charRefEnd(data []byte, i int, atEOF bool) (next int, keep, done bool) {
	const maxRef = 12
	if i+1 >= len(data) {
		return 0, !atEOF, false
	}
	if data[i+1] != '#' {
		return 0, false, false
	}
	j := i + 2
	for j < len(data) && j-i < maxRef && data[j] != ';' {
		j++
	}
	if j >= len(data) {
		return 0, !atEOF && j-i < maxRef, false
	}
	if data[j] != ';' {
		return 0, false, false
	}
	v, ok := charRef(data[i+2 : j])
	if !ok || xmlChar(v) {
		return 0, false, false
	}
	next = j + 1
	if v == 0x1b { // "&#27;[31m": drop the rest of the sequence
		n, complete := csiTail(data[next:])
		if !complete && !atEOF && len(data)-next < 64 {
			return 0, true, false
		}
		next += n
	}
	return next, false, true
}

// ansiLen is the length of the escape sequence at the start of b (b[0] is
// ESC) and whether it is complete.
func ansiLen(b []byte) (int, bool) {
	if len(b) < 2 {
		return 1, false
	}
	switch b[1] {
	case '[':
		n, ok := csiTail(b[1:])
		return 1 + n, ok
	case ']':
		for i := 2; i < len(b) && i < 256; i++ {
			if b[i] == 0x07 {
				return i + 1, true
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2, true
			}
		}
		return 2, len(b) >= 256
	case '(', ')':
		if len(b) < 3 {
			return 2, false
		}
		return 3, true
	}
	return 2, true
}

// csiTail is the length of "[params final" at the start of b, if b starts
// with '['; 0 otherwise.
func csiTail(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if b[0] != '[' {
		return 0, true
	}
	for i := 1; i < len(b) && i < 64; i++ {
		switch c := b[i]; {
		case c >= 0x20 && c <= 0x3f:
			continue
		case c >= 0x40 && c <= 0x7e:
			return i + 1, true
		default:
			return i, true
		}
	}
	return 1, len(b) >= 64
}

// charRef parses the digits of "&#…;" ("27", "x1b").
func charRef(b []byte) (rune, bool) {
	if len(b) == 0 {
		return 0, false
	}
	base := 10
	if b[0] == 'x' || b[0] == 'X' {
		base = 16
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 8 {
		return 0, false
	}
	var v rune
	for _, c := range b {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0, false
		}
		v = v*rune(base) + d
	}
	return v, true
}

// xmlChar reports whether r may appear in an XML 1.0 document.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= utf8.MaxRune
}

// charsetReader accepts the encodings test reports declare: Latin-1 family
// is converted, anything else is read as UTF-8.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252", "l1":
		return &latin1Reader{r: input}, nil
	}
	return input, nil
}

type latin1Reader struct {
	r   io.Reader
	buf []byte
}

func (l *latin1Reader) Read(b []byte) (int, error) {
	if len(l.buf) == 0 {
		tmp := make([]byte, max(1, len(b)/2))
		n, err := l.r.Read(tmp)
		for _, c := range tmp[:n] {
			l.buf = utf8.AppendRune(l.buf, rune(c))
		}
		if n == 0 {
			return 0, err
		}
	}
	n := copy(b, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}
