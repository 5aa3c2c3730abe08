package verify

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// jsFile is what the classifier reads from a JavaScript or TypeScript file.
type jsFile struct {
	specs    []string // the specifiers it loads, literally
	dynamic  bool     // require(x) or import(x) with a computed x
	marker   string
	helper   string
	weak     bool
	throwsAE bool
	main     bool     // a #! line
	exports  []string // the public assertion helpers it defines
}

var (
	jsAssertAE = regexp.MustCompile(`\bnew\s+(?:[\w$]+\.)*AssertionError\b|\bextends\s+(?:[\w$]+\.)*AssertionError\b`)
)

// parseJS reads a file's loads and markers, with strings, comments and
// regular expressions skipped. It scans for words rather than matching
// regular expressions: a tree's node_modules/ is large.
func parseJS(src string) jsFile {
	f := jsFile{main: strings.HasPrefix(src, "#!")}
	code, strs, dyn := lexJS(src)
	skip := func(i int) int {
		for i < len(code) && (code[i] == ' ' || code[i] == '\t' || code[i] == '\n' || code[i] == '\r') {
			i++
		}
		return i
	}
	at := func(i int, c byte) bool { return i < len(code) && code[i] == c }
	// lit reads a literal argument at i: the string, and ok false when the
	// argument is computed.
	lit := func(i int) (string, bool) {
		n, ok := jsPlaceholder(code[i:])
		if !ok {
			return "", false
		}
		k, err := strconv.Atoi(n)
		if a := skip(i + len(n) + 3); err != nil || k >= len(strs) || dyn[k] || !at(a, ')') && !at(a, ',') {
			return "", false
		}
		return strs[k], true
	}
	load := func(i int) {
		if s, ok := lit(i); ok {
			f.specs = append(f.specs, s)
		} else {
			f.dynamic = true
		}
	}
	for _, i := range jsWords(code, "require") {
		j := skip(i + len("require"))
		switch {
		case at(j, '.'): // require.resolve("…")
			k := skip(j + 1)
			if strings.HasPrefix(code[k:], "resolve") && at(skip(k+len("resolve")), '(') {
				if s, ok := lit(skip(skip(k+len("resolve")) + 1)); ok {
					f.specs = append(f.specs, s)
				}
			}
		case at(j, '(') && !strings.HasSuffix(strings.TrimRight(code[:i], " \t"), "function"):
			load(skip(j + 1))
		}
	}
	for _, i := range jsWords(code, "import") {
		j := skip(i + len("import"))
		if at(j, '(') {
			load(skip(j + 1))
		} else if n, ok := jsPlaceholder(code[j:]); ok {
			if k, err := strconv.Atoi(n); err == nil && k < len(strs) && !dyn[k] {
				f.specs = append(f.specs, strs[k]) // import "./side-effect"
			}
		}
	}
	for _, i := range jsWords(code, "from") {
		if n, ok := jsPlaceholder(code[skip(i+len("from")):]); ok {
			if k, err := strconv.Atoi(n); err == nil && k < len(strs) && !dyn[k] {
				f.specs = append(f.specs, strs[k])
			}
		}
	}
	usesRunner := false
	for _, obj := range []string{"jest", "vi"} {
		for _, i := range jsWords(code, obj) {
			j := skip(i + len(obj))
			if !at(j, '.') {
				continue
			}
			j = skip(j + 1)
			name := jsIdent(code[j:])
			switch name {
			case "mock", "doMock", "unmock", "setMock", "requireActual", "requireMock", "importActual", "importMock":
				if k := skip(j + len(name)); at(k, '(') {
					if s, ok := lit(skip(k + 1)); ok {
						f.specs = append(f.specs, s)
					}
				}
			}
			switch name {
			case "fn", "spyOn", "mock":
				usesRunner = true
			}
		}
	}
	for _, i := range jsWords(code, "expect") {
		j := skip(i + len("expect"))
		if end := jsMatching(code, j); end > 0 && at(skip(end+1), '.') {
			k := skip(skip(end+1) + 1)
			if name := jsIdent(code[k:]); strings.HasPrefix(name, "to") || name == "not" || name == "resolves" || name == "rejects" {
				usesRunner = true
			}
		}
	}
	for _, s := range f.specs {
		if fw := jsFramework(s); fw != "" && !strings.HasPrefix(s, ".") {
			f.marker = "imports " + fw
			break
		}
	}
	if f.marker == "" && usesRunner {
		f.marker = "uses the test runner's expect or mocks"
	}
	f.helper, f.weak, f.exports = jsHelper(code, skip)
	f.throwsAE = strings.Contains(code, "AssertionError") && jsAssertAE.MatchString(code)
	return f
}

