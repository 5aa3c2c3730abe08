package verify

import "testing"

func TestIsTestPath(t *testing.T) {
	for p, want := range map[string]bool{
		"calc/calc_test.go": true, "calc/calc.go": false, "calc/testdata/x.json": true,
		"tests/test_a.py": true, "pkg/test_a.py": true, "pkg/a_test.py": true, "pkg/a.py": false, "conftest.py": true, "sub/conftest.py": true,
		"src/a.test.ts": true, "src/a.spec.js": true, "src/__tests__/a.js": true, "src/a.ts": false,
		"jest.config.js": true, "vitest.config.ts": true, "package.json": true, "web/package.json": true,
		"Makefile": true, "test.sh": true, "pytest.ini": true, "tox.ini": true, ".ultra/config": true,
		"tests/integration.rs": true, "src/lib.rs": false, "src/test/java/AppTest.java": true, "src/main/java/App.java": false,
		"README.md": false, "go.mod": false, "latest.go": false, "contest.py": false, "attest.go": false,
	} {
		if got := IsTestPath(p); got != want {
			t.Errorf("IsTestPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestIsTestConfig(t *testing.T) {
	for p, want := range map[string]bool{
		"conftest.py": true, "tests/unit/conftest.py": true, "pyproject.toml": true, ".npmrc": true, "jest.setup.ts": true,
		"web/vitest.config.mts": true, "Makefile": true, "tests/test_a.py": false, "calc_test.go": false, "main.go": false,
	} {
		if got := IsTestConfig(p); got != want {
			t.Errorf("IsTestConfig(%q) = %v, want %v", p, got, want)
		}
	}
}
