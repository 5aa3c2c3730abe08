package policy

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// GitRules say what a run's git commands may do.
type GitRules struct {
	Protected []string // branch patterns (path.Match syntax), e.g. "main", "master", "release/*"
	Base      string   // the branch the run was cut from, e.g. "main" or "feature/x"
	RunBranch string   // the run's own branch, e.g. "ultra/20261122-010203-abcdef"
	Worktree  string   // absolute path of the run's worktree
}

// GitVerdict is the guard's judgement of one bash command line.
type GitVerdict struct {
	Refused string // why the command may not run, in words a model can act on; "" when it may
	Commits bool   // the command runs `git commit`: allowed only if the caller finds the tree green
}

// CheckGit judges the git commands in a bash command line: it finds every
// git invocation the line can run (in pipelines, lists, subshells,
// substitutions and function bodies, behind wrappers such as env, sudo,
// timeout, xargs or find -exec, and inside sh -c and eval scripts) and
// refuses those that could push, rewrite or move the run's history, touch
// protected branches, skip hooks or act on another checkout. Read-only git
// commands are always allowed. Commits is set (only when nothing is
// refused) when an allowed invocation is git commit.
//
// Like the rest of the package it is a pure function of its arguments and
// judges the syntax only: it cannot see into script files the line runs,
// and it assumes the shell starts in the run's worktree.
func CheckGit(command string, r GitRules) GitVerdict {
	v, _ := checkGitLine(command, r, 0, nil, nil, gitCwd{rel: "."})
	if v.Refused != "" {
		v.Commits = false
	}
	return v
}

// gitCwd is where a command runs, as far as the command line tells.
type gitCwd struct {
	rel     string // clean path relative to the run's worktree, when inside it
	outside string // the command that may have left the worktree; "" when inside
}

// gitCall is what a wrapper passes on to the command it runs.
type gitCall struct {
	cwd     gitCwd
	env     []string           // git-steering variables set by env or sudo words
	prog    []string           // program-running variables set by env or sudo words, as NAME=value
	redirs  []*syntax.Redirect // the statement's redirections (a shell's script on stdin)
	lenient bool               // "git" was found among another program's arguments
}

type gitGuard struct {
	r       GitRules
	c       *classifier
	depth   int
	env     map[string]bool   // git-steering variables the line (or an enclosing one) sets
	prog    map[string]string // variables naming programs git runs, set to other than a harmless value: name -> value as written
	cdpath  bool              // the line sets CDPATH: relative cd may go anywhere
	cwd     gitCwd
	dirs    []gitCwd // pushd's stack
	funcs   map[string]*syntax.FuncDecl
	calling map[string]bool
	expands int // function bodies judged again at calls
	stmt    *syntax.Stmt
	refused string
	commits bool
}

func checkGitLine(src string, r GitRules, depth int, env map[string]bool, prog map[string]string, cwd gitCwd) (GitVerdict, gitCwd) {
	f, err := parse(src)
	if err != nil {
		if mentionsGit(src) {
			return GitVerdict{Refused: fmt.Sprintf("could not parse the command (%v), and it mentions git; write git commands as plain bash so ultra's git guard can check them", err)}, cwd
		}
		return GitVerdict{}, cwd
	}
	g := &gitGuard{r: r, c: newClassifier(src, f, depth, nil), depth: depth, env: map[string]bool{},
		prog: map[string]string{}, cwd: cwd, funcs: map[string]*syntax.FuncDecl{}, calling: map[string]bool{}}
	for k := range env {
		g.env[k] = true
	}
	for k, v := range prog {
		g.prog[k] = v
	}
	g.collectEnv(f)
	g.walk(f)
	return GitVerdict{Refused: g.refused, Commits: g.commits}, g.cwd
}

func mentionsGit(s string) bool {
	return strings.Contains(strings.ToLower(s), "git")
}

func (g *gitGuard) refuse(format string, args ...any) {
	if g.refused == "" {
		g.refused = fmt.Sprintf(format, args...)
	}
}

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

// shells run the script given to -c, or read one from a file or stdin.
var gitShells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"mksh": true, "ash": true, "yash": true, "posh": true}

// noGitPrograms only print their arguments or look names up: a "git"
// among them is text, not a command.
var noGitPrograms = map[string]bool{"man": true, "info": true, "whatis": true, "whereis": true,
	"apropos": true, "tldr": true, "help": true}

// gitRefWriters are git subcommands that can write refs or hooks' settings:
// a computed program with one of them among its arguments is refused.
var gitRefWriters = map[string]bool{"push": true, "commit": true, "reset": true, "checkout": true,
	"switch": true, "branch": true, "rebase": true, "merge": true, "pull": true, "cherry-pick": true,
	"revert": true, "am": true, "update-ref": true, "symbolic-ref": true, "tag": true, "stash": true,
	"filter-branch": true, "filter-repo": true, "replace": true, "notes": true, "bisect": true,
	"worktree": true, "config": true, "commit-tree": true}

// command judges one simple command given as analysed words, looking
// through wrappers for the program they run.
func (g *gitGuard) command(args []arg, ctx gitCall) {
	if g.refused != "" || len(args) == 0 {
		return
	}
	first := args[0]
	if !first.static {
		g.computedProgramCtx(args, ctx)
		return
	}
	base := path.Base(first.lit)
	rest := args[1:]
	if sub, ok := dashedGit(base); ok {
		g.dashedGit(first.text, sub, rest, ctx)
		return
	}
	switch base {
	case "git":
		g.git(rest, ctx)
	case "env":
		g.envCmd(rest, ctx)
	case "command":
		for i, a := range rest {
			if a.static && len(a.lit) > 1 && a.lit[0] == '-' && strings.Trim(a.lit[1:], "pvV") == "" {
				if strings.ContainsAny(a.lit, "vV") {
					return // looks a name up
				}
				continue
			}
			if a.static && a.lit == "--" {
				continue
			}
			g.command(rest[i:], ctx)
			return
		}
	case "exec":
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			switch {
			case a.static && a.lit == "-a":
				i++
			case a.static && len(a.lit) > 1 && a.lit[0] == '-' && strings.Trim(a.lit[1:], "cl") == "":
			case a.static && a.lit == "--":
			default:
				g.command(rest[i:], ctx)
				return
			}
		}
	case "builtin", "nohup":
		if len(rest) > 0 && rest[0].static && rest[0].lit == "--" {
			rest = rest[1:]
		}
		g.command(rest, ctx)
	case "nice":
		g.wrapped(args, ctx, optSpec{shortVal: "n", longVal: []string{"adjustment"}}, 0)
	case "timeout":
		g.wrapped(args, ctx, optSpec{shortVal: "sk", longVal: []string{"signal", "kill-after"}}, 1)
	case "time":
		g.wrapped(args, ctx, optSpec{shortVal: "fo", longVal: []string{"format", "output"}}, 0)
	case "stdbuf":
		g.wrapped(args, ctx, optSpec{shortVal: "ioe", longVal: []string{"input", "output", "error"}}, 0)
	case "ionice":
		g.wrapped(args, ctx, optSpec{shortVal: "cnpPu", longVal: []string{"class", "classdata", "pid", "pgid", "uid"}}, 0)
	case "doas":
		g.wrapped(args, ctx, optSpec{shortVal: "uC"}, 0)
	case "sudo":
		g.sudo(args, ctx)
	case "flock":
		g.flock(args, ctx)
	case "xargs":
		g.xargs(args, ctx)
	case "find":
		g.find(rest, ctx)
	case "watch":
		g.watch(args, ctx)
	case "eval":
		var parts []string
		for _, a := range rest {
			if !a.static {
				g.computedScript("eval", a)
				return
			}
			parts = append(parts, a.lit)
		}
		g.nested("eval", strings.Join(parts, " "), ctx, true)
	case "trap":
		for _, a := range rest {
			if a.static && (a.lit == "-p" || a.lit == "-l" || a.lit == "-P" || a.lit == "--") {
				continue
			}
			if !a.static {
				g.computedScript("trap", a)
			} else {
				g.nested("trap", a.lit, ctx, false)
			}
			return
		}
	case "source", ".":
		for _, a := range rest {
			if !a.static {
				g.computedScript(base, a)
				return
			}
		}
	case "alias":
		for _, a := range rest {
			if mentionsGit(a.text) {
				g.refuse("`alias %s` defines an alias that runs git; ultra's git guard does not follow aliases: run git directly", a.text)
				return
			}
		}
	default:
		if gitShells[base] {
			g.shell(base, rest, ctx)
			return
		}
		g.other(base, rest, ctx)
	}
}

