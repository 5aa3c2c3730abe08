package report

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTAP(t *testing.T) {
	runParserCases(t, []parserCase{
		{
			name: "node --test", parse: TAP, input: nodeTAP,
			// As node's own summary: "# pass 6", "# fail 2", "# skipped 1",
			// "# todo 1"; the suites are not tests, the parent test is.
			counts: [4]int{6, 2, 2, 0},
			order: []string{"top level passes", "math > adds", "math > nested > subtracts", "math > nested > skipped one", "math > todo one",
				"parent with subtests > child a", "parent with subtests > child b", "parent with subtests", "other works", "throws"},
			cases: []want{
				{name: "parent with subtests", status: Passed, kind: KindParent, parent: "-"},
				{name: "parent with subtests > child a", status: Passed, kind: "-", parent: "parent with subtests"},
				{name: "math > adds", status: Passed, kind: "-", parent: "-"},
				{name: "math > nested > subtracts", status: Failed, file: "/tmp/nt/test/math.test.js", line: 13,
					msg: []string{"Expected values to be strictly equal:", "2 !== 1", "expected: 1", "actual: 2", "math.test.js:14:14"},
					dur: 2319290 * time.Nanosecond},
				{name: "math > nested > skipped one", status: Skipped, msg: []string{"not ready"}},
				{name: "throws", status: Failed, file: "/tmp/nt/test/other.test.js", line: 3, msg: []string{"boom"}},
			},
		},
		{
			name: "bats", parse: TAP, input: batsTAP,
			counts: [4]int{2, 2, 1, 0},
			order:  []string{"addition using bc", "subtraction gives a negative number", "division by zero is reported", "prints usage", "version flag"},
			cases: []want{
				{name: "subtraction gives a negative number", status: Failed, file: "test/math.bats", line: 9, msg: []string{`[ "$result" -eq -1 ]' failed`}},
				{name: "prints usage", status: Failed, file: "test/cli.bats", line: 12, msg: []string{"error: unknown flag --help"}},
				{name: "division by zero is reported", status: Skipped, msg: []string{"bc is not installed"}},
			},
		},
		{
			name: "prove -v", parse: TAP, input: proveTAP,
			counts: [4]int{4, 1, 0, 0},
			order: []string{"t/basic.t > use App", "t/basic.t > adds numbers", "t/basic.t > has version",
				"t/other.t > use App", "t/other.t > loads config"},
			cases: []want{{name: "t/basic.t > adds numbers", status: Failed, suite: "t/basic.t", file: "t/basic.t", line: 8,
				msg: []string{"got: '3'", "expected: '4'"}}},
		},
		{
			// Test::More's note() between test points is a note, not the
			// name of the tests after it.
			name: "Test::More with notes", parse: TAP,
			input:  "ok 1 - use App\n# loading the config\nok 2 - loads config\nnot ok 3 - adds numbers\n#   Failed test 'adds numbers'\n1..3\n",
			counts: [4]int{2, 1, 0, 0},
			order:  []string{"use App", "loads config", "adds numbers"},
			cases:  []want{{name: "adds numbers", status: Failed}},
		},
		{
			name: "tape", parse: TAP, input: tapeTAP,
			counts: [4]int{2, 1, 0, 0},
			// The test's "# name" header names its assertions.
			order: []string{"add > should be strictly equal", "add > should be truthy", "subtract > should be strictly equal"},
			cases: []want{{name: "subtract > should be strictly equal", status: Failed, file: "/home/ci/app/test/math.js", line: 12,
				msg: []string{"operator: equal", "expected: 1", "actual: 2"}}},
		},
		{
			name: "tape, repeated assertions", parse: TAP, input: tapeRepeatsTAP,
			counts: [4]int{3, 1, 0, 0},
			// TAP's own numbers tell them apart, not their rank among
			// assertions of the same name.
			order: []string{"adds > should be strictly equal #1", "adds > should be strictly equal #2",
				"subtracts > should be strictly equal #3", "subtracts > should be strictly equal #4"},
			cases: []want{{name: "subtracts > should be strictly equal #4", status: Failed, file: "/home/ci/app/test/math.js", line: 14,
				msg: []string{"expected: 1", "actual: 2"}}},
		},
		{
			name: "repeated names in a subtest", parse: TAP,
			input:  "TAP version 14\n# Subtest: math\n    ok 1 - should be equal\n    not ok 2 - should be equal\n      ---\n      wanted: 1\n      found: 2\n      ...\n    1..2\nnot ok 1 - math\n1..1\n",
			counts: [4]int{1, 1, 0, 0},
			order:  []string{"math > should be equal #1", "math > should be equal #2"},
			cases:  []want{{name: "math > should be equal #2", status: Failed, msg: []string{"wanted: 1", "found: 2"}}},
		},
		{
			name: "Test::More diagnostics are not headers", parse: TAP,
			input:  "ok 1 - a\nnot ok 2 - b\n# Failed test 'b'\n# at t/x.t line 8.\nok 3 - c\n1..3\n# Looks like you failed 1 test of 3.\n",
			counts: [4]int{2, 1, 0, 0},
			order:  []string{"a", "b", "c"},
			cases:  []want{{name: "b", status: Failed, file: "t/x.t", line: 8}},
		},
		{
			name: "node-tap", parse: TAP, input: nodeTapTAP,
			counts: [4]int{1, 1, 0, 0},
			order:  []string{"test/app.test.js > adds > should be equal", "test/app.test.js > subtracts > should be equal"},
			cases: []want{{name: "test/app.test.js > subtracts > should be equal", status: Failed, file: "test/app.test.js", line: 12,
				msg: []string{"wanted: 1", "found: 2"}}},
		},
		{
			name: "bail out", parse: TAP, input: tapBailOut,
			counts: [4]int{1, 1, 0, 1},
			order:  []string{"connects", "migrates", "Bail out!"},
			cases:  []want{{name: "Bail out!", status: Error, msg: []string{"database unavailable"}}},
		},
		{
			name: "plan not met", parse: TAP, input: "TAP version 13\n1..10\nok 1 - a\nnot ok 2 - b\n",
			counts: [4]int{1, 1, 0, 0}, truncated: true,
		},
		{
			name: "trailing plan", parse: TAP, input: "ok 1 - a\nok 2 - b # TODO later\nnot ok 3 - c # SKIP no db\n1..3\n",
			counts: [4]int{1, 0, 2, 0},
		},
		{
			name: "stopped inside a subtest", parse: TAP, input: nodeTAP[:strings.Index(nodeTAP, "        # Subtest: skipped one")],
			counts: [4]int{2, 1, 0, 0}, truncated: true,
			order: []string{"top level passes", "math > adds", "math > nested > subtracts"},
		},
		{
			name: "stopped inside YAML", parse: TAP, input: nodeTAP[:strings.Index(nodeTAP, "          code: 'ERR_ASSERTION'")],
			counts: [4]int{2, 1, 0, 0}, truncated: true,
			cases: []want{{name: "math > nested > subtracts", status: Failed, msg: []string{"2 !== 1"}}},
		},
		{
			name: "summary counts more", parse: TAP, input: "ok 1 - a\n# tests 5\n# pass 5\n",
			counts: [4]int{1, 0, 0, 0}, truncated: true,
		},
		{
			name: "colours and escapes", parse: TAP, input: "\x1b[32mok\x1b[0m 1 - a \\# b\r\nnot ok 2 # skip\n1..2\n",
			counts: [4]int{1, 0, 1, 0},
			order:  []string{"a # b", "test 2"},
		},
	})
}

func TestTAPNotTAP(t *testing.T) {
	for _, in := range []string{"", "hello\nworld\n", "okay then\n", "PASS\n"} {
		if r, err := TAP(strings.NewReader(in)); !errors.Is(err, ErrNotFormat) || r != nil {
			t.Errorf("TAP(%q) = %v, %v; want nil, error", in, r, err)
		}
	}
	r, err := TAP(strings.NewReader("1..0 # SKIP no tests here\n"))
	if err != nil || r == nil || len(r.Cases) != 0 {
		t.Errorf("empty plan: %v, %v", r, err)
	}
}
