package verify

import "testing"

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
