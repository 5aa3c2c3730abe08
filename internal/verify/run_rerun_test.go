package verify

import (
	"testing"

	"github.com/ultra-dev/ultra/internal/verify/report"
)

func TestWouldRerun(t *testing.T) {
	cases := func(n int, st report.Status) []report.Case {
		out := make([]report.Case, n)
		for i := range out {
			out[i] = report.Case{Name: "T", Status: st}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		cmds []CommandResult
		want bool
	}{
		{"green", []CommandResult{{Tests: cases(3, report.Passed)}}, false},
		{"one failed", []CommandResult{{Tests: append(cases(2, report.Passed), cases(1, report.Failed)...)}}, true},
		{"one errored, second command", []CommandResult{{Tests: cases(1, report.Passed)}, {Tests: cases(1, report.Error)}}, true},
		{"timed out", []CommandResult{{Tests: cases(1, report.Failed), TimedOut: true}}, false},
		{"too many to re-run", []CommandResult{{Tests: cases(MaxRerun+1, report.Failed)}}, false},
		{"skipped only", []CommandResult{{Tests: cases(2, report.Skipped)}}, false},
		{"no commands", nil, false},
	} {
		if got := (&Result{Commands: tc.cmds}).WouldRerun(); got != tc.want {
			t.Errorf("%s: WouldRerun = %v, want %v", tc.name, got, tc.want)
		}
	}
}
