package event

// Review verdicts, one word each in events, records, the command line and
// every surface: a review approves the change, or it has blockers. They
// are the review's recommendation: approve is APPROVE, blockers is
// REQUEST_CHANGES (the older spellings, still accepted).
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

// A review's architecture status, one word each everywhere: whether the
// change fits the codebase's structure.
const (
	// ArchitectureClear: the change fits the codebase's structure.
	ArchitectureClear = "CLEAR"
	// ArchitectureConcerns: it works, but its structure should change
	// before it lands.
	ArchitectureConcerns = "CONCERNS"
	// ArchitectureBlocked: the design is wrong for the codebase.
	ArchitectureBlocked = "BLOCKED"
)

// ArchitectureStatuses lists the architecture statuses, clean first.
var ArchitectureStatuses = []string{ArchitectureClear, ArchitectureConcerns, ArchitectureBlocked}

// ReviewClean reports whether a review lets the change land as it is: it
// approves and its architecture status is CLEAR. A review that gave no
// architecture status (a review-mode run may omit it; records older than
// the status) is judged by its verdict alone.
func ReviewClean(verdict, architecture string) bool {
	return ReviewVerdict(verdict) == VerdictApprove && (architecture == "" || architecture == ArchitectureClear)
}
