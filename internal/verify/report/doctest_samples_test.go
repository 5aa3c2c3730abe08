package report

// Real doctest reports: pytest 7.2.1 (Debian's /usr/bin/pytest, run with
// --doctest-glob='*.rst' --doctest-glob='*.md' --doctest-modules, xunit1
// and xunit2) and cargo 1.95 (a crate whose doc-tests fail), generated once
// and pasted here (timestamps, hostnames, thread ids and hashes removed).

// pytestDoctestXunit1 is real: README.rst and docs/usage.md (text files),
// calc/ops.py (a module) and src/spkg/m.py (a module in a src layout,
// raising) fail; calc.ops.sub and tests/test_calc.py pass.
var pytestDoctestXunit1 = bq(`<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="4" skipped="0" tests="6" time="0.035"><testcase classname="README.rst" name="README.rst" file="README.rst" line="0" time="0.002"><failure message="001 Calc&#10;002 ====&#10;003 &#10;004 &gt;&gt;&gt; 1 + 1&#10;005 2&#10;006 &gt;&gt;&gt; print(&quot;hello&quot;)&#10;Expected:&#10;    hallo&#10;Got:&#10;    hello&#10;&#10;/tmp/proj/README.rst:6: DocTestFailure">001 Calc
002 ====
003 
004 &gt;&gt;&gt; 1 + 1
005 2
006 &gt;&gt;&gt; print("hello")
Expected:
    hallo
Got:
    hello

/tmp/proj/README.rst:6: DocTestFailure</failure></testcase><testcase classname="calc.ops" name="calc.ops.add" file="calc/ops.py" line="1" time="0.001"><failure message="002 Add.&#10;003 &#10;004     &gt;&gt;&gt; add(1, 2)&#10;005     3&#10;006     &gt;&gt;&gt; add(2, 2)&#10;Expected:&#10;    5&#10;Got:&#10;    4&#10;&#10;/tmp/proj/calc/ops.py:6: DocTestFailure">002 Add.
003 
004     &gt;&gt;&gt; add(1, 2)
005     3
006     &gt;&gt;&gt; add(2, 2)
Expected:
    5
Got:
    4

/tmp/proj/calc/ops.py:6: DocTestFailure</failure></testcase><testcase classname="calc.ops" name="calc.ops.sub" file="calc/ops.py" line="12" time="0.000" /><testcase classname="docs.usage.md" name="usage.md" file="docs/usage.md" line="0" time="0.000"><failure message="001 # Usage&#10;002 &#10;003 ¦¦¦&#10;004 &gt;&gt;&gt; for i in range(3):&#10;Expected:&#10;    0&#10;Got:&#10;    0&#10;    1&#10;    2&#10;&#10;/tmp/proj/docs/usage.md:4: DocTestFailure">001 # Usage
002 
003 ¦¦¦
004 &gt;&gt;&gt; for i in range(3):
Expected:
    0
Got:
    0
    1
    2

/tmp/proj/docs/usage.md:4: DocTestFailure</failure></testcase><testcase classname="src.spkg.m" name="spkg.m.f" file="src/spkg/m.py" line="1" time="0.005"><failure message="002 &#10;003     &gt;&gt;&gt; int('x')&#10;UNEXPECTED EXCEPTION: ValueError(&quot;invalid literal for int() with base 10: 'x'&quot;)&#10;Traceback (most recent call last):&#10;  File &quot;/usr/lib/python3.11/doctest.py&quot;, line 1351, in __run&#10;    exec(compile(example.source, filename, &quot;single&quot;,&#10;  File &quot;&lt;doctest spkg.m.f[0]&gt;&quot;, line 1, in &lt;module&gt;&#10;ValueError: invalid literal for int() with base 10: 'x'&#10;/tmp/proj/src/spkg/m.py:3: UnexpectedException">002 
003     &gt;&gt;&gt; int('x')
UNEXPECTED EXCEPTION: ValueError("invalid literal for int() with base 10: 'x'")
Traceback (most recent call last):
  File "/usr/lib/python3.11/doctest.py", line 1351, in __run
    exec(compile(example.source, filename, "single",
  File "&lt;doctest spkg.m.f[0]&gt;", line 1, in &lt;module&gt;
ValueError: invalid literal for int() with base 10: 'x'
/tmp/proj/src/spkg/m.py:3: UnexpectedException</failure></testcase><testcase classname="tests.test_calc" name="test_ok" file="tests/test_calc.py" line="0" time="0.000" /></testsuite></testsuites>`)

