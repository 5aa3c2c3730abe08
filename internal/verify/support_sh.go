package verify

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellFiles are the extensions a dynamic shell load may reach.
var shellFiles = []string{".sh", ".bash", ".zsh", ".ksh"}

// shellResult is what the test commands run that another ecosystem
// follows: Python and JavaScript files, with why, and the runner
// configurations they name (jest --config x.js).
type shellResult struct {
	py, js, configs map[string]string
}

// shWalker follows the test commands into the scripts, makefiles and
// package.json scripts they run. What it reaches is support (the test
// commands run it or read it), but for what a shell test runs: the
// program under test (support_shtest.go).
type shWalker struct {
	t     *supportTree
	res   shellResult
	seen  map[string]bool
	makes map[string]*mkFile
	depth int
	walks int // shell texts walked: a bound on sourcing loops
	// progs are the files shell tests run that may be the program under
	// test (→ why); tests the shell tests walked.
	progs map[string]string
	tests map[string]bool
}

// shEnv is the state of one shell as the walker follows it.
type shEnv struct {
	cwd     string // tree path of the working directory
	cwdOK   bool   // false once the working directory is unknown
	script  string // the file being run or sourced ("" for a command line)
	vars    map[string]string
	unknown map[string]bool // variables assigned a value the walker cannot compute
	who     string          // what runs this text, for a Why: "test.sh", "the test command `make test`"
	// The positional parameters ($1…, "$@") when posState is posBound:
	// the arguments the script was run with (posOK: whether each could be
	// computed).
	pos      []string
	posOK    []bool
	posState int
	loops    int    // loops around the text being walked (shift in one loses the parameters)
	bats     string // the .bats file whose tests run this text: load and run are bats'
}

// posState values. Slices pos and posOK are replaced, never changed in
// place, so that copies may share them.
const (
	posUnbound = iota // not known (a command line, a script walked as a root): $1 is an unset variable
	posBound          // pos holds them
	posLost           // they were bound, then changed in a way the walker does not follow
)

// copy is the state of a subshell: what it assigns stays in it.
func (e *shEnv) copy() *shEnv {
	c := *e
	c.vars, c.unknown = map[string]string{}, map[string]bool{}
	for k, v := range e.vars {
		c.vars[k] = v
	}
	for k := range e.unknown {
		c.unknown[k] = true
	}
	return &c
}

// shOutside marks a value that names a place outside the tree ($HOME).
const shOutside = "\x00"

// shOutsideVars are variables that name places outside the tree.
var shOutsideVars = []string{"HOME", "TMPDIR", "GOPATH", "GOROOT", "GOBIN", "NVM_DIR", "CARGO_HOME", "RUSTUP_HOME", "PYENV_ROOT", "USER", "PATH", "SHELL"}

// newShEnv is a new shell in cwd, running script for who.
func newShEnv(cwd, script, who string) *shEnv {
	e := &shEnv{cwd: cwd, cwdOK: true, script: script, vars: map[string]string{}, unknown: map[string]bool{}, who: who}
	for _, v := range shOutsideVars {
		e.vars[v] = shOutside + v
	}
	return e
}

// shellSupport follows the test commands.
func (t *supportTree) shellSupport() shellResult {
	w := &shWalker{t: t, res: shellResult{py: map[string]string{}, js: map[string]string{}, configs: map[string]string{}}, seen: map[string]bool{}, makes: map[string]*mkFile{},
		progs: map[string]string{}, tests: map[string]bool{}}
	for _, c := range t.in.Commands {
		w.text(c, newShEnv("", "", "the test command `"+supportClip(c)+"`"), false)
	}
	w.testRoots()
	w.programs()
	return w.res
}

// text walks shell source. A script that cannot be parsed is a load the
// walker cannot follow.
func (w *shWalker) text(src string, env *shEnv, script bool) {
	if w.walks++; w.walks > 5000 {
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		if script {
			w.dynamic(env, "cannot be parsed")
		}
		return
	}
	w.stmts(f.Stmts, env)
}

