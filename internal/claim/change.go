package claim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FileDiff is what a change did to one file, in the lines of the file
// before it.
type FileDiff struct {
	Path   string
	New    bool // the change adds the file
	Gone   bool // the change deletes it
	Binary bool // git shows no lines: the whole file counts as changed
	Mode   bool // the change sets the file's mode (executable or not)
	Hunks  []Hunk
}

// Hunk is a run of lines a change replaced: Count lines from Start, or
// with Count 0, lines it inserted after line Start (0: at the top).
type Hunk struct {
	Start, Count int
}

// ParseDiff reads the output of `git diff -U0 --no-renames --no-color`
// (no context lines, a rename as a deletion and an addition). It reads
// only the headers: what the lines say is not its business. A file's
// headers end at its first hunk: after it, every line is a hunk's header
// or its content (which git prefixes with '+', '-', ' ' or '\'), until
// the next file, so a changed line that reads like a header ("+++ b/x"
// for an added "++ b/x") never names a file.
func ParseDiff(text string) ([]FileDiff, error) {
	var out []FileDiff
	var cur *FileDiff
	inHunks := false
	for n, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git "):
			// The header's path is the file's when no ---/+++ line names
			// it (a change of mode alone).
			out = append(out, FileDiff{Path: headerPath(line[len("diff --git "):])})
			cur, inHunks = &out[len(out)-1], false
		case cur == nil:
			continue
		case inHunks && !strings.HasPrefix(line, "@@ "):
			continue // a changed line
		case strings.HasPrefix(line, "new file mode"):
			cur.New = true
		case strings.HasPrefix(line, "deleted file mode"):
			cur.Gone = true
		case strings.HasPrefix(line, "new mode "):
			cur.Mode = true
		case strings.HasPrefix(line, "Binary files "):
			cur.Binary = true
			if cur.Path == "" {
				cur.Path = binaryPath(line)
			}
		case strings.HasPrefix(line, "--- "):
			if p := diffPath(line[4:], "a/"); p != "" {
				cur.Path = p
			}
		case strings.HasPrefix(line, "+++ "):
			if p := diffPath(line[4:], "b/"); p != "" {
				cur.Path = p
			}
		case strings.HasPrefix(line, "@@ "):
			h, err := parseHunk(line)
			if err != nil {
				return nil, fmt.Errorf("diff line %d: %w", n+1, err)
			}
			cur.Hunks, inHunks = append(cur.Hunks, h), true
		}
	}
	for i := range out {
		if out[i].Path == "" {
			return nil, fmt.Errorf("a file of the diff names no path")
		}
	}
	return out, nil
}

// diffPath is the path of a ---/+++ line without its prefix, unquoted;
// "" for /dev/null.
func diffPath(s, prefix string) string {
	s = strings.TrimRight(s, "\t")
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	return strings.TrimPrefix(s, prefix)
}

// headerPath is the path a "diff --git a/x b/x" header names when both
// sides name one path (as without renames they do); "" when it cannot
// tell.
func headerPath(rest string) string {
	if strings.HasPrefix(rest, `"`) {
		a, b, ok := strings.Cut(rest, `" "`)
		if !ok {
			return ""
		}
		pa, pb := diffPath(a+`"`, "a/"), diffPath(`"`+b, "b/")
		if pa != pb {
			return ""
		}
		return pa
	}
	if len(rest)%2 == 0 {
		return ""
	}
	a, b := rest[:len(rest)/2], rest[len(rest)/2+1:]
	if !strings.HasPrefix(a, "a/") || !strings.HasPrefix(b, "b/") || a[2:] != b[2:] {
		return ""
	}
	return a[2:]
}

// binaryPath is the path of a "Binary files a/x and b/y differ" line
// (b's, a's when b is /dev/null).
func binaryPath(line string) string {
	body := strings.TrimSuffix(strings.TrimPrefix(line, "Binary files "), " differ")
	a, b, ok := strings.Cut(body, " and ")
	if !ok {
		return ""
	}
	if p := diffPath(b, "b/"); p != "" {
		return p
	}
	return diffPath(a, "a/")
}

// parseHunk reads "@@ -start[,count] +start[,count] @@ …".
func parseHunk(line string) (Hunk, error) {
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") {
		return Hunk{}, fmt.Errorf("a hunk header without its old lines: %q", line)
	}
	old := f[1][1:]
	start, count, hasCount := strings.Cut(old, ",")
	s, err := strconv.Atoi(start)
	if err != nil || s < 0 {
		return Hunk{}, fmt.Errorf("a hunk header with a bad start: %q", line)
	}
	c := 1
	if hasCount {
		if c, err = strconv.Atoi(count); err != nil || c < 0 {
			return Hunk{}, fmt.Errorf("a hunk header with a bad count: %q", line)
		}
	}
	return Hunk{Start: s, Count: c}, nil
}

// Outside lists what a change did beyond claims (one worker's): each
// file it touched that no claim names, and each run of lines of a file
// claimed only in part that reaches lines no claim holds. A file the
// change adds or deletes needs a claim on it, whatever its lines; a
// binary file needs the whole file claimed. Empty: the change stays
// inside its claims.
func Outside(diffs []FileDiff, claims []Claim) []string {
	var out []string
	for _, d := range diffs {
		var on []Claim
		whole := false
		for _, c := range claims {
			if c.Path == d.Path {
				on = append(on, c)
				whole = whole || c.Whole()
			}
		}
		switch {
		case len(on) == 0:
			out = append(out, d.Path+" (not claimed)")
		case whole || d.New || d.Gone:
		case d.Binary:
			out = append(out, d.Path+" (a binary file: claim it whole)")
		case d.Mode:
			out = append(out, d.Path+" (its mode changes: claim it whole)")
		default:
			spans := merged(on)
			for _, h := range d.Hunks {
				if !inside(spans, h) {
					out = append(out, fmt.Sprintf("%s:%s (outside the lines claimed: %s)", d.Path, hunkLines(h), spanText(spans)))
				}
			}
		}
	}
	return out
}

// span is a run of claimed lines.
type span struct{ start, end int }

// merged are the lines claims hold, as sorted runs without overlaps.
func merged(claims []Claim) []span {
	var ss []span
	for _, c := range claims {
		ss = append(ss, span{c.Start, c.End})
	}
	slices.SortFunc(ss, func(a, b span) int { return a.start - b.start })
	var out []span
	for _, s := range ss {
		if n := len(out); n > 0 && s.start <= out[n-1].end+1 {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// inside reports that h touches only claimed lines. Lines inserted
// after line n lie between n and n+1: inside a run that holds either.
func inside(spans []span, h Hunk) bool {
	for _, s := range spans {
		if h.Count == 0 {
			if h.Start >= s.start-1 && h.Start <= s.end {
				return true
			}
			continue
		}
		if h.Start >= s.start && h.Start+h.Count-1 <= s.end {
			return true
		}
	}
	return false
}

func hunkLines(h Hunk) string {
	switch h.Count {
	case 0:
		return fmt.Sprintf("lines inserted after line %d", h.Start)
	case 1:
		return strconv.Itoa(h.Start)
	}
	return fmt.Sprintf("%d-%d", h.Start, h.Start+h.Count-1)
}

func spanText(ss []span) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprintf("%d-%d", s.start, s.end)
	}
	return strings.Join(parts, ", ")
}
