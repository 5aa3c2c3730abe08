package doctor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Env is the repository doctor inspects and what it knows of its setup.
type Env struct {
	Root      string // the repository root (the person's checkout)
	StateRoot string // its .ultra/state
	// Store is the project's open store; nil: Inspect and Fix open the
	// one at StateRoot/ultra.db themselves (and close it).
	Store *store.Store
	// WorktreeDir is where this repository's run worktrees are made.
	WorktreeDir string
	// HookCommand is the check runs' pre-commit hooks run, before the
	// --state and --run flags ("" when unknown: hooks are then checked
	// for being ultra's, not for their exact command).
	HookCommand string
	// VerifyCommands are the configured test commands (empty: detection).
	VerifyCommands []string
	// Provider is the configured model server; nil when none is.
	Provider *Provider
	// ConfigError is why the configuration does not load ("" when it
	// does): reported as a finding.
	ConfigError string
	// SetupError and MCPMissing: see Observations.
	SetupError string
	MCPMissing []string
	// SkipEnvironment leaves the machine's checks (sandbox, git, gate key,
	// programs) out, for callers that only want the repository's state.
	SkipEnvironment bool
	// DispatchOnly checks only what blocks verified work (the store, the
	// environment, the test runners, the checkout's last baseline): the
	// quick health check before a run starts and a repair's verification.
	DispatchOnly bool
	Now          func() time.Time
}

// Provider is a configured model server and how to ask it whether it
// answers.
type Provider struct {
	Name    string
	BaseURL string
	Hint    string // what to do when it does not answer ("" for the default advice)
	// Default: nothing names a server; this is the one a run would use.
	Default bool
	// Probe asks the server's models endpoint; ok when it answered.
	Probe func(ctx context.Context) (ok bool, status string)
}

// ProbeTimeout bounds the model server's check.
const ProbeTimeout = 2 * time.Second

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// StorePath is where the project's store is.
func (e Env) StorePath() string { return filepath.Join(e.StateRoot, "ultra.db") }

