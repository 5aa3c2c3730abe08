package agent

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/claim"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/store"
)

// A worker holds claims only while it is the worker of a goal in
// progress: the run releases those of a worker whose goal landed (its
// process ended between the merge and the release), failed for good, or
// went to another worker; the current worker of a goal in progress (a
// stopped one too) keeps its own.
func TestFreeClaims(t *testing.T) {
	st := tempStore(t)
	ctx := context.Background()
	now := time.Now()
	for _, c := range []struct{ worker, goal, path string }{
		{"w-landed", "G001", "a.go"}, {"w-now", "G002", "b.go"}, {"w-before", "G002", "c.go"}, {"w-failed", "G003", "d.go"},
	} {
		if cs, err := st.TakeClaims(ctx, []claim.Claim{{Run: "run", Worker: c.worker, Goal: c.goal, Path: c.path}}, now); err != nil || len(cs) > 0 {
			t.Fatalf("claim %v: %v %v", c, cs, err)
		}
	}
	r := &runner{o: Options{Store: st, Now: time.Now}, row: &store.Run{ID: "run"}, bus: event.NewBus("run", 0, time.Now),
		st:    runState{Goals: &goalState{Parallel: &parallelState{ByGoal: map[string]string{"G001": "w-landed", "G002": "w-now", "G003": "w-failed"}}}},
		goals: &goalRecorder{file: &goal.File{Goals: []goal.Goal{{ID: "G001", Status: goal.Complete}, {ID: "G002", Status: goal.InProgress}, {ID: "G003", Status: goal.Failed}}}}}
	r.freeClaims(ctx)
	held, err := st.HeldClaims(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range held {
		paths = append(paths, h.Worker+":"+h.Path)
	}
	if !slices.Equal(paths, []string{"w-now:b.go"}) {
		t.Fatalf("held after freeClaims: %v", paths)
	}
}

// A worker's held files count each file once, however many of its lines
// or symbols it claims, and what it claims again is not counted twice.
func TestHeldFiles(t *testing.T) {
	c := func(p string, start, end int) claim.Claim { return claim.Claim{Path: p, Start: start, End: end} }
	for _, tc := range []struct {
		name       string
		held, want []claim.Claim
		n          int
	}{
		{"none", nil, nil, 0},
		{"new files", nil, []claim.Claim{c("a.go", 0, 0), c("b.go", 0, 0)}, 2},
		{"lines of one file", []claim.Claim{c("a.go", 1, 5)}, []claim.Claim{c("a.go", 10, 20)}, 1},
		{"claimed again", []claim.Claim{c("a.go", 0, 0), c("b.go", 0, 0)}, []claim.Claim{c("b.go", 0, 0), c("c.go", 0, 0)}, 3},
	} {
		if got := heldFiles(tc.held, tc.want); got != tc.n {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.n)
		}
	}
}
