package verify

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// The Go half of the fake-result scan: the constructs of one package
// (TestMain, init, exits, output, redirects, runner text).

type fakeFile struct {
	rel     string
	test    bool
	f       *ast.File
	fset    *token.FileSet
	imports map[string]string // local name → import path; "." names dot imports by path
}

type fakeFunc struct {
	decl *ast.FuncDecl
	file *fakeFile
}

// fakePkg is one package: the files of one directory with one package
// clause (a directory's external test package is another).
type fakePkg struct {
	files []*fakeFile
	funcs map[string]*fakeFunc // package-level functions, not methods nor init
	inits []*fakeFunc
	mains []*fakeFunc // TestMain(m *testing.M) in test files
}

func (p *fakePkg) add(ff *fakeFile) {
	p.files = append(p.files, ff)
	for _, d := range ff.f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name == nil || fd.Body == nil {
			continue
		}
		fn := &fakeFunc{decl: fd, file: ff}
		switch {
		case fd.Name.Name == "init":
			p.inits = append(p.inits, fn)
		case fd.Name.Name == "TestMain" && ff.test && isTestingM(ff, fd):
			p.mains = append(p.mains, fn)
			p.funcs[fd.Name.Name] = fn
		default:
			if _, dup := p.funcs[fd.Name.Name]; !dup {
				p.funcs[fd.Name.Name] = fn
			}
		}
	}
}

func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, is := range f.Imports {
		path, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			continue
		}
		name := path[strings.LastIndexByte(path, '/')+1:]
		if is.Name != nil {
			name = is.Name.Name
		}
		if name == "." {
			m["."+path] = path
			continue
		}
		if name != "_" {
			m[name] = path
		}
	}
	return m
}

// isTestingM reports whether fd's only parameter is a *testing.M.
func isTestingM(ff *fakeFile, fd *ast.FuncDecl) bool {
	ps := fd.Type.Params
	if ps == nil || len(ps.List) != 1 || len(ps.List[0].Names) > 1 {
		return false
	}
	star, ok := ps.List[0].Type.(*ast.StarExpr)
	return ok && ff.isSel(star.X, "testing", "M") != ""
}

// isSel returns "pkg.Name" when e is the selector path.Name of an import of
// ff (or Name from a dot import) with Name among names; else "".
func (ff *fakeFile) isSel(e ast.Expr, path string, names ...string) string {
	var id string
	switch x := ast.Unparen(e).(type) {
	case *ast.SelectorExpr:
		pk, ok := x.X.(*ast.Ident)
		if !ok || ff.imports[pk.Name] != path {
			return ""
		}
		id = x.Sel.Name
	case *ast.Ident:
		if _, ok := ff.imports["."+path]; !ok {
			return ""
		}
		id = x.Name
	default:
		return ""
	}
	for _, n := range names {
		if id == n {
			return path[strings.LastIndexByte(path, '/')+1:] + "." + id
		}
	}
	return ""
}

// stdStream returns "os.Stdout" or "os.Stderr" when e is one.
func (ff *fakeFile) stdStream(e ast.Expr) string {
	return ff.isSel(e, "os", "Stdout", "Stderr")
}

const unixPath = "golang.org/x/sys/unix"

// exitCall names the call when it ends the process or the goroutine.
func (ff *fakeFile) exitCall(c *ast.CallExpr) string {
	if s := ff.isSel(c.Fun, "os", "Exit"); s != "" {
		return s
	}
	if s := ff.isSel(c.Fun, "syscall", "Exit"); s != "" {
		return s
	}
	if s := ff.isSel(c.Fun, unixPath, "Exit"); s != "" {
		return s
	}
	return ff.isSel(c.Fun, "runtime", "Goexit")
}

// redirectCall names the call when it redirects or closes the process's
// output: file descriptors duplicated or closed, os.Stdout.Close().
func (ff *fakeFile) redirectCall(c *ast.CallExpr) string {
	for _, path := range []string{"syscall", unixPath} {
		if s := ff.isSel(c.Fun, path, "Dup", "Dup2", "Dup3"); s != "" {
			return "calls " + s
		}
		if s := ff.isSel(c.Fun, path, "Close"); s != "" && len(c.Args) == 1 && stdFD(c.Args[0]) {
			return "calls " + s + " on fd " + litText(c.Args[0])
		}
	}
	if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Close" {
		if s := ff.stdStream(sel.X); s != "" {
			return "calls " + s + ".Close"
		}
	}
	return ""
}

