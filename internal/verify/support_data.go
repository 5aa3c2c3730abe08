package verify

import (
	"go/scanner"
	"go/token"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Test data the tests read: the files a Go test's //go:embed patterns
// name, and the files the string literals of the tests name (a test that
// opens cases/add.json, or joins "cases" and "add.json"). A model can
// rewrite the expected values they hold without touching a test. They
// are support unless the project's code names them too (a literal, a
// //go:embed of the code) or they are source code, which the rules of
// its language decide.

// dependencyDirs hold other projects' files.
var dependencyDirs = []string{"vendor", "node_modules", "site-packages", ".venv", "venv", ".git", "__pycache__"}

// otherSourceExts are source files of languages the classifier has no
// rules for (and those Go packages build): a test that reads one may run
// it as the code under test.
var otherSourceExts = map[string]bool{
	".c": true, ".h": true, ".s": true, ".S": true, ".sx": true, ".cc": true, ".cpp": true, ".cxx": true,
	".hh": true, ".hpp": true, ".hxx": true, ".m": true, ".f": true, ".F": true, ".for": true, ".f90": true,
	".swig": true, ".swigcxx": true, ".syso": true, ".rs": true, ".rb": true, ".java": true, ".kt": true,
	".kts": true, ".scala": true, ".php": true, ".pl": true, ".pm": true, ".lua": true, ".swift": true,
	".cs": true, ".fs": true, ".ex": true, ".exs": true, ".erl": true, ".hs": true, ".ml": true, ".clj": true,
	".dart": true, ".zig": true, ".nim": true, ".jl": true, ".r": true, ".R": true, ".groovy": true,
	".gradle": true, ".ps1": true, ".bat": true, ".cmd": true, ".fish": true, ".tcl": true, ".awk": true,
}

// isSourceFile reports whether p is source code or a file that wires it:
// the classifier reads it (SupportReads), or it is another language's
// source.
func isSourceFile(p string) bool {
	return SupportReads(p) || otherSourceExts[path.Ext(p)]
}

// testReadSupport marks the test data: the files Go tests embed, then the
// files the literals of the tests and of decided support name.
func (t *supportTree) testReadSupport() {
	var data []string
	for _, p := range t.sorted {
		if t.isTestData(p) {
			data = append(data, p)
		}
	}
	if len(data) == 0 {
		return
	}
	type read struct{ file, why string }
	var reads []read
	for _, f := range sortedKeys(t.testEmbeds) {
		reads = append(reads, read{f, "embedded by " + t.testEmbeds[f] + " (Go test data)"})
	}
	may := t.nameFilter(data, false)
	for _, p := range t.sorted {
		if v, ok := t.verdict[p]; !t.literalSource(p) || !IsTestPath(p) && (!ok || v.Role != RoleSupport) || !may.in(t.content(p)) {
			continue
		}
		for _, f := range t.literalNames(p, t.fileLiterals(p), false) {
			reads = append(reads, read{f, "read by " + p + " (test data)"})
		}
	}
	var cands []string
	for _, r := range reads {
		if t.isTestData(r.file) {
			cands = append(cands, r.file)
		}
	}
	if len(cands) == 0 {
		return
	}
	named := t.codeNames(t.nameFilter(cands, true))
	for _, r := range reads {
		if t.isTestData(r.file) && !named[r.file] {
			t.support(r.file, r.why)
		}
	}
}

// nameFilter tells the sources that may name one of a set of files: those
// with a word that is one's name or its extension, or for the tests' (a
// directory and a name: "golden", "add") its name without the extension,
// or for the code's (a directory names the files under it) the name of a
// directory above it that holds no source code. Reading a source's
// literals costs a scan of its tokens; this costs less.
type nameFilter map[string]bool

func (t *supportTree) nameFilter(files []string, loose bool) nameFilter {
	f := nameFilter{}
	for _, p := range files {
		base := path.Base(p)
		ext := path.Ext(base)
		f[base] = true
		if ext != "" {
			f[ext] = true
		}
		if stem := strings.TrimSuffix(base, ext); len(stem) >= 3 && !loose {
			f[stem] = true
		}
		for d := pathDir(p); d != "" && loose; d = pathDir(d) {
			if !t.holdsSource(d, t.under(d)) {
				f[path.Base(d)] = true
			}
		}
	}
	return f
}

// in reports whether src has a word of the filter. Words are runs of
// letters, digits and _ . -; their extensions count too.
func (f nameFilter) in(src string) bool {
	for i := 0; i < len(src); {
		j := i
		for j < len(src) && (isIdentByte(src[j]) || src[j] == '.' || src[j] == '-') {
			j++
		}
		if j > i {
			if w := src[i:j]; f[w] || f[path.Ext(w)] {
				return true
			}
		}
		i = j + 1
	}
	return false
}

// isTestData reports whether p may be test data: not a test, not code a
// rule decided, not source code, not a dependency's. An extensionless
// file at the root may be a program a test runs (./calc); one in a script
// directory is source (SupportReads).
func (t *supportTree) isTestData(p string) bool {
	if IsTestPath(p) || t.code[p] || t.codeEmbeds[p] || isSourceFile(p) || hasComponent(p, dependencyDirs...) {
		return false
	}
	return path.Ext(path.Base(p)) != "" || pathDir(p) != ""
}

// codeNames returns the files the project's code names: what Go code
// embeds, and what the literals of its Go, Python and JavaScript files
// name (everything but tests, decided support and dependencies; of
// those, the ones may passes). It reads loosely: a directory names the
// files under it, a glob what it matches.
func (t *supportTree) codeNames(may nameFilter) map[string]bool {
	out := map[string]bool{}
	for f := range t.codeEmbeds {
		out[f] = true
	}
	for _, p := range t.sorted {
		if !t.literalSource(p) || IsTestPath(p) || hasComponent(p, dependencyDirs...) || !may.in(t.content(p)) {
			continue
		}
		if v, ok := t.verdict[p]; ok && v.Role == RoleSupport {
			continue
		}
		for _, f := range t.literalNames(p, t.fileLiterals(p), true) {
			out[f] = true
		}
	}
	return out
}

// literalSource reports whether the classifier reads p's string
// literals: Go, Python, JavaScript and TypeScript.
func (t *supportTree) literalSource(p string) bool {
	switch {
	case strings.HasSuffix(p, ".go"), strings.HasSuffix(p, ".py"), isJSFile(p):
		return len(t.in.Files[p]) > 0
	}
	return false
}

// fileLiterals returns the string literals of a source file, read by its
// language's lexer.
func (t *supportTree) fileLiterals(p string) []string {
	src := t.content(p)
	switch {
	case strings.HasSuffix(p, ".go"):
		return goLiterals(src)
	case strings.HasSuffix(p, ".py"):
		_, strs := lexPython(src)
		out := make([]string, len(strs))
		for i, s := range strs {
			out[i] = s.text
		}
		return out
	}
	return parseJSStrings(src)
}

// goLiterals returns the string literals of Go source, and the constant
// concatenations of them ("golden/" + "add.txt"); import paths and
// struct tags are not read. It reads go/scanner's tokens: a parse costs
// more, and a tree holds many Go files.
func goLiterals(src string) []string {
	var sc scanner.Scanner
	sc.Init(token.NewFileSet().AddFile("", -1, len(src)), []byte(src), nil, 0)
	var out []string
	var prev, prev2 token.Token
	imports := 0 // 1 after import, 2 in its parentheses
	acc := ""    // the concatenation the last literal ends
	for n := 0; n < 1<<20; n++ {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		switch {
		case tok == token.IMPORT:
			imports = 1
		case imports == 1 && tok == token.LPAREN:
			imports = 2
		case imports == 1 && tok == token.SEMICOLON, imports == 2 && tok == token.RPAREN:
			imports = 0
		case imports > 0:
		case tok == token.STRING && !goTagPosition(prev):
			v, err := strconv.Unquote(lit)
			if err != nil {
				break
			}
			out = append(out, v)
			if prev == token.ADD && prev2 == token.STRING && acc != "" {
				acc += v
				out = append(out, acc)
			} else {
				acc = v
			}
		}
		if tok != token.STRING && tok != token.ADD {
			acc = ""
		}
		prev, prev2 = tok, prev
	}
	return out
}

// goTagPosition reports whether a string after tok is a struct tag (or
// an import path): in an expression, a string follows an operator, a
// keyword or an opening bracket, never a name or a closing bracket.
func goTagPosition(tok token.Token) bool {
	switch tok {
	case token.IDENT, token.RBRACK, token.RPAREN, token.RBRACE, token.STRING:
		return true
	}
	return false
}

// pathLiteral reports whether a literal may be a relative path: no
// scheme, no absolute path, no template or format; globs only when
// loose.
func pathLiteral(s string, loose bool) bool {
	if s == "" || len(s) > 300 || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") ||
		strings.ContainsAny(s, "\x00\n\r\t\\<>|$%{}:\"'`") {
		return false
	}
	return loose || !strings.ContainsAny(s, "*?[")
}

// literalBases are the directories a file's relative paths are read
// from: its own, the repository root, and its project's (the nearest
// directory above it with a go.mod, package.json, pyproject.toml, …).
func (t *supportTree) literalBases(file string) []string {
	bases := []string{pathDir(file), ""}
	for d := pathDir(file); d != ""; d = pathDir(d) {
		found := false
		for _, m := range []string{"go.mod", "package.json", "pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini"} {
			found = found || t.files[d+"/"+m]
		}
		if found {
			if d != bases[0] {
				bases = append(bases, d)
			}
			break
		}
	}
	if bases[0] == "" {
		bases = bases[1:]
	}
	return bases
}

// literalNames returns the files of the tree a file's literals name, each
// read from each of its bases (literalBases): a literal or a run of up to
// four literals joined ("..", "cases", "add.json") that names a file; a
// directory a literal names, when another literal names a file under it
// (its path below, its name, its name without the extension): that file,
// and, when the directory holds no source code, every file under it.
// Loose (for the code, whose names exclude): a directory a literal names
// names every file under it when it holds no source code (a directory of
// code is a package, whose name is a common word), and a glob what it
// matches.
func (t *supportTree) literalNames(file string, lits []string, loose bool) []string {
	var ls []string
	set := map[string]bool{}
	for _, s := range lits {
		if pathLiteral(s, loose) && len(ls) < 5000 {
			ls = append(ls, s)
			set[s] = true
		}
	}
	if len(ls) == 0 {
		return nil
	}
	bases := t.literalBases(file)
	named, dirs := map[string]bool{}, map[string]bool{}
	// A directory is one a literal names when it is not a base or above one.
	isBase := func(d string) bool {
		for _, b := range bases {
			if d == "" || d == b || strings.HasPrefix(b, d+"/") {
				return true
			}
		}
		return false
	}
	for i, s := range ls {
		if strings.ContainsAny(s, "*?[") {
			for _, b := range bases {
				t.globNames(b, s, named)
			}
			continue
		}
		for _, b := range bases {
			cur := b
			for j := i; j < len(ls) && j < i+4; j++ {
				next, ok := pathJoin(cur, ls[j])
				if !ok || strings.ContainsAny(ls[j], "*?[") {
					break
				}
				cur = next
				if t.files[cur] {
					named[cur] = true
				}
				if !t.dirs[cur] {
					break
				}
				if !isBase(cur) {
					dirs[cur] = true
				}
			}
		}
	}
	for _, d := range sortedKeys(dirs) {
		under := t.under(d)
		if len(under) > 10000 {
			continue
		}
		accepted := loose
		for _, f := range under {
			base := path.Base(f)
			stem := strings.TrimSuffix(base, path.Ext(base))
			if set[f[len(d)+1:]] || set[base] || len(stem) >= 3 && set[stem] {
				named[f], accepted = true, true
			}
		}
		if accepted && !t.holdsSource(d, under) {
			for _, f := range under {
				named[f] = true
			}
		}
	}
	return sortedKeys(named)
}

// globNames adds the files a glob read from base matches. Only a glob
// that reads as a path counts ("*.json", "golden/*"; not "*").
func (t *supportTree) globNames(base, glob string, named map[string]bool) {
	if !strings.ContainsAny(glob, "./") || strings.Trim(glob, "*?[]./") == "" {
		return
	}
	pat, ok := pathJoin(base, glob)
	if !ok || pat == "" {
		return
	}
	// The directory above the first element with a glob character.
	parts := strings.Split(pat, "/")
	fixed := 0
	for fixed < len(parts) && !strings.ContainsAny(parts[fixed], "*?[") {
		fixed++
	}
	dir := strings.Join(parts[:fixed], "/")
	if !t.dirs[dir] {
		return
	}
	for _, f := range t.under(dir) {
		if strings.Count(f, "/") != len(parts)-1 {
			continue
		}
		if ok, _ := path.Match(pat, f); ok {
			named[f] = true
		}
	}
}

// holdsSource reports whether one of the files under a directory is
// source code: a directory of code names no data by itself.
func (t *supportTree) holdsSource(d string, under []string) bool {
	for _, f := range under {
		if isSourceFile(f) {
			return true
		}
	}
	return false
}

// embedFiles returns the files of the tree the //go:embed patterns of the
// package in dir embed, as the go command reads them: a pattern is a
// path.Match pattern below dir; when it matches a directory, the files
// under it are embedded but for those whose name, or a directory's name
// below it, begins with . or _ (unless the pattern begins with all:), and
// but for those in another module (below another go.mod).
func (t *supportTree) embedFiles(dir string, patterns []string) []string {
	if len(patterns) == 0 {
		return nil
	}
	under := t.under(dir)
	var out []string
	for _, pat := range patterns {
		all := strings.HasPrefix(pat, "all:")
		pat = strings.TrimPrefix(pat, "all:")
		elems := strings.Split(pat, "/")
		if pat == "" || strings.HasPrefix(pat, "/") || strings.Contains("/"+pat+"/", "/./") || strings.Contains("/"+pat+"/", "/../") {
			continue
		}
		for _, f := range under {
			rel := f
			if dir != "" {
				rel = f[len(dir)+1:]
			}
			parts := strings.Split(rel, "/")
			if len(parts) < len(elems) {
				continue
			}
			if ok, _ := path.Match(pat, strings.Join(parts[:len(elems)], "/")); !ok {
				continue
			}
			embedded := true
			for k := len(elems); k < len(parts) && embedded; k++ {
				if !all && (strings.HasPrefix(parts[k], ".") || strings.HasPrefix(parts[k], "_")) {
					embedded = false
				}
			}
			for k := 1; k < len(parts) && embedded; k++ {
				if p, _ := pathJoin(dir, strings.Join(parts[:k], "/"), "go.mod"); t.files[p] {
					embedded = false
				}
			}
			if embedded {
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}
