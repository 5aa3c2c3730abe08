package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// stateFingerprint identifies the files the model may never change:
// .ultra/ outside its state directory (config, plans, ledger) and the
// run's gate decisions and baseline. The guard refuses commands that
// visibly write them; this catches the ones it cannot see (a script, a
// computed path) after the fact.
func stateFingerprint(workdir, runDir string) string {
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
	if entries, err := os.ReadDir(runDir); err == nil {
		for _, e := range entries {
			if n := e.Name(); n == "baseline.json" || (strings.HasPrefix(n, "gate-") && strings.HasSuffix(n, ".json")) {
				if info, err := e.Info(); err == nil {
					add(filepath.Join(runDir, n), info)
				}
			}
		}
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}