// outputCall names the call when it writes to stdout or stderr. Writes
// through a variable holding os.Stdout are not seen.
func (ff *fakeFile) outputCall(c *ast.CallExpr, p *fakePkg) string {
	if s := ff.isSel(c.Fun, "fmt", "Print", "Printf", "Println"); s != "" {
		return s
	}
	if s := ff.isSel(c.Fun, "log", "Print", "Printf", "Println"); s != "" {
		return s
	}
	if s := ff.isSel(c.Fun, "fmt", "Fprint", "Fprintf", "Fprintln"); s != "" && len(c.Args) > 0 {
		if w := ff.stdStream(c.Args[0]); w != "" {
			return s + " to " + w
		}
	}
	if s := ff.isSel(c.Fun, "io", "WriteString", "Copy", "CopyN", "CopyBuffer"); s != "" && len(c.Args) > 0 {
		if w := ff.stdStream(c.Args[0]); w != "" {
			return s + " to " + w
		}
	}
	if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Write") || ok && sel.Sel.Name == "ReadFrom" {
		if w := ff.stdStream(sel.X); w != "" {
			return w + "." + sel.Sel.Name
		}
	}
	if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") && p.funcs[id.Name] == nil {
		return id.Name
	}
	for _, path := range []string{"syscall", unixPath} {
		if s := ff.isSel(c.Fun, path, "Write"); s != "" && len(c.Args) > 0 && stdFD(c.Args[0]) {
			return s + " on fd " + litText(c.Args[0])
		}
	}
	if s := ff.isSel(c.Fun, "os", "NewFile"); s != "" && len(c.Args) > 0 && stdFD(c.Args[0]) {
		return s + " on fd " + litText(c.Args[0])
	}
	return ""
}

func stdFD(e ast.Expr) bool {
	lit, ok := ast.Unparen(e).(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return false
	}
	n, err := strconv.ParseInt(lit.Value, 0, 64)
	return err == nil && (n == 1 || n == 2)
}

func litText(e ast.Expr) string {
	if lit, ok := ast.Unparen(e).(*ast.BasicLit); ok {
		return lit.Value
	}
	return "?"
}

// nonZeroConst reports whether e is an integer literal other than 0.
func nonZeroConst(e ast.Expr) bool {
	lit, ok := ast.Unparen(e).(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(lit.Value, "_", ""), 0, 64)
	return err == nil && n != 0
}

// fakeSite is code with a context: a function body, or a package-level
// variable's initializer.
type fakeSite struct {
	node  ast.Node
	file  *fakeFile
	label string // "init", "TestMain", "helper (called from TestMain)", …
	fn    *fakeFunc
	// lazy: function literals stored for later (flag.Usage = func…, var
	// f = func…) are not looked at: they do not run during init.
	lazy bool
}

// inspect walks the site, skipping stored function literals when lazy.
func (s fakeSite) inspect(visit func(ast.Node) bool) {
	stored := map[*ast.FuncLit]bool{}
	if s.lazy {
		mark := func(es ...ast.Expr) {
			for _, e := range es {
				if fl, ok := ast.Unparen(e).(*ast.FuncLit); ok {
					stored[fl] = true
				}
			}
		}
		if fl, ok := s.node.(*ast.FuncLit); ok {
			stored[fl] = true
		}
		ast.Inspect(s.node, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				mark(x.Rhs...)
			case *ast.ValueSpec:
				mark(x.Values...)
			case *ast.KeyValueExpr:
				mark(x.Value)
			case *ast.CompositeLit:
				mark(x.Elts...)
			case *ast.ReturnStmt:
				mark(x.Results...)
			}
			return true
		})
	}
	ast.Inspect(s.node, func(n ast.Node) bool {
		if fl, ok := n.(*ast.FuncLit); ok && stored[fl] {
			return false
		}
		return visit(n)
	})
}

