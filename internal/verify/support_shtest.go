package verify

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What a shell test runs.
//
// A shell test (test.sh, tests/*.sh, *_test.sh, *.bats) exercises the
// program under test by running it: `sh calc.sh 2 3`, `./calc`,
// `$(python3 calc.py 2 3)`. What it runs is code, and what it sources is
// support. What the test command itself, a Makefile recipe or a
// package.json script runs is the harness (support), and so is what the
// harness runs, what a sourced library runs, and a file that a shell test
// runs but that is also sourced, or that is named or placed like test
// support (tools/tap.sh, scripts/test-setup.sh, e2e/…, helpers/…).
//
// Shell tests are the roots of the walk even when no test command
// reaches them (a runner loops over arguments the walker cannot compute,
// or the test command is not a shell one): what they source is support.

// shArgs are the arguments a script is run or sourced with.
type shArgs struct {
	vals []string
	oks  []bool
}

// shArgv makes the arguments of a run (empty: known to be none).
func shArgv(vals []string, oks []bool) *shArgs {
	return &shArgs{vals: slices.Clone(vals), oks: slices.Clone(oks)}
}

// key tells runs with different arguments apart.
func (a *shArgs) key() string {
	if a == nil {
		return "?"
	}
	var b strings.Builder
	for i, v := range a.vals {
		if !a.oks[i] {
			v = "\x00?"
		}
		b.WriteString(v)
		b.WriteByte(0)
	}
	return b.String()
}

// positional returns a positional parameter ($1…, $@, $*, $#) when the
// list is bound or lost: set is false for one past the list, known false
// when it cannot be computed; ok is false for another name, or while the
// list is unbound (then it is an ordinary unset variable).
func (e *shEnv) positional(name string) (val string, set, known, ok bool) {
	n, err := strconv.Atoi(name)
	if (err != nil || n < 1) && name != "@" && name != "*" && name != "#" {
		return "", false, false, false
	}
	switch e.posState {
	case posUnbound:
		return "", false, false, false
	case posLost:
		return "", false, false, true
	}
	switch name {
	case "@", "*":
		return strings.Join(e.pos, " "), len(e.pos) > 0, !slices.Contains(e.posOK, false), true
	case "#":
		return strconv.Itoa(len(e.pos)), true, true, true
	}
	if n > len(e.pos) {
		return "", false, true, true
	}
	return e.pos[n-1], true, e.posOK[n-1], true
}

// allParams expands a word that is all the positional parameters ("$@",
// $@, $*) into one word each; ok is false for another word, or while the
// list is not bound.
func (w *shWalker) allParams(wd *syntax.Word, env *shEnv) ([]string, []bool, bool) {
	if env.posState != posBound || len(wd.Parts) != 1 {
		return nil, nil, false
	}
	p := wd.Parts[0]
	if dq, ok := p.(*syntax.DblQuoted); ok {
		if len(dq.Parts) != 1 {
			return nil, nil, false
		}
		p = dq.Parts[0]
		if pe, ok := p.(*syntax.ParamExp); !ok || pe.Param == nil || pe.Param.Value != "@" {
			return nil, nil, false // "$*" is one word
		}
	}
	pe, ok := p.(*syntax.ParamExp)
	if !ok || pe.Param == nil || (pe.Param.Value != "@" && pe.Param.Value != "*") || pe.Exp != nil || pe.Excl || pe.Length ||
		pe.Slice != nil || pe.Repl != nil || pe.Index != nil || pe.Names != 0 || len(pe.Modifiers) > 0 {
		return nil, nil, false
	}
	return env.pos, env.posOK, true
}

// forLoop walks a for loop: once for each value of a loop over the
// positional parameters or over literal words, else once with its
// variable unknown.
func (w *shWalker) forLoop(c *syntax.ForClause, env *shEnv) {
	it, ok := c.Loop.(*syntax.WordIter)
	if !ok || it.Name == nil {
		w.stmts(c.Do, env)
		return
	}
	name := it.Name.Value
	// Each value's walk counts against the walker's bound (nested loops).
	if vals, ok := w.loopValues(it, env); ok && len(vals) <= 32 && w.walks+len(vals) <= 5000 {
		for _, v := range vals {
			w.walks++
			env.vars[name] = v
			delete(env.unknown, name)
			w.stmts(c.Do, env)
		}
		return
	}
	delete(env.vars, name)
	env.unknown[name] = true
	w.stmts(c.Do, env)
}

