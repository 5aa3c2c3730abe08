package fleet

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/ultra-dev/ultra/internal/event"
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
	// Resume is set for a person's `ultra resume` of a fleet's run that
	// stopped short, asked on any machine (Resume): the job takes the
	// run over and resumes it, once.
	Resume *ResumeAsk `json:"resume,omitempty" river:"unique"`
}

// ResumeAsk is a person's ask to go on with a fleet's run.
type ResumeAsk struct {
	// After is the run's last event when it was asked: a run_resumed
	// after it is this ask's resume (a rescued job does not resume again).
	After    int64  `json:"after"`
	Guidance string `json:"guidance,omitempty"`
	// Approve: the ask accepts the plan the run waits on (ultra approve),
	// with Steer's changes of its axes (control, permission_profile).
	Approve bool              `json:"approve,omitempty"`
	Steer   map[string]string `json:"steer,omitempty"`
	// Budgets are the budget flags the person gave (max-turns: "40"),
	// granted as the run goes on.
	Budgets map[string]string `json:"budgets,omitempty"`
	At      string            `json:"at"` // when, which makes each ask a job of its own
}

// Argv is the command a worker goes on with run by, after taking it over.
func (a ResumeAsk) Argv(run string) []string {
	args := []string{"resume", "--output", "jsonl", "--take-over", run}
	if a.Approve {
		args = []string{"approve", "--output", "jsonl", "--take-over", run}
		if a.Steer["control"] == "autonomous" {
			args = append(args, "--autonomous")
		}
		if p := a.Steer["permission_profile"]; p != "" {
			args = append(args, "--permission-profile", p)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Budgets)) {
		args = append(args, "--"+k, a.Budgets[k])
	}
	if a.Guidance != "" {
		args = append(args, "--", a.Guidance)
	}
	return args
}

// Origin is what a fleet's run was submitted for: its repository's URL
// and base branch (a shared record of the run, store.RecordOrigin).
type Origin struct {
	Repo string `json:"repo"`
	Base string `json:"base,omitempty"`
}

// OriginOf is run's origin, nil for a run submitted before origins were
// kept.
func OriginOf(ctx context.Context, st *store.Store, run string) (*Origin, error) {
	recs, err := st.Records(ctx, run, store.RecordOrigin)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	var o Origin
	if err := json.Unmarshal(recs[0].Body, &o); err != nil {
		return nil, fmt.Errorf("run %s's origin: %w", run, err)
	}
	return &o, nil
}

// Origins are the origins of those of runs that were submitted to a
// fleet, by run (a run started on a machine of its own has none).
func Origins(ctx context.Context, st *store.Store, runs []string) (map[string]Origin, error) {
	bodies, err := st.FirstRecords(ctx, store.RecordOrigin, runs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Origin, len(bodies))
	for run, b := range bodies {
		var o Origin
		if json.Unmarshal(b, &o) == nil {
			out[run] = o
		}
	}
	return out, nil
}

// Resume queues a person's ask to go on with run (which stopped short,
// on whichever machine): a worker takes it over from its last saved
// step and goes on as ask says. An ask made at the same point whose
// take-over failed (it waits to be tried again) is replaced: replaced
// says when it was asked.
func Resume(ctx context.Context, url string, st *store.Store, run string, ask ResumeAsk, now time.Time) (replaced string, err error) {
	o, err := OriginOf(ctx, st, run)
	if err != nil {
		return "", err
	}
	if o == nil {
		return "", fmt.Errorf("run %s does not say which repository it was submitted for (it was submitted by an older ultra): resume it on its worker's machine", run)
	}
	after, err := st.LastSeq(ctx, run)
	if err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return "", fmt.Errorf("the queue's database: %w", err)
	}
	defer pool.Close()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: quiet})
	if err != nil {
		return "", err
	}
	ask.After, ask.At = after, now.UTC().Format(time.RFC3339Nano)
	job := RunJob{Run: run, Repo: o.Repo, Base: o.Base, Resume: &ask}
	// One ask at a time per stop of the run: a second ask, while the
	// first waits for a worker, would only find the run resumed, and its
	// guidance would be lost. Asks of one run are queued one after the
	// other (the lock; read committed, so each sees the one before), so
	// two at once cannot both see none. An ask that waits for its next
	// try (its take-over failed, or its worker died) gives way to a new
	// one; its rows are locked, so no worker takes it meanwhile.
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return "", fmt.Errorf("the queue's database: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('ultra ask ' || $1))`, run); err != nil {
		return "", fmt.Errorf("the queue's database: %w", err)
	}
	asks, err := waitingAsks(ctx, tx, st, run)
	if err != nil {
		return "", err
	}
	for _, w := range asks {
		if w.state != "retryable" {
			return "", pendingAsk(run, w.at, w.guidance, w.state == "running", now)
		}
	}
	for _, w := range asks {
		j, err := client.JobCancelTx(ctx, tx, w.id)
		if err != nil {
			return "", fmt.Errorf("replacing run %s's waiting ask: %w", run, err)
		}
		if j.State != rivertype.JobStateCancelled {
			return "", pendingAsk(run, w.at, w.guidance, true, now)
		}
		replaced = askedAgo(w.at, now)
	}
	if _, err := client.InsertTx(ctx, tx, job, nil); err != nil {
		return "", fmt.Errorf("queueing run %s's resume: %w", run, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", fmt.Errorf("queueing run %s's resume: %w", run, err)
	}
	return replaced, nil
}

