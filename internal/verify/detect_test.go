package verify

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// detection is what a test expects of one Detected.
type detection struct {
	kind, runner, command, dir string
	reason                     string // a substring of Reason
}

func checkDetect(t *testing.T, dir string, want []detection) {
	t.Helper()
	got, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Detect found %d commands, want %d: %+v", len(got), len(want), got)
	}
	py, _ := pythonRunner(dir, "pytest")
	for i, w := range want {
		g := got[i]
		cmd := strings.ReplaceAll(w.command, "{pytest}", py)
		if g.Kind != w.kind || g.Runner != w.runner || g.Command != cmd || g.Dir != w.dir {
			t.Errorf("#%d = %s/%s %q in %q, want %s/%s %q in %q", i, g.Kind, g.Runner, g.Command, g.Dir, w.kind, w.runner, cmd, w.dir)
		}
		if !strings.Contains(g.Reason, w.reason) || !strings.Contains(g.Reason, "detection rule ") {
			t.Errorf("#%d reason = %q, want it to contain %q and the rule", i, g.Reason, w.reason)
		}
	}
}

// withTools makes installed say that the given tools are installed or
// not (the others as they are) until the test ends. Not in parallel tests:
// their subtests may run in parallel.
func withTools(t *testing.T, tools map[string]bool) {
	t.Helper()
	real := installed
	installed = func(name string) bool {
		if v, ok := tools[name]; ok {
			return v
		}
		return real(name)
	}
	t.Cleanup(func() { installed = real })
}

// allManagers: every package manager installed, corepack not.
var allManagers = map[string]bool{"npm": true, "npx": true, "yarn": true, "pnpm": true, "bun": true, "corepack": false}

