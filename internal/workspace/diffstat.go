package workspace

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Stat sums the changes of a set of files: how many, and the lines each
// side added and removed (binary files count as files only).
type Stat struct {
	Files, Added, Deleted int
}

func (s Stat) String() string {
	return fmt.Sprintf("%d file%s, +%d −%d", s.Files, plural(s.Files), s.Added, s.Deleted)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ChangeStat sums what changed from tree-ish from to tree-ish to in dir's
// repository: the code, and ultra's own files under .ultra/ (the runs'
// records) apart from it.
func ChangeStat(ctx context.Context, dir, from, to string) (code, records Stat, err error) {
	out, err := gitOut(ctx, dir, nil, "diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", from, to, "--")
	if err != nil {
		return code, records, err
	}
	code, records = SplitNumstat(out)
	return code, records, nil
}

// SplitNumstat sums git diff --numstat -z --no-renames output: the files
// outside .ultra/ and those under it.
func SplitNumstat(out string) (code, records Stat) {
	for _, rec := range strings.Split(out, "\x00") {
		added, rest, ok := strings.Cut(strings.TrimLeft(rec, "\n"), "\t")
		if !ok {
			continue
		}
		deleted, path, ok := strings.Cut(rest, "\t")
		if !ok || path == "" {
			continue
		}
		s := &code
		if path == ".ultra" || strings.HasPrefix(path, ".ultra/") {
			s = &records
		}
		s.Files++
		a, _ := strconv.Atoi(added) // "-" for a binary file
		d, _ := strconv.Atoi(deleted)
		s.Added += a
		s.Deleted += d
	}
	return code, records
}
