package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kinds of a run's shared records: what a fleet's machines need of a run
// another machine drives, beside its rows, events and messages.
const (
	// RecordLedger is one line of the run's ledger (n = its seq), its
	// exact bytes without the newline.
	RecordLedger = "ledger"
	// RecordGate is one gate decision's signed file (n = its number).
	RecordGate = "gate"
	// RecordBaseline is the gate's signed baseline file (n = 0).
	RecordBaseline = "baseline"
	// RecordGoals is the run's goals.json as last saved (n = 0): a later
	// step replaces it.
	RecordGoals = "goals"
	// RecordBrief is the run's brief (n = 0), replaced as goals.json is.
	RecordBrief = "brief"
	// RecordOrigin is what a fleet's run was submitted for (n = 0): the
	// repository's URL and base branch, written when it is queued.
	RecordOrigin = "origin"
	// RecordTakeOver is a worker's claim to take a run over at its event
	// n (body: the worker): of workers asked at once, one does.
	RecordTakeOver = "takeover"
)

// SecretGateKey is the store's secret the fleet's machines sign gate
// decisions and ledger entries with.
const SecretGateKey = "gate.key"

// ErrRecordConflict is returned when a step would put a record in a
// place that already holds different bytes: a ledger line or a gate
// decision, once shared, is never rewritten.
var ErrRecordConflict = errors.New("a shared record never changes")

// Record is one of a run's shared records.
type Record struct {
	Kind string
	N    int
	Body []byte
	At   time.Time
}

// appendOnly reports whether records of kind never change once written.
func appendOnly(kind string) bool { return kind != RecordGoals && kind != RecordBrief }

// putRecords writes a step's records: an append-only place already
// written keeps its bytes (the same bytes again are the step saved twice;
// others are ErrRecordConflict), goals.json is replaced.
func putRecords(ctx context.Context, tx tx, run string, recs []Record) error {
	for _, r := range recs {
		if r.Body == nil {
			r.Body = []byte{}
		}
		if !appendOnly(r.Kind) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_records (run_id, kind, n, body, at) VALUES (?,?,?,?,?)
				ON CONFLICT(run_id, kind, n) DO UPDATE SET body=excluded.body, at=excluded.at`, run, r.Kind, r.N, r.Body, ts(r.At)); err != nil {
				return fmt.Errorf("store: run %s's %s: %w", run, r.Kind, err)
			}
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO run_records (run_id, kind, n, body, at) VALUES (?,?,?,?,?) ON CONFLICT(run_id, kind, n) DO NOTHING`,
			run, r.Kind, r.N, r.Body, ts(r.At))
		if err != nil {
			return fmt.Errorf("store: run %s's %s %d: %w", run, r.Kind, r.N, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			continue
		}
		var had []byte
		if err := tx.QueryRowContext(ctx, `SELECT body FROM run_records WHERE run_id=? AND kind=? AND n=?`, run, r.Kind, r.N).Scan(&had); err != nil {
			return fmt.Errorf("store: run %s's %s %d: %w", run, r.Kind, r.N, err)
		}
		if !bytes.Equal(had, r.Body) {
			return fmt.Errorf("store: run %s's %s %d: %w, and the store holds other bytes there", run, r.Kind, r.N, ErrRecordConflict)
		}
	}
	return nil
}

// Records are run's shared records of kind, in order.
func (s *Store) Records(ctx context.Context, run, kind string) ([]Record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT n, body, at FROM run_records WHERE run_id=? AND kind=? ORDER BY n`, run, kind)
	if err != nil {
		return nil, fmt.Errorf("store: run %s's %s: %w", run, kind, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r := Record{Kind: kind}
		var at string
		if err := rows.Scan(&r.N, &r.Body, &at); err != nil {
			return nil, err
		}
		r.At = parseTS(at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// FirstRecords are the bodies of the records of kind at place 0 (an
// origin, goals.json, the brief) of each of runs that has one, by run:
// one query a few hundred runs, whatever the number of runs.
func (s *Store) FirstRecords(ctx context.Context, kind string, runs []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for len(runs) > 0 {
		batch := runs[:min(len(runs), 500)]
		runs = runs[len(batch):]
		args := []any{kind}
		for _, r := range batch {
			args = append(args, r)
		}
		q := `SELECT run_id, body FROM run_records WHERE kind=? AND n=0 AND run_id IN (?` + strings.Repeat(",?", len(batch)-1) + `)`
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("store: the runs' %s: %w", kind, err)
		}
		for rows.Next() {
			var run string
			var body []byte
			if err := rows.Scan(&run, &body); err != nil {
				rows.Close()
				return nil, err
			}
			out[run] = body
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RecordHeads are, for each kind of run's shared records, the highest
// place written (absent: none).
func (s *Store) RecordHeads(ctx context.Context, run string) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kind, MAX(n) FROM run_records WHERE run_id=? GROUP BY kind`, run)
	if err != nil {
		return nil, fmt.Errorf("store: run %s's records: %w", run, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rows.Err()
}

// ClaimOnce writes run's record kind n with body unless that place is
// written: true when this call wrote it (of several at once, one does).
func (s *Store) ClaimOnce(ctx context.Context, run, kind string, n int, body []byte, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO run_records (run_id, kind, n, body, at) VALUES (?,?,?,?,?) ON CONFLICT(run_id, kind, n) DO NOTHING`,
		run, kind, n, body, ts(now))
	if err != nil {
		return false, fmt.Errorf("store: run %s's %s %d: %w", run, kind, n, err)
	}
	k, _ := res.RowsAffected()
	return k == 1, nil
}

// ReleaseRecordClaim gives back the place n of kind a ClaimOnce with body won
// (another's claim there stays).
func (s *Store) ReleaseRecordClaim(ctx context.Context, run, kind string, n int, body []byte) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM run_records WHERE run_id=? AND kind=? AND n=? AND body=?`, run, kind, n, body); err != nil {
		return fmt.Errorf("store: run %s's %s %d: %w", run, kind, n, err)
	}
	return nil
}
