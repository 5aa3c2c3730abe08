package policy

import (
	"fmt"
	"strings"
)

// gitSubcommands are the read-only git subcommands and their checks.
var gitSubcommands = map[string]func(args []arg) string{
	"status":        gitAny("status"),
	"log":           gitNoOutput("log", gitLogValues),
	"show":          gitNoOutput("show", gitLogValues),
	"diff":          gitNoOutput("diff", gitRevValues),
	"shortlog":      gitNoOutput("shortlog", gitShortlogValues),
	"blame":         gitNoOutput("blame", gitBlameValues),
	"rev-parse":     gitAny("rev-parse"),
	"rev-list":      gitNoOutput("rev-list", gitRevValues),
	"ls-files":      gitAny("ls-files"),
	"ls-tree":       gitAny("ls-tree"),
	"cat-file":      gitAny("cat-file"),
	"describe":      gitAny("describe"),
	"show-ref":      gitAny("show-ref"),
	"merge-base":    gitAny("merge-base"),
	"for-each-ref":  gitAny("for-each-ref"),
	"count-objects": gitAny("count-objects"),
	"name-rev":      gitAny("name-rev"),
	"check-ignore":  gitAny("check-ignore"),
	"check-attr":    gitAny("check-attr"),
	"version":       gitAny("version"),
	"grep":          gitGrep,
	"branch":        gitBranch,
	"tag":           gitTag,
	"remote":        gitRemote,
	"config":        gitConfig,
	"stash":         gitStash,
	"reflog":        gitReflog,
	"worktree":      gitWorktree,
}

// gitSplitValue refuses the value v of a git option when the shell may
// turn it into several words: git would take only the first as the value
// and read the others as options, operands or even a subcommand.
func gitSplitValue(what string, v arg) string {
	if v.multi {
		return fmt.Sprintf("the value %s of %s must be a single word; quote it", v.text, what)
	}
	return ""
}

// checkGit skips git's global options and judges the subcommand. Git
// matches its global options exactly (no abbreviations); -C, -c and the
// long options below without "=" take the next word as their value.
func checkGit(_ *classifier, name string, args []arg) string {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return notLiteral(name, a)
		}
		l := a.lit
		if !strings.HasPrefix(l, "-") {
			break
		}
		o, _, hasVal := strings.Cut(l, "=")
		switch {
		case l == "-C" || l == "-c" || !hasVal && (o == "--git-dir" || o == "--work-tree" || o == "--namespace"):
			i++
			if i >= len(args) {
				return "" // git stops: the option needs a value
			}
			v := args[i]
			if why := gitSplitValue("git "+l, v); why != "" {
				return why
			}
			if l != "-c" {
				continue
			}
			if !v.static {
				return fmt.Sprintf("git -c %s is computed and could make git run commands", v.text)
			}
			key, _, _ := strings.Cut(v.lit, "=")
			if !safeGitConfig(key) {
				return fmt.Sprintf("git -c %s could make git run commands; only display settings are allowed", key)
			}
		case hasVal && (o == "--git-dir" || o == "--work-tree" || o == "--namespace"):
		case o == "-C" || o == "-c":
			return fmt.Sprintf("git %s takes its value as the next word; git does not know %s", o, l)
		case !hasVal && gitFlags[l]:
		case l == "--version" || l == "-v":
			return gitAny("version")(args[i+1:]) // git version ...
		case l == "--help" || l == "-h":
			return gitHelp(args[i+1:]) // git help ...
		case l == "--html-path" || l == "--man-path" || l == "--info-path":
			return "" // prints the path and exits
		case o == "--exec-path":
			if hasVal {
				return "git --exec-path=... changes which programs git runs"
			}
			return "" // prints the path and exits
		default:
			return fmt.Sprintf("git option %s is not known to be safe", o)
		}
	}
	if i >= len(args) {
		return ""
	}
	sub := args[i].lit
	check, ok := gitSubcommands[sub]
	if !ok {
		return fmt.Sprintf("`git %s` is not known to be read-only", sub)
	}
	rest := args[i+1:]
	if len(rest) > 0 && rest[0].static && rest[0].lit == "--help" {
		return gitHelp(rest[1:]) // git <sub> --help ... runs git help <sub> ...
	}
	return check(rest)
}

// gitFlags are the global options that take no value and are harmless.
var gitFlags = map[string]bool{"--no-pager": true, "-P": true, "-p": true, "--paginate": true,
	"--bare": true, "--no-replace-objects": true, "--literal-pathspecs": true,
	"--no-literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true,
	"--icase-pathspecs": true, "--no-optional-locks": true, "--no-advice": true,
	"--no-lazy-fetch": true}

