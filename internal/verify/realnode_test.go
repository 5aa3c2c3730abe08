package verify

// Small real Node projects whose test script reaches its runner through a
// package manager, or whose lockfile names a package manager that is not
// installed, run with the real runners (ULTRA_TEST_NODE_MODULES, see
// projects_test.go). Each checks the verdict, the counts, the failing
// tests and the reason naming the choice.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

const (
	realJestTest = `describe('calc', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('subtracts', () => { expect(3 - 1).toBe(5); });
  test.skip('later', () => {});
});
test('mode', () => { expect(process.env.CALC_MODE || 'unset').toBe(WANTED); });
`
	realVitestTest = `import { describe, test, expect } from 'vitest';
describe('calc', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('subtracts', () => { expect(3 - 1).toBe(5); });
  test.skip('later', () => {});
});
test('top', () => {});
`
	realMochaTest = `const assert = require('assert');
describe('calc', () => {
  it('adds', () => { assert.strictEqual(1 + 1, 2); });
  it('subtracts', () => { assert.strictEqual(3 - 1, 5); });
  it.skip('later', () => {});
});
it('top', () => {});
`
	realNodeTest = `const test = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('subtracts', () => { assert.strictEqual(3 - 1, 5); });
test('later', { skip: true }, () => {});
`
)

func jestProject(mode string, files map[string]string) map[string]string {
	files["calc.test.js"] = strings.Replace(realJestTest, "WANTED", "'"+mode+"'", 1)
	return files
}

// wantReason checks that the result's command was chosen for the reasons
// given (substrings of its Source, the Detected.Reason).
func wantReason(t *testing.T, res *Result, parts ...string) {
	t.Helper()
	if len(res.Commands) == 0 {
		t.Fatalf("no command ran: %s", res.Reason)
	}
	for _, p := range parts {
		if !strings.Contains(res.Commands[0].Source, p) {
			t.Errorf("reason %q lacks %q", res.Commands[0].Source, p)
		}
	}
}

func wantCommand(t *testing.T, res *Result, command, format string) {
	t.Helper()
	c := res.Commands[0]
	if c.Command != command || c.Format != format || !c.ReportOK {
		t.Errorf("command %q, format %q, report read %v; want %q, %q, read", c.Command, c.Format, c.ReportOK, command, format)
	}
}