// reach returns the sites and the package-level functions they call,
// directly or not, labelled by the root that reached them first.
func (p *fakePkg) reach(roots []fakeSite, root string) []fakeSite {
	seen := map[*fakeFunc]bool{}
	for _, r := range roots {
		if r.fn != nil {
			seen[r.fn] = true
		}
	}
	out := append([]fakeSite(nil), roots...)
	for i := 0; i < len(out); i++ {
		out[i].inspect(func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := ast.Unparen(c.Fun).(*ast.Ident)
			if !ok {
				return true
			}
			fn := p.funcs[id.Name]
			if fn == nil || seen[fn] {
				return true
			}
			seen[fn] = true
			out = append(out, fakeSite{node: fn.decl.Body, file: fn.file, fn: fn, lazy: out[i].lazy,
				label: fn.decl.Name.Name + " (called from " + root + ")"})
			return true
		})
	}
	return out
}

type addFunc func(ff *fakeFile, pos token.Pos, kind, detail string)

func (p *fakePkg) findings() []Finding {
	var out []Finding
	add := func(ff *fakeFile, pos token.Pos, kind, detail string) {
		out = append(out, Finding{File: ff.rel, Line: ff.fset.Position(pos).Line, Kind: kind, Detail: detail})
	}

	// init, package-level variables' initializers, and what they call.
	var initRoots []fakeSite
	for _, fn := range p.inits {
		initRoots = append(initRoots, fakeSite{node: fn.decl.Body, file: fn.file, fn: fn, label: "init", lazy: true})
	}
	for _, ff := range p.files {
		for _, d := range ff.f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for _, v := range vs.Values {
					initRoots = append(initRoots, fakeSite{node: v, file: ff, label: "a package-level variable's initializer", lazy: true})
				}
			}
		}
	}
	inInit := map[*fakeFunc]bool{}
	for _, s := range p.reach(initRoots, "init") {
		if s.fn != nil {
			inInit[s.fn] = true
		}
		p.scanSite(s, FakeInitOutput, FakeInitExit, true, add)
	}

	// TestMain and what it calls.
	inMain := map[*fakeFunc]bool{}
	for _, fn := range p.mains {
		for _, s := range p.reach([]fakeSite{{node: fn.decl.Body, file: fn.file, fn: fn, label: "TestMain"}}, "TestMain") {
			inMain[s.fn] = true
			if inInit[s.fn] {
				continue // reported as init's
			}
			p.scanSite(s, FakeTestMainOutput, "", true, add)
		}
		p.checkTestMain(fn, add)
	}

	// The rest of the test files: exits, closed or duplicated output.
	for _, ff := range p.files {
		if !ff.test {
			continue
		}
		for _, d := range ff.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if fd.Recv == nil {
				if fd.Name.Name == "init" {
					continue
				}
				if fn := p.funcs[fd.Name.Name]; fn != nil && fn.decl == fd && (inInit[fn] || inMain[fn]) {
					continue
				}
			}
			p.scanSite(fakeSite{node: fd.Body, file: ff, label: funcLabel(fd)}, "", FakeExit, false, add)
		}
	}

	// Runner-shaped text, anywhere.
	for _, ff := range p.files {
		scanRunnerText(ff, add)
	}
	return out
}

func funcLabel(fd *ast.FuncDecl) string {
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		t := fd.Recv.List[0].Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		if ix, ok := t.(*ast.IndexExpr); ok {
			t = ix.X
		}
		if ix, ok := t.(*ast.IndexListExpr); ok {
			t = ix.X
		}
		if id, ok := t.(*ast.Ident); ok {
			return id.Name + "." + fd.Name.Name
		}
	}
	return fd.Name.Name
}

