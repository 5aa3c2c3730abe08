package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Git is how runs use git: where their worktrees go and what they may
// never touch.
type Git struct {
	Protected []string           // branch patterns (default workspace.DefaultProtected)
	Identity  workspace.Identity // author of ultra's commits
	// Hook is the command the worktree's pre-commit hook runs to check a
	// commit (the run's id and state root are appended as flags).
	Hook string
}

func (g Git) protected() []string {
	if len(g.Protected) == 0 {
		return workspace.DefaultProtected
	}
	return g.Protected
}

// WorktreeSpec asks for the run to work in its own worktree.
type WorktreeSpec struct {
	Dir                string // parent directory of the runs' worktrees
	Base               string // branch to cut from ("" = the checkout's branch)
	IncludeUncommitted bool
	Setup              []string // shell commands run in the new worktree
	SetupTimeout       time.Duration
}

// makeWorktree creates run id's worktree and branch, installs its hook and
// runs the setup commands; on failure it leaves nothing behind.
func makeWorktree(ctx context.Context, o Options, spec Spec, id string) (*workspace.Worktree, error) {
	ws := spec.Worktree
	wt, err := workspace.Prepare(ctx, workspace.Start{Repo: spec.Repo, RunID: id, Dir: filepath.Join(ws.Dir, id),
		Base: ws.Base, IncludeUncommitted: ws.IncludeUncommitted, Identity: o.Git.Identity})
	if err != nil {
		return nil, err
	}
	if workspace.Protected(o.Git.protected(), wt.Branch) {
		return nil, &workspace.PreflightError{Msg: fmt.Sprintf("the run's branch %s matches a protected branch pattern (%s)", wt.Branch, strings.Join(o.Git.protected(), ", "))}
	}
	if err := workspace.Create(ctx, spec.Repo, wt); err != nil {
		_ = workspace.DeleteBranch(context.Background(), spec.Repo, wt.Branch)
		return nil, fmt.Errorf("creating the run's worktree: %w", err)
	}
	undo := func() {
		_ = workspace.Remove(context.Background(), spec.Repo, wt.Path)
		_ = workspace.DeleteBranch(context.Background(), spec.Repo, wt.Branch)
	}
	check := o.Git.Hook
	if check == "" {
		check = "false"
	} else {
		check += " --state " + workspace.ShellQuote(o.StateRoot) + " --run " + workspace.ShellQuote(id)
	}
	if err := workspace.InstallHooks(ctx, spec.Repo, wt.Path, filepath.Join(RunDir(o.StateRoot, id), "hooks"), check); err != nil {
		undo()
		return nil, fmt.Errorf("installing the worktree's pre-commit hook: %w", err)
	}
	for _, c := range ws.Setup {
		if err := runSetup(ctx, wt.Path, c, ws.SetupTimeout); err != nil {
			undo()
			return nil, err
		}
	}
	return wt, nil
}

func runSetup(ctx context.Context, dir, command string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	res, err := proc.Shell(ctx, command, proc.Options{Dir: dir, Env: proc.Environ(), Timeout: timeout})
	switch {
	case err != nil:
		return fmt.Errorf("workspace.setup command %q could not start: %w", command, err)
	case res.TimedOut:
		return fmt.Errorf("workspace.setup command %q timed out after %s in the new worktree", command, timeout)
	case res.ExitCode != 0:
		return fmt.Errorf("workspace.setup command %q failed (exit %d) in the new worktree:\n%s", command, res.ExitCode, event.Truncate(res.Output, 2000))
	}
	return nil
}

// StartingMarker is the file a run's process keeps while it makes the
// run's worktree, before the run is stored; it holds the process id.
func StartingMarker(stateRoot, id string) string {
	return filepath.Join(RunDir(stateRoot, id), "starting")
}

// Starting reports whether a live process is still making run id's
// worktree.
func Starting(stateRoot, id string) bool {
	b, err := os.ReadFile(StartingMarker(stateRoot, id))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && ProcessAlive(pid)
}