// Not parallel: yarn, pnpm and bun are made "not installed" whatever this
// machine has (the subtests run in parallel).
func TestRealNodeManagers(t *testing.T) {
	withTools(t, map[string]bool{"yarn": false, "pnpm": false, "bun": false, "corepack": false})
	const jestJSON = `--json --outputFile="$ULTRA_REPORT" --testLocationInResults`
	const vitestJUnit = `--reporter=default --reporter=junit --outputFile.junit="$ULTRA_REPORT"`
	const mochaXunit = `--reporter xunit --reporter-option output="$ULTRA_REPORT"`

	// yarn.lock, no yarn: npm runs the script (posttest: it must run
	// through a package manager), the report and the selection reach jest.
	t.Run("yarn missing npm runs the script", func(t *testing.T) {
		t.Parallel()
		nm := nodeModules(t, "jest")
		dir := project(t, jestProject("unset", map[string]string{
			"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "jest --ci", "posttest": "node -e 0"}}`,
			"yarn.lock":    "# yarn lockfile v1\n",
		}))
		linkNodeModules(t, dir, nm, "jest-junit")
		res := verify(t, Request{Dir: dir})
		wantStatus(t, res, StatusFail)
		wantCounts(t, res, 2, 1, 1)
		wantFailing(t, res, "calc.test.js > calc > subtracts (calc.test.js:3)")
		wantCommand(t, res, "npm test -- "+jestJSON, "jest-json")
		wantReason(t, res, "yarn.lock names yarn, which is not installed: npm runs the script", "runs jest, through npm")

		res = verify(t, Request{Dir: dir, Only: []string{"calc.test.js > calc > subtracts"}})
		if !res.Selected || res.Passed != 0 || res.Failed != 1 {
			t.Errorf("selection: %d passed, %d failed, selected %v: %s", res.Passed, res.Failed, res.Selected, res.Commands[0].Command)
		}
	})

	// "pnpm vitest run" with pnpm missing: the script cannot run at all,
	// vitest can, directly.
	t.Run("pnpm vitest run pnpm missing", func(t *testing.T) {
		t.Parallel()
		nm := nodeModules(t, "vitest")
		dir := project(t, map[string]string{
			"package.json":   `{"name": "x", "version": "1.0.0", "scripts": {"test": "pnpm vitest run"}}`,
			"pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
			"calc.test.js":   realVitestTest,
		})
		linkNodeModules(t, dir, nm)
		res := verify(t, Request{Dir: dir})
		wantStatus(t, res, StatusFail)
		wantCounts(t, res, 2, 1, 1)
		wantFailing(t, res, "calc.test.js > calc > subtracts (calc.test.js:4)")
		wantCommand(t, res, "npx --no-install vitest run "+vitestJUnit, "junit")
		wantReason(t, res, "pnpm-lock.yaml names pnpm, which is not installed: npm runs the script",
			"the script runs vitest through `pnpm vitest run`, run directly (the script calls pnpm, which is not installed)")
	})

	// "npm run unit" passes no arguments to mocha (no --): mocha runs
	// directly, with the script's own arguments.
	t.Run("npm run unit arguments cannot reach mocha", func(t *testing.T) {
		t.Parallel()
		nm := nodeModules(t, "mocha")
		dir := project(t, map[string]string{
			"package.json":   `{"name": "x", "version": "1.0.0", "scripts": {"test": "npm run unit", "unit": "mocha --recursive spec"}}`,
			"spec/a/calc.js": realMochaTest,
		})
		linkNodeModules(t, dir, nm)
		res := verify(t, Request{Dir: dir})
		wantStatus(t, res, StatusFail)
		wantCounts(t, res, 2, 1, 1)
		wantFailing(t, res, "calc.subtracts (spec/a/calc.js:4)")
		wantCommand(t, res, "npx --no-install mocha --recursive spec "+mochaXunit, "junit")
		wantReason(t, res, "(npm, no lockfile)",
			"the script runs mocha through `npm run unit`, run directly (arguments cannot reach it through the script: `npm run` passes no arguments on without --)")
	})

	// "npm run unit --" passes them on: with a pretest script the test
	// script runs through npm, and mocha still writes its report.
	t.Run("npm run unit -- through npm", func(t *testing.T) {
		t.Parallel()
		nm := nodeModules(t, "mocha")
		dir := project(t, map[string]string{
			"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"pretest": "node -e 0", "test": "npm run unit --", "unit": "mocha"}}`,
			"test/calc.js": realMochaTest,
		})
		linkNodeModules(t, dir, nm)
		res := verify(t, Request{Dir: dir})
		wantStatus(t, res, StatusFail)
		wantCounts(t, res, 2, 1, 1)
		wantFailing(t, res, "calc.subtracts (test/calc.js:4)")
		wantCommand(t, res, "npm test -- "+mochaXunit, "junit")
		wantReason(t, res, "runs mocha through `npm run unit --`, through npm")
	})

	// cross-env sets a variable for jest, through npm (bun.lockb names
	// bun, which is missing); the variable reaches the tests.
	t.Run("cross-env jest bun missing", func(t *testing.T) {
		t.Parallel()
		nm := nodeModules(t, "jest", "cross-env")
		dir := project(t, jestProject("strict", map[string]string{
			"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "cross-env CALC_MODE=strict jest"}}`,
			"bun.lockb":    "",
		}))
		linkNodeModules(t, dir, nm, "jest-junit")
		res := verify(t, Request{Dir: dir})
		wantStatus(t, res, StatusFail)
		wantCounts(t, res, 2, 1, 1)
		wantFailing(t, res, "calc.test.js > calc > subtracts (calc.test.js:3)")
		wantCase(t, res, "calc.test.js > mode", report.Passed)
		wantCommand(t, res, "npm test -- "+jestJSON, "jest-json")
		wantReason(t, res, "bun.lockb names bun, which is not installed: npm runs the script", "runs jest, through npm")
	})

	// "yarn unit" where unit is cross-env … jest, yarn missing: jest runs
	// directly with the variable (and jest-junit's report).
	t.Run("yarn unit with cross-env yarn missing", func(t *testing.T) {
		t.Parallel()
		nm := nodeModules(t, "jest", "jest-junit", "cross-env")
		dir := project(t, jestProject("strict", map[string]string{
			"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "yarn unit --ci", "unit": "cross-env CALC_MODE=strict jest"}}`,
			"yarn.lock":    "",
		}))
		linkNodeModules(t, dir, nm)
		res := verify(t, Request{Dir: dir})
		wantStatus(t, res, StatusFail)
		wantCounts(t, res, 2, 1, 1)
		wantFailing(t, res, "calc.test.js > calc > subtracts (calc.test.js:3)")
		wantCase(t, res, "calc.test.js > mode", report.Passed)
		if c := res.Commands[0]; !strings.HasSuffix(c.Command, " CALC_MODE=strict npx --no-install jest --ci --reporters=default --reporters=jest-junit") || c.Format != "junit" || !c.ReportOK {
			t.Errorf("command %q, format %q, report %v", c.Command, c.Format, c.ReportOK)
		}
		wantReason(t, res, "the script runs jest through `yarn unit --ci`, run directly (the script calls yarn, which is not installed)", "jest-junit installed")
	})

	// jest started by node behind npm run (ESM projects): run as the
	// script starts it.
	t.Run("node starts jest behind npm run", func(t *testing.T) {
		t.Parallel()
		nm := nodeModules(t, "jest")
		dir := project(t, jestProject("unset", map[string]string{
			"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "npm run unit", "unit": "node node_modules/jest/bin/jest.js --ci"}}`,
		}))
		linkNodeModules(t, dir, nm, "jest-junit")
		res := verify(t, Request{Dir: dir})
		wantStatus(t, res, StatusFail)
		wantCounts(t, res, 2, 1, 1)
		wantFailing(t, res, "calc.test.js > calc > subtracts (calc.test.js:3)")
		wantCommand(t, res, "node node_modules/jest/bin/jest.js --ci "+jestJSON, "jest-json")
		wantReason(t, res, "the script runs jest through `npm run unit`, run directly")
	})

	// node --test behind "yarn test:unit", yarn missing.
	t.Run("yarn test:unit runs node --test yarn missing", func(t *testing.T) {
		t.Parallel()
		need(t, "node")
		dir := project(t, map[string]string{
			"package.json":      `{"name": "x", "version": "1.0.0", "scripts": {"test": "yarn test:unit", "test:unit": "node --test test/"}}`,
			"yarn.lock":         "",
			"test/calc.test.js": realNodeTest,
		})
		res := verify(t, Request{Dir: dir})
		wantStatus(t, res, StatusFail)
		wantCounts(t, res, 1, 1, 1)
		wantFailing(t, res, "subtracts (test/calc.test.js:4)")
		wantCommand(t, res, "node --test --test-reporter=tap test/", "tap")
		wantReason(t, res, "the script runs node --test through `yarn test:unit`, run directly (the script calls yarn, which is not installed)")
	})
}

