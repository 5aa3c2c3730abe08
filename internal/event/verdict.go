package event

// Review verdicts, one word each in events, records, the command line and
// every surface: a review approves the change, or it has blockers.
const (
	VerdictApprove  = "approve"
	VerdictBlockers = "blockers"
)

// ReviewVerdict is the one word of a review verdict given in any of its
// spellings (older records say APPROVE and REQUEST_CHANGES); "" for none.
func ReviewVerdict(v string) string {
	switch v {
	case VerdictApprove, "APPROVE":
		return VerdictApprove
	case VerdictBlockers, "REQUEST_CHANGES":
		return VerdictBlockers
	}
	return ""
}