// Not parallel: the package managers are faked (its subtests are).
func TestDetect(t *testing.T) {
	withTools(t, allManagers)
	const (
		jestJSON   = `npx --no-install jest --json --outputFile="$ULTRA_REPORT" --testLocationInResults`
		vitestArgs = `--reporter=default --reporter=junit --outputFile.junit="$ULTRA_REPORT"`
		mochaArgs  = `--reporter xunit --reporter-option output="$ULTRA_REPORT"`
		pytestCmd  = `{pytest} -q --junitxml="$ULTRA_REPORT" -o junit_family=xunit1`
		cmakeCmd   = `cmake --build build && ctest --test-dir build --output-on-failure --output-junit "$ULTRA_REPORT"`
	)
	pkg := func(script string) string { return `{"name": "x", "scripts": {"test": ` + script + `}}` }
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []detection
	}{
		{"empty", nil, nil},

		// Go
		{"go", map[string]string{"go.mod": goMod},
			[]detection{{"go", "go", goCommand, "", "go.mod at the root"}}},
		{"go several modules", map[string]string{
			"go.mod": goMod, "tools/go.mod": "module example.com/tools\n", "a/b/go.mod": "module example.com/ab\n",
			"vendor/x/go.mod": "module v\n", "testdata/go.mod": "module t\n", "node_modules/p/go.mod": "module n\n",
			".hidden/go.mod": "module h\n", "_old/go.mod": "module o\n",
		}, []detection{
			{"go", "go", goCommand, "", "go.mod at the root (one of 3 modules)"},
			{"go", "go", goCommand, "a/b", "go.mod in ./a/b (one of 3 modules)"},
			{"go", "go", goCommand, "tools", "go.mod in ./tools"},
		}},
		{"go.work", map[string]string{
			"go.work": "go 1.22\n\nuse (\n\t./api // the server\n\t./cli\n\t../outside\n)\nuse ./missing\n",
			"go.mod":  goMod, "api/go.mod": "module example.com/api\n", "cli/go.mod": "module example.com/cli\n",
		}, []detection{
			{"go", "go", goCommand, "api", "go.work uses ./api (one of 2 modules)"},
			{"go", "go", goCommand, "cli", "go.work uses ./cli"},
		}},
		{"go modules only below", map[string]string{"svc/go.mod": "module example.com/svc\n"},
			[]detection{{"go", "go", goCommand, "svc", "none at the root"}}},

		// Node
		{"npm lockfile, unknown runner", map[string]string{"package.json": pkg(`"tap test/*.js"`), "package-lock.json": "{}"},
			[]detection{{"node", "script", "npm test", "", "package.json scripts.test (npm, package-lock.json): runner not recognised"}}},
		{"pnpm", map[string]string{"package.json": pkg(`"ava"`), "pnpm-lock.yaml": ""},
			[]detection{{"node", "script", "pnpm test", "", "(pnpm, pnpm-lock.yaml)"}}},
		{"yarn", map[string]string{"package.json": pkg(`"ava"`), "yarn.lock": ""},
			[]detection{{"node", "script", "yarn test", "", "(yarn, yarn.lock)"}}},
		{"bun", map[string]string{"package.json": pkg(`"ava"`), "bun.lockb": ""},
			[]detection{{"node", "script", "bun run test", "", "(bun, bun.lockb)"}}},
		{"bun text lock", map[string]string{"package.json": pkg(`"ava"`), "bun.lock": ""},
			[]detection{{"node", "script", "bun run test", "", "(bun, bun.lock)"}}},
		{"packageManager field", map[string]string{"package.json": `{"packageManager": "pnpm@9.1.0", "scripts": {"test": "ava"}}`},
			[]detection{{"node", "script", "pnpm test", "", "(pnpm, packageManager field)"}}},
		{"jest exactly", map[string]string{"package.json": pkg(`"jest"`)},
			[]detection{{"node", "jest", jestJSON, "", "the script is exactly jest, run directly"}}},
		{"jest with args", map[string]string{"package.json": pkg(`"jest --runInBand src"`)},
			[]detection{{"node", "jest", `npx --no-install jest --runInBand src --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "run directly"}}},
		{"jest after a build", map[string]string{"package.json": pkg(`"tsc && jest --coverage"`)},
			[]detection{{"node", "jest", `npm test -- --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "runs jest, through npm"}}},
		{"jest with pretest", map[string]string{"package.json": `{"scripts": {"pretest": "tsc", "test": "jest"}}`},
			[]detection{{"node", "jest", `npm test -- --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "through npm"}}},
		{"jest with env", map[string]string{"package.json": pkg(`"cross-env NODE_ENV=test jest"`)},
			[]detection{{"node", "jest", `npm test -- --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "through npm"}}},
		{"jest not last", map[string]string{"package.json": pkg(`"jest && eslint ."`)},
			[]detection{{"node", "script", "npm test", "", "jest is not the script's last command"}}},
		{"jest-junit", map[string]string{"package.json": pkg(`"jest"`), "node_modules/jest-junit/package.json": "{}"},
			[]detection{{"node", "jest", `JEST_JUNIT_OUTPUT_FILE="$ULTRA_REPORT" JEST_JUNIT_CLASSNAME='{filepath}' JEST_JUNIT_TITLE='{classname} > {title}' JEST_JUNIT_ANCESTOR_SEPARATOR=' > ' JEST_JUNIT_ADD_FILE_ATTRIBUTE=true JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true npx --no-install jest --reporters=default --reporters=jest-junit`, "", "jest-junit installed"}}},
		{"vitest", map[string]string{"package.json": pkg(`"vitest run"`)},
			[]detection{{"node", "vitest", "npx --no-install vitest run " + vitestArgs, "", "exactly vitest"}}},
		{"vitest via pnpm without node_modules", map[string]string{"package.json": pkg(`"vitest"`), "pnpm-lock.yaml": ""},
			[]detection{{"node", "vitest", "pnpm test --run " + vitestArgs, "", "through pnpm"}}},
		{"vitest via pnpm installed", map[string]string{"package.json": pkg(`"vitest"`), "pnpm-lock.yaml": "", "node_modules/.bin/vitest": ""},
			[]detection{{"node", "vitest", "npx --no-install vitest run " + vitestArgs, "", "run directly"}}},
		{"mocha", map[string]string{"package.json": pkg(`"mocha 'test/**/*.js'"`)},
			[]detection{{"node", "mocha", "npx --no-install mocha 'test/**/*.js' " + mochaArgs, "", "exactly mocha"}}},
		{"mocha under nyc", map[string]string{"package.json": pkg(`"nyc mocha"`)},
			[]detection{{"node", "mocha", "npm test -- " + mochaArgs, "", "runs mocha, through npm"}}},
		{"node --test", map[string]string{"package.json": pkg(`"node --test"`)},
			[]detection{{"node", "node-test", "node --test --test-reporter=tap", "", "exactly node --test"}}},
		{"node --test with files", map[string]string{"package.json": pkg(`"node --experimental-vm-modules --test test/"`)},
			[]detection{{"node", "node-test", "node --experimental-vm-modules --test --test-reporter=tap test/", "", "run directly"}}},
		{"node --test after build", map[string]string{"package.json": pkg(`"tsc && node --test dist/"`)},
			[]detection{{"node", "node-test", `NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--test-reporter=tap" npm test`, "", "through npm"}}},
		{"node --test own reporter", map[string]string{"package.json": pkg(`"node --test --test-reporter=spec"`)},
			[]detection{{"node", "script", "npm test", "", "node --test with its own --test-reporter, output read as text"}}},
		// The runner behind the package managers' wrappers.
		{"yarn jest", map[string]string{"package.json": pkg(`"yarn jest"`), "yarn.lock": "", "node_modules/.bin/jest": ""},
			[]detection{{"node", "jest", jestJSON, "", "(yarn, yarn.lock): the script runs jest through `yarn jest`, run directly"}}},
		{"yarn jest without node_modules", map[string]string{"package.json": pkg(`"yarn jest"`), "yarn.lock": ""},
			[]detection{{"node", "jest", `yarn test --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "runs jest through `yarn jest`, through yarn"}}},
		{"yarn run jest --ci", map[string]string{"package.json": pkg(`"yarn run jest --ci"`)},
			[]detection{{"node", "jest", `npx --no-install jest --ci --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "through `yarn run jest --ci`, run directly"}}},
		{"yarn runs a script", map[string]string{"package.json": `{"scripts": {"test": "yarn unit --bail", "unit": "mocha test/"}}`},
			[]detection{{"node", "mocha", "npx --no-install mocha test/ --bail " + mochaArgs, "", "mocha through `yarn unit --bail`, run directly"}}},
		{"npm run jest", map[string]string{"package.json": `{"scripts": {"test": "npm run jest", "jest": "jest --ci"}}`},
			[]detection{{"node", "jest", `npx --no-install jest --ci --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "",
				"the script runs jest through `npm run jest`, run directly (arguments cannot reach it through the script: `npm run` passes no arguments on without --)"}}},
		{"npm run jest with pretest", map[string]string{"package.json": `{"scripts": {"pretest": "tsc", "test": "npm run jest", "jest": "jest --ci"}}`},
			[]detection{{"node", "script", "npm test", "", "the script runs jest through `npm run jest` but arguments cannot reach it (`npm run` passes no arguments on without --), and it cannot run directly; output read as text"}}},
		{"npm run jest with prejest", map[string]string{"package.json": `{"scripts": {"test": "npm run jest", "prejest": "tsc", "jest": "jest"}}`},
			[]detection{{"node", "script", "npm test", "", "arguments cannot reach it"}}},
		{"npm run jest --", map[string]string{"package.json": `{"scripts": {"pretest": "tsc", "test": "npm run jest -- --ci", "jest": "jest"}}`},
			[]detection{{"node", "jest", `npm test -- --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "runs jest through `npm run jest -- --ci`, through npm"}}},
		{"npm run two levels", map[string]string{"package.json": `{"scripts": {"test": "npm run unit --", "unit": "npm run jest -- --ci", "jest": "jest"}}`},
			[]detection{{"node", "jest", jestJSON[:len("npx --no-install jest")] + ` --ci --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "`npm run unit --`, then `npm run jest -- --ci`, run directly"}}},
		{"npm test calls itself", map[string]string{"package.json": `{"scripts": {"test": "npm run a", "a": "npm run b", "b": "npm test"}}`},
			[]detection{{"node", "script", "npm test", "", "runner not recognised"}}},
		{"scripts too deep", map[string]string{"package.json": `{"scripts": {"test": "npm run a", "a": "npm run b", "b": "npm run c", "c": "npm run d", "d": "npm run e", "e": "npm run f", "f": "jest"}}`},
			[]detection{{"node", "script", "npm test", "", "runner not recognised"}}},
		{"npm exec without --", map[string]string{"package.json": pkg(`"npm exec jest"`)},
			[]detection{{"node", "jest", jestJSON, "", "`npm exec` passes no options on without --"}}},
		{"pnpm vitest run", map[string]string{"package.json": pkg(`"pnpm vitest run"`), "pnpm-lock.yaml": "", "node_modules/.bin/vitest": ""},
			[]detection{{"node", "vitest", "npx --no-install vitest run " + vitestArgs, "", "vitest through `pnpm vitest run`, run directly"}}},
		{"pnpm exec vitest", map[string]string{"package.json": pkg(`"pnpm exec vitest"`), "pnpm-lock.yaml": "", "node_modules/.bin/vitest": ""},
			[]detection{{"node", "vitest", "npx --no-install vitest run " + vitestArgs, "", "run directly"}}},
		{"pnpm exec vitest through pnpm", map[string]string{"package.json": pkg(`"pnpm exec vitest"`), "pnpm-lock.yaml": ""},
			[]detection{{"node", "vitest", "pnpm test --run " + vitestArgs, "", "through pnpm"}}},
		{"npx jest", map[string]string{"package.json": pkg(`"npx jest --ci"`)},
			[]detection{{"node", "jest", `npx --no-install jest --ci --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "jest through `npx jest --ci`, run directly"}}},
		{"bunx vitest", map[string]string{"package.json": pkg(`"bunx vitest"`), "bun.lockb": "", "node_modules/.bin/vitest": ""},
			[]detection{{"node", "vitest", "npx --no-install vitest run " + vitestArgs, "", "(bun, bun.lockb): the script runs vitest through `bunx vitest`, run directly"}}},
		{"bun test is bun's", map[string]string{"package.json": pkg(`"bun test"`), "bun.lockb": ""},
			[]detection{{"node", "script", "bun run test", "", "bun test is bun's own test runner, output read as text"}}},
		{"vitest --run", map[string]string{"package.json": pkg(`"vitest --run"`)},
			[]detection{{"node", "vitest", "npx --no-install vitest --run " + vitestArgs, "", "exactly vitest"}}},
		{"vitest watch", map[string]string{"package.json": pkg(`"vitest watch --dir src"`)},
			[]detection{{"node", "vitest", "npx --no-install vitest run --dir src " + vitestArgs, "", "exactly vitest"}}},
		{"vitest after a build", map[string]string{"package.json": pkg(`"tsc && vitest"`)},
			[]detection{{"node", "vitest", "npm test -- --run " + vitestArgs, "", "runs vitest, through npm"}}},
		{"vitest run after a build", map[string]string{"package.json": pkg(`"tsc && vitest run"`)},
			[]detection{{"node", "vitest", "npm test -- " + vitestArgs, "", "runs vitest, through npm"}}},
		{"cross-env through the script", map[string]string{"package.json": `{"scripts": {"test": "cross-env NODE_ENV=test npm run unit", "unit": "jest --ci"}}`},
			[]detection{{"node", "jest", `NODE_ENV=test npx --no-install jest --ci --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "run directly (arguments cannot reach it"}}},
		{"dotenv wraps", map[string]string{"package.json": pkg(`"dotenv -e .env.test -- jest"`)},
			[]detection{{"node", "jest", `npm test -- --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "runs jest, through npm"}}},
		{"jest started by node", map[string]string{"package.json": pkg(`"node --experimental-vm-modules node_modules/jest/bin/jest.js"`)},
			[]detection{{"node", "jest", `npm test -- --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "runs jest, through npm"}}},
		{"jest by node behind npm run", map[string]string{"package.json": `{"scripts": {"test": "npm run unit", "unit": "node --experimental-vm-modules node_modules/jest/bin/jest.js -i"}}`},
			[]detection{{"node", "jest", `node --experimental-vm-modules node_modules/jest/bin/jest.js -i --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "run directly"}}},
		{"node --test behind npm run", map[string]string{"package.json": `{"scripts": {"test": "npm run test:unit", "test:unit": "node --test test/"}}`},
			[]detection{{"node", "node-test", "node --test --test-reporter=tap test/", "", "node --test through `npm run test:unit`, run directly"}}},
		{"node --test with a require", map[string]string{"package.json": pkg(`"node -r ./setup.js --test"`)},
			[]detection{{"node", "node-test", "node -r ./setup.js --test --test-reporter=tap", "", "exactly node --test"}}},
		// Runners in more than one command: ultra's arguments would reach
		// the last only, its report would count one run of several.
		{"vitest twice, cli-wrapper.js", map[string]string{"package.json": pkg(`"node --expose-gc ./node_modules/vitest/dist/cli-wrapper.js --run && vitest --run --typecheck.only"`)},
			[]detection{{"node", "script", "npm test", "", "(npm, no lockfile): the script runs vitest twice (`node --expose-gc ./node_modules/vitest/dist/cli-wrapper.js --run`, `vitest --run --typecheck.only`): run as it is, every run's output read as text"}}},
		{"jest twice through pnpm run", map[string]string{"package.json": `{"scripts": {"test": "pnpm run test:nodejs && pnpm run test:edge", "test:nodejs": "jest --env node", "test:edge": "jest --env @edge-runtime/jest-environment"}}`, "pnpm-lock.yaml": "", "node_modules/.bin/jest": ""},
			[]detection{{"node", "script", "pnpm test", "", "(pnpm, pnpm-lock.yaml): the script runs jest twice (`jest --env node` through `pnpm run test:nodejs`; `jest --env @edge-runtime/jest-environment` through `pnpm run test:edge`): run as it is, every run's output read as text"}}},
		{"jest twice", map[string]string{"package.json": pkg(`"jest a && jest b"`)},
			[]detection{{"node", "script", "npm test", "", "the script runs jest twice (`jest a`, `jest b`): run as it is"}}},
		{"jest by its paths twice", map[string]string{"package.json": pkg(`"node_modules/.bin/jest unit && node --experimental-vm-modules node_modules/jest/bin/jest.js e2e"`)},
			[]detection{{"node", "script", "npm test", "", "the script runs jest twice (`node_modules/.bin/jest unit`, `node --experimental-vm-modules node_modules/jest/bin/jest.js e2e`)"}}},
		{"vitest and mocha", map[string]string{"package.json": pkg(`"tsc && vitest run && cross-env TZ=UTC mocha"`)},
			[]detection{{"node", "script", "npm test", "", "the script runs vitest and mocha (`vitest run`, `cross-env TZ=UTC mocha`)"}}},
		{"runner in pretest", map[string]string{"package.json": `{"scripts": {"pretest": "node --test test/unit", "test": "jest"}}`},
			[]detection{{"node", "script", "npm test", "", "the script runs node --test and jest (`node --test test/unit` through scripts.pretest; `jest`)"}}},
		{"runner in a called script's post script", map[string]string{"package.json": `{"scripts": {"test": "npm run unit --", "unit": "jest", "postunit": "jest -c e2e.config.js"}}`},
			[]detection{{"node", "script", "npm test", "", "the script runs jest twice (`jest` through `npm run unit --`; `jest -c e2e.config.js` through `npm run unit --`, then scripts.postunit)"}}},
		{"jest three times", map[string]string{"package.json": `{"scripts": {"test": "npm run a && npm run a && jest", "a": "jest"}}`},
			[]detection{{"node", "script", "npm test", "", "the script runs jest 3 times"}}},
		{"node --test twice, one with its own reporter", map[string]string{"package.json": pkg(`"node --test --test-reporter=spec a/ && node --test b/"`)},
			[]detection{{"node", "script", "npm test", "", "the script runs node --test twice"}}},
		{"concurrently", map[string]string{"package.json": pkg(`"concurrently \"jest\" \"vitest run\""`)},
			[]detection{{"node", "script", "npm test", "", "the script runs jest and vitest (`jest` through `concurrently \"jest\" \"vitest run\"`"}}},
		{"run-s", map[string]string{"package.json": `{"scripts": {"test": "run-s build test:*", "build": "tsc", "test:unit": "jest", "test:types": "vitest --typecheck.only", "test:unit:x": "mocha"}}`},
			[]detection{{"node", "script", "npm test", "", "the script runs vitest and jest (`vitest --typecheck.only` through `run-s build test:*`"}}},
		{"a runner run before the one reached", map[string]string{"package.json": `{"scripts": {"test": "npm run unit && npm run lint", "unit": "jest", "lint": "eslint ."}}`},
			[]detection{{"node", "script", "npm test", "", "jest is not the script's last command"}}},
		// Not runs: a runner asked something, a runner's name as an argument.
		{"jest --clearCache first", map[string]string{"package.json": pkg(`"jest --clearCache && jest --ci"`)},
			[]detection{{"node", "jest", `npm test -- --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "runs jest, through npm"}}},
		{"jest --listTests last", map[string]string{"package.json": pkg(`"vitest run && jest --listTests"`)},
			[]detection{{"node", "script", "npm test", "", "vitest is not the script's last command"}}},
		{"runner names that run nothing", map[string]string{"package.json": pkg(`"rimraf node_modules/.cache/jest && echo jest && tsc -p tsconfig.jest.json && jest"`)},
			[]detection{{"node", "jest", `npm test -- --json --outputFile="$ULTRA_REPORT" --testLocationInResults`, "", "runs jest, through npm"}}},
		{"vitest by cli-wrapper.js alone", map[string]string{"package.json": pkg(`"node ./node_modules/vitest/dist/cli-wrapper.js run"`)},
			[]detection{{"node", "vitest", "npm test -- " + vitestArgs, "", "runs vitest, through npm"}}},
		{"jest redirected", map[string]string{"package.json": pkg(`"jest 2>&1"`)},
			[]detection{{"node", "script", "npm test", "", "jest is not the script's last command (or its output is redirected)"}}},
		{"pnpm workspaces", map[string]string{"package.json": pkg(`"pnpm -r test"`), "pnpm-lock.yaml": ""},
			[]detection{{"node", "script", "pnpm test", "", "runner not recognised"}}},
		{"no test script", map[string]string{"package.json": `{"scripts": {"build": "tsc"}}`}, nil},
		{"placeholder", map[string]string{"package.json": `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`}, nil},
		{"bad json", map[string]string{"package.json": `{`}, nil},

		// Python
		{"pytest ini_options", map[string]string{"pyproject.toml": "[project]\nname='x'\n\n[tool.pytest.ini_options]\naddopts='-ra'\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pyproject.toml has [tool.pytest.ini_options]"}}},
		{"pytest dependency", map[string]string{"pyproject.toml": "[project.optional-dependencies]\ntest = [\"pytest>=7\", \"hypothesis\"]\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml [project.optional-dependencies] test"}}},
		{"poetry pytest dependency", map[string]string{"pyproject.toml": "[tool.poetry.group.dev.dependencies]\npytest = \"^8.0\"\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml [tool.poetry.group.dev.dependencies]"}}},
		{"pytest-cov is not pytest", map[string]string{"pyproject.toml": "[project]\ndependencies = [\"pytest-cov\"]\n"},
			[]detection{{"unittest", "unittest", "python3 -m unittest discover -v", "", "pyproject.toml found, no pytest configuration"}}},
		{"pytest.ini", map[string]string{"pytest.ini": "[pytest]\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest.ini found"}}},
		{"setup.cfg", map[string]string{"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\ntestpaths = tests\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "setup.cfg has [tool:pytest]"}}},
		{"tox.ini", map[string]string{"tox.ini": "[tox]\nenvlist = py3\n[pytest]\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "tox.ini has [pytest]"}}},
		{"conftest", map[string]string{"tests/conftest.py": ""},
			[]detection{{"pytest", "pytest", pytestCmd, "", "tests/conftest.py found"}}},
		{"requirements", map[string]string{"requirements-dev.txt": "black\npytest==8.1\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in requirements-dev.txt"}}},
		{"virtualenv", map[string]string{"pytest.ini": "", ".venv/bin/python": ""},
			[]detection{{"pytest", "pytest", `.venv/bin/python -m pytest -q --junitxml="$ULTRA_REPORT" -o junit_family=xunit1`, "", "virtualenv .venv/"}}},
		{"unittest", map[string]string{"setup.py": "", "tests/__init__.py": "", "tests/test_a.py": ""},
			[]detection{{"unittest", "unittest", "python3 -m unittest discover -v", "", "setup.py found"}}},
		{"unittest tests not a package", map[string]string{"tests/test_a.py": ""},
			[]detection{{"unittest", "unittest", "python3 -m unittest discover -v -s tests", "", "tests/ is not a package"}}},

		// pytest signals without a pytest section.
		{"test-requirements.txt", map[string]string{"setup.py": "", "test-requirements.txt": "mock\npytest>=7\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in test-requirements.txt"}}},
		{"requirements dir", map[string]string{"setup.py": "", "requirements/base.txt": "requests\n", "requirements/test.txt": "-r base.txt\nPyTest==8.0  # tests\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in requirements/test.txt"}}},
		{"requirements include", map[string]string{"requirements-dev.txt": "-r requirements/testing.in\n", "requirements/testing.in": "pytest\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in requirements/testing.in (included by requirements-dev.txt)"}}},
		{"requirements-dev.in", map[string]string{"requirements-dev.in": "pytest-cov\npytest\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in requirements-dev.in"}}},
		{"tox commands", map[string]string{"tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ndeps = -rrequirements.txt\ncommands =\n    python -m pytest {posargs}\n", "requirements.txt": "requests\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "tox.ini [testenv] commands run pytest"}}},
		{"tox py.test", map[string]string{"tox.ini": "[testenv:unit]\ncommands = py.test tests\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "tox.ini [testenv:unit] commands run pytest"}}},
		{"tox envpython", map[string]string{"tox.ini": "[testenv]\ncommands = {envpython} -m pytest\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "tox.ini [testenv] commands run pytest"}}},
		{"tox deps", map[string]string{"tox.ini": "[testenv]\ndeps =\n    mock\n    py3: pytest>=7\ncommands = {envpython} setup.py test\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in tox.ini [testenv] deps"}}},
		{"tox deps file", map[string]string{"tox.ini": "[testenv]\ndeps = -r{toxinidir}/ci/test-deps.txt\ncommands = coverage run\n", "ci/test-deps.txt": "pytest\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in ci/test-deps.txt (from tox.ini [testenv] deps)"}}},
		{"tox unittest", map[string]string{"setup.py": "", "tox.ini": "[testenv]\ndeps = pytest-cov\ncommands = python -m unittest\n"},
			[]detection{{"unittest", "unittest", "python3 -m unittest discover -v", "", "no pytest configuration"}}},
		{"dependency groups", map[string]string{"pyproject.toml": "[project]\nname = \"x\"\ndependencies = [\"requests\"]\n\n[dependency-groups]\ndev = [\n  \"ruff\",\n  \"pytest==8.1\",\n]\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml [dependency-groups] dev"}}},
		{"optional dependencies inline", map[string]string{"pyproject.toml": "[project]\nname = \"x\"\noptional-dependencies = { test = [\"pytest\"] }\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml [project] optional-dependencies"}}},
		{"pdm dev dependencies", map[string]string{"pyproject.toml": "[tool.pdm.dev-dependencies]\ntest = [\"pytest>=7\"]\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml [tool.pdm.dev-dependencies] test"}}},
		{"uv dev dependencies", map[string]string{"pyproject.toml": "[tool.uv]\ndev-dependencies = [\n    \"pytest~=8.0\",\n]\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml [tool.uv] dev-dependencies"}}},
		{"hatch environment", map[string]string{"pyproject.toml": "[tool.hatch.envs.test]\ndependencies = [\n  \"coverage\",\n  \"pytest\",\n]\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml [tool.hatch.envs.test] dependencies"}}},
		{"pyproject elsewhere", map[string]string{"pyproject.toml": "[tool.custom]\ntesters = ['pytest']\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml's dependencies"}}},
		{"legacy tox in pyproject", map[string]string{"pyproject.toml": "[tool.tox]\nlegacy_tox_ini = \"\"\"\n[testenv]\ncommands = py.test\n\"\"\"\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pyproject.toml's legacy_tox_ini [testenv] commands run pytest"}}},
		{"setup.py tests_require", map[string]string{"setup.py": "from setuptools import setup\nsetup(name='x', tests_require=['mock', 'pytest>=6'])\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "setup.py names pytest (tests_require)"}}},
		{"setup.py extras_require", map[string]string{"setup.py": "setup(\n    extras_require={\n        'test': [\"pytest\", 'coverage'],\n    },\n)\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "setup.py names pytest (extras_require)"}}},
		{"setup.cfg extras", map[string]string{"setup.cfg": "[metadata]\nname = x\n\n[options.extras_require]\ntesting =\n    pytest>=6\n    mock\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in setup.cfg [options.extras_require] testing"}}},
		{"Pipfile", map[string]string{"Pipfile": "[packages]\nrequests = \"*\"\n\n[dev-packages]\npytest = \"*\"\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in Pipfile [dev-packages]"}}},
		{"noxfile", map[string]string{"noxfile.py": "import nox\n\n@nox.session\ndef tests(session):\n    session.install('pytest')\n    session.run('pytest')\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "noxfile.py runs or installs pytest"}}},
		{"import pytest", map[string]string{"setup.py": "", "tests/test_a.py": "import os\nimport pytest\n\ndef test_a():\n    pass\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "tests/test_a.py imports pytest"}}},
		{"from pytest at the root", map[string]string{"calc_test.py": "from pytest import raises\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "calc_test.py imports pytest"}}},
		{"pytest decorator below", map[string]string{"pyproject.toml": "[project]\nname='x'\n", "tests/unit/api/test_api.py": "import json\n\n@pytest.fixture\ndef f():\n    pass\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "tests/unit/api/test_api.py imports pytest"}}},
		{"conftest below", map[string]string{"setup.py": "", "src/pkg/tests/conftest.py": "", "src/pkg/tests/test_a.py": ""},
			[]detection{{"pytest", "pytest", pytestCmd, "", "src/pkg/tests/conftest.py found"}}},
		{"not in dependencies, virtualenvs or hidden directories", map[string]string{
			"setup.py": "", "tests/test_a.py": "import unittest\n",
			".venv/lib/python3.11/site-packages/x/conftest.py": "", "venv2/pyvenv.cfg": "", "venv2/lib/test_x.py": "import pytest\n",
			"node_modules/p/test_n.py": "import pytest\n", ".tox/py3/conftest.py": "", "build/site-packages/conftest.py": "",
			"docs/example.py": "import pytest\n", "tests/helpers_test_data.txt": "import pytest\n",
		}, []detection{{"unittest", "unittest", "python3 -m unittest discover -v -s tests", "", "no pytest configuration"}}},
		{"deep conftest in a make project", map[string]string{"Makefile": "test:\n\t./run\n", "tools/gen/conftest.py": ""},
			[]detection{{"make", "make", "make test", "", "Makefile target test"}}},
		{"deep conftest in a python make project", map[string]string{"Makefile": "test:\n\tpytest\n", "setup.py": "", "lib/x/conftest.py": ""},
			[]detection{
				{"pytest", "pytest", pytestCmd, "", "lib/x/conftest.py found"},
				{"make", "make", "make test", "", "Makefile target test"},
			}},
		{"pytest plugins only", map[string]string{"setup.py": "", "requirements-test.txt": "pytest-cov\npytest_mock\n", "tests/test_a.py": "import pytest_mock\n"},
			[]detection{{"unittest", "unittest", "python3 -m unittest discover -v -s tests", "", "no pytest configuration"}}},

		// Others
		{"cargo", map[string]string{"Cargo.toml": "[package]\nname='x'\n"},
			[]detection{{"cargo", "cargo", "cargo test --no-fail-fast", "", "Cargo.toml found"}}},
		{"maven", map[string]string{"pom.xml": "<project/>"},
			[]detection{{"maven", "maven", "mvn -q -B test", "", "pom.xml found"}}},
		{"gradle", map[string]string{"build.gradle.kts": ""},
			[]detection{{"gradle", "gradle", "gradle test", "", "build.gradle.kts found, no wrapper"}}},
		{"gradle wrapper", map[string]string{"settings.gradle": "", "gradlew": ""},
			[]detection{{"gradle", "gradle", "./gradlew test", "", "with the Gradle wrapper"}}},
		{"cmake", map[string]string{"CMakeLists.txt": "project(x)\nenable_testing()\nadd_test(NAME a COMMAND a)\n", "build/CTestTestfile.cmake": ""},
			[]detection{{"cmake", "ctest", cmakeCmd, "", "CMakeLists.txt with tests"}}},
		{"cmake not configured", map[string]string{"CMakeLists.txt": "enable_testing()\n"}, nil},
		{"cmake without tests", map[string]string{"CMakeLists.txt": "project(x)\n", "build/CTestTestfile.cmake": ""}, nil},
		{"makefile", map[string]string{"Makefile": "all:\n\techo\ntest:\n\tgo test ./...\n"},
			[]detection{{"make", "make", "make test", "", "Makefile target test"}}},
		{"makefile check", map[string]string{"GNUmakefile": "check: all\n\t./run-tests\n"},
			[]detection{{"make", "make", "make check", "", "GNUmakefile target check"}}},
		{"makefile without test", map[string]string{"Makefile": "all:\n\techo test:\n"}, nil},

		// Order.
		{"all in order", map[string]string{
			"go.mod": goMod, "package.json": pkg(`"ava"`), "pytest.ini": "", "Cargo.toml": "", "pom.xml": "",
			"build.gradle": "", "Makefile": "test:\n", "setup.py": "",
			"CMakeLists.txt": "enable_testing()\n", "build/CTestTestfile.cmake": "",
		}, []detection{
			{"go", "go", goCommand, "", "detection rule 2 of 11"},
			{"node", "script", "npm test", "", "detection rule 3 of 11"},
			{"pytest", "pytest", pytestCmd, "", "detection rule 4 of 11"},
			{"cargo", "cargo", "cargo test --no-fail-fast", "", "detection rule 5 of 11"},
			{"maven", "maven", "mvn -q -B test", "", "detection rule 6 of 11"},
			{"gradle", "gradle", "gradle test", "", "detection rule 7 of 11"},
			{"cmake", "ctest", cmakeCmd, "", "detection rule 8 of 11"},
			{"make", "make", "make test", "", "detection rule 9 of 11"},
		}},
		{"unittest after make", map[string]string{"Makefile": "check:\n", "setup.py": "", "sub/go.mod": "module s\n"},
			[]detection{
				{"make", "make", "make check", "", "detection rule 9 of 11"},
				{"unittest", "unittest", "python3 -m unittest discover -v", "", "detection rule 10 of 11"},
				{"go", "go", goCommand, "sub", "detection rule 11 of 11"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkDetect(t, project(t, tc.files), tc.want)
		})
	}
}

func TestFirstGroup(t *testing.T) {
	t.Parallel()
	dir := project(t, map[string]string{"go.mod": goMod, "tools/go.mod": "module example.com/tools\n", "Makefile": "test:\n"})
	found, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := firstGroup(found)
	if len(g) != 2 || g[0].Dir != "" || g[1].Dir != "tools" || g[1].sel.mod != "example.com/tools" {
		t.Errorf("first group = %+v", g)
	}
	found, _ = Detect(project(t, map[string]string{"package.json": `{"scripts": {"test": "jest"}}`, "Makefile": "test:\n"}))
	if g := firstGroup(found); len(g) != 1 || g[0].Runner != "jest" {
		t.Errorf("first group = %+v", g)
	}
}

// Not parallel: it changes PATH to control which tools are installed.
func TestDetectInstalledTools(t *testing.T) {
	bin := t.TempDir()
	for _, tool := range []string{"uv", "poetry", "cargo-nextest", "pytest"} {
		writeFiles(t, bin, map[string]string{tool: "#!/bin/sh\n"})
		if err := os.Chmod(filepath.Join(bin, tool), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin) // no python3: the pytest program is used
	const args = ` -q --junitxml="$ULTRA_REPORT" -o junit_family=xunit1`
	checkDetect(t, project(t, map[string]string{"pytest.ini": "", "uv.lock": ""}),
		[]detection{{"pytest", "pytest", "uv run pytest" + args, "", "uv.lock and uv"}})
	checkDetect(t, project(t, map[string]string{"pytest.ini": "", "poetry.lock": ""}),
		[]detection{{"pytest", "pytest", "poetry run pytest" + args, "", "poetry.lock and poetry"}})
	checkDetect(t, project(t, map[string]string{"pytest.ini": ""}),
		[]detection{{"pytest", "pytest", "pytest" + args, "", "python3 has no pytest, the pytest program does"}})
	checkDetect(t, project(t, map[string]string{"Cargo.toml": ""}),
		[]detection{{"cargo", "nextest", "cargo nextest run --no-fail-fast", "", "cargo-nextest installed"}})
	checkDetect(t, project(t, map[string]string{"setup.py": "", "uv.lock": ""}),
		[]detection{{"unittest", "unittest", "uv run python -m unittest discover -v", "", "uv.lock and uv"}})

	// Nothing installed (not even Debian's /usr/bin/python3 with pytest):
	// uv.lock alone is not enough, and the command says pytest is missing.
	t.Setenv("PATH", t.TempDir())
	fakeProbe(t, func(string) bool { return false })
	checkDetect(t, project(t, map[string]string{"pytest.ini": "", "uv.lock": ""}),
		[]detection{{"pytest", "pytest", pytestMissing + args, "", "pytest does not seem to be installed (tried python3, python, pytest, pytest-3, py.test, /usr/bin/python3): pip install pytest, or apt-get install python3-pytest"}})
}

// fakeProbe makes commandWorks answer works(program) until the test ends.
// Not in parallel tests.
func fakeProbe(t *testing.T, works func(program string) bool) {
	t.Helper()
	real := commandWorks
	commandWorks = func(_, program string, _ ...string) bool { return works(program) }
	t.Cleanup(func() { commandWorks = real })
}

// Not parallel: it fakes which pythons and programs have pytest.
func TestPythonRunnerCandidates(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		works       []string
		prefix, why string
	}{
		{[]string{"python3", "pytest"}, "python3 -m pytest", ""},
		{[]string{"python", "pytest-3"}, "python -m pytest", "python3 has no pytest, python does"},
		{[]string{"pytest-3", "/usr/bin/python3"}, "pytest-3", "python3 has no pytest, the pytest-3 program does"},
		{[]string{"py.test"}, "py.test", "python3 has no pytest, the py.test program does"},
		{[]string{"/usr/bin/python3"}, "/usr/bin/python3 -m pytest", "python3 has no pytest, /usr/bin/python3 does"},
		{nil, pytestMissing, "pytest does not seem to be installed"},
	} {
		fakeProbe(t, func(p string) bool { return slices.Contains(tc.works, p) })
		prefix, why := pythonRunner(dir, "pytest")
		if prefix != tc.prefix || !strings.Contains(why, tc.why) || (tc.why == "" && why != "") {
			t.Errorf("with %q: %q (%s), want %q (%s)", tc.works, prefix, why, tc.prefix, tc.why)
		}
	}
	// unittest needs no probe; a virtualenv is never started to look.
	fakeProbe(t, func(p string) bool { t.Errorf("%s probed", p); return false })
	if prefix, _ := pythonRunner(dir, "unittest"); prefix != "python3 -m unittest" {
		t.Errorf("unittest: %q", prefix)
	}
	venv := project(t, map[string]string{".venv/bin/python": ""})
	if prefix, why := pythonRunner(venv, "pytest"); prefix != ".venv/bin/python -m pytest" || why != "virtualenv .venv/" {
		t.Errorf("virtualenv: %q (%s)", prefix, why)
	}
}

// The real probe: programs that do not start or exit non-zero do not work,
// and answers are cached.
func TestCommandWorks(t *testing.T) {
	t.Parallel()
	need(t, "sh")
	dir := t.TempDir()
	bin := project(t, map[string]string{"ok": "#!/bin/sh\nexit 0\n", "bad": "#!/bin/sh\nexit 1\n", "broken": "#!/nonexistent/python\n"})
	for _, f := range []string{"ok", "bad", "broken"} {
		if err := os.Chmod(filepath.Join(bin, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !commandWorks(dir, filepath.Join(bin, "ok"), "--version") {
		t.Error("ok does not work")
	}
	for _, p := range []string{filepath.Join(bin, "bad"), filepath.Join(bin, "broken"), filepath.Join(bin, "missing")} {
		if commandWorks(dir, p, "--version") {
			t.Errorf("%s works", p)
		}
	}
	// Cached: the program changing afterwards does not change the answer.
	writeFiles(t, bin, map[string]string{"ok": "#!/bin/sh\nexit 1\n"})
	if !commandWorks(dir, filepath.Join(bin, "ok"), "--version") {
		t.Error("answer not cached")
	}
}

// Not parallel: the package managers (and corepack's home) are faked.
func TestDetectNodeManagers(t *testing.T) {
	const jestArgs = `--json --outputFile="$ULTRA_REPORT" --testLocationInResults`
	home := t.TempDir()
	writeFiles(t, home, map[string]string{
		"v1/yarn/1.22.22/.corepack": "{}", "v1/pnpm/9.1.0/.corepack": "{}",
		"lastKnownGood.json": `{"yarn": "1.22.22", "pnpm": "8.0.0"}`,
	})
	t.Setenv("COREPACK_HOME", home)
	corepack := "COREPACK_ENABLE_NETWORK=0 COREPACK_HOME=" + shq(home) + " corepack "
	pkg := func(script string) string { return `{"name": "x", "scripts": {"test": ` + script + `}}` }
	none := map[string]bool{"npm": false, "npx": false, "yarn": false, "pnpm": false, "bun": false, "corepack": false}
	only := func(tools ...string) map[string]bool {
		m := maps.Clone(none)
		for _, tool := range tools {
			m[tool] = true
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		tools map[string]bool
		files map[string]string
		want  detection
	}{
		{"yarn missing: npm", only("npm", "npx"), map[string]string{"package.json": pkg(`"ava"`), "yarn.lock": ""},
			detection{"node", "script", "npm test", "", "(yarn.lock names yarn, which is not installed: npm runs the script): runner not recognised"}},
		{"yarn missing, jest after a build", only("npm", "npx"), map[string]string{"package.json": pkg(`"tsc && jest --ci"`), "yarn.lock": ""},
			detection{"node", "jest", "npm test -- " + jestArgs, "", "(yarn.lock names yarn, which is not installed: npm runs the script): runs jest, through npm"}},
		{"yarn missing, exactly jest", only("npm", "npx"), map[string]string{"package.json": pkg(`"jest"`), "yarn.lock": ""},
			detection{"node", "jest", "npx --no-install jest " + jestArgs, "", "which is not installed: npm runs the script): the script is exactly jest, run directly"}},
		{"pnpm missing: corepack has the field's version", only("npm", "npx", "corepack"),
			map[string]string{"package.json": `{"packageManager": "pnpm@9.1.0+sha512.abc", "scripts": {"test": "ava"}}`, "pnpm-lock.yaml": ""},
			detection{"node", "script", corepack + "pnpm test", "", "(pnpm-lock.yaml names pnpm, which is not installed: corepack runs pnpm 9.1.0 from its cache)"}},
		{"yarn missing: corepack has its last known good", only("npm", "npx", "corepack"), map[string]string{"package.json": pkg(`"tsc && mocha"`), "yarn.lock": ""},
			detection{"node", "mocha", corepack + `yarn test --reporter xunit --reporter-option output="$ULTRA_REPORT"`, "", "corepack runs yarn 1.22.22 from its cache): runs mocha, through yarn"}},
		{"corepack lacks the field's version", only("npm", "npx", "corepack"),
			map[string]string{"package.json": `{"packageManager": "yarn@4.1.0", "scripts": {"test": "ava"}}`, "yarn.lock": ""},
			detection{"node", "script", "npm test", "", "yarn.lock names yarn, which is not installed: npm runs the script"}},
		{"corepack lacks the last known good", only("npm", "npx", "corepack"), map[string]string{"package.json": pkg(`"ava"`), "pnpm-lock.yaml": ""},
			detection{"node", "script", "npm test", "", "pnpm-lock.yaml names pnpm, which is not installed: npm runs the script"}},
		{"corepack would refuse another manager", only("npm", "npx", "corepack"),
			map[string]string{"package.json": `{"packageManager": "pnpm@9.1.0", "scripts": {"test": "ava"}}`, "yarn.lock": ""},
			detection{"node", "script", "npm test", "", "yarn.lock names yarn, which is not installed: npm runs the script"}},
		{"corepack has no bun", only("npm", "npx", "corepack"), map[string]string{"package.json": pkg(`"ava"`), "bun.lockb": ""},
			detection{"node", "script", "npm test", "", "bun.lockb names bun, which is not installed: npm runs the script"}},
		{"packageManager field, pnpm missing", only("npm", "npx"), map[string]string{"package.json": `{"packageManager": "pnpm@9.1.0", "scripts": {"test": "ava"}}`},
			detection{"node", "script", "npm test", "", "(packageManager field names pnpm, which is not installed: npm runs the script)"}},
		{"no manager at all: the runner from node_modules/.bin", none, map[string]string{"package.json": pkg(`"vitest"`), "yarn.lock": "", "node_modules/.bin/vitest": ""},
			detection{"node", "vitest", `node_modules/.bin/vitest run --reporter=default --reporter=junit --outputFile.junit="$ULTRA_REPORT"`, "", "(yarn.lock names yarn, which is not installed, nor is npm): the script is exactly vitest, run directly"}},
		{"no manager, jest through yarn", none, map[string]string{"package.json": pkg(`"yarn jest --ci"`), "yarn.lock": ""},
			detection{"node", "jest", "node_modules/.bin/jest --ci " + jestArgs, "", "run directly (the script calls yarn, which is not installed)"}},
		{"no npm", only("yarn"), map[string]string{"package.json": pkg(`"ava"`)},
			detection{"node", "script", "npm test", "", "(no lockfile: npm, which is not installed)"}},
		{"the script calls a missing yarn", only("npm", "npx"), map[string]string{"package.json": pkg(`"yarn run jest --ci"`), "yarn.lock": ""},
			detection{"node", "jest", "npx --no-install jest --ci " + jestArgs, "", "yarn.lock names yarn, which is not installed: npm runs the script): the script runs jest through `yarn run jest --ci`, run directly (the script calls yarn, which is not installed)"}},
		{"the script calls a missing pnpm after a build", only("npm", "npx"), map[string]string{"package.json": pkg(`"tsc && pnpm vitest run"`), "pnpm-lock.yaml": ""},
			detection{"node", "vitest", `npm test -- --reporter=default --reporter=junit --outputFile.junit="$ULTRA_REPORT"`, "", "through npm; the script calls pnpm, which is not installed"}},
		{"bunx with bun missing", only("npm", "npx"), map[string]string{"package.json": pkg(`"bunx vitest"`), "bun.lock": ""},
			detection{"node", "vitest", `npx --no-install vitest run --reporter=default --reporter=junit --outputFile.junit="$ULTRA_REPORT"`, "", "run directly (the script calls bun, which is not installed)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withTools(t, tc.tools)
			checkDetect(t, project(t, tc.files), []detection{tc.want})
		})
	}
}

func TestAnalyseScript(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		script        string
		runner        string
		last, simple  bool
		args          string
		before, after string
	}{
		{"jest", "jest", true, true, "", "", ""},
		{"jest --ci src/", "jest", true, true, "--ci src/", "", ""},
		{"./node_modules/.bin/jest", "jest", true, true, "", "", ""},
		{"npx vitest run", "vitest", true, true, "run", "", ""},
		{"_mocha test", "mocha", true, true, "test", "", ""},
		{"jest > out.txt", "", false, false, "", "", ""},
		{"jest | tee out", "", false, false, "", "", ""},
		{"eslint . && jest", "jest", true, false, "", "", ""},
		{"jest; echo done", "", false, false, "", "", ""},
		{"jest-junit", "", false, false, "", "", ""},
		{"node --test", "node-test", true, true, "--test", "node --test", ""},
		{"node --test test/*.test.js", "node-test", true, true, "--test test/*.test.js", "node --test", " test/*.test.js"},
		{"node test.js --test", "", false, false, "", "", ""},
		{"react-scripts test", "", false, false, "", "", ""},
		// Quotes, escapes and comments as sh reads them.
		{`mocha "test/**/*.spec.js" --grep 'a|b'`, "mocha", true, true, `"test/**/*.spec.js" --grep 'a|b'`, "", ""},
		{`jest -t "a && b" # all`, "jest", true, true, `-t "a && b" # all`, "", ""},
		{`echo "it's" && jest`, "jest", true, false, "", "", ""},
		{`echo 'a; b' ; jest --ci`, "jest", true, false, "--ci", "", ""},
		{`jest "unbalanced`, "", false, false, "", "", ""},
		{"jest $(cat args)", "", false, false, "", "", ""},
		{"jest `cat args`", "", false, false, "", "", ""},
		{"(cd pkg && jest)", "", false, false, "", "", ""},
		{"jest &", "", false, false, "", "", ""},
		// Wrappers and launchers.
		{"cross-env NODE_ENV=test CI=1 jest", "jest", true, true, "", "", ""},
		{"NODE_OPTIONS=--max-old-space-size=4096 vitest run", "vitest", true, true, "run", "", ""},
		{"env FOO=1 mocha", "mocha", true, true, "", "", ""},
		{"env -i mocha", "", false, false, "", "", ""},
		{"nyc --reporter=lcov mocha", "mocha", true, false, "", "", ""},
		{"c8 node --test", "node-test", true, false, "--test", "", ""},
		{"npx -y jest", "jest", true, true, "", "", ""},
		{"npx -p jest-cli jest", "jest", true, true, "", "", ""},
		{"npx ./node_modules/.bin/jest", "", false, false, "", "", ""},
		{"npm exec -- jest --ci", "jest", true, true, "--ci", "", ""},
		{"npm exec jest", "jest", false, true, "", "", ""},
		{"pnpm exec vitest", "vitest", true, true, "", "", ""},
		{"pnpm dlx vitest", "vitest", true, true, "", "", ""},
		{"pnpm show jest", "", false, false, "", "", ""},
		{"yarn --silent jest", "jest", true, true, "", "", ""},
		{"yarn workspaces run test", "", false, false, "", "", ""},
		{"npm run unit --workspace=pkg", "", false, false, "", "", ""},
		{"pnpm --filter web vitest", "", false, false, "", "", ""},
		{"yarn --cwd web jest", "", false, false, "", "", ""},
		{"bun x vitest", "vitest", true, true, "", "", ""},
		{"bun run jest", "jest", true, true, "", "", ""},
		{"npm run jest", "", false, false, "", "", ""}, // no such script: npm runs no program
		{"node --experimental-vm-modules node_modules/jest/bin/jest.js --ci", "jest", true, true, "--ci", "", ""},
		{"node node_modules/.bin/mocha", "mocha", true, true, "", "", ""},
		{"node node_modules/vitest/vitest.mjs run", "vitest", true, true, "run", "", ""},
		{"node server.js", "", false, false, "", "", ""},
		{"NODE_ENV=test node --test", "node-test", true, true, "--test", "NODE_ENV=test node --test", ""},
		{`node "--test"`, "node-test", true, false, `"--test"`, "", ""},
	} {
		s := analyseScript(tc.script)
		if s.runner != tc.runner || s.last != tc.last || s.simple != tc.simple || s.args != tc.args || s.nodeBefore != tc.before || s.nodeAfter != tc.after {
			t.Errorf("analyseScript(%q) = %+v", tc.script, s)
		}
		if s.plain && !s.simple || s.last && !s.tail || s.runner == "" && (s.simple || s.last) {
			t.Errorf("analyseScript(%q): inconsistent %+v", tc.script, s)
		}
	}
}

// Scripts calling scripts: the runner behind them, whether arguments
// reach it, and whether it can run directly.
func TestAnalyseScripts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scripts        map[string]string
		runner         string
		last, simple   bool
		args, env      string
		calls          []string
		cut, elsewhere string
	}{
		{map[string]string{"test": "npm run unit", "unit": "jest --ci"}, "jest", false, true, "--ci", "", []string{"npm"}, "`npm run` passes no arguments on without --", ""},
		{map[string]string{"test": "npm run unit -- --ci", "unit": "jest"}, "jest", true, true, "--ci", "", []string{"npm"}, "", ""},
		{map[string]string{"test": "npm run -s unit --", "unit": "jest"}, "jest", true, true, "", "", []string{"npm"}, "", ""},
		{map[string]string{"test": "npm t"}, "", false, false, "", "", nil, "", ""},
		{map[string]string{"test": "yarn unit --ci", "unit": "cross-env TZ=UTC vitest"}, "vitest", true, true, "--ci", "TZ=UTC", []string{"yarn"}, "", ""},
		{map[string]string{"test": "pnpm run unit", "unit": "pnpm exec mocha"}, "mocha", true, true, "", "", []string{"pnpm"}, "", ""},
		{map[string]string{"test": "pnpm test:unit", "test:unit": "bunx jest"}, "jest", true, true, "", "", []string{"pnpm", "bun"}, "", ""},
		{map[string]string{"test": "npm run unit", "unit": "tsc && jest"}, "jest", false, false, "", "", []string{"npm"}, "`npm run` passes no arguments on without --", ""},
		{map[string]string{"test": "tsc && npm run unit --", "unit": "jest"}, "jest", true, false, "", "", []string{"npm"}, "", ""},
		{map[string]string{"test": "npm run unit --", "unit": "jest && eslint"}, "", false, false, "", "", nil, "", "jest"},
		{map[string]string{"test": "npm run unit --", "preunit": "tsc", "unit": "jest"}, "jest", true, false, "", "", []string{"npm"}, "", ""},
		{map[string]string{"test": "npm run a", "a": "npm run test"}, "", false, false, "", "", nil, "", ""},
		{map[string]string{"test": "npm run unit -w pkg", "unit": "jest"}, "", false, false, "", "", nil, "", ""},
		{map[string]string{"test": "npm run unit -- -w", "unit": "jest"}, "jest", true, true, "-w", "", []string{"npm"}, "", ""},
		{map[string]string{"test": "yarn test"}, "", false, false, "", "", nil, "", ""},
		{map[string]string{"test": "yarn jest", "jest": "jest --ci"}, "jest", true, true, "--ci", "", []string{"yarn"}, "", ""},
		{map[string]string{"test": "yarn unit", "unit": "node --test --test-reporter=spec"}, "", false, false, "", "", nil, "", ""},
	} {
		s := analyseScripts(tc.scripts, "test")
		if s.runner != tc.runner || s.last != tc.last || s.simple != tc.simple || s.args != tc.args || s.env != tc.env ||
			!slices.Equal(s.calls, tc.calls) || s.cut != tc.cut || s.elsewhere != tc.elsewhere {
			t.Errorf("analyseScripts(%q) = %+v", tc.scripts, s)
		}
	}
}

// The commands that run a test runner, over the scripts called and their
// pre and post scripts: more than one, and the script is read as text.
func TestAnalyseRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scripts   map[string]string
		runs      []string // the runners of runs (more than one command)
		runner    string   // else: the script's runner
		elsewhere string
	}{
		{map[string]string{"test": "node --expose-gc ./node_modules/vitest/dist/cli-wrapper.js --run && vitest --run --typecheck.only"}, []string{"vitest", "vitest"}, "", ""},
		{map[string]string{"test": "node node_modules/vitest/dist/cli.js run && node node_modules/jest-cli/bin/jest.js"}, []string{"vitest", "jest"}, "", ""},
		{map[string]string{"test": "pnpm run test:nodejs && pnpm run test:edge", "test:nodejs": "jest --env node", "test:edge": "jest"}, []string{"jest", "jest"}, "", ""},
		{map[string]string{"test": "yarn unit && yarn e2e", "unit": "vitest run", "e2e": "npm run e2e:run --", "e2e:run": "cross-env CI=1 mocha"}, []string{"vitest", "mocha"}, "", ""},
		{map[string]string{"test": "jest", "pretest": "jest --clearCache", "posttest": "vitest run"}, []string{"jest", "vitest"}, "", ""},
		{map[string]string{"test": "npm run a --", "a": "tsc && jest", "posta": "bun test"}, []string{"jest", "bun test"}, "", ""},
		{map[string]string{"test": "sh -c 'jest a && jest b'"}, []string{"jest", "jest"}, "", ""},
		{map[string]string{"test": "time jest && npx jest b"}, []string{"jest", "jest"}, "", ""},
		{map[string]string{"test": "concurrently npm:test:*", "test:a": "jest", "test:b": "mocha"}, []string{"jest", "mocha"}, "", ""},
		{map[string]string{"test": "npm-run-all -p test:**", "test:a": "jest", "test:a:b": "jest"}, []string{"jest", "jest"}, "", ""},
		{map[string]string{"test": "run-s 'test:*'", "test:a": "jest", "test:a:b": "jest"}, nil, "", "jest"},
		// One run: the script's runner, or one arguments cannot reach.
		{map[string]string{"test": "jest --showConfig > cfg.json && jest"}, nil, "jest", ""},
		{map[string]string{"test": "npm run a --", "a": "jest", "pretest": "eslint ."}, nil, "jest", ""},
		{map[string]string{"test": "jest && jest --version"}, nil, "", "jest"},
		{map[string]string{"test": "npm run a && eslint", "a": "npm run b", "b": "vitest run"}, nil, "", "vitest"},
		{map[string]string{"test": "git diff --exit-code && echo jest vitest && jest"}, nil, "jest", ""},
		// Cycles and depth: nothing followed twice, nor too deep.
		{map[string]string{"test": "npm run a && jest", "a": "npm run a"}, nil, "jest", ""},
		{map[string]string{"test": "npm run a && jest", "a": "npm run b", "b": "npm run c", "c": "npm run d", "d": "npm run e", "e": "npm run f", "f": "jest"}, nil, "jest", ""},
	} {
		s := analyseScripts(tc.scripts, "test")
		var runs []string
		for _, u := range s.runs {
			runs = append(runs, u.runner)
		}
		if !slices.Equal(runs, tc.runs) || s.runner != tc.runner || s.elsewhere != tc.elsewhere {
			t.Errorf("analyseScripts(%q): runs %q, runner %q, elsewhere %q; want %q, %q, %q", tc.scripts, runs, s.runner, s.elsewhere, tc.runs, tc.runner, tc.elsewhere)
		}
		if len(s.runs) > 0 && (s.runner != "" || s.simple || s.last || s.tail) {
			t.Errorf("analyseScripts(%q): runs and a runner: %+v", tc.scripts, s)
		}
	}

	// A script calling scripts that call scripts, many times each: each is
	// followed once per depth, and the runs counted are bounded.
	scripts := map[string]string{"test": strings.Repeat("npm run a && ", 200) + "jest"}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		next := string(rune(n[0] + 1))
		scripts[n] = strings.Repeat("npm run "+next+" && ", 200) + "vitest run"
	}
	start := time.Now()
	s := analyseScripts(scripts, "test")
	if len(s.runs) != maxUses || time.Since(start) > 5*time.Second {
		t.Errorf("%d runs in %s", len(s.runs), time.Since(start))
	}

	// Several runs: the whole script, read as text, which cannot select.
	dir := project(t, map[string]string{"package.json": `{"scripts": {"test": "vitest run a && vitest run b"}}`})
	ds, err := Detect(dir)
	if err != nil || len(ds) != 1 {
		t.Fatalf("Detect: %v, %+v", err, ds)
	}
	if d := ds[0]; d.Runner != "script" || d.Format != "auto" || d.canSelect() {
		t.Errorf("detected %+v", d)
	}
	if _, ok := ds[0].selectCommand([]string{"a.test.js > adds"}); ok {
		t.Error("a selection of a script running vitest twice")
	}
}

