package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/store"
)

// ultra goals shows the final review in the words of every surface: the
// verdict's one word, the architecture status and its reasons.
func TestPrintGoalsShowsTheReview(t *testing.T) {
	for _, c := range []struct {
		r    goal.Review
		want []string
	}{
		{goal.Review{Rounds: 1, Verdict: "approve", Architecture: "CONCERNS", ArchitectureReasons: []string{"a second parser beside the lexer"}},
			[]string{"final review: round 1, approve, architecture CONCERNS\n", "  - architecture: a second parser beside the lexer\n"}},
		{goal.Review{Rounds: 2, Verdict: "REQUEST_CHANGES", Blockers: []goal.Blocker{{File: "a.go", Line: 3, Reason: "wrong"}}},
			[]string{"final review: round 2, blockers\n", "  - a.go:3: wrong\n"}},
	} {
		var b bytes.Buffer
		printGoals(&b, &store.Run{ID: "r1", Task: "t"}, &goal.File{Review: &c.r})
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%+v: no %q in\n%s", c.r, w, b.String())
			}
		}
	}
}
