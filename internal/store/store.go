// Package store persists runs, tasks, transitions, events, messages and
// requests. It has two backends behind one API:
//
//   - SQLite (pure-Go driver, WAL), a file under .ultra/state/: one
//     repository's store. Several ultra processes may share it: every
//     write is a short immediate transaction and readers never block
//     writers.
//   - PostgreSQL (pgx), opened by a postgres:// URL: the store a fleet of
//     machines shares.
//
// Every query is written once, in SQLite's ? form, and rebound to $1..$n
// for Postgres (rebind); timestamps are TEXT in one format on both. The
// schema is the migrations list for SQLite and pgMigrations for Postgres,
// one entry each per version.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "modernc.org/sqlite"             // the "sqlite" driver

	"github.com/ultra-dev/ultra/internal/axes"
)

// Store is an open database.
type Store struct {
	sqlDB *sql.DB
	// db is sqlDB taking queries in the ? form.
	db conn
}

// ErrNotFound is returned when no run matches an id.
var ErrNotFound = errors.New("run not found")

// Open opens the store at dsn and brings its schema up to date: a
// postgres:// or postgresql:// URL is a Postgres database (which must
// exist); anything else is the path of a SQLite file, created if need
// be.
func Open(dsn string) (*Store, error) {
	if isPostgresURL(dsn) {
		return openPostgres(dsn)
	}
	return openSQLite(dsn)
}

func openSQLite(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(15000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	// Switching a new database to WAL needs a moment alone with it; a
	// process opening the store at the same time as another waits.
	return start(db, false, path)
}

func openPostgres(dsn string) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", redact(dsn), err)
	}
	db.SetMaxOpenConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	return start(db, true, dsn)
}

// start migrates a store just opened, trying again while another
// process holds the database.
func start(db *sql.DB, pg bool, dsn string) (*Store, error) {
	s := &Store{sqlDB: db, db: conn{q: db, pg: pg}}
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = s.migrate(context.Background()); err == nil || !isBusy(err) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", redact(dsn), err)
	}
	return s, nil
}

// Backend is where the store lives: SQLite or Postgres.
func (s *Store) Backend() string {
	if s.db.pg {
		return Postgres
	}
	return SQLite
}

// Close closes the database.
func (s *Store) Close() error { return s.sqlDB.Close() }

// Run is one run's row: its phase, axes and status, and the agent's state.
type Run struct {
	ID         string
	Task       string
	Repo       string // repository root
	Workdir    string // where the run works
	Phase      string
	Status     string // running, complete, escalated, budget_exhausted, needs_approval, cancelled, interrupted, failed
	Reason     string
	Axes       axes.Axes
	Provider   string
	Model      string
	BaseURL    string
	State      json.RawMessage // owned by the agent
	PID        int             // process running it, 0 when none
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time
	// Workspace is the run's git workspace; only CreateRun and
	// SetWorkspace write it (a step never does).
	Workspace Workspace
	// TaskRow is the run's row on the tasks surface, written with the run
	// by CreateRun and every SaveStep.
	TaskRow Task
	// Dispatch, when a worker starts the run for a schedule, is the
	// dispatch the run takes: CreateRun moves it to dispatched in the
	// transaction that creates the run, or creates nothing.
	Dispatch *DispatchClaim
	// Snapshot, when set, is the run's worktree as of this step: SaveStep
	// keeps it (the run's last one) in the step's transaction.
	Snapshot *Snapshot
	// Records, when set, are the run's records this step shares with the
	// fleet (records.go): SaveStep writes them in the step's transaction,
	// with its snapshot, so another machine never sees one without the
	// other.
	Records []Record
	// Adopt: the run's row was made ahead (a run submitted to a fleet,
	// status queued), and CreateRun takes it over, only while it is still
	// queued: of two processes adopting one row, one does.
	Adopt bool
	// Schedule and ScheduleDue name the schedule and due time that made
	// the run (read only; "" and zero for a run a person started).
	Schedule    string
	ScheduleDue time.Time
}

