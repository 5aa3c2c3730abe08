package verify

import (
	"strings"
	"testing"
)

func TestSupportShell(t *testing.T) {
	runSupportCases(t, []supportCase{{
		name:     "test.sh sources a library",
		commands: []string{"sh test.sh"},
		files: map[string]string{
			"test.sh":      "#!/bin/sh\nset -e\n. ./lib.sh\nrun_tests\n",
			"lib.sh":       "run_tests() { go test ./...; }\n",
			"unrelated.sh": "echo hi\n",
		},
		want: map[string]SupportRole{"lib.sh": RoleSupport, "unrelated.sh": RoleCode},
		why:  map[string]string{"lib.sh": "sourced by test.sh"},
	}, {
		name:     "scripts find their own directory",
		commands: []string{"bash ci/run.sh"},
		files: map[string]string{
			"ci/run.sh":      "#!/usr/bin/env bash\nDIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\nsource \"$DIR/common.sh\"\n. \"${BASH_SOURCE%/*}/more.sh\"\nHERE=$(dirname \"$0\")\n\"$HERE/check\" --all\npython3 \"$DIR/gen.py\"\n",
			"ci/common.sh":   "source \"${LIBDIR:-ci/lib}/deep.sh\"\n",
			"ci/lib/deep.sh": "true\n",
			"ci/more.sh":     "true\n",
			"ci/check":       "#!/bin/sh\nexit 0\n",
			"ci/gen.py":      "import genlib\n",
			"ci/genlib.py":   "def make():\n    pass\n",
		},
		want: map[string]SupportRole{
			"ci/run.sh": RoleSupport, "ci/common.sh": RoleSupport, "ci/lib/deep.sh": RoleSupport, "ci/more.sh": RoleSupport,
			"ci/check": RoleSupport, "ci/gen.py": RoleSupport, "ci/genlib.py": RoleUndecided,
		},
		why: map[string]string{"ci/run.sh": "run by the test command `bash ci/run.sh`", "ci/check": "run by ci/run.sh", "ci/lib/deep.sh": "sourced by ci/common.sh"},
	}, {
		name:     "an unresolvable source makes the script's area undecided",
		commands: []string{"./test.sh"},
		files: map[string]string{
			"test.sh":      "#!/bin/sh\nfor f in lib/*.sh; do . \"$f\"; done\n",
			"lib/a.sh":     "true\n",
			"tools/b.bash": "true\n",
			"other.py":     "x = 1\n",
		},
		want: map[string]SupportRole{"lib/a.sh": RoleUndecided, "tools/b.bash": RoleUndecided, "other.py": RoleCode},
		why:  map[string]string{"lib/a.sh": "test.sh sources a computed path (shell)"},
	}, {
		name:     "bash -c, go run, command -v, wrappers",
		commands: []string{"bash -ec 'source ./env.sh && go test ./...'", "go run ./tools/gen.go", "command -v ./never.sh", "env CI=1 timeout 60 ./run.sh"},
		files: map[string]string{
			"env.sh":       "export X=1\n",
			"tools/gen.go": "package main\n\nfunc main() {}\n",
			"never.sh":     "true\n",
			"run.sh":       "true\n",
		},
		want: map[string]SupportRole{"env.sh": RoleSupport, "tools/gen.go": RoleSupport, "never.sh": RoleCode, "run.sh": RoleSupport},
	}, {
		name:     "paths outside the tree are not dynamic",
		commands: []string{"sh test.sh"},
		files: map[string]string{
			"test.sh":  ". \"$HOME/.cargo/env\"\n. ~/.profile\n",
			"lib/a.sh": "true\n",
		},
		want: map[string]SupportRole{"lib/a.sh": RoleCode},
	}})
}

// shLibTAP is a shell test library: the tests' checks.
const shLibTAP = "n=0\ncheck() { n=$((n+1)); [ \"$2\" = \"$3\" ] && echo \"ok $n\" || echo \"not ok $n\"; }\n"

