package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// unsure is the reason given when a script is too unusual to check.
const unsure = "could not be checked; simplify it"

// bracketDelim explains refusing a bracket expression around the delimiter.
const bracketDelim = "has its delimiter inside [...], which tools read differently"

// sedAdvice and awkAdvice say how to avoid bracketDelim.
const (
	sedAdvice = "; use another delimiter, as in s|[^/]*||"
	awkAdvice = "; match a string instead, as in $0 ~ \"[/]\""
)

func advise(why, advice string) string {
	if why == bracketDelim {
		return why + advice
	}
	return why
}

// sedScriptReason reads a sed script and refuses the commands that write
// files (w, W, s///w) or run commands (e, s///e). Anything it does not
// understand is refused too.
func sedScriptReason(script string) string {
	p := &scanner{s: script}
	for {
		p.skip(" \t\n;")
		if p.eof() {
			return ""
		}
		switch p.peek() {
		case '#':
			p.toEOL()
			continue
		case '}':
			p.i++
			continue
		}
		if why := p.sedAddresses(); why != "" {
			return "sed address " + advise(why, sedAdvice)
		}
		p.skip(" \t")
		for !p.eof() && p.peek() == '!' {
			p.i++
			p.skip(" \t")
		}
		if p.eof() {
			return "sed script is missing a command"
		}
		cmd := p.s[p.i]
		p.i++
		ok := true
		switch cmd {
		case '{':
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
			ok = p.sedEnd()
		case 'l', 'L', 'q', 'Q':
			p.skip(" \t")
			p.skip("0123456789")
			ok = p.sedEnd()
		case 'a', 'i', 'c':
			p.sedText()
		case 'b', 't', 'T', ':', 'v':
			ok = p.sedLabel()
		case 'r', 'R':
			p.toEOL() // reads a file
		case 'w', 'W':
			return fmt.Sprintf("sed %c writes to a file", cmd)
		case 'e':
			return "sed e runs a command"
		case 's':
			if why := p.sedSubstitute(); why != "" {
				return why
			}
		case 'y':
			ok = p.delimited(2) && p.sedEnd()
		default:
			return fmt.Sprintf("sed command %q is not known to be read-only", cmd)
		}
		if !ok {
			return fmt.Sprintf("sed %c command %s", cmd, unsure)
		}
	}
}

// scanner is a cursor over script text.
type scanner struct {
	s string
	i int
}

func (p *scanner) eof() bool  { return p.i >= len(p.s) }
func (p *scanner) peek() byte { return p.s[p.i] }

func (p *scanner) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.peek()) >= 0 {
		p.i++
	}
}

func (p *scanner) toEOL() {
	for !p.eof() && p.peek() != '\n' {
		p.i++
	}
}

// sedAddresses skips an optional address or address range.
func (p *scanner) sedAddresses() string {
	if why := p.sedAddress(); why != "" {
		return why
	}
	p.skip(" \t")
	if p.eof() || p.peek() != ',' {
		return ""
	}
	p.i++
	p.skip(" \t")
	start := p.i
	if !p.eof() && (p.peek() == '+' || p.peek() == '~') {
		p.i++
		start = p.i
		p.skip("0123456789")
	} else if why := p.sedAddress(); why != "" {
		return why
	}
	if p.i == start {
		return unsure
	}
	return ""
}

func (p *scanner) sedAddress() string {
	if p.eof() {
		return ""
	}
	switch ch := p.peek(); {
	case ch >= '0' && ch <= '9':
		p.skip("0123456789")
		if !p.eof() && p.peek() == '~' {
			p.i++
			p.skip("0123456789")
		}
	case ch == '$':
		p.i++
	case ch == '/' || ch == '\\':
		if ch == '\\' {
			p.i++
			if p.eof() || p.peek() == '\n' || p.peek() == '\\' {
				return unsure
			}
		}
		delim := p.peek()
		p.i++
		if why := p.regex(delim); why != "" {
			return why
		}
		p.skip("IM")
	}
	return ""
}

