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
		name: "an assertion-shaped name in code the project's code loads is code",
		files: map[string]string{
			"lib/__init__.py":          "from . import conn\n",
			"lib/conn.py":              "from .ssl_ import assert_fingerprint\n",
			"lib/ssl_.py":              "def assert_fingerprint(cert, fp):\n    raise ValueError(fp)\n",
			"lib/http2.py":             "x = 1\n",
			"tests/test_conn.py":       "from lib import conn\nfrom lib.ssl_ import assert_fingerprint\n",
			"tests/test_http2_pool.py": "import lib.http2\n",
		},
		want: map[string]SupportRole{"lib/ssl_.py": RoleCode, "lib/http2.py": RoleCode, "lib/__init__.py": RoleCode},
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
