package verify

import (
	"reflect"
	"sort"
	"testing"
)

func supportTreeOf(paths ...string) *supportTree {
	sort.Strings(paths)
	return newSupportTree(SupportInput{Paths: paths, Files: map[string][]byte{}})
}

func TestSupportEmbedFiles(t *testing.T) {
	tr := supportTreeOf(
		"calc/calc.go", "calc/cases.json", "calc/a.txt", "calc/.dot.txt",
		"calc/golden/add.txt", "calc/golden/.hidden", "calc/golden/_skip/x.txt", "calc/golden/deep/y.txt",
		"calc/mod/go.mod", "calc/mod/z.txt", "other/cases.json",
	)
	for _, c := range []struct {
		patterns []string
		want     []string
	}{
		{[]string{"cases.json"}, []string{"calc/cases.json"}},
		{[]string{"*.txt"}, []string{"calc/.dot.txt", "calc/a.txt"}},
		{[]string{"golden"}, []string{"calc/golden/add.txt", "calc/golden/deep/y.txt"}},
		{[]string{"all:golden"}, []string{"calc/golden/.hidden", "calc/golden/_skip/x.txt", "calc/golden/add.txt", "calc/golden/deep/y.txt"}},
		// A directory the pattern matches itself is embedded whatever its name.
		{[]string{"golden/*"}, []string{"calc/golden/.hidden", "calc/golden/_skip/x.txt", "calc/golden/add.txt", "calc/golden/deep/y.txt"}},
		{[]string{"mod"}, nil},
		{[]string{"../other/cases.json", "./cases.json", "/calc"}, nil},
	} {
		if got := tr.embedFiles("calc", c.patterns); !reflect.DeepEqual(got, c.want) {
			t.Errorf("embedFiles(%q) = %q, want %q", c.patterns, got, c.want)
		}
	}
}

func TestSupportGoLiterals(t *testing.T) {
	src := "package calc\n\nimport (\n\t\"os\"\n\tfp \"path/filepath\"\n)\n\nimport \"strings\"\n\ntype c struct {\n\tA string `json:\"a\"`\n\tB []int \"tag\"\n}\n\n" +
		"// \"comment\"\nfunc f() {\n\tos.ReadFile(\"golden/\" + \"add\" + \".txt\")\n\tfp.Join(\"cases\", `raw.json`)\n\t_ = strings.ToUpper(\"x\")\n}\n"
	want := []string{"golden/", "add", "golden/add", ".txt", "golden/add.txt", "cases", "raw.json", "x"}
	if got := goLiterals(src); !reflect.DeepEqual(got, want) {
		t.Errorf("goLiterals = %q, want %q", got, want)
	}
}

func TestSupportLiteralNames(t *testing.T) {
	tr := supportTreeOf(
		"calc/calc.go", "calc/golden/add.txt", "calc/golden/sub.txt", "cases/add.json", "cases/sub.json",
		"web/app.js", "web/index.html", "web/logo.png", "pkg/t/test_x.py", "pkg/data/a.csv", "README.md",
	)
	for _, c := range []struct {
		name  string
		file  string
		lits  []string
		loose bool
		want  []string
	}{
		{"a path from the file's directory", "calc/calc_test.go", []string{"golden/add.txt"}, false, []string{"calc/golden/add.txt"}},
		{"a path from the root", "tests/test_a.py", []string{"./cases/add.json", "README.md"}, false, []string{"README.md", "cases/add.json"}},
		{"joined literals: a directory of data", "test_a.py", []string{"cases", "add.json"}, false, []string{"cases/add.json", "cases/sub.json"}},
		{"a directory and a name without extension", "calc/calc_test.go", []string{"golden", "add"}, false, []string{"calc/golden/add.txt", "calc/golden/sub.txt"}},
		{"up and down", "pkg/t/test_x.py", []string{"..", "data", "a.csv"}, false, []string{"pkg/data/a.csv"}},
		{"a directory alone names nothing", "test_a.py", []string{"cases"}, false, nil},
		{"a directory of code names only what is named in it", "web/app.test.js", []string{"web", "index.html"}, false, []string{"web/index.html"}},
		{"no absolute paths, URLs, templates or globs", "test_a.py", []string{"/cases/add.json", "http://x/cases/add.json", "cases/{}.json", "cases/*.json"}, false, nil},
		{"loose: a directory of data, a glob", "calc/calc.go", []string{"../cases", "golden/*.txt"}, true, []string{"calc/golden/add.txt", "calc/golden/sub.txt", "cases/add.json", "cases/sub.json"}},
		{"loose: a directory of code alone", "main.go", []string{"web"}, true, nil},
		{"loose: no bare glob", "calc/calc.go", []string{"*"}, true, nil},
	} {
		if got := tr.literalNames(c.file, c.lits, c.loose); !reflect.DeepEqual(got, c.want) && len(got)+len(c.want) > 0 {
			t.Errorf("%s: literalNames(%s, %q) = %q, want %q", c.name, c.file, c.lits, got, c.want)
		}
	}
}

func TestSupportPythonHelperExports(t *testing.T) {
	code, _ := lexPython("def assert_a(x):\n    def assert_nested():\n        pass\n\nclass Checks:\n    def check_b(self):\n        pass\n\n    async def expect_c(self):\n        pass\n\ndef _assert_private():\n    pass\n\ndef helper():\n    '''def assert_doc(): pass'''\n")
	if got, want := pyHelperExports(code), []string{"assert_a", "check_b", "expect_c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pyHelperExports = %q, want %q", got, want)
	}
}
