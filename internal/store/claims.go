package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ultra-dev/ultra/internal/claim"
)

// TakeClaims records want (one worker's claims in run) if none of them
// overlaps a claim another worker of the run holds; otherwise it records
// nothing and returns the conflicts (claim.Conflicts), each naming its
// holder. The check and the insert are one immediate transaction: two
// workers claiming at once cannot both get an overlapping claim. Claims
// the worker already holds are not recorded again (claim.New).
func (s *Store) TakeClaims(ctx context.Context, want []claim.Claim, now time.Time) ([]claim.Conflict, error) {
	if len(want) == 0 {
		return nil, nil
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	if s.db.pg {
		// SQLite's immediate transaction has the write lock from its
		// start; on PostgreSQL the run's claims take turns on a lock of
		// the run's own, so two workers never both pass the check.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, "claims:"+want[0].Run); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	held, err := heldClaims(ctx, tx, `run_id = ?`, want[0].Run)
	if err != nil {
		return nil, err
	}
	if cs := claim.Conflicts(want, held); len(cs) > 0 {
		return cs, nil
	}
	for _, c := range claim.New(want, held) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO claims (run_id, worker, goal, path, start_line, end_line, symbol, reason, claimed_at) VALUES (?,?,?,?,?,?,?,?,?)`,
			c.Run, c.Worker, c.Goal, c.Path, c.Start, c.End, c.Symbol, c.Reason, ts(now)); err != nil {
			return nil, fmt.Errorf("store: recording a claim: %w", err)
		}
	}
	return nil, tx.Commit()
}

// HeldClaims are the claims the workers of run hold now, oldest first.
func (s *Store) HeldClaims(ctx context.Context, run string) ([]claim.Claim, error) {
	return heldClaims(ctx, s.db, `run_id = ?`, run)
}

// WorkerClaims are the claims worker holds now, oldest first.
func (s *Store) WorkerClaims(ctx context.Context, worker string) ([]claim.Claim, error) {
	return heldClaims(ctx, s.db, `worker = ?`, worker)
}

// ReleaseClaims releases every claim worker holds, saying why (its goal
// landed on the run's branch, the worker stopped for good); it returns
// how many it released.
func (s *Store) ReleaseClaims(ctx context.Context, worker, why string, now time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE claims SET released_at = ?, released_why = ? WHERE worker = ? AND released_at = ''`, ts(now), why, worker)
	if err != nil {
		return 0, fmt.Errorf("store: releasing claims: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func heldClaims(ctx context.Context, db rowsQuerier, where string, arg string) ([]claim.Claim, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, run_id, worker, goal, path, start_line, end_line, symbol, reason FROM claims
		WHERE released_at = '' AND `+where+` ORDER BY id`, arg)
	if err != nil {
		return nil, fmt.Errorf("store: reading claims: %w", err)
	}
	defer rows.Close()
	var out []claim.Claim
	for rows.Next() {
		var c claim.Claim
		if err := rows.Scan(&c.ID, &c.Run, &c.Worker, &c.Goal, &c.Path, &c.Start, &c.End, &c.Symbol, &c.Reason); err != nil {
			return nil, fmt.Errorf("store: reading claims: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
