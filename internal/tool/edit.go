package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ultra-dev/ultra/internal/llm"
)

// Edit replaces exact text in a file the run has read.
type Edit struct{}

type editArgs struct {
	FilePath   string   `json:"file_path" alias:"path" required:"true"`
	OldString  string   `json:"old_string" required:"true"`
	NewString  string   `json:"new_string" required:"true"`
	ReplaceAll flexBool `json:"replace_all"`
}

func (Edit) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "edit",
		Description: "Replace text in a file you have read. old_string must match exactly (whitespace too) and once, unless replace_all; add nearby lines to make it unique.",
		Parameters: schema(map[string]any{
			"file_path":   prop("string", "Path in the workspace"),
			"old_string":  prop("string", "Exact text to replace"),
			"new_string":  prop("string", "Replacement"),
			"replace_all": prop("boolean", "Replace every match"),
		}, "file_path", "old_string", "new_string"),
	}
}

func (Edit) ReadOnly() bool { return false }

const (
	diffContext  = 3  // unchanged lines around a change
	maxDiffLines = 80 // lines of diff in a result
)

func (Edit) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a editArgs
	if res, ok := decodeArgs("edit", raw, &a); !ok {
		return res
	}
	if strings.TrimSpace(a.FilePath) == "" {
		return malformed("argument \"file_path\" of edit must not be empty")
	}
	if a.OldString == "" {
		return errorf("old_string must not be empty; to create a file or replace all of it, use write")
	}
	if a.OldString == a.NewString {
		return errorf("old_string and new_string are identical; there is nothing to change")
	}
	rp, files, fail := writableTarget(env, a.FilePath)
	if fail != nil {
		return *fail
	}
	info, err := os.Stat(rp.Abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errorf("file not found: %s (to create a file, use write)", rp.Rel)
		}
		return errorf("cannot edit %s: %v", rp.Rel, err)
	}
	if info.IsDir() {
		return errorf("%s is a directory; give the path of a file", rp.Rel)
	}
	if info.Size() > maxHashSize {
		return errorf("%s is too large to edit (%s); use bash for it", rp.Rel, humanSize(info.Size()))
	}
	data, err := os.ReadFile(rp.Abs)
	if err != nil {
		return errorf("cannot read %s: %v", rp.Rel, err)
	}
	if err := files.checkContent(rp.Abs, info, data); err != nil {
		return errorf("%s", staleMessage("edit", rp.Rel, err))
	}
	old := string(data)
	oldStr, newStr := a.OldString, a.NewString
	count := strings.Count(old, oldStr)
	if count == 0 && strings.Contains(old, "\r\n") && strings.Contains(oldStr, "\n") && !strings.Contains(oldStr, "\r\n") {
		// The model saw the file without carriage returns.
		crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
		if c := strings.Count(old, crlf(oldStr)); c > 0 {
			oldStr, newStr, count = crlf(oldStr), crlf(newStr), c
		}
	}
	switch {
	case count == 0:
		if line := fuzzyFind(old, oldStr); line > 0 {
			return errorf("old_string was not found in %s. Text that differs only in whitespace or indentation starts at line %d; read the file again and copy the text exactly.", rp.Rel, line)
		}
		return errorf("old_string was not found in %s. It must match the file exactly, including whitespace and indentation; read the file again if unsure.", rp.Rel)
	case count > 1 && !a.ReplaceAll.B:
		return errorf("found %d matches of old_string in %s (at lines %s); it must match exactly once. Add more surrounding context to make it unique, or set replace_all to true to replace every match.",
			count, rp.Rel, matchLines(old, oldStr, 10))
	}

	matches := indexAll(old, oldStr)
	updated := strings.ReplaceAll(old, oldStr, newStr)
	if err := ctx.Err(); err != nil {
		return errorf("edit of %s canceled", rp.Rel)
	}
	if err := ReplaceFile(rp.Abs, []byte(updated), info.Mode().Perm()); err != nil {
		return errorf("cannot write %s: %v", rp.Rel, err)
	}
	if ni, err := os.Stat(rp.Abs); err == nil {
		files.Record(rp.Abs, ni, []byte(updated))
	}
	diff := unifiedDiff(rp.Rel, old, updated, matches, len(oldStr), len(newStr))
	first := strings.Count(old[:matches[0]], "\n") + 1
	where := fmt.Sprintf("at line %d", first)
	if len(matches) > 1 {
		where = fmt.Sprintf("first at line %d", first)
	}
	out := fmt.Sprintf("Edited %s: replaced %d %s (%s).\n%s", rp.Rel, len(matches), plural(len(matches), "occurrence", "occurrences"), where, diff)
	return Result{
		Output: strings.TrimSuffix(out, "\n"),
		Data:   map[string]any{"path": rp.Rel, "replacements": len(matches), "diff": diff},
	}
}

