package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/policy"
)

// BranchPrefix starts the name of every run's branch.
const BranchPrefix = "ultra/"

// DefaultProtected are the branches no run commits, resets or pushes to.
var DefaultProtected = []string{"main", "master", "release/*"}

// Protected reports whether branch matches one of the patterns (path.Match
// syntax; "refs/heads/" is ignored).
func Protected(patterns []string, branch string) bool {
	return policy.BranchProtected(patterns, branch)
}

// Identity is who ultra's commits are by.
type Identity struct {
	Name, Email string
}

// DefaultIdentity authors ultra's commits unless configured otherwise.
var DefaultIdentity = Identity{Name: "ultra", Email: "ultra@localhost"}

func (id Identity) env() []string {
	if id.Name == "" {
		id = DefaultIdentity
	}
	return []string{"GIT_AUTHOR_NAME=" + id.Name, "GIT_AUTHOR_EMAIL=" + id.Email,
		"GIT_COMMITTER_NAME=" + id.Name, "GIT_COMMITTER_EMAIL=" + id.Email}
}

// PreflightError is a reason not to start a run here; the message says
// what to do.
type PreflightError struct{ Msg string }

func (e *PreflightError) Error() string { return e.Msg }

// Start says where and from what a run's worktree is made.
type Start struct {
	Repo               string // the person's checkout (main worktree root)
	RunID              string
	Dir                string // the worktree directory to create
	Base               string // branch to cut from; "" = the checkout's current branch
	IncludeUncommitted bool   // snapshot the checkout's uncommitted changes into the start commit
	Identity           Identity
}

// ResearchDir is where research runs write their reports, in the
// checkout.
const ResearchDir = ".ultra/research"

// Worktree is a run's worktree and branch.
type Worktree struct {
	Path        string
	Branch      string
	Base        string
	BaseCommit  string
	StartCommit string
	// Snapshot lists the uncommitted files taken into the start commit.
	Snapshot []string
	// Untracked and Modified list the checkout's uncommitted files the
	// run does not see (it starts from the committed tree): new files,
	// and changed or staged tracked ones.
	Untracked, Modified []string
}

// Prepare checks that a run can start from s and decides its base and
// start commit, without changing anything but git's object store.
func Prepare(ctx context.Context, s Start) (*Worktree, error) {
	// The checkout's changes matter only when the base is its branch, but
	// asking git for them meanwhile saves a round trip.
	var dirty []LocalChange
	var dirtyErr error
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		dirty, dirtyErr = changes(ctx, s.Repo)
	}()
	if _, err := gitOut(ctx, s.Repo, nil, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		return nil, &PreflightError{Msg: "the repository has no commit yet: commit something first, so the run has a base to start from"}
	}
	current, _ := gitOut(ctx, s.Repo, nil, "symbolic-ref", "-q", "--short", "HEAD")
	base := s.Base
	if base == "" {
		if current == "" {
			return nil, &PreflightError{Msg: "HEAD is detached: ultra cuts each run's branch from a branch, so check one out or pass --base BRANCH"}
		}
		base = current
	}
	baseCommit, err := gitOut(ctx, s.Repo, nil, "rev-parse", "--verify", "-q", "refs/heads/"+base+"^{commit}")
	if err != nil {
		return nil, &PreflightError{Msg: fmt.Sprintf("--base %s: no such local branch", base)}
	}
	w := &Worktree{Path: s.Dir, Branch: BranchPrefix + s.RunID, Base: base, BaseCommit: baseCommit, StartCommit: baseCommit}
	if base != current {
		if s.IncludeUncommitted {
			return nil, &PreflightError{Msg: fmt.Sprintf("--include-uncommitted takes the uncommitted changes of the checked-out branch %s; they cannot start a run cut from %s", current, base)}
		}
		return w, nil // the checkout's changes belong to another branch
	}
	<-statusDone
	if dirtyErr != nil {
		return nil, dirtyErr
	}
	// Research reports are ultra's output for the person, not work the
	// run would miss.
	dirty = slices.DeleteFunc(dirty, func(c LocalChange) bool { return strings.HasPrefix(c.Path, ResearchDir+"/") })
	if len(dirty) == 0 {
		return w, nil
	}
	if !s.IncludeUncommitted {
		// The run starts from the committed tree; the checkout is not
		// touched, and landing refuses to move a branch over local
		// changes, so what the run does not see is said, not refused.
		for _, c := range dirty {
			if c.Untracked {
				w.Untracked = append(w.Untracked, c.Path)
			} else {
				w.Modified = append(w.Modified, c.Path)
			}
		}
		return w, nil
	}
	tree, err := TreeHash(ctx, s.Repo)
	if err != nil {
		return nil, err
	}
	commit, err := gitOut(ctx, s.Repo, s.Identity.env(), "commit-tree", tree, "-p", baseCommit,
		"-m", fmt.Sprintf("ultra: uncommitted changes of %s when run %s started", base, s.RunID))
	if err != nil {
		return nil, err
	}
	w.StartCommit = commit
	for _, c := range dirty {
		w.Snapshot = append(w.Snapshot, c.Path)
	}
	return w, nil
}

