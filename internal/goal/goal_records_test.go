package goal

import (
	"slices"
	"testing"
)

func TestRecords(t *testing.T) {
	r := RunRecords("20261128-055758-4d2be8")
	if got := r.Paths(); !slices.Equal(got, []string{".ultra/runs/20261128-055758-4d2be8/brief.md", ".ultra/runs/20261128-055758-4d2be8/goals.json", ".ultra/runs/20261128-055758-4d2be8/ledger.jsonl"}) {
		t.Fatalf("paths %v", got)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{".ultra/runs/r1/goals.json", true},
		{".ultra/runs/r2/evidence.txt", true},
		{".ultra/goals.json", true},
		{".ultra/ledger.jsonl", true},
		{".ultra/brief.md", true},
		{".ultra/config", false},
		{".ultra/runs", false},
		{".ultra/runsx/a", false},
		{"src/.ultra/runs/r1/goals.json", false},
		{"goals.json", false},
	} {
		if got := IsRecord(tc.path); got != tc.want {
			t.Errorf("IsRecord(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
