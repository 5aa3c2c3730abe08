package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gocache"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/sandbox"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// depDirs are dependency directories a project's tests need and git
// ignores: the gate's clean checkout shows the worktree's read-only.
var depDirs = verify.DependencyDirs

// sandboxStatus is what contains this process's runs.
func (o Options) sandboxStatus() sandbox.Status {
	if o.Sandbox != nil {
		return *o.Sandbox
	}
	return sandbox.Probe()
}

// checkContainment refuses a run whose profile needs a sandbox this
// machine does not have.
func (o Options) checkContainment(profile string) error {
	p, err := policy.ProfileOf(profile)
	if err != nil {
		return err
	}
	st := o.sandboxStatus()
	if p.NeedsSandbox && !st.Available {
		return &ContainmentError{Profile: profile, Status: st}
	}
	return nil
}

// ContainmentError is a run refused for want of a sandbox.
type ContainmentError struct {
	Profile string
	Status  sandbox.Status
}

func (e *ContainmentError) Error() string {
	return fmt.Sprintf("the %s permission profile runs the model's commands in a sandbox, and there is none here: %s. %s "+
		"(or choose --permission-profile trusted to run uncontained, at your own risk; ultra doctor says more)", e.Profile, e.Status.Problem, e.Status.Hint)
}

