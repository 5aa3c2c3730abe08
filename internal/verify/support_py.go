package verify

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// pyFrameworks are the top-level modules of Python test frameworks.
var pyFrameworks = map[string]bool{
	"unittest": true, "pytest": true, "_pytest": true, "nose": true, "nose2": true, "hypothesis": true,
	"mock": true, "doctest": true, "testtools": true, "testfixtures": true, "responses": true,
	"freezegun": true, "parameterized": true, "ddt": true, "behave": true,
}

// pyFile is what the classifier reads from a Python module.
type pyFile struct {
	imports []pyLoad
	dynamic string // why its loads cannot be resolved, or ""
	main    bool   // an `if __name__ == "__main__":` guard or a #! line
	marker  string // a test framework it imports
	// lazyMarker is a test framework a function imports when called:
	// production code does that too (to skip or fail a test it serves).
	lazyMarker string
	helper     string // an assertion helper it defines: "defines assert_equal"
	weak       bool   // the helper is a checker (check*, verify*)
	raisesAE   bool
	// exports are the assertion helpers another module can call: public,
	// and not defined in a function.
	exports []string
}

// pyLoad is one import: `from ..a.b import c, d` is level 2, mod
// "a.b", names c and d.
type pyLoad struct {
	level int
	mod   string
	names []string
	lazy  bool // in a function: loaded when it is called
}

var (
	pyCompound  = regexp.MustCompile(`^(?:if|elif|else|try|except|finally|with|for|while)\b[^:]*:\s*(\S.*)$`)
	pyImportRe  = regexp.MustCompile(`^import\s+(.+)$`)
	pyFromRe    = regexp.MustCompile(`^from\s+(\.*)\s*([\w.]*)\s+import\s+(.+)$`)
	pyDynCall   = regexp.MustCompile(`(?:^|[^\w.])__import__\s*\(|\bimport_module\s*\(`)
	pyDynLit    = regexp.MustCompile(`(?:__import__|import_module)\s*\(\s*[rRuU]?(['"])(\.*[\w.]+)['"]\s*[,)]`)
	pySysPath   = regexp.MustCompile(`\bsys\s*\.\s*path\s*(?:\.\s*(?:insert|append|extend)\b|\[|\+=|=[^=])|\bsite\s*\.\s*addsitedir\b`)
	pyFileLoad  = regexp.MustCompile(`\b(?:spec_from_file_location|SourceFileLoader|load_source|run_path)\s*\(`)
	pyMainGuard = regexp.MustCompile(`__name__\s*==\s*"__main__"|"__main__"\s*==\s*__name__`)
	pyDef       = regexp.MustCompile(`(?m)^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)`)
	pyRaiseAE   = regexp.MustCompile(`\braise\s+(?:\w+\.)*AssertionError\b|\bclass\s+\w+\s*\([^)]*\bAssertionError\b`)
	pyPlugins   = regexp.MustCompile(`^pytest_plugins\s*=`)
	pyQuoted    = regexp.MustCompile(`['"]([\w.]+)['"]`)
)

