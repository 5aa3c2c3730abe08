package store

import (
	"context"
	"fmt"
)

// migrations are applied in order, each once; append, never edit.
var migrations = []string{
	// 1: runs, transitions, events, messages.
	`CREATE TABLE runs (
		id TEXT PRIMARY KEY,
		task TEXT NOT NULL,
		repo TEXT NOT NULL,
		workdir TEXT NOT NULL,
		phase TEXT NOT NULL,
		status TEXT NOT NULL,
		reason TEXT NOT NULL DEFAULT '',
		axes TEXT NOT NULL,
		provider TEXT NOT NULL DEFAULT '',
		model TEXT NOT NULL DEFAULT '',
		state TEXT NOT NULL DEFAULT '{}',
		pid INTEGER NOT NULL DEFAULT 0,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL,
		finished_at TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE transitions (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		run_id TEXT NOT NULL REFERENCES runs(id),
		kind TEXT NOT NULL,
		axis TEXT NOT NULL DEFAULT '',
		from_v TEXT NOT NULL,
		to_v TEXT NOT NULL,
		by TEXT NOT NULL,
		reason TEXT NOT NULL,
		at TEXT NOT NULL
	);
	CREATE INDEX transitions_run ON transitions(run_id, id);
	CREATE TABLE events (
		run_id TEXT NOT NULL REFERENCES runs(id),
		seq INTEGER NOT NULL,
		at TEXT NOT NULL,
		type TEXT NOT NULL,
		phase TEXT NOT NULL DEFAULT '',
		data TEXT NOT NULL,
		PRIMARY KEY (run_id, seq)
	);
	CREATE TABLE messages (
		run_id TEXT NOT NULL REFERENCES runs(id),
		seq INTEGER NOT NULL,
		data TEXT NOT NULL,
		PRIMARY KEY (run_id, seq)
	);`,
	// 2: the provider's base URL, so a resumed run talks to the same server.
	`ALTER TABLE runs ADD COLUMN base_url TEXT NOT NULL DEFAULT '';`,
	// 3: the run's git workspace (branch, base, worktree, landing).
	`ALTER TABLE runs ADD COLUMN workspace TEXT NOT NULL DEFAULT '{}';`,
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version),0) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this ultra knows (%d): upgrade ultra", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, i+1); err != nil {
			return err
		}
	}
	return tx.Commit()
}
