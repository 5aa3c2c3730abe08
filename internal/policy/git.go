package policy

import (
	"fmt"
	"strings"
)

// gitSubcommands are the read-only git subcommands and their checks.
var gitSubcommands = map[string]func(args []arg) string{
	"status":        gitAny("status"),
	"log":           gitNoOutput("log"),
	"show":          gitNoOutput("show"),
	"diff":          gitNoOutput("diff"),
	"shortlog":      gitNoOutput("shortlog"),
	"blame":         gitAny("blame"),
	"rev-parse":     gitAny("rev-parse"),
	"rev-list":      gitAny("rev-list"),
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

// checkGit skips git's global options and judges the subcommand.
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
		switch o {
		case "-C", "--git-dir", "--work-tree", "--namespace":
			if !hasVal {
				i++
			}
		case "-c":
			i++
			if i >= len(args) {
				return ""
			}
			kv := args[i]
			if !kv.static {
				return fmt.Sprintf("git -c %s is computed and could make git run commands", kv.text)
			}
			key, _, _ := strings.Cut(kv.lit, "=")
			if !safeGitConfig(key) {
				return fmt.Sprintf("git -c %s could make git run commands; only display settings are allowed", key)
			}
		case "--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects",
			"--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
			"--icase-pathspecs", "--no-optional-locks", "--no-advice", "--no-lazy-fetch":
		case "--version", "--help", "--html-path", "--man-path", "--info-path":
			return ""
		case "--exec-path":
			if hasVal {
				return "git --exec-path=... changes which programs git runs"
			}
			return ""
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
	return check(args[i+1:])
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

// gitScan calls check on every static option before "--" and refuses
// computed words that could be options.
func gitScan(sub string, args []arg, check func(i int, opt string) string) string {
	for i, a := range args {
		if !a.static {
			if !a.dashSafe() {
				return notLiteral("git "+sub, a)
			}
			continue
		}
		if a.lit == "--" {
			return ""
		}
		if strings.HasPrefix(a.lit, "-") && check != nil {
			if why := check(i, a.lit); why != "" {
				return why
			}
		}
	}
	return ""
}

func gitAny(sub string) func([]arg) string {
	return func(args []arg) string { return gitScan(sub, args, nil) }
}

// gitNoOutput refuses --output (and its abbreviations), which writes the
// diff or log to a file.
func gitNoOutput(sub string) func([]arg) string {
	return func(args []arg) string {
		return gitScan(sub, args, func(_ int, o string) string {
			name, _, _ := strings.Cut(o, "=")
			if len(name) >= 3 && strings.HasPrefix("--output", name) {
				return fmt.Sprintf("git %s --output writes to a file", sub)
			}
			return ""
		})
	}
}

func gitGrep(args []arg) string {
	return gitScan("grep", args, func(_ int, o string) string {
		name, _, _ := strings.Cut(o, "=")
		if len(name) >= 4 && strings.HasPrefix("--open-files-in-pager", name) {
			return "git grep --open-files-in-pager runs a program"
		}
		if !strings.HasPrefix(o, "--") {
			for _, ch := range o[1:] {
				if ch == 'O' {
					return "git grep -O runs a program"
				}
				if strings.ContainsRune("efABCm", ch) {
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
				if !hasVal {
					i++
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
			return gitScan("remote", args[1:], nil)
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
		"--fixed-value": true, "--show-names": true, "--no-type": true}
	values := map[string]bool{"--file": true, "-f": true, "--blob": true, "--type": true,
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
			if !hasVal {
				i++
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
		case "list", "show":
			return gitNoOutput("stash")(args[1:])
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
			return gitNoOutput("reflog")(args[1:])
		case a.lit == "exists":
			return gitScan("reflog", args[1:], nil)
		case strings.HasPrefix(a.lit, "-"):
			return gitNoOutput("reflog")(args)
		}
	}
	return "only git reflog show is allowed (git reflog show <ref>)"
}

func gitWorktree(args []arg) string {
	if len(args) > 0 && args[0].static && args[0].lit == "list" {
		return gitScan("worktree", args[1:], nil)
	}
	return "only git worktree list is allowed"
}