// Create makes the worktree Prepare planned: its branch at the start
// commit, checked out in w.Path (InstallHooks then gives it its hooks).
func Create(ctx context.Context, repo string, w *Worktree) error {
	if err := os.MkdirAll(filepath.Dir(w.Path), 0o755); err != nil {
		return err
	}
	if _, err := worktreeGit(ctx, repo, "add", "--quiet", "-b", w.Branch, w.Path, w.StartCommit); err != nil {
		return err
	}
	if p, err := filepath.EvalSymlinks(w.Path); err == nil {
		w.Path = p
	}
	return nil
}

// Changed lists the files of dir's working tree that differ from HEAD,
// untracked ones included and ignored ones not.
func Changed(ctx context.Context, dir string) ([]string, error) {
	cs, err := changes(ctx, dir)
	var files []string
	for _, c := range cs {
		files = append(files, c.Path)
	}
	return files, err
}

// LocalChange is one file of a working tree that differs from HEAD.
type LocalChange struct {
	Path      string
	Untracked bool // new to git; otherwise tracked and changed or staged
}

func changes(ctx context.Context, dir string) ([]LocalChange, error) {
	cmd := Command(ctx, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	// Looking must not take the index lock from someone committing there.
	cmd.Env = append(cmd.Env, "GIT_OPTIONAL_LOCKS=0")
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git status in %s: %w", dir, err)
	}
	return parseStatus(string(raw)), nil
}

// parseStatus reads `git status --porcelain=v1 -z`.
func parseStatus(out string) []LocalChange {
	var cs []LocalChange
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		cs = append(cs, LocalChange{Path: e[3:], Untracked: e[:2] == "??"})
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the source of a rename
		}
	}
	return cs
}

// ListSome names up to n files and counts the rest.
func ListSome(files []string, n int) string {
	if len(files) <= n {
		return strings.Join(files, ", ")
	}
	return strings.Join(files[:n], ", ") + fmt.Sprintf(" and %d more", len(files)-n)
}

// UntrackedNote is what every surface says of the checkout's untracked
// files a run does not see ("" when there are none).
func UntrackedNote(untracked []string) string {
	var kept []string
	for _, f := range untracked {
		if !readFromCheckout(f) {
			kept = append(kept, f)
		}
	}
	untracked = kept
	if len(untracked) == 0 {
		return ""
	}
	return fmt.Sprintf("not in the run: %d untracked file(s) of your checkout (%s); it starts from the committed tree", len(untracked), ListSome(untracked, 5))
}

// BriefNote is what every surface says of a brief read from a file of
// the checkout the run does not see ("" when there is none).
func BriefNote(file, record string) string {
	if file == "" {
		return ""
	}
	if record == "" {
		return fmt.Sprintf("the brief %s is not in the run as a file: its text is", file)
	}
	return fmt.Sprintf("the brief %s is not in the run as a file: its text is, kept as %s", file, record)
}

