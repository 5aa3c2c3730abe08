package verify

import (
	"bytes"
	"go/build"
	"go/token"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// goFrameworks are import path prefixes of Go test frameworks: a package
// that imports one (or is one) exists for the tests. go-cmp is not here:
// production code compares with it too.
var goFrameworks = []string{
	"github.com/stretchr/testify", "gotest.tools", "github.com/onsi/ginkgo", "github.com/onsi/gomega",
	"github.com/smartystreets/goconvey", "gopkg.in/check.v1", "github.com/golang/mock", "go.uber.org/mock",
	"github.com/matryer/is", "github.com/frankban/quicktest", "github.com/maxatome/go-testdeep",
	"github.com/h2non/gock", "github.com/jarcoal/httpmock", "github.com/DATA-DOG/go-sqlmock",
}

// goFramework returns the framework prefix ip belongs to, or "".
func goFramework(ip string) string {
	for _, f := range goFrameworks {
		if ip == f || strings.HasPrefix(ip, f+"/") {
			return f
		}
	}
	return ""
}

// goModule is a go.mod of the tree.
type goModule struct {
	dir, path string
	replaces  []goReplace
}

// goReplace is a replace directive with a local target directory.
type goReplace struct {
	old, dir, target string // target as written (./helpers)
}

// parseGoMod reads a go.mod or go.work: its module path, its replace
// directives whose target is a local directory (old path, target as
// written), and its use directories.
func parseGoMod(src string) (module string, replaces [][2]string, uses []string) {
	block := ""
	for _, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := goModFields(line)
		if len(f) == 0 {
			continue
		}
		if block != "" {
			if f[0] == ")" {
				block = ""
				continue
			}
			f = append([]string{block}, f...)
		} else if len(f) == 2 && f[1] == "(" {
			block = f[0]
			continue
		}
		switch f[0] {
		case "module":
			if len(f) > 1 {
				module = f[1]
			}
		case "use":
			if len(f) > 1 {
				uses = append(uses, f[1])
			}
		case "replace":
			i := slices.Index(f, "=>")
			if i < 2 || i+1 >= len(f) {
				continue
			}
			if n := f[i+1]; n == "." || n == ".." || strings.HasPrefix(n, "./") || strings.HasPrefix(n, "../") {
				replaces = append(replaces, [2]string{f[1], n})
			}
		}
	}
	return module, replaces, uses
}

// goModFields splits a go.mod line into its tokens, unquoting quoted ones.
func goModFields(line string) []string {
	var out []string
	for _, w := range strings.Fields(line) {
		if u, err := strconv.Unquote(w); err == nil {
			w = u
		}
		out = append(out, w)
	}
	return out
}

// goPkg is one directory's Go package, as go/build reads it.
type goPkg struct {
	dir        string
	name       string
	imports    []string // of the files the build includes
	allImports []string // of every non-test file, whatever its constraints
	testImps   []string // of every test file, whatever its constraints
	hasTests   bool
	files      []string // the package's non-test files
}

// goAnalysis is the Go side of the classifier.
type goAnalysis struct {
	t        *supportTree
	modules  map[string]*goModule // by directory
	main     *goModule            // the module at the root, if any
	work     []goReplace          // go.work's replaces
	uses     map[string]bool      // go.work use directories
	targets  map[string]string    // replace target directory → as written
	vendorAt string               // the directory whose vendor/ resolves imports, or "-"
	pkgs     map[string]*goPkg
	testers  map[string][]string // package → the packages whose tests import it
}

