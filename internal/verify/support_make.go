package verify

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// mkFile is a makefile as make reads it, with the files it includes.
type mkFile struct {
	path  string
	dir   string // where make runs
	vars  map[string]string
	rules []mkRule
	first string // the default target
}

// mkRule is one rule: its targets, prerequisites and recipe lines.
type mkRule struct {
	targets, prereqs, recipe []string
}

var (
	mkInclude = regexp.MustCompile(`^(?:-include|sinclude|include)\s+(.+)$`)
	mkAssign  = regexp.MustCompile(`^([^:#=\s]+)\s*(::=|:::=|:=|\?=|\+=|!=|=)\s*(.*)$`)
	mkTgtVar  = regexp.MustCompile(`^\s*[^:#=\s]+\s*(?:::=|:=|\?=|\+=|!=|=)`)
)

// makeCommand follows `make [-C dir] [-f file] [targets]`: the makefile,
// what it includes, and the recipes of the targets and their
// prerequisites.
func (w *shWalker) makeCommand(args []string, oks []bool, env *shEnv) {
	dir, dirOK := env.cwd, env.cwdOK
	var files, targets []string
	for j := 0; j < len(args); j++ {
		if !oks[j] {
			continue
		}
		a := args[j]
		next := func() string {
			if j+1 < len(args) && oks[j+1] {
				j++
				return args[j]
			}
			return ""
		}
		switch {
		case a == "-C" || a == "--directory":
			dir, dirOK = w.treePath(next(), env)
		case strings.HasPrefix(a, "--directory="):
			dir, dirOK = w.treePath(strings.TrimPrefix(a, "--directory="), env)
		case strings.HasPrefix(a, "-C"):
			dir, dirOK = w.treePath(a[2:], env)
		case a == "-f" || a == "--file" || a == "--makefile":
			files = append(files, next())
		case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "--makefile="):
			files = append(files, a[strings.IndexByte(a, '=')+1:])
		case strings.HasPrefix(a, "-f") && !strings.HasPrefix(a, "--"):
			files = append(files, a[2:])
		case a == "-I" || a == "-o" || a == "-W" || a == "--include-dir" || a == "--old-file" || a == "--what-if":
			next()
		case a == "-j" || a == "-l":
			if j+1 < len(args) && strings.Trim(args[j+1], "0123456789.") == "" {
				j++
			}
		case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
		default:
			targets = append(targets, a)
		}
	}
	if !dirOK {
		return
	}
	if len(files) == 0 {
		for _, n := range []string{"GNUmakefile", "makefile", "Makefile"} {
			if w.t.files[path.Join(dir, n)] {
				files = append(files, n)
				break
			}
		}
	}
	for _, f := range files {
		p, ok := pathJoin(dir, f)
		if !ok || !w.t.files[p] {
			continue
		}
		w.t.support(p, "read by "+env.who)
		w.makeTargets(w.loadMake(p, dir), targets)
	}
}

// loadMake reads a makefile for make running in dir.
func (w *shWalker) loadMake(file, dir string) *mkFile {
	key := file + "\x00" + dir
	if mf, ok := w.makes[key]; ok {
		return mf
	}
	mf := &mkFile{path: file, dir: dir, vars: map[string]string{"CURDIR": "/" + dir, "MAKE": "make"}}
	w.makes[key] = mf
	w.parseMake(mf, file, 0)
	return mf
}

