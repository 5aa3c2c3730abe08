package verify

import (
	"reflect"
	"testing"
)

func TestSupportPython(t *testing.T) {
	calc := "def add(a, b):\n    return a + b\n"
	runSupportCases(t, []supportCase{{
		name: "an assertion helper, and the code under test",
		files: map[string]string{
			"calc.py":      calc,
			"helpers.py":   "def assert_equal(a, b):\n    if a != b:\n        raise ValueError(a)\n",
			"test_calc.py": "import calc\nfrom helpers import assert_equal\n\ndef test_add():\n    assert_equal(calc.add(1, 2), 3)\n",
		},
		want: map[string]SupportRole{"helpers.py": RoleSupport, "calc.py": RoleCode},
		why:  map[string]string{"helpers.py": "defines assert_equal, imported only by tests (Python)"},
	}, {
		name: "a module no test is named after is undecided",
		files: map[string]string{
			"calc.py":      calc,
			"compare.py":   "def same(a, b):\n    return a == b\n",
			"test_calc.py": "import calc\nimport compare\n",
		},
		want: map[string]SupportRole{"compare.py": RoleUndecided, "calc.py": RoleCode},
		why:  map[string]string{"compare.py": "imported only by tests (test_calc.py)"},
	}, {
		name: "a package shadows a same-named module",
		files: map[string]string{
			"calc.py":             calc,
			"compare.py":          "def same(a, b):\n    return a == b\n",
			"compare/__init__.py": "from .deep import same\n",
			"compare/deep.py":     "def same(a, b):\n    return True\n",
			"test_calc.py":        "import calc\nfrom compare import same\n",
		},
		want: map[string]SupportRole{"compare/__init__.py": RoleUndecided, "compare/deep.py": RoleUndecided, "compare.py": RoleCode},
	}, {
		name: "framework imports and support names mark support even when code reaches them",
		files: map[string]string{
			"app.py":             "#!/usr/bin/env python3\nimport checks\nimport mypkg.testing\n",
			"checks.py":          "import unittest\n",
			"mypkg/__init__.py":  "",
			"mypkg/testing.py":   "def same(a, b):\n    return a == b\n",
			"tests/test_app.py":  "import checks\nfrom mypkg import testing\n",
			"tests/conftest.py":  "import plugin_lib\n",
			"plugin_lib.py":      "import pytest\n",
			"mypkg/untouched.py": "x = 1\n",
		},
		want: map[string]SupportRole{
			"checks.py": RoleSupport, "mypkg/testing.py": RoleSupport, "plugin_lib.py": RoleSupport,
			"mypkg/__init__.py": RoleCode, "mypkg/untouched.py": RoleCode, "app.py": RoleCode,
		},
		why: map[string]string{"checks.py": "imports unittest", "mypkg/testing.py": "support-named (testing.py)"},
	}, {
		name: "a framework a function imports does not mark code",
		files: map[string]string{
			"lib/__init__.py":   "from .backends import run\n",
			"lib/backends.py":   "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n\ndef run(x):\n    if x:\n        import pytest\n        pytest.xfail('no')\n",
			"lib/skips.py":      "def skip():\n    import pytest\n    pytest.skip()\n",
			"lib/top.py":        "try:\n    import pytest\nexcept ImportError:\n    pytest = None\n",
			"tests/test_lib.py": "import lib\nfrom lib import skips, top\n",
		},
		want: map[string]SupportRole{"lib/backends.py": RoleCode, "lib/skips.py": RoleSupport, "lib/top.py": RoleSupport},
		why:  map[string]string{"lib/skips.py": "imports pytest in a function"},
	}, {
		name: "code roots: a main guard, packaging entry points, a test named after it",
		files: map[string]string{
			"pyproject.toml":         "[project]\nname = \"tool\"\n\n[project.scripts]\ntool = \"src_tool.cli:main\"\n\n[project.entry-points.pytest11]\nmine = \"src_tool.plugin\"\n",
			"src_tool/plugin.py":     "from . import lenient\n",
			"src_tool/lenient.py":    "x = 1\n",
			"src_tool/__init__.py":   "",
			"src_tool/cli.py":        "from . import engine\n",
			"src_tool/engine.py":     "def verify_input(x):\n    return x\n",
			"runner.py":              "import shared\n\nif __name__ == \"__main__\":\n    shared.go()\n",
			"shared.py":              "def go():\n    pass\n",
			"validate.py":            "def check_range(x):\n    return 0 <= x\n",
			"tests/test_validate.py": "from validate import check_range\nimport shared\nfrom src_tool import engine\n",
		},
		want: map[string]SupportRole{
			"src_tool/engine.py": RoleCode, "shared.py": RoleCode, "validate.py": RoleCode,
			"src_tool/plugin.py": RoleSupport, "src_tool/lenient.py": RoleUndecided, "src_tool/__init__.py": RoleCode,
		},
		why: map[string]string{"src_tool/plugin.py": "pytest11"},
	}, {
		// urllib3's ssl_.py: production code defines assertion-shaped
		// names. A test imports it, the code reaches it: undecided (a
		// second protected run), not code and not support.
		name: "an assertion helper the code reaches and a test imports is undecided",
		files: map[string]string{
			"lib/__init__.py":          "from . import conn\n",
			"lib/conn.py":              "from .ssl_ import assert_fingerprint\n",
			"lib/ssl_.py":              "def assert_fingerprint(cert, fp):\n    raise ValueError(fp)\n",
			"lib/http2.py":             "x = 1\n",
			"tests/test_conn.py":       "from lib import conn\nfrom lib.ssl_ import assert_fingerprint\n",
			"tests/test_http2_pool.py": "import lib.http2\n",
		},
		want: map[string]SupportRole{"lib/ssl_.py": RoleUndecided, "lib/http2.py": RoleCode, "lib/__init__.py": RoleCode, "lib/conn.py": RoleCode},
		why:  map[string]string{"lib/ssl_.py": "assertion helper that tests and code both load (defines assert_fingerprint) (Python)"},
	}, {
		name: "an assertion-shaped name in code only the code loads is code",
		files: map[string]string{
			"lib/__init__.py":    "from . import conn\n",
			"lib/conn.py":        "from .ssl_ import assert_fingerprint\n",
			"lib/ssl_.py":        "def assert_fingerprint(cert, fp):\n    raise AssertionError(fp)\n",
			"tests/test_conn.py": "from lib import conn\n",
		},
		want: map[string]SupportRole{"lib/ssl_.py": RoleCode, "lib/conn.py": RoleCode},
	}, {
		name: "relative imports in a test package",
		files: map[string]string{
			"pkg/__init__.py":             "",
			"pkg/core.py":                 "x = 1\n",
			"pkg/tests/__init__.py":       "",
			"pkg/tests/test_core.py":      "from .. import core\nfrom ..support_lib import assert_close\n",
			"pkg/support_lib/__init__.py": "from .impl import assert_close\n",
			"pkg/support_lib/impl.py":     "def assert_close(a, b):\n    raise AssertionError(a)\n",
		},
		want: map[string]SupportRole{
			"pkg/core.py": RoleCode, "pkg/support_lib/__init__.py": RoleUndecided, "pkg/support_lib/impl.py": RoleSupport,
		},
	}, {
		name: "a computed import makes its area undecided",
		files: map[string]string{
			"calc.py":               calc,
			"plugins/__init__.py":   "",
			"plugins/a.py":          "x = 1\n",
			"plugins/b.py":          "x = 2\n",
			"tests/test_calc.py":    "import calc\n",
			"tests/test_plugins.py": "import importlib\n\ndef test_load(name):\n    importlib.import_module(name)\n",
			"docs/conf.py":          "project = 'x'\n",
		},
		want: map[string]SupportRole{
			"plugins/a.py": RoleUndecided, "plugins/b.py": RoleUndecided, "docs/conf.py": RoleUndecided, "calc.py": RoleCode,
		},
		why: map[string]string{"plugins/a.py": "tests/test_plugins.py loads modules by a computed name (Python)"},
	}, {
		name: "a literal import_module and a docstring import are followed as written",
		files: map[string]string{
			"calc.py":      calc,
			"lenient.py":   "x = 1\n",
			"unused.py":    "x = 1\n",
			"test_calc.py": "\"\"\"import unused\"\"\"\nimport importlib\ncalc = importlib.import_module('calc')\nimportlib.import_module(\"lenient\")\n# import unused\n",
		},
		want: map[string]SupportRole{"lenient.py": RoleUndecided, "unused.py": RoleCode, "calc.py": RoleCode},
	}, {
		name:     "pytest's pythonpath, PYTHONPATH and type stubs",
		commands: []string{"PYTHONPATH=vendored pytest"},
		files: map[string]string{
			"pytest.ini":          "[pytest]\npythonpath =\n    helpers_dir\n",
			"helpers_dir/eqx.py":  "def same(a, b):\n    return True\n",
			"helpers_dir/eqx.pyi": "def same(a: int, b: int) -> bool: ...\n",
			"vendored/cmpx.py":    "x = 1\n",
			"tests/test_a.py":     "import eqx\nimport cmpx\n",
		},
		want: map[string]SupportRole{"helpers_dir/eqx.py": RoleUndecided, "helpers_dir/eqx.pyi": RoleUndecided, "vendored/cmpx.py": RoleUndecided},
	}, {
		name: "sys.path changes are dynamic",
		files: map[string]string{
			"lib/a.py":         "x = 1\n",
			"tests/test_a.py":  "import sys\nsys.path.insert(0, 'lib')\nimport a\n",
			"tests/helpers.py": "x = 1\n",
		},
		want: map[string]SupportRole{"lib/a.py": RoleUndecided},
		why:  map[string]string{"lib/a.py": "changes sys.path"},
	}})
}

