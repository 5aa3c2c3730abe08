package verify

import (
	"fmt"
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// FakeDetectsTest: code that is not a test asks whether it runs under a
// test runner or under ultra (testing.Testing, a test binary's flags or
// name, a runner's variables, its own call stack, the paths and
// variables of ultra's sandbox). Code that can tell can behave one way
// when the tests or the criteria watch it and another way in a person's
// checkout. Such code in the project already (as at the run's start) is
// the project's; new code is judged by the gate like every fake-result
// construct.
const FakeDetectsTest = "detects-test"

// testTells are texts whose presence in non-test code lets it tell a
// test run (or ultra's sandbox) from a person's: a Go test binary's
// flags and name, the runners' variables, the testing package's frames,
// ultra's own names.
var testTells = []string{
	"test.v", "test.run", "test.timeout", "test.paniconexit0", "test.count", "test.testlogfile", "test.gocoverdir",
	"tRunner", "testing.T", "testing.(*T)", "testing.M", "_test.go", "go-build",
	"PYTEST", "pytest", "unittest", "JEST_", "VITEST", "MOCHA", "NODE_ENV",
	"ULTRA", "ultra-test-exec", "GOTMPDIR", "sandbox/gate", "gate-home", "gate-tmp", "check-home", "check-tmp", "sandbox/check",
	// The machine as the sandbox shows it: its processes, mounts,
	// namespaces.
	"/proc", "uid_map", "mountinfo",
}

// tells reports whether literal text v is one of testTells, or a test
// binary's name (it ends in ".test").
func tells(v string) bool {
	if strings.HasSuffix(v, ".test") && !strings.Contains(v, "/") && !strings.Contains(v, "@") {
		return true
	}
	for _, tell := range testTells {
		if strings.Contains(v, tell) {
			return true
		}
	}
	return false
}

// envTell matches the names of environment variables that tell a test
// run or a CI job from a person's session.
var envTell = regexp.MustCompile(`(?i)test|^ci$|^_?ultra|gotmpdir|goflags|gocache|^github_actions$|^go_?test|jest|vitest|mocha|pytest`)

// goDetects returns the constructs in a Go file that is not a test by
// which its code can tell that it runs under test (FakeDetectsTest).
func goDetects(ff *fakeFile) []Finding {
	var out []Finding
	add := func(pos token.Pos, fn, what string) {
		out = append(out, Finding{File: ff.rel, Line: ff.fset.Position(pos).Line, Kind: FakeDetectsTest,
			Detail: fmt.Sprintf("%s in %s: the code can tell a test run from a person's and behave otherwise there", what, fn)})
	}
	program := ff.f.Name != nil && ff.f.Name.Name == "main"
	for _, d := range ff.f.Decls {
		fn := "a package-level declaration"
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name != nil {
			fn = fd.Name.Name
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if s := ff.isSel(x, "testing", "Testing", "Short", "Verbose", "CoverMode", "Coverage"); s != "" {
					add(x.Pos(), fn, s)
				}
				if s := ff.isSel(x, "os", "Args"); s != "" && !program {
					add(x.Pos(), fn, s+" in a library (a test binary's arguments are its flags)")
				}
				if s := ff.isSel(x, "flag", "CommandLine"); s != "" && !program {
					add(x.Pos(), fn, s+" in a library (a test binary's flags are registered)")
				}
			case *ast.CallExpr:
				if s := ff.isSel(x.Fun, "runtime", "Caller", "Callers", "Stack", "FuncForPC"); s != "" {
					add(x.Pos(), fn, s+" (its own call stack names the test that calls it)")
				}
				if s := ff.isSel(x.Fun, "runtime/debug", "Stack", "PrintStack"); s != "" {
					add(x.Pos(), fn, s+" (its own call stack names the test that calls it)")
				}
				if s := ff.isSel(x.Fun, "net", "Interfaces", "InterfaceAddrs"); s != "" {
					add(x.Pos(), fn, s+" (the sandbox has no network but its own loopback)")
				}
				if s := ff.isSel(x.Fun, "flag", "Lookup"); s != "" {
					add(x.Pos(), fn, s+" (a test binary's flags are registered)")
				}
				if s := ff.isSel(x.Fun, "os", "Executable"); s != "" && !program {
					add(x.Pos(), fn, s+" in a library (a test binary is named pkg.test)")
				}
				if s := ff.isSel(x.Fun, "os", "Getenv", "LookupEnv"); s != "" && len(x.Args) > 0 {
					if name, ok := stringLit(x.Args[0]); ok && envTell.MatchString(name) {
						add(x.Pos(), fn, fmt.Sprintf("%s(%q)", s, name))
					}
				}
			case *ast.BasicLit:
				if v, ok := stringLit(x); ok && tells(v) {
					add(x.Pos(), fn, fmt.Sprintf("the text %q", clipDetect(v)))
				}
			}
			return true
		})
	}
	return out
}

// stringLit is the value of a string literal.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := ast.Unparen(e).(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}

func clipDetect(s string) string {
	if len(s) > fakesMaxText {
		return s[:fakesMaxText] + "…"
	}
	return s
}

// pyTell matches what lets Python code tell a test run from a person's:
// the runners' modules looked up in sys.modules, their variables, the
// caller's frames.
var pyTell = regexp.MustCompile(`\bsys\s*\.\s*modules\b|\b(?:sys\s*\.\s*_getframe|inspect\s*\.\s*(?:stack|currentframe|getouterframes)|traceback\s*\.\s*(?:extract_stack|format_stack|walk_stack)|socket\s*\.\s*if_nameindex)\b|\b(?:import|from)\s+netifaces\b`)

// pythonDetects returns the constructs in a Python file that is not a
// test by which its code can tell that it runs under test
// (FakeDetectsTest): sys.modules or the call stack read, and
// strings that name the runners, their variables or ultra's sandbox.
func pythonDetects(rel, src string) []Finding {
	var out []Finding
	code, strs := lexPython(norm.NFKC.String(src))
	for _, s := range strs {
		if tells(s.text) {
			out = append(out, Finding{File: rel, Line: s.line, Kind: FakeDetectsTest,
				Detail: fmt.Sprintf("the text %q: the code can tell a test run from a person's and behave otherwise there", clipDetect(s.text))})
		}
	}
	for i, l := range strings.Split(code, "\n") {
		if m := pyTell.FindString(l); m != "" {
			out = append(out, Finding{File: rel, Line: i + 1, Kind: FakeDetectsTest,
				Detail: fmt.Sprintf("%s: the code can tell a test run from a person's and behave otherwise there", strings.Join(strings.Fields(m), ""))})
		}
	}
	return out
}
