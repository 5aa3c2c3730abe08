package verify

import (
	"path"
	"slices"
	"sort"
	"strings"
)

// SupportRole is what a file is to the project's tests.
//
// When a run changes the project's tests, the gate re-runs the original
// tests against the new code. A model can still weaken what those tests
// load without touching a test: an assertion helper made to check nothing,
// a lenient copy of a dependency under vendor/, a shell library test.sh
// sources. Such files are test support, and the protected re-run restores
// them with the tests.
type SupportRole int

const (
	RoleCode      SupportRole = iota // the project's code (or not loaded by tests at all)
	RoleSupport                      // decided: the tests load it and the project's code does not
	RoleUndecided                    // the tests load it and ultra cannot tell code under test from support: treated as support (fail closed)
)

// String is "code", "test support" or "undecided".
func (r SupportRole) String() string {
	switch r {
	case RoleSupport:
		return "test support"
	case RoleUndecided:
		return "undecided"
	}
	return "code"
}

// SupportInput is one tree, as the classifier reads it.
type SupportInput struct {
	// Paths is every file path of the tree (slash-separated, relative to
	// the repository root), sorted.
	Paths []string
	// Files holds the content of the paths SupportReads reports true for
	// (the caller loads exactly those; a missing entry means unreadable or
	// too large, and is read as empty).
	Files map[string][]byte
	// Commands are the test commands the gate runs (shell text, e.g.
	// "go test -json ./...", "make test", "sh test.sh", "npm test").
	Commands []string
	// DeclaredCode and DeclaredSupport are a person's declarations (path
	// globs with `**`, from the project's config): they win over every
	// rule.
	DeclaredCode, DeclaredSupport []string
	// GOOS, GOARCH for Go build constraints ("" = linux, amd64).
	GOOS, GOARCH string
}

// SupportFile is a file that is not plain code.
type SupportFile struct {
	Path string
	Role SupportRole
	Why  string // one short clause a person reads in a gate decision
	// CodeLoads: the project's code loads the file too (a support file
	// the code imports, an assertion helper both load).
	CodeLoads bool
}

// SupportReads reports whether the classifier needs the content of path:
// the sources of the languages it follows (Go, Python, JavaScript and
// TypeScript, shell), the files that wire them (go.mod, go.work,
// package.json, tsconfig.json, pyproject.toml, setup.cfg, setup.py,
// Cargo.toml, Makefiles and *.mk, test configurations), and extensionless
// files in script directories, which a test command may run.
func SupportReads(p string) bool {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	base := path.Base(p)
	switch base {
	case "go.mod", "go.work", "package.json", "pyproject.toml", "setup.cfg", "setup.py",
		"Cargo.toml", "Makefile", "makefile", "GNUmakefile", "jsconfig.json":
		return true
	}
	if strings.HasPrefix(base, "tsconfig") && strings.HasSuffix(base, ".json") {
		return true
	}
	if p == "vendor/modules.txt" || strings.HasSuffix(p, "/vendor/modules.txt") || IsTestConfig(p) {
		return true
	}
	switch path.Ext(base) {
	case ".go", ".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts",
		".sh", ".bash", ".zsh", ".ksh", ".mk", ".bats":
		return true
	case "":
		switch path.Base(path.Dir(p)) {
		case "scripts", "script", "bin", "hack", "ci", "tools", "test", "tests":
			return !strings.HasPrefix(base, ".")
		}
	}
	return false
}