func TestSupportShellTestRuns(t *testing.T) {
	calcSh := "#!/bin/sh\necho $(( $1 + $2 ))\n"
	runSupportCases(t, []supportCase{{
		name:     "what test.sh runs is the program under test; what it sources and what the recipe runs are support",
		commands: []string{"make test"},
		files: map[string]string{
			"Makefile":     "include test.mk\n\ntest:\n\t$(TEST_SHELL) test.sh | sh tools/tap.sh\n",
			"test.mk":      "TEST_SHELL = sh\n",
			"lib.sh":       shLibTAP,
			"test.sh":      "#!/bin/sh\n. ./lib.sh\ncheck add \"$(sh calc.sh 4 5)\" 9\ncheck add \"$(./calc.sh -4 1)\" -3\n",
			"calc.sh":      calcSh,
			"tools/tap.sh": "#!/bin/sh\nwhile read -r l; do echo \"$l\"; done\n",
		},
		want: map[string]SupportRole{"calc.sh": RoleCode, "lib.sh": RoleSupport, "tools/tap.sh": RoleSupport, "test.mk": RoleSupport},
		why:  map[string]string{"lib.sh": "sourced by test.sh", "tools/tap.sh": "run by Makefile (target test)"},
	}, {
		name:     "a recipe that runs test.sh: test.sh's programs in every form are code",
		commands: []string{"make check"},
		files: map[string]string{
			"Makefile":       "check:\n\tsh test.sh\n",
			"test.sh":        "set -e\nsh calc.sh 1 2 | grep -q 3\nbash ./bin/tool --version\nout=`./bin/other`\npython3 prog.py 1\nnode cli.js\nexec ./last.sh\n",
			"calc.sh":        calcSh,
			"bin/tool":       "#!/bin/sh\n. ./bin/toollib.sh\n",
			"bin/toollib.sh": "true\n",
			"bin/other":      "#!/bin/sh\ntrue\n",
			"prog.py":        "import sys\nprint(sys.argv)\n",
			"cli.js":         "console.log(1);\n",
			"last.sh":        "true\n",
		},
		want: map[string]SupportRole{"calc.sh": RoleCode, "bin/tool": RoleCode, "bin/toollib.sh": RoleCode, "bin/other": RoleCode, "prog.py": RoleCode, "cli.js": RoleCode, "last.sh": RoleCode},
	}, {
		name:     "what a test runs stays support when it is also sourced, run by the harness, or named or placed like support",
		commands: []string{"sh prep.sh && sh test.sh"},
		files: map[string]string{
			"test.sh":               ". ./both.sh\nsh both.sh\nsh prep.sh\nsh tools/tap-check.sh\n./scripts/test-setup.sh\nsh e2e/server.sh\n./run_helper.sh\nsh ci/db.sh\n./mocks/api.sh\nsh calc.sh\n",
			"both.sh":               "true\n",
			"prep.sh":               "true\n",
			"tools/tap-check.sh":    "true\n",
			"scripts/test-setup.sh": "true\n",
			"e2e/server.sh":         "true\n",
			"run_helper.sh":         "true\n",
			"ci/db.sh":              "true\n",
			"mocks/api.sh":          "true\n",
			"calc.sh":               calcSh,
		},
		want: map[string]SupportRole{
			"both.sh": RoleSupport, "prep.sh": RoleSupport, "tools/tap-check.sh": RoleSupport, "scripts/test-setup.sh": RoleSupport,
			"e2e/server.sh": RoleSupport, "run_helper.sh": RoleSupport, "ci/db.sh": RoleSupport, "mocks/api.sh": RoleSupport, "calc.sh": RoleCode,
		},
		why: map[string]string{
			"both.sh":               "sourced by test.sh",
			"prep.sh":               "run by the test command",
			"tools/tap-check.sh":    "run by test.sh, named like test support (tap-check.sh)",
			"scripts/test-setup.sh": "named like test support (test-setup.sh)",
			"e2e/server.sh":         "named like test support (e2e)",
			"run_helper.sh":         "named like test support (run_helper.sh)",
			"mocks/api.sh":          "named like test support (mocks)",
		},
	}, {
		// Only a test's own runs are the program: a library the tests
		// source is support, and so is what it runs (fail closed).
		name:     "what a sourced library or a harness script runs stays support",
		commands: []string{"bash ci/run.sh", "sh test.sh"},
		files: map[string]string{
			"test.sh":   ". ./lib.sh\nrun_calc 1 2\n",
			"lib.sh":    "run_calc() { sh ./calc.sh \"$@\"; }\n",
			"calc.sh":   calcSh,
			"ci/run.sh": "sh ./gen.sh\n",
			"gen.sh":    "true\n",
		},
		want: map[string]SupportRole{"lib.sh": RoleSupport, "calc.sh": RoleSupport, "gen.sh": RoleSupport},
		why:  map[string]string{"calc.sh": "run by lib.sh", "gen.sh": "run by ci/run.sh"},
	}, {
		name:     "tests under tests/ and *_test.sh: their programs are code, what they source support",
		commands: []string{"sh tests/run.sh && sh calc_test.sh"},
		files: map[string]string{
			"tests/run.sh":      "for t in tests/t_*.sh; do sh \"$t\"; done\n",
			"tests/t_add.sh":    ". \"$(dirname \"$0\")/../testlib/assert.sh\"\n\"$(dirname \"$0\")/../bin/calc\" 1 2\n",
			"calc_test.sh":      ". ./lib.sh\nsh ./calc.sh 1 2\n",
			"lib.sh":            shLibTAP,
			"testlib/assert.sh": "true\n",
			"bin/calc":          "#!/bin/sh\ntrue\n",
			"calc.sh":           calcSh,
		},
		want: map[string]SupportRole{"testlib/assert.sh": RoleSupport, "bin/calc": RoleCode, "calc.sh": RoleCode, "lib.sh": RoleSupport, "calc_test.sh": RoleSupport},
		why:  map[string]string{"testlib/assert.sh": "sourced by tests/t_add.sh", "lib.sh": "sourced by calc_test.sh"},
	}})
}