// The script analysis reads package.json from the tree: any script, any
// references between scripts, must not make it panic or loop.
func FuzzAnalyseScripts(f *testing.F) {
	for _, seed := range [][2]string{
		{"jest", ""}, {"npm run a", "npm run test"}, {"yarn a --ci", "cross-env X=1 vitest watch"},
		{`node -r x --test "a b"`, ""}, {`node '--test'`, ""}, {"npm exec -- jest", ""}, {`a 'b" && c`, "d\\"}, {"pnpm a", "pnpm a"},
		{"echo $(jest) `x` (y) 2>&1 |& z # c\n jest", "npx -p"}, {"npm run a --", "node node_modules/jest/bin/jest.js"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, test, a string) {
		s := analyseScripts(map[string]string{"test": test, "a": a, "pretest": "x"}, "test")
		if s.plain && !s.simple || s.last && !s.tail || s.runner == "" && (s.simple || s.last) {
			t.Errorf("inconsistent %+v", s)
		}
		if len(s.runs) == 1 || len(s.runs) > maxUses || len(s.runs) > 0 && (s.runner != "" || s.simple || s.last) {
			t.Errorf("inconsistent runs %+v", s)
		}
		if s.runner == "node-test" && s.simple && !strings.Contains(s.nodeBefore, "--test") {
			t.Errorf("node --test split wrong: %+v", s)
		}
		cmds, _ := shParse(test)
		for _, c := range cmds {
			for _, w := range c.words {
				if w.start < 0 || w.end > len(c.text) || w.start > w.end || c.text[w.start:w.end] != w.raw {
					t.Fatalf("word %+v out of %q", w, c.text)
				}
			}
		}
	})
}

// analyseScript analyses a test script that calls no other script.
func analyseScript(script string) nodeScript {
	return analyseScripts(map[string]string{"test": script}, "test")
}