// dynamic records a load the walker cannot resolve.
func (w *shWalker) dynamic(env *shEnv, what string) {
	dir := env.cwd
	if env.script != "" {
		dir = testArea(env.script)
	}
	w.t.dynamic = append(w.t.dynamic, supportDynamic{dir: dir, exts: shellFiles, why: env.who + " " + what + " (shell)"})
}

// stmts walks statements in order: assignments and cd change env for
// what follows; a subshell's do not.
func (w *shWalker) stmts(list []*syntax.Stmt, env *shEnv) {
	for _, s := range list {
		w.stmt(s, env)
	}
}

// stmt walks one statement: every branch of a conditional, every body
// of a loop, every function where it is declared (it may be called).
func (w *shWalker) stmt(s *syntax.Stmt, env *shEnv) {
	if s == nil {
		return
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(c, env)
	case *syntax.BinaryCmd:
		w.stmt(c.X, env)
		w.stmt(c.Y, env)
	case *syntax.Block:
		w.stmts(c.Stmts, env)
	case *syntax.Subshell:
		w.stmts(c.Stmts, env.copy())
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond, env)
			w.stmts(ic.Then, env)
		}
	case *syntax.WhileClause:
		env.loops++
		w.stmts(c.Cond, env)
		w.stmts(c.Do, env)
		env.loops--
	case *syntax.ForClause:
		env.loops++
		w.forLoop(c, env)
		env.loops--
	case *syntax.CaseClause:
		for _, it := range c.Items {
			w.stmts(it.Stmts, env)
		}
	case *syntax.FuncDecl:
		// It may be called: follow it where it stands, with the
		// arguments of a call the walker does not know.
		pos, posOK, state := env.pos, env.posOK, env.posState
		env.pos, env.posOK, env.posState = nil, nil, posLost
		w.stmt(c.Body, env)
		env.pos, env.posOK, env.posState = pos, posOK, state
	case *syntax.DeclClause:
		for _, a := range c.Args {
			w.assign(a, env)
		}
	case *syntax.TimeClause:
		w.stmt(c.Stmt, env)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, env)
	}
}

// assign records a variable's value, or that it cannot be computed.
func (w *shWalker) assign(a *syntax.Assign, env *shEnv) {
	if a == nil || a.Name == nil || a.Naked || a.Value == nil {
		return
	}
	name := a.Name.Value
	if v, ok := w.word(a.Value, env); ok {
		env.vars[name] = v
		delete(env.unknown, name)
		if name == "PYTHONPATH" {
			w.pythonPath(v, env)
		}
	} else {
		delete(env.vars, name)
		env.unknown[name] = true
	}
}

// call follows a simple command.
func (w *shWalker) call(c *syntax.CallExpr, env *shEnv) {
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			w.assign(a, env)
		}
		return
	}
	for _, a := range c.Assigns {
		if a.Name != nil && a.Name.Value == "PYTHONPATH" && a.Value != nil {
			if v, ok := w.word(a.Value, env); ok {
				w.pythonPath(v, env)
			}
		}
	}
	var args []string
	var oks []bool
	for _, a := range c.Args {
		if vals, valOKs, ok := w.allParams(a, env); ok {
			args, oks = append(args, vals...), append(oks, valOKs...)
			continue
		}
		v, ok := w.word(a, env)
		args, oks = append(args, v), append(oks, ok)
	}
	w.command(args, oks, env)
}

var shPython = regexp.MustCompile(`^(?:python[0-9.]*|pypy[0-9.]*|py)$`)