// openStore is e's store, opened if need be; close it with the func.
func (e Env) openStore() (*store.Store, func(), error) {
	if e.Store != nil {
		return e.Store, func() {}, nil
	}
	if _, err := os.Stat(e.StateRoot); err != nil && errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(e.StateRoot, 0o755); err != nil {
			return nil, nil, err
		}
	}
	st, err := store.Open(e.StorePath())
	if err != nil {
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

// Inspect looks at the repository's ultra state and at the environment,
// and reports what needs fixing. It changes nothing.
func Inspect(ctx context.Context, e Env) Report {
	o, env := Observe(ctx, e)
	r := Assess(o, e.now())
	r.Environment = env
	return r
}

// Observe gathers the facts Assess judges, and the environment section.
func Observe(ctx context.Context, e Env) (Observations, Environment) {
	o := Observations{StorePath: e.StorePath(), ConfigError: e.ConfigError, SetupError: e.SetupError, MCPMissing: e.MCPMissing}
	var env Environment
	switch {
	case e.SkipEnvironment:
	case e.DispatchOnly:
		o.Env = dispatchEnvironment()
	default:
		env, o.Env = gatherEnvironment()
	}
	if e.Provider != nil {
		o.Provider = observeProvider(ctx, e.Provider)
	}
	if e.Root == "" {
		o.RunnerNote = "not in a git repository: only the environment was checked"
		return o, env
	}
	o.Runners, o.RunnerNote = observeRunners(e)
	st, closeStore, err := e.openStore()
	if err != nil {
		o.StoreError = err.Error()
		return o, env
	}
	defer closeStore()
	if !e.DispatchOnly {
		if problems, err := st.IntegrityCheck(ctx); err != nil {
			o.Integrity = []string{err.Error()}
		} else {
			o.Integrity = problems
		}
	}
	limit := 1 << 30
	if e.DispatchOnly {
		limit = 50 // the newest baselines are the ones that matter
	}
	rows, err := st.ListRuns(ctx, limit)
	if err != nil {
		o.StoreError = "listing its runs: " + err.Error()
		return o, env
	}
	o.BaseGate = observeBaseGate(ctx, e, rows)
	if e.DispatchOnly {
		return o, env
	}
	byID := map[string]*store.Run{}
	for _, row := range rows {
		byID[row.ID] = row
		ro := RunObs{ID: row.ID, Status: row.Status, PID: row.PID, Gone: worktreeGone(ctx, row)}
		if row.Status == agent.StatusRunning {
			// The same reading of the run every other surface makes.
			var rt *store.Runtime
			if r, err := st.RuntimeOf(ctx, row.ID); err == nil {
				rt, ro.Heartbeat = &r, r.Heartbeat
			}
			ro.Process = agent.Observe(row, rt).Process
		}
		o.Runs = append(o.Runs, ro)
	}
	o.Locks = observeLocks(e.StateRoot)
	o.Worktrees, o.Branches = observeGit(ctx, e, rows)
	for _, row := range rows {
		if unfinished(row) && !alive(row.PID) && worktreeGone(ctx, row) == "" && row.Workspace.Worktree != "" {
			o.Ledgers = append(o.Ledgers, observeLedger(ctx, e, row))
			o.Hooks = append(o.Hooks, observeHooks(ctx, e, row))
		}
	}
	return o, env
}

// unfinished: the run may still go on (it is not complete, cancelled,
// landed or undone).
func unfinished(row *store.Run) bool {
	ws := row.Workspace
	return row.Status != agent.StatusComplete && row.Status != agent.StatusCancelled && ws.Landed == "" && ws.Undone == ""
}

// alive reports whether pid is a live process (this one included).
func alive(pid int) bool {
	return pid == os.Getpid() || agent.ProcessAlive(pid)
}

// worktreeGone says why a run's worktree cannot be worked in, or "".
func worktreeGone(ctx context.Context, row *store.Run) string {
	ws := row.Workspace
	switch {
	case ws.Worktree == "":
		return ""
	case ws.Fate() != "":
		return ws.Fate()
	case !workspace.Exists(ctx, ws.Worktree):
		return "its worktree is missing"
	}
	return ""
}

// readPID reads the process id a lock file or marker holds (0 if none).
func readPID(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, true
}

func observeLocks(stateRoot string) []LockObs {
	entries, _ := os.ReadDir(filepath.Join(stateRoot, "runs"))
	var out []LockObs
	for _, d := range entries {
		if !d.IsDir() {
			continue
		}
		id := d.Name()
		for _, starting := range []bool{false, true} {
			path := filepath.Join(agent.RunDir(stateRoot, id), "lock")
			if starting {
				path = agent.StartingMarker(stateRoot, id)
			}
			pid, ok := readPID(path)
			if !ok {
				continue
			}
			out = append(out, LockObs{Run: id, Path: path, Starting: starting, PID: pid, Alive: alive(pid)})
		}
	}
	return out
}

// canon is path with symlinks resolved, so that paths compare.
func canon(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// runOf finds the stored run of a worktree path or branch.
func runOf(rows []*store.Run, path, branch string) *store.Run {
	p := canon(path)
	for _, row := range rows {
		ws := row.Workspace
		if ws.Worktree != "" && canon(ws.Worktree) == p {
			return row
		}
	}
	if branch == "" {
		return nil
	}
	for _, row := range rows {
		if row.Workspace.Branch == branch {
			return row
		}
	}
	return nil
}

func runState(row *store.Run) string { return row.Workspace.Fate() }

// observeWorktree fills what doctor needs to judge one worktree.
func observeWorktree(ctx context.Context, e Env, rows []*store.Run, path, branch string, listed bool) WorktreeObs {
	w := WorktreeObs{Path: path, Branch: branch, Listed: listed}
	id := filepath.Base(path)
	if row := runOf(rows, path, branch); row != nil {
		w.Run, w.RunState = row.ID, runState(row)
		id = row.ID
		w.Live = row.Status == agent.StatusRunning && alive(row.PID)
	}
	w.Starting = agent.Starting(e.StateRoot, id) || (branch != "" && agent.Starting(e.StateRoot, strings.TrimPrefix(branch, workspace.BranchPrefix)))
	w.Live = w.Live || agent.RunLocked(e.StateRoot, id)
	if w.Starting || w.Live || (w.Run != "" && w.RunState == "") {
		return w
	}
	if _, err := os.Lstat(filepath.Join(path, ".git")); err == nil {
		w.HasGit = true
	}
	switch {
	case !listed:
	case !dirExists(path):
		// Only git's record is left: nothing on disk to lose.
	default:
		changed, err := workspace.Changed(ctx, path)
		if err != nil {
			w.Changed = -1
		} else {
			w.Changed = len(changed)
		}
	}
	return w
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// observeGit lists the worktrees and ultra/ branches that may be left over.
func observeGit(ctx context.Context, e Env, rows []*store.Run) ([]WorktreeObs, []BranchObs) {
	var wts []WorktreeObs
	listed, err := workspace.List(ctx, e.Root)
	if err != nil {
		return nil, nil
	}
	dir := ""
	if e.WorktreeDir != "" {
		dir = canon(e.WorktreeDir)
	}
	seen := map[string]bool{}
	checkedOut := map[string]bool{}
	for i, l := range listed {
		checkedOut[l.Branch] = true
		p := canon(l.Path)
		seen[p] = true
		if i == 0 || p == canon(e.Root) {
			continue // the person's checkout
		}
		under := dir != "" && strings.HasPrefix(p, dir+string(filepath.Separator))
		if !under && !strings.HasPrefix(l.Branch, workspace.BranchPrefix) {
			continue // a worktree of the person's own
		}
		wts = append(wts, observeWorktree(ctx, e, rows, l.Path, l.Branch, true))
	}
	if dir != "" {
		entries, _ := os.ReadDir(dir)
		for _, d := range entries {
			p := filepath.Join(dir, d.Name())
			if !d.IsDir() || seen[canon(p)] {
				continue
			}
			if row := runOf(rows, p, ""); row != nil && runState(row) == "" {
				continue // a run's worktree git lost: resume and gc say so
			}
			wts = append(wts, observeWorktree(ctx, e, rows, p, "", false))
		}
	}
	var branches []BranchObs
	out, err := workspace.Git(ctx, e.Root, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+workspace.BranchPrefix)
	if err != nil {
		return wts, nil
	}
	for _, name := range strings.Split(out, "\n") {
		name = strings.TrimSpace(name)
		if name == "" || runOf(rows, "", name) != nil {
			continue
		}
		b := BranchObs{Name: name, Worktree: checkedOut[name],
			Starting: agent.Starting(e.StateRoot, strings.TrimPrefix(name, workspace.BranchPrefix))}
		b.Merged, b.Unique = branchReach(ctx, e.Root, name)
		branches = append(branches, b)
	}
	return wts, branches
}

// branchReach says whether branch's tip is on a local branch outside
// ultra/, and how many of its commits no other ref reaches.
func branchReach(ctx context.Context, repo, branch string) (merged bool, unique int) {
	ref := "refs/heads/" + branch
	if out, err := workspace.Git(ctx, repo, "for-each-ref", "--contains", ref, "--format=%(refname:short)", "refs/heads/"); err == nil {
		for _, b := range strings.Split(out, "\n") {
			if b = strings.TrimSpace(b); b != "" && !strings.HasPrefix(b, workspace.BranchPrefix) {
				merged = true
			}
		}
	}
	return merged, uniqueCommits(ctx, repo, branch)
}

// uniqueCommits counts the commits of branch no other ref (nor any
// worktree's HEAD) reaches; -1 when git cannot tell.
func uniqueCommits(ctx context.Context, repo, branch string) int {
	ref := "refs/heads/" + branch
	out, err := workspace.Git(ctx, repo, "rev-list", "--count", ref, "--not", "--exclude="+ref, "--all")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return -1
	}
	return n
}

func observeLedger(ctx context.Context, e Env, row *store.Run) LedgerObs {
	path := filepath.Join(row.Workdir, filepath.FromSlash(agent.RecordsOf(row).Ledger()))
	l := LedgerObs{Run: row.ID, Path: path}
	rep := ledger.Verify(path)
	problem := rep.Problem
	if problem == nil {
		problem = agent.CheckRecorded(ctx, e.StateRoot, row)
	}
	if problem != nil {
		l.Problem = problem.Error()
		var torn *ledger.TornError
		l.Torn = errors.As(problem, &torn)
	}
	return l
}

// hookCheck is the command a run's pre-commit hook runs, "" when unknown.
func (e Env) hookCheck(id string) string {
	if e.HookCommand == "" {
		return ""
	}
	return e.HookCommand + " --state " + workspace.ShellQuote(e.StateRoot) + " --run " + workspace.ShellQuote(id)
}

// hooksDir is where run id's worktree hooks are.
func hooksDir(stateRoot, id string) string {
	return filepath.Join(agent.RunDir(stateRoot, id), "hooks")
}

func observeHooks(ctx context.Context, e Env, row *store.Run) HookObs {
	wt := row.Workspace.Worktree
	h := HookObs{Run: row.ID, Worktree: wt, CanFix: e.HookCommand != ""}
	dir := hooksDir(e.StateRoot, row.ID)
	got := workspace.PersonConfigValue(ctx, wt, "core.hooksPath")
	switch {
	case got == "":
		h.Missing = append(h.Missing, "hooks setting (core.hooksPath)")
	case canon(got) != canon(dir):
		h.Changed = append(h.Changed, "hooks setting (core.hooksPath is "+got+")")
	}
	check := e.hookCheck(row.ID)
	for _, name := range []string{"pre-commit", "pre-push"} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			h.Missing = append(h.Missing, name+" hook")
			continue
		}
		b, _ := os.ReadFile(p)
		s := string(b)
		ok := fi.Mode()&0o111 != 0 && strings.HasPrefix(s, "#!/bin/sh\n")
		switch name {
		case "pre-commit":
			// It chains to the repository's own hook, never to itself.
			ok = ok && strings.Contains(s, "# Installed by ultra") && strings.Contains(s, " || exit 1\n") && !strings.Contains(s, workspace.ShellQuote(p))
			if check != "" {
				ok = ok && strings.Contains(s, "\n"+check+" || exit 1\n")
			}
		case "pre-push":
			ok = ok && strings.Contains(s, "ultra: pushing from a run's worktree is refused") && strings.HasSuffix(s, "exit 1\n")
		}
		if !ok {
			h.Changed = append(h.Changed, name+" hook")
		}
	}
	return h
}