// hiddenPaths are the host paths no contained command sees: ultra's state
// (the repository's .ultra/state, the per-user state with the gate key and
// the worktrees), ultra's configuration and the person's secrets.
func hiddenPaths(stateRoot string) []string {
	out := []string{stateRoot}
	if d := config.UserDir(); d != "" {
		out = append(out, d)
	}
	if d, err := config.StateDir(); err == nil {
		out = append(out, d)
	}
	home, _ := os.UserHomeDir()
	if home != "" {
		// The default per-user state too, when XDG_STATE_HOME points
		// elsewhere: runs started without it keep their key there.
		if d := filepath.Join(home, ".local", "state", "ultra"); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return append(out, sandbox.Secrets(home)...)
}

// hidden are the paths no contained command of the run sees: its own
// repository's state and the per-user state (hiddenPaths), the state of
// the other repositories ultra knows, and Hide.
func (o Options) hidden() []string {
	out := hiddenPaths(o.StateRoot)
	var others []string
	if o.OtherStates != nil {
		others = o.OtherStates()
	}
	for _, d := range append(others, o.Hide...) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// contained is the proc.Sandbox of a layout: bubblewrap with the layout's
// mounts, and an environment with a private home that still finds the
// host's tools.
func contained(st sandbox.Status, l sandbox.Layout) *proc.Sandbox {
	home, _ := os.UserHomeDir()
	return &proc.Sandbox{Wrap: st.Wrapper(l.Policy()), Env: func(base []string) []string {
		env := l.Env(base)
		return append(env, sandbox.ToolEnv(home, env)...)
	}, At: l.Inside}
}

// checkoutAt is where every contained run of a checkout ultra made of
// the repository's trees (the gate's, a criterion's check) sees it: one
// path for the repository, whatever directory holds the checkout, so
// that the go command, which keys what it compiles by the package's
// directory, compiles a package once for every run of the same code
// (the baseline, each verification, each check, later runs). It is an
// empty directory in the repository's state, there only to be mounted
// on (in the sandbox, ultra's state is hidden and the checkout alone is
// shown there). "" when it cannot be made: the checkout is then seen
// where it lies.
func (o Options) checkoutAt() string {
	if o.StateRoot == "" {
		return ""
	}
	p := filepath.Join(o.StateRoot, "checkout")
	if err := os.MkdirAll(p, 0o755); err != nil {
		return ""
	}
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		return "" // a symlink: not ultra's mount point
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// bashSandbox is the sandbox of a run's bash calls, nil when the run goes
// uncontained (no sandbox here, and a profile that allows that).
func bashSandbox(ctx context.Context, o Options, row *store.Run, deps []string) (*proc.Sandbox, error) {
	sb, err := runSandbox(ctx, o, row, deps, false, filepath.Join(RunDir(o.StateRoot, row.ID), "sandbox"))
	if sb != nil {
		// Each call's sandbox is made while the model thinks, and compared
		// with the one the call would get when it comes (proc.Spares).
		sb.Spares = proc.NewSpares()
	}
	return sb, err
}

// runSandbox is the sandbox of what runs on the model's behalf in a run:
// its commands, its MCP servers. readOnly shows the work tree read-only
// whatever the profile; own is the directory of its private home and
// /tmp; shown are host directories shown read-only at their own paths.
// nil when this machine has no sandbox.
func runSandbox(ctx context.Context, o Options, row *store.Run, deps []string, readOnly bool, own string, shown ...string) (*proc.Sandbox, error) {
	st := o.sandboxStatus()
	if !st.Available {
		return nil, nil
	}
	prof, err := policy.ProfileOf(row.Axes.Permission)
	if err != nil {
		return nil, err
	}
	// Hidden besides o.hidden(): the person's checkout, the worktree lock.
	ownHide := personsCheckout(ctx, row.Workdir)
	l := sandbox.Layout{
		// Read-only modes (chat, research, review) work in the person's
		// checkout: nothing of theirs may change it.
		Work: row.Workdir, ReadOnlyWork: readOnly || !prof.WriteWork || !phase.Worktree(row.Axes.Mode),
		Protect: append([]string{filepath.Join(row.Workdir, ".git"), filepath.Join(row.Workdir, ".ultra")}, depPaths(row.Workdir, deps)...),
		Hide:    o.hidden(),
		Home:    filepath.Join(own, "home"), Tmp: filepath.Join(own, "tmp"),
		Network: prof.Network, NoUnixSockets: !prof.Network,
	}
	if l.GitDir, err = workspace.GitCommonDir(ctx, row.Workdir); err != nil {
		l.GitDir = ""
	} else if lock, err := workspace.EnsureWorktreeLock(l.GitDir); err == nil {
		ownHide = append(ownHide, lock)
	}
	// The worktree's own admin directory (its index, logs) is
	// writable, so that git restore, checkout -- PATH and reset -- PATH
	// work; HEAD (the worktree stays on the run's branch) and the files
	// that tell git where the repository is and what its configuration is
	// stay read-only (ultra's own git reads them). Objects and refs stay
	// read-only: no add, no commit.
	// A read-only mode works in the person's checkout, whose index is
	// theirs: it stays read-only even in a linked worktree.
	if admin, err := workspace.Git(ctx, row.Workdir, "rev-parse", "--path-format=absolute", "--git-dir"); err == nil && l.GitDir != "" && admin != l.GitDir && phase.Worktree(row.Axes.Mode) && !readOnly {
		if r, err := filepath.EvalSymlinks(admin); err == nil {
			admin = r
		}
		l.Writable = append(l.Writable, admin)
		for _, f := range []string{"HEAD", "commondir", "gitdir", "config.worktree", "locked"} {
			p := filepath.Join(admin, f)
			l.Deps = append(l.Deps, sandbox.Bind{Src: p, Path: p})
		}
	}
	for _, d := range []string{l.Home, l.Tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	l.Hide = append(l.Hide, ownHide...)
	for _, p := range shown {
		l.Deps = append(l.Deps, sandbox.Bind{Src: p, Path: p})
	}
	var baseVariants []string
	if start := row.Workspace.StartCommit; start != "" {
		vs, _ := workspace.CaseVariants(ctx, row.Workdir, start)
		for _, v := range vs {
			baseVariants = append(baseVariants, filepath.Join(row.Workdir, v))
		}
	}
	o.bindUltra(&l)
	sb := contained(st, l)
	env := sb.Env
	sb.Env = func(base []string) []string { return o.goCacheEnv(env(base), goCacheStore) }
	// The hidden paths are read again for every command (hidden).
	sb.Wrap = func(name string, args []string, dir string) (proc.Wrapped, error) {
		now := l
		now.Hide = append(o.hidden(), ownHide...)
		// Other spellings of .ultra and .git that the run started with are
		// ultra's and git's on a case-insensitive checkout: read-only too.
		// (One made during the run is refused at the gate and at every
		// commit; the model may remove it.)
		now.Protect = append(slices.Clone(l.Protect), baseVariants...)
		return st.Wrapper(now.Policy())(name, args, dir)
	}
	return sb, nil
}

// closeSandbox kills what the run's bash sandbox started ahead of a call:
// nothing of it outlives the run.
func (r *runner) closeSandbox() {
	r.env.Sandbox.Close()
	r.closeMCP()
}

// hermetic makes req a verification of exactly tree: its files checked
// out by ultra from the repository into a directory of their own (nothing
// ignored or untracked of the worktree comes along, only the dependency
// directories, read-only), the tests contained in a sandbox without the
// network whose home and /tmp belong to the gate. The tests see the
// checkout at the repository's checkoutAt, as every criterion's check
// does: the go command keys compiled packages by their directory, so
// packages that did not change are not compiled again. cleanup removes
// the checkout.
func (o Options) hermetic(ctx context.Context, runDir, workdir string, deps []string, tree string, req verify.Request) (verify.Request, func(), error) {
	nothing := func() {}
	// Once the tree is compiled (goWarm), or cannot be, the criteria
	// started beside the tests go on.
	defer warmed(runDir, tree)
	if tree == "" {
		return req, nothing, fmt.Errorf("ultra could not hash the working tree, so it cannot check out what it would judge")
	}
	gateDir := filepath.Join(runDir, "sandbox", "gate")
	dest := filepath.Join(gateDir, "tree")
	// The checkout: the tree, and the dependency directories the run
	// started with linked into it (detection sees them; inside the
	// sandbox the links resolve to read-only mounts).
	export := func() error {
		_ = removeAll(dest) // left by a killed verification, or by the tests
		if err := workspace.ExportTree(ctx, workdir, tree, dest); err != nil {
			return fmt.Errorf("checking out the tree to verify: %w", err)
		}
		for _, d := range deps {
			p := filepath.Join(dest, filepath.FromSlash(d))
			if _, err := os.Lstat(p); os.IsNotExist(err) {
				_ = os.MkdirAll(filepath.Dir(p), 0o755)
				_ = os.Symlink(filepath.Join(workdir, filepath.FromSlash(d)), p)
			}
		}
		return nil
	}
	if err := export(); err != nil {
		return req, nothing, err
	}
	// After the tests nothing they left (the checkout, the gate's home
	// and /tmp, what the go command stored for them) stays in ultra's
	// state.
	cleanup := func() {
		for _, d := range []string{dest, filepath.Join(runDir, "sandbox", "gate-home"), filepath.Join(runDir, "sandbox", "gate-tmp"), filepath.Join(runDir, "sandbox", "gate-gowork")} {
			_ = removeAll(d)
		}
	}
	req.Dir = dest
	// Before failed tests run again, the checkout is the tree again:
	// nothing the first run left (a marker file, ignored or not) reaches
	// the second. A checkout whose tracked files the tests changed is left
	// as it is: the verification finds the change and fails.
	req.Restore = func() error {
		if cs, err := workspace.CheckoutChanged(ctx, workdir, tree, dest); err != nil || len(cs) > 0 {
			return nil
		}
		return export()
	}
	// git must not find the repository above the checkout (the state
	// directory lies inside it).
	ceiling := func(env []string) []string { return append(env, "GIT_CEILING_DIRECTORIES="+gateDir) }
	st := o.sandboxStatus()
	if !st.Available {
		req.Sandbox = &proc.Sandbox{Env: ceiling}
		return req, cleanup, nil
	}
	l := sandbox.Layout{
		Work: dest, WorkAt: o.checkoutAt(), Hide: append(append(o.hidden(), personsCheckout(ctx, workdir)...), gateHiddenGit(ctx, workdir)...),
		Home: filepath.Join(runDir, "sandbox", "gate-home"), Tmp: filepath.Join(runDir, "sandbox", "gate-tmp"),
		NoUnixSockets: !o.GateUnixSockets,
	}
	// Above the checkout as the tests see it.
	ceiling = func(env []string) []string {
		return append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(l.Inside(dest)))
	}
	if req.LogDir != "" {
		if err := os.MkdirAll(req.LogDir, 0o755); err != nil {
			cleanup()
			return req, nothing, err
		}
		l.Writable = []string{req.LogDir}
	}
	for _, p := range depPaths(workdir, deps) {
		l.Deps = append(l.Deps, sandbox.Bind{Src: p, Path: p})
	}
	for _, d := range []string{l.Home, l.Tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			cleanup()
			return req, nothing, err
		}
	}
	// Go's build cache is read-only to everything the tests run; ultra
	// fills it first with the toolchain alone (goWarm).
	o.goWarm(ctx, st, l, dest, req)
	goExec, store := o.goTestExec(runDir, dest, req, &l)
	o.bindUltra(&l)
	sb := contained(st, l)
	env := sb.Env
	sb.Env = func(base []string) []string {
		return o.goCacheEnv(noVCSStamp(pinGoEnv(goExec(ceiling(env(base))))), store)
	}
	// Every test command starts with an empty home and /tmp: nothing one
	// run of the tests leaves there (a tool config, a marker, a planted
	// toolchain) reaches the next, not even the re-run of failed tests.
	wrap := sb.Wrap
	sb.Wrap = func(name string, args []string, dir string) (proc.Wrapped, error) {
		for _, d := range []string{l.Home, l.Tmp} {
			if err := removeAll(d); err != nil {
				return proc.Wrapped{}, err
			}
			if err := os.MkdirAll(d, 0o700); err != nil {
				return proc.Wrapped{}, err
			}
		}
		return wrap(name, args, dir)
	}
	req.Sandbox = sb
	return req, cleanup, nil
}

// personsCheckout is the person's checkout of workdir's repository, to
// hide from everything contained that works elsewhere (a run's worktree,
// the gate's checkout, a criterion's): the files there that are not in
// the run (an ignored .env, untracked notes, uncommitted edits) are not
// the model's to read. Its git directory is shown again (the layout shows
// GitDir after what it hides); nil when workdir is that checkout (the
// read-only modes work in it) or it cannot be told.
func personsCheckout(ctx context.Context, workdir string) []string {
	common, err := workspace.GitCommonDir(ctx, workdir)
	if err != nil || filepath.Base(common) != ".git" {
		return nil // a bare repository has no checkout
	}
	root := filepath.Dir(common)
	if w, err := filepath.EvalSymlinks(workdir); err == nil && w == root {
		return nil
	}
	return []string{root}
}

// gateHiddenGit is the repository's git directory, hidden from the tests
// the gate runs: they judge an exported tree and have no use for it, and
// the run's worktree admin directory in it is writable to the model's
// commands (what the tests see must be the tree, not the model's notes).
func gateHiddenGit(ctx context.Context, workdir string) []string {
	if d, err := workspace.GitCommonDir(ctx, workdir); err == nil && d != "" {
		return []string{d}
	}
	return nil
}

// goTestExec runs the test binaries of a Go project's own test run (not
// a command the project configured: that could be anything) through
// ultra under Landlock (go test -exec): they can write only the
// checkout, /tmp and the gate's home, while the go command keeps its work
// directory (GOTMPDIR, where it links the test binaries it is about to
// run) out of their reach, so that one package's tests cannot replace
// another package's test binary. The build cache is read-only to both
// (goWarm filled it). Without Landlock or ultra's own program the test
// binaries run as the go command starts them. It returns what it adds to
// the test environment.
func (o Options) goTestExec(runDir, dest string, req verify.Request, l *sandbox.Layout) (func([]string) []string, string) {
	same := func(env []string) []string { return env }
	if o.Ultra == "" || len(req.Commands) > 0 || sandbox.LandlockABI() < 1 {
		return same, goCacheStore
	}
	if len(verify.GoModuleRoots(dest)) == 0 {
		return same, goCacheStore
	}
	bin := filepath.Join(runDir, "sandbox", "bin")
	link := filepath.Join(bin, sandbox.ExecName)
	if target, err := os.Readlink(link); err != nil || target != o.Ultra {
		_ = os.MkdirAll(bin, 0o755)
		_ = os.Remove(link)
		if err := os.Symlink(o.Ultra, link); err != nil {
			return same, goCacheStore
		}
	}
	work := filepath.Join(runDir, "sandbox", "gate-gowork")
	if err := removeAll(work); err != nil || os.MkdirAll(filepath.Join(work, "tmp"), 0o700) != nil {
		return same, goCacheStore
	}
	l.Writable = append(l.Writable, work)
	l.Deps = append(l.Deps, sandbox.Bind{Src: bin, Path: bin})
	writable := strings.Join([]string{l.Inside(l.Work), "/tmp", l.Home}, ":")
	return func(env []string) []string {
		flags := sandbox.GoFlags()
		out := env[:0:0]
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
				flags = v
				continue
			}
			if strings.HasPrefix(kv, "GOTMPDIR=") {
				continue
			}
			out = append(out, kv)
		}
		return append(out, "GOFLAGS="+strings.TrimSpace(flags+" -exec="+link), "GOTMPDIR="+filepath.Join(work, "tmp"), sandbox.WritableEnv+"="+writable)
	}, filepath.Join(work, "cache")
}

