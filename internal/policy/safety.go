package policy

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Hazard is a destructive action found in a command line: one a person
// must confirm, in every permission profile. In a run nobody watches that
// means a refusal and an escalation, with the safe alternative.
type Hazard struct {
	What        string // what the command would do
	Alternative string // what to do instead
}

// Destructive finds the first destructive action of a bash command line:
// recursive deletion of the worktree root, of a home directory or of
// anything outside the worktree; force pushes and remote branch deletion;
// piping a download into an interpreter; killing processes the command did
// not start; dropping databases; overwriting devices or file systems.
// workdir is the run's worktree (absolute). Like the git guard it reads
// the syntax only, into sh -c, bash -c and eval strings; the sandbox, not
// this function, is what keeps a command from reaching outside the
// worktree. It is pure.
func Destructive(command, workdir string) *Hazard {
	return DestructiveIn(command, workdir, nil)
}

// DestructiveIn is Destructive where the directories scratch are the
// command's own (a sandbox's private /tmp): removing what lies below one
// harms nobody.
func DestructiveIn(command, workdir string, scratch []string) *Hazard {
	return destructive(command, place{path.Clean("/" + workdir), scratch}, 0)
}

// place is where a command works: the worktree, and its own scratch
// directories.
type place struct {
	workdir string
	scratch []string
}

// mine says p lies in the worktree, or below a scratch directory (not
// one itself) without holding the worktree: a worktree that lies there on
// the host is mounted into the sandbox's /tmp too, and removing a folder
// above it removes the work.
func (pl place) mine(p string) bool {
	if within(pl.workdir, p) {
		return true
	}
	for _, d := range pl.scratch {
		if p != d && within(d, p) && !within(p, pl.workdir) {
			return true
		}
	}
	return false
}

func destructive(src string, pl place, depth int) *Hazard {
	if depth > 4 {
		return nil
	}
	f, err := parse(src)
	if err != nil {
		return nil // the classifier and the guards report unparsable lines
	}
	c := newClassifier(src, f, depth, nil)
	var h *Hazard
	syntax.Walk(f, func(n syntax.Node) bool {
		if h != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				if downloads(c, n.X) && runsInput(c, n.Y) {
					h = &Hazard{What: "it pipes a download into an interpreter (curl … | sh), running code nobody has read",
						Alternative: "download the script to a file in the worktree, read it, and run it only if the task needs it"}
				}
			}
		case *syntax.CallExpr:
			h = callHazard(c, n, pl, depth)
		}
		return h == nil
	})
	return h
}

// downloads reports whether a command (of a pipeline) fetches from the
// network.
func downloads(c *classifier, s *syntax.Stmt) bool {
	found := false
	syntax.Walk(s, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			switch path.Base(c.analyse(ce.Args[0]).lit) {
			case "curl", "wget", "fetch", "aria2c", "http", "xh":
				found = true
			}
		}
		return !found
	})
	return found
}

// runsInput reports whether a command runs what it reads as code.
func runsInput(c *classifier, s *syntax.Stmt) bool {
	found := false
	syntax.Walk(s, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok {
			for _, w := range ce.Args {
				name := path.Base(c.analyse(w).lit)
				if strings.HasPrefix(name, "-") || strings.Contains(name, "=") {
					continue // a wrapper's option or an assignment
				}
				switch name {
				case "sudo", "env", "exec", "command", "nice", "nohup", "time", "timeout", "doas":
					continue
				}
				switch strings.TrimRight(name, "0123456789.") {
				case "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "perl", "ruby", "node", "php", "pwsh", "source", "":
					found = true
				}
				break
			}
		}
		return !found
	})
	return found
}

var dropSQL = regexp.MustCompile(`(?i)\b(drop\s+(database|schema|table|user|role)\b|truncate\s+table\b|dropDatabase\s*\(|flushall\b|flushdb\b)`)

