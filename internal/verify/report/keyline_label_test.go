package report

import "testing"

// Messages whose first meaningful line is only a label (quicktest's
// "error:", doctest's "Expected:") or a location (testify's "Error
// Trace:"): the key line carries the values that follow.
func TestKeyLineLabels(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"cast_test.go:52: \n    error:\n      values are not equal\n    got:\n      bool(true)\n    want:\n      bool(false)\n",
			"error: values are not equal | got: bool(true) | want: bool(false)"},
		{"\n        Error Trace:\tfoo_test.go:12\n        Error:      \tNot equal: \n        \t            \texpected: 1\n        \t            \tactual  : 2\n        Test:       \tTestX\n",
			"Error: Not equal: | expected: 1 | actual : 2"},
		{"017 \n018 >>> parse('{}', 'spam')\nExpected:\n    <Result ('spam',) {}>\nGot:\n    <Result ('spam2',) {}>\n",
			"Expected: <Result ('spam',) {}> | Got: <Result ('spam2',) {}>"},
		{"    calc_test.go:7: Add(2, 3) = -1, want 5\n", "Add(2, 3) = -1, want 5"},
	} {
		if got := KeyLine(tc.msg); got != tc.want {
			t.Errorf("KeyLine(%q)\n = %q\nwant %q", tc.msg, got, tc.want)
		}
	}
}