// other looks into a program the guard does not know for git commands it
// may run: a "git" word among its arguments (parallel git push, strace
// git push), a -c script (su -c 'git push'), or inline interpreter code.
func (g *gitGuard) other(base string, rest []arg, ctx gitCall) {
	if _, known := commands[base]; known || noGitPrograms[base] {
		return // read-only programs: "git" is just text to them
	}
	if interpreters[base] {
		for i, a := range rest {
			if a.static && (a.lit == "-c" || a.lit == "-e" || a.lit == "-E" || a.lit == "--eval") && i+1 < len(rest) {
				if code := rest[i+1]; mentionsGit(code.text) && codeWritesGit(code.text) {
					g.refuse("`%s %s` code that runs git cannot be checked by ultra's git guard; run the git command directly in bash", base, a.lit)
				}
				return
			}
		}
		return
	}
	ctx.lenient = true
	for i, a := range rest {
		if !a.static {
			continue
		}
		if path.Base(a.lit) == "git" && !strings.HasPrefix(a.lit, "-") {
			g.command(rest[i:], ctx)
			return
		}
		if sub, ok := dashedGit(path.Base(a.lit)); ok && knownGitSub(sub) && !strings.HasPrefix(a.lit, "-") {
			g.command(rest[i:], ctx)
			return
		}
		if (a.lit == "-c" || a.lit == "--command") && i+1 < len(rest) && rest[i+1].static {
			g.nested(base+" "+a.lit, rest[i+1].lit, ctx, false)
			if g.refused != "" {
				return
			}
		}
	}
}

// codeWritesGit reports whether interpreter code mentions a git
// subcommand that writes refs.
func codeWritesGit(code string) bool {
	words := strings.FieldsFunc(strings.ToLower(code), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '-')
	})
	git := false
	for _, w := range words {
		git = git || w == "git"
		if sub, ok := dashedGit(w); ok && gitRefWriters[sub] {
			return true
		}
	}
	if !git {
		return false
	}
	for _, w := range words {
		if gitRefWriters[w] {
			return true
		}
	}
	return false
}

// dashedGit reports whether a program's basename is one of git's dashed
// programs, git-<sub>, which is git running subcommand sub.
func dashedGit(base string) (string, bool) {
	sub, ok := strings.CutPrefix(base, "git-")
	if !ok || sub == "" || strings.HasPrefix(sub, "-") {
		return "", false
	}
	return sub, true
}

// dashedGit judges git-<sub> ARGS as git <sub> ARGS.
func (g *gitGuard) dashedGit(program, sub string, rest []arg, ctx gitCall) {
	if !knownGitSub(sub) {
		// Not one of git's own programs: a tool or script of its own
		// (git-lfs, ./scripts/git-sync.sh), which the guard cannot see
		// into, like any script.
		return
	}
	args := append([]arg{{text: program, lit: sub, static: true, prefix: sub}}, rest...)
	g.git(args, ctx)
}

// programTail is the last path component of a program word as far as it
// is static: its text with each expansion replaced by "\x00", read from
// the word's source text; ok is false when the text cannot be read.
func programTail(text string) (string, bool) {
	f, err := parse(text)
	if err != nil || len(f.Stmts) != 1 {
		return "", false
	}
	ce, isCall := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !isCall || len(ce.Args) != 1 || len(ce.Assigns) != 0 {
		return "", false
	}
	var pieces []string // static text, or "\x00" for an expansion
	for _, p := range ce.Args[0].Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			pieces = append(pieces, unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				pieces = append(pieces, "\x00")
			} else {
				pieces = append(pieces, p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					pieces = append(pieces, unescape(l.Value, "$`\"\\\n"))
				} else {
					pieces = append(pieces, "\x00")
				}
			}
		default:
			pieces = append(pieces, "\x00")
		}
	}
	tail := ""
	for i := len(pieces) - 1; i >= 0; i-- {
		s := pieces[i]
		if s != "\x00" {
			if j := strings.LastIndexByte(s, '/'); j >= 0 {
				return s[j+1:] + tail, true
			}
		}
		tail = s + tail
	}
	return tail, true
}