// Head returns the commit dir's HEAD points at.
func Head(ctx context.Context, dir string) (string, error) {
	return gitOut(ctx, dir, nil, "rev-parse", "--verify", "-q", "HEAD^{commit}")
}

// CurrentBranch is the branch checked out in dir ("" when detached).
func CurrentBranch(ctx context.Context, dir string) string {
	b, _ := gitOut(ctx, dir, nil, "symbolic-ref", "-q", "--short", "HEAD")
	return b
}

// ErrNotOnBranch means a worktree is not on the branch it should be.
var ErrNotOnBranch = errors.New("the worktree is not on its run's branch")

// CommitTree commits tree on branch, which must be checked out in dir, with
// message; it returns "" when the branch's tip already has that tree. The
// commit is made with git's plumbing, so exactly tree is committed, and the
// branch moves only if nobody moved it meanwhile. The index is reset to
// the new commit; the files on disk are left alone. merged are more
// parents of the commit (a merge: the branch's tip is the first), which
// make a commit even when the tip has tree.
func CommitTree(ctx context.Context, dir, branch, tree, message string, id Identity, protected []string, merged ...string) (string, error) {
	if Protected(protected, branch) {
		return "", fmt.Errorf("refusing to commit to protected branch %s", branch)
	}
	if cur := CurrentBranch(ctx, dir); cur != branch {
		return "", fmt.Errorf("%w: %s is on %q, not %s", ErrNotOnBranch, dir, cur, branch)
	}
	head, err := Head(ctx, dir)
	if err != nil {
		return "", err
	}
	if headTree, _ := gitOut(ctx, dir, nil, "rev-parse", head+"^{tree}"); headTree == tree && len(merged) == 0 {
		return "", nil
	}
	args := []string{"commit-tree", tree, "-p", head}
	for _, p := range merged {
		args = append(args, "-p", p)
	}
	commit, err := gitOutIn(ctx, dir, id.env(), message, append(args, "-F", "-")...)
	if err != nil {
		return "", err
	}
	if _, err := gitOut(ctx, dir, nil, "update-ref", "-m", "ultra: commit on green", "refs/heads/"+branch, commit, head); err != nil {
		return "", err
	}
	if _, err := gitOut(ctx, dir, nil, "reset", "-q"); err != nil {
		return commit, err
	}
	return commit, nil
}

// Commits lists the commits on branch that are not on base, newest first,
// as "short-hash subject".
func Commits(ctx context.Context, repo, base, branch string) ([]string, error) {
	out, err := gitOut(ctx, repo, nil, "log", "--format=%h %s", base+".."+branch)
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// Short is a commit or tree hash cut to twelve characters, for people.
func Short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// TreeOf returns the tree of a commit.
func TreeOf(ctx context.Context, dir, commit string) (string, error) {
	return gitOut(ctx, dir, nil, "rev-parse", "--verify", "-q", commit+"^{tree}")
}

// BranchTip returns the commit a local branch points at ("" if none).
func BranchTip(ctx context.Context, dir, branch string) string {
	c, _ := gitOut(ctx, dir, nil, "rev-parse", "--verify", "-q", "refs/heads/"+branch+"^{commit}")
	return c
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func IsAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := gitOut(ctx, dir, nil, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// Git runs a git command in dir and returns its trimmed output, or an
// error carrying git's message.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitOut(ctx, dir, nil, args...)
}

// GitAs is Git with ultra's identity for any commit it makes.
func GitAs(ctx context.Context, dir string, id Identity, args ...string) (string, error) {
	return gitOut(ctx, dir, id.env(), args...)
}

// readFromCheckout says ultra reads file from the person's checkout for
// every run (their skills, hooks, settings, MCP servers), never from a
// run's tree: a run uses it committed or not.
func readFromCheckout(file string) bool {
	for _, p := range []string{".claude/", ".agents/", ".ultra/"} {
		if strings.HasPrefix(file, p) {
			return true
		}
	}
	switch file {
	case ".claude", ".agents", ".ultra", ".mcp.json", "opencode.json", "opencode.jsonc":
		return true
	}
	return false
}