// Task is what the tasks surface shows of a run or session beyond its
// row: its status in the tasks' vocabulary, what it waits on, budgets and
// spend, its last checkpoint.
type Task struct {
	Status     string   `json:"status"` // todo|running|verifying|reviewing|done|blocked|paused|failed|cancelled|retrying
	Blockers   []string `json:"blockers,omitempty"`
	Retries    int      `json:"retries"`
	MaxRetries int      `json:"max_retries"`
	// The limit that ends the run first: the retries, or the build/verify
	// cycles of the goal in progress ("cycles of goal G001"); "" before
	// a run records one.
	LimitWhat    string  `json:"limit_what,omitempty"`
	LimitUsed    int     `json:"limit_used,omitempty"`
	LimitMax     int     `json:"limit_max,omitempty"`
	Checkpoint   string  `json:"checkpoint,omitempty"` // the last commit ultra made (a green tree)
	BudgetCost   float64 `json:"budget_cost,omitempty"`
	SpentCost    float64 `json:"spent_cost"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Turns        int     `json:"turns"`
	Waiting      string  `json:"waiting,omitempty"` // what a person must do: approval, plan, next, …
	Goal         string  `json:"goal,omitempty"`    // the goal in progress
	Claim        string  `json:"claim,omitempty"`   // the intent the task claims (what it works on)
	// Parent is the parallel run a worker works for ("" for any other run).
	Parent string `json:"parent,omitempty"`
}

// Runtime is a live task's process: who drives it and its heartbeat.
type Runtime struct {
	PID           int       `json:"pid"`
	Host          string    `json:"host,omitempty"`
	Worktree      string    `json:"worktree,omitempty"`
	Model         string    `json:"model,omitempty"`
	ContextTokens int       `json:"context_tokens,omitempty"`
	ContextWindow int       `json:"context_window,omitempty"`
	Activity      string    `json:"activity,omitempty"` // what the process does now: waiting for the model, running a tool, …
	ActivitySince time.Time `json:"activity_since,omitzero"`
	// Partial is the answer streaming in from the model, "" between answers.
	Partial string `json:"partial,omitempty"`
	// Thinking is the model's readable thinking streaming in before its
	// answer, "" between answers.
	Thinking  string    `json:"thinking,omitempty"`
	Heartbeat time.Time `json:"heartbeat"`
}

// Workspace is where a run works in git and what became of it.
type Workspace struct {
	Branch      string `json:"branch,omitempty"`       // ultra/<run-id>
	Base        string `json:"base,omitempty"`         // the branch the run was cut from
	BaseCommit  string `json:"base_commit,omitempty"`  // the base's tip when the run started
	StartCommit string `json:"start_commit,omitempty"` // the run's first commit (BaseCommit, or a snapshot of uncommitted changes)
	Worktree    string `json:"worktree,omitempty"`     // the run's worktree directory
	Landed      string `json:"landed,omitempty"`       // the base's commit that took the run's work
	LandedAt    string `json:"landed_at,omitempty"`
	Undone      string `json:"undone,omitempty"`  // when undo dropped the run's work
	Removed     string `json:"removed,omitempty"` // when the worktree was removed
}

// From is the commit the run started from: its snapshot of uncommitted
// changes when it took one (--include-uncommitted), else its base.
func (w Workspace) From() string {
	if w.StartCommit != "" {
		return w.StartCommit
	}
	return w.BaseCommit
}

// Fate is what became of a run's branch and worktree: landed, undone,
// removed, or "" while the worktree is there (or the run has none).
func (w Workspace) Fate() string {
	switch {
	case w.Landed != "":
		return "landed"
	case w.Undone != "":
		return "undone"
	case w.Removed != "":
		return "removed"
	}
	return ""
}

// Transition is one recorded change of phase or of an axis.
type Transition struct {
	Kind    string    `json:"kind"`           // "phase" or "axis"
	Axis    string    `json:"axis,omitempty"` // for kind axis
	From    string    `json:"from"`
	To      string    `json:"to"`
	By      string    `json:"by"` // model, gate, person, system, …
	Reason  string    `json:"reason"`
	Scope   string    `json:"scope,omitempty"`   // a steered axis: the scope it was applied at
	Session string    `json:"session,omitempty"` // who asked: the requesting process or surface
	At      time.Time `json:"at"`
}

// StoredEvent is an event as kept in the store.
type StoredEvent struct {
	// Row is the event's place among every run's events, in the order
	// they were stored (EventsSince): how a surface follows them all.
	Row   int64
	Run   string
	Seq   int64
	Time  time.Time
	Type  string
	Phase string
	Data  json.RawMessage
}

const runCols = `id, task, repo, workdir, phase, status, reason, axes, provider, model, state, pid, created_at, updated_at, finished_at, base_url, workspace`

// selectRuns reads runs with their task rows (a run stored before the
// tasks surface existed has a task row from the migration).
const selectRuns = `SELECT r.id, r.task, r.repo, r.workdir, r.phase, r.status, r.reason, r.axes, r.provider, r.model, r.state, r.pid,
	r.created_at, r.updated_at, r.finished_at, r.base_url, r.workspace,
	COALESCE(t.status,''), COALESCE(t.blockers,'[]'), COALESCE(t.retries,0), COALESCE(t.max_retries,0), COALESCE(t.checkpoint,''),
	COALESCE(t.budget_cost,0), COALESCE(t.spent_cost,0), COALESCE(t.input_tokens,0), COALESCE(t.output_tokens,0), COALESCE(t.turns,0),
	COALESCE(t.waiting,''), COALESCE(t.goal,''), COALESCE(t.claim,''),
	COALESCE(t.limit_what,''), COALESCE(t.limit_used,0), COALESCE(t.limit_max,0),
	COALESCE(t.schedule_id,''), COALESCE(t.schedule_due,''), COALESCE(t.parent,'')
	FROM runs r LEFT JOIN tasks t ON t.id = r.id`

// CreateRun inserts r (or, with r.Adopt, takes over its queued row).
func (s *Store) CreateRun(ctx context.Context, r *Run) error {
	return s.retrying(ctx, func(bool) error { return s.createRun(ctx, r) })
}

func (s *Store) createRun(ctx context.Context, r *Run) error {
	t, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer t.Rollback()
	if err := putRun(ctx, t, r); err != nil {
		return err
	}
	return t.Commit()
}

// putRun inserts r's row and its row of the tasks surface (with
// r.Adopt, takes over its queued row), and takes its dispatch.
func putRun(ctx context.Context, db execer, r *Run) error {
	ax, _ := json.Marshal(r.Axes)
	ws, _ := json.Marshal(r.Workspace)
	q := `INSERT INTO runs (` + runCols + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	if r.Adopt {
		q += ` ON CONFLICT(id) DO UPDATE SET task=excluded.task, repo=excluded.repo, workdir=excluded.workdir, phase=excluded.phase,
			status=excluded.status, reason=excluded.reason, axes=excluded.axes, provider=excluded.provider, model=excluded.model,
			state=excluded.state, pid=excluded.pid, updated_at=excluded.updated_at, finished_at=excluded.finished_at,
			base_url=excluded.base_url, workspace=excluded.workspace WHERE runs.status='` + StatusQueued + `'`
	}
	res, err := db.ExecContext(ctx, q,
		r.ID, r.Task, r.Repo, r.Workdir, r.Phase, r.Status, r.Reason, string(ax), r.Provider, r.Model,
		string(r.State), r.PID, ts(r.CreatedAt), ts(r.UpdatedAt), ts(r.FinishedAt), r.BaseURL, string(ws))
	if err != nil {
		return fmt.Errorf("store: creating run %s: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %s", ErrNotQueued, r.ID)
	}
	if err := putTask(ctx, db, r); err != nil {
		return fmt.Errorf("store: creating task %s: %w", r.ID, err)
	}
	if r.Dispatch != nil {
		if err := takeDispatch(ctx, db, r, r.CreatedAt); err != nil {
			return err
		}
	}
	return nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// putTask writes r's row of the tasks surface.
func putTask(ctx context.Context, db execer, r *Run) error {
	t := r.TaskRow
	if t.Status == "" {
		t.Status = "running"
	}
	blockers, _ := json.Marshal(append([]string{}, t.Blockers...))
	_, err := db.ExecContext(ctx, `INSERT INTO tasks (id, status, blockers, retries, max_retries, checkpoint, budget_cost, spent_cost,
		input_tokens, output_tokens, turns, waiting, goal, claim, created_at, updated_at, limit_what, limit_used, limit_max, parent)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(id) DO UPDATE SET status=excluded.status, blockers=excluded.blockers, retries=excluded.retries,
		max_retries=excluded.max_retries, checkpoint=excluded.checkpoint, budget_cost=excluded.budget_cost,
		spent_cost=excluded.spent_cost, input_tokens=excluded.input_tokens, output_tokens=excluded.output_tokens,
		turns=excluded.turns, waiting=excluded.waiting, goal=excluded.goal, claim=excluded.claim, updated_at=excluded.updated_at,
		limit_what=excluded.limit_what, limit_used=excluded.limit_used, limit_max=excluded.limit_max, parent=excluded.parent`,
		r.ID, t.Status, string(blockers), t.Retries, t.MaxRetries, t.Checkpoint, t.BudgetCost, t.SpentCost,
		t.InputTokens, t.OutputTokens, t.Turns, t.Waiting, t.Goal, t.Claim, ts(r.CreatedAt), ts(r.UpdatedAt),
		t.LimitWhat, t.LimitUsed, t.LimitMax, t.Parent)
	return err
}

// GetRun finds a run by id or by a unique id prefix.
func (s *Store) GetRun(ctx context.Context, id string) (*Run, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, fmt.Errorf("empty run id")
	}
	rows, err := s.db.QueryContext(ctx, selectRuns+` WHERE r.id = ? OR r.id LIKE ? ESCAPE '\' ORDER BY r.id LIMIT 3`,
		id, likePrefix(id))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []*Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		if r.ID == id {
			return r, nil
		}
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("run id %q is ambiguous (%s, %s, …): give more characters", id, found[0].ID, found[1].ID)
}