// regex skips a regular expression up to its closing delimiter. A bracket
// expression that would contain the delimiter is refused: tools differ on
// whether the delimiter ends the expression there.
func (p *scanner) regex(delim byte) string {
	start := p.i
	for !p.eof() {
		ch := p.peek()
		switch {
		case ch == '\\':
			p.i += 2
			continue
		case ch == '\n':
			return unsure
		case ch == delim:
			re := p.s[start:p.i]
			p.i++
			if !bracketsClosed(re, delim) {
				return bracketDelim
			}
			return ""
		}
		p.i++
	}
	return unsure
}

// bracketsClosed reports that every bracket expression in re closes
// within it and holds no escaped delimiter.
func bracketsClosed(re string, delim byte) bool {
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			i++
		case '[':
			j := i + 1
			if j < len(re) && re[j] == '^' {
				j++
			}
			if j < len(re) && re[j] == ']' {
				j++
			}
			closed := false
			for ; j < len(re); j++ {
				if re[j] == '[' && j+1 < len(re) && strings.IndexByte(":.=", re[j+1]) >= 0 {
					end := strings.Index(re[j+2:], string(re[j+1])+"]")
					if end < 0 {
						return false
					}
					j += 2 + end + 1
					continue
				}
				if re[j] == '\\' && j+1 < len(re) && re[j+1] == delim {
					return false
				}
				if re[j] == ']' {
					closed = true
					break
				}
			}
			if !closed {
				return false
			}
			i = j
		}
	}
	return true
}

// delimited skips n parts ended by the delimiter that comes first (y/a/b/).
func (p *scanner) delimited(n int) bool {
	if p.eof() || p.peek() == '\n' || p.peek() == '\\' {
		return false
	}
	delim := p.peek()
	p.i++
	for ; n > 0; n-- {
		if !p.plain(delim) {
			return false
		}
	}
	return true
}

// plain skips text with backslash escapes up to the delimiter.
func (p *scanner) plain(delim byte) bool {
	for !p.eof() {
		ch := p.peek()
		switch {
		case ch == '\\':
			p.i += 2
			continue
		case ch == '\n':
			return false
		case ch == delim:
			p.i++
			return true
		}
		p.i++
	}
	return false
}

func (p *scanner) sedSubstitute() string {
	if p.eof() || p.peek() == '\n' || p.peek() == '\\' {
		return "sed s command " + unsure
	}
	delim := p.peek()
	p.i++
	if why := p.regex(delim); why != "" {
		return "sed s command " + advise(why, sedAdvice)
	}
	if !p.plain(delim) {
		return "sed s command " + unsure
	}
	for !p.eof() {
		switch ch := p.peek(); {
		case ch == 'e':
			return "sed s///e runs the result as a command"
		case ch == 'w' || ch == 'W':
			return "sed s///w writes to a file"
		case strings.IndexByte("gpiImM0123456789", ch) >= 0:
			p.i++
			continue
		}
		break
	}
	if !p.sedEnd() {
		return "sed s command " + unsure
	}
	return ""
}

// sedEnd expects the end of a command.
func (p *scanner) sedEnd() bool {
	p.skip(" \t")
	return p.eof() || strings.IndexByte(";\n}#", p.peek()) >= 0
}

// sedText skips the text of a, i or c: up to an unescaped newline.
func (p *scanner) sedText() {
	for !p.eof() {
		switch p.peek() {
		case '\\':
			p.i += 2
			continue
		case '\n':
			p.i++
			return
		}
		p.i++
	}
}

// sedLabel skips a label, which GNU sed ends at ";" or a newline.
func (p *scanner) sedLabel() bool {
	p.skip(" \t")
	start := p.i
	for !p.eof() && p.peek() != ';' && p.peek() != '\n' {
		p.i++
	}
	return !strings.ContainsAny(strings.TrimRight(p.s[start:p.i], " \t"), " \t")
}

var (
	awkSystem   = regexp.MustCompile(`\bsystem\b`)
	awkIndirect = regexp.MustCompile(`@[A-Za-z_]`)
)