// unescape removes the shell's backslash escapes from a literal: before
// any character when special is "", else only before those in special.
func unescape(s, special string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// computedProgram judges a command whose program name is computed. When
// the static end of the name is /git or /git-<sub> it is git; when it may
// be git or one of git's dashed programs but cannot be read, it is
// refused; otherwise it may be git, so it is refused when an argument is
// a git subcommand that writes refs.
func (g *gitGuard) computedProgram(args []arg) {
	g.computedProgramCtx(args, gitCall{cwd: g.cwd})
}

func (g *gitGuard) computedProgramCtx(args []arg, ctx gitCall) {
	tail, ok := programTail(args[0].text)
	switch {
	case !ok:
		if mentionsGit(args[0].text) {
			g.refuse("the program %s is computed and may be git; ultra's git guard cannot check it: write `git SUBCOMMAND ...` literally", args[0].text)
			return
		}
	case !strings.Contains(tail, "\x00"):
		if tail == "git" {
			g.git(args[1:], ctx)
			return
		}
		if sub, ok := dashedGit(tail); ok {
			g.dashedGit(args[0].text, sub, args[1:], ctx)
			return
		}
	case strings.Trim(tail, "\x00") == "" && mentionsGit(args[0].text):
		// $(which git), "$GIT": judged as git where it can be.
		lctx := ctx
		lctx.lenient = true
		g.git(args[1:], lctx)
		if g.refused != "" {
			g.refused = fmt.Sprintf("the program %s is computed and may be git: %s", args[0].text, g.refused)
			return
		}
	default:
		lead, _, _ := strings.Cut(tail, "\x00")
		end := tail[strings.LastIndexByte(tail, 0)+1:]
		dashedEnd := false
		if i := strings.IndexByte(end, '-'); i >= 0 && knownGitSub(end[i+1:]) || end == "git" {
			dashedEnd = true
		}
		if strings.HasPrefix(lead, "git") || lead != "" && strings.HasPrefix("git", lead) || dashedEnd {
			g.refuse("the program %s is computed and may be git or one of git's dashed programs (git-push, git-commit, ...); ultra's git guard cannot check it: write `git SUBCOMMAND ...` literally", args[0].text)
			return
		}
	}
	for _, a := range args[1:] {
		if a.static && gitRefWriters[a.lit] {
			g.refuse("the program %s is computed and its arguments include `%s`, a git subcommand that writes refs; write `git %s ...` literally so ultra's git guard can check it", args[0].text, a.lit, a.lit)
			return
		}
	}
}

// computedScript judges a script ultra cannot read (sh -c "$X", eval "$X").
func (g *gitGuard) computedScript(what string, a arg) {
	if mentionsGit(g.c.src) {
		g.refuse("`%s` runs a computed script (%s) in a command line that mentions git; ultra's git guard cannot check it: run the git commands directly", what, a.text)
	}
}

// nested judges script as a command line run by what (a shell, eval).
// eval runs in the same shell: its directory changes carry on.
func (g *gitGuard) nested(what, script string, ctx gitCall, eval bool) {
	if g.depth+1 >= maxDepth {
		if mentionsGit(script) {
			g.refuse("%s: shells are nested too deeply for ultra's git guard to check the git commands inside; run git directly", what)
		}
		return
	}
	env := map[string]bool{}
	for k := range g.env {
		env[k] = true
	}
	for _, k := range ctx.env {
		env[k] = true
	}
	prog := map[string]string{}
	for k, v := range g.prog {
		prog[k] = v
	}
	for _, p := range ctx.prog {
		name, _, _ := strings.Cut(p, "=")
		prog[name] = p
	}
	v, end := checkGitLine(script, g.r, g.depth+1, env, prog, ctx.cwd)
	if v.Refused != "" {
		g.refuse("%s: %s", what, v.Refused)
		return
	}
	g.commits = g.commits || v.Commits
	if eval {
		g.cwd = end
	}
}

// wrapped judges a wrapper with GNU options that runs the command after
// its options and skip further operands (timeout's duration).
func (g *gitGuard) wrapped(args []arg, ctx gitCall, spec optSpec, skip int) {
	spec.stopAtOperand = true
	p, why := scanOpts(args[0].lit, args[1:], spec)
	if why != "" {
		g.computedProgram(args)
		return
	}
	if len(p.rest) > skip {
		g.command(p.rest[skip:], ctx)
	}
}

func (g *gitGuard) envCmd(rest []arg, ctx gitCall) {
	ctx.env = append([]string(nil), ctx.env...)
	ctx.prog = append([]string(nil), ctx.prog...)
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.static {
			if name, _, ok := strings.Cut(a.prefix, "="); ok && isIdent(name) && !a.split {
				// NAME=$value: an assignment with a computed value.
				if gitEnvVar(name) {
					ctx.env = append(ctx.env, name)
				}
				if p := progAssign(a); p != "" {
					ctx.prog = append(ctx.prog, p)
				}
				continue
			}
			g.command(rest[i:], ctx)
			return
		}
		l := a.lit
		switch {
		case l == "-u" || l == "--unset":
			i++
		case l == "-C" || l == "--chdir":
			i++
			if i < len(rest) {
				ctx.cwd = g.cd(ctx.cwd, rest[i], false, "env -C")
			}
		case strings.HasPrefix(l, "--chdir="):
			ctx.cwd = g.cd(ctx.cwd, litArg(strings.TrimPrefix(l, "--chdir=")), false, "env -C")
		case l == "-S" || l == "--split-string" || strings.HasPrefix(l, "--split-string=") || strings.HasPrefix(l, "-S"):
			var script string
			switch {
			case strings.HasPrefix(l, "--split-string="):
				script = strings.TrimPrefix(l, "--split-string=")
			case len(l) > 2 && l[1] == 'S':
				script = l[2:]
			default:
				i++
				if i >= len(rest) {
					return
				}
				if !rest[i].static {
					g.computedScript("env -S", rest[i])
					return
				}
				script = rest[i].lit
			}
			for _, b := range rest[i+1:] {
				script += " " + b.text
			}
			g.nested("env -S", script, ctx, false)
			return
		case strings.HasPrefix(l, "-C"):
			ctx.cwd = g.cd(ctx.cwd, litArg(l[2:]), false, "env -C")
		case strings.HasPrefix(l, "-"):
			// -i, -0, -v, -uNAME, --unset=, --ignore-signal...: nothing to follow
		case strings.Contains(l, "="):
			name, _, _ := strings.Cut(l, "=")
			if gitEnvVar(name) {
				ctx.env = append(ctx.env, name)
			}
			if p := progAssign(a); p != "" {
				ctx.prog = append(ctx.prog, p)
			}
		default:
			g.command(rest[i:], ctx)
			return
		}
	}
}

func (g *gitGuard) sudo(args []arg, ctx gitCall) {
	p, why := scanOpts("sudo", args[1:], optSpec{
		shortVal: "ugCDhprRtTU",
		longVal: []string{"user", "group", "close-from", "chdir", "host", "prompt", "chroot",
			"role", "type", "command-timeout", "other-user"},
		stopAtOperand: true,
	})
	if why != "" {
		g.computedProgram(args)
		return
	}
	for _, d := range p.values("-D", "--chdir") {
		ctx.cwd = g.cd(ctx.cwd, d, false, "sudo -D")
	}
	if p.has("-R", "--chroot") {
		ctx.cwd = gitCwd{outside: "`sudo --chroot`"}
	}
	ctx.env = append([]string(nil), ctx.env...)
	ctx.prog = append([]string(nil), ctx.prog...)
	rest := p.rest
	for len(rest) > 0 {
		text := rest[0].lit
		if !rest[0].static {
			text = rest[0].prefix
		}
		name, _, ok := strings.Cut(text, "=")
		if !ok || !isIdent(name) || rest[0].split {
			break
		}
		if gitEnvVar(name) {
			ctx.env = append(ctx.env, name)
		}
		if p := progAssign(rest[0]); p != "" {
			ctx.prog = append(ctx.prog, p)
		}
		rest = rest[1:]
	}
	g.command(rest, ctx)
}

func (g *gitGuard) flock(args []arg, ctx gitCall) {
	p, why := scanOpts("flock", args[1:], optSpec{
		shortVal:      "wEc",
		longVal:       []string{"timeout", "conflict-exit-code", "command"},
		stopAtOperand: true,
	})
	if why != "" {
		g.computedProgram(args)
		return
	}
	script := p.values("-c", "--command")
	if len(p.rest) > 2 && p.rest[1].static && (p.rest[1].lit == "-c" || p.rest[1].lit == "--command") {
		script = append(script, p.rest[2])
	} else if len(script) == 0 && len(p.rest) > 1 {
		g.command(p.rest[1:], ctx)
		return
	}
	for _, s := range script {
		if !s.static {
			g.computedScript("flock -c", s)
			return
		}
		g.nested("flock -c", s.lit, ctx, false)
	}
}

// xargs runs its command with words read from input appended, or put in
// place of the replace string.
func (g *gitGuard) xargs(args []arg, ctx gitCall) {
	p, why := scanOpts("xargs", args[1:], optSpec{
		shortVal:    "adEILnPs",
		shortOptVal: "eil",
		longVal: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars",
			"process-slot-var", "replace", "eof", "max-lines"},
		stopAtOperand: true,
	})
	if why != "" {
		g.computedProgram(args)
		return
	}
	if len(p.rest) == 0 {
		return // echo
	}
	replace := ""
	for _, o := range p.opts {
		switch o.name {
		case "-I", "-i", "--replace":
			replace = "{}"
			if o.value != nil && o.value.static && o.value.lit != "" {
				replace = o.value.lit
			}
		}
	}
	cmd := append([]arg(nil), p.rest...)
	if replace == "" {
		cmd = append(cmd, arg{text: "<input>", untrusted: true, split: true, multi: true})
	} else {
		for i := 1; i < len(cmd); i++ {
			if a := cmd[i]; a.static && strings.Contains(a.lit, replace) {
				before, _, _ := strings.Cut(a.lit, replace)
				cmd[i] = arg{text: a.text, untrusted: true, prefix: before}
			}
		}
	}
	g.command(cmd, ctx)
}

