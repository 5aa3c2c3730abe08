package report

// Real outputs generated once with go 1.26, node v20 and cargo 1.95 and
// pasted here.

// goSubtests is real output.
const goSubtests = `{"Time":"2026-11-22T02:40:05.764218186Z","Action":"start","Package":"example.com/demo/calc"}
{"Time":"2026-11-22T02:40:05.768318657Z","Action":"run","Package":"example.com/demo/calc","Test":"TestAdd"}
{"Time":"2026-11-22T02:40:05.768345102Z","Action":"output","Package":"example.com/demo/calc","Test":"TestAdd","Output":"=== RUN   TestAdd\n"}
{"Time":"2026-11-22T02:40:05.768405429Z","Action":"output","Package":"example.com/demo/calc","Test":"TestAdd","Output":"--- PASS: TestAdd (0.00s)\n"}
{"Time":"2026-11-22T02:40:05.768413722Z","Action":"pass","Package":"example.com/demo/calc","Test":"TestAdd","Elapsed":0}
{"Time":"2026-11-22T02:40:05.76841947Z","Action":"run","Package":"example.com/demo/calc","Test":"TestTable"}
{"Time":"2026-11-22T02:40:05.768422334Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable","Output":"=== RUN   TestTable\n"}
{"Time":"2026-11-22T02:40:05.768425473Z","Action":"run","Package":"example.com/demo/calc","Test":"TestTable/small"}
{"Time":"2026-11-22T02:40:05.768427977Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable/small","Output":"=== RUN   TestTable/small\n"}
{"Time":"2026-11-22T02:40:05.768431883Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable/small","Output":"--- PASS: TestTable/small (0.00s)\n"}
{"Time":"2026-11-22T02:40:05.768435424Z","Action":"pass","Package":"example.com/demo/calc","Test":"TestTable/small","Elapsed":0}
{"Time":"2026-11-22T02:40:05.768438409Z","Action":"run","Package":"example.com/demo/calc","Test":"TestTable/neg"}
{"Time":"2026-11-22T02:40:05.768441401Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable/neg","Output":"=== RUN   TestTable/neg\n"}
{"Time":"2026-11-22T02:40:05.76844429Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable/neg","Output":"    calc_test.go:18: Add(-1, -1) = -2, want -3\n"}
{"Time":"2026-11-22T02:40:05.768447625Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable/neg","Output":"--- FAIL: TestTable/neg (0.00s)\n"}
{"Time":"2026-11-22T02:40:05.76845059Z","Action":"fail","Package":"example.com/demo/calc","Test":"TestTable/neg","Elapsed":0}
{"Time":"2026-11-22T02:40:05.76845333Z","Action":"run","Package":"example.com/demo/calc","Test":"TestTable/zero"}
{"Time":"2026-11-22T02:40:05.768455914Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable/zero","Output":"=== RUN   TestTable/zero\n"}
{"Time":"2026-11-22T02:40:05.768459186Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable/zero","Output":"--- PASS: TestTable/zero (0.00s)\n"}
{"Time":"2026-11-22T02:40:05.768462029Z","Action":"pass","Package":"example.com/demo/calc","Test":"TestTable/zero","Elapsed":0}
{"Time":"2026-11-22T02:40:05.768465131Z","Action":"output","Package":"example.com/demo/calc","Test":"TestTable","Output":"--- FAIL: TestTable (0.00s)\n"}
{"Time":"2026-11-22T02:40:05.768467878Z","Action":"fail","Package":"example.com/demo/calc","Test":"TestTable","Elapsed":0}
{"Time":"2026-11-22T02:40:05.768470609Z","Action":"run","Package":"example.com/demo/calc","Test":"TestSkip"}
{"Time":"2026-11-22T02:40:05.768473068Z","Action":"output","Package":"example.com/demo/calc","Test":"TestSkip","Output":"=== RUN   TestSkip\n"}
{"Time":"2026-11-22T02:40:05.768475696Z","Action":"output","Package":"example.com/demo/calc","Test":"TestSkip","Output":"    calc_test.go:24: not on this platform\n"}
{"Time":"2026-11-22T02:40:05.768479013Z","Action":"output","Package":"example.com/demo/calc","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}
{"Time":"2026-11-22T02:40:05.76848162Z","Action":"skip","Package":"example.com/demo/calc","Test":"TestSkip","Elapsed":0}
{"Time":"2026-11-22T02:40:05.76848427Z","Action":"run","Package":"example.com/demo/calc","Test":"TestParentFails"}
{"Time":"2026-11-22T02:40:05.768489003Z","Action":"output","Package":"example.com/demo/calc","Test":"TestParentFails","Output":"=== RUN   TestParentFails\n"}
{"Time":"2026-11-22T02:40:05.768491958Z","Action":"run","Package":"example.com/demo/calc","Test":"TestParentFails/ok"}
{"Time":"2026-11-22T02:40:05.768494621Z","Action":"output","Package":"example.com/demo/calc","Test":"TestParentFails/ok","Output":"=== RUN   TestParentFails/ok\n"}
{"Time":"2026-11-22T02:40:05.768514941Z","Action":"output","Package":"example.com/demo/calc","Test":"TestParentFails/ok","Output":"--- PASS: TestParentFails/ok (0.00s)\n"}
{"Time":"2026-11-22T02:40:05.768518375Z","Action":"pass","Package":"example.com/demo/calc","Test":"TestParentFails/ok","Elapsed":0}
{"Time":"2026-11-22T02:40:05.768521244Z","Action":"output","Package":"example.com/demo/calc","Test":"TestParentFails","Output":"    calc_test.go:28: parent check failed\n"}
{"Time":"2026-11-22T02:40:05.768524665Z","Action":"output","Package":"example.com/demo/calc","Test":"TestParentFails","Output":"--- FAIL: TestParentFails (0.00s)\n"}
{"Time":"2026-11-22T02:40:05.768527359Z","Action":"fail","Package":"example.com/demo/calc","Test":"TestParentFails","Elapsed":0}
{"Time":"2026-11-22T02:40:05.768530144Z","Action":"output","Package":"example.com/demo/calc","Output":"FAIL\n"}
{"Time":"2026-11-22T02:40:05.772629082Z","Action":"output","Package":"example.com/demo/calc","Output":"FAIL\texample.com/demo/calc\t0.008s\n"}
{"Time":"2026-11-22T02:40:05.772655364Z","Action":"fail","Package":"example.com/demo/calc","Elapsed":0.008}
`