// pytestDoctestXunit2 is the same run with junit_family=xunit2 (no file
// attribute).
var pytestDoctestXunit2 = bq(`<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="4" skipped="0" tests="6" time="0.025"><testcase classname="README.rst" name="README.rst" time="0.002"><failure message="001 Calc&#10;002 ====&#10;003 &#10;004 &gt;&gt;&gt; 1 + 1&#10;005 2&#10;006 &gt;&gt;&gt; print(&quot;hello&quot;)&#10;Expected:&#10;    hallo&#10;Got:&#10;    hello&#10;&#10;/tmp/proj/README.rst:6: DocTestFailure">001 Calc
002 ====
003 
004 &gt;&gt;&gt; 1 + 1
005 2
006 &gt;&gt;&gt; print("hello")
Expected:
    hallo
Got:
    hello

/tmp/proj/README.rst:6: DocTestFailure</failure></testcase><testcase classname="calc.ops" name="calc.ops.add" time="0.001"><failure message="002 Add.&#10;003 &#10;004     &gt;&gt;&gt; add(1, 2)&#10;005     3&#10;006     &gt;&gt;&gt; add(2, 2)&#10;Expected:&#10;    5&#10;Got:&#10;    4&#10;&#10;/tmp/proj/calc/ops.py:6: DocTestFailure">002 Add.
003 
004     &gt;&gt;&gt; add(1, 2)
005     3
006     &gt;&gt;&gt; add(2, 2)
Expected:
    5
Got:
    4

/tmp/proj/calc/ops.py:6: DocTestFailure</failure></testcase><testcase classname="calc.ops" name="calc.ops.sub" time="0.000" /><testcase classname="docs.usage.md" name="usage.md" time="0.000"><failure message="001 # Usage&#10;002 &#10;003 ¦¦¦&#10;004 &gt;&gt;&gt; for i in range(3):&#10;Expected:&#10;    0&#10;Got:&#10;    0&#10;    1&#10;    2&#10;&#10;/tmp/proj/docs/usage.md:4: DocTestFailure">001 # Usage
002 
003 ¦¦¦
004 &gt;&gt;&gt; for i in range(3):
Expected:
    0
Got:
    0
    1
    2

/tmp/proj/docs/usage.md:4: DocTestFailure</failure></testcase><testcase classname="src.spkg.m" name="spkg.m.f" time="0.001"><failure message="002 &#10;003     &gt;&gt;&gt; int('x')&#10;UNEXPECTED EXCEPTION: ValueError(&quot;invalid literal for int() with base 10: 'x'&quot;)&#10;Traceback (most recent call last):&#10;  File &quot;/usr/lib/python3.11/doctest.py&quot;, line 1351, in __run&#10;    exec(compile(example.source, filename, &quot;single&quot;,&#10;  File &quot;&lt;doctest spkg.m.f[0]&gt;&quot;, line 1, in &lt;module&gt;&#10;ValueError: invalid literal for int() with base 10: 'x'&#10;/tmp/proj/src/spkg/m.py:3: UnexpectedException">002 
003     &gt;&gt;&gt; int('x')
UNEXPECTED EXCEPTION: ValueError("invalid literal for int() with base 10: 'x'")
Traceback (most recent call last):
  File "/usr/lib/python3.11/doctest.py", line 1351, in __run
    exec(compile(example.source, filename, "single",
  File "&lt;doctest spkg.m.f[0]&gt;", line 1, in &lt;module&gt;
ValueError: invalid literal for int() with base 10: 'x'
/tmp/proj/src/spkg/m.py:3: UnexpectedException</failure></testcase><testcase classname="tests.test_calc" name="test_ok" time="0.000" /></testsuite></testsuites>`)

// cargoDoctests is real: a unit test and three doc-tests fail, one of
// them to compile; their panics and errors point into the snippets as
// compiled (src/lib.rs:5, :7, :27), not where they are.
var cargoDoctests = bq(`   Compiling calc v0.1.0 (/tmp/ct)
    Finished ¦test¦ profile [unoptimized + debuginfo] target(s) in 0.10s
     Running unittests src/lib.rs (target/debug/deps/calc-0123456789abcdef)

running 2 tests
test tests::adds ... ok
test tests::bad ... FAILED

failures:

---- tests::bad stdout ----

thread 'tests::bad' (1234) panicked at src/lib.rs:34:24:
assertion ¦left == right¦ failed: math is broken
  left: 3
 right: 4
note: run with ¦RUST_BACKTRACE=1¦ environment variable to display a backtrace


failures:
    tests::bad

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

error: test failed, to rerun pass ¦--lib¦
   Doc-tests calc

running 4 tests
test src/lib.rs - add (line 9) ... ok
test src/lib.rs - (line 3) ... FAILED
test src/lib.rs - mul (line 25) ... FAILED
test src/lib.rs - sub (line 16) ... FAILED

failures:

---- src/lib.rs - (line 3) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (1234) panicked at src/lib.rs:5:1:
assertion ¦left == right¦ failed: crate docs are wrong
  left: 4
 right: 5
note: run with ¦RUST_BACKTRACE=1¦ environment variable to display a backtrace


---- src/lib.rs - mul (line 25) stdout ----
error: expected ¦;¦, found ¦}¦
  --> src/lib.rs:27:24
   |
27 | let y = calc::mul(2, 3)
   |                        ^ help: add ¦;¦ here
28 | } _doctest_main_src_lib_rs_25_0() }
   | - unexpected token

error: aborting due to 1 previous error

Couldn't compile the test.
---- src/lib.rs - sub (line 16) stdout ----
Test executable failed (exit status: 101).

stdout:
computing

stderr:

thread 'main' (1234) panicked at src/lib.rs:7:1:
assertion ¦left == right¦ failed: doc math
  left: 2
 right: 5
note: run with ¦RUST_BACKTRACE=1¦ environment variable to display a backtrace



failures:
    src/lib.rs - (line 3)
    src/lib.rs - mul (line 25)
    src/lib.rs - sub (line 16)

test result: FAILED. 1 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

error: doctest failed, to rerun pass ¦--doc¦
error: 2 targets failed:
    ¦--lib¦
    ¦--doc¦
`)