// parsePython reads a module's imports and markers. Strings and comments
// are skipped (lexPython), so an import in a docstring does not count.
func parsePython(src string) pyFile {
	var f pyFile
	f.main = strings.HasPrefix(src, "#!")
	code, _ := lexPython(src)
	lines := strings.Split(code, "\n")
	srcLines := strings.Split(src, "\n")
	// Logical lines: brackets and backslashes continue a line.
	depth, start := 0, 0
	var cur strings.Builder
	defIndent, inFunc := -1, false // the indentation of the def a statement is in
	for i, l := range lines {
		if cur.Len() == 0 && strings.TrimSpace(l) != "" {
			indent := len(l) - len(strings.TrimLeft(l, " \t"))
			if defIndent >= 0 && indent <= defIndent {
				defIndent = -1
			}
			inFunc = defIndent >= 0
			if word, _, _ := strings.Cut(strings.TrimSpace(l), " "); defIndent < 0 && (word == "def" || word == "async") {
				defIndent = indent
			}
		}
		for _, c := range l {
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth = max(0, depth-1)
			}
		}
		cont := strings.HasSuffix(strings.TrimRight(l, " \t"), "\\")
		cur.WriteString(strings.TrimSuffix(strings.TrimRight(l, " \t"), "\\"))
		cur.WriteByte(' ')
		if depth > 0 || cont {
			continue
		}
		n := len(f.imports)
		for _, st := range strings.Split(cur.String(), ";") {
			f.statement(strings.TrimSpace(st), srcLines[min(start, len(srcLines)):min(i+1, len(srcLines))])
		}
		for j := n; j < len(f.imports) && inFunc; j++ {
			f.imports[j].lazy = true
		}
		cur.Reset()
		start = i + 1
	}
	for i, l := range lines {
		if pyDynCall.MatchString(l) {
			ms := pyDynLit.FindAllStringSubmatch(srcLines[min(i, len(srcLines)-1)], -1)
			if len(ms) == 0 || len(ms) < len(pyDynCall.FindAllString(l, -1)) {
				f.dynamic = "loads modules by a computed name"
			}
			for _, m := range ms {
				mod := strings.TrimLeft(m[2], ".")
				f.imports = append(f.imports, pyLoad{level: len(m[2]) - len(mod), mod: mod})
			}
		}
	}
	switch {
	case pySysPath.MatchString(code):
		f.dynamic = "changes sys.path"
	case pyFileLoad.MatchString(code):
		f.dynamic = "loads a module from a file path"
	}
	f.main = f.main || pyMainGuard.MatchString(code)
	for _, m := range pyDef.FindAllStringSubmatch(code, -1) {
		if k := helperFuncKind(m[1]); k != "" && (f.helper == "" || f.weak && k == "strong") {
			f.helper, f.weak = "defines "+m[1], k == "weak"
		}
	}
	f.exports = pyHelperExports(code)
	f.raisesAE = pyRaiseAE.MatchString(code)
	for _, im := range f.imports {
		top := strings.SplitN(im.mod, ".", 2)[0]
		switch {
		case im.level > 0 || !pyFrameworks[top] && !strings.HasPrefix(top, "pytest_"):
		case !im.lazy && f.marker == "":
			f.marker = top
		case im.lazy && f.lazyMarker == "":
			f.lazyMarker = top
		}
	}
	return f
}

// helperMarker says what in f marks an assertion helper that code may
// share with the tests ("defines assert_equal", "raises AssertionError",
// "imports pytest in a function"), or "". A checker (check*, verify*)
// counts only when a test that imports it calls it (uses): production
// code defines checkers.
func (f *pyFile) helperMarker(uses func(string) bool) string {
	for _, n := range f.exports {
		if helperFuncKind(n) == "strong" {
			return "defines " + n
		}
	}
	switch {
	case f.raisesAE:
		return "raises AssertionError"
	case f.lazyMarker != "":
		return "imports " + f.lazyMarker + " in a function"
	}
	for _, n := range f.exports {
		if uses(n) {
			return "defines " + n
		}
	}
	return ""
}

// pyHelperExports returns the public assertion helpers code (lexed)
// defines at its top level or in a class.
func pyHelperExports(code string) []string {
	type block struct {
		indent int
		def    bool
	}
	var stack []block
	var out []string
	for _, l := range strings.Split(code, "\n") {
		t := strings.TrimLeft(l, " \t")
		if t == "" {
			continue
		}
		indent := len(l) - len(t)
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		word, rest, _ := strings.Cut(t, " ")
		if word == "async" {
			word, rest, _ = strings.Cut(strings.TrimLeft(rest, " \t"), " ")
		}
		if word != "def" && word != "class" {
			continue
		}
		inFunc := slices.ContainsFunc(stack, func(b block) bool { return b.def })
		stack = append(stack, block{indent, word == "def"})
		name := jsIdent(strings.TrimLeft(rest, " \t"))
		if word == "def" && !inFunc && !strings.HasPrefix(name, "_") && helperFuncKind(name) != "" {
			out = append(out, name)
		}
	}
	return out
}

// statement reads one simple statement; src is its source lines.
func (f *pyFile) statement(st string, src []string) {
	for {
		m := pyCompound.FindStringSubmatch(st)
		if m == nil {
			break
		}
		st = m[1]
	}
	if m := pyImportRe.FindStringSubmatch(st); m != nil {
		for _, part := range strings.Split(m[1], ",") {
			if w := strings.Fields(part); len(w) > 0 {
				f.imports = append(f.imports, pyLoad{mod: w[0]})
			}
		}
		return
	}
	if m := pyFromRe.FindStringSubmatch(st); m != nil {
		im := pyLoad{level: len(m[1]), mod: m[2]}
		for _, part := range strings.Split(strings.NewReplacer("(", " ", ")", " ").Replace(m[3]), ",") {
			if w := strings.Fields(part); len(w) > 0 && w[0] != "*" {
				im.names = append(im.names, w[0])
			}
		}
		f.imports = append(f.imports, im)
		return
	}
	if pyPlugins.MatchString(st) {
		for _, m := range pyQuoted.FindAllStringSubmatch(strings.Join(src, "\n"), -1) {
			f.imports = append(f.imports, pyLoad{mod: m[1]})
		}
	}
}

