package store

import (
	"context"
	"fmt"
	"time"
)

// IntegrityCheck runs SQLite's integrity check and returns what it found
// wrong; nothing when the database is sound. Postgres checks its own
// pages (and amcheck is an extension a shared server may lack): there
// the check is that the server answers.
func (s *Store) IntegrityCheck(ctx context.Context) ([]string, error) {
	if s.db.pg {
		if err := s.sqlDB.PingContext(ctx); err != nil {
			return nil, fmt.Errorf("store: integrity check: %w", err)
		}
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return nil, fmt.Errorf("store: integrity check: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, fmt.Errorf("store: integrity check: %w", err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	return problems, rows.Err()
}

// MarkInterrupted records that run id, which its row says process pid is
// running, was interrupted: its status becomes interrupted and its pid 0.
// It changes nothing (and returns false) unless the row still says
// running by pid (compare and swap: a resume that claimed the run wins).
func (s *Store) MarkInterrupted(ctx context.Context, id string, pid int, reason string) (bool, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	now := ts(time.Now())
	res, err := tx.ExecContext(ctx, `UPDATE runs SET status='interrupted', pid=0, reason=?, updated_at=? WHERE id=? AND status='running' AND pid=?`,
		reason, now, id, pid)
	if err != nil {
		return false, fmt.Errorf("store: marking run %s interrupted: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET status='paused', updated_at=? WHERE id=?`, now, id); err != nil {
		return false, fmt.Errorf("store: marking task %s paused: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE task_runtime SET pid=0 WHERE task_id=?`, id); err != nil {
		return false, fmt.Errorf("store: clearing the runtime of task %s: %w", id, err)
	}
	return true, tx.Commit()
}
