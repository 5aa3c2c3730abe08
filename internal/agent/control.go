package agent

// waiting says what the run waits on a person for ("" for nothing).
func (r *runner) waiting() string {
	switch {
	case r.st.PendingPlan != "":
		return "plan acceptance: ultra approve " + r.row.ID
	}
	return ""
}
