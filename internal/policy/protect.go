package policy

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ShellWritesProtected reports, best effort, whether command would write
// (redirect into, rm, mv, cp to, touch, tee, sed -i, truncate, chmod, ...)
// a path under one of the protected prefixes, which are relative to the
// workspace root (".ultra/"). It is meant for phases where bash may write:
// it catches the plain ways of touching protected state, not every one.
//
// A path matches when it starts with a prefix (as ".ultra/x", "./.ultra/x"
// or "../.ultra/x"), or when it is absolute or starts with a variable and
// contains the prefix as whole segments ("/work/.ultra/x", "$ROOT/.ultra").
// Globs that would match the prefix count (".u*"); after a cd into a
// protected directory every relative path counts. Commands proven
// read-only are never reported. Segments compare case-insensitively.
func ShellWritesProtected(command string, protected []string) (bool, string) {
	var prots [][]string
	for _, p := range protected {
		p = strings.Trim(path.Clean("/"+p), "/")
		if p != "" {
			prots = append(prots, strings.Split(p, "/"))
		}
	}
	if len(prots) == 0 {
		return false, ""
	}
	return writesProtected(command, prots, 0)
}

func writesProtected(src string, prots [][]string, depth int) (bool, string) {
	f, err := parse(src)
	if err != nil {
		for _, p := range prots {
			if strings.Contains(strings.ToLower(src), strings.ToLower(p[0])) {
				return true, fmt.Sprintf("could not parse a command that mentions %s: %v", strings.Join(p, "/"), err)
			}
		}
		return false, ""
	}
	w := &protector{c: newClassifier(src, f, depth, nil), prots: prots, vars: map[string]string{}}
	syntax.Walk(f, func(n syntax.Node) bool {
		if w.hit != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.WordIter:
			for _, item := range n.Items {
				if p := w.word(item).path; w.protected(p) {
					w.vars[n.Name.Value] = p
				}
			}
		case *syntax.Assign:
			if n.Name != nil && n.Value != nil {
				if p := w.word(n.Value).path; w.protected(p) {
					w.vars[n.Name.Value] = p
				}
			}
		case *syntax.Redirect:
			w.redirect(n)
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				w.call(n)
			}
		}
		return w.hit == ""
	})
	return w.hit != "", w.hit
}

type protector struct {
	c      *classifier
	prots  [][]string
	vars   map[string]string // variables set to protected paths
	inside bool              // a cd went into a protected directory
	hit    string            // why the command writes protected state
}

// pathWord is a word as a path: its static text with every expansion
// replaced by NUL (or by the protected path a variable was set to), and
// its source text for messages.
type pathWord struct {
	path, text string
}

func (w *protector) word(x *syntax.Word) pathWord {
	var b strings.Builder
	for _, part := range x.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			s, _ := unescapeLit(p.Value, false)
			b.WriteString(s)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDbl(l.Value))
				} else {
					b.WriteString(w.expansion(q))
				}
			}
		default:
			b.WriteString(w.expansion(part))
		}
	}
	return pathWord{path: b.String(), text: w.c.text(x)}
}

// expansion stands for an expanded part: the protected path a plain $var
// was set to, or NUL.
func (w *protector) expansion(part syntax.WordPart) string {
	if pe, ok := part.(*syntax.ParamExp); ok && pe.Param != nil && pe.Exp == nil && pe.Index == nil && pe.Slice == nil && pe.Repl == nil && !pe.Excl && !pe.Length {
		if p, ok := w.vars[pe.Param.Value]; ok {
			return p
		}
	}
	return "\x00"
}

func (w *protector) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut, syntax.DplOut:
		if t := w.word(r.Word); w.protected(t.path) {
			w.hit = fmt.Sprintf("redirection writes %s", t.text)
		}
	}
}

