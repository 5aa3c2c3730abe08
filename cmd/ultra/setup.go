package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// project is the repository a command works on.
type project struct {
	Root      string // repository root
	Dir       string // the directory ultra was started in (or -C)
	StateRoot string // .ultra/state
	Config    config.Config
	// Fleet: no repository here, only the shared store (ULTRA_DB).
	Fleet bool
	// shared: the run's records read are the fleet's, rebuilt from the
	// shared store under StateRoot (sharedView).
	shared bool
}

// findProject locates the git repository of -C or the current directory
// and loads its configuration.
func findProject(cmd *cobra.Command) (*project, error) {
	dir, _ := cmd.Flags().GetString("dir")
	return findProjectIn(dir)
}

// findProjectIn is findProject of dir ("": the current directory).
func findProjectIn(dir string) (*project, error) {
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, usageErr("%s is not a directory", abs)
	}
	// Inside a run's worktree, the project is still the person's checkout.
	root, err := workspace.ProjectRoot(context.Background(), abs)
	if err != nil {
		if sharedDB() != "" {
			return fleetProject(abs)
		}
		return nil, usageErr("%s is not inside a git repository: ultra works in git repositories (run `git init` first)", abs)
	}
	cfg, err := config.Load(root)
	if d, err := filepath.EvalSymlinks(abs); err == nil {
		abs = d
	}
	p := &project{Root: root, Dir: abs, StateRoot: filepath.Join(root, ".ultra", "state"), Config: cfg}
	if err != nil {
		return p, &configError{&exitError{code: agent.ExitUsage, err: err}}
	}
	return p, nil
}

// fleetProject is where ultra stands outside any repository with a
// shared store (ULTRA_DB): the fleet's runs are read and steered from the
// store; what a command keeps on this machine goes under ultra's
// per-user state.
func fleetProject(dir string) (*project, error) {
	state, err := config.StateDir()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(dir)
	p := &project{Root: dir, Dir: dir, StateRoot: filepath.Join(state, "fleet"), Config: cfg, Fleet: true}
	if err != nil {
		return p, &configError{&exitError{code: agent.ExitUsage, err: err}}
	}
	return p, nil
}

// sharedView is where a command that only reads a run's records (status,
// goals, ledger, gate show) finds them: for a fleet's run read outside a
// repository, or driven by another machine, the records its steps shared
// through the store, rebuilt under this machine's state
// (agent.ViewShared), with the state root they are under; else the run's
// own (row and p.StateRoot as they are). shared says which.
func (p *project) sharedView(cmd *cobra.Command, st *store.Store, row *store.Run) (stateRoot string, view *store.Run, shared bool, err error) {
	if sharedDB() == "" || (!p.Fleet && p.owns(row) && agent.DrivenHere(cmd.Context(), st, row)) {
		return p.StateRoot, row, false, nil
	}
	root := filepath.Join(p.StateRoot, "shared")
	view, err = agent.ViewShared(cmd.Context(), st, root, row)
	if errors.Is(err, agent.ErrNoShared) {
		return p.StateRoot, row, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("run %s's records in the shared store: %w", row.ID, err)
	}
	return root, view, true, nil
}

// owns reports whether row is a run of this checkout (its records under
// p.StateRoot), not one a fleet's worker ran in a clone of its own, on
// this machine or another.
func (p *project) owns(row *store.Run) bool {
	if p.Fleet || row.Repo == "" {
		return false
	}
	a, err := filepath.EvalSymlinks(row.Repo)
	if err != nil {
		a = row.Repo
	}
	b, err := filepath.EvalSymlinks(p.Root)
	if err != nil {
		b = p.Root
	}
	return a == b
}

// configError is findProject's error when the project was found but its
// configuration (the user's or the project's) does not load: every
// command refuses it, and doctor reports it.
type configError struct{ *exitError }

func (e *configError) Unwrap() error { return e.exitError }

// openStore opens the project's store, keeping .ultra/state out of git.
func (p *project) openStore() (*store.Store, error) {
	if db := sharedDB(); db != "" && !strings.HasPrefix(db, "postgres://") && !strings.HasPrefix(db, "postgresql://") {
		return nil, usageErr("ULTRA_DB=%q is no postgres:// URL: a fleet's shared store is PostgreSQL (unset ULTRA_DB for this repository's own store)", redactURL(db))
	}
	if p.Fleet {
		return store.Open(sharedDB())
	}
	if err := realDirs(p.Root, p.StateRoot); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.StateRoot, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", p.StateRoot, err)
	}
	ensureIgnored(p.StateRoot)
	if db := sharedDB(); db != "" {
		return store.Open(db)
	}
	return store.Open(filepath.Join(p.StateRoot, "ultra.db"))
}

// sharedDB is the fleet's shared store (ULTRA_DB, a postgres:// URL), or
// "" for the repository's own.
func sharedDB() string { return strings.TrimSpace(os.Getenv("ULTRA_DB")) }

// interruptible returns a context cancelled by SIGINT or SIGTERM; a second
// signal exits at once.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range ch {
			n++
			if n == 1 {
				fmt.Fprintln(os.Stderr, "ultra: interrupting (again to exit at once)…")
				cancel()
				continue
			}
			os.Exit(130)
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