// pyRoots are the directories a module's absolute imports resolve from,
// first first: the first directory above it without __init__.py (pytest's
// rootdir insertion), pytest's pythonpath and PYTHONPATH, the repository
// root, src/, and its own directory.
func (t *supportTree) pyRoots(file string) []string {
	d := pathDir(file)
	for d != "" && t.files[d+"/__init__.py"] {
		d = pathDir(d)
	}
	roots := []string{d}
	for _, r := range append(slices.Clone(t.pyPath), "", "src", pathDir(file)) {
		if !slices.Contains(roots, r) && t.dirs[r] {
			roots = append(roots, r)
		}
	}
	return roots
}

// pyFind finds name in directory base: a package (its __init__.py and
// directory), a module (its file), or a namespace package (its
// directory only); a package wins over a same-named module.
func (t *supportTree) pyFind(base, name string, namespace bool) (file, dir string, ok bool) {
	d, ok := pathJoin(base, name)
	if !ok || name == "" {
		return "", "", false
	}
	if t.files[d+"/__init__.py"] {
		return d + "/__init__.py", d, true
	}
	if t.files[d+".py"] {
		return d + ".py", "", true
	}
	if namespace && t.dirs[d] {
		return "", d, true
	}
	return "", "", false
}

// pyResolve returns the files an import loads: every package's
// __init__.py on the way, the module, and the names that are submodules.
func (t *supportTree) pyResolve(file string, im pyLoad) []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	parts := strings.Split(im.mod, ".")
	if im.mod == "" {
		parts = nil
	}
	dir, pkg := "", false // the package the import reached, if any
	if im.level > 0 {
		dir, pkg = pathDir(file), true
		for i := 1; i < im.level; i++ {
			if dir == "" {
				return nil
			}
			dir = pathDir(dir)
		}
		if t.files[path.Join(dir, "__init__.py")] {
			add(path.Join(dir, "__init__.py"))
		}
	} else {
		if len(parts) == 0 {
			return nil
		}
		found := false
		for _, namespace := range []bool{false, true} {
			for _, r := range t.pyRoots(file) {
				if f, d, ok := t.pyFind(r, parts[0], namespace); ok {
					add(f)
					dir, pkg, found = d, d != "", true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			return nil // outside the tree
		}
		parts = parts[1:]
	}
	for _, p := range parts {
		if !pkg {
			return out // an attribute of a module
		}
		f, d, ok := t.pyFind(dir, p, true)
		if !ok {
			return out
		}
		add(f)
		dir, pkg = d, d != ""
	}
	if pkg {
		for _, n := range im.names {
			if f, _, ok := t.pyFind(dir, n, false); ok {
				add(f)
			}
		}
	}
	return out
}

// pyModuleName is the name a module is imported by: calc for calc.py and
// for calc/__init__.py.
func pyModuleName(f string) string {
	if path.Base(f) == "__init__.py" {
		return path.Base(pathDir(f))
	}
	return strings.TrimSuffix(path.Base(f), ".py")
}

// pyTestSubjects are the module names a test file is named after: calc
// for test_calc.py, calc_test.py and tests_calc.py; http2_conn and http2
// for test_http2_conn.py.
func pyTestSubjects(f string) []string {
	stem := strings.TrimSuffix(path.Base(f), ".py")
	subject := ""
	if s, ok := strings.CutPrefix(stem, "test_"); ok {
		subject = s
	} else if s, ok := strings.CutPrefix(stem, "tests_"); ok {
		subject = s
	} else if s, ok := strings.CutSuffix(stem, "_test"); ok {
		subject = s
	}
	return namePrefixes(subject, "_")
}

// namePrefixes returns name and its prefixes that end before one of seps:
// a_b_c, a_b, a.
func namePrefixes(name, seps string) []string {
	var out []string
	for name != "" {
		out = append(out, name)
		i := strings.LastIndexAny(name, seps)
		if i <= 0 {
			break
		}
		name = name[:i]
	}
	return out
}

// pySupport classifies the tree's Python modules. run are Python files
// the test commands run.
func (t *supportTree) pySupport(shellRun map[string]string) {
	declared, plugins := t.pyPackaging()
	run := map[string]string{}
	for f, why := range shellRun {
		run[f] = why
	}
	for _, f := range plugins {
		t.support(f, "pytest plugin (pytest11 entry point) (Python)")
		run[f] = "pytest11"
	}
	isTest := func(p string) bool { return IsTestPath(p) || run[p] != "" }
	var units []string
	direct := map[string]bool{} // code roots of their own
	for _, p := range t.in.Paths {
		if !strings.HasSuffix(p, ".py") || !t.files[p] || hasComponent(p, "node_modules", ".venv", "venv", "site-packages") {
			continue
		}
		src := t.content(p)
		switch {
		case isTest(p):
			units = append(units, p)
		case path.Base(p) == "__main__.py" || strings.HasPrefix(src, "#!"):
			direct[p] = true
		case strings.Contains(src, "__main__") && parsePython(src).main:
			direct[p] = true
		}
	}
	for _, f := range sortedKeys(run) {
		if strings.HasSuffix(f, ".py") && t.files[f] && !slices.Contains(units, f) {
			units = append(units, f)
		}
	}
	if len(units) == 0 {
		return
	}
	parsed := map[string]*pyFile{}
	parse := func(p string) *pyFile {
		if f, ok := parsed[p]; ok {
			return f
		}
		f := parsePython(t.content(p))
		parsed[p] = &f
		return &f
	}
	resolved := map[string][]string{}
	edges := func(p string) []string {
		if r, ok := resolved[p]; ok {
			return r
		}
		var out []string
		add := func(f string) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
		// Importing a module runs its packages' __init__.py.
		if init := path.Join(pathDir(p), "__init__.py"); init != p && t.files[init] {
			add(init)
		} else if d := pathDir(p); p == init && d != "" && t.files[path.Join(pathDir(d), "__init__.py")] {
			add(path.Join(pathDir(d), "__init__.py"))
		}
		for _, im := range parse(p).imports {
			for _, f := range t.pyResolve(p, im) {
				add(f)
			}
		}
		resolved[p] = out
		return out
	}
	code := func(p string) []string {
		if isTest(p) {
			return nil
		}
		return edges(p)
	}
	subject, imported := map[string]bool{}, map[string][]string{} // a test is named after it; the tests that import it
	for _, u := range units {
		subjects := pyTestSubjects(u)
		for _, f := range edges(u) {
			imported[f] = append(imported[f], u)
			if slices.Contains(subjects, pyModuleName(f)) && !isTest(f) {
				direct[f], subject[f] = true, true
			}
		}
	}
	for _, f := range declared {
		if !isTest(f) {
			direct[f] = true
		}
	}
	reached := reachFrom(sortedKeys(direct), code)
	for p := range reached {
		if !isTest(p) {
			t.codeFile(p)
		}
	}
	loaded := testLoads(units, edges, code)
	for _, p := range sortedKeys(loaded) {
		if isTest(p) {
			continue
		}
		f := parse(p)
		// A module's type stub (calc.pyi) goes with it.
		support := func(why string) {
			t.support(p, why)
			t.support(p+"i", why)
		}
		switch {
		case f.marker != "":
			support("imports " + f.marker + " (Python)")
		case supportName(p) != "":
			support("support-named (" + supportName(p) + "), imported by tests (Python)")
		case reached[p]:
			// Code the tests import to assert with, but for the module a
			// test is named after: the code that test tests.
			uses := func(name string) bool {
				return slices.ContainsFunc(imported[p], func(u string) bool {
					code, _ := lexPython(t.content(u))
					return hasWord(code, name)
				})
			}
			if m := f.helperMarker(uses); m != "" && len(imported[p]) > 0 && !subject[p] {
				why := "assertion helper that tests and code both load (" + m + ") (Python)"
				t.helperUndecided(p, why)
				t.helperUndecided(p+"i", why)
			}
		case f.lazyMarker != "":
			support("imports " + f.lazyMarker + " in a function, imported only by tests (Python)")
		case f.raisesAE:
			support("raises AssertionError, imported only by tests (Python)")
		case f.helper != "":
			support(f.helper + ", imported only by tests (Python)")
		default:
			why := "imported only by tests (" + loaded[p] + "), no test is named after it (Python)"
			t.undecided(p, why)
			t.undecided(p+"i", why)
		}
	}
	// Loads that cannot be resolved: from the tests, and from what they load.
	for _, p := range append(slices.Clone(units), sortedKeys(loaded)...) {
		if d := parse(p).dynamic; d != "" && (isTest(p) || !reached[p]) {
			t.dynamic = append(t.dynamic, supportDynamic{dir: testArea(p), exts: []string{".py"}, why: p + " " + d + " (Python)"})
		}
	}
}

// pyPackaging returns the modules the project's packaging names as code
// (scripts and entry points, py_modules and packages, in pyproject.toml,
// setup.cfg and setup.py), and the pytest plugins it registers (the
// pytest11 entry points): pytest loads those into every test session.
func (t *supportTree) pyPackaging() (code, plugins []string) {
	var mods, pkgs, plugMods []string
	if src := t.content("pyproject.toml"); src != "" {
		var doc map[string]any
		if _, err := toml.Decode(src, &doc); err == nil {
			project, _ := doc["project"].(map[string]any)
			tool, _ := doc["tool"].(map[string]any)
			poetry, _ := tool["poetry"].(map[string]any)
			for _, tbl := range []any{project["scripts"], project["gui-scripts"], poetry["scripts"]} {
				for _, v := range decodedStrings(tbl) {
					mods = append(mods, strings.SplitN(v, ":", 2)[0])
				}
			}
			if eps, ok := project["entry-points"].(map[string]any); ok {
				for _, group := range sortedKeys(eps) {
					for _, v := range decodedStrings(eps[group]) {
						if group == "pytest11" {
							plugMods = append(plugMods, strings.SplitN(v, ":", 2)[0])
						} else {
							mods = append(mods, strings.SplitN(v, ":", 2)[0])
						}
					}
				}
			}
			if st, ok := tool["setuptools"].(map[string]any); ok {
				pkgs = append(pkgs, decodedStrings(st["packages"])...)
				mods = append(mods, decodedStrings(st["py-modules"])...)
			}
			if ps, ok := poetry["packages"].([]any); ok {
				for _, p := range ps {
					if m, ok := p.(map[string]any); ok {
						if s, ok := m["include"].(string); ok {
							pkgs = append(pkgs, s)
						}
					}
				}
			}
		}
	}
	for _, file := range []string{"setup.cfg", "setup.py"} {
		for _, l := range strings.Split(t.content(file), "\n") {
			for _, m := range pyEntryPoint.FindAllStringSubmatch(l, -1) {
				mods = append(mods, m[1])
			}
		}
	}
	cfgList := func(key string) []string {
		var out []string
		src := t.content("setup.cfg") + "\n" + t.content("setup.py")
		re := regexp.MustCompile(`(?m)^\s*` + key + `\s*[=:]\s*(.*(?:\n[ \t]+\S.*)*)`)
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			for _, w := range strings.FieldsFunc(m[1], func(r rune) bool { return strings.ContainsRune(" \t\n,[]()'\"", r) }) {
				if pyDotted.MatchString(w) && w != "find" && w != "find_packages" {
					out = append(out, w)
				}
			}
		}
		return out
	}
	pkgs = append(pkgs, cfgList("packages")...)
	mods = append(mods, cfgList("py_modules")...)
	for _, m := range mods {
		code = append(code, t.pyResolve("setup.py", pyLoad{mod: strings.TrimSpace(m)})...)
	}
	for _, m := range plugMods {
		if fs := t.pyResolve("setup.py", pyLoad{mod: strings.TrimSpace(m)}); len(fs) > 0 {
			plugins = append(plugins, fs[len(fs)-1])
		}
	}
	for _, p := range pkgs {
		for _, r := range []string{"", "src"} {
			d, ok := pathJoin(r, strings.ReplaceAll(p, ".", "/"))
			if !ok || !t.dirs[d] {
				continue
			}
			for _, f := range t.children[d] {
				if strings.HasSuffix(f, ".py") && !IsTestPath(f) {
					code = append(code, f)
				}
			}
		}
	}
	return code, plugins
}

// pyEntryPoint finds "name = pkg.mod:func" in setup.cfg and setup.py.
var (
	pyEntryPoint = regexp.MustCompile(`(?:^\s*|['"]\s*)[\w.-]+\s*=\s*([A-Za-z_][\w.]*)\s*:\s*\w`)
	pyDotted     = regexp.MustCompile(`^[A-Za-z_][\w.]*$`)
)