// parseMake reads file's variables, rules and includes into mf.
func (w *shWalker) parseMake(mf *mkFile, file string, depth int) {
	var cur *mkRule
	define := false
	src := strings.ReplaceAll(w.t.content(file), "\\\n", " ")
	for _, raw := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(raw)
		if define {
			define = !strings.HasPrefix(trimmed, "endef")
			continue
		}
		if strings.HasPrefix(raw, "\t") {
			if cur != nil {
				cur.recipe = append(cur.recipe, raw[1:])
			}
			continue
		}
		if i := strings.IndexByte(trimmed, '#'); i >= 0 && (i == 0 || trimmed[i-1] != '\\') {
			trimmed = strings.TrimSpace(trimmed[:i])
		}
		if trimmed == "" {
			continue
		}
		word, _, _ := strings.Cut(trimmed, " ")
		switch word {
		case "define":
			define = true
			continue
		case "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "vpath", "unexport", ".PHONY:":
			continue
		case "export", "override", "private":
			trimmed = strings.TrimSpace(strings.TrimPrefix(trimmed, word))
		}
		if m := mkInclude.FindStringSubmatch(trimmed); m != nil {
			cur = nil
			v, ok := mf.expand(m[1], nil, w.t)
			if !ok {
				w.t.dynamic = append(w.t.dynamic, supportDynamic{dir: mf.dir, exts: []string{".mk"}, why: file + " includes a computed path (make)"})
			}
			for _, inc := range strings.Fields(v) {
				for _, f := range w.makeFind(inc, mf.dir, pathDir(file)) {
					w.t.support(f, "included by "+file)
					if depth < 8 {
						w.parseMake(mf, f, depth+1)
					}
				}
			}
			continue
		}
		if m := mkAssign.FindStringSubmatch(trimmed); m != nil {
			cur = nil
			name, op, val := m[1], m[2], m[3]
			switch op {
			case "?=":
				if _, ok := mf.vars[name]; !ok {
					mf.vars[name] = val
				}
			case "+=":
				mf.vars[name] = strings.TrimSpace(mf.vars[name] + " " + val)
			case ":=", "::=", ":::=":
				v, _ := mf.expand(val, nil, w.t)
				mf.vars[name] = strings.ReplaceAll(v, "$", "$$")
			case "!=":
				mf.vars[name] = "$(shell " + val + ")"
			default:
				mf.vars[name] = val
			}
			continue
		}
		left, right, ok := strings.Cut(trimmed, ":")
		if !ok {
			cur = nil
			continue
		}
		right = strings.TrimPrefix(right, ":")
		if mkTgtVar.MatchString(right) {
			cur = nil // a target-specific variable
			continue
		}
		recipe := ""
		right, recipe, _ = strings.Cut(right, ";")
		if i := strings.LastIndexByte(right, ':'); i >= 0 {
			right = right[i+1:] // a static pattern rule's prerequisites
		}
		right, _, _ = strings.Cut(right, "|")
		targets, _ := mf.expand(left, nil, w.t)
		prereqs, _ := mf.expand(right, nil, w.t)
		mf.rules = append(mf.rules, mkRule{targets: strings.Fields(targets), prereqs: strings.Fields(prereqs)})
		cur = &mf.rules[len(mf.rules)-1]
		if strings.TrimSpace(recipe) != "" {
			cur.recipe = append(cur.recipe, recipe)
		}
		if mf.first == "" {
			for _, tg := range cur.targets {
				if !strings.HasPrefix(tg, ".") && !strings.Contains(tg, "%") {
					mf.first = tg
					break
				}
			}
		}
	}
}

// makeFind returns the files an include names: relative to where make
// runs, then to the including makefile's directory; globs expand.
func (w *shWalker) makeFind(name string, dirs ...string) []string {
	name = strings.TrimPrefix(name, "/")
	for _, d := range dirs {
		p, ok := pathJoin(d, name)
		if !ok {
			continue
		}
		if strings.ContainsAny(p, "*?[") {
			var out []string
			for _, f := range w.t.children[pathDir(p)] {
				if m, _ := path.Match(p, f); m {
					out = append(out, f)
				}
			}
			if len(out) > 0 {
				return out
			}
		} else if w.t.files[p] {
			return []string{p}
		}
	}
	return nil
}

// makeTargets walks the recipes of targets (the default target when none
// is given) and of their prerequisites. A target no explicit rule makes
// (a pattern rule, a computed name) walks every recipe: fail closed.
func (w *shWalker) makeTargets(mf *mkFile, targets []string) {
	if len(targets) == 0 && mf.first != "" {
		targets = []string{mf.first}
	}
	requested := slices.Clone(targets)
	queue := slices.Clone(targets)
	all := false
	for len(queue) > 0 {
		tg := queue[0]
		queue = queue[1:]
		key := "make\x00" + mf.path + "\x00" + mf.dir + "\x00" + tg
		if w.seen[key] {
			continue
		}
		w.seen[key] = true
		found := false
		for i := range mf.rules {
			r := &mf.rules[i]
			if !slices.Contains(r.targets, tg) {
				continue
			}
			found = true
			queue = append(queue, r.prereqs...)
			w.recipe(mf, r, tg)
		}
		if !found && slices.Contains(requested, tg) {
			all = true
		}
	}
	if all {
		key := "make\x00" + mf.path + "\x00" + mf.dir + "\x00*"
		if !w.seen[key] {
			w.seen[key] = true
			for i := range mf.rules {
				r := &mf.rules[i]
				if len(r.targets) > 0 {
					w.recipe(mf, r, r.targets[0])
				}
			}
		}
	}
}