// command follows one command: args are its words, oks whether each could
// be computed (a word that could not holds what could: "/run.sh" of
// "$DIR/run.sh").
func (w *shWalker) command(args []string, oks []bool, env *shEnv) {
	i := 0
wrappers:
	for i < len(args) && oks[i] {
		switch path.Base(args[i]) {
		case "command", "type", "which", "hash":
			if i+1 < len(args) && strings.HasPrefix(args[i+1], "-") || args[i] != "command" {
				return // a query: nothing runs
			}
			i++
		case "exec", "builtin", "time", "nohup", "sudo", "xvfb-run", "npx", "pnpx", "bunx", "cross-env", "dotenv", "c8", "nyc", "stdbuf":
			for i++; i < len(args) && (strings.HasPrefix(args[i], "-") || strings.Contains(args[i], "=") && !strings.Contains(args[i], "/")); i++ {
			}
		case "env":
			for i++; i < len(args) && (strings.HasPrefix(args[i], "-") || strings.Contains(args[i], "=")); i++ {
			}
		case "nice":
			for i++; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
				if args[i] == "-n" {
					i++
				}
			}
		case "timeout":
			for i++; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
				if args[i] == "-s" || args[i] == "-k" {
					i++
				}
			}
			i++ // the duration
		case "run": // bats' run CMD
			if env.bats == "" {
				break wrappers
			}
			for i++; i < len(args) && (strings.HasPrefix(args[i], "-") || args[i] == "!"); i++ {
			}
		case "poetry", "pipenv", "uv", "hatch", "pdm", "rye":
			if i+1 < len(args) && args[i+1] == "run" {
				i += 2
				continue
			}
			break wrappers
		default:
			break wrappers
		}
	}
	if i >= len(args) {
		return
	}
	if !oks[i] {
		if strings.Contains(args[i], "/") {
			w.dynamic(env, "runs a computed path")
		}
		return
	}
	name, rest, restOK := args[i], args[i+1:], oks[i+1:]
	base := path.Base(name)
	switch {
	case base == "cd":
		if len(rest) == 0 || !restOK[0] || rest[0] == "-" || strings.HasPrefix(rest[0], shOutside) || strings.HasPrefix(rest[0], "~") {
			env.cwdOK = false
			return
		}
		env.cwd, env.cwdOK = w.treePath(rest[0], env)
	case base == "source" || base == ".":
		if len(rest) == 0 {
			return
		}
		if !restOK[0] {
			w.dynamic(env, "sources a computed path")
			return
		}
		for _, f := range w.find(rest[0], env) {
			w.runFile(f, env, "sourced by", "sh", true, shArgv(rest[1:], restOK[1:]))
		}
	case base == "load" && env.bats != "":
		w.batsLoad(rest, restOK, env)
	case base == "bats":
		w.batsCommand(rest, restOK, env)
	case base == "shift":
		w.shift(rest, restOK, env)
	case base == "set":
		w.setParams(rest, restOK, env)
	case slices.Contains([]string{"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"}, base):
		for j := 0; j < len(rest); j++ {
			switch a := rest[j]; {
			case a == "-c" || len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'c'):
				if j+1 < len(rest) && restOK[j+1] {
					w.text(rest[j+1], env.copy(), false)
				}
				return
			case a != "" && (a[0] == '-' || a[0] == '+') && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "o"):
				j++ // -o pipefail, -eo pipefail
			case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			case !restOK[j]:
				w.dynamic(env, "runs a computed path")
				return
			default:
				w.runScript(a, env, "run by", "sh", rest[j+1:], restOK[j+1:])
				return
			}
		}
	case base == "make" || base == "gmake":
		w.makeCommand(rest, restOK, env)
	case slices.Contains([]string{"npm", "yarn", "pnpm", "bun"}, base):
		w.npm(base, rest, restOK, env)
	case base == "tox":
		w.tox(env)
	case shPython.MatchString(base):
		w.python(rest, restOK, env)
	case slices.Contains([]string{"node", "nodejs", "ts-node", "tsx", "deno"}, base):
		w.node(base, rest, restOK, env)
	case slices.Contains([]string{"jest", "vitest", "mocha", "ava", "tap", "tape", "playwright", "cypress", "karma", "jasmine", "uvu", "ts-mocha", "pytest", "py.test"}, base):
		w.runner(base, rest, restOK, env)
	case base == "go" && len(rest) > 1 && rest[0] == "run":
		for j, a := range rest[1:] {
			if strings.HasSuffix(a, ".go") && restOK[j+1] {
				w.runPath(a, env, "run by", "-")
			}
		}
	case base == "eval":
		if !slices.Contains(restOK, false) {
			w.text(strings.Join(rest, " "), env, false)
		}
	case strings.Contains(name, "/"):
		w.runScript(name, env, "run by", "", rest, restOK)
	}
}

