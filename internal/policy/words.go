package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a simple command, analysed without running anything.
type arg struct {
	text   string // the word as written, for messages
	lit    string // the value the command receives, when static
	static bool   // lit is exactly what the command receives
	prefix string // static text before the first expansion
	// split: an unquoted expansion may split into several arbitrary words.
	split bool
	// multi: the word may become other than exactly one argument (split,
	// glob or brace expansion).
	multi bool
	// untrusted: the expansion depends on data the command line controls
	// or reads: command substitutions, variables it sets, file names.
	untrusted bool
}

// litArg is a static argument such as the value part of --opt=value.
func litArg(s string) arg {
	return arg{text: s, lit: s, static: true, prefix: s}
}

// dashSafe reports that the word cannot expand to anything that starts
// with "-", so a command cannot take it for an option.
func (a arg) dashSafe() bool {
	if a.static {
		return !strings.HasPrefix(a.lit, "-")
	}
	if !a.untrusted {
		return true
	}
	return !a.split && a.prefix != "" && !strings.HasPrefix(a.prefix, "-")
}

// analyse works out what word w expands to, as far as that is static.
func (c *classifier) analyse(w *syntax.Word) arg {
	a := arg{text: c.text(w), static: true}
	var val strings.Builder
	dynamic := false // an expansion was seen; prefix is complete
	emit := func(s string) {
		val.WriteString(s)
		if !dynamic {
			a.prefix += s
		}
	}
	expand := func(untrusted, split bool) {
		a.static = false
		dynamic = true
		a.untrusted = a.untrusted || untrusted
		if split {
			a.split, a.multi = true, true
		}
	}
	brace := hasBraceExpansion(w)
	if brace {
		a.static, a.multi, a.untrusted = false, true, true
	}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				// Tilde expansion: a home directory, from the environment.
				expand(false, false)
			}
			s, glob := unescapeLit(v, c.closesLater(w, i))
			if glob >= 0 {
				emit(s[:glob])
				expand(true, false)
				a.multi = true
				val.WriteString(s[glob:])
				continue
			}
			emit(s)
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				// $'...' with escapes: not decoded here.
				expand(true, false)
				continue
			}
			emit(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					emit(unescapeDbl(l.Value))
					continue
				}
				// "$@" and "${a[@]}" are several words even when quoted.
				expand(c.untrustedPart(q, true), isListExpansion(q))
			}
		case *syntax.ProcSubst:
			expand(false, false) // a /dev/fd path
		case *syntax.ExtGlob:
			expand(true, false)
			a.multi = true
		default:
			expand(c.untrustedPart(part, false), true)
		}
	}
	if brace {
		// Brace expansion rewrites the word from its first "{" on.
		a.prefix, _, _ = strings.Cut(a.prefix, "{")
	}
	if a.static {
		a.lit = val.String()
	}
	return a
}

// untrustedPart reports whether an expansion's value may come from
// somewhere the command line controls. The working directory is the
// name of an existing directory: an absolute path, harmless when quoted.
func (c *classifier) untrustedPart(part syntax.WordPart, quoted bool) bool {
	untrusted := false
	syntax.Walk(part, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ArithmExp:
			untrusted = true
		case *syntax.ParamExp:
			if n.Param == nil || n.Excl || c.isTainted(n.Param.Value) {
				untrusted = true
			}
			if n.Param != nil && !quoted && (n.Param.Value == "PWD" || n.Param.Value == "OLDPWD") {
				untrusted = true
			}
		}
		return !untrusted
	})
	return untrusted
}

// closesLater reports whether a "]" follows part i of w, which would let
// a "[" in part i start a glob bracket.
func (c *classifier) closesLater(w *syntax.Word, i int) bool {
	if i+1 >= len(w.Parts) {
		return false
	}
	return strings.Contains(c.text(&syntax.Word{Parts: w.Parts[i+1:]}), "]")
}

// isListExpansion reports whether part expands to a list of words: $@,
// ${@...} or an array's ${a[@]...}.
func isListExpansion(part syntax.WordPart) bool {
	p, ok := part.(*syntax.ParamExp)
	if !ok || p.Param == nil {
		return false
	}
	if p.Param.Value == "@" {
		return true
	}
	w, ok := p.Index.(*syntax.Word)
	return ok && w.Lit() == "@"
}

// unescapeLit removes the backslashes of an unquoted literal. glob is the
// index in the result of the first unescaped glob character, or -1. A "["
// is a glob character only when a "]" follows it, in v or (closeLater) in
// a later part of the word.
func unescapeLit(v string, closeLater bool) (s string, glob int) {
	var b strings.Builder
	glob = -1
	for i := 0; i < len(v); i++ {
		ch := v[i]
		if ch == '\\' && i+1 < len(v) {
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
			continue
		}
		if glob < 0 && (ch == '*' || ch == '?' || ch == '[' && (closeLater || strings.Contains(v[i+1:], "]"))) {
			glob = b.Len()
		}
		b.WriteByte(ch)
	}
	return b.String(), glob
}

// unescapeDbl removes the backslashes that are special inside double quotes.
func unescapeDbl(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// hasBraceExpansion reports whether bash would brace-expand w: an
// unquoted, unescaped "{" followed by "," or ".." and a closing "}".
func hasBraceExpansion(w *syntax.Word) bool {
	var b strings.Builder
	for _, part := range w.Parts {
		l, ok := part.(*syntax.Lit)
		if !ok {
			b.WriteByte('x') // quoted or expanded text: not a brace character
			continue
		}
		for i := 0; i < len(l.Value); i++ {
			if l.Value[i] == '\\' && i+1 < len(l.Value) {
				i++
				b.WriteByte('x')
				continue
			}
			b.WriteByte(l.Value[i])
		}
	}
	s := b.String()
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return false
	}
	rest := s[open+1:]
	end := strings.LastIndexByte(rest, '}')
	if end < 0 {
		return false
	}
	inner := rest[:end]
	return strings.Contains(inner, ",") || strings.Contains(inner, "..")
}

// isIdent reports whether s is a shell variable name.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9' {
			continue
		}
		return false
	}
	return true
}

// isInt reports whether s is a decimal integer, optionally signed.
func isInt(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
