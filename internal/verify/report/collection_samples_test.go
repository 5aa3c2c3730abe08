package report

// Real outputs of test runners with tests that could not be collected or
// loaded, and subtests, captured from the runners installed in CI.

// pytestCollectionXML is pytest -q --junitxml -o junit_family=xunit1 (pytest 7.2) on a module with a missing import and one with a syntax error.
const pytestCollectionXML = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="2" failures="0" skipped="0" tests="2" time="0.220" timestamp="2026-11-24T04:19:53.758386" hostname="vm"><testcase classname="" name="tests.test_imp" file="tests/test_imp.py" time="0.000"><error message="collection failure">ImportError while importing test module '/tmp/pc/tests/test_imp.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_imp.py:1: in &lt;module&gt;
    import requests_not_here
E   ModuleNotFoundError: No module named 'requests_not_here'</error></testcase><testcase classname="" name="tests.test_syn" file="tests/test_syn.py" time="0.000"><error message="collection failure">/usr/lib/python3/dist-packages/_pytest/python.py:618: in _importtestmodule
    mod = import_path(self.path, mode=importmode, root=self.config.rootpath)
/usr/lib/python3/dist-packages/_pytest/pathlib.py:533: in import_path
    importlib.import_module(module_name)
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
&lt;frozen importlib._bootstrap&gt;:1206: in _gcd_import
    ???
&lt;frozen importlib._bootstrap&gt;:1178: in _find_and_load
    ???
&lt;frozen importlib._bootstrap&gt;:1149: in _find_and_load_unlocked
    ???
&lt;frozen importlib._bootstrap&gt;:690: in _load_unlocked
    ???
/usr/lib/python3/dist-packages/_pytest/assertion/rewrite.py:159: in exec_module
    source_stat, co = _rewrite_test(fn, self.config)
/usr/lib/python3/dist-packages/_pytest/assertion/rewrite.py:342: in _rewrite_test
    tree = ast.parse(source, filename=strfn)
