package verify

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// supportCase is one tree and what the classifier must say about it.
type supportCase struct {
	name     string
	files    map[string]string
	commands []string
	code     []string // DeclaredCode
	decl     []string // DeclaredSupport
	goos     string
	// want maps a path to its role; RoleCode means the path is not listed.
	want map[string]SupportRole
	// why maps a path to a part of its Why.
	why map[string]string
}

// classify runs the classifier as the gate does: it loads only the files
// SupportReads asks for.
func classify(c supportCase) map[string]SupportFile {
	in := SupportInput{Files: map[string][]byte{}, Commands: c.commands, DeclaredCode: c.code, DeclaredSupport: c.decl, GOOS: c.goos}
	for p, src := range c.files {
		in.Paths = append(in.Paths, p)
		if SupportReads(p) {
			in.Files[p] = []byte(src)
		}
	}
	sort.Strings(in.Paths)
	out := map[string]SupportFile{}
	for _, f := range ClassifySupport(in) {
		out[f.Path] = f
	}
	return out
}

func runSupportCases(t *testing.T, cases []supportCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c)
			for p, role := range c.want {
				f, listed := got[p]
				switch {
				case role == RoleCode && listed:
					t.Errorf("%s: listed as %v (%s), want code", p, f.Role, f.Why)
				case role != RoleCode && !listed:
					t.Errorf("%s: not listed, want %v", p, role)
				case role != RoleCode && f.Role != role:
					t.Errorf("%s: %v (%s), want %v", p, f.Role, f.Why, role)
				}
			}
			for p, part := range c.why {
				if !strings.Contains(got[p].Why, part) {
					t.Errorf("%s: why %q, want it to contain %q", p, got[p].Why, part)
				}
			}
			for p, f := range got {
				if IsTestPath(p) {
					t.Errorf("test file %s listed (%s)", p, f.Why)
				}
			}
			if t.Failed() {
				for _, p := range sortedKeys(got) {
					t.Logf("listed: %s %v: %s", p, got[p].Role, got[p].Why)
				}
			}
		})
	}
}

const supportGoMod = "module example.com/m\n\ngo 1.22\n"

