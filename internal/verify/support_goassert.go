package verify

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// Assertion helpers the project's code shares with the tests: a package
// the code imports that exports Same or AssertEqual, which other
// packages' tests import to assert with. Weakened, it passes the tests;
// production packages export such functions too. Such a package is
// undecided (see decide in support_go.go).

// goAssertNames are exported function names that say a function asserts:
// Equal, Same, … by themselves, AssertX, RequireX, … as a first word
// (CheckX and VerifyX are checkers, which production code exports too).
var (
	goAssertNames = map[string]bool{"Equal": true, "Equals": true, "Same": true, "Match": true, "Matches": true}
	goAssertWords = map[string]bool{"Assert": true, "Require": true, "Expect": true, "Should": true, "Verify": true, "Check": true}
	goGotWant     = map[string]bool{"got": true, "want": true, "expected": true, "actual": true}
)

// assertExport returns an assertion-shaped function package p exports
// (goAssertExports) that the tests of testers may assert with: a checker
// only when one of their test files names it.
func (a *goAnalysis) assertExport(p *goPkg, testers []string) string {
	names := a.t.goAssertExports(p.files)
	for _, n := range names {
		if w := goFirstWord(n); w != "Check" && w != "Verify" {
			return n
		}
	}
	for _, n := range names {
		for _, d := range testers {
			for _, f := range a.t.children[d] {
				if strings.HasSuffix(f, "_test.go") && hasWord(a.t.content(f), n) {
					return n
				}
			}
		}
	}
	return ""
}

// goAssertExports returns the assertion-shaped functions the Go files
// among files export: those named as assertions (goAssertNames,
// goAssertWords), and those that return a bool and take a parameter
// named got or want. Methods do not count: production types define
// Equal.
func (t *supportTree) goAssertExports(files []string) []string {
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		file, _ := parser.ParseFile(token.NewFileSet(), f, t.in.Files[f], parser.SkipObjectResolution)
		if file == nil {
			continue
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() {
				continue
			}
			if name := fn.Name.Name; goAssertNames[name] || goAssertWords[goFirstWord(name)] || goGotWantBool(fn.Type) {
				out = append(out, name)
			}
		}
	}
	return out
}

// goGotWantBool reports whether a function returns one bool and takes a
// parameter named got or want.
func goGotWantBool(ft *ast.FuncType) bool {
	res := ft.Results
	if res == nil || len(res.List) != 1 || len(res.List[0].Names) > 1 {
		return false
	}
	if id, ok := res.List[0].Type.(*ast.Ident); !ok || id.Name != "bool" {
		return false
	}
	for _, field := range ft.Params.List {
		for _, n := range field.Names {
			if goGotWant[strings.ToLower(n.Name)] {
				return true
			}
		}
	}
	return false
}

// goFirstWord is the first word of a MixedCaps name: Assert of
// AssertEqual, Checksum of Checksum.
func goFirstWord(name string) string {
	for i := 1; i < len(name); i++ {
		if name[i] >= 'A' && name[i] <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z' {
			return name[:i]
		}
	}
	return name
}
