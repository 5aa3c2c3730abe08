package policy

import (
	"fmt"
	"strings"
)

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