// gitRules are what the guard lets the run's git commands do.
func (r *runner) gitRules() policy.GitRules {
	return policy.GitRules{Protected: r.o.Git.protected(), Base: r.row.Workspace.Base,
		RunBranch: r.row.Workspace.Branch, Worktree: r.row.Workdir}
}

// checkGit is the commit guard for one bash command line.
func (r *runner) checkGit(cmd string) *refusal {
	v := policy.CheckGit(cmd, r.gitRules())
	if v.Refused != "" {
		return &refusal{layer: LayerGit, reason: v.Refused}
	}
	if v.Commits {
		tree, err := workspace.TreeHash(context.Background(), r.row.Workdir)
		if err != nil {
			return &refusal{layer: LayerGit, reason: "git commit is refused: ultra could not read the working tree: " + err.Error()}
		}
		if d := r.greenDecision(tree); d == nil {
			return &refusal{layer: LayerGit, reason: fmt.Sprintf("git commit is refused: the working tree (tree %s) has no passing gate decision. "+
				"ultra commits the run's work itself each time the gate passes, so you need not commit: call phase{to:\"verifying\"} when the change is ready", workspace.Short(tree))}
		}
	}
	return nil
}

// foreignRecords refuses a tree to commit whose .ultra/ differs from the
// run's base anywhere but in this run's own records: another run's
// records, ultra's state or the project's config are never a run's to
// change. TreeHash already stages .ultra/ from disk alone, which the
// model cannot write; this holds even where something got around that.
func (r *runner) foreignRecords(ctx context.Context, tree string) error {
	base := r.row.Workspace.From()
	if base == "" {
		return nil
	}
	var own []string
	if r.st.Goals != nil {
		own = r.st.Goals.records().Paths()
	}
	bad, err := workspace.ForeignUltraPaths(ctx, r.row.Workdir, base, tree, own)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("the tree changes %s under .ultra/, which is ultra's and not this run's records: ultra does not commit it", workspace.ListSome(bad, 5))
	}
	return nil
}

// greenDecision is the run's latest decision that let tree through, if any.
func (r *runner) greenDecision(tree string) *gate.Decision {
	ds, _ := gatefile.Read(RunDir(r.o.StateRoot, r.row.ID))
	return gate.Green(ds, tree)
}

// commitGreen commits the tree the gate let through on the run's branch.
func (r *runner) commitGreen(ctx context.Context, d gate.Decision) string {
	ws := r.row.Workspace
	if ws.Branch == "" || d.Tree == "" {
		return ""
	}
	msg := CommitMessage(r.row.Task, r.row.ID, d)
	if err := r.foreignRecords(ctx, d.Tree); err != nil {
		r.emit(event.Warning, event.WarningData{Message: "ultra did not commit the green tree: " + err.Error()})
		return "\nultra did not commit this tree: " + err.Error()
	}
	commit, err := workspace.CommitTree(ctx, r.row.Workdir, ws.Branch, d.Tree, msg, r.o.Git.Identity, r.o.Git.protected())
	if err != nil {
		r.emit(event.Warning, event.WarningData{Message: "ultra could not commit the green tree: " + err.Error()})
		return "\nultra could not commit this tree: " + err.Error()
	}
	if commit == "" {
		return fmt.Sprintf("\nThe branch %s already holds this tree; nothing new to commit.", ws.Branch)
	}
	r.st.Checkpoint = commit
	r.emit(event.Commit, event.CommitData{Commit: commit, Branch: ws.Branch, Tree: d.Tree, Gate: d.N, Status: string(d.Status)})
	return fmt.Sprintf("\nultra committed the tree as %s on %s.", workspace.Short(commit), ws.Branch)
}