// goBuildFailed is real output.
const goBuildFailed = `{"ImportPath":"example.com/demo/broken [example.com/demo/broken.test]","Action":"build-output","Output":"# example.com/demo/broken [example.com/demo/broken.test]\n"}
{"ImportPath":"example.com/demo/broken [example.com/demo/broken.test]","Action":"build-output","Output":"broken/broken.go:3:23: cannot use \"x\" (untyped string constant) as int value in return statement\n"}
{"ImportPath":"example.com/demo/broken [example.com/demo/broken.test]","Action":"build-fail"}
{"Time":"2026-11-22T02:40:05.950546706Z","Action":"start","Package":"example.com/demo/broken"}
{"Time":"2026-11-22T02:40:05.950632883Z","Action":"output","Package":"example.com/demo/broken","Output":"FAIL\texample.com/demo/broken [build failed]\n"}
{"Time":"2026-11-22T02:40:05.950640862Z","Action":"fail","Package":"example.com/demo/broken","Elapsed":0,"FailedBuild":"example.com/demo/broken [example.com/demo/broken.test]"}
`

// goPanic is real output.
const goPanic = `{"Time":"2026-11-22T02:40:06.357199035Z","Action":"start","Package":"example.com/demo/panicky"}
{"Time":"2026-11-22T02:40:06.362502324Z","Action":"run","Package":"example.com/demo/panicky","Test":"TestOK"}
{"Time":"2026-11-22T02:40:06.362530117Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Time":"2026-11-22T02:40:06.362571927Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Time":"2026-11-22T02:40:06.36258738Z","Action":"pass","Package":"example.com/demo/panicky","Test":"TestOK","Elapsed":0}
{"Time":"2026-11-22T02:40:06.3625939Z","Action":"run","Package":"example.com/demo/panicky","Test":"TestPanics"}
{"Time":"2026-11-22T02:40:06.362596979Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"=== RUN   TestPanics\n"}
{"Time":"2026-11-22T02:40:06.362602654Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"--- FAIL: TestPanics (0.00s)\n"}
{"Time":"2026-11-22T02:40:06.364684544Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"panic: assignment to entry in nil map [recovered, repanicked]\n"}
{"Time":"2026-11-22T02:40:06.364701354Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"\n"}
{"Time":"2026-11-22T02:40:06.364705478Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"goroutine 5 [running]:\n"}
{"Time":"2026-11-22T02:40:06.364709245Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"testing.tRunner.func1.2({0x55a7a0, 0x6cac60})\n"}
{"Time":"2026-11-22T02:40:06.364744112Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"\t/usr/local/go/src/testing/testing.go:1974 +0x232\n"}
{"Time":"2026-11-22T02:40:06.364747644Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"testing.tRunner.func1()\n"}
{"Time":"2026-11-22T02:40:06.364751175Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"\t/usr/local/go/src/testing/testing.go:1977 +0x349\n"}
{"Time":"2026-11-22T02:40:06.364754818Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"panic({0x55a7a0?, 0x6cac60?})\n"}
{"Time":"2026-11-22T02:40:06.364758629Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"\t/usr/local/go/src/runtime/panic.go:860 +0x13a\n"}
{"Time":"2026-11-22T02:40:06.364766871Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"example.com/demo/panicky.TestPanics(0x367b1df76908?)\n"}
{"Time":"2026-11-22T02:40:06.364770457Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"\t/tmp/gs/panicky/p_test.go:9 +0x28\n"}
{"Time":"2026-11-22T02:40:06.364774176Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"testing.tRunner(0x367b1df76908, 0x592e50)\n"}
{"Time":"2026-11-22T02:40:06.364778013Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"\t/usr/local/go/src/testing/testing.go:2036 +0xea\n"}
{"Time":"2026-11-22T02:40:06.364781423Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"created by testing.(*T).Run in goroutine 1\n"}
{"Time":"2026-11-22T02:40:06.364785183Z","Action":"output","Package":"example.com/demo/panicky","Test":"TestPanics","Output":"\t/usr/local/go/src/testing/testing.go:2101 +0x4c5\n"}
{"Time":"2026-11-22T02:40:06.365100193Z","Action":"fail","Package":"example.com/demo/panicky","Test":"TestPanics","Elapsed":0}
{"Time":"2026-11-22T02:40:06.365122322Z","Action":"output","Package":"example.com/demo/panicky","Output":"FAIL\texample.com/demo/panicky\t0.007s\n"}
{"Time":"2026-11-22T02:40:06.365133681Z","Action":"fail","Package":"example.com/demo/panicky","Elapsed":0.008}
`

