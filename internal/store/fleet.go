package store

import (
	"context"
	"database/sql"
	"encoding/json"
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
	if err := putRecords(ctx, tx, r.ID, r.Records); err != nil {
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

// Snapshot is a run's worktree as of a step (see workspace.Snapshot): a
// commit of its files, its tree and HEAD, and the git bundle another
// machine rebuilds it from.
type Snapshot struct {
	Commit string
	Tree   string
	Head   string
	Bundle []byte
	At     time.Time
}

func putSnapshot(ctx context.Context, db execer, run string, s *Snapshot) error {
	_, err := db.ExecContext(ctx, `INSERT INTO run_snapshots (run_id, commit_id, tree, head, bundle, at) VALUES (?,?,?,?,?,?)
		ON CONFLICT(run_id) DO UPDATE SET commit_id=excluded.commit_id, tree=excluded.tree, head=excluded.head, bundle=excluded.bundle, at=excluded.at`,
		run, s.Commit, s.Tree, s.Head, s.Bundle, ts(s.At))
	if err != nil {
		return fmt.Errorf("store: saving the snapshot of run %s: %w", run, err)
	}
	return nil
}

// SnapshotOf is run's last snapshot; nil when it has none.
func (s *Store) SnapshotOf(ctx context.Context, run string) (*Snapshot, error) {
	var sn Snapshot
	var at string
	err := s.db.QueryRowContext(ctx, `SELECT commit_id, tree, head, bundle, at FROM run_snapshots WHERE run_id=?`, run).
		Scan(&sn.Commit, &sn.Tree, &sn.Head, &sn.Bundle, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: the snapshot of run %s: %w", run, err)
	}
	sn.At = parseTS(at)
	return &sn, nil
}

// Relocate moves a run to a worktree on this machine (a fleet's worker
// taking over a run whose machine is gone): its repository (the worker's
// clone), its working directory and its workspace's worktree.
func (s *Store) Relocate(ctx context.Context, id, repo, workdir string, ws Workspace) error {
	b, _ := json.Marshal(ws)
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET repo=?, workdir=?, workspace=? WHERE id=?`, repo, workdir, string(b), id)
	if err != nil {
		return fmt.Errorf("store: relocating run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return nil
}

// Secret is the store's secret called name, made from make the first
// time (of processes making it at once, one's is kept and all get it).
func (s *Store) Secret(ctx context.Context, name string, make func() ([]byte, error)) ([]byte, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name=?`, name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: secret %s: %w", name, err)
	}
	fresh, err := make()
	if err != nil {
		return nil, err
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO secrets (name, value, created_at) VALUES (?,?,?) ON CONFLICT(name) DO NOTHING`,
		name, fresh, ts(time.Now())); err != nil {
		return nil, fmt.Errorf("store: secret %s: %w", name, err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name=?`, name).Scan(&v); err != nil {
		return nil, fmt.Errorf("store: secret %s: %w", name, err)
	}
	return v, nil
}

// NoteQueued records why a queued run has not started yet (a worker's
// last try failed); with failed, the run fails with that reason (the
// queue gave up on it).
func (s *Store) NoteQueued(ctx context.Context, id, reason string, failed bool, now time.Time) error {
	status := StatusQueued
	if failed {
		status = "failed"
	}
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status=?, reason=?, updated_at=? WHERE id=? AND status=?`, status, reason, ts(now), id, StatusQueued)
	// A run that is no longer queued (a job of a person's ask to go on
	// with it) keeps its task's status.
	if n, _ := rowsAffected(res, err); err == nil && failed && n == 1 {
		_, err = s.db.ExecContext(ctx, `UPDATE tasks SET status='failed', updated_at=? WHERE id=?`, ts(now), id)
	}
	if err != nil {
		return fmt.Errorf("store: run %s: %w", id, err)
	}
	return nil
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
