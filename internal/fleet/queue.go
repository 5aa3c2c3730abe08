package fleet

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/ultra-dev/ultra/internal/store"
)

// QueueRuns is the River queue of submitted runs.
const QueueRuns = "runs"

// RunJob is one submitted run in the queue: the run's row (queued)
// holds its task; the job says where its repository is and with what
// arguments `ultra run` takes it over.
type RunJob struct {
	Run   string   `json:"run" river:"unique"`
	Repo  string   `json:"repo"`           // the URL workers clone and push the run's branch to
	Base  string   `json:"base,omitempty"` // the branch the run's branch is cut from (default: the remote's)
	Args  []string `json:"args"`           // ultra run's flags, then "--" and the task
	Brief string   `json:"brief,omitempty"`
}

// Kind is the job's kind in River's table.
func (RunJob) Kind() string { return "ultra_run" }

// InsertOpts: the runs queue, one job per run, a few attempts (a worker
// that dies mid-run leaves the job to be rescued).
func (RunJob) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueRuns, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// quiet is River's logger: its news is not the person's; ultra logs what
// a worker does itself.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Migrate brings River's tables in the database up to date (a no-op when
// they are).
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// Two workers starting at once migrate one after the other.
	const lock = 0x756c747261 // "ultra"
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock)
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("the queue's tables: %w", err)
	}
	return nil
}

// Prepare makes sure the queue's tables exist in the database at url.
func Prepare(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("the queue's database: %w", err)
	}
	defer pool.Close()
	return Migrate(ctx, pool)
}

// Submit records a submitted run's row (queued) and its job in one
// transaction: a run is in the queue exactly when its row says queued.
func Submit(ctx context.Context, st *store.Store, row *store.Run, job RunJob) error {
	client, err := river.NewClient(riverdatabasesql.New(nil), &river.Config{Logger: quiet})
	if err != nil {
		return err
	}
	return st.CreateQueuedRun(ctx, row, func(tx *sql.Tx) error {
		res, err := client.InsertTx(ctx, tx, job, nil)
		if err != nil {
			return fmt.Errorf("queueing run %s: %w", row.ID, err)
		}
		if res.UniqueSkippedAsDuplicate {
			return fmt.Errorf("run %s is already in the queue", row.ID)
		}
		return nil
	})
}

// CancelJob cancels the queue's job of a run that no worker took yet
// (River's cancel; a worker taking it meanwhile finds the run cancelled
// and leaves it); false when the run has no job waiting.
func CancelJob(ctx context.Context, url, run string) (bool, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return false, fmt.Errorf("the queue's database: %w", err)
	}
	defer pool.Close()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: quiet})
	if err != nil {
		return false, err
	}
	var id int64
	err = pool.QueryRow(ctx, `SELECT id FROM river_job WHERE kind = $1 AND args->>'run' = $2 AND state IN ('available','scheduled','retryable','pending') ORDER BY id DESC LIMIT 1`,
		RunJob{}.Kind(), run).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := client.JobCancel(ctx, id); err != nil {
		return false, err
	}
	return true, nil
}
