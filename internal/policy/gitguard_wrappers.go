package policy

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