// goCacheStore is where the go command of a contained command stores
// what it builds when nothing keeps it from the command's own programs:
// its private /tmp, which ends with the command (bash calls keep theirs
// for the run).
const goCacheStore = "/tmp/.ultra-gocache"

// goCacheEnv makes the go command of a contained command read the
// person's build cache and store what it builds in store, through ultra's
// cache program (package gocache): the person's cache is read-only there,
// and what is stored goes with the sandbox. Without ultra's program or a
// host build cache it changes nothing (the cache is then read-only, and
// go compiles what is missing without keeping it).
func (o Options) goCacheEnv(env []string, store string) []string {
	if o.Ultra == "" || sandbox.GoCache() == "" {
		return env
	}
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOCACHEPROG=") && !strings.HasPrefix(kv, gocache.WriteEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, gocache.Env(o.Ultra, store)...)
}

// bindUltra shows ultra's own program inside the sandbox of l, wherever
// it lies (in /tmp too): it supervises checks, wraps Go test binaries and
// serves Go's build cache there.
func (o Options) bindUltra(l *sandbox.Layout) {
	if o.Ultra != "" {
		l.Deps = append(l.Deps, sandbox.Bind{Src: o.Ultra, Path: o.Ultra})
	}
}

// goWarm compiles the Go modules of the checkout at dest into the host's
// build cache before any test runs: go list -export -test -deps, which
// compiles every package the tests will link (test variants and test
// mains included) and links and runs nothing, in the gate's sandbox with
// the cache writable. Only the compiler runs then (and cgo's tools; never
// the project's code), and nothing else runs beside it, so the cache
// holds only what the go command made of the tree. The tests that follow
// find their packages compiled and see the cache read-only, whatever
// starts the go command (the detected go test, a Makefile, a script, a
// criterion): nothing the project runs can plant a compiled package or a
// test result for a later compilation or gate to read. What goWarm
// cannot compile (and vet, and the links of the test binaries) the
// tests' own run does, into its sandbox's layer. Its output goes to a
// log beside the tests' logs.
func (o Options) goWarm(ctx context.Context, st sandbox.Status, l sandbox.Layout, dest string, req verify.Request) {
	cache := sandbox.GoCache()
	goBin, err := exec.LookPath("go")
	if cache == "" || err != nil {
		return
	}
	roots := verify.GoModuleRoots(dest)
	if len(roots) == 0 {
		return
	}
	wl := l
	wl.Writable = append(slices.Clone(l.Writable), cache)
	sb := contained(st, wl)
	env := noVCSStamp(pinGoEnv(sb.Env(append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(l.Inside(dest))))))
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = verify.DefaultTimeout
	}
	logPath := ""
	if req.LogDir != "" {
		logPath = strings.TrimRight(req.LogDir, "/") + "-go-build.log"
	}
	var log strings.Builder
	for _, flags := range goTestFlags(req.Commands) {
		for _, rel := range roots {
			opts := proc.Options{Dir: filepath.Join(dest, filepath.FromSlash(rel)), Env: env, Timeout: timeout, Wrap: sb.Wrap}
			args := goWarmArgs(flags)
			res, err := proc.Run(ctx, goBin, args, opts)
			fmt.Fprintf(&log, "$ go %s   (in ./%s: exit %d, %s)\n%s\n", strings.Join(args, " "), rel, res.ExitCode, res.Duration.Round(time.Millisecond), res.Output)
			if err != nil {
				fmt.Fprintf(&log, "not run: %v\n", err)
			}
			if ctx.Err() != nil {
				break
			}
		}
	}
	if logPath != "" {
		_ = os.WriteFile(logPath, []byte(log.String()), 0o644)
	}
}