func callHazard(c *classifier, ce *syntax.CallExpr, pl place, depth int) *Hazard {
	if len(ce.Args) == 0 {
		return nil
	}
	args := make([]arg, len(ce.Args))
	for i, w := range ce.Args {
		args[i] = c.analyse(w)
	}
	name := path.Base(args[0].lit)
	rest := args[1:]
	switch name {
	case "sudo", "env", "command", "exec", "nice", "nohup", "time", "timeout", "xargs", "doas", "setsid", "stdbuf", "ionice", "chroot":
		// A wrapper: judge what it runs (its options are skipped loosely:
		// a destructive word anywhere after it still counts).
		for i, a := range rest {
			if !strings.HasPrefix(a.lit, "-") && !strings.Contains(a.lit, "=") && a.static {
				if h := argvHazard(rest[i:], pl, depth); h != nil {
					return h
				}
				break
			}
		}
		return nil
	}
	return argvHazard(args, pl, depth)
}

func argvHazard(args []arg, pl place, depth int) *Hazard {
	workdir := pl.workdir
	name := path.Base(args[0].lit)
	rest := args[1:]
	switch name {
	case "rm", "rmdir", "shred", "unlink":
		return removeHazard(name, rest, pl)
	case "git":
		return gitHazard(rest)
	case "kill", "pkill", "killall", "skill", "slay":
		return killHazard(name, rest)
	case "dropdb", "dropuser":
		return &Hazard{What: name + " drops a database or role", Alternative: "leave existing databases alone; create a scratch database of the run's own for tests"}
	case "psql", "mysql", "mariadb", "sqlite3", "mongo", "mongosh", "redis-cli", "cockroach", "clickhouse-client":
		for _, a := range rest {
			if dropSQL.MatchString(a.lit) || dropSQL.MatchString(a.text) {
				return &Hazard{What: fmt.Sprintf("%s is asked to drop or empty a database (%s)", name, a.text),
					Alternative: "leave existing data alone; use a scratch database of the run's own for tests"}
			}
		}
	case "dd":
		for _, a := range rest {
			if strings.HasPrefix(a.lit, "of=/dev/") && a.lit != "of=/dev/null" {
				return &Hazard{What: "dd writes a device (" + a.lit + ")", Alternative: "write to a file in the worktree"}
			}
		}
	case "sh", "bash", "zsh", "dash", "ksh":
		for i, a := range rest {
			if a.lit == "-c" && i+1 < len(rest) && rest[i+1].static {
				return destructive(rest[i+1].lit, pl, depth+1)
			}
		}
	case "eval":
		var parts []string
		for _, a := range rest {
			parts = append(parts, a.lit)
		}
		return destructive(strings.Join(parts, " "), pl, depth+1)
	case "chmod", "chown", "chgrp":
		recursive := false
		for _, a := range rest {
			if a.lit == "-R" || a.lit == "--recursive" || (strings.HasPrefix(a.lit, "-") && !strings.HasPrefix(a.lit, "--") && strings.Contains(a.lit, "R")) {
				recursive = true
			}
		}
		if recursive {
			for _, a := range rest {
				if p, ok := target(a, workdir); ok && !strings.HasPrefix(a.lit, "-") && (p == "/" || !within(workdir, p)) {
					return &Hazard{What: fmt.Sprintf("%s -R changes %s, outside the worktree", name, a.text), Alternative: "change only files inside the worktree"}
				}
			}
		}
	}
	if strings.HasPrefix(name, "mkfs") || name == "wipefs" || name == "fdisk" || name == "parted" {
		return &Hazard{What: name + " rewrites a disk or file system", Alternative: "none inside a coding run: ask a person"}
	}
	return nil
}

// removeHazard: recursive removal of the worktree root or of anything
// outside it; any removal of a path outside it.
func removeHazard(name string, rest []arg, pl place) *Hazard {
	workdir := pl.workdir
	recursive := name == "shred" || name == "rmdir"
	var targets []arg
	opts := true
	for _, a := range rest {
		switch {
		case opts && a.lit == "--":
			opts = false
		case opts && strings.HasPrefix(a.lit, "--"):
			recursive = recursive || a.lit == "--recursive"
		case opts && strings.HasPrefix(a.lit, "-") && len(a.lit) > 1:
			recursive = recursive || strings.ContainsAny(a.lit, "rR")
		default:
			targets = append(targets, a)
		}
	}
	for _, a := range targets {
		p, ok := target(a, workdir)
		if !ok {
			if recursive && !a.static && !strings.Contains(a.prefix, "/") && a.prefix == "" {
				return &Hazard{What: fmt.Sprintf("%s -r of %s, a path known only when it runs (it could be the worktree root or outside it)", name, a.text),
					Alternative: "name the directory inside the worktree literally (rm -rf build/)"}
			}
			continue
		}
		switch {
		case p == workdir:
			return &Hazard{What: fmt.Sprintf("%s deletes the worktree root (%s)", name, a.text), Alternative: "delete only the files or directories the task needs removed, by name"}
		case !pl.mine(p):
			return &Hazard{What: fmt.Sprintf("%s deletes %s, outside the worktree", name, a.text), Alternative: "work only inside the worktree; files outside it belong to someone else"}
		}
	}
	return nil
}

