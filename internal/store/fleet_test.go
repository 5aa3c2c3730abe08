package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A submitted run's row and whatever goes with it (the queue's job) are
// recorded together or not at all, and one process adopts the row.
func TestQueuedRunIsAdoptedOnce(t *testing.T) { forEachBackend(t, testQueuedRunIsAdoptedOnce) }

func testQueuedRunIsAdoptedOnce(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	failing := newRun("20261129-070000-aaaaaa")
	if err := s.CreateQueuedRun(ctx, failing, func(*sql.Tx) error { return errors.New("the queue refused") }); err == nil {
		t.Fatal("no error")
	}
	if _, err := s.GetRun(ctx, failing.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the row stayed without its job: %v", err)
	}
	r := newRun("20261129-070000-bbbbbb")
	r.Task = "submitted"
	if err := s.CreateQueuedRun(ctx, r, func(*sql.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil || got.Status != StatusQueued || got.TaskRow.Status != "todo" {
		t.Fatalf("queued row %+v %v", got, err)
	}
	// A plain create of the same id is refused; an adoption takes it.
	if err := s.CreateRun(ctx, newRun(r.ID)); err == nil {
		t.Fatal("a second row with the queued run's id")
	}
	a := newRun(r.ID)
	a.Adopt, a.Status, a.Task = true, "running", "submitted (adopted)"
	if err := s.CreateRun(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetRun(ctx, r.ID); got.Status != "running" || got.Task != "submitted (adopted)" || got.TaskRow.Status != "running" {
		t.Fatalf("adopted row %+v", got)
	}
	b := newRun(r.ID)
	b.Adopt = true
	if err := s.CreateRun(ctx, b); !errors.Is(err, ErrNotQueued) {
		t.Fatalf("a second adoption: %v", err)
	}
}

// FirstRecords reads one kind's place-0 record of many runs at once:
// only those asked, only that kind, and more runs than one query's batch.
func TestFirstRecords(t *testing.T) { forEachBackend(t, testFirstRecords) }

func testFirstRecords(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	var ids []string
	for i := range 3 {
		r := newRun(fmt.Sprintf("20261129-10000%d-aaaaaa", i))
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		r.Records = []Record{{Kind: RecordOrigin, Body: []byte("origin " + r.ID)}, {Kind: RecordGoals, Body: []byte("goals " + r.ID)}}
		if i == 2 {
			r.Records = r.Records[1:] // no origin
		}
		if err := s.SaveStep(ctx, r, nil, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	asked := []string{ids[1], ids[2]}
	for i := range 1200 {
		asked = append(asked, fmt.Sprintf("20261129-missing-%04d", i))
	}
	got, err := s.FirstRecords(ctx, RecordOrigin, asked)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[ids[1]]) != "origin "+ids[1] {
		t.Fatalf("origins: %q", got)
	}
	if got, err := s.FirstRecords(ctx, RecordOrigin, nil); err != nil || len(got) != 0 {
		t.Fatalf("no runs: %q %v", got, err)
	}
}

// A step's shared records land with the step: ledger lines and gate
// decisions are append-only (the same bytes again are fine, others are
// refused and the step is not saved), goals.json is replaced.
func TestSharedRecords(t *testing.T) { forEachBackend(t, testSharedRecords) }

func testSharedRecords(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	r := newRun("20261129-100000-aaaaaa")
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Records = []Record{{Kind: RecordLedger, N: 1, Body: []byte(`{"seq":1}`)}, {Kind: RecordGate, N: 1, Body: []byte("gate 1")}, {Kind: RecordGoals, Body: []byte("v1")}}
	if err := s.SaveStep(ctx, r, nil, nil); err != nil {
		t.Fatal(err)
	}
	// The same step saved again (a retry) changes nothing.
	if err := s.SaveStep(ctx, r, nil, nil); err != nil {
		t.Fatalf("the same records again: %v", err)
	}
	r.Records = []Record{{Kind: RecordLedger, N: 2, Body: []byte(`{"seq":2}`)}, {Kind: RecordGoals, Body: []byte("v2")}}
	if err := s.SaveStep(ctx, r, nil, nil); err != nil {
		t.Fatal(err)
	}
	r.Task = "a step that rewrites a ledger line"
	r.Records = []Record{{Kind: RecordLedger, N: 1, Body: []byte(`{"seq":1,"forged":true}`)}, {Kind: RecordLedger, N: 3, Body: []byte(`{"seq":3}`)}}
	if err := s.SaveStep(ctx, r, nil, nil); !errors.Is(err, ErrRecordConflict) {
		t.Fatalf("a rewritten ledger line: %v", err)
	}
	if got, _ := s.GetRun(ctx, r.ID); got.Task == r.Task {
		t.Fatal("the step with the conflicting record was saved")
	}
	lines, err := s.Records(ctx, r.ID, RecordLedger)
	if err != nil || len(lines) != 2 || string(lines[0].Body) != `{"seq":1}` || lines[1].N != 2 {
		t.Fatalf("ledger %+v %v", lines, err)
	}
	goals, _ := s.Records(ctx, r.ID, RecordGoals)
	if len(goals) != 1 || string(goals[0].Body) != "v2" {
		t.Fatalf("goals %+v", goals)
	}
	heads, err := s.RecordHeads(ctx, r.ID)
	if err != nil || heads[RecordLedger] != 2 || heads[RecordGate] != 1 || heads[RecordBaseline] != 0 {
		t.Fatalf("heads %v %v", heads, err)
	}
	if other, _ := s.Records(ctx, "20261129-100000-bbbbbb", RecordLedger); len(other) != 0 {
		t.Fatalf("another run's records: %+v", other)
	}
}

// Of many claims of one place at once, one is written; another place is
// its own.
func TestClaimOnce(t *testing.T) { forEachBackend(t, testClaimOnce) }

func testClaimOnce(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	r := newRun("20261129-110000-aaaaaa")
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.ClaimOnce(ctx, r.ID, RecordTakeOver, 7, []byte(fmt.Sprint("worker ", i)), time.Now())
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
		t.Fatalf("%d claims won", wins.Load())
	}
	if ok, err := s.ClaimOnce(ctx, r.ID, RecordTakeOver, 8, []byte("worker 9"), time.Now()); !ok || err != nil {
		t.Fatalf("another place: %v %v", ok, err)
	}
}

// The queue's last try of a job failing a run that is no longer queued
// (a person's ask to go on with an escalated run) leaves its run and its
// task as they are; a place claimed is given back by its claimant only.
func TestNoteQueuedLeavesARunGoingOn(t *testing.T) {
	forEachBackend(t, testNoteQueuedLeavesARunGoingOn)
}

func testNoteQueuedLeavesARunGoingOn(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	r := newRun("20261129-110000-bbbbbb")
	r.Status = "escalated"
	r.TaskRow = Task{Status: "escalated"}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.NoteQueued(ctx, r.ID, "the queue gave up", true, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "escalated" || got.TaskRow.Status != "escalated" {
		t.Fatalf("run %s, task %s", got.Status, got.TaskRow.Status)
	}
	if ok, err := s.ClaimOnce(ctx, r.ID, RecordTakeOver, 3, []byte("job 1"), time.Now()); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := s.ReleaseRecordClaim(ctx, r.ID, RecordTakeOver, 3, []byte("job 2")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ClaimOnce(ctx, r.ID, RecordTakeOver, 3, []byte("job 2"), time.Now()); ok {
		t.Fatal("another's claim was given back")
	}
	if err := s.ReleaseRecordClaim(ctx, r.ID, RecordTakeOver, 3, []byte("job 1")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ClaimOnce(ctx, r.ID, RecordTakeOver, 3, []byte("job 2"), time.Now()); !ok {
		t.Fatal("a claim given back is not claimed again")
	}
}
