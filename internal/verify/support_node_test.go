package verify

import (
	"reflect"
	"sort"
	"testing"
)

func TestSupportNode(t *testing.T) {
	calc := "module.exports.add = (a, b) => a + b;\n"
	runSupportCases(t, []supportCase{{
		name: "a throwing assert helper, and the code under test",
		files: map[string]string{
			"calc.js":      calc,
			"helper.js":    "function assertEqual(a, b) {\n  if (a !== b) throw new Error(`${a} !== ${b}`);\n}\nmodule.exports = { assertEqual };\n",
			"calc.test.js": "const { add } = require('./calc');\nconst { assertEqual } = require('./helper');\nassertEqual(add(1, 2), 3);\n",
		},
		want: map[string]SupportRole{"helper.js": RoleSupport, "calc.js": RoleCode},
		why:  map[string]string{"helper.js": "defines assertEqual, loaded only by tests (JavaScript)"},
	}, {
		name: "a file only tests load is undecided",
		files: map[string]string{
			"src/calc.ts":   "export const add = (a: number, b: number) => a + b;\n",
			"lib/eq.js":     "exports.same = (a, b) => a === b;\n",
			"test/calc.ts":  "import { add } from '../src/calc';\nimport { same } from '../lib/eq.js';\n",
			"src/unused.ts": "export {}\n",
		},
		want: map[string]SupportRole{"lib/eq.js": RoleUndecided, "src/calc.ts": RoleCode, "src/unused.ts": RoleCode},
		why:  map[string]string{"lib/eq.js": "loaded only by tests (test/calc.ts)"},
	}, {
		name: "a file shadows a directory's index",
		files: map[string]string{
			"calc.js":         calc,
			"helper.js":       "exports.ok = () => true;\n",
			"helper/index.js": "exports.ok = (a, b) => a === b;\n",
			"calc.test.js":    "require('./calc'); require('./helper');\n",
		},
		want: map[string]SupportRole{"helper.js": RoleUndecided, "helper/index.js": RoleCode},
	}, {
		name: "framework imports, expect helpers and AssertionError",
		files: map[string]string{
			"calc.mjs":      "export const add = (a, b) => a + b;\n",
			"util/a.mjs":    "import assert from 'node:assert/strict';\nexport const eq = assert.equal;\n",
			"util/b.mjs":    "export function same(x, y) {\n  expect(x).toEqual(y);\n}\n",
			"util/c.mjs":    "import { AssertionError } from 'node:assert';\nexport const ok = (v) => { if (!v) throw new AssertionError({ message: 'no' }); };\n",
			"util/d.mjs":    "export * from './a.mjs';\n",
			"calc.test.mjs": "import { add } from './calc.mjs';\nimport './util/b.mjs';\nimport { ok } from \"./util/c.mjs\";\nimport { eq } from './util/d.mjs';\n",
		},
		want: map[string]SupportRole{"util/a.mjs": RoleSupport, "util/b.mjs": RoleSupport, "util/c.mjs": RoleSupport, "util/d.mjs": RoleUndecided},
		why:  map[string]string{"util/a.mjs": "imports node:assert/strict", "util/b.mjs": "expect"},
	}, {
		name: "package.json main and bin are code roots; jest setup files are support",
		files: map[string]string{
			"package.json":     `{"name":"app","main":"index.js","bin":{"app":"./bin/app.js"},"jest":{"setupFilesAfterEnv":["<rootDir>/jest/setup.js"]}}`,
			"index.js":         "module.exports = require('./lib/util');\n",
			"lib/util.js":      "exports.verifyToken = (t) => !!t;\n",
			"bin/app.js":       "require('../lib/cli');\n",
			"lib/cli.js":       "exports.run = () => {};\n",
			"jest/setup.js":    "require('./matchers');\n",
			"jest/matchers.js": "exports.toBeOk = () => ({ pass: true });\n",
			"lib/util.test.js": "require('./util'); require('./cli');\n",
		},
		want: map[string]SupportRole{
			"lib/util.js": RoleCode, "lib/cli.js": RoleCode, "jest/setup.js": RoleSupport, "jest/matchers.js": RoleUndecided,
		},
		why: map[string]string{"jest/setup.js": "named in package.json's jest setupFilesAfterEnv"},
	}, {
		name: "a config file names a setup file",
		files: map[string]string{
			"package.json":     `{"main":"src/index.ts","jest":{"roots":["<rootDir>/src"],"setupFiles":["./jest-env"]}}`,
			"vitest.config.ts": "export default { build: { lib: { entry: './src/index.ts' } }, resolve: { alias: { '@': './src' } }, test: { setupFiles: ['./test-setup.ts'] } };\n",
			"test-setup.ts":    "import { expect } from 'vitest';\n",
			"jest-env.js":      "process.env.TZ = 'UTC';\n",
			"src/index.ts":     "export const x = 1;\n",
		},
		want: map[string]SupportRole{"test-setup.ts": RoleSupport, "jest-env.js": RoleSupport, "src/index.ts": RoleCode},
		why:  map[string]string{"test-setup.ts": "named in vitest.config.ts"},
	}, {
		name: "node_modules in the tree",
		files: map[string]string{
			"calc.js":                        calc,
			"calc.test.js":                   "const { expect } = require('chai');\nconst eq = require('deep-eq');\nrequire('./calc');\n",
			"node_modules/chai/package.json": `{"main":"lib/chai.js"}`,
			"node_modules/chai/lib/chai.js":  "module.exports = {};\n",
			"node_modules/deep-eq/index.js":  "module.exports = () => true;\n",
			"node_modules/left-pad/index.js": "module.exports = () => '';\n",
		},
		want: map[string]SupportRole{
			"node_modules/chai/lib/chai.js": RoleSupport, "node_modules/deep-eq/index.js": RoleSupport, "node_modules/left-pad/index.js": RoleCode,
		},
		why: map[string]string{"node_modules/chai/lib/chai.js": "test framework package chai", "node_modules/deep-eq/index.js": "under node_modules/"},
	}, {
		name: "workspace packages resolve by name",
		files: map[string]string{
			"package.json":                  `{"name":"root","workspaces":["packages/*"]}`,
			"packages/testkit/package.json": `{"name":"@acme/kit","main":"src/index.js"}`,
			"packages/testkit/src/index.js": "module.exports = {};\n",
			"app/calc.test.js":              "require('@acme/kit');\n",
		},
		want: map[string]SupportRole{"packages/testkit/src/index.js": RoleSupport},
	}, {
		name: "aliases: tsconfig paths and baseUrl, jest moduleNameMapper, .js naming .ts",
		files: map[string]string{
			"tsconfig.json":       "{\n  // comments and trailing commas\n  \"compilerOptions\": {\"baseUrl\": \".\", \"paths\": {\"@t/*\": [\"testkit/*\"],},},\n}\n",
			"testkit/eq.ts":       "export const eq = (a: unknown, b: unknown) => true;\n",
			"lib/deep.ts":         "export const deep = 1;\n",
			"src/calc.ts":         "export const add = 1;\n",
			"src/calc.test.ts":    "import { add } from './calc.js';\nimport { eq } from '@t/eq';\nimport { deep } from 'lib/deep';\n",
			"web/package.json":    `{"jest":{"moduleNameMapper":{"^~/(.*)$":"<rootDir>/shared/$1","^react$":"preact"}}}`,
			"web/shared/check.js": "module.exports = () => true;\n",
			"web/app.test.js":     "require('~/check'); require('react');\n",
		},
		want: map[string]SupportRole{
			"testkit/eq.ts": RoleSupport, "lib/deep.ts": RoleUndecided, "src/calc.ts": RoleCode, "web/shared/check.js": RoleUndecided,
		},
	}, {
		name: "a computed require makes its area undecided",
		files: map[string]string{
			"calc.js":              calc,
			"plugins/a.js":         "module.exports = 1;\n",
			"test/plugins.test.js": "const name = process.env.P;\nrequire(`../plugins/${name}`);\nrequire('../calc');\n",
			"test/calc.test.js":    "require('../calc');\n",
		},
		want: map[string]SupportRole{"plugins/a.js": RoleUndecided, "calc.js": RoleCode},
		why:  map[string]string{"plugins/a.js": "test/plugins.test.js loads modules by a computed name"},
	}})
}