// pythonPath records the tree's directories a PYTHONPATH value names.
func (w *shWalker) pythonPath(v string, env *shEnv) {
	for _, e := range strings.Split(v, ":") {
		if d, ok := w.treePath(e, env); ok && w.t.dirs[d] && !slices.Contains(w.t.pyPath, d) && e != "" {
			w.t.pyPath = append(w.t.pyPath, d)
		}
	}
}

// supportClip shortens a command for a Why.
func supportClip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= 60 {
		return s
	}
	i := 57
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// treePath resolves a value to a tree path; ok is false outside the tree.
func (w *shWalker) treePath(v string, env *shEnv) (string, bool) {
	if strings.HasPrefix(v, shOutside) || strings.HasPrefix(v, "~") {
		return "", false
	}
	if strings.HasPrefix(v, "/") {
		return pathJoin(strings.TrimPrefix(path.Clean(v), "/"))
	}
	if !env.cwdOK {
		return "", false
	}
	return pathJoin(env.cwd, v)
}

// find returns the files of the tree a path names (a glob may name
// several): relative to the working directory, and to the running script's
// directory.
func (w *shWalker) find(v string, env *shEnv) []string {
	if strings.HasPrefix(v, shOutside) || strings.HasPrefix(v, "~") || v == "" {
		return nil
	}
	var cands []string
	if p, ok := w.treePath(v, env); ok {
		cands = append(cands, p)
	}
	if !strings.HasPrefix(v, "/") {
		if env.script != "" {
			if p, ok := pathJoin(pathDir(env.script), v); ok {
				cands = append(cands, p)
			}
		}
		if !env.cwdOK {
			if p, ok := pathJoin(v); ok {
				cands = append(cands, p)
			}
		}
	}
	for _, c := range cands {
		var out []string
		if strings.ContainsAny(c, "*?[") {
			for _, f := range w.t.children[pathDir(c)] {
				if ok, _ := path.Match(c, f); ok {
					out = append(out, f)
				}
			}
		} else if w.t.files[c] {
			out = append(out, c)
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// runPath follows a file the shell runs (or names) by path.
func (w *shWalker) runPath(v string, env *shEnv, verb, kind string) {
	for _, f := range w.find(v, env) {
		w.runFile(f, env, verb, kind, false, nil)
	}
}

// runScript follows a file the shell runs by path with arguments: a
// shell script's positional parameters are bound to them.
func (w *shWalker) runScript(v string, env *shEnv, verb, kind string, args []string, oks []bool) {
	for _, f := range w.find(v, env) {
		w.runFile(f, env, verb, kind, false, shArgv(args, oks))
	}
}

// runFile records f as support and follows it: a shell script is walked,
// a Python or JavaScript file is handed to its ecosystem. What a shell
// test runs is the program under test, and is only noted (progs). argv
// are the arguments of the run or of the source (nil: none known).
func (w *shWalker) runFile(f string, env *shEnv, verb, kind string, source bool, argv *shArgs) {
	why := verb + " " + env.who
	if kind == "" {
		kind = scriptKind(f, w.t.content(f))
	}
	if !source && verb == "run by" && w.testScript(env) && !IsTestPath(f) && !isShellTest(f) {
		mark := shHarnessMark(f)
		if mark == "" {
			if _, ok := w.progs[f]; !ok {
				w.progs[f] = why
			}
			return
		}
		why += ", named like test support (" + mark + ")"
	}
	w.t.support(f, why)
	switch kind {
	case "py":
		if _, ok := w.res.py[f]; !ok {
			w.res.py[f] = why
		}
	case "js":
		if _, ok := w.res.js[f]; !ok {
			w.res.js[f] = why
		}
	case "sh":
		key := verb + "\x00" + f + "\x00" + env.cwd + "\x00" + argv.key()
		if w.depth > 12 || (!source && w.seen[key]) {
			return
		}
		w.seen[key] = true
		w.depth++
		defer func() { w.depth-- }()
		if isShellTest(f) {
			w.tests[f] = true
		}
		src := w.t.content(f)
		if path.Ext(f) == ".bats" {
			src = batsSource(src)
		}
		if source {
			saved := *env
			env.script, env.who = f, f
			if path.Ext(f) == ".bats" {
				env.bats = f
			}
			// `. lib.sh a b` binds lib.sh's parameters while it runs;
			// without arguments it shares the caller's.
			bound := argv != nil && len(argv.vals) > 0
			if bound {
				env.pos, env.posOK, env.posState = argv.vals, argv.oks, posBound
			}
			w.text(src, env, true)
			env.script, env.who, env.bats = saved.script, saved.who, saved.bats
			if bound {
				env.pos, env.posOK, env.posState = saved.pos, saved.posOK, saved.posState
			}
			return
		}
		child := newShEnv(env.cwd, f, f)
		child.cwdOK = env.cwdOK
		if path.Ext(f) == ".bats" {
			child.bats = f
		}
		if argv != nil {
			child.pos, child.posOK, child.posState = argv.vals, argv.oks, posBound
		}
		w.text(src, child, true)
	}
}

// scriptKind says how a file the shell runs is read: "py", "js", "sh", or
// "" for a program the walker does not follow.
func scriptKind(f, src string) string {
	switch ext := path.Ext(f); {
	case ext == ".py":
		return "py"
	case isJSFile(f):
		return "js"
	case ext == ".sh" || ext == ".bash" || ext == ".zsh" || ext == ".ksh" || ext == ".bats":
		return "sh"
	case ext != "":
		return ""
	}
	line, _, _ := strings.Cut(src, "\n")
	switch {
	case !strings.HasPrefix(line, "#!"):
		return "sh"
	case strings.Contains(line, "python"):
		return "py"
	case strings.Contains(line, "node") || strings.Contains(line, "deno") || strings.Contains(line, "bun"):
		return "js"
	case strings.Contains(line, "sh"):
		return "sh"
	}
	return ""
}

// word computes a word's value; ok is false when part of it cannot be
// computed. Command substitutions in it are followed too.
func (w *shWalker) word(wd *syntax.Word, env *shEnv) (string, bool) {
	var b strings.Builder
	ok := true
	for _, p := range wd.Parts {
		s, k := w.part(p, env, false)
		b.WriteString(s)
		ok = ok && k
	}
	return b.String(), ok
}

// part computes a part of a word.
func (w *shWalker) part(p syntax.WordPart, env *shEnv, quoted bool) (string, bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		return shUnescape(p.Value, quoted), true
	case *syntax.SglQuoted:
		return p.Value, true
	case *syntax.DblQuoted:
		var b strings.Builder
		ok := true
		for _, q := range p.Parts {
			s, k := w.part(q, env, true)
			b.WriteString(s)
			ok = ok && k
		}
		return b.String(), ok
	case *syntax.ParamExp:
		return w.param(p, env)
	case *syntax.CmdSubst:
		return w.subst(p, env)
	}
	return "", false
}

// shUnescape removes a word's backslashes as the shell does.
func shUnescape(s string, quoted bool) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lookup returns a variable's value: set is false when it is unknown.
func (w *shWalker) lookup(name string, env *shEnv) (val string, set bool) {
	switch name {
	case "0", "BASH_SOURCE":
		if env.script != "" {
			return "/" + env.script, true
		}
		return "", false
	case "PWD":
		if env.cwdOK {
			return "/" + env.cwd, true
		}
		return "", false
	case "BATS_TEST_DIRNAME", "BATS_TEST_FILENAME":
		if env.bats == "" {
			break
		}
		if name == "BATS_TEST_FILENAME" {
			return "/" + env.bats, true
		}
		return "/" + pathDir(env.bats), true
	}
	v, ok := env.vars[name]
	return v, ok
}

// param computes a parameter expansion: $X, ${X:-default}, and the
// ${0%/*} and ${X##*/} forms scripts use to find their directory.
func (w *shWalker) param(p *syntax.ParamExp, env *shEnv) (string, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Slice != nil || p.Repl != nil || p.Names != 0 || len(p.Modifiers) > 0 {
		return "", false
	}
	name := p.Param.Value
	val, set := w.lookup(name, env)
	unknown := env.unknown[name]
	if pv, pset, known, ok := env.positional(name); ok {
		if p.Exp == nil {
			return pv, known // an unset parameter of a bound list is empty
		}
		val, set, unknown = pv, pset && known, !known
	}
	if p.Exp == nil {
		return val, set
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		null := p.Exp.Op == syntax.DefaultUnsetOrNull || p.Exp.Op == syntax.AssignUnsetOrNull
		switch {
		case set && (val != "" || !null):
			return val, true
		case !set && unknown:
			return "", false
		}
		if p.Exp.Word == nil {
			return "", true
		}
		return w.word(p.Exp.Word, env)
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
		if !set || p.Exp.Word == nil {
			return "", false
		}
		pat, ok := w.word(p.Exp.Word, env)
		switch {
		case !ok:
			return "", false
		case pat == "/*" && (p.Exp.Op == syntax.RemSmallSuffix):
			if i := strings.LastIndexByte(val, '/'); i > 0 {
				return val[:i], true
			} else if i == 0 {
				return "/", true
			}
			return val, true
		case pat == "*/" && (p.Exp.Op == syntax.RemLargePrefix):
			return path.Base(val), true
		}
	}
	return "", false
}

// subst computes the command substitutions scripts use to find
// themselves: $(dirname "$0"), $(cd "$(dirname "$0")" && pwd), $(pwd),
// $(realpath x), $(git rev-parse --show-toplevel). What it runs is
// followed too, in a copy of the shell.
func (w *shWalker) subst(cs *syntax.CmdSubst, env *shEnv) (string, bool) {
	if w.walks++; w.walks > 5000 {
		return "", false
	}
	w.stmts(cs.Stmts, env.copy())
	var calls []*syntax.CallExpr
	var flat func(s *syntax.Stmt) bool
	flat = func(s *syntax.Stmt) bool {
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			calls = append(calls, c)
			return len(c.Args) > 0
		case *syntax.BinaryCmd:
			return c.Op == syntax.AndStmt && flat(c.X) && flat(c.Y)
		}
		return false
	}
	for _, s := range cs.Stmts {
		if !flat(s) {
			return "", false
		}
	}
	// The working directory may be unknown (a script walked as a root):
	// only a relative path needs it.
	cur, curOK, out, have := "/"+env.cwd, env.cwdOK, "", false
	relative := false
	abs := func(v string) string {
		if strings.HasPrefix(v, "/") {
			return path.Clean(v)
		}
		relative = relative || !curOK
		return path.Join(cur, v)
	}
	for _, c := range calls {
		var args []string
		for _, a := range c.Args {
			v, ok := w.word(a, env)
			if !ok || strings.HasPrefix(v, shOutside) {
				return "", false
			}
			args = append(args, v)
		}
		last := args[len(args)-1]
		switch args[0] {
		case "cd":
			if len(args) < 2 {
				return "", false
			}
			cur = abs(last)
			curOK = curOK || strings.HasPrefix(last, "/")
		case "pwd":
			out, have = cur, true
			relative = relative || !curOK
		case "dirname":
			out, have = path.Dir(abs(last)), len(args) > 1
		case "basename":
			out, have = path.Base(last), len(args) > 1
		case "realpath", "readlink":
			out, have = abs(last), len(args) > 1
		case "git":
			if !slices.Contains(args, "--show-toplevel") {
				return "", false
			}
			out, have = "/", true
		default:
			return "", false
		}
		if relative {
			return "", false
		}
	}
	return out, have
}