func TestSupportGo(t *testing.T) {
	calcTest := func(imports ...string) string {
		s := "package calc\n\nimport (\n\t\"testing\"\n"
		for _, i := range imports {
			s += "\t_ \"" + i + "\"\n"
		}
		return s + ")\n\nfunc TestAdd(t *testing.T) {}\n"
	}
	runSupportCases(t, []supportCase{{
		name: "internal helper imported only by tests",
		files: map[string]string{
			"go.mod":                      supportGoMod,
			"calc/calc.go":                "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
			"calc/calc_test.go":           calcTest("example.com/m/internal/testutil"),
			"internal/testutil/eq.go":     "package testutil\n\nfunc Equal(a, b int) bool { return a == b }\n",
			"internal/testutil/eq_w.go":   "//go:build windows\n\npackage testutil\n",
			"internal/testutil/README":    "notes",
			"internal/testutil/x_test.go": "package testutil\n",
		},
		want: map[string]SupportRole{
			"internal/testutil/eq.go":   RoleSupport,
			"internal/testutil/eq_w.go": RoleSupport,
			"calc/calc.go":              RoleCode,
			"internal/testutil/README":  RoleCode,
		},
		// Its own test does not make it code: the name says what it is.
		why: map[string]string{"internal/testutil/eq.go": "internal/testutil: support-named directory (testutil) (Go)"},
	}, {
		name: "internal package only tests import",
		files: map[string]string{
			"go.mod":             supportGoMod,
			"calc/calc.go":       "package calc\n",
			"calc/calc_test.go":  calcTest("example.com/m/internal/eqx"),
			"internal/eqx/eq.go": "package eqx\n\nfunc Equal(a, b int) bool { return true }\n",
		},
		want: map[string]SupportRole{"internal/eqx/eq.go": RoleSupport},
		why:  map[string]string{"internal/eqx/eq.go": "internal/eqx: imported only by tests (Go)"},
	}, {
		name: "internal helper not named as one, with a framework import",
		files: map[string]string{
			"go.mod":             supportGoMod,
			"calc/calc.go":       "package calc\n",
			"calc/calc_test.go":  calcTest("example.com/m/internal/cmpx"),
			"internal/cmpx/c.go": "package cmpx\n\nimport \"testing\"\n\nfunc Eq(t testing.TB) {}\n",
			"cmd/x/main.go":      "package main\n\nimport _ \"example.com/m/internal/cmpx\"\n\nfunc main() {}\n",
		},
		want: map[string]SupportRole{"internal/cmpx/c.go": RoleSupport, "cmd/x/main.go": RoleCode},
		why:  map[string]string{"internal/cmpx/c.go": "imports testing"},
	}, {
		name: "an ignored file does not make the helper code",
		files: map[string]string{
			"go.mod":                  supportGoMod,
			"gen.go":                  "//go:build ignore\n\npackage main\n\nimport _ \"example.com/m/internal/testutil\"\n\nfunc main() {}\n",
			"calc/calc.go":            "package calc\n",
			"calc/calc_test.go":       calcTest("example.com/m/internal/testutil"),
			"internal/testutil/eq.go": "package testutil\n",
		},
		want: map[string]SupportRole{"internal/testutil/eq.go": RoleSupport, "gen.go": RoleCode},
	}, {
		name: "a command's internal package is code",
		files: map[string]string{
			"go.mod":            supportGoMod,
			"cmd/x/main.go":     "package main\n\nimport _ \"example.com/m/internal/y\"\n\nfunc main() {}\n",
			"internal/y/y.go":   "package y\n\nimport _ \"example.com/m/internal/z\"\n",
			"internal/z/z.go":   "package z\n",
			"calc/calc.go":      "package calc\n",
			"calc/calc_test.go": calcTest("example.com/m/internal/y", "example.com/m/internal/z"),
		},
		want: map[string]SupportRole{"internal/y/y.go": RoleCode, "internal/z/z.go": RoleCode},
	}, {
		name: "a constrained-out command does not make its import code",
		goos: "windows",
		files: map[string]string{
			"go.mod":            supportGoMod,
			"cmd/x/main.go":     "//go:build linux\n\npackage main\n\nimport _ \"example.com/m/internal/y\"\n\nfunc main() {}\n",
			"internal/y/y.go":   "package y\n",
			"calc/calc.go":      "package calc\n",
			"calc/calc_test.go": calcTest("example.com/m/internal/y"),
		},
		want: map[string]SupportRole{"internal/y/y.go": RoleSupport},
	}, {
		name: "a package with its own tests is code under test",
		files: map[string]string{
			"go.mod":             supportGoMod,
			"a/a.go":             "package a\n",
			"a/a_test.go":        "package a_test\n\nimport _ \"example.com/m/a\"\nimport _ \"example.com/m/pkg/calc\"\n",
			"pkg/calc/c.go":      "package calc\n",
			"pkg/calc/c_test.go": "package calc\n",
		},
		want: map[string]SupportRole{"pkg/calc/c.go": RoleCode, "a/a.go": RoleCode},
	}, {
		name: "a public package only other tests import is undecided",
		files: map[string]string{
			"go.mod":             supportGoMod,
			"calc/calc.go":       "package calc\n",
			"calc/calc_test.go":  calcTest("example.com/m/pkg/compare"),
			"pkg/compare/cmp.go": "package compare\n\nimport _ \"example.com/m/pkg/deep\"\n",
			"pkg/deep/deep.go":   "package deep\n",
		},
		want: map[string]SupportRole{"pkg/compare/cmp.go": RoleUndecided, "pkg/deep/deep.go": RoleUndecided},
		why:  map[string]string{"pkg/compare/cmp.go": "imported only by tests of calc"},
	}, {
		name: "a local replace target only tests import",
		files: map[string]string{
			"go.mod":            supportGoMod + "\nrequire example.com/helpers v0.0.0\n\nreplace (\n\texample.com/helpers v0.0.0 => ./helpers\n)\n",
			"calc/calc.go":      "package calc\n",
			"calc/calc_test.go": calcTest("example.com/helpers/eq"),
			"helpers/go.mod":    "module example.com/helpers\n",
			"helpers/eq/eq.go":  "package eq\n",
		},
		want: map[string]SupportRole{"helpers/eq/eq.go": RoleSupport},
		why:  map[string]string{"helpers/eq/eq.go": "replace target ./helpers"},
	}, {
		name: "a go.work module only tests import",
		files: map[string]string{
			"go.work":           "go 1.22\n\nuse (\n\t.\n\t./tools\n)\n",
			"go.mod":            supportGoMod,
			"calc/calc.go":      "package calc\n",
			"calc/calc_test.go": calcTest("example.com/tools/eq"),
			"tools/go.mod":      "module example.com/tools\n",
			"tools/eq/eq.go":    "package eq\n",
		},
		want: map[string]SupportRole{"tools/eq/eq.go": RoleSupport},
		why:  map[string]string{"tools/eq/eq.go": "go.work module ./tools"},
	}, {
		name: "a vendored test framework",
		files: map[string]string{
			"go.mod":             supportGoMod + "\nrequire github.com/stretchr/testify v1.9.0\n",
			"vendor/modules.txt": "# github.com/stretchr/testify v1.9.0\n## explicit\ngithub.com/stretchr/testify/assert\n",
			"vendor/github.com/stretchr/testify/assert/assertions.go": "package assert\n\nimport _ \"github.com/davecgh/go-spew/spew\"\n",
			"vendor/github.com/davecgh/go-spew/spew/spew.go":          "package spew\n",
			"vendor/github.com/other/lib/lib.go":                      "package lib\n",
			"main.go":                                                 "package main\n\nimport _ \"github.com/other/lib\"\n\nfunc main() {}\n",
			"calc/calc.go":                                            "package calc\n",
			"calc/calc_test.go":                                       calcTest("github.com/stretchr/testify/assert"),
		},
		want: map[string]SupportRole{
			"vendor/github.com/stretchr/testify/assert/assertions.go": RoleSupport,
			"vendor/github.com/davecgh/go-spew/spew/spew.go":          RoleSupport,
			"vendor/github.com/other/lib/lib.go":                      RoleCode,
			"vendor/modules.txt":                                      RoleCode,
		},
		why: map[string]string{
			"vendor/github.com/stretchr/testify/assert/assertions.go": "test framework package",
			"vendor/github.com/davecgh/go-spew/spew/spew.go":          "under vendor/",
		},
	}, {
		name: "testdata and underscore packages only tests import",
		files: map[string]string{
			"go.mod":                    supportGoMod,
			"calc/calc.go":              "package calc\n",
			"calc/calc_test.go":         calcTest("example.com/m/calc/testdata/golden", "example.com/m/_tools/eq"),
			"calc/testdata/golden/g.go": "package golden\n",
			"_tools/eq/eq.go":           "package eq\n",
		},
		want: map[string]SupportRole{"_tools/eq/eq.go": RoleSupport},
		why:  map[string]string{"_tools/eq/eq.go": "./... skips"},
	}, {
		name: "a support-named public package",
		files: map[string]string{
			"go.mod":             supportGoMod,
			"calc/calc.go":       "package calc\n",
			"calc/calc_test.go":  calcTest("example.com/m/pkg/mocks"),
			"pkg/mocks/store.go": "package mocks\n",
		},
		want: map[string]SupportRole{"pkg/mocks/store.go": RoleSupport},
		why:  map[string]string{"pkg/mocks/store.go": "support-named directory (mocks)"},
	}, {
		name: "embedded files go with their package",
		files: map[string]string{
			"go.mod":                     supportGoMod,
			"calc/calc.go":               "package calc\n",
			"calc/calc_test.go":          calcTest("example.com/m/internal/golden"),
			"internal/golden/g.go":       "package golden\n\nimport \"embed\"\n\n//go:embed want/*.txt\nvar files embed.FS\n",
			"internal/golden/want/a.txt": "1",
			"internal/golden/other.txt":  "2",
		},
		want: map[string]SupportRole{"internal/golden/g.go": RoleSupport, "internal/golden/want/a.txt": RoleSupport, "internal/golden/other.txt": RoleCode},
	}, {
		name:     "build tags from the test command",
		commands: []string{"go test -tags=integration ./..."},
		files: map[string]string{
			"go.mod":            supportGoMod,
			"cmd/x/main.go":     "package main\n\nfunc main() {}\n",
			"cmd/x/extra.go":    "//go:build integration\n\npackage main\n\nimport _ \"example.com/m/internal/y\"\n",
			"internal/y/y.go":   "package y\n",
			"calc/calc.go":      "package calc\n",
			"calc/calc_test.go": calcTest("example.com/m/internal/y"),
		},
		want: map[string]SupportRole{"internal/y/y.go": RoleCode},
	}})
}