func TestSupportParseJS(t *testing.T) {
	src := "// require('./commented')\nconst a = require(\"./a\");\nimport b, { c } from './b';\nimport './side';\nexport * from \"./re\";\n" +
		"const r = /require\\('x'\\)/g; const s = 'import d from \"./str\"';\nconst lazy = () => import('./lazy');\njest.mock('./mocked');\n" +
		"/* import e from './block' */ const t = `./tpl`; require(t);\n"
	f := parseJS(src)
	want := []string{"./a", "./b", "./lazy", "./mocked", "./re", "./side"}
	sort.Strings(f.specs)
	if !reflect.DeepEqual(f.specs, want) {
		t.Errorf("specs %q, want %q", f.specs, want)
	}
	if !f.dynamic {
		t.Error("require(t) not dynamic")
	}
	if g := parseJS("const x = a / b / c; require('./ok');"); !reflect.DeepEqual(g.specs, []string{"./ok"}) || g.dynamic {
		t.Errorf("division: %q %v", g.specs, g.dynamic)
	}
}

func TestSupportNodeTestData(t *testing.T) {
	calc := "module.exports.add = (a, b) => a + b;\n"
	runSupportCases(t, []supportCase{{
		name: "a test reads and requires its cases",
		files: map[string]string{
			"calc.js":            calc,
			"calc.test.js":       "const fs = require('fs');\nconst path = require('path');\nconst { add } = require('./calc');\nconst cases = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures2/add.json')));\nconst more = require('./more.json');\n",
			"fixtures2/add.json": "[]",
			"more.json":          "[]",
			"other.json":         "[]",
		},
		want: map[string]SupportRole{"fixtures2/add.json": RoleSupport, "more.json": RoleSupport, "other.json": RoleCode, "calc.js": RoleCode},
		why:  map[string]string{"fixtures2/add.json": "read by calc.test.js (test data)", "more.json": "read by calc.test.js (test data)"},
	}, {
		name: "what the code reads too is code",
		files: map[string]string{
			"src/calc.js":      "const rates = require('../data/rates.json');\nmodule.exports.add = (a, b) => a + b;\n",
			"src/calc.test.js": "const { add } = require('./calc');\nconst rates = require('../data/rates.json');\nconst src = require('fs').readFileSync(`${__dirname}/calc.js`);\n",
			"data/rates.json":  "{}",
		},
		want: map[string]SupportRole{"data/rates.json": RoleCode, "src/calc.js": RoleCode},
	}})
}