/usr/lib/python3.11/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File "/tmp/pc/tests/test_syn.py", line 1
E       def test_y(:
E                  ^
E   SyntaxError: invalid syntax</error></testcase></testsuite></testsuites>`

// vitestLoadFailuresXML is vitest 1.6 --reporter=junit: a file with a syntax error, one importing a missing module, one with two failing tests.
const vitestLoadFailuresXML = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="7" failures="4" errors="0" time="0.726">
    <testsuite name="src/broken.test.js" timestamp="2026-11-24T04:14:04.477Z" hostname="vm" tests="1" failures="1" errors="0" skipped="0" time="0">
        <testcase classname="src/broken.test.js" name="src/broken.test.js" time="0">
            <failure message="Failed to parse source for import analysis because the content contains invalid JS syntax. If you are using JSX, make sure to name the file with the .jsx or .tsx extension." type="Error">
Error: Failed to parse source for import analysis because the content contains invalid JS syntax. If you are using JSX, make sure to name the file with the .jsx or .tsx extension.
 ❯ TransformPluginContext._formatError ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:49258:41
 ❯ TransformPluginContext.error ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:49253:16
 ❯ TransformPluginContext.transform ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:64259:14
 ❯ PluginContainer.transform ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:49099:18
 ❯ loadAndTransform ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:51978:27
            </failure>
        </testcase>
    </testsuite>
    <testsuite name="src/calc.test.js" timestamp="2026-11-24T04:14:04.480Z" hostname="vm" tests="5" failures="2" errors="0" skipped="2" time="0.012">
        <testcase classname="src/calc.test.js" name="calc &gt; adds" time="0.001">
        </testcase>
        <testcase classname="src/calc.test.js" name="calc &gt; subtracts" time="0.008">
            <failure message="expected 2 to be 5 // Object.is equality" type="AssertionError">
AssertionError: expected 2 to be 5 // Object.is equality

- Expected
+ Received

- 5
+ 2
            </failure>
        </testcase>
        <testcase classname="src/calc.test.js" name="calc &gt; later" time="0">
            <skipped/>
        </testcase>
        <testcase classname="src/calc.test.js" name="calc &gt; todo one" time="0">
            <skipped/>
        </testcase>
        <testcase classname="src/calc.test.js" name="top" time="0.001">
            <failure message="expected 1 to be 2 // Object.is equality" type="AssertionError">
AssertionError: expected 1 to be 2 // Object.is equality

- Expected
+ Received

- 2
+ 1
            </failure>
        </testcase>
    </testsuite>
    <testsuite name="src/imp.test.js" timestamp="2026-11-24T04:14:04.482Z" hostname="vm" tests="1" failures="1" errors="0" skipped="0" time="0">
        <testcase classname="src/imp.test.js" name="src/imp.test.js" time="0">
            <failure message="Failed to load url not-a-module (resolved id: not-a-module) in /tmp/vc/src/imp.test.js. Does the file exist?" type="Error">
Error: Failed to load url not-a-module (resolved id: not-a-module) in /tmp/vc/src/imp.test.js. Does the file exist?
 ❯ loadAndTransform ../../../root/.cache/ultra-test-node/node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:51969:17
            </failure>
        </testcase>
    </testsuite>
</testsuites>
`

// nodeLoadFailuresTAP is node 20 --test --test-reporter=tap test/: a parent test failing through a subtest, a suite, a file importing a missing module, a file with a syntax error.
const nodeLoadFailuresTAP = `TAP version 13
# Subtest: adds
ok 1 - adds
  ---
  duration_ms: 2.496493
  ...
# Subtest: multiplies
not ok 2 - multiplies
  ---
  duration_ms: 5.917192
  location: '/tmp/nc/test/calc.test.js:4:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:
    
    6 !== 5
    
  code: 'ERR_ASSERTION'
  name: 'AssertionError'
  expected: 5
  actual: 6
  operator: 'strictEqual'
  stack: |-
    TestContext.<anonymous> (/tmp/nc/test/calc.test.js:4:35)
    Test.runInAsyncScope (node:async_hooks:206:9)
    Test.run (node:internal/test_runner/test:796:25)
    Test.processPendingSubtests (node:internal/test_runner/test:526:18)
    Test.postRun (node:internal/test_runner/test:889:19)
    Test.run (node:internal/test_runner/test:835:12)
    async Test.processPendingSubtests (node:internal/test_runner/test:526:7)
  ...
# Subtest: group
    # Subtest: inner ok
    ok 1 - inner ok
      ---
      duration_ms: 0.318061
      ...
    # Subtest: inner bad
    not ok 2 - inner bad
      ---
      duration_ms: 0.769865
      location: '/tmp/nc/test/calc.test.js:7:8'
      failureType: 'testCodeFailure'
      error: 'inner is bad'
      code: 'ERR_ASSERTION'
      name: 'AssertionError'
      expected: true
      actual: false
      operator: '=='
      stack: |-
        TestContext.<anonymous> (/tmp/nc/test/calc.test.js:7:39)
        Test.runInAsyncScope (node:async_hooks:206:9)
        Test.run (node:internal/test_runner/test:796:25)
        Suite.processPendingSubtests (node:internal/test_runner/test:526:18)
        Test.postRun (node:internal/test_runner/test:889:19)
        Test.run (node:internal/test_runner/test:835:12)
        async Promise.all (index 0)
        async Suite.run (node:internal/test_runner/test:1135:7)
        async Test.processPendingSubtests (node:internal/test_runner/test:526:7)
      ...
    # Subtest: skipped
    ok 3 - skipped # SKIP
      ---
      duration_ms: 0.363646
      ...
    # Subtest: todo
    ok 4 - todo # TODO
      ---
      duration_ms: 0.412474
      ...
    1..4
not ok 3 - group
  ---
  duration_ms: 3.078114
  type: 'suite'
  location: '/tmp/nc/test/calc.test.js:5:6'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
# Subtest: parent
    # Subtest: child ok
    ok 1 - child ok
      ---
      duration_ms: 0.58559
      ...
    # Subtest: child bad
    not ok 2 - child bad
      ---
      duration_ms: 16.391597
      location: '/tmp/nc/test/calc.test.js:13:11'
      failureType: 'testCodeFailure'
      error: |-
        The expression evaluated to a falsy value:
        
          assert.ok(false)
        
      code: 'ERR_ASSERTION'
      name: 'AssertionError'
      expected: true
      actual: false
      operator: '=='
      stack: |-
        TestContext.<anonymous> (/tmp/nc/test/calc.test.js:13:44)
        Test.runInAsyncScope (node:async_hooks:206:9)
        Test.run (node:internal/test_runner/test:796:25)
        Test.start (node:internal/test_runner/test:702:17)
        TestContext.test (node:internal/test_runner/test:292:20)
        TestContext.<anonymous> (/tmp/nc/test/calc.test.js:13:11)
        async Test.run (node:internal/test_runner/test:797:9)
        async Test.processPendingSubtests (node:internal/test_runner/test:526:7)
      ...
    1..2
not ok 4 - parent
  ---
  duration_ms: 18.361762
  location: '/tmp/nc/test/calc.test.js:11:1'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
# node:internal/modules/cjs/loader:1210
#   throw err;
#   ^
# Error: Cannot find module 'nope'
# Require stack:
# - /tmp/nc/test/imp.test.js
#     at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
#     at Module._load (node:internal/modules/cjs/loader:1038:27)
#     at Module.require (node:internal/modules/cjs/loader:1289:19)
#     at require (node:internal/modules/helpers:182:18)
#     at Object.<anonymous> (/tmp/nc/test/imp.test.js:1:1)
#     at Module._compile (node:internal/modules/cjs/loader:1521:14)
#     at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
#     at Module.load (node:internal/modules/cjs/loader:1266:32)
#     at Module._load (node:internal/modules/cjs/loader:1091:12)
#     at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12) {
#   code: 'MODULE_NOT_FOUND',
#   requireStack: [ '/tmp/nc/test/imp.test.js' ]
# }
# Node.js v20.20.2
# Subtest: /tmp/nc/test/imp.test.js
not ok 2 - /tmp/nc/test/imp.test.js
  ---
  duration_ms: 452.745572
  location: '/tmp/nc/test/imp.test.js:1:1'
  failureType: 'testCodeFailure'
  exitCode: 1
  signal: ~
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
# /tmp/nc/test/syn.test.js:1
# test( syntax
#       ^^^^^^
# SyntaxError: missing ) after argument list
#     at wrapSafe (node:internal/modules/cjs/loader:1464:18)
#     at Module._compile (node:internal/modules/cjs/loader:1495:20)
#     at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
#     at Module.load (node:internal/modules/cjs/loader:1266:32)
#     at Module._load (node:internal/modules/cjs/loader:1091:12)
#     at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)
#     at node:internal/main/run_main_module:28:49
# Node.js v20.20.2
# Subtest: /tmp/nc/test/syn.test.js
not ok 3 - /tmp/nc/test/syn.test.js
  ---
  duration_ms: 543.252192
  location: '/tmp/nc/test/syn.test.js:1:1'
  failureType: 'testCodeFailure'
  exitCode: 1
  signal: ~
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..6
# tests 11
# suites 1
# pass 3
# fail 6
# cancelled 0
# skipped 1
# todo 1
# duration_ms 1497.266822
`

// cargoTargetCompileError is cargo 1.95 test --no-fail-fast with an integration test that does not compile.
const cargoTargetCompileError = `   Compiling calc v0.1.0 (/tmp/cc)
error[E0308]: mismatched types
 --> tests/broken.rs:2:23
  |
2 | fn b() { let x: i32 = "s"; }
  |                 ---   ^^^ expected ` + "`" + `i32` + "`" + `, found ` + "`" + `&str` + "`" + `
  |                 |
  |                 expected due to this

For more information about this error, try ` + "`" + `rustc --explain E0308` + "`" + `.
error: could not compile ` + "`" + `calc` + "`" + ` (test "broken") due to 1 previous error
`

// ctestNotBuiltXML is ctest 3.25 --output-junit: passed, failed, disabled, skipped (SKIP_RETURN_CODE) and a test whose program does not exist.
const ctestNotBuiltXML = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)"
	tests="5"
	failures="1"
	disabled="1"
	skipped="2"
	hostname=""
	time="0"
	timestamp="2026-11-24T04:20:24"
	>
	<testcase name="adds" classname="adds" time="0.0023931" status="run">
		<system-out></system-out>
	</testcase>
	<testcase name="subtracts" classname="subtracts" time="0.00253182" status="fail">
		<failure message=""/>
		<system-out>subtracts: 2 != 5
</system-out>
	</testcase>
	<testcase name="later" classname="later" time="0" status="disabled">
		<system-out>Disabled</system-out>
	</testcase>
	<testcase name="skipper" classname="skipper" time="0.00230807" status="notrun">
		<skipped message="SKIP_RETURN_CODE=77"/>
		<system-out></system-out>
	</testcase>
	<testcase name="missing" classname="missing" time="0" status="notrun">
		<skipped message="Unable to find executable"/>
		<system-out>Unable to find executable: /nonexistent/bin</system-out>
	</testcase>
</testsuite>
`