// helperMarker says what in f marks an assertion helper that code may
// share with the tests ("defines assertEqual", "throws AssertionError"),
// or "". A checker (check*, verify*) counts only when a test that loads
// it calls it (uses): production code defines checkers.
func (f *jsFile) helperMarker(uses func(string) bool) string {
	for _, n := range f.exports {
		if helperFuncKind(n) == "strong" {
			return "defines " + n
		}
	}
	if f.throwsAE {
		return "throws AssertionError"
	}
	for _, n := range f.exports {
		if uses(n) {
			return "defines " + n
		}
	}
	return ""
}

// jsHelper finds an assertion helper code defines (function assertX,
// assertX = (…) =>, assertX: function, a method assertX(…) {): "defines
// assertX", whether it is only a checker, and the public names of all
// it defines.
func jsHelper(code string, skip func(int) int) (string, bool, []string) {
	lower := strings.ToLower(code)
	found, weak := "", false
	var names []string
	for _, pre := range []string{"assert", "expect", "should", "check", "verify"} {
		for off := 0; ; {
			i := strings.Index(lower[off:], pre)
			if i < 0 {
				break
			}
			i += off
			off = i + len(pre)
			for i > 0 && (code[i-1] == '_' || code[i-1] == '$') {
				i--
			}
			if i > 0 && isIdentByte(code[i-1]) {
				continue
			}
			name := jsIdent(code[i:])
			kind := helperFuncKind(name)
			if kind == "" || slices.Contains(names, name) {
				continue
			}
			j := skip(i + len(name))
			def := false
			switch {
			case strings.HasSuffix(strings.TrimRight(code[:i], " \t*"), "function"):
				def = true
			case j < len(code) && (code[j] == '=' || code[j] == ':') && !strings.HasPrefix(code[j:], "==") && !strings.HasPrefix(code[j:], "=>"):
				k := skip(j + 1)
				if strings.HasPrefix(code[k:], "async") {
					k = skip(k + len("async"))
				}
				switch {
				case strings.HasPrefix(code[k:], "function"):
					def = true
				case k < len(code) && code[k] == '(':
					if end := jsMatching(code, k); end > 0 {
						def = strings.HasPrefix(code[skip(end+1):], "=>")
					}
				default:
					id := jsIdent(code[k:])
					def = id != "" && strings.HasPrefix(code[skip(k+len(id)):], "=>")
				}
			case j < len(code) && code[j] == '(':
				line := code[strings.LastIndexByte(code[:i], '\n')+1 : i]
				line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "static")), "async"))
				if end := jsMatching(code, j); end > 0 && line == "" {
					def = strings.HasPrefix(code[skip(end+1):], "{")
				}
			}
			if !def {
				continue
			}
			if found == "" || weak && kind == "strong" {
				found, weak = "defines "+name, kind == "weak"
			}
			if name[0] != '_' {
				names = append(names, name)
			}
		}
	}
	return found, weak, names
}

// jsWords returns where word stands as a whole word in code, not as a
// property (x.word).
func jsWords(code, word string) []int {
	var out []int
	for off := 0; ; {
		i := strings.Index(code[off:], word)
		if i < 0 {
			return out
		}
		i += off
		off = i + len(word)
		if i > 0 && (isIdentByte(code[i-1]) || code[i-1] == '.') || off < len(code) && isIdentByte(code[off]) {
			continue
		}
		out = append(out, i)
	}
}