func TestSupportNodeHelpers(t *testing.T) {
	runSupportCases(t, []supportCase{{
		name: "an assert helper the code uses too is undecided",
		files: map[string]string{
			"num.js":       "const close = (a, b) => Math.abs(a - b) < 1e-9;\nfunction assertClose(a, b) {\n  if (!close(a, b)) throw new Error(`${a} != ${b}`);\n}\nmodule.exports = { close, assertClose };\n",
			"calc.js":      "const { close } = require('./num');\nfunction checkInput(x) { return x; }\nmodule.exports.add = (a, b) => (close(a, -b) ? 0 : a + b);\n",
			"calc.test.js": "const { add } = require('./calc');\nconst { assertClose } = require('./num');\nassertClose(add(1, 2), 3);\n",
		},
		// calc.js is what calc.test.js tests: its checker does not count.
		want: map[string]SupportRole{"num.js": RoleUndecided, "calc.js": RoleCode},
		why:  map[string]string{"num.js": "assertion helper that tests and code both load (defines assertClose) (JavaScript)"},
	}, {
		name: "a file the code reaches with no marker is code",
		files: map[string]string{
			"num.js":       "module.exports.close = (a, b) => Math.abs(a - b) < 1e-9;\n",
			"calc.js":      "const { close } = require('./num');\nmodule.exports.add = (a, b) => a + b;\n",
			"calc.test.js": "require('./calc');\nrequire('./num');\n",
		},
		want: map[string]SupportRole{"num.js": RoleCode, "calc.js": RoleCode},
	}, {
		name: "the file a test is named after stays code, whatever it defines",
		files: map[string]string{
			"package.json":     `{"main":"validate.js"}`,
			"validate.js":      "function assertValid(x) { if (!x) throw new Error('invalid'); }\nmodule.exports = { assertValid };\n",
			"validate.test.js": "const { assertValid } = require('./validate');\nassertValid(1);\n",
		},
		want: map[string]SupportRole{"validate.js": RoleCode},
	}, {
		name: "checkers count when a test calls them; AssertionError counts",
		files: map[string]string{
			"lib/calc.js":      "require('./rules'); require('./parse'); require('./guard');\nmodule.exports.add = (a, b) => a + b;\n",
			"lib/rules.js":     "exports.checkRange = (x) => x >= 0;\n",
			"lib/parse.js":     "exports.verifyToken = (t) => !!t;\n",
			"lib/guard.js":     "class AssertionError extends Error {}\nexports.ok = (v) => { if (!v) throw new AssertionError('no'); };\n",
			"lib/calc.test.js": "const { add } = require('./calc');\nconst rules = require('./rules');\nrequire('./parse');\nconst { ok } = require('./guard');\nok(rules.checkRange(add(1, 2)));\n",
		},
		want: map[string]SupportRole{"lib/rules.js": RoleUndecided, "lib/parse.js": RoleCode, "lib/calc.js": RoleCode, "lib/guard.js": RoleUndecided},
		why:  map[string]string{"lib/rules.js": "(defines checkRange) (JavaScript)", "lib/guard.js": "(throws AssertionError) (JavaScript)"},
	}})
}
