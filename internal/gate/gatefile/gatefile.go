// Package gatefile reads and writes a run's gate decision files,
// .ultra/state/runs/RUN_ID/gate-N.json, and its baseline.json. Files are
// written once, atomically, read-only; nothing rewrites a decision.
package gatefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ultra-dev/ultra/internal/gate"
)

// Path is the file of decision n in runDir.
func Path(runDir string, n int) string {
	return filepath.Join(runDir, fmt.Sprintf("gate-%d.json", n))
}

// BaselinePath is the run's baseline file.
func BaselinePath(runDir string) string { return filepath.Join(runDir, "baseline.json") }

// Write records d as gate-N.json; it refuses to replace an existing file.
func Write(runDir string, d gate.Decision) (string, error) {
	p := Path(runDir, d.N)
	return p, writeOnce(p, d)
}

// Read returns the run's decisions in order. A file that cannot be read is
// an error naming it: a corrupt decision is never skipped silently.
func Read(runDir string) ([]gate.Decision, error) {
	entries, err := os.ReadDir(runDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []gate.Decision
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "gate-") || !strings.HasSuffix(name, ".json") {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "gate-"), ".json")); err != nil {
			continue
		}
		var d gate.Decision
		if err := readJSON(filepath.Join(runDir, name), &d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out, nil
}

// Next is the number of the run's next decision.
func Next(ds []gate.Decision) int {
	if len(ds) == 0 {
		return 1
	}
	return ds[len(ds)-1].N + 1
}

// WriteBaseline records the run's baseline.
func WriteBaseline(runDir string, b gate.Baseline) error {
	return writeOnce(BaselinePath(runDir), b)
}

// ReadBaseline returns the run's baseline, or nil when it has none.
func ReadBaseline(runDir string) (*gate.Baseline, error) {
	var b gate.Baseline
	err := readJSON(BaselinePath(runDir), &b)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &b, nil
}

func writeOnce(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s already exists: gate files are never rewritten", path)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o444); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Link, not rename: it fails when another writer got there first.
	if err := os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: corrupt gate file: %w", path, err)
	}
	return nil
}
