package verify

import (
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// Finding is one construct in Go sources that can fake test results.
//
// go test -json turns what the test binary prints into test events (see
// report.GoJSON): a binary that prints "--- PASS: TestX (0.00s)" lines
// itself, framed with the byte 0x16 or before the testing package's first
// framed line, reports tests that never ran. So the code that could do it
// is looked for before the results are believed: a TestMain that does not
// run the tests, output redirected or written outside the tests, exits in
// test files, and runner-shaped text.
type Finding struct {
	File   string // slash-separated, relative to the scanned directory
	Line   int
	Kind   string // one of the Fake* constants
	Detail string // what was found and where (function), without the line
}

// Kinds of findings.
const (
	// FakeNoRun: a TestMain that never calls m.Run.
	FakeNoRun = "testmain-no-run"
	// FakeExitBeforeRun: a TestMain that can exit (with status 0 or an
	// unknown one) before it calls m.Run.
	FakeExitBeforeRun = "testmain-exit-before-run"
	// FakeTestMainOutput: a TestMain (or a function it calls) that writes
	// to stdout or stderr, where the runner's own lines go.
	FakeTestMainOutput = "testmain-output"
	// FakeRedirect: os.Stdout or os.Stderr reassigned in TestMain or
	// init; file descriptors duplicated or closed, os.Stdout closed, in
	// test files or init.
	FakeRedirect = "redirect-output"
	// FakeExit: os.Exit, syscall.Exit or runtime.Goexit in a test file
	// outside TestMain.
	FakeExit = "exit-in-test"
	// FakeInitOutput: init (or a package-level variable's initializer, or
	// a function they call) writes to stdout or stderr, in any file.
	FakeInitOutput = "init-output"
	// FakeInitExit: init (or a package-level variable's initializer, or a
	// function they call) exits, in any file.
	FakeInitExit = "init-exit"
	// FakeRunnerText: a string literal with go test's runner text
	// ("--- PASS", "=== RUN", "PASS\nok") or its framing byte 0x16.
	FakeRunnerText = "runner-text"
	// FakeUnscanned: a Go file that could not be read or is too large.
	FakeUnscanned = "unscanned"
	// FakeNative: C, C++, Objective-C or assembly sources or a .syso
	// object beside Go code; a C constructor runs before main.
	FakeNative = "native-code"
)

// Key identifies the finding without its line, so that the findings of two
// trees can be compared while code moves: "dir/a_test.go: kind: detail".
// Several identical constructs in one function have the same key: compare
// keys as a multiset.
func (f Finding) Key() string { return f.File + ": " + f.Kind + ": " + f.Detail }

// String is "dir/a_test.go:12: kind: detail".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Kind, f.Detail)
}

// FindingKeys returns the keys of fs, in order.
func FindingKeys(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Key()
	}
	return out
}

const (
	fakesMaxFile  = 8 << 20 // bytes; larger Go files are reported, not parsed
	fakesMaxFiles = 100000  // Go files scanned; the rest are reported
	fakesMaxText  = 48      // bytes of a literal quoted in a finding
)