// gitHelp allows git help (git --help, git <sub> --help) only with the
// names of commands or guides: its options can open a web browser or
// another viewer named in the settings.
func gitHelp(args []arg) string {
	for _, a := range args {
		if !a.static || strings.HasPrefix(a.lit, "-") {
			return fmt.Sprintf("git --help %s is not allowed: git help options can start a web browser or other viewer; give only a command name", a.text)
		}
	}
	return ""
}

// safeGitConfig reports whether a -c key only changes how output looks.
func safeGitConfig(key string) bool {
	key = strings.ToLower(key)
	for _, p := range []string{"color.", "column.", "advice."} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	switch key {
	case "core.quotepath", "core.abbrev", "diff.noprefix", "diff.mnemonicprefix", "diff.renames",
		"diff.algorithm", "log.date", "log.decorate", "status.short", "status.branch",
		"grep.linenumber", "grep.extendedregexp", "safe.directory", "i18n.logoutputencoding":
		return true
	}
	return false
}

// gitValues lists the options of a git subcommand that take their value
// from the next word when it is not attached (-n 3, --author x). Git
// reads such a value whatever it is, "--" included, and goes on reading
// options after it: git grep -e -- -Oprog runs prog. The lists must hold
// every such option; naming one too many only makes the classifier
// stricter, since a value is still judged as a word of its own.
type gitValues struct {
	short string   // short options with a value
	long  []string // long options with a value, without "--"
	// flags are options without a value whose names begin the name of
	// one with a value: the whole name wins over an abbreviation.
	flags []string
	// readsPastDashDash: "--" does not end the options (git stash list drops
	// the first "--" and passes the words after it to git log).
	readsPastDashDash bool
}

// takesNext reports whether option word w takes the next word as its
// value. Long options count when abbreviated, as git's option parser
// allows for most subcommands; a short cluster takes the next word when
// its first letter with a value ends it (-pn 3, but -n3 and -nI).
func (v gitValues) takesNext(w string) bool {
	if name, ok := strings.CutPrefix(w, "--"); ok {
		if name == "" || strings.Contains(name, "=") {
			return false
		}
		for _, f := range v.flags {
			if name == f {
				return false
			}
		}
		for _, l := range v.long {
			if l == name || !strings.HasPrefix(name, "no-") && strings.HasPrefix(l, name) {
				return true
			}
		}
		return false
	}
	for j := 1; j < len(w); j++ {
		if strings.IndexByte(v.short, w[j]) >= 0 {
			return j == len(w)-1
		}
	}
	return false
}

// gitRevLong are the long options of git's revision walk (revision.c)
// and diff machinery (diff.c) that take a value.
var gitRevLong = []string{"max-count", "max-count-oldest", "skip", "max-age", "since",
	"since-as-filter", "after", "min-age", "before", "until", "date", "author", "committer",
	"grep-reflog", "grep", "encoding", "glob", "exclude", "exclude-hidden", "diff-merges",
	"default", "stat-width", "stat-name-width", "stat-graph-width", "stat-count",
	"ws-error-highlight", "src-prefix", "dst-prefix", "line-prefix", "inter-hunk-context",
	"output-indicator-new", "output-indicator-old", "output-indicator-context",
	"ignore-matching-lines", "diff-algorithm", "anchored", "word-diff-regex", "color-moved-ws",
	"rotate-to", "skip-to", "find-object", "diff-filter", "max-depth", "output"}

// gitRev describes a subcommand that reads the revision and diff options
// after its own: short lists the short options with a value (its own -n
// and -l shadow those of the revision walk), long its own long ones.
func gitRev(short string, long ...string) gitValues {
	return gitValues{
		short: short,
		long:  append(append([]string(nil), gitRevLong...), long...),
		flags: []string{"stat", "color", "color-moved", "word-diff", "decorate"},
	}
}

var (
	gitRevValues = gitRev("nlISGO")
	// git log, git show, git reflog and git stash list read -L and
	// --decorate-refs before they look for "--".
	gitLogValues      = gitRev("nlISGOL", "decorate-refs", "decorate-refs-exclude")
	gitShortlogValues = gitRev("lISGO", "group")
	gitBlameValues    = gitRev("ISGOL", "diff-algorithm", "ignore-rev", "ignore-revs-file", "contents")
	gitGrepValues     = gitValues{short: "efABCm",
		long: []string{"max-depth", "context", "before-context", "after-context", "threads", "max-count"}}
)