func TestSupportDeclaredAndData(t *testing.T) {
	files := map[string]string{
		"go.mod":                   supportGoMod,
		"calc/calc.go":             "package calc\n",
		"calc/calc_test.go":        "package calc\n\nimport _ \"example.com/m/internal/testutil\"\n",
		"internal/testutil/eq.go":  "package testutil\n",
		"docs/golden.txt":          "x",
		"fixtures/users.json":      "[]",
		"web/__snapshots__/a.snap": "x",
		"src/app.go":               "package src\n",
	}
	runSupportCases(t, []supportCase{{
		name:  "declarations win",
		files: files,
		code:  []string{"internal/testutil/**"},
		decl:  []string{"docs/**", "src/app.go"},
		want: map[string]SupportRole{
			"internal/testutil/eq.go": RoleCode,
			"docs/golden.txt":         RoleSupport,
			"src/app.go":              RoleSupport,
		},
		why: map[string]string{"docs/golden.txt": "declared test support (docs/**)"},
	}, {
		name:  "the more specific declaration wins",
		files: files,
		code:  []string{"**"},
		decl:  []string{"internal/testutil"},
		want:  map[string]SupportRole{"internal/testutil/eq.go": RoleSupport, "fixtures/users.json": RoleCode},
	}, {
		name:  "test data",
		files: files,
		want:  map[string]SupportRole{"fixtures/users.json": RoleSupport, "web/__snapshots__/a.snap": RoleSupport, "docs/golden.txt": RoleCode},
		why:   map[string]string{"fixtures/users.json": "test data"},
	}})
}

