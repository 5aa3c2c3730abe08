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