// jsIdent returns the identifier at the start of s.
func jsIdent(s string) string {
	n := 0
	for n < len(s) && (isIdentByte(s[n]) || s[n] == '$') {
		n++
	}
	return s[:n]
}

// jsMatching returns the index of the parenthesis that closes the one at
// i (within a few hundred bytes), or -1.
func jsMatching(code string, i int) int {
	if i >= len(code) || code[i] != '(' {
		return -1
	}
	depth := 0
	for j := i; j < len(code) && j < i+400; j++ {
		switch code[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// jsPlaceholder reads a `"#N"` placeholder at the start of s.
func jsPlaceholder(s string) (string, bool) {
	if !strings.HasPrefix(s, `"#`) {
		return "", false
	}
	end := strings.IndexByte(s[2:], '"')
	if end < 0 {
		return "", false
	}
	return s[2 : 2+end], true
}

// lexJS returns src with every string literal replaced by "#N" (N indexes
// strs), comments removed and regular expression literals replaced by
// /r/. dyn[N] is true for a template literal with substitutions.
func lexJS(src string) (code string, strs []string, dyn []bool) {
	var b strings.Builder
	last, word := byte(0), "" // the last significant byte, and the last word
	prevIdent := false
	regexOK := func() bool {
		switch {
		case last == 0 || strings.IndexByte("(,=:[!&|?{};+-*%<>~^", last) >= 0:
			return true
		case isIdentByte(last):
			switch word {
			case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await":
				return true
			}
		}
		return false
	}
	emit := func(s string, d bool) {
		b.WriteString(`"#` + strconv.Itoa(len(strs)) + `"`)
		strs = append(strs, s)
		dyn = append(dyn, d)
		last, word, prevIdent = '"', "", false
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			prevIdent = false
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			prevIdent = false
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				i = len(src)
			} else {
				i += end + 4
			}
			b.WriteByte(' ')
		case c == '\'' || c == '"':
			var v strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != c && src[j] != '\n'; j++ {
				if src[j] == '\\' && j+1 < len(src) {
					j++
				}
				v.WriteByte(src[j])
			}
			emit(v.String(), false)
			i = j + 1
		case c == '`':
			var v strings.Builder
			d := false
			j := i + 1
			for ; j < len(src) && src[j] != '`'; j++ {
				switch {
				case src[j] == '\\' && j+1 < len(src):
					j++
					v.WriteByte(src[j])
				case src[j] == '$' && j+1 < len(src) && src[j+1] == '{':
					d = true
					depth := 0
					for j++; j < len(src); j++ {
						if src[j] == '{' {
							depth++
						} else if src[j] == '}' {
							if depth--; depth == 0 {
								break
							}
						}
					}
				default:
					v.WriteByte(src[j])
				}
			}
			emit(v.String(), d)
			i = j + 1
		case c == '/' && regexOK():
			j, class := i+1, false
			for ; j < len(src) && src[j] != '\n'; j++ {
				if src[j] == '\\' {
					j++
				} else if src[j] == '[' {
					class = true
				} else if src[j] == ']' {
					class = false
				} else if src[j] == '/' && !class {
					break
				}
			}
			if j >= len(src) || src[j] != '/' {
				b.WriteByte(c) // not a regular expression after all
				last, word, prevIdent = c, "", false
				i++
				continue
			}
			for j++; j < len(src) && isIdentByte(src[j]); j++ {
			}
			b.WriteString("/r/")
			// A division may follow a regular expression.
			last, word, prevIdent = ')', "", false
			i = j
		default:
			b.WriteByte(c)
			if isIdentByte(c) {
				if !prevIdent {
					word = ""
				}
				word += string(c)
			}
			prevIdent = isIdentByte(c)
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				last = c
			}
			i++
		}
	}
	return b.String(), strs, dyn
}

// parseJSStrings returns the string literals of a JavaScript file.
func parseJSStrings(src string) []string {
	_, strs, dyn := lexJS(src)
	var out []string
	for i, s := range strs {
		if !dyn[i] {
			out = append(out, s)
		}
	}
	return out
}
