package verify

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// detector recognises one kind of project at the root of dir. It returns
// nothing when the project is not of its kind, with a note when something
// was found but rejected (e.g. the npm placeholder test script).
type detector struct {
	lookingFor string // for "no test command found" reasons
	detect     func(dir string) (found []Detected, note string, err error)
	// after names the detector (its lookingFor) that decided this one's
	// question already: this one runs only when that one found nothing.
	after string
}

// detectors is the detection table, in order of preference (see the
// package documentation). To support a new kind of project, add a row.
var detectors = []detector{
	{lookingFor: "go.work", detect: detectGoWork},
	{lookingFor: "go.mod", detect: detectGoMod},
	{lookingFor: "package.json with a scripts.test", detect: detectPackageJSON},
	{lookingFor: "pytest configuration", detect: detectPytest},
	{lookingFor: "Cargo.toml", detect: detectCargo},
	{lookingFor: "pom.xml", detect: detectMaven},
	{lookingFor: "build.gradle", detect: detectGradle},
	{lookingFor: "CMakeLists.txt with tests and a build/ directory", detect: detectCMake},
	{lookingFor: "Makefile with a test or check target", detect: detectMakefile},
	{lookingFor: "a Python project (unittest)", detect: detectUnittest, after: "pytest configuration"},
	{lookingFor: "go.mod in subdirectories", detect: detectNestedGo},
}

// Detect finds the test commands of the project whose root is dir, in
// order of preference (the table is in the package documentation); the
// slice is empty when there is none. Verify runs the first group: the
// leading commands of the same Kind (one per module for several Go
// modules, else one). The error is for unexpected I/O failures only.
func Detect(dir string) ([]Detected, error) {
	found, _, err := detect(dir)
	return found, err
}

// detect is Detect plus the notes explaining near misses.
func detect(dir string) ([]Detected, []string, error) {
	found := []Detected{}
	var notes []string
	matched := map[string]bool{}
	for i, d := range detectors {
		if d.after != "" && matched[d.after] {
			continue
		}
		got, note, err := d.detect(dir)
		if err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		matched[d.lookingFor] = len(got) > 0
		for _, g := range got {
			g.Reason = fmt.Sprintf("%s (detection rule %d of %d: %s)", g.Reason, i+1, len(detectors), d.lookingFor)
			found = append(found, g)
		}
	}
	return found, notes, nil
}

// firstGroup is what Verify runs of the detected commands.
func firstGroup(found []Detected) []Detected {
	if len(found) == 0 {
		return nil
	}
	n := 1
	for n < len(found) && found[n].Kind == found[0].Kind && found[0].Kind == "go" {
		n++
	}
	return found[:n]
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
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrInvalid) {
			return false, nil
		}
		var pe *fs.PathError
		if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory") {
			return false, nil
		}
		return false, err
	}
	return st.Mode().IsRegular(), nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// maxConfig bounds what is read of a configuration file.
const maxConfig = 1 << 20

// readSmall reads at most maxConfig bytes of the regular file at path, in
// the tree of its own directory (readIn); ok is false when there is none.
// The error is kept for callers' shape: reading never fails otherwise.
func readSmall(path string) (string, bool, error) {
	text, ok := readIn(filepath.Dir(path), filepath.Base(path), maxConfig)
	return text, ok, nil
}

// readIn reads at most max bytes of the regular file rel in the tree at
// dir. ok is false when it is missing or unreadable, not a regular file (a
// FIFO or a device, opened without blocking and not read), or resolves
// outside dir: a symlink, or a symlinked directory on the way, that leads
// out of the tree is not followed (the tree is the model's, and ultra
// reads it outside the sandbox).
func readIn(dir, rel string, max int64) (string, bool) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", false
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	buf, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return "", false
	}
	return string(buf), true
}