// goWarmArgs are the arguments of the go command that fills the build
// cache for a go test with flags: go list -e -export -test -deps (-e: a
// package that does not compile leaves the others compiled; -f prints
// only such errors). go list cannot build coverage-instrumented test
// packages, so with -cover and its kin go test builds everything,
// links the test binaries and runs true in their place.
func goWarmArgs(flags []string) []string {
	for _, f := range flags {
		if name, _, _ := strings.Cut(f, "="); strings.HasPrefix(name, "-cover") {
			return append(append([]string{"test", "-exec=true", "-count=1"}, flags...), "./...")
		}
	}
	return append(append([]string{"list", "-e", "-export", "-test", "-deps", "-f", "{{with .Error}}{{$.ImportPath}}: {{.}}{{end}}"}, flags...), "./...")
}

// noVCSStamp keeps the go command from stamping what it builds with
// version control information (-buildvcs=false): a checkout ultra made
// holds no repository, and the one above it is hidden, so go build would
// fail asking git about it.
func noVCSStamp(env []string) []string {
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			env[i] = "GOFLAGS=" + strings.TrimSpace(v+" -buildvcs=false")
			return env
		}
	}
	flags := sandbox.GoFlags()
	return append(env, "GOFLAGS="+strings.TrimSpace(flags+" -buildvcs=false"))
}