func TestSupportShellRunners(t *testing.T) {
	calcSh := "#!/bin/sh\necho $(( $1 + $2 ))\n"
	test := "#!/bin/sh\n. ./lib.sh\ncheck add \"$(sh calc.sh 4 5)\" 9\n"
	runSupportCases(t, []supportCase{{
		name:     "a runner's arguments: for t in \"$@\" reaches test.sh and what it sources",
		commands: []string{"make test"},
		files: map[string]string{
			"Makefile":        "test:\n\tsh tools/runner.sh test.sh\n",
			"tools/runner.sh": "status=0\nfor t in \"$@\"; do\n\tsh \"$t\" || status=1\ndone\nexit $status\n",
			"test.sh":         test,
			"lib.sh":          shLibTAP,
			"calc.sh":         calcSh,
			"tools/other.sh":  "true\n",
		},
		want: map[string]SupportRole{"tools/runner.sh": RoleSupport, "lib.sh": RoleSupport, "calc.sh": RoleCode, "tools/other.sh": RoleCode},
		why:  map[string]string{"lib.sh": "sourced by test.sh", "tools/runner.sh": "run by Makefile (target test)"},
	}, {
		name:     "positional parameters: $1, shift, \"$@\" as a command, for t; set --",
		commands: []string{"./ci/go.sh env/a.sh ./b.sh tools/c.sh", "sh ci/each.sh env/d.sh env/e.sh", "sh ci/set.sh"},
		files: map[string]string{
			"ci/go.sh":    "#!/bin/sh\n. \"$1\"\nshift\n\"$@\"\n",
			"ci/each.sh":  "for t; do . \"./$t\"; done\n",
			"ci/set.sh":   "set -- env/f.sh\n. \"${1:-env/none.sh}\"\n",
			"env/a.sh":    "true\n",
			"b.sh":        "true\n",
			"tools/c.sh":  "true\n",
			"env/d.sh":    "true\n",
			"env/e.sh":    "true\n",
			"env/f.sh":    "true\n",
			"env/none.sh": "true\n",
		},
		want: map[string]SupportRole{"env/a.sh": RoleSupport, "b.sh": RoleSupport, "tools/c.sh": RoleCode, "env/d.sh": RoleSupport, "env/e.sh": RoleSupport, "env/f.sh": RoleSupport, "env/none.sh": RoleCode},
		why:  map[string]string{"env/a.sh": "sourced by ci/go.sh", "b.sh": "run by ci/go.sh", "env/e.sh": "sourced by ci/each.sh"},
	}, {
		// The runner's loop cannot be followed: its area is undecided,
		// and the tests are walked as roots all the same.
		name:     "a runner whose argument cannot be resolved: the tests are roots, the area undecided",
		commands: []string{"sh run.sh"},
		files: map[string]string{
			"run.sh":       "for t in $(find . -name '*_test.sh'); do sh \"$t\"; done\n",
			"calc_test.sh": test,
			"lib.sh":       shLibTAP,
			"calc.sh":      calcSh,
			"other.sh":     "true\n",
		},
		want: map[string]SupportRole{"lib.sh": RoleSupport, "calc.sh": RoleCode, "other.sh": RoleUndecided, "calc_test.sh": RoleSupport},
		why:  map[string]string{"lib.sh": "sourced by calc_test.sh", "other.sh": "run.sh runs a computed path (shell)", "calc_test.sh": "a shell test (by its name)"},
	}, {
		name:     "a function's parameters are not the script's",
		commands: []string{"sh ci/fn.sh ci/env/a.sh"},
		files: map[string]string{
			"ci/fn.sh":    "load() { . \"$1\"; }\nload ci/env/a.sh\n",
			"ci/env/a.sh": "true\n",
			"env/b.sh":    "true\n",
		},
		want: map[string]SupportRole{"ci/env/a.sh": RoleUndecided, "env/b.sh": RoleCode},
		why:  map[string]string{"ci/env/a.sh": "ci/fn.sh sources a computed path (shell)"},
	}, {
		name:     "shell tests nothing runs are roots; data and dependencies are not",
		commands: []string{"go test ./..."},
		files: map[string]string{
			"tests/cli.sh":           "#!/bin/sh\nDIR=$(cd \"$(dirname \"$0\")\" && pwd)\n. \"$DIR/../scripts/assert.sh\"\n\"$DIR/../bin/calc\" 1 2\n",
			"scripts/assert.sh":      "true\n",
			"bin/calc":               "#!/bin/sh\ntrue\n",
			"testdata/gen_test.sh":   ". ./data.sh\n",
			"data.sh":                "true\n",
			"node_modules/x/test.sh": ". ./dep.sh\n",
			"node_modules/x/dep.sh":  "true\n",
			"tests/expected":         "not a script (\n",
			"tests/sibling.sh":       ". ./lib/here.sh\n",
			"tests/lib/here.sh":      "true\n",
		},
		want: map[string]SupportRole{"scripts/assert.sh": RoleSupport, "bin/calc": RoleCode, "data.sh": RoleCode, "node_modules/x/dep.sh": RoleCode},
		why:  map[string]string{"scripts/assert.sh": "sourced by tests/cli.sh"},
	}})
}