// find runs the commands of -exec, -execdir, -ok and -okdir with {}
// replaced by the paths found; the -dir forms run in the directories
// found, under the starting points.
func (g *gitGuard) find(rest []arg, ctx gitCall) {
	i := 0
	for i < len(rest) && rest[i].static && (rest[i].lit == "-H" || rest[i].lit == "-L" || rest[i].lit == "-P" || strings.HasPrefix(rest[i].lit, "-O")) {
		i++
	}
	if i < len(rest) && rest[i].static && rest[i].lit == "-D" {
		i += 2
	}
	var starts []arg
	for ; i < len(rest); i++ {
		a := rest[i]
		if a.static && (strings.HasPrefix(a.lit, "-") || a.lit == "(" || a.lit == "!") {
			break
		}
		starts = append(starts, a)
	}
	for ; i < len(rest); i++ {
		a := rest[i]
		if !a.static || (a.lit != "-exec" && a.lit != "-execdir" && a.lit != "-ok" && a.lit != "-okdir") {
			continue
		}
		j := i + 1
		for j < len(rest) && !(rest[j].static && (rest[j].lit == ";" || rest[j].lit == "+")) {
			j++
		}
		cmd := append([]arg(nil), rest[i+1:j]...)
		for k := 1; k < len(cmd); k++ {
			if c := cmd[k]; c.static && strings.Contains(c.lit, "{}") {
				before, _, _ := strings.Cut(c.lit, "{}")
				if before == "" {
					before = "./"
				}
				cmd[k] = arg{text: c.text, untrusted: true, prefix: before}
			}
		}
		cctx := ctx
		if strings.HasSuffix(a.lit, "dir") {
			for _, s := range starts {
				if d := g.cd(ctx.cwd, s, true, "find"); d.outside != "" {
					cctx.cwd = gitCwd{outside: fmt.Sprintf("`find %s %s`", s.text, a.lit)}
				}
			}
		}
		g.command(cmd, cctx)
		if g.refused != "" {
			return
		}
		i = j
	}
}

// watch runs its arguments joined as a sh -c script, or with -x as a
// command.
func (g *gitGuard) watch(args []arg, ctx gitCall) {
	p, why := scanOpts("watch", args[1:], optSpec{
		shortVal:      "nq",
		longVal:       []string{"interval", "equexit"},
		stopAtOperand: true,
	})
	if why != "" {
		g.computedProgram(args)
		return
	}
	if p.has("-x", "--exec") {
		g.command(p.rest, ctx)
		return
	}
	var parts []string
	for _, a := range p.rest {
		if !a.static {
			g.computedScript("watch", a)
			return
		}
		parts = append(parts, a.lit)
	}
	if len(parts) > 0 {
		g.nested("watch", strings.Join(parts, " "), ctx, false)
	}
}

// shell judges sh -c SCRIPT, and a shell reading its script from a
// here-document or standard input. A script file cannot be seen.
func (g *gitGuard) shell(name string, args []arg, ctx gitCall) {
	script, why := shellScript(name, args)
	if why == "" {
		if script != "" {
			g.nested(name+" -c", script, ctx, false)
		}
		return
	}
	hasC, hasS, operand := shellOperands(args)
	switch {
	case hasC && operand != nil && operand.static:
		g.nested(name+" -c", operand.lit, ctx, false)
	case hasC && operand != nil:
		g.computedScript(name+" -c", *operand)
	case hasC:
	case operand != nil && !hasS:
		// a script file: not visible to a syntax check
	default:
		g.shellStdin(name, ctx)
	}
}

// shellOperands finds what a shell runs: -c, -s and the first operand.
func shellOperands(args []arg) (hasC, hasS bool, operand *arg) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return hasC, hasS, &args[i]
		}
		l := a.lit
		switch {
		case l == "--" || l == "-":
			if i+1 < len(args) {
				return hasC, hasS, &args[i+1]
			}
			return hasC, hasS, nil
		case l == "--rcfile" || l == "--init-file":
			i++
		case strings.HasPrefix(l, "--"):
		case len(l) > 1 && (l[0] == '-' || l[0] == '+'):
			for _, ch := range l[1:] {
				switch ch {
				case 'c':
					hasC = true
				case 's':
					hasS = true
				case 'o', 'O':
					i++
				}
			}
		default:
			return hasC, hasS, &args[i]
		}
	}
	return hasC, hasS, nil
}

func (g *gitGuard) shellStdin(name string, ctx gitCall) {
	for _, r := range ctx.redirs {
		var body *syntax.Word
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body = r.Hdoc
		case syntax.WordHdoc:
			body = r.Word
		case syntax.RdrIn:
			return // a script file
		default:
			continue
		}
		if body == nil {
			return
		}
		a := g.c.analyse(body)
		if !a.static {
			if mentionsGit(a.text) {
				g.refuse("`%s` reads a script with expansions from a here-document that mentions git; ultra's git guard cannot check it: run the git commands directly", name)
			}
			return
		}
		g.nested(name+" reading a here-document", a.lit, ctx, false)
		return
	}
	if mentionsGit(g.c.src) {
		g.refuse("`%s` reads its script from standard input in a command line that mentions git; ultra's git guard cannot check it: run the git commands directly", name)
	}
}

// gitSafeConfig reports whether git -c key is allowed on commands that
// write: display settings and the commit's identity and signing.
func gitSafeConfig(key string) bool {
	switch strings.ToLower(key) {
	case "user.name", "user.email", "commit.gpgsign":
		return true
	}
	return safeGitConfig(key)
}

// gitPath is a directory given to git -C, --git-dir or --work-tree.
type gitPath struct {
	opt string
	val arg
}