// goTestFlags are the build flags of the go test commands among cmds
// that change what the go command compiles (-race, -tags, -cover, …),
// one set for each distinct use, at most three; no flags when cmds hold
// no go test (detection's go test has none).
func goTestFlags(cmds []string) [][]string {
	out := [][]string{nil}
	seen := map[string]bool{"": true}
	for _, c := range cmds {
		fields := strings.Fields(c)
		for i := 0; i+1 < len(fields); i++ {
			if path.Base(fields[i]) != "go" || fields[i+1] != "test" {
				continue
			}
			var flags []string
			for j := i + 2; j < len(fields); j++ {
				f := strings.Trim(fields[j], `'"`)
				name, _, hasValue := strings.Cut(f, "=")
				switch {
				case slices.Contains([]string{"-race", "-msan", "-asan", "-cover", "-trimpath"}, f):
					flags = append(flags, f)
				case slices.Contains([]string{"-tags", "-covermode", "-mod"}, name) && hasValue:
					flags = append(flags, f)
				case slices.Contains([]string{"-tags", "-covermode", "-mod"}, f) && j+1 < len(fields):
					flags = append(flags, f+"="+strings.Trim(fields[j+1], `'"`))
					j++
				}
			}
			if key := strings.Join(flags, " "); !seen[key] && len(out) < 3 {
				seen[key] = true
				out = append(out, flags)
			}
		}
	}
	if len(cmds) > 0 && len(out) > 1 {
		out = out[1:] // a configured command: warm what it builds
	}
	return out
}

