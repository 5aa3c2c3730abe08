package main

import (
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/agent"
)

func TestStatusLineSaysTheReasonOnce(t *testing.T) {
	for _, c := range []struct{ status, reason, want string }{
		{"interrupted", "interrupted", "status   interrupted\n"},
		{"escalated", "retries exhausted", "status   escalated: retries exhausted\n"},
		{"complete", "", "status   complete\n"},
	} {
		var b strings.Builder
		printStatus(&b, &agent.Status{ID: "r", Status: c.status, Reason: c.reason}, false)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s/%s:\n%s", c.status, c.reason, b.String())
		}
	}
}

func TestClipKeepsWhatFits(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"12345", 5, "12345"},
		{"123456", 5, "1234…"},
		{"a\x1b[31mb\n c", 10, "ab c"},
	} {
		if got := clip(c.s, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// The verify line is the latest decision in one sentence; the reasons of
// a decision it reuses only with -v. The limit line names the limit that
// ends the run first when it is not the retries.
func TestStatusVerifyAndLimitLines(t *testing.T) {
	s := &agent.Status{ID: "r", Status: "running",
		Retries: agent.Retries{Used: 2, Max: 10, Left: 8},
		Limit:   agent.Retries{What: "cycles of goal G001", Used: 2, Max: 5, Left: 3},
		LastVerify: &agent.VerifyView{Status: "PASS", Passed: 3,
			Reason: "the code decision 2 judged (it passed), with only ultra's own records written since (.ultra/goals.json)",
			Reused: []string{"the code decision 1 judged (it passed)", "3 tests passed"}}}
	for _, verbose := range []bool{false, true} {
		var b strings.Builder
		printStatus(&b, s, verbose)
		out := b.String()
		verify := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "verify ") {
				verify = l
			}
		}
		if strings.Count(verify, "decision") != 1 || !strings.Contains(verify, "the code decision 2 judged") {
			t.Errorf("verbose %v: the verify line is not one decision: %q", verbose, verify)
		}
		if got := strings.Contains(out, "· 3 tests passed"); got != verbose {
			t.Errorf("verbose %v: the reused reasons shown: %v\n%s", verbose, got, out)
		}
		if !strings.Contains(out, "limit    2 of 5 cycles of goal G001 used (3 left)") {
			t.Errorf("no limit line:\n%s", out)
		}
	}
	s.Limit = agent.Retries{What: "retries", Used: 2, Max: 10, Left: 8}
	var b strings.Builder
	printStatus(&b, s, false)
	if strings.Contains(b.String(), "limit ") {
		t.Errorf("a limit line when the retries bind:\n%s", b.String())
	}
}