// ListRuns returns the newest runs first.
func (s *Store) ListRuns(ctx context.Context, limit int) ([]*Run, error) {
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.db.QueryContext(ctx, selectRuns+` ORDER BY r.created_at DESC, r.id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SaveStep updates the run row and appends messages and transitions in one
// transaction, so a step is either wholly recorded or not at all.
func (s *Store) SaveStep(ctx context.Context, r *Run, msgs []json.RawMessage, trans []Transition) error {
	return s.retrying(ctx, func(bool) error { return s.saveStep(ctx, r, msgs, trans) })
}

func (s *Store) saveStep(ctx context.Context, r *Run, msgs []json.RawMessage, trans []Transition) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	ax, _ := json.Marshal(r.Axes)
	res, err := tx.ExecContext(ctx, `UPDATE runs SET task=?, phase=?, status=?, reason=?, axes=?, provider=?, model=?, base_url=?, state=?, pid=?, updated_at=?, finished_at=? WHERE id=?`,
		r.Task, r.Phase, r.Status, r.Reason, string(ax), r.Provider, r.Model, r.BaseURL, string(r.State), r.PID, ts(r.UpdatedAt), ts(r.FinishedAt), r.ID)
	if err != nil {
		return fmt.Errorf("store: saving run %s: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %s", ErrNotFound, r.ID)
	}
	if err := putTask(ctx, tx, r); err != nil {
		return fmt.Errorf("store: saving task %s: %w", r.ID, err)
	}
	if r.Snapshot != nil {
		if err := putSnapshot(ctx, tx, r.ID, r.Snapshot); err != nil {
			return err
		}
	}
	if err := putRecords(ctx, tx, r.ID, r.Records); err != nil {
		return err
	}
	if len(msgs) > 0 {
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq),0)+1 FROM messages WHERE run_id=?`, r.ID).Scan(&next); err != nil {
			return err
		}
		for i, m := range msgs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO messages (run_id, seq, data) VALUES (?,?,?)`, r.ID, next+int64(i), string(m)); err != nil {
				return fmt.Errorf("store: saving message: %w", err)
			}
		}
	}
	for _, t := range trans {
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_transitions (run_id, kind, axis, from_v, to_v, by, reason, scope, session, at) VALUES (?,?,?,?,?,?,?,?,?,?)`,
			r.ID, t.Kind, t.Axis, t.From, t.To, t.By, t.Reason, t.Scope, t.Session, ts(t.At)); err != nil {
			return fmt.Errorf("store: saving transition: %w", err)
		}
	}
	return tx.Commit()
}

