package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// StatusQueued is the status of a run submitted to a fleet that no
// worker has taken yet: its row holds the task, and the process that
// takes it over (CreateRun with Adopt) makes it an ordinary run.
const StatusQueued = "queued"

// ErrNotQueued is returned when a run to adopt is no longer queued:
// another worker took it, or it was cancelled.
var ErrNotQueued = errors.New("the run is no longer queued")

// CreateQueuedRun records a submitted run's row (status queued, task row
// todo) and, in the same transaction, whatever also (the queue's job);
// neither is recorded without the other.
func (s *Store) CreateQueuedRun(ctx context.Context, r *Run, also func(*sql.Tx) error) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	r.Status = StatusQueued
	if r.TaskRow.Status == "" {
		r.TaskRow.Status = "todo"
	}
	if err := putRun(ctx, tx, r); err != nil {
		return err
	}
	if also != nil {
		if err := also(tx.tx); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// CancelQueued cancels a run no process has adopted yet (its row and
// task row say cancelled, with reason); false when it is no longer
// queued (a worker took it first).
func (s *Store) CancelQueued(ctx context.Context, id, reason string, now time.Time) (bool, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE runs SET status='cancelled', phase='cancelled', reason=?, updated_at=?, finished_at=? WHERE id=? AND status=?`,
		reason, ts(now), ts(now), id, StatusQueued)
	if err != nil {
		return false, fmt.Errorf("store: cancelling run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET status='cancelled', updated_at=? WHERE id=?`, ts(now), id); err != nil {
		return false, fmt.Errorf("store: cancelling run %s: %w", id, err)
	}
	return true, tx.Commit()
}
