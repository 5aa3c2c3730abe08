// Package workspace holds what ultra does with git: the identity of a
// working tree, and (later) worktrees, branches and the commit guard.
package workspace

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// TreeHash returns the git tree hash of dir's working tree as it is on
// disk: tracked files with their changes and untracked files that are not
// ignored. The repository's index and HEAD are not touched: the hash is
// computed with a private copy of the index.
func TreeHash(ctx context.Context, dir string) (string, error) {
	indexPath, err := gitOut(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp("", "ultra-index-*")
	if err != nil {
		return "", err
	}
	tmpPath := tmp.Name()
	defer os.Remove(tmpPath)
	var srcInfo os.FileInfo
	if src, err := os.Open(indexPath); err == nil {
		// Starting from the real index lets git reuse its stat cache.
		srcInfo, _ = src.Stat()
		_, err = io.Copy(tmp, src)
		src.Close()
		if err != nil {
			tmp.Close()
			return "", err
		}
	}
	tmp.Close()
	if srcInfo != nil {
		// Keep the index's own time: git trusts the stat cache only for
		// files older than the index, and re-reads the rest ("racy git").
		// A copy stamped now would make a file edited in the same second
		// as the index look unchanged.
		_ = os.Chtimes(tmpPath, srcInfo.ModTime(), srcInfo.ModTime())
	}
	env := []string{"GIT_INDEX_FILE=" + tmpPath}
	if st, _ := os.Stat(tmpPath); st != nil && st.Size() == 0 {
		os.Remove(tmpPath) // git wants no file rather than an empty one
	}
	if err := clearHiding(ctx, dir, env); err != nil {
		return "", err
	}
	if _, err := gitOut(ctx, dir, env, "add", "-A", "--", "."); err != nil {
		return "", err
	}
	if err := stageRecords(ctx, dir, env); err != nil {
		return "", err
	}
	return gitOut(ctx, dir, env, "write-tree")
}

// clearHiding takes the skip-worktree and assume-unchanged marks off the
// entries of the index in env: git add -A leaves a marked entry as the
// index holds it, whatever is on disk, so a tree built from a model's
// index could hold code that is on no disk, or leave out code that is
// (where the reviewer, who reads the files, sees other code than the
// gate judged). Without the marks the tree is what the files are; only
// a sparse checkout's file outside its cone (skip-worktree, as HEAD has
// it, not on disk) keeps its mark.
func clearHiding(ctx context.Context, dir string, env []string) error {
	out, err := gitOut(ctx, dir, env, "ls-files", "-v", "-z")
	if err != nil {
		return err
	}
	// One mark at a time: update-index applies only the last of its
	// mark options.
	marked := map[string][]string{}
	for _, e := range strings.Split(out, "\x00") {
		// "<tag> <path>": S skip-worktree, a lower-case tag assume-unchanged.
		if len(e) < 3 || e[1] != ' ' {
			continue
		}
		tag := e[0]
		if tag == 'S' || tag == 's' { // s: both marks
			marked["--no-skip-worktree"] = append(marked["--no-skip-worktree"], e[2:])
		}
		if tag >= 'a' && tag <= 'z' {
			marked["--no-assume-unchanged"] = append(marked["--no-assume-unchanged"], e[2:])
		}
	}
	if len(marked) == 0 {
		return nil
	}
	// A skip-worktree entry as HEAD has it, with no file on disk, is no
	// change: a sparse checkout's file outside its cone keeps its mark.
	// Every other mark goes (assume-unchanged is only a hint to git).
	changed := map[string]bool{}
	if diff, err := gitOut(ctx, dir, env, "diff-index", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--"); err == nil {
		for _, p := range strings.Split(diff, "\x00") {
			changed[p] = true
		}
	} else {
		changed = nil // no HEAD: every marked entry is a change
	}
	sparse := func(p string) bool {
		if changed == nil || changed[p] {
			return false
		}
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		return err != nil
	}
	for opt, paths := range marked {
		if opt == "--no-skip-worktree" {
			paths = slices.DeleteFunc(paths, sparse)
		}
		if len(paths) == 0 {
			continue
		}
		cmd := Command(ctx, dir, "update-index", "-z", opt, "--stdin")
		cmd.Env = append(cmd.Env, env...)
		cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git update-index: %v: %s", err, b)
		}
	}
	return nil
}