// SetWorkspace records what became of a run's workspace.
func (s *Store) SetWorkspace(ctx context.Context, id string, ws Workspace) error {
	b, _ := json.Marshal(ws)
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET workspace=? WHERE id=?`, string(b), id)
	if err != nil {
		return fmt.Errorf("store: saving workspace of run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return nil
}

// Claim makes pid the process driving run id, and the run running, if
// it is still driven by wasPID with status wasStatus (compare and swap):
// of two processes resuming one run, only one wins, and from then on
// every other sees it running in a live process.
func (s *Store) Claim(ctx context.Context, id string, wasPID int, wasStatus string, pid int) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET pid=?, status='running' WHERE id=? AND pid=? AND status=?`, pid, id, wasPID, wasStatus)
	if err != nil {
		return false, fmt.Errorf("store: claiming run %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// AppendEvent records one event.
func (s *Store) AppendEvent(ctx context.Context, run string, seq int64, at time.Time, typ, phase string, data json.RawMessage) error {
	return s.retrying(ctx, func(again bool) error {
		_, err := s.db.ExecContext(ctx, `INSERT INTO events (run_id, seq, at, type, phase, data) VALUES (?,?,?,?,?,?)`,
			run, seq, ts(at), typ, phase, string(data))
		if again && duplicate(err) {
			// The try before was stored; only its answer was lost.
			return nil
		}
		return err
	})
}

// LastSeq is the number of the run's latest event, 0 when none.
func (s *Store) LastSeq(ctx context.Context, run string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq),0) FROM events WHERE run_id=?`, run).Scan(&n)
	return n, err
}

// EventsAfter returns the run's events numbered after seq, in order, at
// most limit of them (all with limit 0): how a surface follows a run.
func (s *Store) EventsAfter(ctx context.Context, run string, seq int64, limit int) ([]StoredEvent, error) {
	q := `SELECT seq, at, type, phase, data FROM events WHERE run_id=? AND seq>? ORDER BY seq`
	args := []any{run, seq}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return s.scanEvents(ctx, q, args...)
}

// LastRow is the place of the latest event of any run (0: none yet):
// SQLite's rowid, Postgres's rowid column.
func (s *Store) LastRow(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(rowid),0) FROM events`).Scan(&n)
	return n, err
}