func TestSupportRust(t *testing.T) {
	runSupportCases(t, []supportCase{{
		name: "dev-dependency and patch paths",
		files: map[string]string{
			"Cargo.toml":                 "[package]\nname = \"app\"\n\n[dependencies]\ncore = { path = \"crates/core\" }\n\n[dev-dependencies]\ntesthelp = { path = \"crates/testhelp\" }\ncore = { path = \"crates/core\" }\n\n[patch.crates-io]\nserde = { path = \"vendor/serde\" }\n",
			"crates/core/src/lib.rs":     "",
			"crates/testhelp/src/lib.rs": "",
			"vendor/serde/src/lib.rs":    "",
		},
		want: map[string]SupportRole{
			"crates/core/src/lib.rs":     RoleCode,
			"crates/testhelp/src/lib.rs": RoleSupport,
			"vendor/serde/src/lib.rs":    RoleSupport,
		},
		why: map[string]string{"crates/testhelp/src/lib.rs": "Rust dev-dependency"},
	}})
}

func TestSupportDeterministic(t *testing.T) {
	c := supportCase{files: map[string]string{
		"go.mod":            supportGoMod,
		"calc/calc_test.go": "package calc\n\nimport _ \"example.com/m/pkg/a\"\nimport _ \"example.com/m/pkg/b\"\n",
		"calc/calc.go":      "package calc\n",
		"pkg/a/a.go":        "package a\n",
		"pkg/b/b.go":        "package b\n",
		"helpers.py":        "def assert_ok(x):\n    assert x\n",
		"test_x.py":         "import helpers\n",
		"fixtures/z.json":   "{}",
	}}
	in := SupportInput{Files: map[string][]byte{}}
	for p, s := range c.files {
		in.Paths = append(in.Paths, p)
		in.Files[p] = []byte(s)
	}
	sort.Strings(in.Paths)
	first := ClassifySupport(in)
	if !sort.SliceIsSorted(first, func(i, j int) bool { return first[i].Path < first[j].Path }) {
		t.Errorf("not sorted: %v", first)
	}
	for range 5 {
		if again := ClassifySupport(in); !reflect.DeepEqual(first, again) {
			t.Fatalf("not deterministic:\n%v\n%v", first, again)
		}
	}
	if len(first) != 4 {
		t.Errorf("got %d files, want 4: %v", len(first), first)
	}
}