// stageRecords makes the tree's .ultra/ exactly what is on disk. The
// index TreeHash starts from is the worktree's, which the model can write
// (git update-index): an entry there that git add -A keeps without a file
// on disk (skip-worktree, assume-unchanged) or of another kind (a link, a
// gitlink) would otherwise put in the tree whatever the model chose under
// .ultra/, another run's records or ultra's state included, where the
// model cannot write a file. So every entry under .ultra/ is dropped and
// the directory staged again from disk, and its files staged raw (see
// stageRaw). env holds the index.
func stageRecords(ctx context.Context, dir string, env []string) error {
	// git rm leaves skip-worktree entries alone (sparse checkout's
	// rule); update-index removes whatever it is given.
	entries, err := gitOut(ctx, dir, env, "ls-files", "-z", "--", ".ultra")
	if err != nil {
		return err
	}
	if entries != "" {
		cmd := Command(ctx, dir, "update-index", "-z", "--force-remove", "--stdin")
		cmd.Env = append(cmd.Env, env...)
		cmd.Stdin = strings.NewReader(strings.TrimRight(entries, "\x00") + "\x00")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git update-index: %v: %s", err, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, ".ultra")); err != nil {
		return nil
	}
	if _, err := gitOut(ctx, dir, env, "add", "-A", "--", ".ultra"); err != nil {
		return err
	}
	// Always, not only when a .gitattributes lies in the working tree:
	// git add may still read one from the index it started from.
	return stageRaw(ctx, dir, env, ".ultra")
}

// stageRaw stages the files under prefix (relative to dir) again, as
// their bytes are on disk, without the filters git add applies by their
// attributes (ident, text, working-tree-encoding): ultra's records are
// committed exactly as ultra wrote and signed them, whatever a
// .gitattributes of the tree says of them. env holds the index.
func stageRaw(ctx context.Context, dir string, env []string, prefix string) error {
	out, err := gitOut(ctx, dir, env, "ls-files", "-s", "-z", "--", prefix)
	if err != nil || out == "" {
		return err
	}
	var modes, paths []string
	for _, e := range strings.Split(out, "\x00") {
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(e, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && (f[0] == "100644" || f[0] == "100755") {
			modes, paths = append(modes, f[0]), append(paths, path)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	cmd := Command(ctx, dir, "hash-object", "-w", "--no-filters", "--stdin-paths")
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
	hashes, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git hash-object: %w", err)
	}
	ids := strings.Fields(string(hashes))
	if len(ids) != len(paths) {
		return fmt.Errorf("git hash-object: %d hashes for %d files", len(ids), len(paths))
	}
	var info strings.Builder
	for i, p := range paths {
		fmt.Fprintf(&info, "%s %s\t%s\n", modes[i], ids[i], p)
	}
	cmd = Command(ctx, dir, "update-index", "--index-info")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(info.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git update-index: %v: %s", err, out)
	}
	return nil
}

// Root returns the top directory of the git repository holding dir.
func Root(ctx context.Context, dir string) (string, error) {
	root, err := gitOut(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return root, nil
}

// safeConfig is configuration given to every git command ultra runs, and
// to the git processes those start: a tree the model wrote may hold a
// nested repository whose own config would run a program of its choosing
// (core.fsmonitor) when git looks into it (submodule status and diff), or
// a filter or textconv of the repository's own for its attributes. No
// hook runs for ultra's own git commands either: a run's worktree takes
// its hooks from a directory in the person's checkout, and no program
// there is one ultra has reason to run.
var safeConfig = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", os.DevNull},
	{"diff.ignoreSubmodules", "all"},
	{"status.submoduleSummary", "false"},
	{"submodule.recurse", "false"},
	{"core.untrackedCache", "false"},
}

// SafeEnv is the environment of ultra's git commands: the current one
// with safeConfig given the highest precedence (GIT_CONFIG_COUNT, which
// git also passes to the processes it starts inside submodules).
func SafeEnv(extra ...string) []string {
	env := make([]string, 0, len(os.Environ())+2*len(safeConfig)+1+len(extra))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") && !strings.HasPrefix(kv, "GIT_CONFIG_KEY_") && !strings.HasPrefix(kv, "GIT_CONFIG_VALUE_") {
			env = append(env, kv)
		}
	}
	env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(safeConfig)))
	for i, kv := range safeConfig {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return append(env, extra...)
}

