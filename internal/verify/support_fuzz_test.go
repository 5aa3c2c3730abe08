package verify

import "testing"

// FuzzClassifySupport feeds the classifier's readers malformed sources of
// every language it reads: a tree the gate sees may hold anything, and
// the classifier must neither panic nor loop.
func FuzzClassifySupport(f *testing.F) {
	f.Add("import x\nfrom . import (", "require('", "source \"$(", "include $(", "package a\nimport \"b", "[dev-dependencies]\nx={path='..'}")
	f.Add("def assert_x(:\n  '''", "`${`", "X=$(cd \"$(dirname", "A = $(A)$(A)\n$(A):", "//go:build (\npackage", "[patch")
	f.Add("__import__(", "/* /", "bash -c", "test: ; $(MAKE) test", "package main\nimport _ \"m/a\"", "")
	f.Fuzz(func(t *testing.T, py, js, sh, mk, gosrc, cargo string) {
		files := map[string][]byte{
			"a/test_x.py": []byte(py), "a/x.py": []byte(py), "a/x.test.js": []byte(js), "a/y.js": []byte(js),
			"test.sh": []byte(sh), "lib.sh": []byte(sh), "Makefile": []byte(mk), "x.mk": []byte(mk),
			"go.mod": []byte("module m\n" + gosrc), "a/a.go": []byte(gosrc), "a/a_test.go": []byte(gosrc),
			"Cargo.toml": []byte(cargo), "package.json": []byte(js), "tsconfig.json": []byte(js), "pytest.ini": []byte(py),
		}
		in := SupportInput{Files: files, Commands: []string{sh, "make " + mk, "sh test.sh", "npm test", "tox"}}
		for p := range files {
			in.Paths = append(in.Paths, p)
		}
		for _, f := range ClassifySupport(in) {
			if IsTestPath(f.Path) || f.Why == "" || f.Role == RoleCode {
				t.Errorf("bad entry %+v", f)
			}
		}
	})
}