// installed reports whether a program is on PATH (a variable, for tests).
var installed = func(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// shq quotes s for the shell when needed.
func shq(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,^", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ---- Go ----

const goCommand = "go test -json ./..."

var goModuleRE = regexp.MustCompile(`(?m)^\s*module\s+"?([^\s"]+)"?`)

// goModulePath is the module path of the go.mod in directory rel of the
// tree at root.
func goModulePath(root, rel string) string {
	text, _ := readIn(root, path.Join(rel, "go.mod"), maxConfig)
	if m := goModuleRE.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

func goDetected(root, rel, reason string) Detected {
	return Detected{
		Kind: "go", Runner: "go", Command: goCommand, Dir: rel, Reason: reason, Format: "go-json",
		sel: selector{how: "go", pre: goCommand, mod: goModulePath(root, rel)},
	}
}

// detectGoWork: the modules a go.work uses.
func detectGoWork(dir string) ([]Detected, string, error) {
	text, ok, err := readSmall(filepath.Join(dir, "go.work"))
	if err != nil || !ok {
		return nil, "", err
	}
	var uses []string
	for _, u := range goWorkUses(text) {
		rel := filepath.ToSlash(filepath.Clean(u))
		if strings.HasPrefix(rel, "../") || filepath.IsAbs(u) {
			continue // outside the repository
		}
		if rel == "." {
			rel = ""
		}
		if ok, _ := isFile(filepath.Join(dir, rel, "go.mod")); ok && !slices.Contains(uses, rel) {
			uses = append(uses, rel)
		}
	}
	if len(uses) == 0 {
		return nil, "go.work uses no module inside the repository", nil
	}
	var out []Detected
	for _, rel := range uses {
		where := "./" + rel
		if rel == "" {
			where = "."
		}
		out = append(out, goDetected(dir, rel, fmt.Sprintf("go.work uses %s (one of %d modules)", where, len(uses))))
	}
	return out, "", nil
}

// GoModuleRoots are the directories (relative to dir, slash-separated,
// "" for dir itself) of the Go modules a go test of the tree at dir
// builds: the modules inside it that its go.work uses, else dir's own
// module and the modules nested below it (three levels down at most);
// none when it holds no go.mod.
func GoModuleRoots(dir string) []string {
	if text, ok, err := readSmall(filepath.Join(dir, "go.work")); err == nil && ok {
		var roots []string
		for _, u := range goWorkUses(text) {
			rel := filepath.ToSlash(filepath.Clean(u))
			if strings.HasPrefix(rel, "../") || rel == ".." || filepath.IsAbs(u) {
				continue
			}
			if rel == "." {
				rel = ""
			}
			if ok, _ := isFile(filepath.Join(dir, rel, "go.mod")); ok && !slices.Contains(roots, rel) {
				roots = append(roots, rel)
			}
		}
		return roots
	}
	var roots []string
	if ok, _ := isFile(filepath.Join(dir, "go.mod")); ok {
		roots = append(roots, "")
	}
	// Modules nested below (a replace target, a tool's own module), which
	// a test command may test from their directory.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			name := d.Name()
			if strings.Count(filepath.ToSlash(rel), "/") >= 3 || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "vendor" || slices.Contains(DependencyDirs, name) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Name() == "go.mod" && filepath.Dir(rel) != "." {
			roots = append(roots, filepath.ToSlash(filepath.Dir(rel)))
		}
		return nil
	})
	return roots
}

// goWorkUses reads the use directives of a go.work file.
func goWorkUses(text string) []string {
	var uses []string
	inBlock := false
	for line := range strings.SplitSeq(text, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock:
			uses = append(uses, strings.Trim(f[0], `"`))
		case f[0] == "use" && len(f) >= 2 && f[1] == "(":
			inBlock = true
		case f[0] == "use" && len(f) >= 2:
			uses = append(uses, strings.Trim(f[1], `"`))
		}
	}
	return uses
}

// skipDir: directories no tool looks into for modules or tests.
func skipDir(name string) bool {
	return name == "vendor" || name == "testdata" || name == "node_modules" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// nestedModules lists the directories below dir (not dir itself) with a
// go.mod, relative and slash-separated, in walk order. The walk is bounded.
func nestedModules(dir string) ([]string, error) {
	var mods []string
	seen := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return fs.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		if seen++; seen > 20000 {
			return fs.SkipAll
		}
		if path == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if skipDir(d.Name()) || strings.Count(rel, string(filepath.Separator)) >= 8 {
			return fs.SkipDir
		}
		if ok, _ := isFile(filepath.Join(path, "go.mod")); ok {
			mods = append(mods, filepath.ToSlash(rel))
		}
		return nil
	})
	return mods, err
}

func detectGoMod(dir string) ([]Detected, string, error) {
	ok, err := isFile(filepath.Join(dir, "go.mod"))
	if err != nil || !ok {
		return nil, "", err
	}
	if work, err := isFile(filepath.Join(dir, "go.work")); err != nil || work {
		return nil, "", err // the go.work rule decides
	}
	nested, err := nestedModules(dir)
	if err != nil {
		return nil, "", err
	}
	if len(nested) == 0 {
		return []Detected{goDetected(dir, "", "go.mod at the root")}, "", nil
	}
	n := len(nested) + 1
	out := []Detected{goDetected(dir, "", fmt.Sprintf("go.mod at the root (one of %d modules)", n))}
	for _, rel := range nested {
		out = append(out, goDetected(dir, rel, fmt.Sprintf("go.mod in ./%s (one of %d modules)", rel, n)))
	}
	return out, "", nil
}

func detectNestedGo(dir string) ([]Detected, string, error) {
	if ok, err := isFile(filepath.Join(dir, "go.mod")); err != nil || ok {
		return nil, "", err
	}
	if ok, err := isFile(filepath.Join(dir, "go.work")); err != nil || ok {
		return nil, "", err
	}
	nested, err := nestedModules(dir)
	if err != nil || len(nested) == 0 {
		return nil, "", err
	}
	var out []Detected
	for _, rel := range nested {
		out = append(out, goDetected(dir, rel, fmt.Sprintf("go.mod in ./%s, none at the root (one of %d modules)", rel, len(nested))))
	}
	return out, "", nil
}

