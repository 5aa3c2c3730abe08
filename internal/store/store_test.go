package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
)

func newRun(id string) *Run {
	now := time.Now()
	return &Run{ID: id, Task: "t", Repo: "/r", Workdir: "/r", Phase: "planning", Status: "running",
		Axes: axes.Default, State: json.RawMessage(`{"a":1}`), CreatedAt: now, UpdatedAt: now}
}

func TestRoundTrip(t *testing.T) { forEachBackend(t, testRoundTrip) }

func testRoundTrip(t *testing.T, dsn string) {
	ctx := context.Background()
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	r := newRun("261122-010101-aaaa")
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Phase, r.Status = "building", "running"
	msgs := []json.RawMessage{json.RawMessage(`{"role":"user","content":"x"}`), json.RawMessage(`{"role":"assistant"}`)}
	tr := []Transition{{Kind: "phase", From: "planning", To: "building", By: "model", Reason: "plan", At: time.Now()}}
	if err := s.SaveStep(ctx, r, msgs, tr); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveStep(ctx, r, msgs[:1], nil); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Reopen: migrations are idempotent and data survives.
	s, err = Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetRun(ctx, "261122-010101")
	if err != nil || got.Phase != "building" || got.Axes != axes.Default || string(got.State) != `{"a":1}` {
		t.Fatalf("got %+v %v", got, err)
	}
	m, _ := s.Messages(ctx, r.ID)
	if len(m) != 3 || string(m[2]) != string(msgs[0]) {
		t.Fatalf("messages %s", m)
	}
	ts, _ := s.Transitions(ctx, r.ID)
	if len(ts) != 1 || ts[0].To != "building" || ts[0].At.IsZero() {
		t.Fatalf("transitions %+v", ts)
	}
	for i := 1; i <= 5; i++ {
		if err := s.AppendEvent(ctx, r.ID, int64(i), time.Now(), "tool_call", "building", json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	ev, _ := s.Events(ctx, r.ID, 2)
	if len(ev) != 2 || ev[0].Seq != 4 || ev[1].Seq != 5 {
		t.Fatalf("last events %+v", ev)
	}
	if n, _ := s.LastSeq(ctx, r.ID); n != 5 {
		t.Fatal(n)
	}
}

func TestGetRunPrefix(t *testing.T) { forEachBackend(t, testGetRunPrefix) }

func testGetRunPrefix(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	for _, id := range []string{"261122-aa-1", "261122-aa-2", "261122-bb-1"} {
		if err := s.CreateRun(ctx, newRun(id)); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := s.GetRun(ctx, "261122-bb"); err != nil || r.ID != "261122-bb-1" {
		t.Fatal(r, err)
	}
	if _, err := s.GetRun(ctx, "261122-aa"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatal(err)
	}
	if _, err := s.GetRun(ctx, "zzz"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := s.GetRun(ctx, "261122_"); !errors.Is(err, ErrNotFound) {
		t.Fatal("LIKE wildcards must be escaped", err)
	}
	runs, _ := s.ListRuns(ctx, 2)
	if len(runs) != 2 {
		t.Fatal(len(runs))
	}
}

func TestConcurrentWriters(t *testing.T) { forEachBackend(t, testConcurrentWriters) }

func testConcurrentWriters(t *testing.T, path string) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			r := newRun(fmt.Sprintf("run-%d", w))
			if err := s.CreateRun(ctx, r); err != nil {
				errs <- err
				return
			}
			for i := range 30 {
				if err := s.SaveStep(ctx, r, []json.RawMessage{json.RawMessage(`{}`)}, nil); err != nil {
					errs <- err
					return
				}
				if err := s.AppendEvent(ctx, r.ID, int64(i+1), time.Now(), "x", "", json.RawMessage(`{}`)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, _ := Open(path)
	defer s.Close()
	for w := range 4 {
		m, _ := s.Messages(ctx, fmt.Sprintf("run-%d", w))
		if len(m) != 30 {
			t.Fatalf("run %d has %d messages", w, len(m))
		}
	}
}

func TestWorkspaceIsWrittenOnlyByCreateAndSetWorkspace(t *testing.T) {
	forEachBackend(t, testWorkspaceIsWrittenOnlyByCreateAndSetWorkspace)
}

func testWorkspaceIsWrittenOnlyByCreateAndSetWorkspace(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	r := newRun("261122-020202-bbbb")
	r.Workspace = Workspace{Branch: "ultra/x", Base: "main", BaseCommit: "abc", StartCommit: "abc", Worktree: "/w/x"}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	ws := r.Workspace
	ws.Landed, ws.LandedAt = "def", "2026-11-22T00:00:00Z"
	if err := s.SetWorkspace(ctx, r.ID, ws); err != nil {
		t.Fatal(err)
	}
	// A step saved by a run that still holds the old workspace keeps the new one.
	r.Phase = "complete"
	if err := s.SaveStep(ctx, r, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Workspace != ws || got.Phase != "complete" {
		t.Fatalf("workspace %+v phase %s", got.Workspace, got.Phase)
	}
	if err := s.SetWorkspace(ctx, "nope", ws); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
}

// Of two processes resuming one run, one wins, and the run is running
// from the claim on: a second resume that read the run before the claim
// loses even though the pid it read is still the one stored.
func TestClaimIsOneStep(t *testing.T) { forEachBackend(t, testClaimIsOneStep) }

func testClaimIsOneStep(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	r := newRun("261124-010101-cccc")
	r.Status, r.PID = "needs_approval", 0
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Claim(ctx, r.ID, 0, "needs_approval", 111); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	got, _ := s.GetRun(ctx, r.ID)
	if got.Status != "running" || got.PID != 111 {
		t.Fatalf("after the claim: %s pid %d", got.Status, got.PID)
	}
	if ok, _ := s.Claim(ctx, r.ID, 0, "needs_approval", 222); ok {
		t.Fatal("a second claim with what it read before won")
	}
	if ok, _ := s.Claim(ctx, r.ID, 111, "needs_approval", 222); ok {
		t.Fatal("a claim with a stale status won")
	}
}

// A surface follows a run by the events after the last it saw, and reads
// what the run does now (and the answer streaming in) from its runtime.
func TestFollowingARun(t *testing.T) { forEachBackend(t, testFollowingARun) }

func testFollowingARun(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	r := newRun("261122-010101-bbbb")
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 5; i++ {
		if err := s.AppendEvent(ctx, r.ID, i, time.Now(), "warning", "planning", json.RawMessage(fmt.Sprintf(`{"message":"%d"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := s.EventsAfter(ctx, r.ID, 2, 2)
	if err != nil || len(evs) != 2 || evs[0].Seq != 3 || evs[1].Seq != 4 {
		t.Fatalf("after 2, limit 2: %+v %v", evs, err)
	}
	if evs, _ = s.EventsAfter(ctx, r.ID, 5, 0); len(evs) != 0 {
		t.Fatalf("after the last: %+v", evs)
	}
	since := time.Now().Add(-3 * time.Second).UTC().Truncate(time.Millisecond)
	if err := s.Beat(ctx, r.ID, Runtime{PID: 7, Activity: "waiting for the model", ActivitySince: since, Partial: "Hello, wor", Thinking: "They greet"}); err != nil {
		t.Fatal(err)
	}
	rt, err := s.RuntimeOf(ctx, r.ID)
	if err != nil || rt.Activity != "waiting for the model" || rt.Partial != "Hello, wor" || rt.Thinking != "They greet" || !rt.ActivitySince.Equal(since) {
		t.Fatalf("runtime %+v %v (since %v)", rt, err, since)
	}
	if err := s.Beat(ctx, r.ID, Runtime{PID: 7}); err != nil {
		t.Fatal(err)
	}
	if rt, _ = s.RuntimeOf(ctx, r.ID); rt.Partial != "" || rt.Thinking != "" || !rt.ActivitySince.IsZero() {
		t.Fatalf("an idle beat keeps %+v", rt)
	}
}
