package verify

import (
	"strings"
)

// shWord is a word of a shell command: as written, and its value.
type shWord struct {
	raw, val   string
	start, end int // in shCmd.text
}

// shCmd is one simple command of a shell script.
type shCmd struct {
	text  string
	words []shWord
	odd   string // why it is more than a plain command: redirection, substitution, subshell
}

// shParse splits a script into its simple commands (at &&, ||, ;, |, & and
// newlines), and each into words, as sh would for the common forms
// (quotes, escapes, comments). ok is false for unbalanced quotes.
func shParse(s string) (cmds []shCmd, ok bool) {
	var cur shCmd
	start := 0 // of the current command in s
	var val strings.Builder
	wordStart := -1
	endWord := func(i int) {
		if wordStart >= 0 {
			cur.words = append(cur.words, shWord{raw: s[wordStart:i], val: val.String(), start: wordStart - start, end: i - start})
			wordStart = -1
			val.Reset()
		}
	}
	endCmd := func(i, next int) {
		endWord(i)
		cur.text = s[start:i]
		if len(cur.words) > 0 {
			cmds = append(cmds, cur)
		}
		cur = shCmd{}
		start = next
	}
	mark := func(why string) {
		if cur.odd == "" {
			cur.odd = why
		}
	}
	inWord := func(i int) {
		if wordStart < 0 {
			wordStart = i
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\r':
			endWord(i)
		case '\n':
			endCmd(i, i+1)
		case ';':
			endCmd(i, i+1)
		case '&', '|':
			if c == '&' && i+1 < len(s) && s[i+1] == '>' {
				mark("redirection")
				endWord(i)
				i++
				continue
			}
			if i+1 < len(s) && s[i+1] == c {
				endCmd(i, i+2)
				i++
				continue
			}
			if c == '|' && i+1 < len(s) && s[i+1] == '&' {
				endCmd(i, i+2)
				i++
				continue
			}
			if c == '&' {
				mark("background") // its exit status is lost
			}
			endCmd(i, i+1)
		case '>', '<':
			mark("redirection")
			endWord(i)
			if i+1 < len(s) && (s[i+1] == '&' || s[i+1] == '>') {
				i++ // >&2, >>
			}
		case '`':
			mark("substitution")
			inWord(i)
		case '(', ')':
			if wordStart < 0 {
				mark("subshell")
			}
			inWord(i)
			val.WriteByte(c)
		case '#':
			if wordStart < 0 {
				for i < len(s) && s[i] != '\n' {
					i++
				}
				i-- // the newline ends the command
				continue
			}
			val.WriteByte(c)
		case '\\':
			inWord(i)
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					val.WriteByte(s[i])
				}
			}
		case '\'':
			inWord(i)
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			val.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			inWord(i)
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
					i++
					if s[i] != '\n' {
						val.WriteByte(s[i])
					}
				case s[i] == '`' || (s[i] == '$' && i+1 < len(s) && s[i+1] == '('):
					mark("substitution")
					val.WriteByte(s[i])
				default:
					val.WriteByte(s[i])
				}
			}
			if i >= len(s) {
				return nil, false
			}
		case '$':
			inWord(i)
			if i+1 < len(s) && s[i+1] == '(' {
				mark("substitution")
			}
			val.WriteByte(c)
		default:
			inWord(i)
			val.WriteByte(c)
		}
	}
	endCmd(len(s), len(s))
	return cmds, true
}
