package tool

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// globPattern is a compiled doublestar pattern: `*` and `?` match within
// one path segment, `**` as a whole segment matches any number of
// segments (none included), `[...]` is a character class (`[!...]` or
// `[^...]` negated), `{a,b}` are alternatives (nesting allowed) and `\`
// escapes. Paths are slash-separated and relative.
type globPattern struct {
	alts []globAlt
}

type globAlt struct {
	segs     []string
	basename bool // the alternative has no '/': match the base name only
	// Compiled segments: m[i] matches segs[i]. lastOnly: the alternative
	// is "**/X", which matches exactly when X matches the base name.
	m        []segMatcher
	lastOnly bool
}

// segMatcher matches one path segment against one pattern segment,
// without path.Match for the common shapes: literal, *, *suffix,
// prefix*, prefix*suffix.
type segMatcher struct {
	kind           segKind
	prefix, suffix string
	pat            string
}

type segKind uint8

const (
	segGeneric segKind = iota // path.Match
	segLiteral                // == prefix
	segStar                   // prefix*suffix (either may be empty)
	segAnyDirs                // **
)

func compileSeg(s string) segMatcher {
	if s == "**" {
		return segMatcher{kind: segAnyDirs}
	}
	if strings.ContainsAny(s, "?[\\") {
		return segMatcher{kind: segGeneric, pat: s}
	}
	switch strings.Count(s, "*") {
	case 0:
		return segMatcher{kind: segLiteral, prefix: s}
	case 1:
		pre, suf, _ := strings.Cut(s, "*")
		return segMatcher{kind: segStar, prefix: pre, suffix: suf}
	}
	return segMatcher{kind: segGeneric, pat: s}
}

func (m *segMatcher) match(seg string) bool {
	switch m.kind {
	case segLiteral:
		return seg == m.prefix
	case segStar:
		return len(seg) >= len(m.prefix)+len(m.suffix) && strings.HasPrefix(seg, m.prefix) && strings.HasSuffix(seg, m.suffix)
	case segAnyDirs:
		return true
	}
	ok, _ := path.Match(m.pat, seg)
	return ok
}

const maxBraceAlternatives = 1024

// compileGlob compiles pattern. With basenameIfNoSlash, an alternative
// without '/' matches a file's base name at any depth (as in ripgrep's
// --glob and .gitignore); otherwise it matches the whole relative path.
func compileGlob(pattern string, basenameIfNoSlash bool) (*globPattern, error) {
	pattern = normalizeGlob(pattern)
	if pattern == "" {
		return nil, errors.New("empty pattern")
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	g := &globPattern{}
	for _, alt := range alts {
		alt = normalizeGlob(alt)
		var segs []string
		for _, s := range strings.Split(alt, "/") {
			switch {
			case s == "" || s == ".":
				continue
			case s == "**":
				if len(segs) > 0 && segs[len(segs)-1] == "**" {
					continue
				}
			default:
				s = negateClasses(s)
				if _, err := path.Match(s, ""); err != nil {
					return nil, fmt.Errorf("bad pattern %q: %v", pattern, err)
				}
			}
			segs = append(segs, s)
		}
		if len(segs) == 0 {
			continue
		}
		a := globAlt{segs: segs, basename: basenameIfNoSlash && !strings.Contains(alt, "/")}
		for _, s := range segs {
			a.m = append(a.m, compileSeg(s))
		}
		a.lastOnly = len(segs) == 2 && segs[0] == "**" && segs[1] != "**"
		g.alts = append(g.alts, a)
	}
	if len(g.alts) == 0 {
		return nil, fmt.Errorf("pattern %q matches nothing", pattern)
	}
	return g, nil
}

func normalizeGlob(p string) string {
	p = strings.TrimSpace(p)
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}

// Match reports whether the slash-separated relative path rel matches.
func (g *globPattern) Match(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	for i := range g.alts {
		a := &g.alts[i]
		if a.basename {
			if a.segs[0] == "**" || a.m[0].match(base) {
				return true
			}
			continue
		}
		if a.lastOnly {
			if a.m[1].match(base) {
				return true
			}
			continue
		}
		if matchSegments(a.m, rel) {
			return true
		}
	}
	return false
}

// matchSegments matches the pattern segments p against the path s, whose
// segments are separated by '/' ("" when none are left).
func matchSegments(p []segMatcher, s string) bool {
	for len(p) > 0 {
		if p[0].kind == segAnyDirs {
			p = p[1:]
			if len(p) == 0 {
				return true
			}
			for s != "" {
				if matchSegments(p, s) {
					return true
				}
				i := strings.IndexByte(s, '/')
				if i < 0 {
					return false
				}
				s = s[i+1:]
			}
			return false
		}
		if s == "" {
			return false
		}
		seg, rest := s, ""
		if i := strings.IndexByte(s, '/'); i >= 0 {
			seg, rest = s[:i], s[i+1:]
		}
		if !p[0].match(seg) {
			return false
		}
		p, s = p[1:], rest
	}
	return s == ""
}

// negateClasses turns the shell's negated class "[!...]" into path.Match's
// "[^...]".
func negateClasses(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(c)
		if c == '[' && i+1 < len(s) && s[i+1] == '!' {
			b.WriteByte('^')
			i++
		}
	}
	return b.String()
}

