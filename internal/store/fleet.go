package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