// waitingAsk is a person's ask to go on with a run, in River's table.
type waitingAsk struct {
	id                  int64
	state, at, guidance string
}

// waitingAsks are run's asks to go on that are still to be taken: their
// jobs are not finished, and the run has not resumed since they were
// asked (an older ask's rescued job only takes over or pushes). Their
// rows stay locked until tx ends.
func waitingAsks(ctx context.Context, tx pgx.Tx, st *store.Store, run string) ([]waitingAsk, error) {
	rows, err := tx.Query(ctx, `SELECT id, state, (args->'resume'->>'after')::bigint, COALESCE(args->'resume'->>'at',''), COALESCE(args->'resume'->>'guidance','')
		FROM river_job WHERE kind=$1 AND args->>'run'=$2 AND args ? 'resume'
		AND state IN ('available','pending','retryable','running','scheduled') ORDER BY id FOR UPDATE`, RunJob{}.Kind(), run)
	if err != nil {
		return nil, fmt.Errorf("the queue's database: %w", err)
	}
	var all []waitingAsk
	var afters []int64
	for rows.Next() {
		var w waitingAsk
		var after int64
		if err := rows.Scan(&w.id, &w.state, &after, &w.at, &w.guidance); err != nil {
			rows.Close()
			return nil, fmt.Errorf("the queue's database: %w", err)
		}
		all, afters = append(all, w), append(afters, after)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("the queue's database: %w", err)
	}
	var out []waitingAsk
	for i, w := range all {
		resumed, _, err := sinceEvent(ctx, st, run, afters[i])
		if err != nil {
			return nil, err
		}
		if !resumed {
			out = append(out, w)
		}
	}
	return out, nil
}

// askedAgo says when an ask made at at (RFC 3339) was made (by another
// machine's clock: never before now).
func askedAgo(at string, now time.Time) string {
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
		if d := now.Sub(t).Round(time.Second); d > 0 {
			return fmt.Sprintf("%s ago", d)
		}
		return "just now"
	}
	return "before"
}

// pendingAsk refuses an ask to go on with run while another, asked at
// at, waits for a worker (or a worker is taking it: taking).
func pendingAsk(run, at, guidance string, taking bool, now time.Time) error {
	with := ""
	if guidance != "" {
		with = fmt.Sprintf(", with the guidance %q", event.OneLine(guidance, 80))
	}
	state := "a fleet worker has not taken that ask yet"
	if taking {
		state = "a fleet worker is taking it over now"
	}
	return fmt.Errorf("run %s: a person asked to go on with it %s%s, and %s; "+
		"it goes on as that ask says (ultra attach %s): ask again once it stops", run, askedAgo(at, now), with, state, run)
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
	origin, err := json.Marshal(Origin{Repo: job.Repo, Base: job.Base})
	if err != nil {
		return err
	}
	row.Records = append(row.Records, store.Record{Kind: store.RecordOrigin, Body: origin, At: row.CreatedAt})
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