// EventsSince returns every run's events stored after place row, in the
// order they were stored, at most limit of them, with Row and Run set.
// A place once seen has no earlier place still to come, so a reader that
// asks for the events after the last place it saw misses none: SQLite
// has one writer at a time; on Postgres the events' place (the column
// rowid there) is drawn under a lock every insert into events takes and
// keeps until its transaction ends, and a transaction is visible before
// its locks are released (see pgMigrations). Places may skip numbers.
func (s *Store) EventsSince(ctx context.Context, row int64, limit int) ([]StoredEvent, error) {
	return s.scanEvents(ctx, `SELECT rowid, run_id, seq, at, type, phase, data FROM events WHERE rowid>? ORDER BY rowid LIMIT ?`, row, limit)
}

// Events returns the run's events in order; with last > 0, only the last ones.
func (s *Store) Events(ctx context.Context, run string, last int) ([]StoredEvent, error) {
	q := `SELECT seq, at, type, phase, data FROM events WHERE run_id=? ORDER BY seq`
	args := []any{run}
	if last > 0 {
		q = `SELECT * FROM (SELECT seq, at, type, phase, data FROM events WHERE run_id=? ORDER BY seq DESC LIMIT ?) AS last ORDER BY seq`
		args = append(args, last)
	}
	return s.scanEvents(ctx, q, args...)
}