// ClassifySupport returns every file of the tree whose role is RoleSupport
// or RoleUndecided (code is left out), sorted by path. Test files
// themselves (IsTestPath) are not listed: the caller protects them
// already. It is pure: it reads only in.
func ClassifySupport(in SupportInput) []SupportFile {
	t := newSupportTree(in)
	t.pyPath = t.pyIniPaths()
	sh := t.shellSupport()
	t.goSupport()
	t.pySupport(sh.py)
	t.jsSupport(sh.js, sh.configs)
	t.rustSupport()
	t.testDataSupport()
	t.testReadSupport()
	t.applyDynamic()
	t.applyDeclared()
	out := make([]SupportFile, 0, len(t.verdict))
	for _, f := range t.verdict {
		f.CodeLoads = t.code[f.Path]
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// supportTree is the tree being classified, indexed, with the verdicts
// found so far.
type supportTree struct {
	in       SupportInput
	files    map[string]bool
	dirs     map[string]bool     // every directory holding a file, and their parents ("" is the root)
	children map[string][]string // directory → its files' paths, sorted
	verdict  map[string]SupportFile
	code     map[string]bool // decided code: reached from the project's code
	dynamic  []supportDynamic
	pyPath   []string               // directories added to Python's path: pytest's pythonpath, PYTHONPATH
	aliases  map[string]*jsAliasMap // by directory, as read
	sorted   []string               // the file paths, cleaned, sorted
	helpers  map[string]bool        // code the tests load as an assertion helper: undecided, whatever code reaches it
	// testEmbeds are the files //go:embed patterns of Go test files name
	// (file → the test file), codeEmbeds those of Go code.
	testEmbeds map[string]string
	codeEmbeds map[string]bool
}

// supportDynamic is a load that cannot be resolved statically: any file
// of its languages under dir that is not decided may be what it loads.
type supportDynamic struct {
	dir  string
	exts []string
	why  string
}

// newSupportTree indexes in's paths: files, directories, children.
func newSupportTree(in SupportInput) *supportTree {
	t := &supportTree{
		in:       in,
		files:    map[string]bool{},
		dirs:     map[string]bool{"": true},
		children: map[string][]string{},
		verdict:  map[string]SupportFile{},
		code:     map[string]bool{},
		helpers:  map[string]bool{},

		testEmbeds: map[string]string{},
		codeEmbeds: map[string]bool{},
	}
	paths := slices.Clone(in.Paths)
	sort.Strings(paths)
	for _, p := range paths {
		p = strings.TrimPrefix(path.Clean("/"+p), "/")
		if p == "" || t.files[p] {
			continue
		}
		t.files[p] = true
		t.sorted = append(t.sorted, p)
		d := pathDir(p)
		t.children[d] = append(t.children[d], p)
		for ; d != "" && !t.dirs[d]; d = pathDir(d) {
			t.dirs[d] = true
		}
	}
	sort.Strings(t.sorted)
	return t
}

// content is a file's text; empty when the caller did not load it.
func (t *supportTree) content(p string) string { return string(t.in.Files[p]) }

// under returns the files under dir ("" is the whole tree), in order.
func (t *supportTree) under(dir string) []string {
	if dir == "" {
		return slices.Clone(t.sorted)
	}
	// The files under dir are a run of the sorted paths.
	pre := dir + "/"
	i := sort.SearchStrings(t.sorted, pre)
	var out []string
	for ; i < len(t.sorted) && strings.HasPrefix(t.sorted[i], pre); i++ {
		out = append(out, t.sorted[i])
	}
	return out
}

// support records a decided support file. The first reason stays.
func (t *supportTree) support(p, why string) {
	if IsTestPath(p) || !t.files[p] {
		return
	}
	if f, ok := t.verdict[p]; ok && f.Role == RoleSupport {
		return
	}
	t.verdict[p] = SupportFile{Path: p, Role: RoleSupport, Why: why}
}

// undecided records a file the tests load that ultra cannot tell from
// code under test. Code and support verdicts win over it.
func (t *supportTree) undecided(p, why string) {
	if IsTestPath(p) || !t.files[p] || t.code[p] {
		return
	}
	if _, ok := t.verdict[p]; ok {
		return
	}
	t.verdict[p] = SupportFile{Path: p, Role: RoleUndecided, Why: why}
}

// codeFile records a file the project's code loads. A support verdict
// wins over it; it wins over undecided, but for an assertion helper's.
func (t *supportTree) codeFile(p string) {
	t.code[p] = true
	if f, ok := t.verdict[p]; ok && f.Role == RoleUndecided && !t.helpers[p] {
		delete(t.verdict, p)
	}
}

// helperUndecided records code the tests also load as an assertion
// helper (it defines assert_equal, raises AssertionError, exports
// Same): production code does that too, and the tests rely on it. It is
// undecided though code reaches it: a second protected run restores it,
// and a person decides only when the original tests pass only with the
// run's version. A support verdict wins over it.
func (t *supportTree) helperUndecided(p, why string) {
	if IsTestPath(p) || !t.files[p] {
		return
	}
	if f, ok := t.verdict[p]; ok && (f.Role == RoleSupport || t.helpers[p]) {
		return
	}
	t.helpers[p] = true
	t.verdict[p] = SupportFile{Path: p, Role: RoleUndecided, Why: why}
}

// applyDynamic marks undecided every file a dynamic load could reach that
// no rule decided.
func (t *supportTree) applyDynamic() {
	for _, d := range t.dynamic {
		for _, p := range t.under(d.dir) {
			if !slices.Contains(d.exts, path.Ext(p)) || hasComponent(p, "node_modules", ".git", ".venv", "venv", "site-packages", "__pycache__", "vendor") {
				continue
			}
			t.undecided(p, d.why)
		}
	}
}

// applyDeclared applies a person's declarations, which win over every
// rule. When both lists match a file, the longer (more specific) pattern
// wins, and support wins a tie.
func (t *supportTree) applyDeclared() {
	if len(t.in.DeclaredCode) == 0 && len(t.in.DeclaredSupport) == 0 {
		return
	}
	for p := range t.files {
		if IsTestPath(p) {
			continue
		}
		sp, sn := declaredMatch(t.in.DeclaredSupport, p)
		_, cn := declaredMatch(t.in.DeclaredCode, p)
		switch {
		case sn >= 0 && sn >= cn:
			t.verdict[p] = SupportFile{Path: p, Role: RoleSupport, Why: "declared test support (" + sp + ")"}
		case cn >= 0:
			delete(t.verdict, p)
		}
	}
}

// declaredMatch returns the longest of patterns that matches p, and its
// length (-1 when none does).
func declaredMatch(patterns []string, p string) (string, int) {
	best, n := "", -1
	for _, pat := range patterns {
		if globMatch(pat, p) && len(pat) > n {
			best, n = pat, len(pat)
		}
	}
	return best, n
}

// globMatch reports whether p matches a path glob: `*`, `?` and `[…]`
// within a path element, `**` for any number of elements. A pattern that
// matches one of p's directories matches p too.
func globMatch(pattern, p string) bool {
	pattern = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(pattern, "./"), "/"), "/")
	if pattern == "" {
		return false
	}
	pat := strings.Split(pattern, "/")
	parts := strings.Split(p, "/")
	for n := len(parts); n > 0; n-- {
		if globParts(pat, parts[:n]) {
			return true
		}
	}
	return false
}