// gitScan calls check on every static option word and refuses computed
// words that could be options, up to the "--" that ends the options. An
// option's value that may split into several words is refused; the value
// is then judged as a word of its own, and a "--" taken as a value does
// not end the options.
func gitScan(sub string, args []arg, values gitValues, check func(opt string) string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if !a.dashSafe() {
				return notLiteral("git "+sub, a)
			}
			continue
		}
		if a.lit == "--" && !values.readsPastDashDash {
			return ""
		}
		if !strings.HasPrefix(a.lit, "-") {
			continue
		}
		if check != nil {
			if why := check(a.lit); why != "" {
				return why
			}
		}
		if values.takesNext(a.lit) && i+1 < len(args) {
			v := args[i+1]
			if why := gitSplitValue("git "+sub+" "+a.lit, v); why != "" {
				return why
			}
			if v.static && v.lit == "--" {
				i++ // the value; options go on after it
			}
		}
	}
	return ""
}

func gitAny(sub string) func([]arg) string {
	return func(args []arg) string { return gitScan(sub, args, gitValues{}, nil) }
}

// gitNoOutput refuses --output (and its abbreviations), which writes the
// diff or log to a file.
func gitNoOutput(sub string, values gitValues) func([]arg) string {
	return func(args []arg) string {
		return gitScan(sub, args, values, func(o string) string {
			name, _, _ := strings.Cut(o, "=")
			if len(name) >= 3 && strings.HasPrefix("--output", name) {
				return fmt.Sprintf("git %s --output writes to a file", sub)
			}
			return ""
		})
	}
}

func gitGrep(args []arg) string {
	return gitScan("grep", args, gitGrepValues, func(o string) string {
		name, _, _ := strings.Cut(o, "=")
		if len(name) >= 4 && strings.HasPrefix("--open-files-in-pager", name) {
			return "git grep --open-files-in-pager runs a program"
		}
		if !strings.HasPrefix(o, "--") {
			for _, ch := range o[1:] {
				if ch == 'O' {
					return "git grep -O runs a program"
				}
				if strings.ContainsRune(gitGrepValues.short, ch) {
					break // the rest is the option's value
				}
			}
		}
		return ""
	})
}

// listing describes the options that keep git branch and git tag listing.
type listing struct {
	sub     string
	short   string          // allowed short options
	listOpt string          // short option that selects list mode
	flags   map[string]bool // allowed long options without a value
	values  map[string]bool // allowed long options with a value (=v or next word)
	filters map[string]bool // value options that select list mode
	eqOnly  map[string]bool // allowed long options whose value must be attached
	optArg  string          // short options whose optional value is attached (-n5)
}

var (
	listFilters = map[string]bool{"--contains": true, "--no-contains": true, "--merged": true, "--no-merged": true, "--points-at": true}
	listValues  = map[string]bool{"--contains": true, "--no-contains": true, "--merged": true, "--no-merged": true, "--points-at": true, "--sort": true, "--format": true}
)

var branchListing = listing{
	sub: "branch", short: "arvliq", listOpt: "l",
	flags: map[string]bool{"--all": true, "--remotes": true, "--verbose": true, "--list": true,
		"--show-current": true, "--ignore-case": true, "--no-color": true, "--no-column": true,
		"--no-abbrev": true, "--quiet": true, "--omit-empty": true},
	values:  listValues,
	filters: listFilters,
	eqOnly:  map[string]bool{"--color": true, "--column": true, "--abbrev": true},
}

var tagListing = listing{
	sub: "tag", short: "lin", listOpt: "l", optArg: "n",
	flags: map[string]bool{"--list": true, "--ignore-case": true, "--no-column": true,
		"--omit-empty": true, "--no-color": true},
	values:  listValues,
	filters: listFilters,
	eqOnly:  map[string]bool{"--color": true, "--column": true},
}

func gitBranch(args []arg) string { return gitList(branchListing, args) }
func gitTag(args []arg) string    { return gitList(tagListing, args) }

