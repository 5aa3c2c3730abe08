package fleet

import (
	"slices"
	"testing"
)

// A person's ask becomes the command a worker goes on with the run by,
// after taking it over: resume, or approve for a plan, with the axes and
// budgets asked, and the guidance last (after "--": it may start with a
// dash).
func TestResumeAskArgv(t *testing.T) {
	for _, c := range []struct {
		name string
		ask  ResumeAsk
		want []string
	}{
		{"resume", ResumeAsk{}, []string{"resume", "--output", "jsonl", "--take-over", "R"}},
		{"resume with guidance and budgets", ResumeAsk{Guidance: "-x is wrong", Budgets: map[string]string{"max-turns": "40", "max-cost": "2"}},
			[]string{"resume", "--output", "jsonl", "--take-over", "R", "--max-cost", "2", "--max-turns", "40", "--", "-x is wrong"}},
		{"the plan accepted", ResumeAsk{Approve: true, Steer: map[string]string{"control": "autonomous", "permission_profile": "strict"}},
			[]string{"approve", "--output", "jsonl", "--take-over", "R", "--autonomous", "--permission-profile", "strict"}},
	} {
		if got := c.ask.Argv("R"); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
