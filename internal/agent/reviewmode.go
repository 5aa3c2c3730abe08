package agent

// ReviewSpec is what a review-mode run inspects: a run's branch, a range
// of commits, or the working tree's uncommitted changes.
type ReviewSpec struct {
	Run  string `json:"run,omitempty"`  // a run whose branch is reviewed against its start
	Base string `json:"base,omitempty"` // the range's base commit
	Head string `json:"head,omitempty"` // the range's head ("" with Base: the working tree)
}

func reviewModePrompt(workdir string) string {
	return `You are ultra, a coding agent, reviewing a change in the repository at ` + workdir + `.
Inspect the diff, the tests, risks, regressions, security issues and missing evidence with read, glob, grep and read-only bash (git diff, git log, …); nothing may change here.
End with review{verdict, findings:[{severity, file, line, reason, fix}]}; severity is blocker, major, minor or nit. ultra writes the findings to .ultra/state/reviews/.`
}