// Not parallel: no package manager at all (not even npm): the runner
// starts from node_modules/.bin.
func TestRealNodeNoManager(t *testing.T) {
	nm := nodeModules(t, "vitest")
	withTools(t, map[string]bool{"npm": false, "npx": false, "yarn": false, "pnpm": false, "bun": false, "corepack": false})
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "vitest"}}`,
		"yarn.lock":    "",
		"calc.test.js": realVitestTest,
	})
	linkNodeModules(t, dir, nm)
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 1, 1)
	wantFailing(t, res, "calc.test.js > calc > subtracts (calc.test.js:4)")
	wantCommand(t, res, `node_modules/.bin/vitest run --reporter=default --reporter=junit --outputFile.junit="$ULTRA_REPORT"`, "junit")
	wantReason(t, res, "yarn.lock names yarn, which is not installed, nor is npm", "the script is exactly vitest, run directly")
}

// Not parallel: yarn is made "not installed"; corepack runs the yarn of
// its cache, offline. Runs only where corepack has a yarn in its cache
// (COREPACK_HOME, else ~/.cache/node/corepack; `corepack install -g
// yarn@1` puts one there).
func TestRealNodeCorepack(t *testing.T) {
	nm := nodeModules(t, "mocha")
	need(t, "corepack")
	withTools(t, map[string]bool{"yarn": false})
	version, home := corepackReady("yarn", "")
	if version == "" {
		t.Skip("corepack has no yarn in its cache (its lastKnownGood.json's version): `corepack install -g yarn@1` to run this test")
	}
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"pretest": "node -e 0", "test": "yarn unit", "unit": "mocha"}}`,
		"yarn.lock":    "",
		"test/calc.js": realMochaTest,
	})
	linkNodeModules(t, dir, nm)
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 1, 1)
	wantFailing(t, res, "calc.subtracts (test/calc.js:4)")
	wantCommand(t, res, "COREPACK_ENABLE_NETWORK=0 COREPACK_HOME="+shq(home)+` corepack yarn test --reporter xunit --reporter-option output="$ULTRA_REPORT"`, "junit")
	wantReason(t, res, "yarn.lock names yarn, which is not installed: corepack runs yarn "+version+" from its cache): runs mocha through `yarn unit`, through yarn (detection rule")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".yarn-integrity")); err == nil {
		t.Error("yarn installed something")
	}
}

// Scripts that run the runner twice, on different test files: ultra's
// report arguments would reach the last run only, and count only its
// tests. The script runs as it is and every run's summary is read from
// the output: the counts are the sum of both runs, the failing tests those
// of both, and a selection cannot be applied (the first run would run
// everything anyway): everything runs, and the result says so.
func TestRealNodeRunsTwice(t *testing.T) {
	withTools(t, map[string]bool{"yarn": false, "pnpm": false, "bun": false, "corepack": false})
	const (
		// first: 2 passed, 1 skipped; 1 failed with FAIL.
		vitestFirst = `import { describe, test, expect } from 'vitest';
