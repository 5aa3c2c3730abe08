package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"
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