// TestSupportBats reads .bats files (given in full: SupportReads does not
// ask for them).
func TestSupportBats(t *testing.T) {
	files := map[string]string{
		"calc.bats":           "load helpers/common\n\n@test \"adds\" {\n  run ./calc.sh 2 3\n  [ \"$output\" = 5 ]\n}\n\n@test \"twice\" {\n  run bash \"$BATS_TEST_DIRNAME/calc.sh\" 1 1\n}\n",
		"helpers/common.bash": "assert_ok() { [ \"$status\" -eq 0 ]; }\n",
		"calc.sh":             "echo $(( $1 + $2 ))\n",
		"unit/more.bats":      "load '../helpers/other'\n@test \"x\" { true; }\n",
		"helpers/other.bash":  "true\n",
		"helpers/unused.bash": "true\n",
	}
	in := SupportInput{Files: map[string][]byte{}, Commands: []string{"bats calc.bats"}}
	for p, src := range files {
		in.Paths = append(in.Paths, p)
		in.Files[p] = []byte(src)
	}
	got := map[string]SupportFile{}
	for _, f := range ClassifySupport(in) {
		got[f.Path] = f
	}
	for p, want := range map[string]string{"helpers/common.bash": "sourced by calc.bats", "helpers/other.bash": "sourced by unit/more.bats", "calc.bats": "run by the test command", "unit/more.bats": "a shell test"} {
		if f, ok := got[p]; !ok || f.Role != RoleSupport || !strings.Contains(f.Why, want) {
			t.Errorf("%s: %+v, want support (%s)", p, f, want)
		}
	}
	for _, p := range []string{"calc.sh", "helpers/unused.bash"} {
		if f, ok := got[p]; ok {
			t.Errorf("%s: %+v, want code", p, f)
		}
	}
}

