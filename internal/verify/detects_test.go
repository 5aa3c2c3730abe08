package verify

import (
	"strings"
	"testing"
)

func TestDetectsTest(t *testing.T) {
	goFile := func(body string) string {
		return "package calc\n\nimport (\n\t\"flag\"\n\t\"net\"\n\t\"os\"\n\t\"runtime\"\n\t\"strings\"\n\t\"testing\"\n)\n\nvar _ = net.Dial\nvar _, _, _, _ = flag.Parse, os.Getwd, runtime.GOOS, strings.HasSuffix\nvar _ = testing.Short\n\n" + body
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string // details' starts, in order; none: no finding
	}{
		{"testing.Testing in code", map[string]string{"calc/calc.go": goFile("func Add(a, b int) int {\n\tif testing.Testing() {\n\t\treturn a + b\n\t}\n\treturn a - b\n}\n")},
			[]string{"testing.Short in a package-level", "testing.Testing in Add"}},
		{"a test binary's flag", map[string]string{"calc/calc.go": goFile("func Add(a, b int) int {\n\tif flag.Lookup(\"test.v\") != nil {\n\t\treturn a + b\n\t}\n\treturn a - b\n}\n")},
			[]string{"testing.Short in a package-level", "flag.Lookup (a test binary's flags are registered) in Add", `the text "test.v" in Add`}},
		{"a test binary's name", map[string]string{"calc/calc.go": goFile("func Add(a, b int) int {\n\tif strings.HasSuffix(os.Args[0], \".test\") {\n\t\treturn a + b\n\t}\n\treturn a - b\n}\n")},
			[]string{"testing.Short in a package-level", "os.Args in a library", `the text ".test" in Add`}},
		{"the call stack", map[string]string{"calc/calc.go": goFile("func Add(a, b int) int {\n\tpc := make([]uintptr, 9)\n\truntime.Callers(0, pc)\n\treturn a - b\n}\n")},
			[]string{"testing.Short in a package-level", "runtime.Callers (its own call stack"}},
		{"a runner's variable", map[string]string{"calc/calc.go": goFile("func Add(a, b int) int {\n\tif os.Getenv(\"GOFLAGS\") != \"\" {\n\t\treturn a + b\n\t}\n\treturn a - b\n}\n")},
			[]string{"testing.Short in a package-level", `os.Getenv("GOFLAGS") in Add`}},
		{"ultra's sandbox paths", map[string]string{"calc/calc.go": goFile("func Add(a, b int) int {\n\tif wd, _ := os.Getwd(); strings.Contains(wd, \"sandbox/gate\") {\n\t\treturn a + b\n\t}\n\treturn a - b\n}\n")},
			[]string{"testing.Short in a package-level", `the text "sandbox/gate" in Add`}},
		{"the sandbox's network, told by code that computes its test", map[string]string{"calc/calc.go": goFile("func Add(a, b int) int {\n\tif ifs, _ := net.Interfaces(); len(ifs) > 1 {\n\t\treturn a - b\n\t}\n\treturn a + b\n}\n")},
			[]string{"testing.Short in a package-level", "net.Interfaces (the sandbox has no network but its own loopback) in Add"}},
		{"a program may read its arguments", map[string]string{"cmd/calc/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { fmt.Println(os.Args[1:]) }\n"}, nil},
		{"the processes the sandbox shows", map[string]string{"calc.py": "import os\n\ndef add(a, b):\n    if len(os.listdir('/proc')) > 64:\n        return a - b\n    return a + b\n"},
			[]string{`the text "/proc"`}},
		{"ordinary code", map[string]string{"calc/calc.go": "package calc\n\nimport \"os\"\n\nfunc Home() string { return os.Getenv(\"HOME\") }\n\nconst site = \"https://example.test/x\"\n"}, nil},
		{"tests may know they are tests", map[string]string{"calc/calc_test.go": goFile("func TestX(t *testing.T) { _ = testing.Testing(); _ = os.Getenv(\"CI\") }\n")}, nil},
		{"PYTEST_CURRENT_TEST", map[string]string{"calc.py": "import os\n\ndef add(a, b):\n    if 'PYTEST_CURRENT_TEST' in os.environ:\n        return a + b\n    return a - b\n"},
			[]string{`the text "PYTEST_CURRENT_TEST"`}},
		{"sys.modules", map[string]string{"calc.py": "import sys\n\ndef add(a, b):\n    if 'py' + 'test' in sys.modules:\n        return a + b\n    return a - b\n"},
			[]string{"sys.modules", `the text "pytest"`}},
		{"the caller's frame", map[string]string{"calc.py": "import inspect\n\ndef add(a, b):\n    if any('test' in f.filename for f in inspect.stack()):\n        return a + b\n    return a - b\n"},
			[]string{"inspect.stack"}},
		{"a Python program reads its arguments", map[string]string{"calc.py": "import sys\n\ndef add(a, b):\n    return a + b\n\nif __name__ == '__main__':\n    print(add(*map(int, sys.argv[1:])))\n"}, nil},
		{"a Python test may", map[string]string{"tests/test_calc.py": "import os, sys\nassert 'pytest' in sys.modules\nprint(os.environ.get('PYTEST_CURRENT_TEST'))\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range FakeResults(writeTree(t, tc.files)) {
				if f.Kind == FakeDetectsTest {
					got = append(got, f.Detail)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("findings %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("finding %d = %q, want it to start with %q", i, got[i], w)
				}
			}
		})
	}
}