// git judges one git invocation; args follow the program name.
func (g *gitGuard) git(args []arg, ctx gitCall) {
	var dirs []gitPath
	var keys []arg
	var other []string
	i := 0
globals:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if !ctx.lenient {
				g.refuse("the git subcommand or option %s is computed; write git commands literally so ultra's git guard can check them", a.text)
			}
			return
		}
		l := a.lit
		if !strings.HasPrefix(l, "-") {
			break
		}
		o, v, hasVal := strings.Cut(l, "=")
		value := func() (arg, bool) {
			if hasVal {
				return litArg(v), true
			}
			i++
			if i >= len(args) {
				return arg{}, false
			}
			return args[i], true
		}
		switch o {
		case "-C":
			if hasVal {
				break
			}
			fallthrough
		case "--git-dir", "--work-tree":
			val, ok := value()
			if !ok {
				return
			}
			dirs = append(dirs, gitPath{opt: o, val: val})
			continue
		case "--namespace":
			if _, ok := value(); !ok {
				return
			}
			other = append(other, o)
			continue
		case "-c":
			if hasVal {
				break
			}
			val, ok := value()
			if !ok {
				return
			}
			keys = append(keys, val)
			continue
		case "--config-env":
			val, ok := value()
			if !ok {
				return
			}
			keys = append(keys, val)
			continue
		case "--exec-path":
			if hasVal {
				other = append(other, o)
			}
			continue
		case "--attr-source":
			if _, ok := value(); !ok {
				return
			}
			continue
		case "--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects",
			"--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
			"--icase-pathspecs", "--no-optional-locks", "--no-advice", "--no-lazy-fetch", "--list-cmds":
			continue
		case "--version", "--help", "--html-path", "--man-path", "--info-path":
			return
		}
		if ctx.lenient {
			return
		}
		g.refuse("git option %s is not known to ultra's git guard; leave it out", l)
		break globals
	}
	if g.refused != "" || i >= len(args) {
		return
	}
	sub := args[i].lit
	subArgs := args[i+1:]
	show := gitShow(sub, subArgs)
	// Rules 3 and 5: -c and --config-env, whatever the subcommand (as
	// planning's read-only check): a setting can run a program
	// (core.fsmonitor, core.pager, diff.external, core.sshCommand) or
	// define an alias.
	for _, k := range keys {
		if !k.static {
			g.refuse("%s is refused: the git -c setting %s is computed; only display settings and user.name, user.email, commit.gpgsign are allowed", show, k.text)
			return
		}
		key, _, _ := strings.Cut(k.lit, "=")
		if !gitSafeConfig(key) {
			g.refuse("%s is refused: git -c %s can disable hooks, define aliases or run other programs; only display settings and user.name, user.email, commit.gpgsign may be set with -c (run the plain command without -c)", show, key)
			return
		}
	}
	// Programs named in the environment run whatever the subcommand.
	if why := g.progEnv(ctx); why != "" {
		g.refuse("%s is refused: this command line sets %s, which makes git run another program or read other settings; run git without setting it (GIT_PAGER and PAGER may be cat or less)", show, why)
		return
	}
	if ctx.lenient && !knownGitSub(sub) {
		return
	}
	if why := gitRunsProgram(sub, subArgs, show); why != "" {
		g.refuse("%s", why)
		return
	}
	if check, ok := gitSubcommands[sub]; ok && check(subArgs) == "" {
		return // rule 1: read-only, whatever the global options
	}

	// Rule 2.
	if sub == "push" {
		g.refuse("%s is refused: ultra never pushes; a person lands a green run with `ultra land`", show)
		return
	}
	// Rule 4 (and 3): hooks stay on.
	for _, a := range subArgs {
		if !a.static {
			continue
		}
		if a.lit == "--" {
			break
		}
		if optIs(strings.SplitN(a.lit, "=", 2)[0], "--no-verify") {
			g.refuse("%s is refused: --no-verify skips the hooks that check commits; drop it and fix what the hooks report", show)
			return
		}
	}
	// Rule 6: the environment.
	env := append([]string(nil), ctx.env...)
	for k := range g.env {
		env = append(env, k)
	}
	if len(env) > 0 {
		first := env[0]
		for _, e := range env {
			if e < first {
				first = e
			}
		}
		g.refuse("%s is refused: this command line sets %s, which can point git at another repository, index or configuration; run git without setting it", show, first)
		return
	}
	// Rule 7: the repository git acts on.
	if ctx.cwd.outside != "" {
		g.refuse("%s is refused: after %s it may act on another checkout, such as your own on main; run git in the run's worktree (%s), with relative paths that stay inside it", show, ctx.cwd.outside, g.worktreeName())
		return
	}
	for _, d := range dirs {
		if why := g.dirWhy(d.val); why != "" {
			g.refuse("%s is refused: git %s %s %s and may act on another checkout, such as your own on main; use a relative path without .. (or none) inside the run's worktree (%s)", show, d.opt, d.val.text, why, g.worktreeName())
			return
		}
	}
	for _, o := range other {
		g.refuse("%s is refused: git %s changes which refs or programs git uses; leave it out", show, o)
		return
	}
	if why := g.subcommand(sub, subArgs, show, ctx); why != "" {
		g.refuse("%s", why)
		return
	}
	if sub == "commit" {
		g.commits = true
	}
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

// gitProgramOpts are subcommand options that make git run a program
// named on the command line (or one it would not run otherwise):
// fetch, ls-remote, clone and archive --remote run --upload-pack and
// --exec on the remote side (locally for a path or ssh remote), push
// runs --receive-pack, diff, log and show run the external diff driver
// with --ext-diff, difftool runs --extcmd, grep runs -O's pager.
var gitProgramOpts = []string{"--upload-pack", "--receive-pack", "--exec", "--ext-diff", "--extcmd",
	"--open-files-in-pager"}

// gitRunsProgram says why an invocation is refused for making git run a
// program; "" when it does not.
func gitRunsProgram(sub string, args []arg, show string) string {
	switch sub {
	case "difftool", "mergetool":
		return fmt.Sprintf("%s is refused: `git %s` runs a diff or merge program; use `git diff` (without --ext-diff)", show, sub)
	}
	for _, a := range args {
		if !a.static {
			continue
		}
		l := a.lit
		if l == "--" {
			break
		}
		if len(l) < 2 || l[0] != '-' {
			continue
		}
		if strings.HasPrefix(l, "--") {
			o, _, _ := strings.Cut(l, "=")
			for _, full := range gitProgramOpts {
				if optIs(o, full) {
					return fmt.Sprintf("%s is refused: %s makes git run another program; leave it out", show, o)
				}
			}
			continue
		}
		// Short option clusters: the letters that run a program, up to
		// the first letter that takes the rest of the word as its value.
		var runs, vals string
		switch sub {
		case "grep":
			runs, vals = "O", "efABCm"
		case "clone":
			runs, vals = "u", "objc"
		case "ls-remote":
			runs, vals = "u", "o"
		}
		for j := 1; j < len(l); j++ {
			if strings.IndexByte(runs, l[j]) >= 0 {
				return fmt.Sprintf("%s is refused: -%c makes git run another program; leave it out", show, l[j])
			}
			if strings.IndexByte(vals, l[j]) >= 0 {
				break
			}
		}
	}
	return ""
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

// gitShow renders an invocation for messages, shortened.
func gitShow(sub string, args []arg) string {
	s := "git " + sub
	for _, a := range args {
		if len(s) > 60 {
			s += " ..."
			break
		}
		s += " " + a.text
	}
	return "`" + s + "`"
}

// optIs reports whether option o (without "=value") is full, or a long
// option abbreviation of it that git could take for it.
func optIs(o, full string) bool {
	if o == full {
		return true
	}
	return strings.HasPrefix(o, "--") && len(o) >= 4 && strings.HasPrefix(full, o)
}

// gitOpt is a parsed option of a git subcommand.
type gitOpt struct {
	name  string // "-b", or "--orphan" (expanded when an abbreviation of a value option)
	value *arg
}

type gitArgs struct {
	opts     []gitOpt
	operands []arg // before "--"
	paths    []arg // after "--"
	dashdash bool
	computed *arg // the first computed word that could be an option
}

func (p gitArgs) has(match func(string) bool) bool {
	for _, o := range p.opts {
		if match(o.name) {
			return true
		}
	}
	return false
}

func (p gitArgs) hasOpt(names ...string) bool {
	return p.has(func(n string) bool {
		for _, full := range names {
			if optIs(n, full) {
				return true
			}
		}
		return false
	})
}

// parseGitArgs reads a subcommand's arguments as git's option parser
// does: short options cluster, shortVal options take a value (attached or
// the next word), shortOptVal options an optional attached one, longVal
// options a value (=v or the next word); options may follow operands.
func parseGitArgs(args []arg, shortVal, shortOptVal string, longVal []string) gitArgs {
	var p gitArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			// Even variables from the environment count: an earlier
			// command may have set them.
			if (a.split || a.prefix == "" || strings.HasPrefix(a.prefix, "-")) && p.computed == nil {
				p.computed = &args[i]
			}
			p.operands = append(p.operands, a)
			continue
		}
		l := a.lit
		switch {
		case l == "--":
			p.dashdash = true
			p.paths = append(p.paths, args[i+1:]...)
			return p
		case len(l) < 2 || l[0] != '-':
			p.operands = append(p.operands, a)
		case strings.HasPrefix(l, "--"):
			n, v, hasV := strings.Cut(l[2:], "=")
			o := gitOpt{name: "--" + n}
			if hasV {
				val := litArg(v)
				o.value = &val
			} else if full, ok := expandLong(n, longVal); ok {
				o.name = "--" + full
				if i+1 < len(args) {
					i++
					o.value = &args[i]
				}
			}
			p.opts = append(p.opts, o)
		default:
			for j := 1; j < len(l); j++ {
				ch := l[j]
				o := gitOpt{name: "-" + string(ch)}
				if strings.IndexByte(shortOptVal, ch) >= 0 {
					val := litArg(l[j+1:])
					o.value = &val
					p.opts = append(p.opts, o)
					break
				}
				if strings.IndexByte(shortVal, ch) >= 0 {
					if j+1 < len(l) {
						val := litArg(l[j+1:])
						o.value = &val
					} else if i+1 < len(args) {
						i++
						o.value = &args[i]
					}
					p.opts = append(p.opts, o)
					break
				}
				p.opts = append(p.opts, o)
			}
		}
	}
	return p
}

