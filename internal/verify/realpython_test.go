package verify

// Small real Python projects that use pytest without a pytest section
// (detected by their requirements, tox, setup.py, Pipfile, conftest.py
// below the root, or pytest imports), run with the pytest this machine
// has; which pytest works (Debian's pytest-3 only, none at all); and a
// unittest project with pytest-looking files where no tool looks.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realPytestTests are plain pytest tests: unittest finds none of them.
const realPytestTests = `def test_add():
    assert 1 + 1 == 2


def test_sub():
    assert 3 - 1 == 5, "subtraction is broken"


def test_mul():
    assert 2 * 3 == 6
`

func TestRealPytestSignals(t *testing.T) {
	t.Parallel()
	needPytest(t)
	for _, tc := range []struct {
		name    string
		files   map[string]string
		reason  string
		failing string
	}{
		{"test-requirements.txt", map[string]string{
			"setup.py": "from setuptools import setup\nsetup(name='calc')\n", "test-requirements.txt": "mock\npytest>=7\n",
			"tests/__init__.py": "", "tests/test_calc.py": realPytestTests,
		}, "pytest in test-requirements.txt", "tests/test_calc.py::test_sub (tests/test_calc.py:6)"},
		{"requirements dir with an include", map[string]string{
			"pyproject.toml": "[project]\nname = \"calc\"\n", "requirements/dev.txt": "-r test.in\nblack\n", "requirements/test.in": "pytest\n",
			"test/test_calc.py": realPytestTests,
		}, "pytest in requirements/test.in (included by requirements/dev.txt)", "test/test_calc.py::test_sub (test/test_calc.py:6)"},
		{"tox commands", map[string]string{
			"tox.ini":            "[tox]\nenvlist = py3\n\n[testenv]\ndeps = -rrequirements.txt\ncommands =\n    python -m pytest {posargs}\n",
			"requirements.txt":   "requests\n",
			"tests/test_calc.py": realPytestTests,
		}, "tox.ini [testenv] commands run pytest", "tests/test_calc.py::test_sub (tests/test_calc.py:6)"},
		{"tox multi-line deps", map[string]string{
			"setup.py": "", "tox.ini": "[testenv]\ndeps =\n    mock\n    pytest\ncommands = coverage run\n",
			"tests/test_calc.py": realPytestTests,
		}, "pytest in tox.ini [testenv] deps", "tests/test_calc.py::test_sub (tests/test_calc.py:6)"},
		{"dependency groups", map[string]string{
			"pyproject.toml":     "[project]\nname = \"calc\"\n\n[dependency-groups]\ntest = [\n    \"pytest>=8\",\n]\n",
			"tests/test_calc.py": realPytestTests,
		}, "pytest in pyproject.toml [dependency-groups] test", "tests/test_calc.py::test_sub (tests/test_calc.py:6)"},
		{"setup.py extras", map[string]string{
			"setup.py":           "from setuptools import setup\nsetup(name='calc', extras_require={'test': ['pytest', 'mock']})\n",
			"tests/test_calc.py": realPytestTests,
		}, "setup.py names pytest (extras_require)", "tests/test_calc.py::test_sub (tests/test_calc.py:6)"},
		{"Pipfile", map[string]string{
			"Pipfile":            "[packages]\nrequests = \"*\"\n\n[dev-packages]\npytest = \"*\"\n",
			"tests/test_calc.py": realPytestTests,
		}, "pytest in Pipfile [dev-packages]", "tests/test_calc.py::test_sub (tests/test_calc.py:6)"},
		// Under unittest with a python without pytest, this module fails
		// to import: every test lost.
		{"pytest imported", map[string]string{
			"setup.py": "",
			"tests/test_calc.py": "import pytest\n\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_pos(n):\n    assert n > 0\n\n\n" +
				"def test_sub():\n    with pytest.raises(ValueError):\n        int('3')\n",
		}, "tests/test_calc.py imports pytest", "tests/test_calc.py::test_sub (tests/test_calc.py:10)"},
		// A fixture from a conftest.py deep in the tree.
		{"conftest below the root", map[string]string{
			"pyproject.toml":                 "[project]\nname = \"calc\"\n",
			"src/calc/__init__.py":           "",
			"src/calc/tests/conftest.py":     "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n",
			"src/calc/tests/test_fixture.py": "def test_add(two):\n    assert two + two == 4\n\n\ndef test_sub(two):\n    assert two - 1 == 5\n\n\ndef test_mul(two):\n    assert two * 3 == 6\n",
		}, "src/calc/tests/conftest.py found", "src/calc/tests/test_fixture.py::test_sub (src/calc/tests/test_fixture.py:6)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := project(t, tc.files)
			res := verify(t, Request{Dir: dir})
			wantStatus(t, res, StatusFail)
			wantCounts(t, res, 2, 1, 0)
			wantFailing(t, res, tc.failing)
			prefix, why := pythonRunner(dir, "pytest")
			c := res.Commands[0]
			if c.Runner != "pytest" || c.Format != "junit" || !c.ReportOK || !strings.HasPrefix(c.Command, prefix+" -q --junitxml=") {
				t.Errorf("runner %q, command %q, format %q, report %v", c.Runner, c.Command, c.Format, c.ReportOK)
			}
			wantReason(t, res, tc.reason, why)
		})
	}
}