// Command is a git command in dir run the way ultra runs all of them
// (SafeEnv).
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = SafeEnv()
	return cmd
}

func gitOut(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return gitOutIn(ctx, dir, env, "", args...)
}

// gitOutIn is gitOut with stdin as the command's input (a commit message
// goes there, never into the arguments, whose size the kernel bounds).
func gitOutIn(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, error) {
	cmd := Command(ctx, dir, args...)
	cmd.Env = append(cmd.Env, env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(string(out)), nil
}

// ExportTree writes the files of tree into dest, which must not exist,
// as git checks them out (modes, symlinks, attributes), with a private
// index: the repository's index, HEAD and worktrees stay as they are.
// dir is any directory of the repository.
//
// dest is the checkout's work tree, as a fresh clone's would be: the
// attributes that apply are the tree's own .gitattributes files (and the
// person's configuration), never a .gitattributes lying untracked or
// ignored in dir, which git would otherwise read for paths the tree has
// none for. The files are what a person's checkout of the commit holds.
func ExportTree(ctx context.Context, dir, tree, dest string) error {
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("checking out tree %s: %s already exists", Short(tree), dest)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp("", "ultra-checkout-index-*")
	if err != nil {
		return err
	}
	tmp.Close()
	os.Remove(tmp.Name()) // git wants no file rather than an empty one
	defer os.Remove(tmp.Name())
	// checkout-index writes into its work tree (git moves there first).
	env := []string{"GIT_INDEX_FILE=" + tmp.Name(), "GIT_WORK_TREE=" + dest}
	if _, err := gitOut(ctx, dir, env, "read-tree", tree); err != nil {
		return err
	}
	// Parallel checkout: about four times faster on a large tree.
	_, err = gitOut(ctx, dir, env, "-c", "checkout.workers=0", "checkout-index", "--all", "--force")
	return err
}

// IgnoredDirs are the directories of dir's working tree that git ignores
// and whose name is one of names (node_modules, .venv, …), relative to
// dir, slash-separated. Directories inside them are not listed.
func IgnoredDirs(ctx context.Context, dir string, names ...string) ([]string, error) {
	cmd := Command(ctx, dir, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--no-empty-directory")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files --ignored: %w", err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var dirs []string
	for _, e := range strings.Split(string(out), "\x00") {
		if !strings.HasSuffix(e, "/") {
			continue
		}
		e = strings.TrimSuffix(e, "/")
		if want[filepath.Base(e)] {
			dirs = append(dirs, e)
		}
	}
	return dirs, nil
}

// GitCommonDir is the repository's git directory (shared by all its
// worktrees), absolute.
func GitCommonDir(ctx context.Context, dir string) (string, error) {
	d, err := gitOut(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	return d, nil
}

// Change is one path that differs between two trees.
type Change struct {
	Status string // A added, M modified, D deleted, R renamed, T type changed
	Path   string // in the new tree (the old path for D)
	From   string // R: the old path
}

// DiffTrees lists what changed from tree a to tree b (renames found).
func DiffTrees(ctx context.Context, dir, a, b string) ([]Change, error) {
	out, err := Command(ctx, dir, "diff-tree", "-r", "-M", "--no-commit-id", "--name-status", "-z", a, b).Output()
	if err != nil {
		return nil, fmt.Errorf("git diff-tree %s %s: %w", Short(a), Short(b), err)
	}
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var cs []Change
	for i := 0; i < len(f); i++ {
		if f[i] == "" {
			continue
		}
		st := f[i][:1]
		switch {
		case (st == "R" || st == "C") && i+2 < len(f):
			cs = append(cs, Change{Status: st, From: f[i+1], Path: f[i+2]})
			i += 2
		case i+1 < len(f):
			cs = append(cs, Change{Status: st, Path: f[i+1]})
			i++
		}
	}
	return cs, nil
}

// ForeignUltraPaths are the paths under .ultra/ that differ from tree
// from to tree to other than the paths of own as regular files: what no
// run may change (another run's records, ultra's state, the project's
// config), nor bring as a link or a gitlink.
func ForeignUltraPaths(ctx context.Context, dir, from, to string, own []string) ([]string, error) {
	out, err := Command(ctx, dir, "diff-tree", "-r", "--no-renames", "--raw", "-z", from, to, "--", ".ultra").Output()
	if err != nil {
		return nil, fmt.Errorf("git diff-tree %s %s: %w", Short(from), Short(to), err)
	}
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var bad []string
	for i := 0; i+1 < len(f); i += 2 {
		// ":<old mode> <new mode> <old id> <new id> <status>", then the path.
		meta, path := strings.Fields(strings.TrimPrefix(f[i], ":")), f[i+1]
		if len(meta) < 5 {
			return nil, fmt.Errorf("git diff-tree: cannot read %q", f[i])
		}
		newMode := meta[1]
		if slices.Contains(own, path) && (newMode == "100644" || newMode == "000000") {
			continue
		}
		bad = append(bad, path)
	}
	return bad, nil
}

// RestoreInTree returns the tree that is tree with the paths of restore
// as they are in base (removed where base has none), the paths of remove
// removed, and the files of put (path → content, a regular file) holding
// that content. The repository's index is not touched.
func RestoreInTree(ctx context.Context, dir, tree, base string, restore, remove []string, put map[string]string) (string, error) {
	tmp, err := os.CreateTemp("", "ultra-restore-index-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	os.Remove(tmp.Name())
	defer os.Remove(tmp.Name())
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := gitOut(ctx, dir, env, "read-tree", tree); err != nil {
		return "", err
	}
	var info strings.Builder
	gone := append([]string(nil), remove...)
	for _, p := range restore {
		line, err := gitOut(ctx, dir, nil, "ls-tree", "--full-tree", base, "--", p)
		if err != nil {
			return "", err
		}
		if line == "" {
			gone = append(gone, p)
			continue
		}
		// "<mode> blob <sha>\t<path>" is update-index's input format.
		info.WriteString(line + "\n")
	}
	for _, p := range slices.Sorted(maps.Keys(put)) {
		id, err := gitOutIn(ctx, dir, nil, put[p], "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&info, "100644 %s\t%s\n", id, p)
	}
	if len(gone) > 0 {
		if _, err := gitOut(ctx, dir, env, append([]string{"update-index", "--force-remove", "--"}, gone...)...); err != nil {
			return "", err
		}
	}
	cmd := Command(ctx, dir, "update-index", "--index-info")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(info.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git update-index: %v: %s", err, out)
	}
	return gitOut(ctx, dir, env, "write-tree")
}

// WithoutPaths is tree with the given files and directories (repository
// paths) left out: tree itself when it has none of them. dir is any directory of the
// repository; the repository's index is not touched.
func WithoutPaths(ctx context.Context, dir, tree string, paths []string) (string, error) {
	// Trees never change: the answer for a tree is remembered (per
	// directory, whose repository holds the tree written).
	key := dir + "\x00" + tree + "\x00" + strings.Join(paths, "\x00")
	if v, ok := withoutCache.Load(key); ok {
		return v.(string), nil
	}
	got, err := withoutPaths(ctx, dir, tree, paths)
	if err == nil {
		withoutCache.Store(key, got)
	}
	return got, err
}

var withoutCache sync.Map // dir, tree, paths → the tree without them

func withoutPaths(ctx context.Context, dir, tree string, paths []string) (string, error) {
	// Directories among paths go with every file under them.
	out, err := gitOut(ctx, dir, nil, append([]string{"ls-tree", "-r", "-z", "--name-only", tree, "--"}, paths...)...)
	if err != nil || out == "" {
		return tree, err
	}
	files := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
	tmp, err := os.CreateTemp("", "ultra-index-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := gitOut(ctx, dir, env, "read-tree", tree); err != nil {
		return "", err
	}
	// A private index read from the tree: update-index, not rm, which
	// compares with the files on disk.
	if _, err := gitOut(ctx, dir, env, append([]string{"update-index", "--force-remove", "--"}, files...)...); err != nil {
		return "", err
	}
	return gitOut(ctx, dir, env, "write-tree")
}

// OwnNames are the top-level names a worktree holds for git and ultra:
// on a case-insensitive checkout (macOS, Windows) any other spelling of
// them (.ULTRA, .Git) is the same directory, so a tree that holds one
// would land as ultra's records or git's own files there.
var OwnNames = []string{".ultra", ".git"}

// CaseVariant reports whether name is another spelling of one of
// OwnNames (not the name itself): other letter cases, and what Windows
// and macOS file systems read as the same name: trailing dots and spaces
// (NTFS drops them), a stream suffix (.ultra::$INDEX_ALLOCATION), an 8.3
// short name (ULTRA~1), and characters HFS+ ignores (zero-width joiners
// and the like).
func CaseVariant(name string) bool {
	if name == "" {
		return false
	}
	folded := foldName(name)
	for _, own := range OwnNames {
		if name == own {
			return false
		}
		if folded == own {
			return true
		}
		// An 8.3 short name: the first letters of the name without its
		// dot, a tilde and a number (ULTRA~1, GIT~1).
		if short, n, ok := strings.Cut(folded, "~"); ok && short != "" && strings.HasPrefix(strings.TrimPrefix(own, "."), short) && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}

// foldName is name as a case-insensitive, forgiving file system reads
// it: lower case, without the characters HFS+ ignores, without an NTFS
// stream suffix, without trailing dots and spaces.
func foldName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if ignorable(r) {
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	if i := strings.IndexByte(s, ':'); i > 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, ". ")
	return strings.ToLower(s)
}

// ignorable are code points HFS+ leaves out of names it compares.
func ignorable(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F, r == 0xFEFF, r == 0x00AD, r == 0x034F:
		return true
	}
	return false
}

// CaseVariants lists the top-level entries of tree that are case variants
// of OwnNames (CaseVariant).
func CaseVariants(ctx context.Context, dir, tree string) ([]string, error) {
	out, err := gitOut(ctx, dir, nil, "ls-tree", "--name-only", "-z", tree)
	if err != nil {
		return nil, err
	}
	var vs []string
	for _, name := range strings.Split(out, "\x00") {
		if CaseVariant(name) {
			vs = append(vs, name)
		}
	}
	return vs, nil
}

// CheckoutChanged lists the files of tree that differ in dest, a checkout
// of it made by ExportTree (changed, deleted, of another type): what a
// process that ran there changed. Files dest holds beside the tree's are
// not listed. dir is any directory of the repository.
func CheckoutChanged(ctx context.Context, dir, tree, dest string) ([]string, error) {
	tmp, err := os.CreateTemp("", "ultra-checkout-index-*")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	os.Remove(tmp.Name())
	defer os.Remove(tmp.Name())
	env := []string{"GIT_INDEX_FILE=" + tmp.Name(), "GIT_WORK_TREE=" + dest}
	if _, err := gitOut(ctx, dir, env, "read-tree", tree); err != nil {
		return nil, err
	}
	// Stat information is missing from a fresh index: refresh hashes the
	// files whose stat does not match (all of them, once).
	cmd := Command(ctx, dir, "update-index", "-q", "--refresh", "--ignore-submodules")
	cmd.Env = append(cmd.Env, env...)
	_ = cmd.Run() // exits 1 when files changed: diff-files says which
	out, err := gitOut(ctx, dir, env, "diff-files", "--name-only", "-z", "--ignore-submodules")
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			changed = append(changed, p)
		}
	}
	return changed, nil
}
