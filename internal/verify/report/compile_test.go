package report

import "testing"

// The outputs are the compilers' own (go 1.26, gcc 12, rustc 1.8x, tsc 5,
// javac 17, CPython 3.12) on one-line mistakes.
func TestCompileError(t *testing.T) {
	for _, tc := range []struct{ name, out, want string }{
		{"go", "# example.com/g [example.com/g.test]\n./g.go:4:9: undefined: x\nFAIL\texample.com/g [build failed]\nFAIL\n",
			"./g.go:4:9: undefined: x"},
		{"gcc, a warning first", "c.c: In function ‘main’:\nc.c:2:7: warning: unused variable ‘y’ [-Wunused-variable]\n    2 |   int y = 1;\n      |       ^\n" +
			"c.c:3:10: error: ‘x’ undeclared (first use in this function)\n    3 |   return x;\n      |          ^\n" +
			"c.c:3:10: note: each undeclared identifier is reported only once for each function it appears in\nmake: *** [Makefile:3: t] Error 1\n",
			"c.c:3:10: error: ‘x’ undeclared (first use in this function)"},
		{"clang, coloured", "\x1b[1mt.c:3:10: \x1b[0m\x1b[0;1;31merror: \x1b[0m\x1b[1muse of undeclared identifier 'x'\x1b[0m\n1 error generated.\n",
			"t.c:3:10: error: use of undeclared identifier 'x'"},
		{"rustc", "   Compiling r v0.1.0 (/tmp/cc/r)\nwarning: unused variable: `unused`\n --> src/lib.rs:2:9\n" +
			"error[E0425]: cannot find value `x` in this scope\n --> src/lib.rs:3:5\n  |\n3 |     x\n  |     ^ not found in this scope\n\n" +
			"For more information about this error, try `rustc --explain E0425`.\nerror: could not compile `r` (lib) due to 1 previous error\n",
			"src/lib.rs:3:5: error[E0425]: cannot find value `x` in this scope"},
		{"rustc, no location", "error: could not compile `r` (lib) due to 1 previous error\n", ""},
		{"tsc", "src/a.ts(3,5): error TS2304: Cannot find name 'x'.\n\nFound 1 error in src/a.ts:3\n\n",
			"src/a.ts(3,5): error TS2304: Cannot find name 'x'."},
		{"javac", "A.java:3: error: cannot find symbol\n    return x;\n           ^\n  symbol:   variable x\n  location: class A\n1 error\n",
			"A.java:3: error: cannot find symbol"},
		{"python", "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File \"/tmp/cc/s.py\", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n",
			"/tmp/cc/s.py:1: SyntaxError: invalid syntax"},
		{"python, not a compile error", "Traceback (most recent call last):\n  File \"t.py\", line 5, in test_err\n    raise ValueError(\"boom\")\nValueError: boom\n", ""},
		{"go test log lines are not diagnostics", "    calc_test.go:12: got 2, want 3\n--- FAIL: TestX (0.00s)\n", ""},
		{"a panic's location is not a diagnostic", "thread 'tests::bad' panicked at src/lib.rs:12:24:\nassertion failed\n", ""},
	} {
		if got := CompileError(tc.out); got != tc.want {
			t.Errorf("%s: CompileError = %q, want %q", tc.name, got, tc.want)
		}
		if tc.want != "" {
			if got := KeyLine(tc.out); got != tc.want {
				t.Errorf("%s: KeyLine = %q, want %q", tc.name, got, tc.want)
			}
		}
	}
}
