package agent

import (
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/gate"
)

func TestFocusOn(t *testing.T) {
	cmds := func(ds ...time.Duration) []gate.Command {
		var out []gate.Command
		for _, d := range ds {
			out = append(out, gate.Command{Command: "go test ./...", Duration: d})
		}
		return out
	}
	failing := []gate.Failure{{Name: "TestAdd"}}
	fail := func(ds ...time.Duration) gate.Decision {
		return gate.Decision{Status: gate.Fail, Failing: failing, Commands: cmds(ds...)}
	}
	focused := func(d time.Duration) gate.Decision {
		return gate.Decision{Status: gate.Fail, Failing: failing, Focused: true, Commands: cmds(d)}
	}
	s := time.Second
	for _, tc := range []struct {
		name string
		prev []gate.Decision
		want int  // index in prev of the decision focused on, -1: none
		skip bool // none, though the last full run failed: the reason is said
	}{
		{"no decision", nil, -1, false},
		{"last full run passed", []gate.Decision{fail(10 * s), {Status: gate.Pass, Commands: cmds(10 * s)}}, -1, false},
		{"failed without naming tests", []gate.Decision{{Status: gate.Fail, Commands: cmds(10 * s)}}, -1, false},
		{"long suite", []gate.Decision{fail(10 * s)}, 0, false},
		{"suite at the floor", []gate.Decision{fail(minFocusSaving)}, 0, false},
		{"a suite of 2 s whose failing tests were never run alone", []gate.Decision{fail(2 * s)}, 0, false},
		{"long suite, two commands", []gate.Decision{fail(2*s, 2*s)}, 0, false},
		{"duration not recorded", []gate.Decision{fail(0)}, 0, false},
		{"short suite", []gate.Decision{fail(500 * time.Millisecond)}, -1, true},
		{"short suite, just under", []gate.Decision{fail(minFocusSaving - time.Millisecond)}, -1, true},
		{"cheap focused pass before", []gate.Decision{fail(10 * s), focused(2 * s)}, 0, false},
		{"focused pass cost about the whole suite", []gate.Decision{fail(10 * s), focused(8 * s)}, -1, true},
		{"focused pass at the share", []gate.Decision{fail(10 * s), focused(7 * s)}, -1, true},
		{"latest focused pass decides", []gate.Decision{fail(10 * s), focused(9 * s), focused(1 * s)}, 0, false},
		{"focused pass before the last full run does not count", []gate.Decision{focused(9 * s), fail(10 * s)}, 1, false},
		{"a cached decision is not a full run", []gate.Decision{fail(10 * s), {Status: gate.Pass, CachedFrom: 1}}, 0, false},
		{"a waived decision is not a full run", []gate.Decision{fail(10 * s), {Status: gate.Waived, Waiver: &gate.Waiver{By: "ann"}}}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := focusOn(tc.prev)
			switch {
			case tc.want < 0 && got != nil:
				t.Fatalf("focused on %+v, want none", *got)
			case tc.want < 0 && tc.skip != (why != ""):
				t.Fatalf("reason %q, want one: %v", why, tc.skip)
			case tc.want >= 0 && got != &tc.prev[tc.want]:
				t.Fatalf("focused on %v (%s), want decision %d", got, why, tc.want)
			}
		})
	}
}
