package policy

import (
	"fmt"
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