describe('calc', () => {
  test('adds', () => { expect(1 + 1).toBe(FAIL ? 3 : 2); });
  test.skip('later', () => {});
});
test('top', () => {});
`
		// second: 1 passed, 1 failed.
		vitestSecond = `import { test, expect } from 'vitest';
test('multiplies', () => { expect(2 * 3).toBe(6); });
test('divides', () => { expect(6 / 3).toBe(3); });
`
		jestFirst = `describe('calc', () => {
  test('adds', () => { expect(1 + 1).toBe(FAIL ? 3 : 2); });
  test.skip('later', () => {});
});
test('top', () => {});
`
		jestSecond = `test('multiplies', () => { expect(2 * 3).toBe(6); });
test('divides', () => { expect(6 / 3).toBe(3); });
`
	)
	first := func(src string, fail bool) string {
		return strings.Replace(src, "FAIL", map[bool]string{true: "true", false: "false"}[fail], 1)
	}
	for _, tc := range []struct {
		name                    string
		pkg                     string
		files                   map[string]string
		passed, failed, skipped int
		failing                 []string
		reason                  string
	}{
		// reduxjs/reselect's form: vitest through node and its
		// cli-wrapper.js, then vitest by name.
		{"vitest twice", "vitest", map[string]string{
			"package.json":   `{"name": "x", "version": "1.0.0", "scripts": {"test": "node --expose-gc ./node_modules/vitest/dist/cli-wrapper.js run first.test.js && vitest run second.test.js"}}`,
			"first.test.js":  first(vitestFirst, false),
			"second.test.js": vitestSecond,
		}, 3, 1, 1, []string{"second.test.js > divides"},
			"the script runs vitest twice (`node --expose-gc ./node_modules/vitest/dist/cli-wrapper.js run first.test.js`, `vitest run second.test.js`): run as it is, every run's output read as text"},
		// Both runs fail (";": the second runs anyway).
		{"vitest twice both failing", "vitest", map[string]string{
			"package.json":   `{"name": "x", "version": "1.0.0", "scripts": {"test": "vitest run first.test.js; vitest run second.test.js"}}`,
			"first.test.js":  first(vitestFirst, true),
			"second.test.js": vitestSecond,
		}, 2, 2, 1, []string{"first.test.js > calc > adds", "second.test.js > divides"},
			"the script runs vitest twice (`vitest run first.test.js`, `vitest run second.test.js`)"},
		{"jest twice", "jest", map[string]string{
			"package.json":   `{"name": "x", "version": "1.0.0", "scripts": {"test": "jest first.test && jest --ci second.test"}}`,
			"first.test.js":  first(jestFirst, false),
			"second.test.js": jestSecond,
		}, 3, 1, 1, []string{"divides"},
			"the script runs jest twice (`jest first.test`, `jest --ci second.test`): run as it is, every run's output read as text"},
		{"jest twice both failing", "jest", map[string]string{
			"package.json":   `{"name": "x", "version": "1.0.0", "scripts": {"test": "jest first.test; jest second.test"}}`,
			"first.test.js":  first(jestFirst, true),
			"second.test.js": jestSecond,
		}, 2, 2, 1, []string{"calc › adds", "divides"},
			"the script runs jest twice"},
		// vercel/ms's form: each run in a script of its own.
		{"npm run twice", "jest", map[string]string{
			"package.json":   `{"name": "x", "version": "1.0.0", "scripts": {"test": "npm run test:first && npm run test:second", "test:first": "jest first.test", "test:second": "jest second.test"}}`,
			"first.test.js":  first(jestFirst, false),
			"second.test.js": jestSecond,
		}, 3, 1, 1, []string{"divides"},
			"the script runs jest twice (`jest first.test` through `npm run test:first`; `jest second.test` through `npm run test:second`): run as it is, every run's output read as text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nm := nodeModules(t, tc.pkg)
			dir := project(t, tc.files)
			linkNodeModules(t, dir, nm, "jest-junit")
			res := verify(t, Request{Dir: dir})
			wantStatus(t, res, StatusFail)
			wantCounts(t, res, tc.passed, tc.failed, tc.skipped)
			wantFailing(t, res, tc.failing...)
			c := res.Commands[0]
			if c.Command != "npm test" || c.Format != "text" || c.ReportOK || len(c.ReportPaths) > 0 {
				t.Errorf("command %q, format %q, report read %v; want npm test read as text", c.Command, c.Format, c.ReportOK)
			}
			wantReason(t, res, tc.reason)

			// A selection cannot reach the first run: everything runs.
			res = verify(t, Request{Dir: dir, Only: tc.failing})
			if res.Selected || res.Commands[0].Command != "npm test" {
				t.Errorf("selection: selected %v, command %q", res.Selected, res.Commands[0].Command)
			}
			wantCounts(t, res, tc.passed, tc.failed, tc.skipped)
		})
	}
}