// loopValues returns the values a for loop's variable takes, when the
// walker knows them all: the bound positional parameters (`for t`, `for t
// in "$@"`), and words without globs or field splitting.
func (w *shWalker) loopValues(it *syntax.WordIter, env *shEnv) ([]string, bool) {
	if !it.InPos.IsValid() { // for t; do: the positional parameters
		if env.posState != posBound || slices.Contains(env.posOK, false) {
			return nil, false
		}
		return env.pos, true
	}
	var out []string
	for _, wd := range it.Items {
		if vals, oks, ok := w.allParams(wd, env); ok {
			if slices.Contains(oks, false) {
				return nil, false
			}
			out = append(out, vals...)
			continue
		}
		v, ok := w.word(wd, env)
		if !ok || v == "" || strings.ContainsAny(v, "*?[ \t\n") {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// shift drops positional parameters; in a loop, or by a count the walker
// cannot compute, they are lost.
func (w *shWalker) shift(args []string, oks []bool, env *shEnv) {
	if env.posState != posBound {
		return
	}
	n := 1
	if len(args) > 0 {
		var err error
		if n, err = strconv.Atoi(args[0]); !oks[0] || err != nil || n < 0 {
			n = -1
		}
	}
	if env.loops > 0 || n < 0 {
		env.pos, env.posOK, env.posState = nil, nil, posLost
		return
	}
	n = min(n, len(env.pos))
	env.pos, env.posOK = env.pos[n:], env.posOK[n:]
}

// setParams follows `set -- a b`, which binds the positional parameters.
func (w *shWalker) setParams(args []string, oks []bool, env *shEnv) {
	for j, a := range args {
		if !oks[j] {
			return
		}
		if a == "--" {
			env.pos, env.posOK, env.posState = slices.Clone(args[j+1:]), slices.Clone(oks[j+1:]), posBound
			return
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return
		}
	}
}

// testScript reports whether env is the shell of a shell test.
func (w *shWalker) testScript(env *shEnv) bool {
	return env.script != "" && isShellTest(env.script)
}

// scriptDirs hold a project's scripts: scripts/test-* there are the
// harness, not tests.
var scriptDirs = map[string]bool{"scripts": true, "script": true, "tools": true, "tool": true, "bin": true, "ci": true, "hack": true, "build": true, "dev": true, "utils": true, "util": true, ".ci": true, ".github": true}

// isShellTest reports whether p is a shell test: a test path of a shell
// kind (test.sh, run_tests.sh, tests/*.sh), a .bats file, or a shell file
// named like a test (calc_test.sh, test_calc.sh, tests.sh).
func isShellTest(p string) bool {
	base := path.Base(p)
	ext := path.Ext(base)
	switch {
	case ext == ".bats":
		return true
	case ext != "" && !slices.Contains(shellFiles, ext):
		return false
	case IsTestConfig(p):
		return ext != "" // test.sh, not a Makefile
	case IsTestPath(p):
		return true
	case ext == "":
		return false
	}
	stem := strings.ToLower(strings.TrimSuffix(base, ext))
	for _, s := range []string{"_test", "-test", ".test", "_tests", "-tests", "_spec", "-spec"} {
		if strings.HasSuffix(stem, s) {
			return true
		}
	}
	if stem == "test" || stem == "tests" {
		return true
	}
	if strings.HasPrefix(stem, "test_") || strings.HasPrefix(stem, "test-") {
		return !scriptDirs[path.Base(pathDir(p))]
	}
	return false
}

// shHarnessAreas are directories whose scripts a test runs as its harness
// (beside supportName's and testAreaDirs).
var shHarnessAreas = map[string]bool{"t": true, "ci": true, ".ci": true, ".github": true, ".circleci": true}

// shHarnessWords are words of a name that say a script is the tests'
// harness, not the program under test.
var shHarnessWords = map[string]bool{
	"helper": true, "helpers": true, "runner": true, "runners": true, "harness": true, "tap": true,
	"assert": true, "asserts": true, "assertion": true, "assertions": true, "expect": true,
	"setup": true, "teardown": true, "fixture": true, "fixtures": true, "mock": true, "mocks": true,
	"stub": true, "stubs": true, "fake": true, "fakes": true, "spy": true, "bats": true, "shunit": true, "shunit2": true,
}

// shHarnessMark returns the element of p (a directory or the file's stem)
// that names or places it as test support, or "": support-named
// (supportName), under a test area (e2e/, t/, ci/), or a name with a
// word of a test, a runner, a helper or a harness (tools/tap.sh,
// scripts/test-setup.sh, run-tests.sh, testrunner.sh).
func shHarnessMark(p string) string {
	if n := supportName(p); n != "" {
		return n
	}
	parts := strings.Split(p, "/")
	for i, part := range parts {
		name := part
		if i == len(parts)-1 {
			name = strings.TrimSuffix(part, path.Ext(part))
		} else if testAreaDirs[strings.ToLower(part)] || shHarnessAreas[strings.ToLower(part)] {
			return part
		}
		for _, wd := range nameWords(name) {
			if shHarnessWords[wd] || strings.HasPrefix(wd, "test") || strings.HasPrefix(wd, "assert") || strings.HasPrefix(wd, "tap2") ||
				strings.HasSuffix(wd, "runner") || strings.HasSuffix(wd, "harness") || strings.HasSuffix(wd, "helper") || strings.HasSuffix(wd, "helpers") {
				return part
			}
		}
	}
	return ""
}

// nameWords splits a name into lower-case words: at every character
// that is not a letter or digit, and where a capital follows a small
// letter (testRunner).
func nameWords(name string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(name); i++ {
		c := byte(0)
		if i < len(name) {
			c = name[i]
		}
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		camel := alnum && start >= 0 && c >= 'A' && c <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z'
		if start >= 0 && (!alnum || camel) {
			out = append(out, strings.ToLower(name[start:i]))
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
	}
	return out
}

// batsTest is a bats test's header, as bats reads it: @test "name" {,
// which a body may follow on the line.
var batsTest = regexp.MustCompile(`(?m)^([ \t]*)@test[ \t]+.*[^ \t][ \t]+\{(.*)$`)

// batsSource makes a .bats file shell: each test a function.
func batsSource(src string) string {
	return batsTest.ReplaceAllString(src, "${1}bats_test() {${2}")
}

// batsLoad follows bats' load NAME: NAME.bash, or NAME, beside the .bats
// file.
func (w *shWalker) batsLoad(args []string, oks []bool, env *shEnv) {
	if len(args) == 0 {
		return
	}
	if !oks[0] {
		w.dynamic(env, "loads a computed path")
		return
	}
	name := args[0]
	for _, c := range []string{name + ".bash", name} {
		var p string
		var ok bool
		if strings.HasPrefix(c, "/") {
			p, ok = w.treePath(c, env)
		} else {
			p, ok = pathJoin(pathDir(env.bats), c)
		}
		if ok && w.t.files[p] {
			w.runFile(p, env, "sourced by", "sh", true, nil)
			return
		}
	}
}

// batsCommand follows `bats [opts] file|dir…`: the .bats files it runs.
func (w *shWalker) batsCommand(args []string, oks []bool, env *shEnv) {
	recursive := slices.Contains(args, "-r") || slices.Contains(args, "--recursive")
	for j, a := range args {
		if !oks[j] || strings.HasPrefix(a, "-") {
			continue
		}
		if files := w.find(a, env); len(files) > 0 {
			for _, f := range files {
				w.runFile(f, env, "run by", "sh", false, shArgv(nil, nil))
			}
			continue
		}
		d, ok := w.treePath(a, env)
		if !ok || !w.t.dirs[d] {
			continue
		}
		for _, f := range w.t.under(d) {
			if path.Ext(f) == ".bats" && (recursive || pathDir(f) == d) {
				w.runFile(f, env, "run by", "sh", false, shArgv(nil, nil))
			}
		}
	}
}

// testRoots walks the shell tests the test commands did not reach, from
// an unknown working directory with unknown arguments: what they source
// is support, what they run the program under test.
func (w *shWalker) testRoots() {
	for _, p := range w.t.sorted {
		if w.tests[p] || !isShellTest(p) || hasComponent(p, dependencyDirs...) ||
			hasComponent(p, "testdata", "fixtures", "__fixtures__", "test-data", "test_data", "test-fixtures", "test_fixtures") {
			continue
		}
		src := w.t.content(p)
		if ext := path.Ext(p); ext == "" {
			line, _, _ := strings.Cut(src, "\n")
			if !strings.HasPrefix(line, "#!") || scriptKind(p, src) != "sh" {
				continue // data, or another language's program
			}
		}
		w.t.support(p, "a shell test (by its name)")
		env := newShEnv("", p, p)
		env.cwdOK = false
		w.runFile(p, env, "run by", "sh", false, nil)
	}
}

// programs decides what the shell tests run: code, but for a file
// something else made support (it is sourced, the harness runs it).
func (w *shWalker) programs() {
	for _, f := range sortedKeys(w.progs) {
		if _, listed := w.t.verdict[f]; !listed {
			w.t.codeFile(f)
		}
	}
}