// goTimeout is real output.
const goTimeout = `{"Time":"2026-11-22T02:40:07.036954396Z","Action":"start","Package":"example.com/demo/slow"}
{"Time":"2026-11-22T02:40:07.04746261Z","Action":"run","Package":"example.com/demo/slow","Test":"TestQuick"}
{"Time":"2026-11-22T02:40:07.047491824Z","Action":"output","Package":"example.com/demo/slow","Test":"TestQuick","Output":"=== RUN   TestQuick\n"}
{"Time":"2026-11-22T02:40:07.047525509Z","Action":"output","Package":"example.com/demo/slow","Test":"TestQuick","Output":"--- PASS: TestQuick (0.00s)\n"}
{"Time":"2026-11-22T02:40:07.047529375Z","Action":"pass","Package":"example.com/demo/slow","Test":"TestQuick","Elapsed":0}
{"Time":"2026-11-22T02:40:07.047535011Z","Action":"run","Package":"example.com/demo/slow","Test":"TestHangs"}
{"Time":"2026-11-22T02:40:07.047537516Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"=== RUN   TestHangs\n"}
{"Time":"2026-11-22T02:40:08.048011815Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"panic: test timed out after 1s\n"}
{"Time":"2026-11-22T02:40:08.048054804Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\trunning tests:\n"}
{"Time":"2026-11-22T02:40:08.048060104Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t\tTestHangs (1s)\n"}
{"Time":"2026-11-22T02:40:08.048064692Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\n"}
{"Time":"2026-11-22T02:40:08.048068323Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"goroutine 5 [running]:\n"}
{"Time":"2026-11-22T02:40:08.048072125Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"testing.(*M).startAlarm.func1()\n"}
{"Time":"2026-11-22T02:40:08.048075843Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/testing/testing.go:2802 +0x354\n"}
{"Time":"2026-11-22T02:40:08.048080364Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"created by time.goFunc\n"}
{"Time":"2026-11-22T02:40:08.048083721Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/time/sleep.go:215 +0x2d\n"}
{"Time":"2026-11-22T02:40:08.048087195Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\n"}
{"Time":"2026-11-22T02:40:08.048090462Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"goroutine 1 [chan receive]:\n"}
{"Time":"2026-11-22T02:40:08.048094457Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"testing.(*T).Run(0x13088399e248, {0x585b20?, 0x0?}, 0x592e38)\n"}
{"Time":"2026-11-22T02:40:08.048099071Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/testing/testing.go:2109 +0x4e5\n"}
{"Time":"2026-11-22T02:40:08.048103092Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"testing.runTests.func1(0x13088399e248)\n"}
{"Time":"2026-11-22T02:40:08.04810665Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/testing/testing.go:2585 +0x3e\n"}
{"Time":"2026-11-22T02:40:08.048110343Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"testing.tRunner(0x13088399e248, 0x130883990c58)\n"}
{"Time":"2026-11-22T02:40:08.048113909Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/testing/testing.go:2036 +0xea\n"}
{"Time":"2026-11-22T02:40:08.048117565Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"testing.runTests({0x587baf, 0x10}, {0x589540, 0x15}, 0x1308839a2048, {0x6cc7e0, 0x2, 0x2}, {0xc2b8b36202b47b30, 0x3ba302b6, ...})\n"}
{"Time":"2026-11-22T02:40:08.04812169Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/testing/testing.go:2583 +0x505\n"}
{"Time":"2026-11-22T02:40:08.048138411Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"testing.(*M).Run(0x1308839941e0)\n"}
{"Time":"2026-11-22T02:40:08.048156408Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/testing/testing.go:2443 +0x6ac\n"}
{"Time":"2026-11-22T02:40:08.048160546Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"main.main()\n"}
{"Time":"2026-11-22T02:40:08.048164035Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t_testmain.go:48 +0x9b\n"}
{"Time":"2026-11-22T02:40:08.048167671Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\n"}
{"Time":"2026-11-22T02:40:08.048170814Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"goroutine 20 [sleep]:\n"}
{"Time":"2026-11-22T02:40:08.048174301Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"time.Sleep(0x2540be400)\n"}
{"Time":"2026-11-22T02:40:08.048177647Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/runtime/time.go:363 +0x165\n"}
{"Time":"2026-11-22T02:40:08.048181233Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"example.com/demo/slow.TestHangs(0x13088399e6c8?)\n"}
{"Time":"2026-11-22T02:40:08.048184721Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/tmp/gs/slow/s_test.go:11 +0x1d\n"}
{"Time":"2026-11-22T02:40:08.048188103Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"testing.tRunner(0x13088399e6c8, 0x592e38)\n"}
{"Time":"2026-11-22T02:40:08.048191785Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/testing/testing.go:2036 +0xea\n"}
{"Time":"2026-11-22T02:40:08.048195401Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"created by testing.(*T).Run in goroutine 1\n"}
{"Time":"2026-11-22T02:40:08.048198729Z","Action":"output","Package":"example.com/demo/slow","Test":"TestHangs","Output":"\t/usr/local/go/src/testing/testing.go:2101 +0x4c5\n"}
{"Time":"2026-11-22T02:40:08.048881689Z","Action":"output","Package":"example.com/demo/slow","Output":"FAIL\texample.com/demo/slow\t1.010s\n"}
{"Time":"2026-11-22T02:40:08.048908383Z","Action":"fail","Package":"example.com/demo/slow","Elapsed":1.012}
`

