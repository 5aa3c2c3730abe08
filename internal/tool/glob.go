package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ultra-dev/ultra/internal/llm"
)

// maxGlobResults is how many paths glob returns.
const maxGlobResults = 200

// Glob finds files by name pattern.
type Glob struct{}

type globArgs struct {
	Pattern string `json:"pattern" required:"true"`
	Path    string `json:"path"`
}

func (Glob) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "glob",
		Description: "Find files by glob, e.g. **/*.go or src/*.{ts,tsx} (** spans directories); newest first, .gitignore respected.",
		Parameters: schema(map[string]any{
			"pattern": prop("string", "Glob, relative to path"),
			"path":    prop("string", "Directory (default: workspace root)"),
		}, "pattern"),
	}
}

func (Glob) ReadOnly() bool { return true }

type foundFile struct {
	rel   string // relative to the root, slash-separated
	abs   string
	mtime time.Time
}

func (Glob) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a globArgs
	if res, ok := decodeArgs("glob", raw, &a); !ok {
		return res
	}
	pattern := filepath.ToSlash(strings.TrimSpace(a.Pattern))
	if pattern == "" {
		return malformed("argument \"pattern\" of glob must not be empty")
	}
	dir := strings.TrimSpace(a.Path)
	if dir == "" {
		dir = "."
	}
	// Leading directories without glob syntax narrow the search.
	prefix, rest := splitLiteralPrefix(normalizeGlob(pattern))
	base := dir
	if strings.HasPrefix(prefix, "/") {
		base = prefix
	} else if prefix != "" {
		base = filepath.Join(dir, prefix)
	}
	g, err := compileGlob(rest, false)
	if err != nil {
		return errorf("invalid glob pattern: %v", err)
	}

	top, err := resolvePath(env, dir)
	if err != nil {
		return errorf("%v", err)
	}
	if fi, err := os.Stat(top.Abs); err != nil || !fi.IsDir() {
		if err != nil {
			return errorf("directory not found: %s", top.Rel)
		}
		return errorf("%s is not a directory; path must name a directory to search", top.Rel)
	}
	rb, err := resolvePath(env, base)
	if err != nil {
		return errorf("%v", err)
	}
	var found []foundFile
	if fi, err := os.Stat(rb.Abs); err == nil && fi.IsDir() {
		found, err = globFiles(ctx, rb, g)
		if err != nil {
			return errorf("glob failed: %v", err)
		}
	}
	if len(found) == 0 {
		where := top.Rel
		if where == "." {
			where = "the workspace root"
		}
		msg := fmt.Sprintf("No files found matching %s in %s", a.Pattern, where)
		if !strings.Contains(pattern, "/") {
			msg += fmt.Sprintf(" (a pattern without / matches only directly in that directory; use **/%s to search subdirectories too)", pattern)
		}
		return Result{Output: msg, Data: map[string]any{"count": 0}}
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].mtime.Equal(found[j].mtime) {
			return found[i].mtime.After(found[j].mtime)
		}
		return found[i].rel < found[j].rel
	})
	total := len(found)
	shown := found[:min(total, maxGlobResults)]
	var b strings.Builder
	for _, f := range shown {
		b.WriteString(f.rel)
		b.WriteByte('\n')
	}
	if total > len(shown) {
		fmt.Fprintf(&b, "\n[Showing the %d most recently modified of %d matching files; use a narrower pattern or path to see the others.]\n", len(shown), total)
	}
	return Result{
		Output: strings.TrimSuffix(b.String(), "\n"),
		Data:   map[string]any{"count": total, "truncated": total > len(shown)},
	}
}

// globFiles lists the files under the directory base that match g.
func globFiles(ctx context.Context, base resolved, g *globPattern) ([]foundFile, error) {
	files, err := listFiles(ctx, base.Root, base.Abs)
	if err != nil {
		return nil, err
	}
	rootFD, err := openRoot(base.Root)
	if err != nil {
		return nil, err
	}
	defer unix.Close(rootFD)
	var found []foundFile
	for _, f := range files {
		if !g.Match(f) {
			continue
		}
		abs := filepath.Join(base.Abs, filepath.FromSlash(f))
		fi, ok := statFile(rootFD, base.Root, abs)
		if !ok {
			continue
		}
		found = append(found, foundFile{rel: path.Join(base.Rel, f), abs: abs, mtime: fi.ModTime()})
	}
	return found, nil
}