// globParts matches path elements against pattern elements.
func globParts(pat, parts []string) bool {
	if len(pat) == 0 {
		return len(parts) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if globParts(pat[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], parts[0])
	return ok && err == nil && globParts(pat[1:], parts[1:])
}

// testDataSupport marks the files under test-data directories; a
// dependency's (under vendor/ or node_modules/) are not the project's.
func (t *supportTree) testDataSupport() {
	for p := range t.files {
		if hasComponent(p, "vendor", "node_modules", "site-packages") {
			continue
		}
		for _, d := range strings.Split(pathDir(p), "/") {
			switch d {
			case "fixtures", "__fixtures__", "test-data", "test_data", "test-fixtures", "test_fixtures":
				t.support(p, "test data (under "+d+"/)")
			case "__snapshots__":
				t.support(p, "test data (snapshots)")
			}
		}
		if strings.HasSuffix(p, ".snap") {
			t.support(p, "test data (snapshots)")
		}
	}
}

// supportNames are directory and file names (lower case, without _ and -)
// that say a file exists for the tests.
var supportNames = map[string]bool{
	"testutil": true, "testutils": true, "testutility": true, "testutilities": true,
	"testhelper": true, "testhelpers": true, "testhelp": true, "testing": true,
	"testlib": true, "testlibs": true, "testkit": true, "testsupport": true,
	"testtools": true, "testtool": true, "testfixtures": true, "testcommon": true,
	"fixtures": true, "fixture": true, "mocks": true, "mock": true, "fakes": true,
	"fake": true, "stubs": true, "stub": true, "testdouble": true, "testdoubles": true,
}

// testAreaDirs hold tests that IsTestPath does not recognise; helpers in
// them are support.
var testAreaDirs = map[string]bool{"e2e": true, "integration": true, "acceptance": true, "functional": true}

// helperNames are file names that are support in a test area
// (e2e/helpers.js).
var helperNames = map[string]bool{"helper": true, "helpers": true, "utils": true, "util": true, "support": true, "common": true}

// supportName returns the support-named element of p (a file's stem or a
// directory), or "".
func supportName(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		name := part
		if i == len(parts)-1 {
			name = strings.TrimSuffix(part, path.Ext(part))
			if ext := path.Ext(name); ext == ".d" {
				name = strings.TrimSuffix(name, ext)
			}
		}
		norm := strings.NewReplacer("_", "", "-", "", ".", "").Replace(strings.ToLower(name))
		if supportNames[norm] {
			return part
		}
		for _, pre := range []string{"testutil", "testhelper", "testlib", "testkit", "testsupport"} {
			if strings.HasPrefix(norm, pre) {
				return part
			}
		}
		lower := strings.ToLower(name)
		for _, pre := range []string{"mock", "mocks", "fake", "fakes", "stub", "stubs"} {
			if rest, ok := strings.CutPrefix(name, pre); ok && rest != "" && (rest[0] == '_' || rest[0] == '-' || rest[0] >= 'A' && rest[0] <= 'Z') {
				return part
			}
			if rest, ok := strings.CutPrefix(lower, pre); ok && rest != "" && (rest[0] == '_' || rest[0] == '-') {
				return part
			}
		}
		if helperNames[lower] && i > 0 {
			for _, d := range parts[:i] {
				if testAreaDirs[d] {
					return part
				}
			}
		}
	}
	return ""
}

