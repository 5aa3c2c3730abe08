package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func TestDetect(t *testing.T) {
	t.Parallel()
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
			[]detection{{"node", "vitest", "pnpm test " + vitestArgs, "", "through pnpm"}}},
		{"vitest via pnpm installed", map[string]string{"package.json": pkg(`"vitest"`), "pnpm-lock.yaml": "", "node_modules/.bin/vitest": ""},
			[]detection{{"node", "vitest", "npx --no-install vitest " + vitestArgs, "", "run directly"}}},
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
		{"no test script", map[string]string{"package.json": `{"scripts": {"build": "tsc"}}`}, nil},
		{"placeholder", map[string]string{"package.json": `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`}, nil},
		{"bad json", map[string]string{"package.json": `{`}, nil},

		// Python
		{"pytest ini_options", map[string]string{"pyproject.toml": "[project]\nname='x'\n\n[tool.pytest.ini_options]\naddopts='-ra'\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pyproject.toml has [tool.pytest.ini_options]"}}},
		{"pytest dependency", map[string]string{"pyproject.toml": "[project.optional-dependencies]\ntest = [\"pytest>=7\", \"hypothesis\"]\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml's dependencies"}}},
		{"poetry pytest dependency", map[string]string{"pyproject.toml": "[tool.poetry.group.dev.dependencies]\npytest = \"^8.0\"\n"},
			[]detection{{"pytest", "pytest", pytestCmd, "", "pytest in pyproject.toml's dependencies"}}},
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

	t.Setenv("PATH", t.TempDir()) // nothing installed: uv.lock alone is not enough
	checkDetect(t, project(t, map[string]string{"pytest.ini": "", "uv.lock": ""}),
		[]detection{{"pytest", "pytest", "python3 -m pytest" + args, "", "pytest does not seem to be installed"}})
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
		{"./node_modules/.bin/jest", "jest", true, false, "", "", ""},
		{"npx vitest run", "vitest", true, false, "", "", ""},
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
	} {
		s := analyseScript(tc.script)
		if s.runner != tc.runner || s.last != tc.last || s.simple != tc.simple || s.args != tc.args || s.nodeBefore != tc.before || s.nodeAfter != tc.after {
			t.Errorf("analyseScript(%q) = %+v", tc.script, s)
		}
	}
}
