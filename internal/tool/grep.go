package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/llm"
)

const (
	defaultHeadLimit = 250      // entries shown when head_limit is not given
	maxGrepFileSize  = 32 << 20 // larger files are skipped
	maxGrepOutput    = 96 << 10 // bytes of grep output
	maxGrepLineChars = 500      // longer lines are cut in content mode
)

// Grep searches file contents with a regular expression.
type Grep struct{}

type grepArgs struct {
	Pattern    string   `json:"pattern" required:"true"`
	Path       string   `json:"path"`
	Glob       string   `json:"glob"`
	OutputMode string   `json:"output_mode"`
	I          flexBool `json:"-i"`
	N          flexBool `json:"-n"`
	A          flexInt  `json:"-A"`
	B          flexInt  `json:"-B"`
	C          flexInt  `json:"-C"`
	HeadLimit  flexInt  `json:"head_limit"`
	Multiline  flexBool `json:"multiline"`
}

func (Grep) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "grep",
		Description: "Search file contents with a Go RE2 regex, .gitignore respected. Modes: files_with_matches (default, newest first), content (lines; -A/-B/-C context), count.",
		Parameters: schema(map[string]any{
			"pattern": prop("string", "RE2 regex"),
			"path":    prop("string", "File or directory (default: root)"),
			"glob":    prop("string", "File filter, e.g. *.go, **/*.{ts,tsx}"),
			"output_mode": map[string]any{
				"type": "string",
				"enum": []string{"files_with_matches", "content", "count"},
			},
			"-i":         typed("boolean"),
			"-n":         prop("boolean", "Line numbers (default true)"),
			"-A":         typed("integer"),
			"-B":         typed("integer"),
			"-C":         typed("integer"),
			"head_limit": prop("integer", "Max entries (default 250)"),
			"multiline":  prop("boolean", "Match across lines; . matches newline"),
		}, "pattern"),
	}
}

func (Grep) ReadOnly() bool { return true }

// typed is a parameter whose name says all: -i, -A.
func typed(typ string) map[string]any { return map[string]any{"type": typ} }

// grepOpts is a parsed grep call.
type grepOpts struct {
	mode          string
	lineRe        *regexp.Regexp // matches one line (line mode)
	bufRe         *regexp.Regexp // matches the whole buffer: the pattern in multiline mode, else a prefilter (may be nil)
	lits          *litFilter     // literal prefilter (may be nil)
	multiline     bool
	lineNumbers   bool
	before, after int
}

// fileHit is what grep found in one file.
type fileHit struct {
	rel   string
	mtime time.Time
	count int
	lines []string // content mode output, "--" separators included
	skip  string   // why the file was skipped ("large"), if it was
}

func (Grep) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a grepArgs
	if res, ok := decodeArgs("grep", raw, &a); !ok {
		return res
	}
	if a.Pattern == "" {
		return malformed("argument \"pattern\" of grep must not be empty")
	}
	o := grepOpts{lineNumbers: !a.N.Set || a.N.B, multiline: a.Multiline.B}
	switch m := strings.ToLower(strings.TrimSpace(a.OutputMode)); m {
	case "", "files_with_matches", "files", "files-with-matches", "l":
		o.mode = "files_with_matches"
	case "content", "lines":
		o.mode = "content"
	case "count", "c":
		o.mode = "count"
	default:
		return malformed("invalid output_mode %q for grep: use files_with_matches, content or count", a.OutputMode)
	}
	for _, n := range []flexInt{a.A, a.B, a.C, a.HeadLimit} {
		if n.N < 0 {
			return malformed("grep's -A, -B, -C and head_limit must not be negative")
		}
	}
	o.before, o.after = a.C.N, a.C.N
	if a.B.Set {
		o.before = a.B.N
	}
	if a.A.Set {
		o.after = a.A.N
	}
	o.before, o.after = min(o.before, 50), min(o.after, 50)
	limit := defaultHeadLimit
	if a.HeadLimit.Set && a.HeadLimit.N > 0 {
		limit = a.HeadLimit.N
	}

	flags := ""
	if a.I.B {
		flags = "(?i)"
	}
	var err error
	if o.multiline {
		o.bufRe, err = regexp.Compile("(?ms)" + flags + a.Pattern)
	} else if o.lineRe, err = regexp.Compile(flags + a.Pattern); err == nil && !strings.Contains(a.Pattern, `\A`) && !strings.Contains(a.Pattern, `\z`) {
		// A whole-buffer prefilter: any line that matches is a match of
		// it (\A and \z differ, so patterns using them go without).
		o.bufRe, err = regexp.Compile("(?m)" + flags + a.Pattern)
	}
	if err != nil {
		return errorf("invalid regular expression: %v. The syntax is Go's RE2: no lookaround or backreferences; escape ( [ { . * + ? with a backslash to match them literally.", err)
	}
	o.lits = newLitFilter(a.Pattern, a.I.B)

	target := strings.TrimSpace(a.Path)
	if target == "" {
		target = "."
	}
	rp, err := resolvePath(env, target)
	if err != nil {
		return errorf("%v", err)
	}
	fi, err := os.Stat(rp.Abs)
	if err != nil {
		return errorf("path not found: %s", rp.Rel)
	}

	// The files to search, as root-relative and absolute paths.
	var rels, abss []string
	if !fi.IsDir() {
		rels, abss = []string{rp.Rel}, []string{rp.Abs}
	} else {
		var include, exclude []*globPattern
		for _, p := range splitGlobList(a.Glob) {
			neg := strings.HasPrefix(p, "!")
			g, err := compileGlob(strings.TrimPrefix(p, "!"), true)
			if err != nil {
				return errorf("invalid glob for grep: %v", err)
			}
			if neg {
				exclude = append(exclude, g)
			} else {
				include = append(include, g)
			}
		}
		files, err := listFiles(ctx, rp.Root, rp.Abs)
		if err != nil {
			return errorf("grep failed: %v", err)
		}
	files:
		for _, f := range files {
			for _, g := range exclude {
				if g.Match(f) {
					continue files
				}
			}
			if len(include) > 0 {
				ok := false
				for _, g := range include {
					if ok = g.Match(f); ok {
						break
					}
				}
				if !ok {
					continue
				}
			}
			rels = append(rels, path.Join(rp.Rel, f))
			abss = append(abss, filepath.Join(rp.Abs, filepath.FromSlash(f)))
		}
	}
	// Content and count list files by path and may stop early;
	// files_with_matches needs every file to sort by time.
	if !slices.IsSorted(rels) {
		order := make([]int, len(rels))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(i, j int) int { return strings.Compare(rels[i], rels[j]) })
		sr, sa := make([]string, len(rels)), make([]string, len(rels))
		for k, i := range order {
			sr[k], sa[k] = rels[i], abss[i]
		}
		rels, abss = sr, sa
	}
	hits, capped, large := searchFiles(ctx, rp.Root, rels, abss, &o, limit, outputCapped(ctx))
	if err := ctx.Err(); err != nil {
		return errorf("grep canceled")
	}
	return grepResult(hits, &o, limit, capped, large, outputCapped(ctx))
}

