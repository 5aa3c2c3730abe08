package verify

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestSupportPerfTmp(t *testing.T) {
	root := os.Getenv("PERF_ROOT")
	if root == "" {
		t.Skip()
	}
	in := SupportInput{Files: map[string][]byte{}, Commands: []string{"go test ./..."}}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		in.Paths = append(in.Paths, rel)
		if SupportReads(rel) {
			if info, _ := d.Info(); info != nil && info.Size() <= 1<<20 && info.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				in.Files[rel] = b
			}
		}
		return nil
	})
	sort.Strings(in.Paths)
	var out []SupportFile
	best := time.Hour
	for range 3 {
		start := time.Now()
		out = ClassifySupport(in)
		best = min(best, time.Since(start))
	}
	t.Logf("%d paths, %d listed, %v", len(in.Paths), len(out), best)
	best = time.Hour
	for range 3 {
		tr := newSupportTree(in)
		tr.pyPath = tr.pyIniPaths()
		sh := tr.shellSupport()
		tr.goSupport()
		tr.pySupport(sh.py)
		tr.jsSupport(sh.js, sh.configs)
		tr.rustSupport()
		tr.testDataSupport()
		start := time.Now()
		tr.testReadSupport()
		best = min(best, time.Since(start))
	}
	t.Logf("testReadSupport %v", best)
	{
		tr := newSupportTree(in)
		var data []string
		for _, p := range tr.sorted {
			if tr.isTestData(p) {
				data = append(data, p)
			}
		}
		may := tr.nameFilter(data, false)
		nt, np := 0, 0
		for _, p := range tr.sorted {
			if tr.literalSource(p) && IsTestPath(p) {
				nt++
				if may.in(tr.content(p)) {
					np++
				}
			}
		}
		t.Logf("data %d, tests %d, pass %d, filter %d", len(data), nt, np, len(may))
	}
	counts := map[string]int{}
	for _, f := range out {
		counts[f.Role.String()]++
		if len(f.Why) > 8 && (f.Why[:8] == "read by " || f.Why[:9] == "embedded ") {
			counts["data"]++
			if counts["data"] < 40 {
				t.Logf("%s: %s", f.Path, f.Why)
			}
		}
		if f.Role == RoleUndecided && strings.Contains(f.Why, "assertion helper") {
			t.Logf("H %s: %s", f.Path, f.Why)
		}
		if f.Role == RoleUndecided && len(f.Why) > 9 && f.Why[:9] != "imported " {
			counts["u-other"]++
		}
	}
	t.Log(counts)
}