// helperFuncKind reports what a function name says: "strong" for an
// assertion helper (assert*, expect*, should*), "weak" for a checker
// (check*, verify*), which production code defines too; "" otherwise.
// Any case style counts: assert_equal, assertEqual, AssertEqual.
func helperFuncKind(name string) string {
	name = strings.TrimLeft(name, "_$")
	if name == "" {
		return ""
	}
	// The first word: up to an underscore, or to the next capital.
	end := len(name)
	if i := strings.IndexByte(name, '_'); i >= 0 {
		end = i
	}
	for i := 1; i < end; i++ {
		if name[i] >= 'A' && name[i] <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z' {
			end = i
			break
		}
	}
	switch strings.ToLower(name[:end]) {
	case "assert", "expect", "should":
		return "strong"
	case "check", "verify":
		return "weak"
	}
	return ""
}

// hasWord reports whether code (strings and comments removed) holds
// name as a whole word.
func hasWord(code, name string) bool {
	for off := 0; name != ""; {
		i := strings.Index(code[off:], name)
		if i < 0 {
			return false
		}
		i += off
		off = i + len(name)
		if (i == 0 || !isIdentByte(code[i-1]) && code[i-1] != '$') && (off == len(code) || !isIdentByte(code[off]) && code[off] != '$') {
			return true
		}
	}
	return false
}

// testArea is the directory tree a dynamic load in file p can reach: p's
// directory, above any test-named directories.
func testArea(p string) string {
	d := pathDir(p)
	for d != "" {
		switch path.Base(d) {
		case "tests", "test", "__tests__", "spec", "testing", "e2e", "integration":
			d = pathDir(d)
			continue
		}
		break
	}
	return d
}

// pathDir is path.Dir with "" for the root.
func pathDir(p string) string {
	d := path.Dir(p)
	if d == "." || d == "/" {
		return ""
	}
	return d
}

// pathJoin is path.Join with "" for the root, and ok false for a path
// that leaves the tree.
func pathJoin(elem ...string) (string, bool) {
	p := path.Join(elem...)
	if p == "." || p == "" {
		return "", true
	}
	if p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return "", false
	}
	return p, true
}

// hasComponent reports whether one of p's directories is named one of
// names.
func hasComponent(p string, names ...string) bool {
	for _, d := range strings.Split(pathDir(p), "/") {
		if slices.Contains(names, d) {
			return true
		}
	}
	return false
}

// reachFrom returns the units reachable from starts through edges,
// starts included.
func reachFrom(starts []string, edges func(string) []string) map[string]bool {
	seen := map[string]bool{}
	queue := slices.Clone(starts)
	for _, s := range starts {
		seen[s] = true
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range edges(u) {
			if !seen[v] {
				seen[v] = true
				queue = append(queue, v)
			}
		}
	}
	return seen
}

// testLoads returns the units the tests load: what the test units load
// (a unit's own tests excluded), and what those load through code edges.
// Each maps to the test unit that first loads it.
func testLoads(units []string, tests, code func(string) []string) map[string]string {
	by := map[string]string{}
	var queue []string
	for _, tu := range units {
		for _, v := range tests(tu) {
			if _, ok := by[v]; !ok && v != tu {
				by[v] = tu
				queue = append(queue, v)
			}
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range code(u) {
			if _, ok := by[v]; !ok {
				by[v] = by[u]
				queue = append(queue, v)
			}
		}
	}
	return by
}

// lookup turns an edge map into an edge function.
func lookup(edges map[string][]string) func(string) []string {
	return func(u string) []string { return edges[u] }
}

// sortedKeys returns m's keys in order: maps are walked in order, so
// that the output and its Why strings do not change from run to run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addEdge appends to to edges[from] once.
func addEdge(edges map[string][]string, from, to string) {
	if !slices.Contains(edges[from], to) {
		edges[from] = append(edges[from], to)
	}
}