func (s *Store) scanEvents(ctx context.Context, q string, args ...any) ([]StoredEvent, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// EventsSince's rows have the place and the run first.
	cols, _ := rows.Columns()
	var out []StoredEvent
	for rows.Next() {
		var e StoredEvent
		var at, data string
		dest := []any{&e.Seq, &at, &e.Type, &e.Phase, &data}
		if len(cols) == 7 {
			dest = append([]any{&e.Row, &e.Run}, dest...)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		e.Time = parseTS(at)
		e.Data = json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Messages returns the run's conversation history in order.
func (s *Store) Messages(ctx context.Context, run string) ([]json.RawMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT data FROM messages WHERE run_id=? ORDER BY seq`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []json.RawMessage
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, json.RawMessage(d))
	}
	return out, rows.Err()
}

// Transitions returns the run's recorded transitions in order.
func (s *Store) Transitions(ctx context.Context, run string) ([]Transition, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kind, axis, from_v, to_v, by, reason, scope, session, at FROM task_transitions WHERE run_id=? ORDER BY id`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Transition
	for rows.Next() {
		var t Transition
		var at string
		if err := rows.Scan(&t.Kind, &t.Axis, &t.From, &t.To, &t.By, &t.Reason, &t.Scope, &t.Session, &at); err != nil {
			return nil, err
		}
		t.At = parseTS(at)
		out = append(out, t)
	}
	return out, rows.Err()
}

type scanner interface{ Scan(...any) error }

func scanRun(sc scanner) (*Run, error) {
	var r Run
	var ax, state, created, updated, finished, ws, blockers, due string
	t := &r.TaskRow
	if err := sc.Scan(&r.ID, &r.Task, &r.Repo, &r.Workdir, &r.Phase, &r.Status, &r.Reason, &ax,
		&r.Provider, &r.Model, &state, &r.PID, &created, &updated, &finished, &r.BaseURL, &ws,
		&t.Status, &blockers, &t.Retries, &t.MaxRetries, &t.Checkpoint, &t.BudgetCost, &t.SpentCost,
		&t.InputTokens, &t.OutputTokens, &t.Turns, &t.Waiting, &t.Goal, &t.Claim,
		&t.LimitWhat, &t.LimitUsed, &t.LimitMax, &r.Schedule, &due, &t.Parent); err != nil {
		return nil, err
	}
	r.ScheduleDue = parseTS(due)
	_ = json.Unmarshal([]byte(blockers), &t.Blockers)
	if err := json.Unmarshal([]byte(ws), &r.Workspace); err != nil {
		return nil, fmt.Errorf("store: run %s: corrupt workspace: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(ax), &r.Axes); err != nil {
		return nil, fmt.Errorf("store: run %s: corrupt axes: %w", r.ID, err)
	}
	r.State = json.RawMessage(state)
	r.CreatedAt, r.UpdatedAt, r.FinishedAt = parseTS(created), parseTS(updated), parseTS(finished)
	return &r, nil
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTS(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func likePrefix(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(p) + "%"
}