func TestSupportRoleString(t *testing.T) {
	for r, want := range map[SupportRole]string{RoleCode: "code", RoleSupport: "test support", RoleUndecided: "undecided"} {
		if got := r.String(); got != want {
			t.Errorf("%d: %q, want %q", r, got, want)
		}
	}
}

func TestSupportReads(t *testing.T) {
	for p, want := range map[string]bool{
		"a/b.go": true, "go.mod": true, "sub/go.work": true, "vendor/modules.txt": true, "x.py": true, "x.pyi": true,
		"web/x.tsx": true, "package.json": true, "scripts/run.sh": true, "Makefile": true, "build/rules.mk": true,
		"pyproject.toml": true, "setup.cfg": true, "setup.py": true, "crates/a/Cargo.toml": true,
		"scripts/check": true, ".mocharc.yml": true, "jest.config.json": true,
		"README.md": false, "LICENSE": false, "img/a.png": false, "data.json": false, "scripts/.hidden": false,
	} {
		if got := SupportReads(p); got != want {
			t.Errorf("SupportReads(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestSupportGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"internal/testutil/**", "internal/testutil/eq.go", true},
		{"internal/testutil", "internal/testutil/sub/eq.go", true},
		{"**/fixtures/**", "a/b/fixtures/x.json", true},
		{"**/*.mk", "build/test.mk", true},
		{"*.mk", "build/test.mk", false},
		{"./docs/*.md", "docs/a.md", true},
		{"docs/*.md", "docs/sub/a.md", false},
		{"**", "anything/at/all", true},
		{"", "x", false},
	} {
		if got := globMatch(c.pattern, c.path); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

func TestSupportHelperNames(t *testing.T) {
	for name, want := range map[string]string{
		"assert_equal": "strong", "assertEqual": "strong", "AssertEqual": "strong", "ASSERT_EQ": "strong",
		"expectOk": "strong", "should_fail": "strong", "_assert_ok": "strong", "assert": "strong",
		"check_input": "weak", "verifyToken": "weak",
		"checkout": "", "assertion": "", "expected": "", "main": "", "": "",
	} {
		if got := helperFuncKind(name); got != want {
			t.Errorf("helperFuncKind(%q) = %q, want %q", name, got, want)
		}
	}
	for p, want := range map[string]string{
		"internal/testutil/eq.go": "testutil", "lib/test_helpers.js": "test_helpers.js", "src/testing.py": "testing.py",
		"pkg/mocks/a.go": "mocks", "lib/mockServer.js": "mockServer.js", "e2e/helpers.js": "helpers.js",
		"src/helpers.js": "", "src/mockingbird.py": "", "src/calc.py": "",
	} {
		if got := supportName(p); got != want {
			t.Errorf("supportName(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestSupportParseGoMod(t *testing.T) {
	mod, reps, uses := parseGoMod("module \"example.com/m\" // the module\n\nreplace a/b v1.0.0 => ./x\nreplace c/d => example.com/d v1.0.0\nreplace (\n\te/f => ../f\n)\nuse ./tools\nuse (\n\t./a\n)\n")
	if mod != "example.com/m" {
		t.Errorf("module %q", mod)
	}
	if want := [][2]string{{"a/b", "./x"}, {"e/f", "../f"}}; !reflect.DeepEqual(reps, want) {
		t.Errorf("replaces %v, want %v", reps, want)
	}
	if want := []string{"./tools", "./a"}; !reflect.DeepEqual(uses, want) {
		t.Errorf("uses %v, want %v", uses, want)
	}
}

func TestSupportGoTestData(t *testing.T) {
	calc := "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
	runSupportCases(t, []supportCase{{
		name: "a test's //go:embed names test data",
		files: map[string]string{
			"go.mod":                  supportGoMod,
			"calc/calc.go":            calc,
			"calc/calc_test.go":       "package calc\n\nimport (\n\t_ \"embed\"\n\t\"testing\"\n)\n\n//go:embed cases.json\nvar cases []byte\n\nfunc TestAdd(t *testing.T) {}\n",
			"calc/x_test.go":          "package calc_test\n\nimport \"embed\"\n\n//go:embed golden all:more\nvar golden embed.FS\n",
			"calc/cases.json":         "[[1, 2, 3]]",
			"calc/golden/add.txt":     "3",
			"calc/golden/deep/s.txt":  "1",
			"calc/golden/.hidden":     "x",
			"calc/golden/_skip/a.txt": "x",
			"calc/more/.keep":         "x",
			"calc/notes.txt":          "x",
		},
		want: map[string]SupportRole{
			"calc/cases.json": RoleSupport, "calc/golden/add.txt": RoleSupport, "calc/golden/deep/s.txt": RoleSupport, "calc/more/.keep": RoleSupport,
			"calc/golden/.hidden": RoleCode, "calc/golden/_skip/a.txt": RoleCode, "calc/notes.txt": RoleCode, "calc/calc.go": RoleCode,
		},
		why: map[string]string{"calc/cases.json": "embedded by calc/calc_test.go (Go test data)", "calc/golden/add.txt": "embedded by calc/x_test.go (Go test data)"},
	}, {
		name: "what the code embeds too is code",
		files: map[string]string{
			"go.mod":            supportGoMod,
			"calc/calc.go":      "package calc\n\nimport _ \"embed\"\n\n//go:embed table.json\nvar table []byte\n",
			"calc/calc_test.go": "package calc\n\nimport _ \"embed\"\n\n//go:embed *.json\nvar all string\n",
			"calc/table.json":   "{}",
			"calc/cases.json":   "{}",
		},
		want: map[string]SupportRole{"calc/table.json": RoleCode, "calc/cases.json": RoleSupport, "calc/calc.go": RoleCode},
	}, {
		name: "a support package's embeds and a test's embed below another module",
		files: map[string]string{
			"go.mod":                     supportGoMod,
			"calc/calc.go":               calc,
			"calc/calc_test.go":          "package calc\n\nimport (\n\t\"embed\"\n\t_ \"example.com/m/internal/testutil\"\n)\n\n//go:embed sub\nvar sub embed.FS\n",
			"calc/sub/a.txt":             "x",
			"calc/sub/mod/go.mod":        "module example.com/sub\n",
			"calc/sub/mod/b.txt":         "x",
			"internal/testutil/eq.go":    "package testutil\n\nimport _ \"embed\"\n\n//go:embed want.txt\nvar want string\n",
			"internal/testutil/want.txt": "x",
		},
		want: map[string]SupportRole{"calc/sub/a.txt": RoleSupport, "calc/sub/mod/b.txt": RoleCode, "internal/testutil/want.txt": RoleSupport},
	}, {
		name: "files a test reads at run time",
		files: map[string]string{
			"go.mod":                 supportGoMod,
			"calc/calc.go":           "package calc\n\nimport \"os\"\n\nfunc Rates() ([]byte, error) { return os.ReadFile(\"config/rates.json\") }\n",
			"calc/calc_test.go":      "package calc\n\nimport (\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n)\n\ntype c struct {\n\tName string `json:\"golden/add.txt\"`\n}\n\nfunc TestAdd(t *testing.T) {\n\tos.ReadFile(\"golden/add.txt\")\n\tos.ReadFile(filepath.Join(\"cases\", \"sub.json\"))\n\tos.ReadFile(\"config/\" + \"rates.json\")\n\tos.ReadFile(\"calc.go\")\n}\n",
			"calc/golden/add.txt":    "3",
			"calc/cases/sub.json":    "[]",
			"calc/cases/mul.json":    "[]",
			"calc/config/rates.json": "{}",
		},
		want: map[string]SupportRole{
			"calc/golden/add.txt": RoleSupport, "calc/cases/sub.json": RoleSupport, "calc/cases/mul.json": RoleSupport,
			"calc/config/rates.json": RoleCode, "calc/calc.go": RoleCode,
		},
		why: map[string]string{"calc/golden/add.txt": "read by calc/calc_test.go (test data)"},
	}})
}

func TestSupportGoHelpers(t *testing.T) {
	num := func(decl string) string { return "package num\n\n" + decl + "\n" }
	tree := func(numSrc string, extra map[string]string) map[string]string {
		files := map[string]string{
			"go.mod":              supportGoMod,
			"calc/calc.go":        "package calc\n\nimport \"example.com/m/internal/num\"\n\nvar _ = num.X\n",
			"calc/calc_test.go":   "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/internal/num\"\n)\n\nfunc TestAdd(t *testing.T) { _ = num.X }\n",
			"internal/num/num.go": numSrc,
		}
		for k, v := range extra {
			files[k] = v
		}
		return files
	}
	runSupportCases(t, []supportCase{{
		name:  "an assertion-named export the code and other tests import",
		files: tree(num("var X = 1\n\nfunc Same(a, b float64) bool { return a == b }"), nil),
		want:  map[string]SupportRole{"internal/num/num.go": RoleUndecided, "calc/calc.go": RoleCode},
		why:   map[string]string{"internal/num/num.go": "internal/num: assertion helper that tests and code both load (exports Same, imported by tests of calc) (Go)"},
	}, {
		name:  "a bool of got and want",
		files: tree(num("var X = 1\n\nfunc Close(got, want float64) bool { return got == want }"), nil),
		want:  map[string]SupportRole{"internal/num/num.go": RoleUndecided},
		why:   map[string]string{"internal/num/num.go": "exports Close"},
	}, {
		name:  "RequireX",
		files: tree(num("var X = 1\n\nfunc RequireNear(t interface{ Fatal(...any) }, a, b float64) {}"), nil),
		want:  map[string]SupportRole{"internal/num/num.go": RoleUndecided},
		why:   map[string]string{"internal/num/num.go": "exports RequireNear"},
	}, {
		// Production packages export checkers: one counts when another
		// package's test calls it.
		name:  "a checker no test calls",
		files: tree(num("var X = 1\n\nfunc CheckRange(v int) error { return nil }"), nil),
		want:  map[string]SupportRole{"internal/num/num.go": RoleCode},
	}, {
		name: "a checker a test calls",
		files: tree(num("var X = 1\n\nfunc CheckRange(v int) error { return nil }"), map[string]string{
			"calc/more_test.go": "package calc\n\nimport \"example.com/m/internal/num\"\n\nvar _ = num.CheckRange(1)\n",
		}),
		want: map[string]SupportRole{"internal/num/num.go": RoleUndecided},
		why:  map[string]string{"internal/num/num.go": "exports CheckRange"},
	}, {
		name:  "no assertion shape, a method, a first word that is not one: code",
		files: tree(num("var X = 1\n\ntype V int\n\nfunc (v V) Equal(o V) bool { return v == o }\n\nfunc Checksum(b []byte) int { return 0 }\n\nfunc Abs(x float64) float64 { return x }"), nil),
		want:  map[string]SupportRole{"internal/num/num.go": RoleCode},
	}, {
		name:  "a package with tests of its own is the code they test",
		files: tree(num("var X = 1\n\nfunc Same(a, b float64) bool { return a == b }"), map[string]string{"internal/num/num_test.go": "package num\n"}),
		want:  map[string]SupportRole{"internal/num/num.go": RoleCode},
	}, {
		name: "calc with its own tests exports Equal",
		files: map[string]string{
			"go.mod":            supportGoMod,
			"calc/calc.go":      "package calc\n\nfunc Equal(got, want int) bool { return got == want }\n",
			"calc/calc_test.go": "package calc_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/calc\"\n)\n\nfunc TestEqual(t *testing.T) { _ = calc.Equal(1, 1) }\n",
		},
		want: map[string]SupportRole{"calc/calc.go": RoleCode},
	}})
}