// FakeResults parses the Go files under dir (vendor/, testdata/ and
// "_" or "." directories too, since the go command builds them when they
// are imported by path; not node_modules/ or .git, nor files whose names
// start with "." or "_"), notes native code beside them, reads the Python
// files (pythonFakes; dependency directories but vendor/ are not entered),
// and returns the constructs that can fake test results,
// sorted by file and line. It reads files only: no type checking, no go
// command, no build constraints (every file counts). What it cannot see
// (strings built at run time, code in other packages or in dependencies)
// it does not report: it narrows the attack, it does not close it.
func FakeResults(dir string) []Finding {
	var out []Finding
	pkgs := map[string]*fakePkg{} // by directory and package name
	var order []string
	files := 0
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r // WalkDir does not enter a symlink given as its root
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if err != nil {
			if path != dir && strings.HasSuffix(path, ".go") {
				out = append(out, Finding{File: rel, Kind: FakeUnscanned, Detail: "cannot be read"})
			}
			if d != nil && d.IsDir() && path != dir {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			// vendor/, testdata/, _x and .x are built when a file imports
			// them by path: they are scanned like the rest. The other
			// dependency directories are the run's start-time ones (the
			// gate refuses files added there).
			if path != dir && (name == ".git" || name != "vendor" && slices.Contains(DependencyDirs, name)) {
				return fs.SkipDir
			}
			return nil
		}
		if nativeCode(name) {
			out = append(out, Finding{File: rel, Kind: FakeNative,
				Detail: "native code built into Go test binaries (cgo, assembly or a prebuilt object) can print or exit before any test runs"})
			return nil
		}
		if pythonCompiled(name) {
			out = append(out, Finding{File: rel, Kind: FakeNative,
				Detail: "compiled Python or a native extension: Python can run it instead of, or beside, the source the scan reads"})
			return nil
		}
		python := strings.HasSuffix(name, ".py")
		if !python && (!strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return nil
		}
		if files++; files > fakesMaxFiles {
			if files == fakesMaxFiles+1 {
				out = append(out, Finding{File: rel, Kind: FakeUnscanned,
					Detail: fmt.Sprintf("more than %d Go and Python files: this one and the rest were not scanned", fakesMaxFiles)})
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 && scannedElsewhere(dir, path) {
			return nil // a link to another source file of the tree: read at its own path
		}
		src, why := readSource(path)
		if why != "" {
			out = append(out, Finding{File: rel, Kind: FakeUnscanned, Detail: why})
			return nil
		}
		if python {
			out = append(out, pythonFakes(rel, string(src))...)
			if !IsTestPath(rel) {
				out = append(out, pythonDetects(rel, string(src))...)
			}
			return nil
		}
		fset := token.NewFileSet()
		// A file that does not parse does not build either; what parsed
		// is still looked at.
		f, _ := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if f == nil || f.Name == nil {
			return nil
		}
		for _, im := range f.Imports {
			if im.Path != nil && im.Path.Value == `"C"` {
				out = append(out, Finding{File: rel, Line: fset.Position(im.Pos()).Line, Kind: FakeNative,
					Detail: "cgo: C code in the preamble is built into the test binary and can run before any test"})
			}
		}
		key := filepath.ToSlash(filepath.Dir(rel)) + "\x00" + f.Name.Name
		p := pkgs[key]
		if p == nil {
			p = &fakePkg{funcs: map[string]*fakeFunc{}}
			pkgs[key] = p
			order = append(order, key)
		}
		ff := &fakeFile{rel: rel, test: strings.HasSuffix(name, "_test.go"), f: f, fset: fset, imports: fileImports(f)}
		p.add(ff)
		if !IsTestPath(rel) {
			out = append(out, goDetects(ff)...)
		}
		return nil
	})
	for _, k := range order {
		out = append(out, pkgs[k].findings()...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Detail < b.Detail
	})
	return out
}

// nativeCode reports whether a file name is one the go command compiles
// or links into a package besides Go: cgo's C, C++, Objective-C and
// Fortran, assembly, and prebuilt .syso objects.
func nativeCode(name string) bool {
	switch filepath.Ext(name) {
	case ".c", ".cc", ".cpp", ".cxx", ".m", ".f", ".F", ".for", ".f90", ".s", ".S", ".sx", ".syso":
		return true
	}
	return false
}

// DependencyDirs are the dependency directories a project's tests need
// and git ignores. The gate links the run's start-time ones into the tree
// it tests, read-only, and fails a tree that adds files under them (but
// vendor/, which Go projects commit): so the scan does not read their
// Python.
var DependencyDirs = []string{"node_modules", ".venv", "venv", "vendor", "bower_components"}

// InDependencyDir says whether a repository path (slash-separated) lies
// in one of the DependencyDirs other than vendor/: where the gate refuses
// added files, and the scan does not read Python.
func InDependencyDir(rel string) bool {
	for _, d := range strings.Split(rel, "/") {
		if d != "vendor" && slices.Contains(DependencyDirs, d) {
			return true
		}
	}
	return false
}

// scannedElsewhere says whether the link at path leads to a regular file
// of the tree at dir with the same extension, outside the dependency
// directories: a source file the scan reads at its own path.
func scannedElsewhere(dir, path string) bool {
	to, err := filepath.EvalSymlinks(path)
	if err != nil || filepath.Ext(to) != filepath.Ext(path) {
		return false
	}
	rel, err := filepath.Rel(dir, to)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || InDependencyDir(filepath.ToSlash(rel)) {
		return false
	}
	fi, err := os.Stat(to)
	return err == nil && fi.Mode().IsRegular()
}

// pythonCompiled reports whether a file name is one Python imports
// without its source: bytecode (a sourceless .pyc is imported as the
// module; an unchecked-hash one in __pycache__ is used whatever the
// source says) or a native extension module.
func pythonCompiled(name string) bool {
	switch filepath.Ext(name) {
	case ".pyc", ".pyo", ".pyd":
		return true
	case ".so":
		return true
	}
	return false
}

// readSource reads a file to scan, within the size bound.
func readSource(path string) ([]byte, string) {
	// A symlink is not followed: ultra reads the tree outside the sandbox,
	// and a link could point at a file the tests may not read. It is
	// reported, so a new one fails the gate.
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil, "cannot be read"
	case st.Mode()&os.ModeSymlink != 0:
		return nil, "a symbolic link to a file the scan does not read (outside the tree, or of another kind): the code it leads to is not checked"
	case !st.Mode().IsRegular():
		return nil, "not a regular file"
	case st.Size() > fakesMaxFile:
		return nil, fmt.Sprintf("larger than %d bytes, not scanned", fakesMaxFile)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, "cannot be read"
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, fakesMaxFile+1))
	if err != nil || len(src) > fakesMaxFile {
		return nil, "cannot be read"
	}
	return src, ""
}
