package policy

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// gitEnvVar reports whether setting name can point git at another
// repository, index or configuration (and so at other hooks).
func gitEnvVar(name string) bool {
	switch name {
	case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_EXEC_PATH", "HOME", "XDG_CONFIG_HOME":
		return true
	}
	return strings.HasPrefix(name, "GIT_CONFIG")
}

// gitProgVar reports whether name is a variable that makes git run a
// program or read settings (which can name programs) whatever the
// subcommand, and whether val is a harmless value for it.
func gitProgVar(name, val string) (prog, harmless bool) {
	switch name {
	case "GIT_PAGER", "PAGER":
		return true, val == "" || val == "cat" || val == "less"
	case "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL":
		return true, val == "" || val == "true" || val == ":"
	case "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS":
		return true, val == ""
	case "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM":
		return true, val == "" || val == "/dev/null"
	case "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT":
		return true, val == ""
	}
	if strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		return true, val == ""
	}
	return false, false
}

// progAssign judges a NAME=value word given to env or sudo: it returns
// "NAME=value" when NAME names a program git runs and value is not
// harmless (or is computed).
func progAssign(a arg) string {
	text := a.lit
	if !a.static {
		text = a.prefix
	}
	name, val, ok := strings.Cut(text, "=")
	if !ok || !isIdent(name) {
		return ""
	}
	if prog, harmless := gitProgVar(name, val); prog && (!a.static || !harmless) {
		return a.text
	}
	return ""
}

// collectEnv records the git-steering variables the line sets anywhere:
// assignments (prefix, plain, export/declare/local), loop variables and
// variables filled by read and the like.
func (g *gitGuard) collectEnv(f *syntax.File) {
	note := func(name string) {
		if gitEnvVar(name) {
			g.env[name] = true
		}
		if name == "CDPATH" {
			g.cdpath = true
		}
	}
	assigned := map[string]bool{}
	prog := func(name, text string, static bool, val string) {
		if p, harmless := gitProgVar(name, val); p && (!static || !harmless) {
			if _, seen := g.prog[name]; !seen {
				g.prog[name] = text
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil {
				note(n.Name.Value)
				assigned[n.Name.Value] = true
				switch {
				case n.Append || n.Array != nil || n.Index != nil:
					prog(n.Name.Value, n.Name.Value+"=...", false, "")
				case n.Value == nil:
					prog(n.Name.Value, n.Name.Value, true, "")
				default:
					a := g.c.analyse(n.Value)
					prog(n.Name.Value, n.Name.Value+"="+a.text, a.static, a.lit)
				}
			}
		case *syntax.WordIter:
			note(n.Name.Value)
			prog(n.Name.Value, "for "+n.Name.Value+" in ...", false, "")
		}
		return true
	})
	for name := range g.c.tainted {
		note(name)
		if !assigned[name] {
			prog(name, name+" (read from input)", false, "")
		}
	}
}

// walk judges every simple command under root in order, tracking the
// directory: cd and pushd change it, subshells and substitutions restore
// it when they end.
func (g *gitGuard) walk(root syntax.Node) {
	type frame struct {
		restore bool
		cwd     gitCwd
		dirs    []gitCwd
	}
	var stack []frame
	syntax.Walk(root, func(n syntax.Node) bool {
		if n == nil {
			fr := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if fr.restore {
				g.cwd, g.dirs = fr.cwd, fr.dirs
			}
			return true
		}
		if g.refused != "" {
			return false
		}
		var fr frame
		switch n := n.(type) {
		case *syntax.Stmt:
			g.stmt = n
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			fr = frame{restore: true, cwd: g.cwd, dirs: append([]gitCwd(nil), g.dirs...)}
		case *syntax.WhileClause, *syntax.ForClause:
			g.loopDirs(n)
		case *syntax.FuncDecl:
			if n.Name != nil {
				g.funcs[n.Name.Value] = n
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				g.call(n)
			}
		}
		if g.refused != "" {
			return false
		}
		stack = append(stack, fr)
		return true
	})
}

// loopDirs applies, before a loop's body is judged, any directory change
// the body makes that may leave the worktree: a later iteration runs
// after it.
func (g *gitGuard) loopDirs(loop syntax.Node) {
	saved, savedDirs := g.cwd, append([]gitCwd(nil), g.dirs...)
	left := ""
	syntax.Walk(loop, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				args := g.analyseAll(n.Args)
				if args[0].static && isDirChange(args[0].lit) {
					g.chdir(args[0].lit, args[1:])
					if left == "" {
						left = g.cwd.outside
					}
				}
			}
		}
		return true
	})
	g.cwd, g.dirs = saved, savedDirs
	if left != "" && g.cwd.outside == "" {
		g.cwd.outside = left
	}
}

func isDirChange(name string) bool {
	return name == "cd" || name == "pushd" || name == "popd"
}

func (g *gitGuard) analyseAll(words []*syntax.Word) []arg {
	args := make([]arg, len(words))
	for i, w := range words {
		args[i] = g.c.analyse(w)
	}
	return args
}