// indexAll returns the offsets of the non-overlapping matches of sub in s,
// as strings.ReplaceAll finds them.
func indexAll(s, sub string) []int {
	var out []int
	for off := 0; ; {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + len(sub)
	}
}

// matchLines lists the line numbers of the first max matches.
func matchLines(s, sub string, max int) string {
	var parts []string
	ms := indexAll(s, sub)
	for i, m := range ms {
		if i == max {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprint(strings.Count(s[:m], "\n")+1))
	}
	return strings.Join(parts, ", ")
}

// fuzzyFind looks for sub in s line by line, ignoring leading and trailing
// whitespace of each line, and returns the 1-based line where it starts
// (0 when absent).
func fuzzyFind(s, sub string) int {
	want := splitLines(sub)
	for i := range want {
		want[i] = strings.TrimSpace(want[i])
	}
	for len(want) > 0 && want[0] == "" {
		want = want[1:]
	}
	for len(want) > 0 && want[len(want)-1] == "" {
		want = want[:len(want)-1]
	}
	if len(want) == 0 {
		return 0
	}
	have := splitLines(s)
	if len(have)*len(want) > 20_000_000 {
		return 0
	}
	if len(want) == 1 {
		// One line: it may be part of a line.
		for i, h := range have {
			if strings.Contains(strings.Join(strings.Fields(h), " "), strings.Join(strings.Fields(want[0]), " ")) {
				return i + 1
			}
		}
		return 0
	}
outer:
	for i := 0; i+len(want) <= len(have); i++ {
		for j, w := range want {
			h := strings.TrimSpace(have[i+j])
			switch {
			case j == 0 && strings.HasSuffix(h, w):
			case j == len(want)-1 && strings.HasPrefix(h, w):
			case h == w:
			default:
				continue outer
			}
		}
		return i + 1
	}
	return 0
}

// splitLines splits s into lines without their newlines; a final newline
// does not start another line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lineChange is one changed run of lines: old lines [OldLine,
// OldLine+len(Old)) became New, starting at NewLine (0-based).
type lineChange struct {
	OldLine, NewLine int
	Old, New         []string
}

// replacementChanges turns the replacements of an edit into line changes.
// matches are the offsets in old of the replaced text (oldLen bytes each,
// replaced by newLen bytes), updated the result.
func replacementChanges(old, updated string, matches []int, oldLen, newLen int) []lineChange {
	d := newLen - oldLen
	// lineEnd returns the offset just past the line that holds s[i-1]
	// (i itself when that byte ends a line).
	lineEnd := func(s string, i int) int {
		if i > 0 && s[i-1] == '\n' {
			return i
		}
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return i + j + 1
		}
		return len(s)
	}
	var out []lineChange
	for i := 0; i < len(matches); {
		first, last := i, i
		a := strings.LastIndexByte(old[:matches[i]], '\n') + 1
		b := lineEnd(old, matches[i]+oldLen)
		var ns, ne int
		for {
			for last+1 < len(matches) && matches[last+1] < b {
				last++
				b = max(b, lineEnd(old, matches[last]+oldLen))
			}
			ns, ne = a+first*d, b+(last+1)*d
			if ne > ns && ne < len(updated) && updated[ne-1] != '\n' {
				// The replacement joined the next line to this one.
				b = lineEnd(old, b+1)
				continue
			}
			break
		}
		c := lineChange{
			OldLine: strings.Count(old[:a], "\n"),
			NewLine: strings.Count(updated[:ns], "\n"),
			Old:     splitLines(old[a:b]),
			New:     splitLines(updated[ns:ne]),
		}
		for len(c.Old) > 0 && len(c.New) > 0 && c.Old[0] == c.New[0] {
			c.Old, c.New = c.Old[1:], c.New[1:]
			c.OldLine++
			c.NewLine++
		}
		for len(c.Old) > 0 && len(c.New) > 0 && c.Old[len(c.Old)-1] == c.New[len(c.New)-1] {
			c.Old, c.New = c.Old[:len(c.Old)-1], c.New[:len(c.New)-1]
		}
		if len(c.Old) > 0 || len(c.New) > 0 {
			out = append(out, c)
		}
		i = last + 1
	}
	return out
}