func (w *protector) call(ce *syntax.CallExpr) {
	args := make([]arg, len(ce.Args))
	words := make([]pathWord, len(ce.Args))
	for i, x := range ce.Args {
		args[i] = w.c.analyse(x)
		words[i] = w.word(x)
	}
	name := path.Base(words[0].path)
	if name == "cd" || name == "pushd" {
		target := ""
		if len(words) > 1 {
			target = words[1].path
		}
		relative := target != "" && !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, "..")
		w.inside = w.matches(target) || w.inside && relative
		return
	}
	if w.c.checkArgs(args) == "" {
		return // read-only
	}
	switch name {
	case "sh", "bash", "dash":
		if script, why := shellScript(name, args[1:]); why == "" && script != "" && w.c.depth+1 < maxDepth {
			if hit, why := writesProtected(script, w.prots, w.c.depth+1); hit {
				w.hit = fmt.Sprintf("%s -c: %s", name, why)
			}
		}
		return
	case "eval":
		var parts []string
		for _, x := range words[1:] {
			parts = append(parts, x.path)
		}
		if w.c.depth+1 < maxDepth {
			if hit, why := writesProtected(strings.Join(parts, " "), w.prots, w.c.depth+1); hit {
				w.hit = "eval: " + why
			}
		}
		return
	case "cp", "install", "rsync", "scp":
		if dest, ok := destination(words[1:]); ok && w.protected(dest.path) {
			w.hit = fmt.Sprintf("`%s` would write into %s", name, dest.text)
		}
		return
	case "git":
		if why := gitRemovesIgnored(words[1:]); why != "" {
			w.hit = why
			return
		}
	}
	if interpreters[name] {
		// Inline code: look for the protected path anywhere in it.
		for _, x := range words[1:] {
			for _, p := range w.prots {
				if strings.Contains(strings.ToLower(x.path), strings.ToLower(strings.Join(p, "/"))) {
					w.hit = fmt.Sprintf("`%s` is given code or arguments that mention %s", name, strings.Join(p, "/"))
					return
				}
			}
		}
	}
	for _, x := range words[1:] {
		candidates := []string{x.path}
		if _, v, ok := strings.Cut(x.path, "="); ok {
			candidates = append(candidates, v)
		}
		for _, p := range candidates {
			if strings.HasPrefix(p, "-") {
				continue
			}
			if w.protected(p) {
				w.hit = fmt.Sprintf("`%s` would change %s", name, x.text)
				if name == "ln" {
					// A link to it is a way to write it.
					w.hit = fmt.Sprintf("`ln` would make a path to %s (writing through a link changes what it points at)", x.text)
				}
				return
			}
		}
	}
}

// destination is where cp-like commands write: the -t directory or the
// last operand.
func destination(words []pathWord) (pathWord, bool) {
	var last pathWord
	found := false
	for i, x := range words {
		switch {
		case x.path == "-t" || x.path == "--target-directory":
			if i+1 < len(words) {
				return words[i+1], true
			}
		case strings.HasPrefix(x.path, "--target-directory="):
			return pathWord{path: strings.TrimPrefix(x.path, "--target-directory="), text: x.text}, true
		case !strings.HasPrefix(x.path, "-"):
			last, found = x, true
		}
	}
	return last, found
}

// gitRemovesIgnored catches git commands that delete ignored files, which
// state directories usually are.
func gitRemovesIgnored(words []pathWord) string {
	sub := ""
	for _, x := range words {
		if sub == "" {
			if !strings.HasPrefix(x.path, "-") {
				sub = x.path
			}
			continue
		}
		switch {
		case sub == "clean" && !strings.HasPrefix(x.path, "--") && strings.HasPrefix(x.path, "-") && strings.ContainsAny(x.path, "xX"):
			return "git clean -x deletes ignored files such as the state directory"
		case sub == "stash" && (x.path == "-a" || x.path == "--all"):
			return "git stash --all removes ignored files such as the state directory"
		}
	}
	return ""
}

// protected reports whether path p (a pathWord path) is protected, taking
// a cd into a protected directory into account.
func (w *protector) protected(p string) bool {
	if w.inside && p != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "..") && p[0] != 0 {
		return true
	}
	return w.matches(p)
}

func (w *protector) matches(p string) bool {
	if p == "" {
		return false
	}
	clean := path.Clean(p)
	anywhere := strings.HasPrefix(clean, "/") || clean[0] == 0 || strings.HasPrefix(clean, "~")
	segs := strings.Split(clean, "/")
	if !anywhere {
		for len(segs) > 0 && segs[0] == ".." {
			segs = segs[1:]
		}
	}
	for _, prot := range w.prots {
		for start := 0; start < len(segs); start++ {
			if start > 0 && !anywhere {
				break
			}
			if segsMatch(segs[start:], prot) {
				return true
			}
		}
	}
	return false
}

func segsMatch(segs, prot []string) bool {
	if len(segs) < len(prot) {
		return false
	}
	for i, want := range prot {
		if !segMatch(segs[i], want) {
			return false
		}
	}
	return true
}

// segMatch compares a path segment, possibly a glob, with a protected one.
func segMatch(seg, want string) bool {
	if !strings.ContainsAny(seg, "*?[") {
		return strings.EqualFold(seg, want)
	}
	if strings.HasPrefix(want, ".") && !strings.HasPrefix(seg, ".") {
		return false // globs skip dot files
	}
	ok, _ := path.Match(strings.ToLower(seg), strings.ToLower(want))
	return ok
}
