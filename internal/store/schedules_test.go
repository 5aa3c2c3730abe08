package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func addSchedule(t *testing.T, s *Store, id string) {
	t.Helper()
	now := time.Now()
	if err := s.AddSchedule(context.Background(), &Schedule{ID: id, Spec: json.RawMessage(`{"every":"1h0m0s","zone":"UTC"}`),
		Args: []string{"--control", "autonomous", "fix it"}, Task: "fix it", CatchUp: "once", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

func statuses(t *testing.T, s *Store, id string) map[string]string {
	t.Helper()
	ds, err := s.Dispatches(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range ds {
		out[d.Due.UTC().Format("15:04")] = d.Status
	}
	return out
}

func TestScheduleRoundTrip(t *testing.T) { forEachBackend(t, testScheduleRoundTrip) }

func testScheduleRoundTrip(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	addSchedule(t, s, "S-abc1")
	addSchedule(t, s, "S-abd2")
	sc, err := s.GetSchedule(ctx, "S-abc")
	if err != nil || sc.ID != "S-abc1" || len(sc.Args) != 3 || sc.Args[2] != "fix it" || sc.CatchUp != "once" {
		t.Fatalf("got %+v %v", sc, err)
	}
	if _, err := s.GetSchedule(ctx, "S-ab"); err == nil {
		t.Fatal("an ambiguous prefix was taken")
	}
	if _, err := s.GetSchedule(ctx, "S-zz"); !errors.Is(err, ErrNoSchedule) {
		t.Fatalf("err = %v", err)
	}
	now := time.Now()
	if err := s.SetSchedulePaused(ctx, "S-abc1", true, "paused", now); err != nil {
		t.Fatal(err)
	}
	if sc, _ := s.GetSchedule(ctx, "S-abc1"); !sc.Paused {
		t.Fatal("not paused")
	}
	if err := s.RemoveSchedule(ctx, "S-abd2", "removed", now); err != nil {
		t.Fatal(err)
	}
	list, _ := s.Schedules(ctx, false)
	if len(list) != 1 || list[0].ID != "S-abc1" {
		t.Fatalf("listed %v", list)
	}
	if err := s.RemoveSchedule(ctx, "S-abd2", "removed", now); !errors.Is(err, ErrNoSchedule) {
		t.Fatalf("removing twice: %v", err)
	}
	all, _ := s.Schedules(ctx, true)
	if len(all) != 2 || all[1].RemovedAt.IsZero() {
		t.Fatalf("with removed: %v", all)
	}
}

func TestMarkDueAndExpire(t *testing.T) { forEachBackend(t, testMarkDueAndExpire) }

func testMarkDueAndExpire(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	addSchedule(t, s, "S1")
	at := func(h int) time.Time { return time.Date(2026, 11, 29, h, 0, 0, 0, time.UTC) }
	now := at(5)
	if err := s.QueueDispatch(ctx, "S1", at(1)); err != nil {
		t.Fatal(err)
	}
	// A later queued time replaces the earlier one, which was never due.
	if err := s.QueueDispatch(ctx, "S1", at(2)); err != nil {
		t.Fatal(err)
	}
	if got := statuses(t, s, "S1"); len(got) != 1 || got["02:00"] != "queued" {
		t.Fatalf("%v", got)
	}
	if err := s.MarkDue(ctx, "S1", at(3), []time.Time{at(1), at(2)}, "missed", "superseded", now); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"01:00": "expired", "02:00": "expired", "03:00": "due"}
	if got := statuses(t, s, "S1"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if d, _ := s.LatestDue(ctx, "S1"); !d.Equal(at(3)) {
		t.Fatalf("LatestDue = %s", d)
	}
	// Deciding the same due time again (a second worker) changes nothing
	// past due.
	if ok, _ := s.ClaimDispatch(ctx, "S1", at(3), "w1", now); !ok {
		t.Fatal("claim failed")
	}
	if err := s.MarkDue(ctx, "S1", at(3), nil, "missed", "superseded", now); err != nil {
		t.Fatal(err)
	}
	if got := statuses(t, s, "S1"); got["03:00"] != "claimed" {
		t.Fatalf("a claimed dispatch was made due again: %v", got)
	}
	// A new due time while one waits on a running dispatch collapses it.
	if err := s.MarkDue(ctx, "S1", at(4), nil, "missed", "superseded", now); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ReleaseClaim(ctx, "S1", at(3), "w2", "not mine"); ok {
		t.Fatal("another worker released a claim")
	}
	if ok, _ := s.ReleaseClaim(ctx, "S1", at(3), "w1", "worker died"); !ok {
		t.Fatal("release failed")
	}
	if err := s.MarkDue(ctx, "S1", at(5), nil, "missed", "superseded", now); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"01:00": "expired", "02:00": "expired", "03:00": "expired", "04:00": "expired", "05:00": "due"}
	if got := statuses(t, s, "S1"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if ds, _ := s.Dispatches(ctx, "S1", 2); ds[1].Reason != "superseded" {
		t.Fatalf("the 04:00 dispatch expired as %q", ds[1].Reason)
	}
	// Pausing expires what is due and drops what is queued.
	if err := s.QueueDispatch(ctx, "S1", at(6)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSchedulePaused(ctx, "S1", true, "the schedule was paused", now); err != nil {
		t.Fatal(err)
	}
	if got := statuses(t, s, "S1"); got["05:00"] != "expired" || got["06:00"] != "" {
		t.Fatalf("%v", got)
	}
}

// Of many workers (each with its own connection to the store) claiming
// one due dispatch at once, exactly one wins.
func TestClaimDispatchOnce(t *testing.T) { forEachBackend(t, testClaimDispatchOnce) }

func testClaimDispatchOnce(t *testing.T, path string) {
	ctx := context.Background()
	s := openAt(t, path)
	addSchedule(t, s, "S1")
	due := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	if err := s.MarkDue(ctx, "S1", due, nil, "", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		other, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := other.ClaimDispatch(ctx, "S1", due, fmt.Sprintf("w%d", i), time.Now())
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d workers claimed the dispatch", wins.Load())
	}
}

// A run takes its dispatch in the transaction that creates it: a
// dispatch that is not its worker's creates no run at all.
func TestCreateRunTakesTheDispatch(t *testing.T) { forEachBackend(t, testCreateRunTakesTheDispatch) }

func testCreateRunTakesTheDispatch(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	addSchedule(t, s, "S1")
	due := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	if err := s.MarkDue(ctx, "S1", due, nil, "", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ClaimDispatch(ctx, "S1", due, "w1", time.Now()); !ok {
		t.Fatal("claim failed")
	}
	r := newRun("261129-030000-aaaa")
	r.Dispatch = &DispatchClaim{Schedule: "S1", Due: due, Worker: "w2"}
	if err := s.CheckDispatch(ctx, *r.Dispatch); !errors.Is(err, ErrDispatchTaken) {
		t.Fatalf("CheckDispatch of another worker's claim: %v", err)
	}
	if err := s.CreateRun(ctx, r); !errors.Is(err, ErrDispatchTaken) {
		t.Fatalf("err = %v", err)
	}
	if _, err := s.GetRun(ctx, r.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the run was created anyway: %v", err)
	}
	r.Dispatch.Worker = "w1"
	if err := s.CheckDispatch(ctx, *r.Dispatch); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil || got.Schedule != "S1" || !got.ScheduleDue.Equal(due) {
		t.Fatalf("got %+v %v", got, err)
	}
	views, _ := s.ListTasks(ctx, TaskFilter{ID: r.ID})
	if len(views) != 1 || views[0].Schedule != "S1" {
		t.Fatalf("task view %+v", views)
	}
	ds, _ := s.Dispatches(ctx, "S1", 1)
	if ds[0].Status != "dispatched" || ds[0].Run != r.ID || ds[0].DispatchedAt.IsZero() {
		t.Fatalf("dispatch %+v", ds[0])
	}
	// A step keeps the task row's schedule.
	if err := s.SaveStep(ctx, got, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetRun(ctx, r.ID); got.Schedule != "S1" {
		t.Fatal("a step dropped the schedule")
	}
	if ok, _ := s.MoveDispatch(ctx, "S1", due, "dispatched", "consumed", "complete", time.Now()); !ok {
		t.Fatal("consume failed")
	}
	if ok, _ := s.MoveDispatch(ctx, "S1", due, "dispatched", "consumed", "complete", time.Now()); ok {
		t.Fatal("consumed twice")
	}
}

func TestWorkers(t *testing.T) { forEachBackend(t, testWorkers) }

func testWorkers(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	now := time.Now()
	for i, age := range []time.Duration{time.Second, time.Minute, 2 * time.Second} {
		if err := s.BeatWorker(ctx, Worker{ID: fmt.Sprint("w", i), Host: "h", PID: i, Serves: "schedules", StartedAt: now, Heartbeat: now.Add(-age)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.BeatWorker(ctx, Worker{ID: "w2", Host: "h", PID: 2, StartedAt: now, Heartbeat: now, StoppedAt: now}); err != nil {
		t.Fatal(err)
	}
	ws, err := s.Workers(ctx, now.Add(-10*time.Second))
	if err != nil || len(ws) != 1 || ws[0].ID != "w0" {
		t.Fatalf("workers %+v %v", ws, err)
	}
}
