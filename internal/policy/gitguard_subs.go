package policy

import (
	"fmt"
	"path"
	"strings"
)

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
