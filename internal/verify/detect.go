package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// detector recognises one kind of project at the root of dir. It returns
// nil when the project is not of its kind, with a note when something was
// found but rejected (e.g. the npm placeholder test script).
type detector struct {
	lookingFor string // for "no test command found" reasons
	detect     func(dir string) (d *Detected, note string, err error)
}

// detectors is the detection table, in order of preference. To support a
// new kind of project, add a row.
var detectors = []detector{
	{"go.mod", detectGo},
	{"package.json with a scripts.test", detectPackageJSON},
	{"Makefile with a test target", detectMakefile},
}

// Detect finds the test commands of the project whose root is dir, in
// order of preference; the slice is empty when there is none. Verify runs
// only the first. The table:
//
//	go.mod                          go test -json ./...
//	package.json scripts.test       pnpm test (pnpm-lock.yaml), yarn test (yarn.lock),
//	                                bun run test (bun.lock, bun.lockb), else npm test;
//	                                without a lockfile, the packageManager field decides;
//	                                the npm init placeholder script is not a test command
//	GNUmakefile/makefile/Makefile   make test (when a test target is defined in it)
//
// The error is for unexpected I/O failures only.
func Detect(dir string) ([]Detected, error) {
	found, _, err := detect(dir)
	return found, err
}

// detect is Detect plus the notes explaining near misses.
func detect(dir string) ([]Detected, []string, error) {
	found := []Detected{}
	var notes []string
	for _, d := range detectors {
		got, note, err := d.detect(dir)
		if err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		if got != nil {
			found = append(found, *got)
		}
	}
	return found, notes, nil
}

// noCommandReason explains that nothing was detected.
func noCommandReason(dir string, notes []string) string {
	looked := []string{"verify.command in .ultra/config"}
	for _, d := range detectors {
		looked = append(looked, d.lookingFor)
	}
	reason := fmt.Sprintf("no test command found in %s: looked for %s", dir, strings.Join(looked, ", "))
	if len(notes) > 0 {
		reason += " (" + strings.Join(notes, "; ") + ")"
	}
	return reason
}

func isFile(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return false, nil
		}
		return false, err
	}
	return st.Mode().IsRegular(), nil
}

func detectGo(dir string) (*Detected, string, error) {
	ok, err := isFile(filepath.Join(dir, "go.mod"))
	if err != nil || !ok {
		return nil, "", err
	}
	return &Detected{Command: "go test -json ./...", Source: "go.mod found"}, "", nil
}

// npmPlaceholder is in the test script npm init writes:
// echo "Error: no test specified" && exit 1
const npmPlaceholder = "no test specified"

// lockfiles maps lockfiles to the package manager that runs the tests,
// in order of precedence. npm's own lockfiles are at the end.
var lockfiles = []struct{ file, manager, command string }{
	{"pnpm-lock.yaml", "pnpm", "pnpm test"},
	{"yarn.lock", "yarn", "yarn test"},
	{"bun.lock", "bun", "bun run test"},
	{"bun.lockb", "bun", "bun run test"},
	{"package-lock.json", "npm", "npm test"},
	{"npm-shrinkwrap.json", "npm", "npm test"},
}

func detectPackageJSON(dir string) (*Detected, string, error) {
	path := filepath.Join(dir, "package.json")
	ok, err := isFile(path)
	if err != nil || !ok {
		return nil, "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	var pkg struct {
		Scripts        map[string]any `json:"scripts"`
		PackageManager string         `json:"packageManager"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return nil, "package.json could not be parsed: " + err.Error(), nil
	}
	script, _ := pkg.Scripts["test"].(string)
	switch {
	case strings.TrimSpace(script) == "":
		return nil, "package.json has no scripts.test", nil
	case strings.Contains(script, npmPlaceholder):
		return nil, "package.json scripts.test is the npm init placeholder", nil
	}
	for _, l := range lockfiles {
		ok, err := isFile(filepath.Join(dir, l.file))
		if err != nil {
			return nil, "", err
		}
		if ok {
			return &Detected{
				Command: l.command,
				Source:  fmt.Sprintf("package.json scripts.test (%s, %s)", l.manager, l.file),
			}, "", nil
		}
	}
	// No lockfile: the packageManager field ("pnpm@9.1.0") may say.
	if name, _, _ := strings.Cut(pkg.PackageManager, "@"); name != "" {
		for _, l := range lockfiles {
			if l.manager == name {
				return &Detected{
					Command: l.command,
					Source:  fmt.Sprintf("package.json scripts.test (%s, packageManager field)", name),
				}, "", nil
			}
		}
	}
	return &Detected{Command: "npm test", Source: "package.json scripts.test (npm, no lockfile)"}, "", nil
}

// makefiles are the names GNU make looks for, in its order.
var makefiles = []string{"GNUmakefile", "makefile", "Makefile"}

func detectMakefile(dir string) (*Detected, string, error) {
	for _, name := range makefiles {
		path := filepath.Join(dir, name)
		ok, err := isFile(path)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, "", err
		}
		if hasMakeTarget(string(data), "test") {
			return &Detected{Command: "make test", Source: name + " target test"}, "", nil
		}
		// make reads only the first makefile it finds.
		return nil, name + " has no test target", nil
	}
	return nil, "", nil
}

// hasMakeTarget reports whether the makefile text defines target in a rule
// line ("test:", "test::", "check test: deps"). Recipe lines, comments and
// variable assignments ("test := x") are not rules. Included makefiles are
// not followed.
func hasMakeTarget(text, target string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" || line[0] == '\t' || line[0] == '#' {
			continue
		}
		before, after, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(before, "=$") {
			continue
		}
		if strings.HasPrefix(after, "=") || strings.HasPrefix(after, ":=") {
			continue // := or ::= assignment
		}
		for _, t := range strings.Fields(before) {
			if t == target {
				return true
			}
		}
	}
	return false
}