// goInitPanic is real output.
const goInitPanic = `{"Time":"2026-11-22T02:52:54.61629657Z","Action":"start","Package":"example.com/demo/initpanic"}
{"Time":"2026-11-22T02:52:54.628994225Z","Action":"output","Package":"example.com/demo/initpanic","Output":"panic: assignment to entry in nil map\n"}
{"Time":"2026-11-22T02:52:54.629055503Z","Action":"output","Package":"example.com/demo/initpanic","Output":"\n"}
{"Time":"2026-11-22T02:52:54.629064331Z","Action":"output","Package":"example.com/demo/initpanic","Output":"goroutine 1 [running]:\n"}
{"Time":"2026-11-22T02:52:54.629068732Z","Action":"output","Package":"example.com/demo/initpanic","Output":"example.com/demo/initpanic.load(...)\n"}
{"Time":"2026-11-22T02:52:54.62907265Z","Action":"output","Package":"example.com/demo/initpanic","Output":"\t/tmp/gs/initpanic/i_test.go:9\n"}
{"Time":"2026-11-22T02:52:54.629076423Z","Action":"output","Package":"example.com/demo/initpanic","Output":"example.com/demo/initpanic.init()\n"}
{"Time":"2026-11-22T02:52:54.629080161Z","Action":"output","Package":"example.com/demo/initpanic","Output":"\t/tmp/gs/initpanic/i_test.go:5 +0x28\n"}
{"Time":"2026-11-22T02:52:54.629400309Z","Action":"output","Package":"example.com/demo/initpanic","Output":"FAIL\texample.com/demo/initpanic\t0.008s\n"}
{"Time":"2026-11-22T02:52:54.629413225Z","Action":"fail","Package":"example.com/demo/initpanic","Elapsed":0.013}
`

// goSetupFailed is real output.
const goSetupFailed = `{"ImportPath":"example.com/demo/doesnotexist","Action":"build-output","Output":"# example.com/demo/setup\n"}
{"ImportPath":"example.com/demo/doesnotexist","Action":"build-output","Output":"setup/s_test.go:6:2: no required module provides package example.com/demo/doesnotexist; to add it:\n"}
{"ImportPath":"example.com/demo/doesnotexist","Action":"build-output","Output":"\tgo get example.com/demo/doesnotexist\n"}
{"ImportPath":"example.com/demo/doesnotexist","Action":"build-fail"}
{"Time":"2026-11-22T02:52:54.772120126Z","Action":"start","Package":"example.com/demo/setup"}
{"Time":"2026-11-22T02:52:54.772173017Z","Action":"output","Package":"example.com/demo/setup","Output":"FAIL\texample.com/demo/setup [setup failed]\n"}
{"Time":"2026-11-22T02:52:54.77227696Z","Action":"fail","Package":"example.com/demo/setup","Elapsed":0,"FailedBuild":"example.com/demo/doesnotexist"}
`

// nodeTAP is real output.
const nodeTAP = `TAP version 13
# Subtest: top level passes
ok 1 - top level passes
  ---
  duration_ms: 1.888714
  ...
# Subtest: math
    # Subtest: adds
    ok 1 - adds
      ---
      duration_ms: 0.421133
      ...
    # Subtest: nested
        # Subtest: subtracts
        not ok 1 - subtracts
          ---
          duration_ms: 2.31929
          location: '/tmp/nt/test/math.test.js:13:10'
          failureType: 'testCodeFailure'
          error: |-
            Expected values to be strictly equal:
            
            2 !== 1
            
          code: 'ERR_ASSERTION'
          name: 'AssertionError'
          expected: 1
          actual: 2
          operator: 'strictEqual'
          stack: |-
            TestContext.<anonymous> (/tmp/nt/test/math.test.js:14:14)
            Test.runInAsyncScope (node:async_hooks:206:9)
            Test.run (node:internal/test_runner/test:796:25)
            Test.start (node:internal/test_runner/test:702:17)
            node:internal/test_runner/test:1133:71
            node:internal/per_context/primordials:482:82
            new Promise (<anonymous>)
            new SafePromise (node:internal/per_context/primordials:450:29)
            node:internal/per_context/primordials:482:9
            Array.map (<anonymous>)
          ...
        # Subtest: skipped one
        ok 2 - skipped one # SKIP not ready
          ---
          duration_ms: 0.211662
          ...
        1..2
    not ok 2 - nested
      ---
      duration_ms: 2.951454
      type: 'suite'
      location: '/tmp/nt/test/math.test.js:12:8'
      failureType: 'subtestsFailed'
      error: '1 subtest failed'
      code: 'ERR_TEST_FAILURE'
      ...
    # Subtest: todo one
    ok 3 - todo one # TODO
      ---
      duration_ms: 0.1893
      ...
    1..3
not ok 2 - math
  ---
  duration_ms: 4.211752
  type: 'suite'
  location: '/tmp/nt/test/math.test.js:8:6'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
# Subtest: parent with subtests
    # Subtest: child a
    ok 1 - child a
      ---
      duration_ms: 0.226932
      ...
    # Subtest: child b
    ok 2 - child b
      ---
      duration_ms: 0.265549
      ...
    1..2
ok 3 - parent with subtests
  ---
  duration_ms: 1.335224
  ...
# Subtest: other works
ok 4 - other works
  ---
  duration_ms: 1.891151
  ...
# Subtest: throws
not ok 5 - throws
  ---
  duration_ms: 0.445205
  location: '/tmp/nt/test/other.test.js:3:1'
  failureType: 'testCodeFailure'
  error: 'boom'
  code: 'ERR_TEST_FAILURE'
  stack: |-
    TestContext.<anonymous> (/tmp/nt/test/other.test.js:3:30)
    Test.runInAsyncScope (node:async_hooks:206:9)
    Test.run (node:internal/test_runner/test:796:25)
    Test.processPendingSubtests (node:internal/test_runner/test:526:18)
    Test.postRun (node:internal/test_runner/test:889:19)
    Test.run (node:internal/test_runner/test:835:12)
    async Test.processPendingSubtests (node:internal/test_runner/test:526:7)
  ...
1..5
# tests 10
# suites 2
# pass 6
# fail 2
# cancelled 0
# skipped 1
# todo 1
# duration_ms 374.069748
`

