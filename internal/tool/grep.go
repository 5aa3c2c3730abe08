package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/llm"
)

const (
	defaultHeadLimit = 250      // entries shown when head_limit is not given
	maxGrepFileSize  = 32 << 20 // larger files are skipped
	maxGrepOutput    = 96 << 10 // bytes of grep output
	maxGrepLineChars = 500      // longer lines are cut in content mode
	grepBatch        = 64       // files searched in parallel before checking limits
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
		Description: "Search file contents with a Go RE2 regular expression, respecting .gitignore. output_mode: files_with_matches (default, newest first), content (matching lines, with optional context) or count.",
		Parameters: schema(map[string]any{
			"pattern": prop("string", "Regular expression (RE2 syntax)"),
			"path":    prop("string", "File or directory to search (default: workspace root)"),
			"glob":    prop("string", "Only search files matching this glob, e.g. *.go or src/**/*.{ts,tsx}"),
			"output_mode": map[string]any{
				"type":        "string",
				"enum":        []string{"files_with_matches", "content", "count"},
				"description": "What to show (default files_with_matches)",
			},
			"-i":         prop("boolean", "Case-insensitive search"),
			"-n":         prop("boolean", "Show line numbers in content mode (default true)"),
			"-A":         prop("integer", "Lines of context after each match (content mode)"),
			"-B":         prop("integer", "Lines of context before each match (content mode)"),
			"-C":         prop("integer", "Lines of context before and after each match (content mode)"),
			"head_limit": prop("integer", "Maximum entries to show (default 250)"),
			"multiline":  prop("boolean", "Let patterns span lines; . also matches newline"),
		}, "pattern"),
	}
}

func (Grep) ReadOnly() bool { return true }

// grepOpts is a parsed grep call.
type grepOpts struct {
	mode          string
	lineRe        *regexp.Regexp // matches one line (line mode)
	bufRe         *regexp.Regexp // matches the whole buffer: the pattern in multiline mode, else a prefilter (may be nil)
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
	order := make([]int, len(rels))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return rels[order[i]] < rels[order[j]] })

	var hits []fileHit
	entries, large := 0, 0
	capped := false
	for start := 0; start < len(order) && !capped; start += grepBatch {
		if err := ctx.Err(); err != nil {
			return errorf("grep canceled")
		}
		end := min(start+grepBatch, len(order))
		batch := make([]fileHit, end-start)
		parallel(end-start, func(k int) {
			i := order[start+k]
			batch[k] = grepFile(rp.Root, rels[i], abss[i], &o, limit+1)
		})
		for _, h := range batch {
			if h.skip == "large" {
				large++
			}
			if h.count == 0 {
				continue
			}
			hits = append(hits, h)
			if o.mode == "content" {
				entries += len(h.lines)
			} else {
				entries++
			}
		}
		if o.mode != "files_with_matches" && entries > limit {
			capped = true
		}
	}
	return grepResult(hits, &o, limit, capped, large)
}

// grepResult renders what grep found.
func grepResult(hits []fileHit, o *grepOpts, limit int, capped bool, large int) Result {
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
		if shown >= limit || b.Len()+len(s) > maxGrepOutput {
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

// grepFile searches one file. maxLines bounds the content lines kept.
func grepFile(root, rel, abs string, o *grepOpts, maxLines int) fileHit {
	h := fileHit{rel: rel}
	fi, ok := statFile(root, abs)
	if !ok {
		return h
	}
	h.mtime = fi.ModTime()
	if fi.Size() > maxGrepFileSize {
		h.skip = "large"
		return h
	}
	data, err := os.ReadFile(abs)
	if err != nil || bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return h
	}
	var matched []int // 0-based line numbers, increasing
	if o.multiline {
		n := -1
		if o.mode == "files_with_matches" {
			n = 1
		}
		line, pos := 0, 0
		for _, m := range o.bufRe.FindAllIndex(data, n) {
			line += bytes.Count(data[pos:m[0]], []byte{'\n'})
			endLine := line + bytes.Count(data[m[0]:max(m[0], m[1]-1)], []byte{'\n'})
			pos = m[0]
			h.count++
			for l := line; l <= endLine; l++ {
				if len(matched) == 0 || matched[len(matched)-1] < l {
					matched = append(matched, l)
				}
			}
		}
	} else {
		// The prefilter finds where the first matching line can be. It
		// sees lines with their '\r', so it is not used on CRLF files.
		start := 0
		if o.bufRe != nil && bytes.IndexByte(data, '\r') < 0 {
			loc := o.bufRe.FindIndex(data)
			if loc == nil {
				return h
			}
			start = bytes.LastIndexByte(data[:loc[0]], '\n') + 1
		}
		line := bytes.Count(data[:start], []byte{'\n'})
		for rest := data[start:]; len(rest) > 0; line++ {
			l := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				l, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			if o.lineRe.Match(bytes.TrimSuffix(l, []byte{'\r'})) {
				h.count++
				matched = append(matched, line)
				if o.mode == "files_with_matches" || (o.mode == "content" && len(matched) >= maxLines) {
					break
				}
			}
		}
	}
	if o.mode == "content" && len(matched) > 0 {
		h.lines = contentLines(rel, data, matched, o, maxLines)
	}
	return h
}

// contentLines renders matched lines with their context, ripgrep style:
// "path:N:text" for matches, "path-N-text" for context, "--" between
// groups that do not touch.
func contentLines(rel string, data []byte, matched []int, o *grepOpts, maxLines int) []string {
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	isMatch := make(map[int]bool, len(matched))
	for _, m := range matched {
		isMatch[m] = true
	}
	var out []string
	prevEnd := -1 // last line written
	kept := 0
	for _, m := range matched {
		from, to := max(0, m-o.before), min(len(lines)-1, m+o.after)
		if from <= prevEnd {
			from = prevEnd + 1
		} else if prevEnd >= 0 {
			out = append(out, "--")
		}
		for l := from; l <= to; l++ {
			text, cut := truncateRunes(strings.TrimSuffix(lines[l], "\r"), maxGrepLineChars)
			if cut {
				text += " …[line truncated]"
			}
			sep := "-"
			if isMatch[l] {
				sep = ":"
			}
			if o.lineNumbers {
				out = append(out, fmt.Sprintf("%s%s%d%s%s", rel, sep, l+1, sep, text))
			} else {
				out = append(out, rel+sep+text)
			}
			kept++
		}
		prevEnd = max(prevEnd, to)
		if kept >= maxLines {
			break
		}
	}
	if o.before == 0 && o.after == 0 {
		// No context: separators would only be noise.
		kept := out[:0]
		for _, l := range out {
			if l != "--" {
				kept = append(kept, l)
			}
		}
		out = kept
	}
	return out
}

// parallel runs work(0..n-1) on up to GOMAXPROCS goroutines.
func parallel(n int, work func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			work(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := range next {
				work(i)
			}
		})
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