func TestSupportParsePython(t *testing.T) {
	src := "import os, a.b as c\nfrom .m import (x,\n    y)\nfrom ... import z\ntry: import fast\nexcept ImportError: import slow\npytest_plugins = ['p.one', \"p.two\"]\ns = 'import fake'\n"
	f := parsePython(src)
	want := []pyLoad{
		{mod: "os"}, {mod: "a.b"}, {level: 1, mod: "m", names: []string{"x", "y"}}, {level: 3, names: []string{"z"}},
		{mod: "fast"}, {mod: "slow"}, {mod: "p.one"}, {mod: "p.two"},
	}
	if !reflect.DeepEqual(f.imports, want) {
		t.Errorf("imports\n%+v\nwant\n%+v", f.imports, want)
	}
	if f.dynamic != "" || f.main {
		t.Errorf("dynamic %q main %v", f.dynamic, f.main)
	}
	if g := parsePython("if __name__ == '__main__':\n    main()\n"); !g.main {
		t.Error("main guard not seen")
	}
	if g := parsePython("mod = __import__(name)\n"); g.dynamic == "" {
		t.Error("__import__(name) not dynamic")
	}
}

func TestSupportPythonTestData(t *testing.T) {
	calc := "def add(a, b):\n    return a + b\n"
	joined := "import json, os\nimport calc\n\nCASES = json.load(open(os.path.join(os.path.dirname(__file__), \"cases\", \"add.json\")))\n"
	runSupportCases(t, []supportCase{{
		name: "a test reads its cases from a directory it joins",
		files: map[string]string{
			"calc.py":        calc,
			"test_calc.py":   joined,
			"cases/add.json": "[[1, 2, 3]]",
			"cases/sub.json": "[[3, 2, 1]]",
			"docs/notes.txt": "x",
		},
		// cases/ holds no code: the test may read any file in it.
		want: map[string]SupportRole{"cases/add.json": RoleSupport, "cases/sub.json": RoleSupport, "calc.py": RoleCode, "docs/notes.txt": RoleCode},
		why:  map[string]string{"cases/add.json": "read by test_calc.py (test data)"},
	}, {
		name: "a path from the root, and one above the test's directory",
		files: map[string]string{
			"calc.py":                "def add(a, b):\n    return a + b\n",
			"tests/test_a.py":        "import json\nimport calc\n\nwith open('cases/add.json') as f:\n    CASES = json.load(f)\n",
			"cases/add.json":         "[]",
			"pkg/__init__.py":        "",
			"pkg/core.py":            "x = 1\n",
			"pkg/data/table.csv":     "a,b",
			"pkg/t/test_core.py":     "import os\nfrom pkg import core\n\nP = os.path.join(os.path.dirname(__file__), '..', 'data', 'table.csv')\n",
			"pkg/data/unrelated.csv": "c",
		},
		want: map[string]SupportRole{"cases/add.json": RoleSupport, "pkg/data/table.csv": RoleSupport, "pkg/data/unrelated.csv": RoleSupport, "pkg/core.py": RoleCode},
		why:  map[string]string{"cases/add.json": "read by tests/test_a.py (test data)", "pkg/data/table.csv": "read by pkg/t/test_core.py"},
	}, {
		name: "what the code names too is code",
		files: map[string]string{
			"calc.py":           "import json, os\n\nRATES = json.load(open(os.path.join(os.path.dirname(__file__), 'tables', 'rates.json')))\n\ndef add(a, b):\n    return a + b\n",
			"test_calc.py":      "import json\nimport calc\n\nRATES = json.load(open('tables/rates.json'))\nEXTRA = open('tables/extra.json')\n",
			"tables/rates.json": "{}",
			"tables/extra.json": "{}",
		},
		// calc.py names the directory: every file in it may be the code's.
		want: map[string]SupportRole{"tables/rates.json": RoleCode, "tables/extra.json": RoleCode, "calc.py": RoleCode},
	}, {
		name: "source code a test names is left to its language's rules",
		files: map[string]string{
			"calc.py":      calc,
			"tool/run.rb":  "puts 1\n",
			"tool/VERSION": "1.0",
			"calc":         "binary",
			"test_calc.py": "import subprocess\nimport calc\n\nsubprocess.run(['python', 'calc.py'])\nsubprocess.run(['ruby', 'tool/run.rb'])\nsubprocess.run(['./calc'])\nV = open('tool/VERSION').read()\n",
		},
		want: map[string]SupportRole{"calc.py": RoleCode, "tool/run.rb": RoleCode, "calc": RoleCode, "tool/VERSION": RoleSupport},
	}, {
		name: "a helper that reads the cases",
		files: map[string]string{
			"calc.py":         calc,
			"helpers.py":      "import json\n\ndef load():\n    return json.load(open('golden/add.json'))\n\ndef assert_equal(a, b):\n    assert a == b\n",
			"test_calc.py":    "import calc\nfrom helpers import load, assert_equal\n",
			"golden/add.json": "[]",
		},
		want: map[string]SupportRole{"helpers.py": RoleSupport, "golden/add.json": RoleSupport},
		why:  map[string]string{"golden/add.json": "read by helpers.py (test data)"},
	}})
}