// Subcommands that only change the worktree, the index or objects, or
// read: allowed whatever their options (some are checked further below).
var gitWorktreeSubs = map[string]bool{"add": true, "rm": true, "mv": true, "restore": true,
	"apply": true, "clean": true, "clone": true, "format-patch": true, "archive": true,
	"read-tree": true, "gc": true, "prune": true, "repack": true, "fsck": true, "help": true,
	"hash-object": true, "checkout-index": true, "mktree": true, "merge-file": true,
	"merge-tree": true, "diff-files": true, "diff-index": true, "diff-tree": true,
	"ls-remote": true, "whatchanged": true, "range-diff": true, "show-branch": true,
	"cherry": true, "var": true, "verify-commit": true, "verify-tag": true, "verify-pack": true,
	"check-ref-format": true, "check-mailmap": true, "interpret-trailers": true,
	"stripspace": true, "column": true, "bundle": true, "pack-refs": true,
	"unpack-objects": true, "index-pack": true, "pack-objects": true, "mailinfo": true,
	"mailsplit": true, "annotate": true, "prune-packed": true, "multi-pack-index": true,
	"commit-graph": true, "write-tree": true, "patch-id": true, "get-tar-commit-id": true,
	"unpack-file": true}

// gitHistorySubs write history or refs by hand, or reach outside.
var gitHistorySubs = map[string]string{
	"rebase":        "rewrites the run's history",
	"merge":         "brings other history into the run's branch",
	"pull":          "merges or rebases other history into the run's branch",
	"cherry-pick":   "adds commits by hand",
	"revert":        "adds commits by hand",
	"am":            "adds commits by hand",
	"filter-branch": "rewrites history",
	"filter-repo":   "rewrites history",
	"update-ref":    "moves refs by hand",
	"commit-tree":   "makes commits by hand",
	"bisect":        "moves HEAD off the run's branch",
	"mergetool":     "is interactive",
	"send-email":    "sends mail",
	"daemon":        "serves the repository",
	"instaweb":      "serves the repository",
	"request-pull":  "prepares a pull request",
}

// gitCheckedSubs are judged by subcommand below.
var gitCheckedSubs = map[string]bool{"push": true, "commit": true, "reset": true, "checkout": true,
	"switch": true, "branch": true, "symbolic-ref": true, "notes": true, "replace": true,
	"tag": true, "stash": true, "worktree": true, "config": true, "remote": true, "reflog": true,
	"update-index": true, "fetch": true, "init": true, "lfs": true, "submodule": true,
	"sparse-checkout": true, "maintenance": true}

func knownGitSub(sub string) bool {
	_, hist := gitHistorySubs[sub]
	_, read := gitSubcommands[sub]
	return hist || read || gitWorktreeSubs[sub] || gitCheckedSubs[sub]
}

const gitHistoryAdvice = "ultra records the run's history itself: change files and let ultra commit when the tests pass; undo file changes with `git restore <paths>` or `git checkout -- <paths>`"

// subcommand applies the rules of one subcommand; "" when allowed.
func (g *gitGuard) subcommand(sub string, args []arg, show string, ctx gitCall) string {
	if what, ok := gitHistorySubs[sub]; ok {
		return fmt.Sprintf("%s is refused: `git %s` %s; %s", show, sub, what, gitHistoryAdvice)
	}
	if gitWorktreeSubs[sub] {
		return ""
	}
	switch sub {
	case "commit":
		return g.commit(args, show)
	case "reset":
		return g.reset(args, show)
	case "checkout":
		return g.checkout(args, show)
	case "switch":
		return g.switchTo(args, show)
	case "branch":
		return g.branch(args, show)
	case "symbolic-ref":
		p := parseGitArgs(args, "m", "", nil)
		if p.hasOpt("-d", "--delete") || len(p.operands) >= 2 {
			return fmt.Sprintf("%s is refused: it changes where a symbolic ref such as HEAD points, which moves the worktree off the run's branch; read it with `git symbolic-ref HEAD`", show)
		}
		return ""
	case "notes":
		rest := args
		for len(rest) > 0 && rest[0].static && strings.HasPrefix(rest[0].lit, "--ref") {
			if rest[0].lit == "--ref" && len(rest) > 1 {
				rest = rest[1:]
			}
			rest = rest[1:]
		}
		if len(rest) == 0 || rest[0].static && (rest[0].lit == "list" || rest[0].lit == "show" || rest[0].lit == "get-ref") {
			return ""
		}
		return fmt.Sprintf("%s is refused: notes are refs shared with your checkout; only `git notes list` and `git notes show` are allowed", show)
	case "replace":
		if len(args) == 0 || parseGitArgs(args, "", "", []string{"format"}).hasOpt("-l", "--list") {
			return ""
		}
		return fmt.Sprintf("%s is refused: replace refs rewrite history for every checkout; only `git replace -l` is allowed", show)
	case "tag":
		return fmt.Sprintf("%s is refused: tags are refs shared with your checkout; only listing (`git tag -l`) is allowed", show)
	case "stash":
		return fmt.Sprintf("%s is refused: the stash is shared with the person's checkout and other runs; commit through ultra, or restore files with `git restore <paths>` (`git stash list` and `git stash show` are allowed)", show)
	case "worktree":
		return fmt.Sprintf("%s is refused: ultra manages the run's worktree, and other worktrees belong to the person or other runs; only `git worktree list` is allowed", show)
	case "config":
		p := parseGitArgs(args, "f", "", []string{"file", "blob", "type", "default", "value", "url"})
		if len(p.operands) == 1 && !p.dashdash && gitConfig(append([]arg{litArg("--get")}, args...)) == "" {
			return ""
		}
		return fmt.Sprintf("%s is refused: git settings are shared with your checkout and can disable hooks; only reading them (`git config --get KEY`, `git config --list`) is allowed", show)
	case "remote":
		if len(args) > 0 && args[0].static && args[0].lit == "show" {
			return ""
		}
		return fmt.Sprintf("%s is refused: remotes are shared with your checkout; only `git remote -v`, `git remote show` and `git remote get-url` are allowed", show)
	case "reflog":
		return fmt.Sprintf("%s is refused: it rewrites reflogs shared with your checkout; only `git reflog show` is allowed", show)
	case "update-index":
		p := parseGitArgs(args, "", "", []string{"cacheinfo", "chmod", "index-version"})
		if p.hasOpt("--assume-unchanged", "--skip-worktree") {
			return fmt.Sprintf("%s is refused: it hides changes from git status and from ultra's commits; leave the files as they are or restore them with `git restore <paths>`", show)
		}
		return ""
	case "fetch":
		return g.fetch(args, show)
	case "init":
		if parseGitArgs(args, "", "", []string{"separate-git-dir", "template", "initial-branch", "object-format", "ref-format", "shared"}).hasOpt("--separate-git-dir") {
			return fmt.Sprintf("%s is refused: --separate-git-dir moves a repository; leave it out", show)
		}
		return ""
	case "lfs":
		if len(args) > 0 && args[0].static {
			switch args[0].lit {
			case "push", "pre-push":
				return fmt.Sprintf("%s is refused: ultra never pushes; a person lands a green run with `ultra land`", show)
			case "install", "uninstall", "update":
				return fmt.Sprintf("%s is refused: it changes git hooks and settings shared with your checkout", show)
			}
		}
		return ""
	case "submodule":
		return g.submodule(args, show, ctx)
	case "sparse-checkout":
		if len(args) > 0 && args[0].static && args[0].lit == "list" {
			return ""
		}
		return fmt.Sprintf("%s is refused: it changes which files the worktree holds and settings shared with your checkout; only `git sparse-checkout list` is allowed", show)
	case "maintenance":
		if len(args) > 0 && args[0].static && args[0].lit == "run" {
			return ""
		}
		return fmt.Sprintf("%s is refused: it changes your git configuration and schedules jobs; `git maintenance run` or `git gc` are allowed", show)
	}
	if _, ok := gitSubcommands[sub]; ok {
		// A read-only subcommand used with options that write (git log
		// --output=f, git grep -O): not a history matter.
		return ""
	}
	return fmt.Sprintf("`git %s` is not known to ultra's git guard (aliases are not followed); use the plain git subcommand", sub)
}