func (g *gitGuard) call(ce *syntax.CallExpr) {
	args := g.analyseAll(ce.Args)
	ctx := gitCall{cwd: g.cwd}
	if g.stmt != nil && g.stmt.Cmd == ce {
		ctx.redirs = g.stmt.Redirs
	}
	g.command(args, ctx)
	if g.refused != "" || !args[0].static {
		return
	}
	name := args[0].lit
	if isDirChange(name) {
		g.chdir(name, args[1:])
		return
	}
	// A call of a function the line defined: judge its body again where
	// it runs now.
	if fn := g.funcs[name]; fn != nil && fn.Body != nil && !g.calling[name] {
		g.expands++
		if g.expands > 100 {
			if mentionsGit(g.c.src) {
				g.refuse("the command line calls its functions too often for ultra's git guard to check the git commands in them; run git directly")
			}
			return
		}
		g.calling[name] = true
		stmt := g.stmt
		g.walk(fn.Body)
		g.stmt = stmt
		delete(g.calling, name)
	}
}

// chdir applies cd, pushd or popd to the tracked directory.
func (g *gitGuard) chdir(name string, args []arg) {
	physical := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			break
		}
		l := a.lit
		if l == "--" {
			i++
			break
		}
		if name == "cd" && len(l) > 1 && l[0] == '-' && strings.Trim(l[1:], "LPe@") == "" {
			physical = physical || strings.Contains(l, "P")
			continue
		}
		if name != "cd" && l == "-n" {
			continue
		}
		break
	}
	rest := args[i:]
	switch name {
	case "popd":
		if len(rest) == 0 && len(g.dirs) > 0 {
			g.cwd = g.dirs[len(g.dirs)-1]
			g.dirs = g.dirs[:len(g.dirs)-1]
			return
		}
		g.cwd.outside = "`popd`"
		return
	case "pushd":
		if len(rest) == 0 || !rest[0].static || strings.HasPrefix(rest[0].lit, "+") || rest[0].lit != "-" && strings.HasPrefix(rest[0].lit, "-") {
			g.cwd.outside = "`pushd` rotating the directory stack"
			return
		}
		g.dirs = append(g.dirs, g.cwd)
	}
	if len(rest) == 0 {
		g.cwd.outside = fmt.Sprintf("`%s` (the home directory)", name)
		return
	}
	g.cwd = g.cd(g.cwd, rest[0], physical, name)
}

// cd is the directory after changing from `from` to a.
func (g *gitGuard) cd(from gitCwd, a arg, physical bool, what string) gitCwd {
	left := gitCwd{outside: fmt.Sprintf("`%s %s`", what, a.text)}
	if !a.static || a.lit == "-" || a.lit == "" {
		return left
	}
	p := a.lit
	if strings.HasPrefix(p, "/") {
		if rel, ok := g.inWorktree(p); ok {
			return gitCwd{rel: rel}
		}
		return left
	}
	if from.outside != "" {
		return from
	}
	if g.cdpath && what == "cd" && !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") && p != "." && p != ".." {
		return left
	}
	if physical && hasDotDot(p) {
		return left
	}
	j := path.Join(from.rel, p)
	if j == ".." || strings.HasPrefix(j, "../") {
		return left
	}
	return gitCwd{rel: j}
}

// inWorktree reports whether absolute path p is the run's worktree or
// inside it, and where.
func (g *gitGuard) inWorktree(p string) (string, bool) {
	if g.r.Worktree == "" || !strings.HasPrefix(g.r.Worktree, "/") {
		return "", false
	}
	wt, cp := path.Clean(g.r.Worktree), path.Clean(p)
	if cp == wt {
		return ".", true
	}
	if wt == "/" {
		return strings.TrimPrefix(cp, "/"), true
	}
	if strings.HasPrefix(cp, wt+"/") {
		return cp[len(wt)+1:], true
	}
	return "", false
}

func hasDotDot(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return true
		}
	}
	return false
}

// progEnv names a program-running variable the line sets (the first by
// name); "" when none.
func (g *gitGuard) progEnv(ctx gitCall) string {
	first, firstName := "", ""
	consider := func(name, text string) {
		if firstName == "" || name < firstName {
			first, firstName = text, name
		}
	}
	for name, text := range g.prog {
		consider(name, text)
	}
	for _, p := range ctx.prog {
		name, _, _ := strings.Cut(p, "=")
		consider(name, p)
	}
	return first
}

func (g *gitGuard) worktreeName() string {
	if g.r.Worktree == "" {
		return "the current directory"
	}
	return g.r.Worktree
}

// dirWhy says why a -C / --git-dir / --work-tree path may leave the
// worktree; "" when it stays inside.
func (g *gitGuard) dirWhy(a arg) string {
	if !a.static {
		return "is computed"
	}
	if strings.HasPrefix(a.lit, "/") {
		if _, ok := g.inWorktree(a.lit); ok {
			return ""
		}
		return "is outside the run's worktree"
	}
	if a.lit == "" || strings.HasPrefix(a.lit, "~") || hasDotDot(a.lit) {
		return "may leave the run's worktree"
	}
	return ""
}