// awk token classes, for telling a regular expression from a division.
const (
	awkOperator  = iota // an operand may follow: "/" starts a regex
	awkOperand          // an operator follows: "/" divides
	awkAmbiguous        // after a string, regex or getline: refuse "/"
)

// awkProgramReason reads an awk program and refuses what can run commands
// (system, pipes, @-calls) or write files (print > file).
func awkProgramReason(prog string) string {
	if awkSystem.MatchString(prog) {
		return "awk system() runs commands"
	}
	if awkIndirect.MatchString(prog) {
		return "awk @-directives and indirect calls are not allowed"
	}
	p := &scanner{s: prog}
	prev := awkOperator
	var parens []bool // per open "(": is it an if/while/for condition?
	cond := false     // the last word was if, while, for or switch
	inPrint, depth := false, 0
	endPrint := func() { inPrint = false }
	for !p.eof() {
		ch := p.peek()
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			p.i++
			continue
		case ch == '\\' && p.i+1 < len(p.s) && p.s[p.i+1] == '\n':
			p.i += 2
			continue
		case ch == '\n' || ch == ';' || ch == '{' || ch == '}':
			endPrint()
			prev = awkOperator
			p.i++
		case ch == '#':
			return "awk comments are not supported; remove them"
		case ch == '"':
			p.i++
			if !p.plain('"') {
				return "awk string " + unsure
			}
			prev = awkAmbiguous
		case ch == '/':
			switch prev {
			case awkOperand:
				p.i++
				prev = awkOperator
			case awkAmbiguous:
				return "awk program is ambiguous around /; " + unsure
			default:
				p.i++
				start := p.i
				if why := p.regex('/'); why != "" {
					return "awk regular expression " + advise(why, awkAdvice)
				}
				if strings.Contains(p.s[start:p.i], `"`) {
					return "awk regular expression " + unsure
				}
				prev = awkAmbiguous
			}
		case isWordByte(ch) && !(ch >= '0' && ch <= '9'):
			start := p.i
			for !p.eof() && isWordByte(p.peek()) {
				p.i++
			}
			word := p.s[start:p.i]
			cond = false
			switch word {
			case "print", "printf":
				inPrint, depth = true, 0
				prev = awkOperator
			case "return", "case", "else", "do", "in":
				prev = awkOperator
			case "if", "while", "for", "switch":
				cond = true
				prev = awkOperator
			case "getline":
				prev = awkAmbiguous
			default:
				prev = awkOperand
			}
			continue
		case ch >= '0' && ch <= '9' || ch == '.':
			for !p.eof() && (isWordByte(p.peek()) || p.peek() == '.') {
				p.i++
			}
			prev = awkOperand
		case ch == '(':
			parens = append(parens, cond)
			if inPrint {
				depth++
			}
			prev = awkOperator
			p.i++
		case ch == ')':
			wasCond := false
			if n := len(parens); n > 0 {
				wasCond = parens[n-1]
				parens = parens[:n-1]
			}
			if inPrint {
				depth--
				if depth < 0 {
					endPrint()
				}
			}
			prev = awkOperand
			if wasCond {
				prev = awkOperator // a statement, maybe /regex/, follows
			}
			p.i++
		case ch == '[':
			if inPrint {
				depth++
			}
			prev = awkOperator
			p.i++
		case ch == ']':
			if inPrint {
				depth--
			}
			prev = awkOperand
			p.i++
		case ch == '|':
			if p.i+1 < len(p.s) && p.s[p.i+1] == '|' {
				p.i += 2
				prev = awkOperator
				continue
			}
			return "awk pipes (|) run commands"
		case ch == '>':
			if inPrint && depth == 0 {
				return "awk print > writes to a file"
			}
			p.i++
			prev = awkOperator
		case (ch == '+' || ch == '-') && p.i+1 < len(p.s) && p.s[p.i+1] == ch:
			p.i += 2
			prev = awkOperand // x++ / 2 divides
		default:
			p.i++
			prev = awkOperator
		}
		cond = false
	}
	return ""
}