// ---- Rust ----

func detectCargo(dir string) ([]Detected, string, error) {
	ok, err := isFile(filepath.Join(dir, "Cargo.toml"))
	if err != nil || !ok {
		return nil, "", err
	}
	if installed("cargo-nextest") {
		cmd := "cargo nextest run --no-fail-fast"
		return []Detected{{Kind: "cargo", Runner: "nextest", Command: cmd, Format: "cargo",
			Reason: "Cargo.toml found, cargo-nextest installed",
			sel:    selector{how: "cargo", pre: cmd}}}, "", nil
	}
	cmd := "cargo test --no-fail-fast"
	return []Detected{{Kind: "cargo", Runner: "cargo", Command: cmd, Format: "cargo",
		Reason: "Cargo.toml found",
		sel:    selector{how: "cargo", pre: cmd}}}, "", nil
}

// ---- Java ----

func detectMaven(dir string) ([]Detected, string, error) {
	ok, err := isFile(filepath.Join(dir, "pom.xml"))
	if err != nil || !ok {
		return nil, "", err
	}
	mvn, reason := "mvn", "pom.xml found"
	if st, err := os.Stat(filepath.Join(dir, "mvnw")); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		mvn, reason = "./mvnw", "pom.xml found, with the Maven wrapper"
	}
	cmd := mvn + " -q -B test"
	return []Detected{{Kind: "maven", Runner: "maven", Command: cmd, Format: "junit", Reason: reason,
		Report: "target/surefire-reports/TEST-*.xml */target/surefire-reports/TEST-*.xml",
		sel:    selector{how: "maven", pre: cmd}}}, "", nil
}

var gradleFiles = []string{"build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"}

func detectGradle(dir string) ([]Detected, string, error) {
	file := ""
	for _, name := range gradleFiles {
		ok, err := isFile(filepath.Join(dir, name))
		if err != nil {
			return nil, "", err
		}
		if ok {
			file = name
			break
		}
	}
	if file == "" {
		return nil, "", nil
	}
	gradle, reason := "gradle", file+" found, no wrapper"
	if ok, _ := isFile(filepath.Join(dir, "gradlew")); ok {
		gradle, reason = "./gradlew", file+" found, with the Gradle wrapper"
	}
	cmd := gradle + " test"
	return []Detected{{Kind: "gradle", Runner: "gradle", Command: cmd, Format: "junit", Reason: reason,
		Report: "build/test-results/test/*.xml */build/test-results/test/*.xml",
		sel:    selector{how: "gradle", pre: cmd}}}, "", nil
}

// ---- CMake ----

var cmakeTestsRE = regexp.MustCompile(`(?im)^\s*(enable_testing|add_test|gtest_discover_tests|catch_discover_tests|include\s*\(\s*CTest)\s*\(?`)

func detectCMake(dir string) ([]Detected, string, error) {
	text, ok, err := readSmall(filepath.Join(dir, "CMakeLists.txt"))
	if err != nil || !ok {
		return nil, "", err
	}
	if !cmakeTestsRE.MatchString(text) {
		return nil, "CMakeLists.txt enables no tests", nil
	}
	if ok, _ := isFile(filepath.Join(dir, "build", "CTestTestfile.cmake")); !ok {
		return nil, "CMakeLists.txt has tests but there is no configured build/ directory (build/CTestTestfile.cmake)", nil
	}
	pre := "cmake --build build && ctest --test-dir build --output-on-failure --output-junit \"$ULTRA_REPORT\""
	return []Detected{{Kind: "cmake", Runner: "ctest", Command: pre, Format: "junit", Report: "$ULTRA_REPORT",
		Reason: "CMakeLists.txt with tests and a configured build/ directory",
		sel:    selector{how: "ctest", pre: pre}}}, "", nil
}

// ---- Make ----

// makefiles are the names GNU make looks for, in its order.
var makefiles = []string{"GNUmakefile", "makefile", "Makefile"}

func detectMakefile(dir string) ([]Detected, string, error) {
	for _, name := range makefiles {
		text, ok, err := readSmall(filepath.Join(dir, name))
		if err != nil {
			return nil, "", err
		}
		if !ok {
			continue
		}
		for _, target := range []string{"test", "check"} {
			if hasMakeTarget(text, target) {
				return []Detected{{Kind: "make", Runner: "make", Command: "make " + target, Format: "auto",
					Reason: name + " target " + target}}, "", nil
			}
		}
		// make reads only the first makefile it finds.
		return nil, name + " has no test or check target", nil
	}
	return nil, "", nil
}

// hasMakeTarget reports whether the makefile text defines target in a rule
// line ("test:", "test::", "check test: deps"). Recipe lines, comments and
// variable assignments ("test := x") are not rules. Included makefiles are
// not followed.
func hasMakeTarget(text, target string) bool {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
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
