package agent

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// maxSupportFile bounds what the test-support classifier reads of one
// file (larger ones are read as empty: nothing is followed from them).
const maxSupportFile = 1 << 20

// supportCache keeps this process's classifications of trees: a tree's
// files do not change (keyed by the tree, the commands and the person's
// declarations).
var supportCache sync.Map

// testSupport is what tree's files are to its tests
// (verify.ClassifySupport), by path: the test support and the files
// ultra cannot tell from code under test. Code is left out.
func testSupport(ctx context.Context, workdir, tree string, cmds, code, declared []string) (map[string]verify.SupportFile, error) {
	key := strings.Join([]string{tree, strings.Join(cmds, "\x01"), strings.Join(code, "\x01"), strings.Join(declared, "\x01")}, "\x00")
	if v, ok := supportCache.Load(key); ok {
		return v.(map[string]verify.SupportFile), nil
	}
	paths, files, err := workspace.ReadTree(ctx, workdir, tree, func(p string, size int64) bool {
		return size <= maxSupportFile && verify.SupportReads(p)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]verify.SupportFile{}
	for _, f := range verify.ClassifySupport(verify.SupportInput{Paths: paths, Files: files, Commands: cmds,
		DeclaredCode: code, DeclaredSupport: declared, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}) {
		out[f.Path] = f
	}
	supportCache.Store(key, out)
	return out, nil
}

// commandsOf are the test commands a verification ran.
func commandsOf(res *verify.Result) []string {
	if res == nil {
		return nil
	}
	var out []string
	for _, c := range res.Commands {
		out = append(out, c.Command)
	}
	return out
}

// protectTests runs the project's original tests against the new code
// when the run changed, deleted or renamed existing tests, the files that
// decide how tests run, or the files the tests load that the project's
// code does not (test support, verify.ClassifySupport): the tree judged
// is the run's with those files as they were when the run started, and
// the test and support files it added removed. When the run changed
// files whose role ultra cannot tell (code under test or support), the
// original tests run once more with those restored too: if they pass
// only with the run's version, a person decides. See gate.ApplyProtected
// for what follows.
func (o Options) protectTests(ctx context.Context, row *store.Run, st runState, req verify.Request, in gate.Input, d gate.Decision, cmds []string) gate.Decision {
	base := ""
	if in.Baseline != nil {
		base = in.Baseline.Tree
	}
	if base == "" && row.Workspace.StartCommit != "" {
		base, _ = workspace.TreeOf(ctx, row.Workdir, row.Workspace.StartCommit)
	}
	if base == "" || base == in.Tree {
		return d
	}
	notEvaluated := func(why string) gate.Decision {
		d.Status = gate.NotEvaluated
		d.Reasons = append([]string{why}, d.Reasons...)
		return d
	}
	changes, err := workspace.DiffTrees(ctx, row.Workdir, base, in.Tree)
	if err != nil {
		return notEvaluated("ultra could not compare the tree with the run's start to find changed tests: " + err.Error())
	}
	if len(cmds) == 0 {
		cmds = st.VerifyCommands
	}
	// What the tests load, as the run found it and as it is now: a file
	// that was support stays so whatever the run made import it since.
	was, err := testSupport(ctx, row.Workdir, base, cmds, st.DeclaredCode, st.DeclaredSupport)
	if err != nil {
		return notEvaluated("ultra could not read the run's start to tell what the tests load: " + err.Error())
	}
	is, err := testSupport(ctx, row.Workdir, in.Tree, cmds, st.DeclaredCode, st.DeclaredSupport)
	if err != nil {
		return notEvaluated("ultra could not read the tree to tell what the tests load: " + err.Error())
	}
	role := func(p string) (verify.SupportFile, bool) {
		if f, ok := was[p]; ok && f.Role == verify.RoleSupport {
			return f, true
		}
		if f, ok := is[p]; ok && f.Role == verify.RoleSupport {
			return f, true
		}
		if f, ok := was[p]; ok {
			return f, true
		}
		f, ok := is[p]
		return f, ok
	}
	// Test support the project's code loads now, where only the tests did
	// at the start: code that loads the tests' helpers can change what
	// they check as it runs (monkeypatching an assertion).
	deleted := map[string]bool{}
	for _, c := range changes {
		if c.Status == "D" || c.Status == "R" {
			deleted[firstNonEmpty(c.From, c.Path)] = true
		}
	}
	var reached []string
	for file, f := range was {
		if f.Role != verify.RoleSupport || f.CodeLoads || deleted[file] {
			continue
		}
		// Now: code when the classifier lists it no more, or a support or
		// undecided file the code loads.
		if g, ok := is[file]; !ok || g.CodeLoads {
			reached = append(reached, file+" ("+f.Why+")")
		}
	}
	if len(reached) > 0 {
		slices.Sort(reached)
		d.Status = gate.Fail
		d.Reasons = append([]string{fmt.Sprintf("the project's code now loads what only its tests loaded at the start (%s): code that loads the tests' helpers can change what they check as it runs; keep the code off them",
			strings.Join(firstN(reached, 5), ", "))}, d.Reasons...)
		return d
	}
	var p gate.Protected
	var restore, remove, deps, undecidedPaths []string
	var put map[string]string    // files the original tests run with: go.mod with its old go line
	var testDirs map[string]bool // directories with tests at the start, listed when a test is added
	touch := func(file, how string) {
		f, ok := role(file)
		switch {
		case !ok:
		case f.Role == verify.RoleSupport:
			p.Support = append(p.Support, how+file+" ("+f.Why+")")
			restore = append(restore, file)
		default:
			p.Undecided = append(p.Undecided, how+file+" ("+f.Why+")")
			undecidedPaths = append(undecidedPaths, file)
		}
	}
	for _, c := range changes {
		switch {
		case c.Status == "A" && verify.InDependencyDir(c.Path):
			deps = append(deps, c.Path)
		case c.Status == "A":
			if verify.IsTestConfig(c.Path) {
				// A new conftest.py or runner config changes how the
				// existing tests run, as a changed one would.
				p.Changed = append(p.Changed, "added "+c.Path)
			}
			if verify.IsTestPath(c.Path) {
				remove = append(remove, c.Path)
				if testDirs == nil {
					testDirs = baseTestDirs(ctx, row.Workdir, base)
				}
				if testDirs[path.Dir(c.Path)] {
					p.Added = append(p.Added, c.Path)
				}
			} else if f, ok := is[c.Path]; ok {
				// Support the run added: the original tests may load it
				// in place of what they loaded (a module that shadows
				// another, a replaced dependency), so it goes too.
				remove = append(remove, c.Path)
				p.Added = append(p.Added, c.Path+" ("+f.Why+")")
			}
		case c.Status == "R" || c.Status == "C":
			switch {
			case verify.IsTestPath(c.From):
				p.Changed = append(p.Changed, "renamed "+c.From+" to "+c.Path)
				restore = append(restore, c.From)
				if verify.IsTestPath(c.Path) {
					remove = append(remove, c.Path)
				}
			default:
				if f, ok := role(c.From); ok && f.Role == verify.RoleSupport {
					p.Support = append(p.Support, "renamed "+c.From+" to "+c.Path+" ("+f.Why+")")
					restore = append(restore, c.From)
					remove = append(remove, c.Path)
				} else if ok {
					p.Undecided = append(p.Undecided, "renamed "+c.From+" to "+c.Path+" ("+f.Why+")")
					undecidedPaths = append(undecidedPaths, c.From)
				}
			}
		case c.Status == "M" && path.Base(c.Path) == "go.mod" && !verify.InDependencyDir(c.Path):
			// The go line and godebug settings decide how the tests
			// compile and run: test configuration, the rest is code.
			old, errOld := workspace.Blob(ctx, row.Workdir, base, c.Path)
			now, errNew := workspace.Blob(ctx, row.Workdir, in.Tree, c.Path)
			if errOld != nil || errNew != nil {
				return notEvaluated(fmt.Sprintf("ultra could not read %s to tell whether its go line or godebug settings changed: %v", c.Path, cmp.Or(errOld, errNew)))
			}
			if changed, spliced := verify.GoModSettings(c.Path, old, now); len(changed) > 0 {
				p.Changed = append(p.Changed, changed...)
				if put == nil {
					put = map[string]string{}
				}
				put[c.Path] = spliced
			}
			touch(c.Path, "changed ")
		case verify.IsTestPath(c.Path):
			how := map[string]string{"D": "deleted ", "M": "changed ", "T": "changed "}[c.Status]
			p.Changed = append(p.Changed, how+c.Path)
			restore = append(restore, c.Path)
		default:
			touch(c.Path, map[string]string{"D": "deleted ", "M": "changed ", "T": "changed "}[c.Status])
		}
	}
	if len(deps) > 0 {
		d.Status = gate.Fail
		d.Reasons = append([]string{fmt.Sprintf("the tree adds files under dependency directories (%s): the runners and packages the tests use come from the run's start (workspace.setup), never from the tree under judgement; remove them",
			strings.Join(firstN(deps, 5), ", "))}, d.Reasons...)
		return d
	}
	// The //go:debug directives of code files set the test binaries'
	// run-time defaults (package main's): test configuration.
	var goWas, goIs []string // the changed Go code files, as they were and are
	for _, c := range changes {
		if path.Ext(c.Path) == ".go" && !verify.IsTestPath(c.Path) && !verify.InDependencyDir(c.Path) && c.Status != "D" {
			goIs = append(goIs, c.Path)
			if c.Status != "A" {
				goWas = append(goWas, firstNonEmpty(c.From, c.Path))
			}
		}
	}
	debugWas, errWas := workspace.FilesContaining(ctx, row.Workdir, base, "//go:debug", goWas)
	debugIs, errIs := workspace.FilesContaining(ctx, row.Workdir, in.Tree, "//go:debug", goIs)
	if err := cmp.Or(errWas, errIs); err != nil {
		return notEvaluated("ultra could not read the changed Go files to compare their //go:debug directives: " + err.Error())
	}
	for _, c := range changes {
		from := firstNonEmpty(c.From, c.Path)
		if !debugWas[from] && !debugIs[c.Path] {
			continue // neither side has a directive (or it is no Go code file)
		}
		var old, now string
		var err error
		if debugWas[from] && c.Status != "A" {
			if old, err = workspace.Blob(ctx, row.Workdir, base, from); err != nil {
				return notEvaluated("ultra could not read a changed Go file to compare its //go:debug directives: " + err.Error())
			}
		}
		if now, err = workspace.Blob(ctx, row.Workdir, in.Tree, c.Path); err != nil {
			return notEvaluated("ultra could not read a changed Go file to compare its //go:debug directives: " + err.Error())
		}
		was, is := verify.GoDebugLines(old), verify.GoDebugLines(now)
		if slices.Equal(was, is) {
			continue
		}
		p.Changed = append(p.Changed, fmt.Sprintf("changed the //go:debug directives of %s (%s → %s: the run-time defaults its package's tests run with)",
			c.Path, cmp.Or(strings.Join(was, " "), "none"), cmp.Or(strings.Join(is, " "), "none")))
		if put == nil {
			put = map[string]string{}
		}
		put[c.Path] = verify.WithGoDebug(now, was)
	}
	for f := range put {
		// A support file (a replaced module's go.mod) is restored whole,
		// one the run added is removed.
		if slices.Contains(restore, f) || slices.Contains(remove, f) {
			delete(put, f)
		}
	}
	p.Allowed = st.AllowTestChanges
	runDir := RunDir(o.StateRoot, row.ID)
	original := func(restore, remove []string, suffix string) gate.Decision {
		tree, err := workspace.RestoreInTree(ctx, row.Workdir, in.Tree, base, restore, remove, put)
		if err != nil {
			return gate.Decision{Status: gate.NotEvaluated, Reasons: []string{"ultra could not restore the original tests: " + err.Error()}}
		}
		if tree == in.Tree {
			return d // nothing to restore: the run's own verdict
		}
		pin := in
		pin.Tree = tree
		// The original tests are judged against the run's start only:
		// tests the run added (and saw fail before it fixed the code) are
		// not in this tree, and their absence is no regression.
		pin.Previous = nil
		preq := req
		// Beside the main run's logs, not inside them: that directory was
		// writable to the main run's tests, which could have planted reports.
		preq.LogDir = req.LogDir + suffix
		od, _, err := o.judgeHermetic(ctx, runDir, row.Workdir, st.DepDirs, false, preq, pin, nil, nil)
		if err != nil {
			return gate.Decision{Status: gate.NotEvaluated, Reasons: []string{err.Error()}}
		}
		return od
	}
	p.Decision = original(restore, remove, "-original-tests")
	if len(p.Undecided) > 0 && p.Decision.Status.Advances() {
		// What ultra cannot tell from code is restored too: when the
		// original tests need the run's version of it, a person decides.
		p.Restored = original(append(restore, undecidedPaths...), remove, "-original-tests-all")
	}
	return gate.ApplyProtected(d, p)
}

// baseTestDirs are the directories that held test files in tree base.
func baseTestDirs(ctx context.Context, dir, base string) map[string]bool {
	dirs := map[string]bool{}
	out, err := workspace.Git(ctx, dir, "ls-tree", "-r", "--name-only", "-z", base)
	if err != nil {
		return dirs
	}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" && verify.IsTestPath(p) && !verify.IsTestConfig(p) {
			dirs[path.Dir(p)] = true
		}
	}
	return dirs
}