// cargoTest is real output (out2.txt); ¦ stands for a backquote.
var cargoTest = bq(`    Finished ¦test¦ profile [unoptimized + debuginfo] target(s) in 0.02s
     Running unittests src/lib.rs (target/debug/deps/demo-8348ca7a80742723)

running 4 tests
test tests::adds ... ok
test tests::panics - should panic ... ok
test tests::slow_one ... ignored, slow
test tests::subtracts ... FAILED

failures:

---- tests::subtracts stdout ----

thread 'tests::subtracts' (8542) panicked at src/lib.rs:30:9:
assertion ¦left == right¦ failed
  left: 0
 right: 1


failures:
    tests::subtracts

test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass ¦--lib¦
     Running tests/api.rs (target/debug/deps/api-0de6da0f84bbd512)

running 2 tests
test it_unwraps ... FAILED
test it_works ... ok

failures:

---- it_unwraps stdout ----

thread 'it_unwraps' (8544) panicked at tests/api.rs:9:7:
called ¦Option::unwrap()¦ on a ¦None¦ value
note: run with ¦RUST_BACKTRACE=1¦ environment variable to display a backtrace


failures:
    it_unwraps

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass ¦--test api¦
   Doc-tests demo

running 2 tests
test src/lib.rs - sub (line 12) ... FAILED
test src/lib.rs - add (line 3) ... ok

failures:

---- src/lib.rs - sub (line 12) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (8620) panicked at /tmp/rustdoctestjhFq3m/doctest_bundle_2024.rs:14:1:
assertion ¦left == right¦ failed
  left: 2
 right: 1
note: run with ¦RUST_BACKTRACE=1¦ environment variable to display a backtrace



failures:
    src/lib.rs - sub (line 12)

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

all doctests ran in 0.29s; merged doctests compilation took 0.28s
error: doctest failed, to rerun pass ¦--doc¦
error: 3 targets failed:
    ¦--lib¦
    ¦--test api¦
    ¦--doc¦
`)

// cargoTestBacktrace is real output (out.txt); ¦ stands for a backquote.
var cargoTestBacktrace = bq(`   Compiling demo v0.1.0 (/tmp/ct/demo)
    Finished ¦test¦ profile [unoptimized + debuginfo] target(s) in 1.08s
     Running unittests src/lib.rs (target/debug/deps/demo-8348ca7a80742723)

running 4 tests
test tests::adds ... ok
test tests::slow_one ... ignored, slow
test tests::panics - should panic ... ok
test tests::subtracts ... FAILED

failures:

---- tests::subtracts stdout ----

thread 'tests::subtracts' (8417) panicked at src/lib.rs:30:9:
assertion ¦left == right¦ failed
  left: 0
 right: 1
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::assert_failed_inner
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:439:17
   3: core::panicking::assert_failed::<i32, i32>
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5
   4: demo::tests::subtracts
             at ./src/lib.rs:30:9
   5: demo::tests::subtracts::{{closure}}
             at ./src/lib.rs:29:19
   6: core::ops::function::FnOnce::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
   7: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
note: Some details are omitted, run with ¦RUST_BACKTRACE=full¦ for a verbose backtrace.


failures:
    tests::subtracts

test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.13s

error: test failed, to rerun pass ¦--lib¦
     Running tests/api.rs (target/debug/deps/api-0de6da0f84bbd512)

running 2 tests
test it_works ... ok
test it_unwraps ... FAILED

failures:

---- it_unwraps stdout ----

thread 'it_unwraps' (8419) panicked at tests/api.rs:9:7:
called ¦Option::unwrap()¦ on a ¦None¦ value
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::panic
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:150:5
   3: core::option::unwrap_failed
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/option.rs:2236:5
   4: core::option::Option<T>::unwrap
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/option.rs:1016:21
   5: api::it_unwraps
             at ./tests/api.rs:9:7
   6: api::it_unwraps::{{closure}}
             at ./tests/api.rs:7:16
   7: core::ops::function::FnOnce::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
   8: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
note: Some details are omitted, run with ¦RUST_BACKTRACE=full¦ for a verbose backtrace.


failures:
    it_unwraps

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.12s

error: test failed, to rerun pass ¦--test api¦
   Doc-tests demo

running 2 tests
test src/lib.rs - add (line 3) ... ok
test src/lib.rs - sub (line 12) ... FAILED

failures:

---- src/lib.rs - sub (line 12) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (8446) panicked at /tmp/rustdoctestA5Oagw/doctest_bundle_2024.rs:14:1:
assertion ¦left == right¦ failed
  left: 2
 right: 1
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::assert_failed_inner
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:439:17
   3: core::panicking::assert_failed::<i32, i32>
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5
   4: doctest_bundle_2024::__doctest_1::main
   5: doctest_bundle_2024::__doctest_1::__main_fn
   6: doctest_runner_2024::__doctest_1::TEST::{closure#0}
   7: <doctest_runner_2024::__doctest_1::TEST::{closure#0} as core::ops::function::FnOnce<()>>::call_once
   8: doctest_runner_2024::main
   9: <fn() -> std::process::ExitCode as core::ops::function::FnOnce<()>>::call_once
note: Some details are omitted, run with ¦RUST_BACKTRACE=full¦ for a verbose backtrace.



failures:
    src/lib.rs - sub (line 12)

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

all doctests ran in 0.40s; merged doctests compilation took 0.29s
error: doctest failed, to rerun pass ¦--doc¦
error: 3 targets failed:
    ¦--lib¦
    ¦--test api¦
    ¦--doc¦
`)

