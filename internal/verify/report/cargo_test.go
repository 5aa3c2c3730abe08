package report

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCargo(t *testing.T) {
	runParserCases(t, []parserCase{
		{
			name: "cargo test", parse: Cargo, input: cargoTest,
			counts: [4]int{4, 3, 1, 0},
			order: []string{"tests::adds", "tests::panics", "tests::slow_one", "tests::subtracts", "it_unwraps", "it_works",
				"src/lib.rs - sub (line 12)", "src/lib.rs - add (line 3)"},
			cases: []want{
				{name: "tests::subtracts", status: Failed, suite: "src/lib.rs", file: "src/lib.rs", line: 30,
					msg: []string{"panicked at src/lib.rs:30:9", "assertion `left == right` failed", "left: 0"}},
				{name: "tests::slow_one", status: Skipped, msg: []string{"slow"}},
				{name: "it_unwraps", status: Failed, suite: "tests/api.rs", file: "tests/api.rs", line: 9,
					msg: []string{"called `Option::unwrap()` on a `None` value"}},
				{name: "src/lib.rs - sub (line 12)", status: Failed, suite: "Doc-tests demo", file: "src/lib.rs", line: 12,
					msg: []string{"left: 2"}},
			},
		},
		{
			name: "with backtraces", parse: Cargo, input: cargoTestBacktrace,
			counts: [4]int{4, 3, 1, 0},
			cases: []want{{name: "tests::subtracts", status: Failed, file: "src/lib.rs", line: 30,
				msg: []string{"assertion `left == right` failed"}}},
		},
		{
			name: "compile error", parse: Cargo, input: cargoCompileError,
			counts: [4]int{0, 0, 0, 2},
			order:  []string{"demo (lib)", "demo (lib test)"},
			cases: []want{{name: "demo (lib)", status: Error, suite: "demo", file: "src/lib.rs", line: 7,
				msg: []string{"error[E0277]: cannot add `&str` to `i32`"}}},
		},
		{
			name: "crash", parse: Cargo, input: cargoCrash,
			counts: [4]int{1, 0, 0, 1},
			order:  []string{"tests::adds", "src/lib.rs"},
			cases:  []want{{name: "src/lib.rs", status: Error, msg: []string{"signal: 11, SIGSEGV", "1 of 3 tests"}}},
		},
		{
			name: "stack overflow", parse: Cargo, input: cargoStackOverflow,
			counts: [4]int{1, 1, 0, 0},
			cases:  []want{{name: "recurses_forever", status: Failed, suite: "tests/deep.rs", msg: []string{"never finished", "SIGABRT"}}},
		},
		{
			name: "truncated", parse: Cargo, input: cargoTest[:strings.Index(cargoTest, "test tests::slow_one")],
			counts: [4]int{2, 0, 0, 0}, truncated: true,
		},
		{
			name: "nextest", parse: Cargo, input: nextestOld,
			counts: [4]int{3, 2, 0, 0},
			order:  []string{"tests::adds", "tests::panics", "tests::subtracts", "it_works", "it_crashes"},
			cases: []want{
				{name: "tests::subtracts", status: Failed, suite: "demo", file: "src/lib.rs", line: 30, dur: 6 * time.Millisecond,
					msg: []string{"assertion `left == right` failed"}},
				{name: "it_crashes", status: Failed, suite: "demo::api"},
			},
		},
		{
			name: "nextest, newer", parse: Cargo, input: nextestNew,
			counts: [4]int{2, 1, 1, 0},
			order:  []string{"tests::adds", "tests::subtracts", "tests::flaky", "tests::slow_one"},
			cases: []want{
				{name: "tests::subtracts", status: Failed, file: "src/lib.rs", line: 30, msg: []string{"right: 1"}},
				{name: "tests::flaky", status: Passed},
			},
		},
		{
			name: "colours", parse: Cargo, input: "running 1 test\ntest a::b ... \x1b[32mok\x1b[0m\n\ntest result: \x1b[32mok\x1b[0m. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
			counts: [4]int{1, 0, 0, 0},
		},
	})
}

func TestCargoNotCargo(t *testing.T) {
	for _, in := range []string{"", "hello\n", "ok 1 - a\n", "PASS\nok  \tx\t0.1s\n"} {
		if r, err := Cargo(strings.NewReader(in)); !errors.Is(err, ErrNotFormat) || r != nil {
			t.Errorf("Cargo(%q) = %v, %v; want nil, error", in, r, err)
		}
	}
}