func (g *gitGuard) commit(args []arg, show string) string {
	p := parseGitArgs(args, "mFCct", "Su", []string{"message", "file", "reuse-message",
		"reedit-message", "fixup", "squash", "author", "date", "template", "trailer", "cleanup",
		"pathspec-from-file"})
	if p.hasOpt("-n", "--no-verify") {
		return fmt.Sprintf("%s is refused: -n is --no-verify, which skips the hooks that check commits; drop it and fix what the hooks report", show)
	}
	if p.hasOpt("--amend") {
		return fmt.Sprintf("%s is refused: --amend rewrites a commit, and ultra's commits are the run's record; make a new commit instead", show)
	}
	if p.computed != nil {
		return fmt.Sprintf("%s is refused: the argument %s is computed and could be --no-verify or --amend; write options literally (a computed message such as -m \"$msg\" is fine)", show, p.computed.text)
	}
	return ""
}

// branchName is the branch a ref names: "refs/heads/main" and
// "heads/main" name "main"; a leading "+" (force in refspecs) is dropped.
func branchName(s string) string {
	s = strings.TrimPrefix(s, "+")
	s = strings.TrimPrefix(s, "refs/heads/")
	return strings.TrimPrefix(s, "heads/")
}

// BranchProtected reports whether branch (with or without refs/heads/)
// matches one of the patterns (path.Match syntax).
func BranchProtected(patterns []string, branch string) bool {
	branch = strings.TrimPrefix(branch, "refs/heads/")
	for _, p := range patterns {
		if ok, _ := path.Match(p, branch); ok || p == branch {
			return true
		}
	}
	return false
}

// branchRole says which guarded branch ref s names: "the protected branch
// main", "the run's base branch feature/x"; "" for others.
func (g *gitGuard) branchRole(s string) string {
	b := branchName(s)
	if b == "" {
		return ""
	}
	if BranchProtected(g.r.Protected, b) {
		return "the protected branch " + b
	}
	if g.r.Base != "" && b == branchName(g.r.Base) {
		return "the run's base branch " + b
	}
	return ""
}

func isRevExpr(s string) bool {
	return strings.ContainsAny(s, "~^") || strings.Contains(s, "@{") || s == "-"
}

func isHexID(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F') {
			return false
		}
	}
	return true
}

// commitWhy says why s is taken for a commit other than HEAD; "" when it
// may be a path or the run's branch.
func (g *gitGuard) commitWhy(s string) string {
	switch {
	case s == "HEAD" || s == "@":
		return ""
	case branchName(s) == g.r.RunBranch && g.r.RunBranch != "":
		return ""
	case g.branchRole(s) != "":
		return g.branchRole(s)
	case s == "-" || strings.HasPrefix(s, "@{-"):
		return "the previous branch"
	case isRevExpr(s):
		return "a revision expression"
	case isHexID(s):
		return "a commit id"
	case strings.HasPrefix(s, "refs/"):
		return "a ref"
	case remoteTracking(s):
		return "a remote-tracking branch"
	case strings.HasSuffix(s, "_HEAD") && strings.ToUpper(s) == s:
		return "a special ref"
	case strings.HasPrefix(s, "ultra/"):
		return "another run's branch"
	}
	return ""
}

// remoteTracking reports whether s looks like a remote-tracking branch
// (origin/main, remotes/origin/main), which checking out detaches HEAD.
func remoteTracking(s string) bool {
	for _, p := range []string{"origin/", "upstream/", "remotes/"} {
		if strings.HasPrefix(s, p) && len(s) > len(p) {
			return true
		}
	}
	return false
}

func (g *gitGuard) reset(args []arg, show string) string {
	p := parseGitArgs(args, "", "", []string{"pathspec-from-file"})
	mode := ""
	for _, m := range []string{"--soft", "--mixed", "--hard", "--keep", "--merge"} {
		if p.hasOpt(m) {
			mode = m
		}
	}
	undo := "; undo file changes with `git restore <paths>` or `git checkout -- <paths>`, and to go back to the last green commit ask the person to run `ultra undo --to-last-green`"
	if p.computed != nil {
		return fmt.Sprintf("%s is refused: the argument %s is computed and could move the run's branch; write it literally", show, p.computed.text)
	}
	for _, op := range p.operands {
		if !op.static {
			return fmt.Sprintf("%s is refused: %s is computed and could be a revision that moves the run's branch; write it literally, or put paths after --", show, op.text)
		}
		if role := g.branchRole(op.lit); role != "" {
			return fmt.Sprintf("%s is refused: %s names %s%s", show, op.text, role, undo)
		}
		if isRevExpr(op.lit) {
			return fmt.Sprintf("%s is refused: %s is a revision expression, which would move the run's branch %s%s", show, op.text, g.r.RunBranch, undo)
		}
	}
	if len(p.operands) == 0 {
		return ""
	}
	first := p.operands[0].lit
	if first == "HEAD" || first == "@" {
		return ""
	}
	if mode != "" || !p.dashdash && g.commitWhy(first) != "" {
		return fmt.Sprintf("%s is refused: it would move the run's branch %s to %s; ultra keeps the run's history%s", show, g.r.RunBranch, first, undo)
	}
	return ""
}