// recipe walks a rule's recipe lines as the shell runs them.
func (w *shWalker) recipe(mf *mkFile, r *mkRule, target string) {
	if w.depth > 12 {
		return
	}
	auto := map[string]string{"@": target, "^": strings.Join(r.prereqs, " "), "+": strings.Join(r.prereqs, " ")}
	if len(r.prereqs) > 0 {
		auto["<"] = r.prereqs[0]
	}
	w.depth++
	defer func() { w.depth-- }()
	for _, line := range r.recipe {
		line = strings.TrimLeft(line, " \t@+-")
		text, _ := mf.expand(line, auto, w.t)
		w.text(text, newShEnv(mf.dir, "", mf.path+" (target "+target+")"), false)
	}
}

// expand expands make's variable references in s. ok is false when a
// function the walker does not compute ($(shell …)) was left out, or a
// variable refers to itself.
func (mf *mkFile) expand(s string, auto map[string]string, t *supportTree) (string, bool) {
	e := &mkExpander{mf: mf, auto: auto, t: t, active: map[string]bool{}}
	return e.run(s, 0)
}

// mkExpander is one expansion, bounded.
type mkExpander struct {
	mf     *mkFile
	auto   map[string]string // automatic variables: $@, $<, $^
	t      *supportTree
	active map[string]bool // the variables being expanded
	steps  int
}

// variable expands a variable's value.
func (e *mkExpander) variable(name string, depth int) (string, bool) {
	if e.active[name] {
		return "", false
	}
	e.active[name] = true
	defer delete(e.active, name)
	return e.run(e.mf.vars[name], depth+1)
}

// run expands s.
func (e *mkExpander) run(s string, depth int) (string, bool) {
	mf, auto, t := e.mf, e.auto, e.t
	if e.steps++; depth > 10 || e.steps > 10000 {
		return "", false
	}
	if !strings.Contains(s, "$") {
		return s, true
	}
	var b strings.Builder
	ok := true
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		c := s[i+1]
		if c != '(' && c != '{' {
			if c == '$' {
				b.WriteByte('$')
			} else if v, found := auto[string(c)]; found {
				b.WriteString(v)
			} else {
				v, k := e.variable(string(c), depth)
				b.WriteString(v)
				ok = ok && k
			}
			i++
			continue
		}
		closer := byte(')')
		if c == '{' {
			closer = '}'
		}
		end, level := -1, 0
		for j := i + 1; j < len(s); j++ {
			if s[j] == c {
				level++
			} else if s[j] == closer {
				if level--; level == 0 {
					end = j
					break
				}
			}
		}
		if end < 0 {
			b.WriteString(s[i:])
			break
		}
		inner := s[i+2 : end]
		i = end
		if fn, arg, isFn := strings.Cut(inner, " "); isFn {
			switch fn {
			case "wildcard":
				a, k := e.run(arg, depth+1)
				ok = ok && k
				var out []string
				for _, g := range strings.Fields(a) {
					for _, f := range (&shWalker{t: t}).makeFind(g, mf.dir) {
						out = append(out, strings.TrimPrefix(strings.TrimPrefix(f, mf.dir), "/"))
					}
				}
				b.WriteString(strings.Join(out, " "))
			case "abspath", "realpath":
				a, k := e.run(strings.TrimSpace(arg), depth+1)
				ok = ok && k
				b.WriteString(path.Join("/"+mf.dir, a))
			default:
				ok = false
			}
			continue
		}
		name, k := e.run(inner, depth+1)
		ok = ok && k
		name, _, _ = strings.Cut(name, ":") // $(VAR:.c=.o)
		if v, found := auto[name]; found {
			b.WriteString(v)
			continue
		}
		v, k := e.variable(name, depth)
		b.WriteString(v)
		ok = ok && k
	}
	return b.String(), ok
}
