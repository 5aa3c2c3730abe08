package store

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/claim"
)

func TestClaimsTakeWaitRelease(t *testing.T) { forEachBackend(t, testClaimsTakeWaitRelease) }

func testClaimsTakeWaitRelease(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	now := time.Now()
	c := func(worker, path string, start, end int) claim.Claim {
		return claim.Claim{Run: "run1", Worker: worker, Goal: "goal-" + worker, Path: path, Start: start, End: end, Reason: "why"}
	}
	if cs, err := s.TakeClaims(ctx, []claim.Claim{c("w1", "calc.go", 1, 20), c("w1", "README.md", 0, 0)}, now); err != nil || cs != nil {
		t.Fatalf("first claims: %v %v", cs, err)
	}
	// Another run's workers claim apart.
	other := c("x1", "calc.go", 0, 0)
	other.Run = "run2"
	if cs, err := s.TakeClaims(ctx, []claim.Claim{other}, now); err != nil || cs != nil {
		t.Fatalf("another run: %v %v", cs, err)
	}
	// An overlap records nothing of the request, and names the holder.
	cs, err := s.TakeClaims(ctx, []claim.Claim{c("w2", "util.go", 0, 0), c("w2", "calc.go", 15, 30)}, now)
	if err != nil || len(cs) != 1 || !strings.Contains(cs[0].String(), "held by worker w1 for goal goal-w1") {
		t.Fatalf("overlap: %v %v", cs, err)
	}
	if held, _ := s.WorkerClaims(ctx, "w2"); len(held) != 0 {
		t.Fatalf("a refused request recorded %v", held)
	}
	// Lines apart do not overlap; what a worker holds is not taken twice.
	if cs, err := s.TakeClaims(ctx, []claim.Claim{c("w2", "calc.go", 21, 30)}, now); err != nil || cs != nil {
		t.Fatalf("apart: %v %v", cs, err)
	}
	if cs, err := s.TakeClaims(ctx, []claim.Claim{c("w2", "calc.go", 22, 25)}, now); err != nil || cs != nil {
		t.Fatalf("again: %v %v", cs, err)
	}
	if held, _ := s.HeldClaims(ctx, "run1"); len(held) != 3 || held[2].String() != "calc.go:21-30" || held[2].Worker != "w2" {
		t.Fatalf("held %v", held)
	}
	// Released when w1's goal lands: w2 gets the file.
	if n, err := s.ReleaseClaims(ctx, "w1", "landed", now); err != nil || n != 2 {
		t.Fatalf("release: %d %v", n, err)
	}
	if cs, err := s.TakeClaims(ctx, []claim.Claim{c("w2", "calc.go", 0, 0)}, now); err != nil || cs != nil {
		t.Fatalf("after release: %v %v", cs, err)
	}
}

// Two workers claiming the same file at once: exactly one gets it.
func TestClaimsRace(t *testing.T) { forEachBackend(t, testClaimsRace) }

func testClaimsRace(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	for round := range 10 {
		var wg sync.WaitGroup
		got := make([]bool, 4)
		path := "f" + string(rune('a'+round)) + ".go"
		for i := range got {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				w := string(rune('a' + i))
				cs, err := s.TakeClaims(ctx, []claim.Claim{{Run: "r", Worker: w, Goal: w, Path: path}}, time.Now())
				if err != nil {
					t.Error(err)
				}
				got[i] = err == nil && cs == nil
			}(i)
		}
		wg.Wait()
		n := 0
		for _, g := range got {
			if g {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d workers got %s", round, n, path)
		}
	}
}

// A worker's task row names its run; a worker whose goal is done is not
// listed as work waiting to land (it lands with its run).
func TestWorkerTaskRows(t *testing.T) { forEachBackend(t, testWorkerTaskRows) }

func testWorkerTaskRows(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	for _, id := range []string{"parent", "worker"} {
		r := newRun(id)
		r.Status, r.Workspace = "complete", Workspace{Branch: "ultra/" + id}
		r.TaskRow = Task{Status: "done", Goal: "G001-x"}
		if id == "worker" {
			r.TaskRow.Parent, r.TaskRow.Claim = "parent", "calc.go:1-9"
		}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetRun(ctx, "worker")
	if err != nil || got.TaskRow.Parent != "parent" || got.TaskRow.Claim != "calc.go:1-9" {
		t.Fatalf("worker row %+v %v", got, err)
	}
	vs, err := s.ListTasks(ctx, TaskFilter{RecentFinished: 0})
	if err != nil || len(vs) != 1 || vs[0].ID != "parent" {
		t.Fatalf("listed %v %v", vs, err)
	}
	all, _ := s.ListTasks(ctx, TaskFilter{All: true})
	if m := byID(all); m["worker"].TaskRow.Parent != "parent" {
		t.Fatalf("all %+v", all)
	}
}