func (g *gitGuard) checkout(args []arg, show string) string {
	p := parseGitArgs(args, "bB", "", []string{"orphan", "conflict", "pathspec-from-file"})
	for _, bad := range []string{"-b", "-B", "--orphan", "--detach", "--ignore-other-worktrees", "-t", "--track"} {
		if p.hasOpt(bad) {
			return fmt.Sprintf("%s is refused: %s moves the worktree off the run's branch %s; the run stays on its branch (bring files from another revision with `git checkout REV -- <paths>`)", show, bad, g.r.RunBranch)
		}
	}
	if p.computed != nil {
		return fmt.Sprintf("%s is refused: the argument %s is computed and could be an option such as -b; write it literally", show, p.computed.text)
	}
	// A "--" restores files only when paths follow it: `git checkout
	// main --` switches to main.
	paths := false
	for _, a := range p.paths {
		// An unquoted expansion may vanish and leave a bare "--".
		paths = paths || a.static || !a.multi
	}
	if paths || len(p.operands) == 0 {
		return "" // restoring files
	}
	first := p.operands[0]
	if !first.static {
		return fmt.Sprintf("%s is refused: %s is computed and could name a branch to switch to; write it literally, or put paths after --", show, first.text)
	}
	if what := g.commitWhy(first.lit); what != "" {
		return fmt.Sprintf("%s is refused: %s is %s, and checking it out would move the worktree off the run's branch %s; to bring files from it use `git checkout %s -- <paths>` or `git restore --source=%s <paths>`", show, first.text, what, g.r.RunBranch, first.lit, first.lit)
	}
	return ""
}

func (g *gitGuard) switchTo(args []arg, show string) string {
	p := parseGitArgs(args, "cC", "", []string{"create", "force-create", "orphan", "conflict"})
	bad := p.hasOpt("-c", "-C", "--create", "--force-create", "--orphan", "--detach", "-d", "-t", "--track")
	if !bad && p.computed == nil && len(p.operands) == 1 && p.operands[0].static && g.r.RunBranch != "" && branchName(p.operands[0].lit) == g.r.RunBranch {
		return ""
	}
	return fmt.Sprintf("%s is refused: the run stays on its branch %s, and `git switch` may only go back to it; bring files from another revision with `git restore --source=REV <paths>`", show, g.r.RunBranch)
}

func (g *gitGuard) branch(args []arg, show string) string {
	if gitBranch(args) == "" {
		return ""
	}
	p := parseGitArgs(args, "u", "", []string{"set-upstream-to", "contains", "no-contains", "merged",
		"no-merged", "points-at", "sort", "format"})
	for _, bad := range []string{"-d", "-D", "--delete", "-f", "--force", "-m", "-M", "--move", "-c", "-C", "--copy"} {
		if p.hasOpt(bad) {
			return fmt.Sprintf("%s is refused: %s deletes, moves, copies or force-resets a branch; ultra's git guard allows listing branches and creating new ones only", show, bad)
		}
	}
	if p.computed != nil {
		return fmt.Sprintf("%s is refused: the argument %s is computed and could be an option such as -D; write it literally", show, p.computed.text)
	}
	for _, op := range p.operands {
		if !op.static {
			return fmt.Sprintf("%s is refused: the branch name %s is computed; write it literally", show, op.text)
		}
	}
	if p.hasOpt("-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "--set-upstream") {
		for _, op := range p.operands {
			if role := g.branchRole(op.lit); role != "" {
				return fmt.Sprintf("%s is refused: it changes the settings of %s, which are shared with your checkout", show, role)
			}
		}
		return ""
	}
	if len(p.operands) == 0 {
		return ""
	}
	name := p.operands[0].lit
	if role := g.branchRole(name); role != "" {
		return fmt.Sprintf("%s is refused: %s is %s; create a branch with another name", show, name, role)
	}
	if g.r.RunBranch != "" && branchName(name) == g.r.RunBranch {
		return fmt.Sprintf("%s is refused: %s is the run's own branch, which ultra moves; create a branch with another name", show, name)
	}
	return ""
}

func (g *gitGuard) fetch(args []arg, show string) string {
	p := parseGitArgs(args, "jo", "", []string{"depth", "deepen", "shallow-since", "shallow-exclude",
		"refmap", "upload-pack", "server-option", "negotiation-tip", "jobs", "filter",
		"recurse-submodules-default", "submodule-prefix"})
	if p.hasOpt("--refmap") {
		return fmt.Sprintf("%s is refused: --refmap changes which refs the fetch updates and could overwrite branches; fetch without it (`git fetch origin BRANCH`) and read FETCH_HEAD or the remote-tracking branch", show)
	}
	if p.computed != nil {
		return fmt.Sprintf("%s is refused: the argument %s is computed and could be a refspec or option that overwrites a branch; write it literally", show, p.computed.text)
	}
	if p.hasOpt("--multiple", "--all") || len(p.operands) < 2 {
		return ""
	}
	prune := p.hasOpt("-p", "--prune")
	for _, rs := range p.operands[1:] {
		if !rs.static {
			return fmt.Sprintf("%s is refused: the refspec %s is computed and could overwrite a branch; write it literally", show, rs.text)
		}
		i := strings.IndexByte(rs.lit, ':')
		if i < 0 {
			continue
		}
		dst := rs.lit[i+1:]
		if why := g.fetchDestWhy(dst); why != "" {
			if prune {
				why += " (and --prune would delete branches there)"
			}
			return fmt.Sprintf("%s is refused: the refspec %s %s; fetch without a destination (`git fetch origin %s`) and read FETCH_HEAD, or fetch into refs/remotes/...", show, rs.lit, why, strings.TrimPrefix(rs.lit[:i], "+"))
		}
	}
	return ""
}

// fetchDestWhy says why a fetch refspec's destination may overwrite a
// local branch; "" when it may not (none, or refs outside refs/heads/).
func (g *gitGuard) fetchDestWhy(dst string) string {
	if dst == "" {
		return ""
	}
	role := g.branchRole(dst)
	if role == "" && g.r.RunBranch != "" && branchName(dst) == g.r.RunBranch {
		role = "the run's own branch " + g.r.RunBranch
	}
	if role != "" {
		return "would overwrite " + role
	}
	l := strings.ToLower(dst)
	if !strings.HasPrefix(l, "refs/") {
		return "names the branch " + dst + " (a destination without refs/ is a local branch), which it would overwrite"
	}
	if strings.HasPrefix(l, "refs/heads") {
		return "would overwrite the local branch " + dst
	}
	if j := strings.IndexByte(l, '*'); j >= 0 && strings.HasPrefix("refs/heads/", l[:j]) {
		return "maps into refs/heads/ and would overwrite local branches"
	}
	return ""
}

func (g *gitGuard) submodule(args []arg, show string, ctx gitCall) string {
	i := 0
	for i < len(args) && args[i].static && strings.HasPrefix(args[i].lit, "-") {
		i++
	}
	if i >= len(args) {
		return ""
	}
	if !args[i].static {
		return fmt.Sprintf("%s is refused: the submodule command %s is computed; write it literally", show, args[i].text)
	}
	switch args[i].lit {
	case "status", "update", "init", "sync", "summary", "absorbgitdirs", "add", "deinit", "set-branch", "set-url":
		return ""
	case "foreach":
		var parts []string
		for _, a := range args[i+1:] {
			if a.static && len(parts) == 0 && (a.lit == "--recursive" || a.lit == "-q" || a.lit == "--quiet") {
				continue
			}
			if !a.static {
				return fmt.Sprintf("%s is refused: the command %s is computed; write it literally", show, a.text)
			}
			parts = append(parts, a.lit)
		}
		g.nested("git submodule foreach", strings.Join(parts, " "), ctx, false)
		return ""
	}
	return fmt.Sprintf("%s is refused: `git submodule %s` is not known to ultra's git guard", show, args[i].lit)
}
