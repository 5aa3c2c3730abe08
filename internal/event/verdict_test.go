package event

import "testing"

func TestReviewVerdict(t *testing.T) {
	for in, want := range map[string]string{
		"approve": VerdictApprove, "APPROVE": VerdictApprove,
		"blockers": VerdictBlockers, "REQUEST_CHANGES": VerdictBlockers,
		"": "", "LGTM": "", "Approve": "",
	} {
		if got := ReviewVerdict(in); got != want {
			t.Errorf("ReviewVerdict(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReviewClean(t *testing.T) {
	for _, c := range []struct {
		verdict, arch string
		want          bool
	}{
		{"approve", "CLEAR", true},
		{"APPROVE", "CLEAR", true},
		{"approve", "", true}, // no status given: the verdict decides
		{"approve", "CONCERNS", false},
		{"approve", "BLOCKED", false},
		{"blockers", "CLEAR", false},
		{"REQUEST_CHANGES", "", false},
		{"blockers", "BLOCKED", false},
		{"", "CLEAR", false},
	} {
		if got := ReviewClean(c.verdict, c.arch); got != c.want {
			t.Errorf("ReviewClean(%q, %q) = %v, want %v", c.verdict, c.arch, got, c.want)
		}
	}
}