// unifiedDiff renders the replacements of an edit as a unified diff with a
// few lines of context, capped at maxDiffLines lines.
func unifiedDiff(name, old, updated string, matches []int, oldLen, newLen int) string {
	changes := replacementChanges(old, updated, matches, oldLen, newLen)
	if len(changes) == 0 {
		return ""
	}
	oldLines := splitLines(old)
	type hunk struct {
		oldStart, newStart int // 0-based
		oldN, newN         int
		end                int // old line just past the hunk's changes
		lines              []string
	}
	var hunks []*hunk
	var h *hunk
	addContext := func(from, to int) {
		for l := from; l < to && l < len(oldLines); l++ {
			h.lines = append(h.lines, " "+oldLines[l])
			h.oldN++
			h.newN++
		}
	}
	for _, c := range changes {
		if h != nil && c.OldLine-h.end <= 2*diffContext {
			addContext(h.end, c.OldLine)
		} else {
			if h != nil {
				addContext(h.end, h.end+diffContext)
			}
			start := max(0, c.OldLine-diffContext)
			h = &hunk{oldStart: start, newStart: c.NewLine - (c.OldLine - start)}
			hunks = append(hunks, h)
			addContext(start, c.OldLine)
		}
		for _, l := range c.Old {
			h.lines = append(h.lines, "-"+l)
		}
		for _, l := range c.New {
			h.lines = append(h.lines, "+"+l)
		}
		h.oldN += len(c.Old)
		h.newN += len(c.New)
		h.end = c.OldLine + len(c.Old)
	}
	addContext(h.end, h.end+diffContext)

	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", name, name)
	written, total := 0, 0
	for _, h := range hunks {
		total += 1 + len(h.lines)
	}
	for _, h := range hunks {
		if written >= maxDiffLines {
			break
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(h.oldStart, h.oldN), hunkRange(h.newStart, h.newN))
		written++
		for _, l := range h.lines {
			if written >= maxDiffLines {
				break
			}
			l, _ = truncateRunes(strings.TrimSuffix(l, "\r"), 300)
			b.WriteString(l)
			b.WriteByte('\n')
			written++
		}
	}
	if written < total {
		fmt.Fprintf(&b, "… (%d more diff lines not shown)\n", total-written)
	}
	return b.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// EditTarget is the file an edit call with raw arguments would change,
// decoded and resolved exactly as Edit.Run does it: rel as the model named
// it and real with every link followed, both relative to root and
// slash-separated. ok is false when the call names no file Edit would
// open (the tool reports why).
func EditTarget(root string, raw json.RawMessage) (rel, real string, ok bool) {
	var a editArgs
	if _, good := decodeArgs("edit", raw, &a); !good || strings.TrimSpace(a.FilePath) == "" {
		return "", "", false
	}
	rp, err := resolvePath(&Env{Root: root}, a.FilePath)
	if err != nil {
		return "", "", false
	}
	return rp.Rel, relTo(rp.Root, rp.Abs), true
}
