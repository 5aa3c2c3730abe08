package verify

import (
	"path"
	"strings"
)

// testConfigFiles decide how a project's tests run: changing them changes
// what the tests prove as surely as changing a test does.
var testConfigFiles = map[string]bool{
	"Makefile": true, "makefile": true, "GNUmakefile": true,
	"package.json": true, "pytest.ini": true, "tox.ini": true, "setup.cfg": true, "conftest.py": true,
	"noxfile.py": true, ".mocharc.js": true, ".mocharc.json": true, ".mocharc.yml": true, ".mocharc.yaml": true, ".mocharc.cjs": true,
	"test.sh": true, "run_tests.sh": true, "run-tests.sh": true, ".ultra/config": true,
	"mvnw": true, "mvnw.cmd": true, "gradlew": true, "gradlew.bat": true,
	".pytest.ini": true, "pyproject.toml": true, ".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true,
	".babelrc": true, ".bazelrc": true,
	// Python imports these by itself when they are on its path.
	"sitecustomize.py": true, "usercustomize.py": true,
}

// IsTestConfig reports whether a path is one that decides how the tests
// run (a Makefile, package.json, conftest.py, pytest.ini, pyproject.toml,
// .npmrc, a jest or vitest config, …) rather than a test: adding one
// changes what existing tests prove as surely as changing one does.
func IsTestConfig(p string) bool {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	base := path.Base(p)
	if testConfigFiles[base] || testConfigFiles[p] {
		return true
	}
	for _, prefix := range testConfigPrefixes {
		if strings.HasPrefix(base, prefix) {
			return true
		}
	}
	return false
}

var testConfigPrefixes = []string{"jest.config.", "jest.setup.", "vitest.config.", "vitest.workspace.", "vitest.setup.", "karma.conf.", "playwright.config.", "cypress.config.", "babel.config."}

// IsTestPath reports whether a repository path (slash-separated) is a test
// or decides how the tests run, in the conventions of the runners ultra
// knows: Go's _test.go files and testdata; Python's test_*.py, *_test.py
// and files under tests/; JavaScript's and TypeScript's *.test.*,
// *.spec.* and __tests__/; Rust's tests/; Java's src/test/; and the
// test configuration (IsTestConfig).
func IsTestPath(p string) bool {
	if IsTestConfig(p) {
		return true
	}
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	base := path.Base(p)
	dirs := strings.Split(path.Dir(p), "/")
	for i, d := range dirs {
		switch d {
		case "testdata", "__tests__", "__mocks__", "tests", "test", "spec", ".mvn":
			return true
		case "src":
			if i+1 < len(dirs) && dirs[i+1] == "test" {
				return true
			}
		}
	}
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	switch ext {
	case ".go":
		return strings.HasSuffix(stem, "_test")
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || stem == "tests"
	case ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") || strings.HasSuffix(stem, "_test")
	case ".rb":
		return strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_spec")
	case ".rs", ".java", ".kt", ".scala", ".c", ".cc", ".cpp":
		return strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") || strings.HasPrefix(stem, "test_")
	}
	return false
}