// cargoCompileError is real output (out3.txt); ¦ stands for a backquote.
var cargoCompileError = bq(`   Compiling demo v0.1.0 (/tmp/ct/broken)
error[E0277]: cannot add ¦&str¦ to ¦i32¦
 --> src/lib.rs:7:7
  |
7 |     a + "b"
  |       ^ no implementation for ¦i32 + &str¦
  |
  = help: the trait ¦Add<&str>¦ is not implemented for ¦i32¦
help: the following other types implement trait ¦Add<Rhs>¦
 --> /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/arith.rs:99:8
  |
  = note: ¦i32¦ implements ¦Add¦
 ::: /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/arith.rs:114:0
  |
  = note: in this macro invocation
 --> /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/internal_macros.rs:22:8
  |
  = note: ¦&i32¦ implements ¦Add<i32>¦
 ::: /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/internal_macros.rs:33:8
  |
  = note: ¦i32¦ implements ¦Add<&i32>¦
 ::: /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/internal_macros.rs:44:8
  |
  = note: ¦&i32¦ implements ¦Add¦
  = note: this error originates in the macro ¦add_impl¦ (in Nightly builds, run with -Z macro-backtrace for more info)

For more information about this error, try ¦rustc --explain E0277¦.
error: could not compile ¦demo¦ (lib) due to 1 previous error
warning: build failed, waiting for other jobs to finish...
error: could not compile ¦demo¦ (lib test) due to 1 previous error
`)

// ---- forged results (go 1.26, go test -json ./...) ----

// goForgedTestMain is real output of a TestMain that prints unframed
// "=== RUN   TestFake", "--- PASS: TestFake (0.00s)", "PASS" and
// "ok  \texample.com/fx/a\t0.001s" and exits 0 without m.Run; TestReal,
// which fails, never runs.
const goForgedTestMain = `{"Time":"2026-11-24T02:02:58.845071348Z","Action":"start","Package":"example.com/fx/a"}
{"Time":"2026-11-24T02:02:58.847827517Z","Action":"run","Package":"example.com/fx/a","Test":"TestFake"}
{"Time":"2026-11-24T02:02:58.847854698Z","Action":"output","Package":"example.com/fx/a","Test":"TestFake","Output":"=== RUN   TestFake\n"}
{"Time":"2026-11-24T02:02:58.847918115Z","Action":"output","Package":"example.com/fx/a","Test":"TestFake","Output":"--- PASS: TestFake (0.00s)\n"}
{"Time":"2026-11-24T02:02:58.847929954Z","Action":"pass","Package":"example.com/fx/a","Test":"TestFake","Elapsed":0}
{"Time":"2026-11-24T02:02:58.847936552Z","Action":"output","Package":"example.com/fx/a","Output":"PASS\n"}
{"Time":"2026-11-24T02:02:58.847948408Z","Action":"output","Package":"example.com/fx/a","Output":"ok  \texample.com/fx/a\t0.001s\n"}
{"Time":"2026-11-24T02:02:58.848320083Z","Action":"output","Package":"example.com/fx/a","Output":"ok  \texample.com/fx/a\t0.003s\n"}
{"Time":"2026-11-24T02:02:58.848342144Z","Action":"pass","Package":"example.com/fx/a","Elapsed":0.003}
`

// goForgedFramed is real output of a TestMain that prints runner lines
// framed with 0x16 (fmt.Print("\x16--- PASS: TestReal (0.00s)\n"), …) and
// exits 0 without m.Run: TestFake does not exist, TestReal fails when it
// runs. Nothing in it differs from a real run.
const goForgedFramed = `{"Time":"2026-11-24T02:02:58.852585875Z","Action":"start","Package":"example.com/fx/b"}
{"Time":"2026-11-24T02:02:58.857113599Z","Action":"run","Package":"example.com/fx/b","Test":"TestFake"}
{"Time":"2026-11-24T02:02:58.857135205Z","Action":"output","Package":"example.com/fx/b","Test":"TestFake","Output":"=== RUN   TestFake\n"}
{"Time":"2026-11-24T02:02:58.857204097Z","Action":"output","Package":"example.com/fx/b","Test":"TestFake","Output":"--- PASS: TestFake (0.00s)\n"}
{"Time":"2026-11-24T02:02:58.857209017Z","Action":"pass","Package":"example.com/fx/b","Test":"TestFake","Elapsed":0}
{"Time":"2026-11-24T02:02:58.857213944Z","Action":"run","Package":"example.com/fx/b","Test":"TestReal"}
{"Time":"2026-11-24T02:02:58.8572169Z","Action":"output","Package":"example.com/fx/b","Test":"TestReal","Output":"=== RUN   TestReal\n"}
{"Time":"2026-11-24T02:02:58.85722087Z","Action":"output","Package":"example.com/fx/b","Test":"TestReal","Output":"--- PASS: TestReal (0.00s)\n"}
{"Time":"2026-11-24T02:02:58.857224126Z","Action":"pass","Package":"example.com/fx/b","Test":"TestReal","Elapsed":0}
{"Time":"2026-11-24T02:02:58.857227213Z","Action":"output","Package":"example.com/fx/b","Output":"PASS\n"}
{"Time":"2026-11-24T02:02:58.85729651Z","Action":"output","Package":"example.com/fx/b","Output":"ok  \texample.com/fx/b\t0.005s\n"}
{"Time":"2026-11-24T02:02:58.85736738Z","Action":"pass","Package":"example.com/fx/b","Elapsed":0.005}
`