// goSupport classifies the tree's Go packages.
func (t *supportTree) goSupport() {
	a := &goAnalysis{t: t, modules: map[string]*goModule{}, uses: map[string]bool{}, targets: map[string]string{}, vendorAt: "-", pkgs: map[string]*goPkg{}}
	a.readModules()
	exact, all := t.goContext(false), t.goContext(true)
	var dirs []string
	for d := range t.children {
		if slices.ContainsFunc(t.children[d], func(p string) bool { return strings.HasSuffix(p, ".go") }) && !hasComponent(d+"/x", "node_modules", ".git") {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		a.pkgs[d] = a.readPkg(d, exact, all)
	}
	code, allCode, tests := map[string][]string{}, map[string][]string{}, map[string][]string{}
	var roots []string
	for _, d := range dirs {
		p := a.pkgs[d]
		for _, ip := range p.imports {
			if to := a.resolve(d, ip); to != "" && to != d {
				addEdge(code, d, to)
			}
		}
		for _, ip := range p.allImports {
			if to := a.resolve(d, ip); to != "" && to != d {
				addEdge(allCode, d, to)
			}
		}
		for _, ip := range p.testImps {
			if to := a.resolve(d, ip); to != "" && to != d {
				addEdge(tests, d, to)
			}
		}
		if a.isRoot(p) {
			roots = append(roots, d)
		}
	}
	a.testers = map[string][]string{}
	for _, d := range sortedKeys(tests) {
		for _, to := range tests[d] {
			a.testers[to] = append(a.testers[to], d)
		}
	}
	reached := reachFrom(roots, lookup(code))
	for d := range reached {
		for _, f := range a.pkgs[d].files {
			t.codeFile(f)
		}
	}
	// What the tests load, through what the code's packages import as
	// built, and through every import of the others.
	through := map[string][]string{}
	for _, d := range dirs {
		if reached[d] {
			through[d] = code[d]
		} else {
			through[d] = allCode[d]
		}
	}
	loaded := testLoads(sortedKeys(tests), lookup(tests), lookup(through))
	for _, d := range sortedKeys(loaded) {
		p := a.pkgs[d]
		role, why := a.decide(p, reached[d], loaded[d])
		for _, f := range p.files {
			switch {
			case role == RoleSupport:
				t.support(f, why)
			case role == RoleUndecided && reached[d]:
				t.helperUndecided(f, why)
			case role == RoleUndecided:
				t.undecided(f, why)
			}
		}
	}
}

// decide is the role of a package the tests load, and why.
func (a *goAnalysis) decide(p *goPkg, isCode bool, tester string) (SupportRole, string) {
	label := p.dir
	if label == "" {
		label = "the root package"
	}
	say := func(s string) string { return label + ": " + s + " (Go)" }
	if f := goFramework(a.importPath(p.dir)); f != "" {
		return RoleSupport, say("test framework package (" + f + ")")
	}
	for _, ip := range p.imports {
		if ip == "testing" || strings.HasPrefix(ip, "testing/") {
			return RoleSupport, say("imports " + ip)
		}
		if f := goFramework(ip); f != "" {
			return RoleSupport, say("imports " + f)
		}
	}
	parts := strings.Split(p.dir, "/")
	switch {
	case isCode:
	case slices.Contains(parts, "vendor"):
		return RoleSupport, say("under vendor/, imported only by tests")
	case slices.Contains(parts, "testdata"):
		return RoleSupport, say("under testdata/, imported only by tests")
	case slices.ContainsFunc(parts, func(s string) bool { return strings.HasPrefix(s, "_") || strings.HasPrefix(s, ".") }):
		return RoleSupport, say("in a directory ./... skips, imported only by tests")
	case slices.Contains(parts, "internal"):
		return RoleSupport, say("imported only by tests")
	}
	if n := supportName(p.dir + "/"); n != "" {
		return RoleSupport, say("support-named directory (" + n + ")")
	}
	if isCode {
		// Code that other packages' tests import to assert with: weakened,
		// it would pass the tests. A package with tests of its own is the
		// code they test.
		if testers := a.testers[p.dir]; len(testers) > 0 && !p.hasTests {
			if fn := a.assertExport(p, testers); fn != "" {
				by := testers[0]
				if by == "" {
					by = "the root package"
				}
				return RoleUndecided, say("assertion helper that tests and code both load (exports " + fn + ", imported by tests of " + by + ")")
			}
		}
		return RoleCode, ""
	}
	if s := a.satellite(p.dir); s != "" {
		return RoleSupport, say("in " + s + ", imported only by tests")
	}
	by := tester
	if by == "" {
		by = "the root package"
	}
	return RoleUndecided, say("imported only by tests of " + by + ", not internal")
}

// isRoot reports whether p is a code root: a command, or a package with
// its own tests that go test ./... runs.
func (a *goAnalysis) isRoot(p *goPkg) bool {
	parts := strings.Split(p.dir, "/")
	if slices.ContainsFunc(parts, func(s string) bool {
		return s == "testdata" || s == "vendor" || s == "node_modules" || strings.HasPrefix(s, "_") || strings.HasPrefix(s, ".")
	}) {
		return false
	}
	if p.name == "main" {
		return true
	}
	if !p.hasTests {
		return false
	}
	// A replace target's tests are not this project's.
	return !strings.HasPrefix(a.satellite(p.dir), "replace")
}

// satellite says which local replace target or go.work module (other
// than the main module) holds dir, or "".
func (a *goAnalysis) satellite(dir string) string {
	within := func(d string) bool { return d != "" && (dir == d || strings.HasPrefix(dir, d+"/")) }
	for _, d := range sortedKeys(a.targets) {
		if within(d) && !a.uses[d] {
			return "replace target " + a.targets[d]
		}
	}
	for _, d := range sortedKeys(a.uses) {
		if within(d) {
			return "go.work module ./" + d
		}
	}
	return ""
}

// readModules reads the tree's go.mod files and the root's go.work.
func (a *goAnalysis) readModules() {
	t := a.t
	for p := range t.files {
		if path.Base(p) != "go.mod" || hasComponent(p, "vendor", "node_modules") {
			continue
		}
		mod, reps, _ := parseGoMod(t.content(p))
		m := &goModule{dir: pathDir(p), path: mod}
		for _, r := range reps {
			if d, ok := pathJoin(m.dir, r[1]); ok {
				m.replaces = append(m.replaces, goReplace{old: r[0], dir: d, target: r[1]})
				a.targets[d] = r[1]
			}
		}
		a.modules[m.dir] = m
	}
	a.main = a.modules[""]
	if t.files["go.work"] {
		_, reps, uses := parseGoMod(t.content("go.work"))
		for _, r := range reps {
			if d, ok := pathJoin(r[1]); ok {
				a.work = append(a.work, goReplace{old: r[0], dir: d, target: r[1]})
				a.targets[d] = r[1]
			}
		}
		for _, u := range uses {
			if d, ok := pathJoin(u); ok {
				a.uses[d] = true
			}
		}
		if t.dirs["vendor"] {
			a.vendorAt = ""
		}
	} else if a.main != nil && t.dirs["vendor"] {
		a.vendorAt = ""
	}
	if a.main == nil && !t.files["go.work"] {
		// No root module: each module vendors for itself; resolve through
		// the importing module's vendor/ (see resolve).
		a.vendorAt = "*"
	}
}

// moduleOf returns the module dir belongs to: the nearest go.mod above.
func (a *goAnalysis) moduleOf(dir string) *goModule {
	for d := dir; ; d = pathDir(d) {
		if m, ok := a.modules[d]; ok {
			return m
		}
		if d == "" {
			return nil
		}
	}
}

// importPath is the import path of the package in dir ("" if unknown).
func (a *goAnalysis) importPath(dir string) string {
	parts := strings.Split(dir, "/")
	if i := slices.Index(parts, "vendor"); i >= 0 && i+1 < len(parts) {
		return strings.Join(parts[i+1:], "/")
	}
	m := a.moduleOf(dir)
	if m == nil || m.path == "" {
		return ""
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(dir, m.dir), "/")
	if rel == "" {
		return m.path
	}
	return m.path + "/" + rel
}

// resolve returns the directory of the tree an import in the package at
// from resolves to, or "" when it is outside the tree (the standard
// library, the module cache).
func (a *goAnalysis) resolve(from, ip string) string {
	if !strings.Contains(strings.SplitN(ip, "/", 2)[0], ".") && !a.anyModulePrefix(ip) {
		return "" // the standard library
	}
	own := a.moduleOf(from)
	var mains []*goModule
	for _, m := range []*goModule{own, a.main} {
		if m != nil && !slices.Contains(mains, m) {
			mains = append(mains, m)
		}
	}
	for _, d := range sortedKeys(a.uses) {
		if m := a.modules[d]; m != nil && !slices.Contains(mains, m) {
			mains = append(mains, m)
		}
	}
	// The main modules' own packages.
	best, bestLen := "", -1
	for _, m := range mains {
		if rest, ok := modRest(ip, m.path); ok && len(m.path) > bestLen {
			if d, ok := pathJoin(m.dir, rest); ok && a.hasGo(d) && a.moduleOf(d) == m {
				best, bestLen = d, len(m.path)
			}
		}
	}
	if best != "" {
		return best
	}
	// Vendoring replaces every other module.
	vendor := a.vendorAt
	if vendor == "*" && own != nil && a.t.dirs[path.Join(own.dir, "vendor")] {
		vendor = own.dir
	}
	if vendor != "-" && vendor != "*" {
		if d, ok := pathJoin(vendor, "vendor", ip); ok && a.hasGo(d) {
			return d
		}
	}
	// Local replace directives: go.work's, the main module's, the
	// importing module's.
	var reps []goReplace
	reps = append(reps, a.work...)
	for _, m := range mains {
		reps = append(reps, m.replaces...)
	}
	best, bestLen = "", -1
	for _, r := range reps {
		if rest, ok := modRest(ip, r.old); ok && len(r.old) > bestLen {
			if d, ok := pathJoin(r.dir, rest); ok && a.hasGo(d) {
				best, bestLen = d, len(r.old)
			}
		}
	}
	return best
}

// anyModulePrefix reports whether ip is within a module of the tree (a
// module path need not have a dot).
func (a *goAnalysis) anyModulePrefix(ip string) bool {
	for _, m := range a.modules {
		if _, ok := modRest(ip, m.path); ok && m.path != "" {
			return true
		}
	}
	for _, r := range a.work {
		if _, ok := modRest(ip, r.old); ok {
			return true
		}
	}
	for _, m := range a.modules {
		for _, r := range m.replaces {
			if _, ok := modRest(ip, r.old); ok {
				return true
			}
		}
	}
	return false
}

// modRest returns ip's path below module path mod.
func modRest(ip, mod string) (string, bool) {
	if mod == "" {
		return "", false
	}
	if ip == mod {
		return "", true
	}
	if rest, ok := strings.CutPrefix(ip, mod+"/"); ok {
		return rest, true
	}
	return "", false
}

// hasGo reports whether dir holds a Go package.
func (a *goAnalysis) hasGo(dir string) bool {
	return a.pkgs[dir] != nil
}

// readPkg reads the package in dir with go/build: exactly as the go
// command would build it for code edges, and with every file for the
// imports a test or another configuration could add.
func (a *goAnalysis) readPkg(dir string, exact, all *build.Context) *goPkg {
	p := &goPkg{dir: dir}
	if bp, _ := exact.ImportDir("/"+dir, 0); bp != nil {
		p.name = bp.Name
		p.imports = bp.Imports
	}
	bp, _ := all.ImportDir("/"+dir, 0)
	if bp != nil {
		p.allImports = bp.Imports
		p.testImps = append(slices.Clone(bp.TestImports), bp.XTestImports...)
		if p.name == "" {
			p.name = bp.Name
		}
	}
	var embeds []string
	if bp != nil {
		embeds = bp.EmbedPatterns
		if !hasComponent(dir+"/x", "vendor", "node_modules") {
			a.testEmbeds(dir, bp.TestEmbedPatternPos)
			a.testEmbeds(dir, bp.XTestEmbedPatternPos)
		}
	}
	for _, f := range a.t.children[dir] {
		base := path.Base(f)
		if strings.HasSuffix(base, "_test.go") {
			p.hasTests = true
			continue
		}
		switch path.Ext(base) {
		case ".go", ".c", ".h", ".s", ".S", ".sx", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx",
			".m", ".f", ".F", ".for", ".f90", ".swig", ".swigcxx", ".syso":
			p.files = append(p.files, f)
		}
	}
	// What the code embeds goes with its package.
	for _, f := range a.t.embedFiles(dir, embeds) {
		a.t.codeEmbeds[f] = true
		if !slices.Contains(p.files, f) && !IsTestPath(f) {
			p.files = append(p.files, f)
		}
	}
	sort.Strings(p.files)
	return p
}

// testEmbeds records the files the //go:embed patterns of dir's test
// files name (pos: go/build's TestEmbedPatternPos or
// XTestEmbedPatternPos), each with the first test file that names it.
func (a *goAnalysis) testEmbeds(dir string, pos map[string][]token.Position) {
	for _, pat := range sortedKeys(pos) {
		by := ""
		for _, ps := range pos[pat] {
			if f := strings.TrimPrefix(path.Clean("/"+ps.Filename), "/"); by == "" || f < by {
				by = f
			}
		}
		for _, f := range a.t.embedFiles(dir, []string{pat}) {
			if old, ok := a.t.testEmbeds[f]; !ok || by < old {
				a.t.testEmbeds[f] = by
			}
		}
	}
}

// goContext is a build.Context over the tree: virtual paths are "/" + the
// tree path, and nothing outside the tree exists.
func (t *supportTree) goContext(allFiles bool) *build.Context {
	c := &build.Context{
		GOOS: t.in.GOOS, GOARCH: t.in.GOARCH, Compiler: "gc", CgoEnabled: true,
		ReleaseTags: build.Default.ReleaseTags, BuildTags: goTags(t.in.Commands),
		UseAllFiles: allFiles,
	}
	if c.GOOS == "" {
		c.GOOS = "linux"
	}
	if c.GOARCH == "" {
		c.GOARCH = "amd64"
	}
	rel := func(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }
	c.JoinPath = func(elem ...string) string { return path.Join(elem...) }
	c.SplitPathList = func(string) []string { return nil }
	c.IsAbsPath = func(p string) bool { return strings.HasPrefix(p, "/") }
	c.IsDir = func(p string) bool { return t.dirs[rel(p)] }
	c.HasSubdir = func(string, string) (string, bool) { return "", false }
	c.ReadDir = func(dir string) ([]fs.FileInfo, error) {
		d := rel(dir)
		if !t.dirs[d] {
			return nil, fs.ErrNotExist
		}
		var out []fs.FileInfo
		for _, f := range t.children[d] {
			out = append(out, vFileInfo{name: path.Base(f), size: int64(len(t.in.Files[f]))})
		}
		return out, nil
	}
	c.OpenFile = func(p string) (io.ReadCloser, error) {
		r := rel(p)
		if !t.files[r] {
			return nil, fs.ErrNotExist
		}
		return io.NopCloser(bytes.NewReader(t.in.Files[r])), nil
	}
	return c
}

// goTags returns the build tags the test commands set with -tags.
func goTags(commands []string) []string {
	var tags []string
	for _, c := range commands {
		f := strings.Fields(c)
		for i, w := range f {
			w = strings.Trim(w, `'"`)
			v := ""
			switch {
			case (w == "-tags" || w == "--tags") && i+1 < len(f):
				v = f[i+1]
			case strings.HasPrefix(w, "-tags=") || strings.HasPrefix(w, "--tags="):
				v = w[strings.IndexByte(w, '=')+1:]
			default:
				continue
			}
			for _, tag := range strings.FieldsFunc(strings.Trim(v, `'"`), func(r rune) bool { return r == ',' || r == ' ' }) {
				if !slices.Contains(tags, tag) {
					tags = append(tags, tag)
				}
			}
		}
	}
	return tags
}

// vFileInfo is a file of the tree, for go/build's ReadDir.
type vFileInfo struct {
	name string
	size int64
}

func (f vFileInfo) Name() string       { return f.name }
func (f vFileInfo) Size() int64        { return f.size }
func (f vFileInfo) Mode() fs.FileMode  { return 0o644 }
func (f vFileInfo) ModTime() time.Time { return time.Time{} }
func (f vFileInfo) IsDir() bool        { return false }
func (f vFileInfo) Sys() any           { return nil }