// pythonWithoutPytest writes into bin a python3 that is the real one
// without its site directories (so without an installed pytest).
func pythonWithoutPytest(t *testing.T, bin string) {
	t.Helper()
	real, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	writeFiles(t, bin, map[string]string{"python3": "#!/bin/sh\nexec " + shq(real) + " -S \"$@\"\n"})
	if err := os.Chmod(filepath.Join(bin, "python3"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func linkTools(t *testing.T, bin string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not installed", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
}

// Not parallel: PATH has only bash, a python3 without pytest and
// Debian's pytest-3 (as where python3 is pyenv's and python3-pytest is
// installed for /usr/bin/python3).
func TestRealPytestOnlyDebian(t *testing.T) {
	if _, err := os.Stat("/usr/bin/pytest-3"); err != nil {
		t.Skip("Debian's pytest-3 not installed (apt-get install python3-pytest)")
	}
	bin := t.TempDir()
	pythonWithoutPytest(t, bin)
	linkTools(t, bin, "bash", "sh")
	if err := os.Symlink("/usr/bin/pytest-3", filepath.Join(bin, "pytest-3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("PYTHONPATH", "")
	dir := project(t, map[string]string{"pytest.ini": "[pytest]\n", "tests/test_calc.py": realPytestTests})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 1, 0)
	wantFailing(t, res, "tests/test_calc.py::test_sub (tests/test_calc.py:6)")
	wantCommand(t, res, `pytest-3 -q --junitxml="$ULTRA_REPORT" -o junit_family=xunit1`, "junit")
	wantReason(t, res, "pytest.ini found, python3 has no pytest, the pytest-3 program does")
}

// Not parallel: nothing has pytest (the probes say so, and python3 on
// PATH really has none): not evaluated, with the install hint, never a
// failure.
func TestRealPytestMissing(t *testing.T) {
	bin := t.TempDir()
	pythonWithoutPytest(t, bin)
	linkTools(t, bin, "bash", "sh")
	t.Setenv("PATH", bin)
	t.Setenv("PYTHONPATH", "")
	fakeProbe(t, func(string) bool { return false })
	dir := project(t, map[string]string{"requirements-dev.txt": "pytest\n", "tests/test_calc.py": realPytestTests})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusNotEvaluated)
	wantCounts(t, res, 0, 0, 0)
	if !res.Commands[0].NotFound || !strings.Contains(res.Reason, "pytest is not installed (No module named pytest): pip install pytest, or apt-get install python3-pytest") {
		t.Errorf("reason %q, command %+v", res.Reason, res.Commands[0])
	}
	wantReason(t, res, "pytest in requirements-dev.txt, pytest does not seem to be installed")

	// Selecting tests changes nothing.
	res = verify(t, Request{Dir: dir, Only: []string{"tests/test_calc.py::test_sub"}})
	wantStatus(t, res, StatusNotEvaluated)
}

// A unittest project with pytest in places no tool looks at (a
// virtualenv, node_modules, .tox, a docs example, a pytest plugin) is run
// with unittest.
func TestRealUnittestWithoutPytestSignal(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	dir := project(t, map[string]string{
		"setup.py":         "from setuptools import setup\nsetup(name='calc', tests_require=['mock'])\n",
		"requirements.txt": "requests\npytest-cov\n",
		"tests/test_calc.py": `import unittest


class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_sub(self):
        self.assertEqual(3 - 1, 5)
`,
		".venv/pyvenv.cfg": "home = /usr/bin\n", ".venv/lib/python3/site-packages/x/conftest.py": "",
		"node_modules/pkg/test_pkg.py": "import pytest\n", ".tox/py3/conftest.py": "",
		"docs/example.py": "import pytest\n", "tests/data/fixture_test.txt": "import pytest\n",
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 1, 1, 0)
	wantFailing(t, res, "test_calc.TestCalc.test_sub (tests/test_calc.py:9)")
	wantCommand(t, res, "python3 -m unittest discover -v -s tests", "unittest")
	wantReason(t, res, "setup.py found, tests/ is not a package, no pytest configuration or other pytest signal")
}