// goForgedRedirect is real output of a TestMain that runs the tests with
// os.Stdout on /dev/null, then prints framed lines saying the failing
// TestReal passed. Nothing in it differs from a real run.
const goForgedRedirect = `{"Time":"2026-11-24T02:02:58.877494403Z","Action":"start","Package":"example.com/fx/c"}
{"Time":"2026-11-24T02:02:58.882862267Z","Action":"run","Package":"example.com/fx/c","Test":"TestReal"}
{"Time":"2026-11-24T02:02:58.882879807Z","Action":"output","Package":"example.com/fx/c","Test":"TestReal","Output":"=== RUN   TestReal\n"}
{"Time":"2026-11-24T02:02:58.88324167Z","Action":"output","Package":"example.com/fx/c","Test":"TestReal","Output":"--- PASS: TestReal (0.00s)\n"}
{"Time":"2026-11-24T02:02:58.883578167Z","Action":"pass","Package":"example.com/fx/c","Test":"TestReal","Elapsed":0}
{"Time":"2026-11-24T02:02:58.88358531Z","Action":"output","Package":"example.com/fx/c","Output":"PASS\n"}
{"Time":"2026-11-24T02:02:58.883790583Z","Action":"output","Package":"example.com/fx/c","Output":"ok  \texample.com/fx/c\t0.006s\n"}
{"Time":"2026-11-24T02:02:58.884064774Z","Action":"pass","Package":"example.com/fx/c","Elapsed":0.007}
`

// goForgedInit is real output of an init() in a non-test file that prints
// framed runner lines and calls os.Exit(0); the failing TestReal never
// runs. Nothing in it differs from a real run.
const goForgedInit = `{"Time":"2026-11-24T02:02:58.885986235Z","Action":"start","Package":"example.com/fx/d"}
{"Time":"2026-11-24T02:02:58.891653907Z","Action":"run","Package":"example.com/fx/d","Test":"TestReal"}
{"Time":"2026-11-24T02:02:58.891671601Z","Action":"output","Package":"example.com/fx/d","Test":"TestReal","Output":"=== RUN   TestReal\n"}
{"Time":"2026-11-24T02:02:58.891719604Z","Action":"output","Package":"example.com/fx/d","Test":"TestReal","Output":"--- PASS: TestReal (0.00s)\n"}
{"Time":"2026-11-24T02:02:58.891728452Z","Action":"pass","Package":"example.com/fx/d","Test":"TestReal","Elapsed":0}
{"Time":"2026-11-24T02:02:58.891733928Z","Action":"output","Package":"example.com/fx/d","Output":"PASS\n"}
{"Time":"2026-11-24T02:02:58.892003068Z","Action":"output","Package":"example.com/fx/d","Output":"ok  \texample.com/fx/d\t0.006s\n"}
{"Time":"2026-11-24T02:02:58.892023332Z","Action":"pass","Package":"example.com/fx/d","Elapsed":0.006}
`

// goForgedAfterRun is real output of a TestMain that prints unframed
// runner lines after m.Run: test2json makes them plain output.
const goForgedAfterRun = `{"Time":"2026-11-24T02:04:03.196969926Z","Action":"start","Package":"example.com/fx/e"}
{"Time":"2026-11-24T02:04:03.200115815Z","Action":"run","Package":"example.com/fx/e","Test":"TestReal"}
{"Time":"2026-11-24T02:04:03.200163799Z","Action":"output","Package":"example.com/fx/e","Test":"TestReal","Output":"=== RUN   TestReal\n"}
{"Time":"2026-11-24T02:04:03.200329893Z","Action":"output","Package":"example.com/fx/e","Test":"TestReal","Output":"--- PASS: TestReal (0.00s)\n"}
{"Time":"2026-11-24T02:04:03.200367559Z","Action":"pass","Package":"example.com/fx/e","Test":"TestReal","Elapsed":0}
{"Time":"2026-11-24T02:04:03.200385119Z","Action":"output","Package":"example.com/fx/e","Output":"PASS\n"}
{"Time":"2026-11-24T02:04:03.200471457Z","Action":"output","Package":"example.com/fx/e","Output":"=== RUN   TestFake\n"}
{"Time":"2026-11-24T02:04:03.200489068Z","Action":"output","Package":"example.com/fx/e","Output":"--- PASS: TestFake (0.00s)\n"}
{"Time":"2026-11-24T02:04:03.200984021Z","Action":"output","Package":"example.com/fx/e","Output":"ok  \texample.com/fx/e\t0.003s\n"}
{"Time":"2026-11-24T02:04:03.201445939Z","Action":"pass","Package":"example.com/fx/e","Elapsed":0.004}
`