func TestSupportPythonHelpers(t *testing.T) {
	runSupportCases(t, []supportCase{{
		name: "an assert helper the code uses too is undecided",
		files: map[string]string{
			"num.py":       "def close(a, b):\n    return abs(a - b) < 1e-9\n\ndef assert_close(a, b):\n    assert close(a, b), (a, b)\n",
			"calc.py":      "import num\n\ndef check_input(x):\n    return x\n\ndef add(a, b):\n    return a + b if not num.close(a, -b) else 0\n",
			"test_calc.py": "import calc\nfrom num import assert_close\n\ndef test_add():\n    assert_close(calc.add(1, 2), 3)\n",
		},
		// calc.py is what test_calc.py tests: its checker does not count.
		want: map[string]SupportRole{"num.py": RoleUndecided, "calc.py": RoleCode},
		why:  map[string]string{"num.py": "assertion helper that tests and code both load (defines assert_close) (Python)"},
	}, {
		name: "raising AssertionError, and code no test imports",
		files: map[string]string{
			"guard.py":     "def ok(x):\n    if not x:\n        raise AssertionError(x)\n",
			"deep.py":      "def assert_sane(x):\n    return x\n",
			"calc.py":      "import guard, deep\n\ndef add(a, b):\n    guard.ok(a)\n    return a + b\n",
			"test_calc.py": "import calc\nimport guard\n",
		},
		want: map[string]SupportRole{"guard.py": RoleUndecided, "deep.py": RoleCode, "calc.py": RoleCode},
		why:  map[string]string{"guard.py": "(raises AssertionError) (Python)"},
	}, {
		name: "the module a test is named after stays code, whatever it defines",
		files: map[string]string{
			"validate.py":      "def assert_valid(x):\n    if not x:\n        raise AssertionError(x)\n",
			"app.py":           "#!/usr/bin/env python3\nimport validate\n",
			"test_validate.py": "from validate import assert_valid\n\ndef test_ok():\n    assert_valid(1)\n",
		},
		want: map[string]SupportRole{"validate.py": RoleCode, "app.py": RoleCode},
	}, {
		// Production code defines checkers (check_*, verify_*) and private
		// helpers: they count when a test that imports the module calls one.
		name: "checkers count when a test calls them",
		files: map[string]string{
			"lib/__init__.py":    "",
			"lib/calc.py":        "from . import rules, parse, inner\n",
			"lib/rules.py":       "def check_range(x):\n    return 0 <= x < 10\n",
			"lib/parse.py":       "def verify_token(t):\n    return bool(t)\n\ndef _assert_ok(x):\n    pass\n",
			"lib/inner.py":       "def outer():\n    def assert_inner(x):\n        pass\n    return assert_inner\n",
			"tests/test_calc.py": "from lib import calc, rules, parse, inner\n\ndef test_range():\n    assert rules.check_range(3)\n",
		},
		want: map[string]SupportRole{"lib/rules.py": RoleUndecided, "lib/parse.py": RoleCode, "lib/inner.py": RoleCode, "lib/calc.py": RoleCode},
		why:  map[string]string{"lib/rules.py": "(defines check_range) (Python)"},
	}})
}