// scanSite reports, in one site: writes to stdout or stderr (as outKind,
// when not empty), exits (as exitKind, when not empty), and redirections.
// reassign: reassigning os.Stdout/os.Stderr counts too (init, TestMain);
// in a test it is the usual way to capture a function's output, and it
// does not reach the runner's own lines, which the testing package writes
// to the os.Stdout it saw when m.Run started.
func (p *fakePkg) scanSite(s fakeSite, outKind, exitKind string, reassign bool, add addFunc) {
	ff := s.file
	s.inspect(func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if !reassign {
				break
			}
			for _, l := range x.Lhs {
				e := ast.Unparen(l)
				if st, ok := e.(*ast.StarExpr); ok {
					e = st.X
				}
				if name := ff.stdStream(e); name != "" {
					add(ff, x.Pos(), FakeRedirect, "in "+s.label+": reassigns "+name)
				}
			}
		case *ast.CallExpr:
			if what := ff.redirectCall(x); what != "" {
				add(ff, x.Pos(), FakeRedirect, "in "+s.label+": "+what)
			}
			if exitKind != "" {
				if name := ff.exitCall(x); name != "" {
					add(ff, x.Pos(), exitKind, "in "+s.label+": calls "+name)
				}
			}
			if outKind != "" {
				if name := ff.outputCall(x, p); name != "" {
					add(ff, x.Pos(), outKind, "in "+s.label+": calls "+name)
				}
			}
		}
		return true
	})
}

// knownMainRunners are functions of other modules that call m.Run for the
// TestMain that hands them m.
var knownMainRunners = map[string][]string{
	"go.uber.org/goleak":                         {"VerifyTestMain"},
	"github.com/rogpeppe/go-internal/testscript": {"RunMain", "Main"},
}

// checkTestMain reports a TestMain that never calls m.Run (itself, through
// functions of its package it hands m to, or through a known helper), and
// one that can exit, with status 0 or one not known, before it does.
func (p *fakePkg) checkTestMain(fn *fakeFunc, add addFunc) {
	ff, fd := fn.file, fn.decl
	m := ""
	if names := fd.Type.Params.List[0].Names; len(names) == 1 {
		m = names[0].Name
	}
	first := token.NoPos
	if m != "" && m != "_" {
		first = p.firstRun(fd.Body, ff, m, map[*ast.FuncDecl]bool{fd: true})
	}
	if first == token.NoPos {
		name := m
		if name == "" || name == "_" {
			name = "its *testing.M"
		}
		add(ff, fd.Pos(), FakeNoRun, "TestMain never calls "+name+".Run(): the tests do not run and the results are whatever it prints")
		return
	}
	exits := func(s fakeSite) {
		s.inspect(func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || s.fn == fn && c.End() > first {
				return true
			}
			if name := s.file.exitCall(c); name != "" && !(len(c.Args) == 1 && nonZeroConst(c.Args[0])) {
				add(s.file, c.Pos(), FakeExitBeforeRun,
					"in "+s.label+": calls "+name+" before "+m+".Run(), with status 0 or one not known")
			}
			return true
		})
	}
	exits(fakeSite{node: fd.Body, file: ff, fn: fn, label: "TestMain"})
	// The functions of the package TestMain calls before m.Run.
	var before []fakeSite
	seen := map[*fakeFunc]bool{fn: true}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || c.End() > first {
			return true
		}
		if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok {
			if h := p.funcs[id.Name]; h != nil && !seen[h] {
				seen[h] = true
				before = append(before, fakeSite{node: h.decl.Body, file: h.file, fn: h,
					label: id.Name + " (called from TestMain before " + m + ".Run)"})
			}
		}
		return true
	})
	for _, s := range p.reach(before, "TestMain before "+m+".Run") {
		if s.fn != fn {
			exits(s)
		}
	}
}

// firstRun returns the position of the first call in body that runs the
// tests: m.Run(), a function of the package handed m that runs them, or a
// known helper handed m. NoPos when there is none.
func (p *fakePkg) firstRun(body ast.Node, ff *fakeFile, m string, seen map[*ast.FuncDecl]bool) token.Pos {
	first := token.NoPos
	ast.Inspect(body, func(n ast.Node) bool {
		if first != token.NoPos {
			return false
		}
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" && isIdent(sel.X, m) && len(c.Args) == 0 {
			first = c.Pos()
			return false
		}
		for i, a := range c.Args {
			if !isIdent(a, m) {
				continue
			}
			for path, names := range knownMainRunners {
				if ff.isSel(c.Fun, path, names...) != "" {
					first = c.Pos()
					return false
				}
			}
			id, ok := ast.Unparen(c.Fun).(*ast.Ident)
			if !ok {
				continue
			}
			fn := p.funcs[id.Name]
			if fn == nil || seen[fn.decl] {
				continue
			}
			seen[fn.decl] = true
			if pm := paramName(fn.decl, i); pm != "" && pm != "_" && p.firstRun(fn.decl.Body, fn.file, pm, seen) != token.NoPos {
				first = c.Pos()
				return false
			}
		}
		return true
	})
	return first
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && id.Name == name
}

