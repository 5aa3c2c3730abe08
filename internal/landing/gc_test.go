package landing

import "testing"

func TestDryRunWording(t *testing.T) {
	out := []Collected{
		{Action: ActionRemoved, Detail: "branch ultra/x kept: 1 unmerged commit(s); dropped 2 uncommitted file(s)"},
		{Action: ActionKept, Detail: "in progress"},
		{Action: ActionRemoved, Detail: "3 gate cache record(s) not used for 30 days"},
	}
	dryRunWording(out)
	want := []Collected{
		{Action: "would remove", Detail: "branch ultra/x kept: 1 unmerged commit(s); would drop 2 uncommitted file(s)"},
		{Action: "kept", Detail: "in progress"},
		{Action: "would remove", Detail: "3 gate cache record(s) not used for 30 days"},
	}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, out[i], want[i])
		}
	}
}