// CommitMessage is the message of ultra's commit of a green tree.
func CommitMessage(task, runID string, d gate.Decision) string {
	subject := strings.TrimSpace(strings.SplitN(strings.TrimSpace(task), "\n", 2)[0])
	if len(subject) > 64 {
		subject = strings.TrimSpace(subject[:61]) + "..."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ultra: %s\n\n", subject)
	fmt.Fprintf(&b, "Gate decision %d: %s (%d passed, %d failed, %d skipped).\n", d.N, d.Status, d.Counts.Passed, d.Counts.Failed+d.Counts.Errors, d.Counts.Skipped)
	if d.Waiver != nil {
		fmt.Fprintf(&b, "Waived by %s: %s\n", d.Waiver.By, d.Waiver.Reason)
	}
	fmt.Fprintf(&b, "\nUltra-Run: %s\nUltra-Gate: %d %s\n", runID, d.N, d.Status)
	return b.String()
}

// worktreeGone explains why a run's worktree cannot be worked in, or "".
func worktreeGone(ctx context.Context, row *store.Run) string {
	ws := row.Workspace
	switch {
	case ws.Worktree == "":
		return ""
	case ws.Landed != "":
		return fmt.Sprintf("run %s was landed (%s)", row.ID, workspace.Short(ws.Landed))
	case ws.Undone != "":
		return fmt.Sprintf("run %s was undone: its worktree and branch are gone", row.ID)
	case ws.Removed != "" || !workspace.Exists(ctx, ws.Worktree):
		return fmt.Sprintf("run %s's worktree %s was removed", row.ID, ws.Worktree)
	}
	return ""
}

// IsPreflight reports whether err is a reason not to start a run.
// A run refused for want of a sandbox is one too.
func IsPreflight(err error) bool {
	var pe *workspace.PreflightError
	var ce *ContainmentError
	return errors.As(err, &pe) || errors.As(err, &ce)
}

// ErrLocked means a person's command (land, undo, gc) holds the run.
var ErrLocked = errors.New("another ultra command is working on the run")

// LockRun keeps other ultra commands (resume, land, undo, gc, waive) off
// run id while a person's command changes its branch or worktree. A lock
// left by a process that died is taken over.
func LockRun(stateRoot, id string) (unlock func(), err error) {
	path := filepath.Join(RunDir(stateRoot, id), "lock")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprint(f, os.Getpid())
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if pid := lockHolder(path); pid != 0 && ProcessAlive(pid) {
			return nil, fmt.Errorf("%w (pid %d): try again when it is done", ErrLocked, pid)
		}
		os.Remove(path) // stale
	}
	return nil, fmt.Errorf("%w: could not take %s", ErrLocked, path)
}

// RunLocked reports whether a live process holds run id's lock.
func RunLocked(stateRoot, id string) bool {
	pid := lockHolder(filepath.Join(RunDir(stateRoot, id), "lock"))
	return pid != 0 && pid != os.Getpid() && ProcessAlive(pid)
}

func lockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// nothingMade says whether the run has a worktree and has made no
// progress in it: no model turn answered, and its branch still at the
// commit it started from. Such a run, failing, leaves nothing behind.
func (r *runner) nothingMade() bool {
	ws := r.row.Workspace
	if ws.Worktree == "" || ws.Removed != "" || r.st.Phase.Used.Turns > 0 {
		return false
	}
	tip := workspace.BranchTip(context.Background(), r.row.Repo, ws.Branch)
	return tip != "" && tip == ws.StartCommit
}

// discardWorkspace removes the worktree and branch of a run that made
// nothing; its record and events stay, so ultra runs shows why it failed.
func (r *runner) discardWorkspace() {
	ctx := context.Background()
	ws := r.row.Workspace
	err := workspace.Remove(ctx, r.row.Repo, ws.Worktree)
	if err == nil {
		err = workspace.DeleteBranch(ctx, r.row.Repo, ws.Branch)
	}
	if err == nil {
		ws.Removed = r.o.Now().UTC().Format(time.RFC3339)
		if err = r.o.Store.SetWorkspace(ctx, r.row.ID, ws); err == nil {
			r.row.Workspace = ws
		}
	}
	if err != nil {
		r.emit(event.Warning, event.WarningData{Message: "the run made nothing, but its worktree or branch could not be removed (ultra gc will): " + err.Error()})
	}
}