// paramName is the name of fd's i-th parameter ("" when unnamed or absent).
func paramName(fd *ast.FuncDecl, i int) string {
	if fd.Type.Params == nil {
		return ""
	}
	k := 0
	for _, f := range fd.Type.Params.List {
		n := len(f.Names)
		if n == 0 {
			n = 1
		}
		if i < k+n {
			if len(f.Names) == 0 {
				return ""
			}
			return f.Names[i-k].Name
		}
		k += n
	}
	return ""
}

// runnerTexts are what printing go test's output takes.
var runnerTexts = []string{"--- PASS", "=== RUN", "\x16", "PASS\nok"}

// scanRunnerText reports string (and rune) literals, and concatenations of
// literals, holding go test's runner text or its framing byte, and
// conversions of the number 0x16 to a byte, rune or string.
func scanRunnerText(ff *fakeFile, add addFunc) {
	var where []string // enclosing functions
	var visit func(n ast.Node) bool
	report := func(pos token.Pos, what, val string) {
		for _, t := range runnerTexts {
			if strings.Contains(val, t) {
				add(ff, pos, FakeRunnerText, fmt.Sprintf("in %s: %s %s holds %q", whereLabel(where), what, quoteClip(val), t))
				return
			}
		}
	}
	visit = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			where = append(where, funcLabel(x))
			if x.Body != nil {
				ast.Inspect(x.Body, visit)
			}
			where = where[:len(where)-1]
			return false
		case *ast.BinaryExpr:
			if v, ok := foldStrings(x); ok {
				report(x.Pos(), "string", v)
				return false
			}
		case *ast.BasicLit:
			switch x.Kind {
			case token.STRING:
				if v, err := strconv.Unquote(x.Value); err == nil {
					report(x.Pos(), "string", v)
				}
			case token.CHAR:
				if v, _, _, err := strconv.UnquoteChar(strings.Trim(x.Value, "'"), '\''); err == nil && v == 0x16 {
					add(ff, x.Pos(), FakeRunnerText, fmt.Sprintf("in %s: rune %s is go test's framing byte 0x16", whereLabel(where), x.Value))
				}
			}
		case *ast.CallExpr:
			if id, ok := ast.Unparen(x.Fun).(*ast.Ident); ok && len(x.Args) == 1 {
				switch id.Name {
				case "byte", "rune", "uint8", "int32", "string":
					if lit, ok := ast.Unparen(x.Args[0]).(*ast.BasicLit); ok && lit.Kind == token.INT {
						if v, err := strconv.ParseInt(strings.ReplaceAll(lit.Value, "_", ""), 0, 64); err == nil && v == 0x16 {
							add(ff, x.Pos(), FakeRunnerText, fmt.Sprintf("in %s: %s(%s) is go test's framing byte 0x16", whereLabel(where), id.Name, lit.Value))
						}
					}
				}
			}
		}
		return true
	}
	for _, d := range ff.f.Decls {
		ast.Inspect(d, visit)
	}
}

func whereLabel(where []string) string {
	if len(where) == 0 {
		return "package scope"
	}
	return where[len(where)-1]
}

// foldStrings evaluates a + concatenation made only of string literals.
func foldStrings(e ast.Expr) (string, bool) {
	switch x := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false
		}
		v, err := strconv.Unquote(x.Value)
		return v, err == nil
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false
		}
		a, ok := foldStrings(x.X)
		if !ok {
			return "", false
		}
		b, ok := foldStrings(x.Y)
		if !ok || len(a)+len(b) > 1<<20 {
			return "", false
		}
		return a + b, true
	}
	return "", false
}

func quoteClip(s string) string {
	if len(s) <= fakesMaxText {
		return strconv.Quote(s)
	}
	i := fakesMaxText
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return strconv.Quote(s[:i]) + "…"
}
