package store

import (
	"context"
	"fmt"
)

// migrations are SQLite's schema, applied in order, each once; append,
// never edit. Each has its Postgres counterpart at the same place in
// pgMigrations (migrate_postgres.go): append both.
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
	// 4: the tasks surface (one row per run or session, kept with every
	// step), each task's runtime (heartbeat), transitions with their scope
	// and session, and the requests other processes make of a live run
	// (steering, approvals, next, pause, stop, cancel).
	`ALTER TABLE transitions RENAME TO task_transitions;
	ALTER TABLE task_transitions ADD COLUMN scope TEXT NOT NULL DEFAULT '';
	ALTER TABLE task_transitions ADD COLUMN session TEXT NOT NULL DEFAULT '';
	CREATE TABLE tasks (
		id TEXT PRIMARY KEY REFERENCES runs(id),
		status TEXT NOT NULL,
		blockers TEXT NOT NULL DEFAULT '[]',
		retries INTEGER NOT NULL DEFAULT 0,
		max_retries INTEGER NOT NULL DEFAULT 0,
		checkpoint TEXT NOT NULL DEFAULT '',
		budget_cost REAL NOT NULL DEFAULT 0,
		spent_cost REAL NOT NULL DEFAULT 0,
		input_tokens INTEGER NOT NULL DEFAULT 0,
		output_tokens INTEGER NOT NULL DEFAULT 0,
		turns INTEGER NOT NULL DEFAULT 0,
		waiting TEXT NOT NULL DEFAULT '',
		goal TEXT NOT NULL DEFAULT '',
		claim TEXT NOT NULL DEFAULT '',
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL
	);
	CREATE INDEX tasks_updated ON tasks(updated_at);
	INSERT INTO tasks (id, status, created_at, updated_at)
		SELECT id, CASE
			WHEN status = 'complete' THEN 'done'
			WHEN status = 'cancelled' THEN 'cancelled'
			WHEN status IN ('escalated', 'budget_exhausted', 'needs_approval') THEN 'blocked'
			WHEN status = 'failed' THEN 'failed'
			WHEN status = 'interrupted' THEN 'paused'
			ELSE 'running' END,
			created_at, updated_at FROM runs;
	CREATE TABLE task_runtime (
		task_id TEXT PRIMARY KEY REFERENCES tasks(id),
		pid INTEGER NOT NULL DEFAULT 0,
		host TEXT NOT NULL DEFAULT '',
		worktree TEXT NOT NULL DEFAULT '',
		model TEXT NOT NULL DEFAULT '',
		context_tokens INTEGER NOT NULL DEFAULT 0,
		context_window INTEGER NOT NULL DEFAULT 0,
		activity TEXT NOT NULL DEFAULT '',
		heartbeat TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE requests (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		run_id TEXT NOT NULL REFERENCES runs(id),
		kind TEXT NOT NULL,
		call_id TEXT NOT NULL DEFAULT '',
		axes TEXT NOT NULL DEFAULT '{}',
		scope TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		who TEXT NOT NULL DEFAULT '',
		session TEXT NOT NULL DEFAULT '',
		created_at TEXT NOT NULL,
		done_at TEXT NOT NULL DEFAULT '',
		outcome TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX requests_open ON requests(run_id, done_at, id);`,
	// 5: the tasks surface's queries: finished tasks by recency, and the
	// model responses that ultra report sums.
	`CREATE INDEX tasks_status ON tasks(status, updated_at);
	CREATE INDEX events_type ON events(type, run_id);`,
	// 6: every column of runs the tasks list reads, so that listing never
	// reads a run's row: the columns stored after its (large) state would
	// cost walking all of it.
	`CREATE INDEX runs_list ON runs(created_at, id, task, phase, status, reason, axes, provider, model, pid, updated_at, finished_at, workspace);`,
	// 7: what a surface that attaches to a live run shows between events:
	// since when the run does what it does, and the answer streaming in.
	`ALTER TABLE task_runtime ADD COLUMN activity_since TEXT NOT NULL DEFAULT '';
	ALTER TABLE task_runtime ADD COLUMN partial TEXT NOT NULL DEFAULT '';`,
	// 8: the model's readable thinking streaming in, before its answer.
	`ALTER TABLE task_runtime ADD COLUMN thinking TEXT NOT NULL DEFAULT '';`,
	// 9: the limit that ends the run first (retries, or a goal's cycles),
	// which the tasks surface shows instead of the retries alone.
	`ALTER TABLE tasks ADD COLUMN limit_what TEXT NOT NULL DEFAULT '';
	ALTER TABLE tasks ADD COLUMN limit_used INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE tasks ADD COLUMN limit_max INTEGER NOT NULL DEFAULT 0;`,
	// 10: schedules, the scheduler's rows (one per due time of a
	// schedule, apart from the lifecycle of the run it makes), the
	// workers that dispatch them, and the schedule a run came from.
	`CREATE TABLE schedules (
		id TEXT PRIMARY KEY,
		spec TEXT NOT NULL,
		args TEXT NOT NULL,
		task TEXT NOT NULL,
		catch_up TEXT NOT NULL,
		paused INTEGER NOT NULL DEFAULT 0,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL,
		removed_at TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE task_scheduler (
		schedule_id TEXT NOT NULL REFERENCES schedules(id),
		due_at TEXT NOT NULL,
		status TEXT NOT NULL,
		claimed_by TEXT NOT NULL DEFAULT '',
		claimed_at TEXT NOT NULL DEFAULT '',
		dispatched_at TEXT NOT NULL DEFAULT '',
		consumed_at TEXT NOT NULL DEFAULT '',
		expired_at TEXT NOT NULL DEFAULT '',
		run_id TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (schedule_id, due_at)
	);
	CREATE INDEX task_scheduler_status ON task_scheduler(status, due_at);
	CREATE TABLE workers (
		id TEXT PRIMARY KEY,
		host TEXT NOT NULL,
		pid INTEGER NOT NULL,
		serves TEXT NOT NULL DEFAULT '',
		started_at TEXT NOT NULL,
		heartbeat TEXT NOT NULL,
		stopped_at TEXT NOT NULL DEFAULT ''
	);
	ALTER TABLE tasks ADD COLUMN schedule_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE tasks ADD COLUMN schedule_due TEXT NOT NULL DEFAULT '';`,
	// 11: a fleet's run's worktree as of its last step, so that another
	// machine takes the run over from there; the fleet's secrets (the key
	// its machines sign gate decisions and ledgers with).
	`CREATE TABLE run_snapshots (
		run_id TEXT PRIMARY KEY REFERENCES runs(id),
		commit_id TEXT NOT NULL,
		tree TEXT NOT NULL,
		head TEXT NOT NULL,
		bundle BLOB NOT NULL,
		at TEXT NOT NULL
	);
	CREATE TABLE secrets (
		name TEXT PRIMARY KEY,
		value BLOB NOT NULL,
		created_at TEXT NOT NULL
	);`,
	// 12: a fleet's schedule names the repository its runs are submitted
	// for, and the branch they start from.
	`ALTER TABLE schedules ADD COLUMN repo TEXT NOT NULL DEFAULT '';
	ALTER TABLE schedules ADD COLUMN base TEXT NOT NULL DEFAULT '';`,
	// 13: the workers of parallel runs: each worker's task row names the run
	// it works for (parent), and the claims table holds what each worker
	// said it would change, until its goal lands on the run's branch.
	`ALTER TABLE tasks ADD COLUMN parent TEXT NOT NULL DEFAULT '';
	CREATE TABLE claims (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		run_id TEXT NOT NULL,
		worker TEXT NOT NULL,
		goal TEXT NOT NULL DEFAULT '',
		path TEXT NOT NULL,
		start_line INTEGER NOT NULL DEFAULT 0,
		end_line INTEGER NOT NULL DEFAULT 0,
		symbol TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		claimed_at TEXT NOT NULL,
		released_at TEXT NOT NULL DEFAULT '',
		released_why TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX claims_held ON claims(run_id, released_at, path);
	CREATE INDEX claims_worker ON claims(worker, released_at);`,
	// 14: a fleet's run's records as the machines share them: its ledger's
	// lines, its gate decisions and baseline (append-only: a place once
	// written never changes), and its goals.json as last saved.
	`CREATE TABLE run_records (
		run_id TEXT NOT NULL REFERENCES runs(id),
		kind TEXT NOT NULL,
		n INTEGER NOT NULL,
		body BLOB NOT NULL,
		at TEXT NOT NULL,
		PRIMARY KEY (run_id, kind, n)
	);`,
}

// migrate brings the schema up to date: the migrations of the store's
// backend not yet applied, in one transaction. On Postgres a lock held
// to its end makes processes that migrate at once take turns (and the
// schema_version table is made inside it: two CREATE TABLE IF NOT
// EXISTS at once can collide there).
func (s *Store) migrate(ctx context.Context) error {
	list := migrations
	if s.db.pg {
		list = pgMigrations
	} else if _, err := s.db.ExecContext(ctx, createSchemaVersion); err != nil {
		return err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.db.pg {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, pgMigrateLock); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, createSchemaVersion); err != nil {
			return err
		}
	}
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version),0) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	if v > len(list) {
		return fmt.Errorf("schema version %d is newer than this ultra knows (%d): upgrade ultra", v, len(list))
	}
	for i := v; i < len(list); i++ {
		// A migration is its dialect's own SQL, never rebound.
		if _, err := tx.q.ExecContext(ctx, list[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, i+1); err != nil {
			return err
		}
	}
	return tx.Commit()
}

const createSchemaVersion = `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`