// target resolves a word to an absolute path when it can: a static path
// (relative to workdir), ~ and $HOME (outside, whatever they are), or a
// glob whose static prefix is a directory ("/*", "../*", "./*" → that
// directory).
func target(a arg, workdir string) (string, bool) {
	t := a.text
	switch {
	case t == "~" || strings.HasPrefix(t, "~/") || strings.HasPrefix(t, "$HOME") || strings.HasPrefix(t, "${HOME}") || strings.HasPrefix(t, `"$HOME`):
		return "/home-directory", true
	case t == "$PWD" || t == `"$PWD"` || t == "${PWD}" || t == `"${PWD}"` || t == "$(pwd)" || t == `"$(pwd)"`:
		return workdir, true
	}
	s := a.lit
	if !a.static {
		if !a.multi || a.prefix == "" {
			return "", false
		}
		s = a.prefix
		if i := strings.LastIndex(s, "/"); i >= 0 {
			s = s[:i+1]
		} else {
			s = "."
		}
	}
	if s == "" {
		return "", false
	}
	if !strings.HasPrefix(s, "/") {
		s = workdir + "/" + s
	}
	return path.Clean(s), true
}

func gitHazard(rest []arg) *Hazard {
	sub := -1
	for i, a := range rest {
		if !strings.HasPrefix(a.lit, "-") {
			sub = i
			break
		}
		if a.lit == "-C" || a.lit == "-c" || a.lit == "--git-dir" || a.lit == "--work-tree" {
			// the value follows
			if i+1 < len(rest) {
				rest[i+1].lit = "-" + rest[i+1].lit // skip it as an option
			}
		}
	}
	if sub < 0 || rest[sub].lit != "push" {
		return nil
	}
	for _, a := range rest[sub+1:] {
		l := a.lit
		switch {
		case l == "-f" || l == "--force" || strings.HasPrefix(l, "--force-with-lease") || l == "--force-if-includes" || l == "--mirror" || l == "--prune":
			return &Hazard{What: "git push " + l + " can overwrite or remove commits on the remote", Alternative: "ultra does not push; a person lands the run's branch with ultra land and pushes it"}
		case l == "-d" || l == "--delete" || (strings.HasPrefix(l, ":") && len(l) > 1):
			return &Hazard{What: "git push deletes a remote branch (" + a.text + ")", Alternative: "ultra does not push; leave remote branches to a person"}
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.Contains(l, "f"):
			return &Hazard{What: "git push " + l + " forces", Alternative: "ultra does not push; a person lands and pushes the run's branch"}
		case strings.HasPrefix(l, "+"):
			return &Hazard{What: "git push of a forced refspec (" + a.text + ")", Alternative: "ultra does not push; a person lands and pushes the run's branch"}
		}
	}
	return nil
}

// killHazard: signals to processes the command did not start. $! and job
// specs (%1) name the command's own; numbers, -1 and names may be anyone's.
func killHazard(name string, rest []arg) *Hazard {
	if name != "kill" {
		return &Hazard{What: name + " signals processes by name: they may not be the run's", Alternative: "kill only what the command itself started ($! or %1), or let the call end: its processes end with it"}
	}
	sigDone := false
	for _, a := range rest {
		l := a.lit
		switch {
		case !a.static || l == "--" || l == "-l" || l == "-L" || l == "--list":
			// a variable ($!, $pid) names what the command started; lists
		case !sigDone && strings.HasPrefix(l, "-") && l != "-1":
			sigDone = true // the signal
		case l == "-1" || l == "0" || isNumber(l) || isNumber(strings.TrimPrefix(l, "-")):
			return &Hazard{What: "kill " + a.text + " signals a process (or group) the command did not start", Alternative: "kill only what the command itself started ($! or %1), or let the call end: its processes end with it"}
		}
	}
	return nil
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// within reports whether p is dir or below it (both clean, absolute).
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
