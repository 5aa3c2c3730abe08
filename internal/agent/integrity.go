package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// stateFingerprint identifies the files the model may never change:
// .ultra/ outside its state directory (config, plans, ledger) and the
// run's gate decisions and baseline. The guard refuses commands that
// visibly write them; this catches the ones it cannot see (a script, a
// computed path) after the fact.
//
// ultra writes the run's baseline.json itself while the model works (the
// baseline is measured in the background): ownBaseline is the stamp of the
// file ultra wrote ("" before it did). A baseline.json with that stamp, or
// none before ultra wrote one, adds nothing; any other (replaced, edited,
// or removed after ultra wrote it) does.
func stateFingerprint(workdir, runDir, ownBaseline string) string {
	var lines []string
	add := func(path string, info fs.FileInfo) {
		lines = append(lines, fmt.Sprintf("%s\x00%d\x00%d\x00%v", path, info.Size(), info.ModTime().UnixNano(), info.Mode()))
	}
	ultra := filepath.Join(workdir, ".ultra")
	_ = filepath.WalkDir(ultra, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p == filepath.Join(ultra, "state") {
			return filepath.SkipDir
		}
		if info, err := d.Info(); err == nil {
			add(p, info)
		}
		return nil
	})
	if entries, err := os.ReadDir(filepath.Join(runDir, "hooks")); err == nil {
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				add(filepath.Join(runDir, "hooks", e.Name()), info)
			}
		}
	}
	if entries, err := os.ReadDir(runDir); err == nil {
		for _, e := range entries {
			if n := e.Name(); n == "baseline.json" {
				if info, err := e.Info(); err == nil && statStamp(info) != ownBaseline {
					add(filepath.Join(runDir, n), info)
				}
			} else if strings.HasPrefix(n, "gate-") && strings.HasSuffix(n, ".json") {
				if info, err := e.Info(); err == nil {
					add(filepath.Join(runDir, n), info)
				}
			}
		}
	}
	if _, err := os.Lstat(gatefile.BaselinePath(runDir)); ownBaseline != "" && err != nil {
		lines = append(lines, "baseline.json removed")
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// fingerprint is stateFingerprint of the run, never between ultra's write
// of baseline.json and its note of the file's stamp.
func (r *runner) fingerprint(runDir string) string {
	r.baselineMu.Lock()
	defer r.baselineMu.Unlock()
	return stateFingerprint(r.row.Workdir, runDir, r.ownBaseline())
}

// statStamp identifies a file by its size, time and mode.
func statStamp(info fs.FileInfo) string {
	return fmt.Sprintf("%d\x00%d\x00%v", info.Size(), info.ModTime().UnixNano(), info.Mode())
}

// gitFingerprint identifies what no run may move: the protected branches,
// the run's base, the branch its worktree is on and the worktree's hooks
// setting. It also returns the tip of the run's own branch, which may move
// only to a tree the gate passed. Both are "" for a run without a
// worktree of its own.
func (r *runner) gitFingerprint() (fingerprint, ownTip string) {
	ws := r.row.Workspace
	if ws.Branch == "" {
		return "", ""
	}
	ctx := context.Background()
	// One listing of the branches: each with its commit, and which one the
	// worktree's HEAD points at.
	out, _ := workspace.Git(ctx, r.row.Workdir, "for-each-ref", "--format="+branchListFormat, "refs/heads/")
	branches, unread := parseBranchList(out)
	var keep []string
	for _, b := range branches {
		if b.name == ws.Branch {
			ownTip = b.commit
		}
		if b.head {
			keep = append(keep, "HEAD "+b.name) // where, not at which commit: that is ownTip's
		}
		if b.name == ws.Base || workspace.Protected(r.o.Git.protected(), b.name) {
			keep = append(keep, "branch "+b.name+" "+b.commit)
		}
	}
	// A line that could not be read may be any branch: keep it whole.
	for _, line := range unread {
		keep = append(keep, "unread "+line)
	}
	hooks := workspace.PersonConfigValue(ctx, r.row.Workdir, "core.hooksPath")
	keep = append(keep, "hooks "+hooks)
	return strings.Join(keep, "\n"), ownTip
}

// branchListFormat has git for-each-ref print each branch as its commit,
// its full ref name and its HEAD mark, separated by NULs. No field can hold
// a NUL, and the line starts with the commit: %(HEAD) is a blank for every
// branch not checked out, and a listing that began with it (or with a
// short name) would be misread once the blank is trimmed away or doubles
// a separator.
const branchListFormat = "%(objectname)%00%(refname)%00%(HEAD)"

// branchTip is one branch of the listing.
type branchTip struct {
	name   string // without refs/heads/; may hold slashes
	commit string
	head   bool // the worktree's HEAD points at it
}

// parseBranchList reads git for-each-ref output in branchListFormat. It
// returns the lines it could not read apart, so that they are not lost.
// The HEAD mark may be "*", " " or, on a trimmed last line, nothing.
func parseBranchList(out string) (branches []branchTip, unread []string) {
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Split(line, "\x00")
		if len(fields) != 3 {
			unread = append(unread, line)
			continue
		}
		commit, ref, mark := strings.TrimSpace(fields[0]), fields[1], strings.TrimSpace(fields[2])
		name, ok := strings.CutPrefix(ref, "refs/heads/")
		if !ok || name == "" || commit == "" || strings.ContainsAny(commit, " \t") || (mark != "" && mark != "*") {
			unread = append(unread, line)
			continue
		}
		branches = append(branches, branchTip{name: name, commit: commit, head: mark == "*"})
	}
	return branches, unread
}

// tipGreen reports whether commit's tree is one the gate let through.
func (r *runner) tipGreen(commit string) bool {
	tree, err := workspace.TreeOf(context.Background(), r.row.Workdir, commit)
	return err == nil && r.greenDecision(tree) != nil
}