// gitList allows git branch / git tag only in listing form: known listing
// options, and names only as patterns in list mode.
func gitList(l listing, args []arg) string {
	listMode, names := false, 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if !a.dashSafe() {
				return notLiteral("git "+l.sub, a)
			}
			names++
			continue
		}
		s := a.lit
		switch {
		case s == "--":
			names += len(args) - i - 1
			i = len(args)
		case s == "-" || !strings.HasPrefix(s, "-"):
			names++
		case strings.HasPrefix(s, "--"):
			o, _, hasVal := strings.Cut(s, "=")
			switch {
			case l.flags[o] && !hasVal:
				listMode = listMode || o == "--list"
			case l.values[o]:
				listMode = listMode || l.filters[o]
				if !hasVal && i+1 < len(args) {
					i++
					if why := gitSplitValue("git "+l.sub+" "+o, args[i]); why != "" {
						return why
					}
				}
			case l.eqOnly[o]:
			default:
				return fmt.Sprintf("git %s %s changes %ses; only listing is allowed", l.sub, o, l.sub)
			}
		default:
		short:
			for j := 1; j < len(s); j++ {
				ch := s[j]
				switch {
				case strings.IndexByte(l.optArg, ch) >= 0:
					break short
				case strings.IndexByte(l.short, ch) >= 0:
					listMode = listMode || strings.IndexByte(l.listOpt, ch) >= 0
				default:
					return fmt.Sprintf("git %s -%c changes %ses; only listing is allowed", l.sub, ch, l.sub)
				}
			}
		}
	}
	if names > 0 && !listMode {
		return fmt.Sprintf("git %s with a name creates a %s; use git %s --list <pattern> to list", l.sub, l.sub, l.sub)
	}
	return ""
}

func gitRemote(args []arg) string {
	if len(args) == 0 {
		return ""
	}
	if a := args[0]; a.static {
		switch a.lit {
		case "-v", "--verbose":
			if len(args) == 1 {
				return ""
			}
		case "get-url":
			return gitScan("remote", args[1:], gitValues{}, nil)
		}
	}
	return "only git remote, git remote -v and git remote get-url are allowed"
}

// gitConfig allows only reading settings.
func gitConfig(args []arg) string {
	read := false
	flags := map[string]bool{"--global": true, "--system": true, "--local": true, "--worktree": true,
		"--show-origin": true, "--show-scope": true, "--name-only": true, "-z": true, "--null": true,
		"--bool": true, "--int": true, "--bool-or-int": true, "--path": true, "--expiry-date": true,
		"--includes": true, "--no-includes": true, "--all": true, "--regexp": true,
		"--fixed-value": true, "--show-names": true, "--no-type": true, "--bool-or-str": true}
	values := map[string]bool{"--file": true, "-f": true, "--blob": true, "--type": true, "-t": true,
		"--default": true, "--value": true, "--url": true}
	modes := map[string]bool{"--get": true, "--get-all": true, "--get-regexp": true,
		"--get-urlmatch": true, "--get-color": true, "--get-colorbool": true, "--list": true, "-l": true}
	if len(args) > 0 && args[0].static && (args[0].lit == "get" || args[0].lit == "list") {
		read = true
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if !a.dashSafe() {
				return notLiteral("git config", a)
			}
			continue
		}
		o, _, hasVal := strings.Cut(a.lit, "=")
		switch {
		case a.lit == "--":
			i = len(args)
		case !strings.HasPrefix(o, "-"):
		case modes[o]:
			read = true
		case flags[o]:
		case values[o]:
			if !hasVal && i+1 < len(args) {
				i++
				if why := gitSplitValue("git config "+o, args[i]); why != "" {
					return why
				}
			}
		default:
			return fmt.Sprintf("git config %s can change settings; only --get and --list are allowed", o)
		}
	}
	if !read {
		return "git config without --get or --list can change settings"
	}
	return ""
}

func gitStash(args []arg) string {
	if len(args) > 0 && args[0].static {
		switch args[0].lit {
		case "list":
			// git stash list drops the first "--" and passes the
			// words after it to git log as options.
			v := gitLogValues
			v.readsPastDashDash = true
			return gitNoOutput("stash", v)(args[1:])
		case "show":
			return gitNoOutput("stash", gitRevValues)(args[1:])
		}
	}
	return "only git stash list and git stash show are allowed; git stash changes the work tree"
}

func gitReflog(args []arg) string {
	if len(args) == 0 {
		return ""
	}
	a := args[0]
	if a.static {
		switch {
		case a.lit == "show":
			return gitNoOutput("reflog", gitLogValues)(args[1:])
		case a.lit == "exists":
			return gitScan("reflog", args[1:], gitValues{}, nil)
		case strings.HasPrefix(a.lit, "-"):
			return gitNoOutput("reflog", gitLogValues)(args)
		}
	}
	return "only git reflog show is allowed (git reflog show <ref>)"
}

func gitWorktree(args []arg) string {
	if len(args) > 0 && args[0].static && args[0].lit == "list" {
		return gitScan("worktree", args[1:], gitValues{long: []string{"expire"}}, nil)
	}
	return "only git worktree list is allowed"
}