// goForgedFramedAfterRun is real output of a TestMain that prints framed
// runner lines (a passing TestFake, then PASS) after m.Run.
const goForgedFramedAfterRun = `{"Time":"2026-11-24T02:06:56.982278145Z","Action":"start","Package":"example.com/fx/i"}
{"Time":"2026-11-24T02:06:56.98448255Z","Action":"run","Package":"example.com/fx/i","Test":"TestReal"}
{"Time":"2026-11-24T02:06:56.984498585Z","Action":"output","Package":"example.com/fx/i","Test":"TestReal","Output":"=== RUN   TestReal\n"}
{"Time":"2026-11-24T02:06:56.984531738Z","Action":"output","Package":"example.com/fx/i","Test":"TestReal","Output":"--- PASS: TestReal (0.00s)\n"}
{"Time":"2026-11-24T02:06:56.984535951Z","Action":"pass","Package":"example.com/fx/i","Test":"TestReal","Elapsed":0}
{"Time":"2026-11-24T02:06:56.98454035Z","Action":"output","Package":"example.com/fx/i","Output":"PASS\n"}
{"Time":"2026-11-24T02:06:56.98454278Z","Action":"run","Package":"example.com/fx/i","Test":"TestFake"}
{"Time":"2026-11-24T02:06:56.9845445Z","Action":"output","Package":"example.com/fx/i","Test":"TestFake","Output":"=== RUN   TestFake\n"}
{"Time":"2026-11-24T02:06:56.984548234Z","Action":"output","Package":"example.com/fx/i","Test":"TestFake","Output":"--- PASS: TestFake (0.00s)\n"}
{"Time":"2026-11-24T02:06:56.984550217Z","Action":"pass","Package":"example.com/fx/i","Test":"TestFake","Elapsed":0}
{"Time":"2026-11-24T02:06:56.984552178Z","Action":"output","Package":"example.com/fx/i","Output":"PASS\n"}
{"Time":"2026-11-24T02:06:56.984661348Z","Action":"output","Package":"example.com/fx/i","Output":"ok  \texample.com/fx/i\t0.002s\n"}
{"Time":"2026-11-24T02:06:56.985081353Z","Action":"pass","Package":"example.com/fx/i","Elapsed":0.003}
`

// goForgedBareReport is real output of a TestMain that prints only a
// framed "--- PASS: TestGhost (0.00s)" and "PASS" and exits 0 without
// m.Run: a pass event without a run event.
const goForgedBareReport = `{"Time":"2026-11-24T02:06:56.988377097Z","Action":"start","Package":"example.com/fx/j"}
{"Time":"2026-11-24T02:06:56.989779666Z","Action":"output","Package":"example.com/fx/j","Test":"TestGhost","Output":"--- PASS: TestGhost (0.00s)\n"}
{"Time":"2026-11-24T02:06:56.989806559Z","Action":"pass","Package":"example.com/fx/j","Test":"TestGhost","Elapsed":0}
{"Time":"2026-11-24T02:06:56.989810488Z","Action":"output","Package":"example.com/fx/j","Output":"PASS\n"}
{"Time":"2026-11-24T02:06:56.99006184Z","Action":"output","Package":"example.com/fx/j","Output":"ok  \texample.com/fx/j\t0.002s\n"}
{"Time":"2026-11-24T02:06:56.990093956Z","Action":"pass","Package":"example.com/fx/j","Elapsed":0.002}
`

// goForgedLog is real output of a test that calls
// t.Log("note\x16=== RUN   TestY\n\x16--- PASS: TestY (0.00s)"): a 0x16
// anywhere in the output starts a framing line. Nothing in it differs from
// a real run.
const goForgedLog = `{"Time":"2026-11-24T02:15:05.684438781Z","Action":"start","Package":"example.com/fx/k"}
{"Time":"2026-11-24T02:15:05.68709596Z","Action":"run","Package":"example.com/fx/k","Test":"TestLog"}
{"Time":"2026-11-24T02:15:05.687125639Z","Action":"output","Package":"example.com/fx/k","Test":"TestLog","Output":"=== RUN   TestLog\n"}
{"Time":"2026-11-24T02:15:05.687289907Z","Action":"output","Package":"example.com/fx/k","Test":"TestLog","Output":"    k_test.go:6: note"}
{"Time":"2026-11-24T02:15:05.687297087Z","Action":"run","Package":"example.com/fx/k","Test":"TestY"}
{"Time":"2026-11-24T02:15:05.687300254Z","Action":"output","Package":"example.com/fx/k","Test":"TestY","Output":"=== RUN   TestY\n"}
{"Time":"2026-11-24T02:15:05.687303307Z","Action":"output","Package":"example.com/fx/k","Test":"TestY","Output":"        "}
{"Time":"2026-11-24T02:15:05.687309999Z","Action":"output","Package":"example.com/fx/k","Test":"TestY","Output":"--- PASS: TestY (0.00s)\n"}
{"Time":"2026-11-24T02:15:05.687698624Z","Action":"pass","Package":"example.com/fx/k","Test":"TestY","Elapsed":0}
{"Time":"2026-11-24T02:15:05.68770555Z","Action":"output","Package":"example.com/fx/k","Test":"TestLog","Output":"--- PASS: TestLog (0.00s)\n"}
{"Time":"2026-11-24T02:15:05.687709507Z","Action":"pass","Package":"example.com/fx/k","Test":"TestLog","Elapsed":0}
{"Time":"2026-11-24T02:15:05.687712794Z","Action":"output","Package":"example.com/fx/k","Output":"PASS\n"}
{"Time":"2026-11-24T02:15:05.687772765Z","Action":"output","Package":"example.com/fx/k","Output":"ok  \texample.com/fx/k\t0.003s\n"}
{"Time":"2026-11-24T02:15:05.68779354Z","Action":"pass","Package":"example.com/fx/k","Elapsed":0.003}
`