// expandBraces expands {a,b} alternatives, nested ones included. An
// unmatched brace is literal.
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	var commas []int
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
				commas = commas[:0]
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			prefix, suffix := p[:open], p[i+1:]
			var parts []string
			last := open + 1
			for _, c := range commas {
				parts = append(parts, p[last:c])
				last = c + 1
			}
			parts = append(parts, p[last:i])
			var out []string
			for _, part := range parts {
				sub, err := expandBraces(prefix + part + suffix)
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
				if len(out) > maxBraceAlternatives {
					return nil, fmt.Errorf("pattern %q has too many brace alternatives", p)
				}
			}
			return out, nil
		}
	}
	return []string{p}, nil
}

// splitGlobList splits a grep glob filter holding several patterns,
// separated by whitespace or by commas outside braces.
func splitGlobList(s string) []string {
	var out []string
	depth := 0
	start := 0
	flush := func(end int) {
		if f := strings.TrimSpace(s[start:end]); f != "" {
			out = append(out, f)
		}
		start = end + 1
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '{':
			depth++
		case c == '}':
			if depth > 0 {
				depth--
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n'):
			flush(i)
		}
	}
	if start <= len(s) {
		flush(len(s))
	}
	return out
}

// hasGlobMeta reports whether a pattern segment has glob syntax.
func hasGlobMeta(s string) bool {
	return strings.ContainsAny(s, "*?[{\\")
}

// splitLiteralPrefix splits the leading directories without glob syntax
// off a slash pattern: "src/**/*.go" gives "src" and "**/*.go". The last
// segment always stays in the pattern.
func splitLiteralPrefix(p string) (prefix, rest string) {
	segs := strings.Split(p, "/")
	n := 0
	for n < len(segs)-1 && !hasGlobMeta(segs[n]) {
		n++
	}
	prefix = strings.Join(segs[:n], "/")
	if prefix == "" && n > 0 {
		prefix = "/"
	}
	return prefix, strings.Join(segs[n:], "/")
}

// PathGlob is a compiled path glob: ** for any depth, and a pattern without
// '/' matches a file's base name at any depth (as in .gitignore).
type PathGlob struct{ g *globPattern }

// CompileGlob compiles pattern for PathGlob.Match.
func CompileGlob(pattern string) (PathGlob, error) {
	g, err := compileGlob(pattern, true)
	return PathGlob{g}, err
}

// Match reports whether the slash-separated relative path rel matches.
func (g PathGlob) Match(rel string) bool { return g.g != nil && g.g.Match(rel) }