// openProject finds the project and opens its store; close the store when done.
func openProject(cmd *cobra.Command) (*project, *store.Store, error) {
	p, err := findProject(cmd)
	if err != nil {
		return nil, nil, err
	}
	st, err := p.openStore()
	if err != nil {
		return nil, nil, err
	}
	return p, st, nil
}

// openRun opens the project and finds run id in it; close the store when
// done.
func openRun(cmd *cobra.Command, id string) (*project, *store.Store, *store.Run, error) {
	p, st, err := openProject(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	if id == latestID || id == latestBranchedID {
		if id, err = latestRunOf(cmd, st, id == latestBranchedID); err != nil {
			st.Close()
			return nil, nil, nil, err
		}
	}
	row, err := getRun(cmd, st, id)
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return p, st, row, nil
}

// latestID stands for the latest run in openRun: what shownRun gives
// the commands that only show a run when no run is named. No id a person
// types is it (getRun refuses an empty one).
const latestID = "\x00latest"

// latestBranchedID stands for the latest run with a branch of its own
// (shownBranchedRun): a chat's is not what diff shows.
const latestBranchedID = "\x00latest-branched"

// shownBranchedRun is shownRun for the commands about a run's branch.
func shownBranchedRun(args []string) string {
	if len(args) == 0 {
		return latestBranchedID
	}
	return args[0]
}

// shownRun is the run a command that only shows one shows: args[0], or
// the latest run when there is none.
func shownRun(args []string) string {
	if len(args) == 0 {
		return latestID
	}
	return args[0]
}

// agentOptions are what commands that act on stored runs (cancel, waive,
// land, …) give the agent: the store, the state root and the git rules.
func (p *project) agentOptions(st *store.Store) agent.Options {
	return agent.Options{Store: st, StateRoot: p.StateRoot, Git: p.gitSettings(), VerifyTimeout: p.Config.Verify.Timeout.D(), Ultra: ultraProgram(), GateUnixSockets: p.Config.Verify.UnixSockets, NoGateCache: p.Config.Verify.CacheOff(), NoTestsAhead: p.Config.Verify.AheadOff()}
}

// ensureIgnored keeps a state directory out of git with its own .gitignore.
func ensureIgnored(stateRoot string) {
	ignore := filepath.Join(stateRoot, ".gitignore")
	if _, err := os.Stat(ignore); os.IsNotExist(err) {
		_ = os.WriteFile(ignore, []byte("# ultra's run state: never committed\n*\n"), 0o644)
	}
}

// worktreeDir is where this repository's run worktrees go: the configured
// directory, or $XDG_STATE_HOME/ultra/worktrees (~/.local/state/…), in a
// directory named for the repository.
func (p *project) worktreeDir() (string, error) {
	base := p.Config.Workspace.Dir
	if base == "" {
		state, err := config.StateDir()
		if err != nil {
			return "", fmt.Errorf("no home directory for the worktrees (set workspace.dir): %w", err)
		}
		base = filepath.Join(state, "worktrees")
	} else if strings.HasPrefix(base, "~/") {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, base[2:])
	} else if !filepath.IsAbs(base) {
		base = filepath.Join(p.Root, base)
	}
	return filepath.Join(base, repoKey(p.Root)), nil
}

// repoKey names a repository in per-user directories: its base name and
// a hash of its path.
func repoKey(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Base(root) + "-" + hex.EncodeToString(sum[:4])
}

// historyPath is where the TUI keeps what a person typed in the
// repository at root: in the per-user state, which every run's sandbox
// hides whatever the registry knows (under the repository's own
// .ultra/state, a run started elsewhere before this repository was
// registered could read it).
func (p *project) historyPath() string {
	if state, err := config.StateDir(); err == nil {
		return filepath.Join(state, "tui", repoKey(p.Root)+".jsonl")
	}
	return filepath.Join(p.StateRoot, "tui", "history.jsonl")
}

// gitSettings are the runs' git rules from the configuration.
func (p *project) gitSettings() agent.Git {
	w := p.Config.Workspace
	g := agent.Git{Protected: w.Protected, Identity: workspace.Identity{Name: w.AuthorName, Email: w.AuthorEmail}}
	if exe, err := os.Executable(); err == nil {
		g.Hook = workspace.ShellQuote(exe) + " hook pre-commit"
	}
	return g
}

// realDirs refuses a folder below root on the way to dir that is a
// symbolic link (a repository can commit .ultra or .ultra/state as one):
// ultra's state, its logs and what it prunes or chmods stay in real
// folders of the repository, never wherever a link points.
func realDirs(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is not inside %s", dir, root)
	}
	at := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, part)
		fi, err := os.Lstat(at)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			to, _ := os.Readlink(at)
			return &exitError{code: agent.ExitUsage, err: fmt.Errorf("%s is a symbolic link (to %s): ultra keeps its state only in a real folder of the repository; remove the link (git rm %s) and run ultra again",
				at, to, filepath.ToSlash(strings.TrimPrefix(at, root+string(filepath.Separator))))}
		}
		if !fi.IsDir() {
			return &exitError{code: agent.ExitUsage, err: fmt.Errorf("%s is not a folder: ultra keeps its state there", at)}
		}
	}
	return nil
}