// observeRunners finds the programs the project's test commands need.
func observeRunners(e Env) ([]RunnerObs, string) {
	type cmdIn struct{ command, dir string }
	var cmds []cmdIn
	for _, c := range e.VerifyCommands {
		cmds = append(cmds, cmdIn{c, ""})
	}
	if len(cmds) == 0 {
		found, err := verify.Detect(e.Root)
		if err != nil {
			return nil, "the project's test command could not be detected: " + err.Error()
		}
		if len(found) == 0 {
			return nil, "no test command was found for this project: set verify.command in .ultra/config, or runs cannot be verified"
		}
		for _, d := range found {
			if d.Kind == found[0].Kind {
				cmds = append(cmds, cmdIn{d.Command, d.Dir})
			}
		}
	}
	var out []RunnerObs
	for _, c := range cmds {
		prog := CommandProgram(c.command)
		r := RunnerObs{Command: c.command, Program: prog, Found: true}
		switch {
		case prog == "":
		case strings.Contains(prog, "/"):
			p := prog
			if !filepath.IsAbs(p) {
				p = filepath.Join(e.Root, c.dir, p)
			}
			_, err := os.Stat(p)
			r.Found = err == nil
		default:
			_, err := exec.LookPath(prog)
			r.Found = err == nil
		}
		out = append(out, r)
	}
	return out, ""
}

func observeProvider(ctx context.Context, p *Provider) *ProviderObs {
	o := &ProviderObs{Name: p.Name, BaseURL: p.BaseURL, Hint: p.Hint, Default: p.Default, Reachable: true, Status: NotChecked}
	if p.Probe == nil {
		return o
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	o.Reachable, o.Status = p.Probe(ctx)
	return o
}

// observeBaseGate finds the newest baseline a run measured of the tree the
// checkout's HEAD is at.
func observeBaseGate(ctx context.Context, e Env, rows []*store.Run) *BaseGateObs {
	tree, err := workspace.Git(ctx, e.Root, "rev-parse", "HEAD^{tree}")
	if err != nil || tree == "" {
		return nil
	}
	for _, row := range rows { // newest first
		b, err := gatefile.ReadBaseline(agent.RunDir(e.StateRoot, row.ID))
		if err != nil || b == nil || b.Tree != tree || b.Unfinished {
			continue
		}
		return &BaseGateObs{Tree: tree, Run: row.ID, Evaluated: b.Evaluated, Reason: b.Reason}
	}
	return nil
}