func TestSupportMake(t *testing.T) {
	runSupportCases(t, []supportCase{{
		name:     "includes and the recipes of the target and its prerequisites",
		commands: []string{"make test"},
		files: map[string]string{
			"Makefile":          "include test.mk\n-include $(wildcard mk/*.mk)\nSCRIPTS := ./scripts\n\n.PHONY: test lint\ntest: build\n\t@$(SCRIPTS)/check.sh\n\t$(MAKE) -C sub unit\n\nbuild:\n\tsh scripts/build.sh\n\nlint:\n\t./scripts/lint.sh\n",
			"test.mk":           "CHECK = yes\n",
			"mk/extra.mk":       "X = 1\n",
			"scripts/check.sh":  "#!/bin/sh\n. scripts/common.sh\n",
			"scripts/common.sh": "true\n",
			"scripts/build.sh":  "go build ./...\n",
			"scripts/lint.sh":   "golangci-lint run\n",
			"sub/Makefile":      "unit:\n\tnode run-unit.js\n",
			"sub/run-unit.js":   "require('./harness');\n",
			"sub/harness.js":    "exports.assertAll = () => {};\n",
		},
		want: map[string]SupportRole{
			"test.mk": RoleSupport, "mk/extra.mk": RoleSupport, "scripts/check.sh": RoleSupport, "scripts/common.sh": RoleSupport,
			"scripts/build.sh": RoleSupport, "scripts/lint.sh": RoleCode, "sub/run-unit.js": RoleSupport, "sub/harness.js": RoleSupport,
		},
		why: map[string]string{
			"test.mk":          "included by Makefile",
			"scripts/check.sh": "run by Makefile (target test)",
			"scripts/build.sh": "run by Makefile (target build)",
			"sub/run-unit.js":  "run by sub/Makefile (target unit)",
		},
	}, {
		name:     "the default target, and a target no rule makes",
		commands: []string{"make", "make -f build/ci.mk check"},
		files: map[string]string{
			"Makefile":    "all: ; ./a.sh\nother:\n\t./b.sh\n",
			"a.sh":        "true\n",
			"b.sh":        "true\n",
			"build/ci.mk": "%:\n\t./c.sh $@\n",
			"c.sh":        "true\n",
		},
		want: map[string]SupportRole{"a.sh": RoleSupport, "b.sh": RoleCode, "build/ci.mk": RoleSupport, "c.sh": RoleSupport},
		why:  map[string]string{"build/ci.mk": "read by the test command `make -f build/ci.mk check`"},
	}, {
		name:     "a computed include",
		commands: []string{"make test"},
		files: map[string]string{
			"Makefile": "include $(shell ls mk)\ntest:\n\ttrue\n",
			"mk/a.mk":  "X = 1\n",
		},
		want: map[string]SupportRole{"mk/a.mk": RoleUndecided},
	}})
}

func TestSupportPackageScripts(t *testing.T) {
	runSupportCases(t, []supportCase{{
		name:     "npm test runs scripts and the files they name",
		commands: []string{"npm test", "yarn lint:ci"},
		files: map[string]string{
			"package.json":        `{"scripts":{"pretest":"node scripts/prepare.mjs","test":"npm run unit && mocha --require ./test-env.js","unit":"jest --config ./jest.ci.config.js","lint:ci":"sh ./scripts/lint.sh","build":"node scripts/build.js"}}`,
			"scripts/prepare.mjs": "import './shared.mjs';\n",
			"scripts/shared.mjs":  "export const x = 1;\n",
			"test-env.js":         "process.env.X = '1';\n",
			"jest.ci.config.js":   "module.exports = { setupFiles: ['./setup/env.js'] };\n",
			"setup/env.js":        "global.x = 1;\n",
			"scripts/lint.sh":     "true\n",
			"scripts/build.js":    "console.log(1);\n",
		},
		want: map[string]SupportRole{
			"scripts/prepare.mjs": RoleSupport, "scripts/shared.mjs": RoleUndecided, "test-env.js": RoleSupport,
			"jest.ci.config.js": RoleSupport, "setup/env.js": RoleSupport, "scripts/lint.sh": RoleSupport, "scripts/build.js": RoleCode,
		},
		why: map[string]string{
			"scripts/prepare.mjs": `run by package.json script "pretest"`,
			"test-env.js":         `package.json script "test"`,
			"setup/env.js":        "named in jest.ci.config.js",
		},
	}, {
		name:     "tox environments' commands",
		commands: []string{"tox -e py311"},
		files: map[string]string{
			"tox.ini":         "[tox]\nenvlist = py311\n\n[testenv]\ndeps = pytest\ncommands =\n    python scripts/prep.py\n    pytest {posargs}\n",
			"scripts/prep.py": "print(1)\n",
		},
		want: map[string]SupportRole{"scripts/prep.py": RoleSupport},
		why:  map[string]string{"scripts/prep.py": "run by tox.ini [testenv]"},
	}, {
		name:     "python test drivers and pytest plugins",
		commands: []string{"python3 -m pytest -p tests.plugin -c ci/pytest.ini", "python -m tools.runtests"},
		files: map[string]string{
			"tests/plugin.py":   "import lenient\n",
			"lenient.py":        "def check(a, b):\n    return True\n",
			"ci/pytest.ini":     "[pytest]\n",
			"tools/__init__.py": "",
			"tools/runtests.py": "import sys\n",
		},
		want: map[string]SupportRole{"lenient.py": RoleSupport, "tools/runtests.py": RoleSupport, "tools/__init__.py": RoleUndecided},
	}})
}