// grepResult renders what grep found.
func grepResult(hits []fileHit, o *grepOpts, limit int, capped bool, large int, byteCap bool) Result {
	var notes []string
	if large > 0 {
		notes = append(notes, fmt.Sprintf("%d %s larger than %s skipped.", large, plural(large, "file", "files"), humanSize(maxGrepFileSize)))
	}
	if len(hits) == 0 {
		out := "No matches found"
		if len(notes) > 0 {
			out += "\n[" + strings.Join(notes, " ") + "]"
		}
		return Result{Output: out, Data: map[string]any{"files": 0}}
	}
	var b strings.Builder
	shown := 0
	add := func(s string) bool {
		if shown >= limit || (byteCap && b.Len()+len(s) > maxGrepOutput) {
			capped = true
			return false
		}
		b.WriteString(s)
		b.WriteByte('\n')
		return true
	}
	data := map[string]any{"files": len(hits)}
	switch o.mode {
	case "files_with_matches":
		sort.SliceStable(hits, func(i, j int) bool {
			if !hits[i].mtime.Equal(hits[j].mtime) {
				return hits[i].mtime.After(hits[j].mtime)
			}
			return hits[i].rel < hits[j].rel
		})
		fmt.Fprintf(&b, "Found %d %s\n", len(hits), plural(len(hits), "file", "files"))
		for _, h := range hits {
			if !add(h.rel) {
				break
			}
			shown++
		}
		if capped {
			notes = append(notes, fmt.Sprintf("Showing %d of %d files (newest first); narrow the search or raise head_limit.", shown, len(hits)))
		}
	case "count":
		total := 0
		for _, h := range hits {
			total += h.count
			if add(fmt.Sprintf("%s:%d", h.rel, h.count)) {
				shown++
			}
		}
		what := plural(total, "matching line", "matching lines")
		if o.multiline {
			what = plural(total, "match", "matches")
		}
		if capped {
			notes = append(notes, fmt.Sprintf("Showing the first %d files with matches; more exist. Narrow the search or raise head_limit.", shown))
		} else {
			notes = append(notes, fmt.Sprintf("%d %s in %d %s.", total, what, len(hits), plural(len(hits), "file", "files")))
		}
		data["matches"] = total
	case "content":
		sep := o.before > 0 || o.after > 0
	out:
		for i, h := range hits {
			if sep && i > 0 {
				b.WriteString("--\n")
			}
			for _, l := range h.lines {
				if l == "--" {
					b.WriteString("--\n")
					continue
				}
				if !add(l) {
					break out
				}
				shown++
			}
		}
		if capped {
			notes = append(notes, fmt.Sprintf("Output capped at %d lines; more matches exist. Narrow the search (path, glob, pattern) or raise head_limit.", shown))
		}
	}
	data["truncated"] = capped
	out := strings.TrimSuffix(b.String(), "\n")
	if len(notes) > 0 {
		out += "\n\n[" + strings.Join(notes, " ") + "]"
	}
	return Result{Output: out, Data: data}
}