// pinGoEnv makes the go command of the tests read the person's go env
// file or none (GOENV=off): never one the tests wrote into their home.
func pinGoEnv(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOENV=") {
			return env
		}
	}
	return append(env, "GOENV=off")
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// depPaths are the dependency directories deps of workdir, absolute.
func depPaths(workdir string, deps []string) []string {
	var out []string
	for _, d := range deps {
		out = append(out, filepath.Join(workdir, filepath.FromSlash(d)))
	}
	return out
}

// removeAll removes a tree that tests may have left read-only.
func removeAll(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	_ = filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(q, 0o755)
		}
		return nil
	})
	return os.RemoveAll(p)
}

// warnUncontained says loudly, in the run's events, that nothing contains
// the model's commands.
func (r *runner) warnUncontained() {
	r.st.Sandbox = r.o.sandboxStatus().Summary()
	if st := r.o.sandboxStatus(); !st.Available {
		r.emit(event.Warning, event.WarningData{Message: fmt.Sprintf(
			"UNCONTAINED RUN: the model's commands and the tests run with all of your powers (%s). They can read your keys and change files outside the worktree; only text guards stand in the way. %s",
			st.Problem, st.Hint)})
	}
}

// sandboxNote tells the model where its commands run, so that a refused
// write or a failed download is no surprise.
func (r *runner) sandboxNote() string {
	if !r.o.sandboxStatus().Available {
		return ""
	}
	p, err := policy.ProfileOf(r.row.Axes.Permission)
	if err != nil {
		return ""
	}
	var parts []string
	readOnlyMode := !phase.Worktree(r.row.Axes.Mode)
	if readOnlyMode {
		parts = append(parts, "the checkout is read-only (a "+r.row.Axes.Mode+" run changes nothing), only /tmp and $HOME are writable")
	} else if p.WriteWork {
		parts = append(parts, "only the worktree, /tmp and $HOME are writable")
	} else {
		parts = append(parts, "the worktree is read-only, only /tmp and $HOME are writable (the "+p.Name+" profile)")
	}
	if p.Network {
		parts = append(parts, "the network is on")
	} else {
		parts = append(parts, "no network and no Unix sockets (installs fail: dependencies come from the project's workspace.setup)")
	}
	if readOnlyMode {
		parts = append(parts, "git cannot add or commit; background processes end with the call")
	} else {
		parts = append(parts, "git cannot add or commit (ultra commits each green tree); background processes end with the call")
	}
	return "sandbox: " + strings.Join(parts, "; ")
}
