package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Schedule is one schedule: when it is due (Spec, owned by package
// schedule) and the arguments of the `ultra run` each dispatch makes.
type Schedule struct {
	ID   string          `json:"id"`
	Spec json.RawMessage `json:"spec"`
	Args []string        `json:"args"` // `ultra run` arguments, flags then the task
	Task string          `json:"task"` // what people read: the task, or the brief file
	// Repo and Base: a fleet's schedule (in a shared store) submits its
	// runs for this repository's URL, cut from Base; "" for a
	// repository's own schedule, whose runs start where its worker is.
	Repo      string    `json:"repo,omitempty"`
	Base      string    `json:"base,omitempty"`
	CatchUp   string    `json:"catch_up"`
	Paused    bool      `json:"paused"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	RemovedAt time.Time `json:"removed_at,omitzero"`
}

// Dispatch is one due time of a schedule: the scheduler's row, apart
// from the lifecycle of the run it makes.
type Dispatch struct {
	Schedule     string    `json:"schedule"`
	Due          time.Time `json:"due_at"`
	Status       string    `json:"status"` // queued|due|claimed|dispatched|consumed|expired
	ClaimedBy    string    `json:"claimed_by,omitempty"`
	ClaimedAt    time.Time `json:"claimed_at,omitzero"`
	DispatchedAt time.Time `json:"dispatched_at,omitzero"`
	ConsumedAt   time.Time `json:"consumed_at,omitzero"`
	ExpiredAt    time.Time `json:"expired_at,omitzero"`
	Run          string    `json:"run,omitempty"`
	Reason       string    `json:"reason,omitempty"`
}

// DispatchClaim is the dispatch a run takes when it is created: the
// worker that claimed it starts the run, and the run's creation moves
// the dispatch from claimed to dispatched in the same transaction.
type DispatchClaim struct {
	Schedule string
	Due      time.Time
	Worker   string
}

// ErrDispatchTaken is returned when a run's dispatch is no longer its
// worker's to run (another worker took it over, or it expired).
var ErrDispatchTaken = errors.New("the schedule's dispatch is no longer this worker's")

// ErrNoSchedule is returned when no schedule matches an id.
var ErrNoSchedule = errors.New("schedule not found")

// Worker is a process that dispatches schedules.
type Worker struct {
	ID        string    `json:"id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Serves    string    `json:"serves,omitempty"` // what it serves: schedules, …
	StartedAt time.Time `json:"started_at"`
	Heartbeat time.Time `json:"heartbeat"`
	StoppedAt time.Time `json:"stopped_at,omitzero"`
}

// dueKey is a due time as the scheduler's rows key it: whole seconds,
// UTC, so that one due time has one row.
func dueKey(t time.Time) string { return ts(t.Truncate(time.Second)) }

const scheduleCols = `id, spec, args, task, catch_up, paused, created_at, updated_at, removed_at, repo, base`

// AddSchedule records sc.
func (s *Store) AddSchedule(ctx context.Context, sc *Schedule) error {
	args, _ := json.Marshal(sc.Args)
	paused := 0
	if sc.Paused {
		paused = 1
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO schedules (`+scheduleCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		sc.ID, string(sc.Spec), string(args), sc.Task, sc.CatchUp, paused, ts(sc.CreatedAt), ts(sc.UpdatedAt), ts(sc.RemovedAt), sc.Repo, sc.Base)
	if err != nil {
		return fmt.Errorf("store: adding schedule %s: %w", sc.ID, err)
	}
	return nil
}

// GetSchedule finds a schedule by id or unique id prefix, removed ones
// too.
func (s *Store) GetSchedule(ctx context.Context, id string) (*Schedule, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, errors.New("empty schedule id")
	}
	list, err := s.schedules(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id LIMIT 3`, id, likePrefix(id))
	if err != nil {
		return nil, err
	}
	for _, sc := range list {
		if sc.ID == id {
			return sc, nil
		}
	}
	switch len(list) {
	case 0:
		return nil, fmt.Errorf("%w: %s (ultra schedule list shows them)", ErrNoSchedule, id)
	case 1:
		return list[0], nil
	}
	return nil, fmt.Errorf("schedule id %q is ambiguous: give more of it", id)
}

// Schedules lists the schedules, oldest first; removed ones only with
// removed.
func (s *Store) Schedules(ctx context.Context, removed bool) ([]*Schedule, error) {
	q := `SELECT ` + scheduleCols + ` FROM schedules`
	if !removed {
		q += ` WHERE removed_at = ''`
	}
	return s.schedules(ctx, q+` ORDER BY created_at, id`)
}

func (s *Store) schedules(ctx context.Context, q string, args ...any) ([]*Schedule, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading schedules: %w", err)
	}
	defer rows.Close()
	var out []*Schedule
	for rows.Next() {
		var sc Schedule
		var spec, args, created, updated, removed string
		var paused int64
		if err := rows.Scan(&sc.ID, &spec, &args, &sc.Task, &sc.CatchUp, &paused, &created, &updated, &removed, &sc.Repo, &sc.Base); err != nil {
			return nil, fmt.Errorf("store: reading schedules: %w", err)
		}
		sc.Paused = paused != 0
		sc.Spec = json.RawMessage(spec)
		if err := json.Unmarshal([]byte(args), &sc.Args); err != nil {
			return nil, fmt.Errorf("store: schedule %s: corrupt arguments: %w", sc.ID, err)
		}
		sc.CreatedAt, sc.UpdatedAt, sc.RemovedAt = parseTS(created), parseTS(updated), parseTS(removed)
		out = append(out, &sc)
	}
	return out, rows.Err()
}

// SetSchedulePaused pauses or resumes a schedule. Pausing expires its
// due dispatches, with reason, and drops the queued one; a claimed or
// running one goes on.
func (s *Store) SetSchedulePaused(ctx context.Context, id string, paused bool, reason string, now time.Time) error {
	v := 0
	if paused {
		v = 1
	}
	return s.endSchedule(ctx, id, `paused=?`, v, reason, now, paused)
}

// RemoveSchedule removes a schedule (its rows stay, for the record),
// expires its due dispatches and drops the queued one.
func (s *Store) RemoveSchedule(ctx context.Context, id, reason string, now time.Time) error {
	return s.endSchedule(ctx, id, `removed_at=?`, ts(now), reason, now, true)
}

func (s *Store) endSchedule(ctx context.Context, id, set string, v any, reason string, now time.Time, expire bool) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE schedules SET `+set+`, updated_at=? WHERE id=? AND removed_at=''`, v, ts(now), id)
	if err != nil {
		return fmt.Errorf("store: schedule %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %s", ErrNoSchedule, id)
	}
	if expire {
		// A queued row is only the next due time, looked at ahead: it
		// goes. A due one will not run.
		if _, err := tx.ExecContext(ctx, `DELETE FROM task_scheduler WHERE schedule_id=? AND status='queued'`, id); err != nil {
			return fmt.Errorf("store: schedule %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE task_scheduler SET status='expired', expired_at=?, reason=? WHERE schedule_id=? AND status='due'`,
			ts(now), reason, id); err != nil {
			return fmt.Errorf("store: schedule %s: %w", id, err)
		}
	}
	return tx.Commit()
}

const dispatchCols = `schedule_id, due_at, status, claimed_by, claimed_at, dispatched_at, consumed_at, expired_at, run_id, reason`

// Dispatches are a schedule's rows, newest due time first, at most limit
// (all with 0); with schedule "", every schedule's.
func (s *Store) Dispatches(ctx context.Context, schedule string, limit int) ([]Dispatch, error) {
	q := `SELECT ` + dispatchCols + ` FROM task_scheduler`
	var args []any
	if schedule != "" {
		q += ` WHERE schedule_id=?`
		args = append(args, schedule)
	}
	q += ` ORDER BY due_at DESC, schedule_id`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return s.dispatches(ctx, q, args...)
}

// DispatchesIn are the rows, of every schedule, in one of the states,
// oldest due time first.
func (s *Store) DispatchesIn(ctx context.Context, states ...string) ([]Dispatch, error) {
	if len(states) == 0 {
		return nil, nil
	}
	q := `SELECT ` + dispatchCols + ` FROM task_scheduler WHERE status IN (?` + strings.Repeat(",?", len(states)-1) + `) ORDER BY due_at, schedule_id`
	args := make([]any, len(states))
	for i, st := range states {
		args[i] = st
	}
	return s.dispatches(ctx, q, args...)
}

func (s *Store) dispatches(ctx context.Context, q string, args ...any) ([]Dispatch, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading dispatches: %w", err)
	}
	defer rows.Close()
	var out []Dispatch
	for rows.Next() {
		var d Dispatch
		var due, claimed, dispatched, consumed, expired string
		if err := rows.Scan(&d.Schedule, &due, &d.Status, &d.ClaimedBy, &claimed, &dispatched, &consumed, &expired, &d.Run, &d.Reason); err != nil {
			return nil, fmt.Errorf("store: reading dispatches: %w", err)
		}
		d.Due, d.ClaimedAt, d.DispatchedAt, d.ConsumedAt, d.ExpiredAt = parseTS(due), parseTS(claimed), parseTS(dispatched), parseTS(consumed), parseTS(expired)
		out = append(out, d)
	}
	return out, rows.Err()
}

// LatestDue is the latest due time of a schedule's rows that are past
// queued (zero when none): where a worker's look at it starts.
func (s *Store) LatestDue(ctx context.Context, schedule string) (time.Time, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(due_at),'') FROM task_scheduler WHERE schedule_id=? AND status != 'queued'`, schedule).Scan(&v)
	return parseTS(v), err
}

// QueueDispatch records a schedule's next due time ahead, as queued,
// unless it has a row; queued rows of earlier times that are no longer
// next are dropped (they were never due).
func (s *Store) QueueDispatch(ctx context.Context, schedule string, due time.Time) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM task_scheduler WHERE schedule_id=? AND status='queued' AND due_at != ?`, schedule, dueKey(due)); err != nil {
		return fmt.Errorf("store: queueing a dispatch of %s: %w", schedule, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_scheduler (schedule_id, due_at, status) VALUES (?,?,'queued') ON CONFLICT DO NOTHING`,
		schedule, dueKey(due)); err != nil {
		return fmt.Errorf("store: queueing a dispatch of %s: %w", schedule, err)
	}
	return tx.Commit()
}

// MarkDue makes a schedule's due time due (a queued row, or a new one),
// and expires the missed ones (new rows, or queued or due ones) with
// reason, in one transaction; a due row older than due, which waited on
// a run of the schedule still going on, expires as superseded. A row
// past due is left as it is: two workers deciding the same due time make
// one row.
func (s *Store) MarkDue(ctx context.Context, schedule string, due time.Time, missed []time.Time, reason, superseded string, now time.Time) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	for _, m := range missed {
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_scheduler (schedule_id, due_at, status, expired_at, reason) VALUES (?,?,'expired',?,?)
			ON CONFLICT(schedule_id, due_at) DO UPDATE SET status='expired', expired_at=excluded.expired_at, reason=excluded.reason
			WHERE task_scheduler.status IN ('queued','due')`, schedule, dueKey(m), ts(now), reason); err != nil {
			return fmt.Errorf("store: expiring a dispatch of %s: %w", schedule, err)
		}
	}
	// Due rows before this one were missed too (they waited on a run of
	// the schedule that is still going): one dispatch runs for all.
	if !due.IsZero() {
		if _, err := tx.ExecContext(ctx, `UPDATE task_scheduler SET status='expired', expired_at=?, reason=? WHERE schedule_id=? AND status IN ('queued','due') AND due_at < ?`,
			ts(now), superseded, schedule, dueKey(due)); err != nil {
			return fmt.Errorf("store: expiring a dispatch of %s: %w", schedule, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_scheduler (schedule_id, due_at, status) VALUES (?,?,'due')
			ON CONFLICT(schedule_id, due_at) DO UPDATE SET status='due' WHERE task_scheduler.status='queued'`, schedule, dueKey(due)); err != nil {
			return fmt.Errorf("store: a dispatch of %s: %w", schedule, err)
		}
	}
	return tx.Commit()
}

// MoveDispatch moves a dispatch from one state to another, setting the
// time of the new state and the reason (the caller checks the move is
// legal: schedule.CanMove); false when it was no longer in from (another
// worker moved it first).
func (s *Store) MoveDispatch(ctx context.Context, schedule string, due time.Time, from, to, reason string, now time.Time) (bool, error) {
	set := map[string]string{"due": "", "claimed": "claimed_at", "dispatched": "dispatched_at", "consumed": "consumed_at", "expired": "expired_at"}
	col, ok := set[to]
	if !ok {
		return false, fmt.Errorf("store: no move of a dispatch to %q", to)
	}
	q := `UPDATE task_scheduler SET status=?, reason=?`
	args := []any{to, reason}
	if col != "" {
		q += `, ` + col + `=?`
		args = append(args, ts(now))
	}
	if to == "due" {
		q += `, claimed_by='', claimed_at=''`
	}
	q += ` WHERE schedule_id=? AND due_at=? AND status=?`
	args = append(args, schedule, dueKey(due), from)
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("store: moving a dispatch of %s to %s: %w", schedule, to, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ClaimDispatch makes worker the one that runs a due dispatch: of any
// number of workers claiming it, exactly one gets true.
func (s *Store) ClaimDispatch(ctx context.Context, schedule string, due time.Time, worker string, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE task_scheduler SET status='claimed', claimed_by=?, claimed_at=? WHERE schedule_id=? AND due_at=? AND status='due'`,
		worker, ts(now), schedule, dueKey(due))
	if err != nil {
		return false, fmt.Errorf("store: claiming a dispatch of %s: %w", schedule, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ReleaseClaim gives a claimed dispatch back (due again) when the worker
// that claimed it is the one named; false when it was not.
func (s *Store) ReleaseClaim(ctx context.Context, schedule string, due time.Time, worker, reason string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE task_scheduler SET status='due', claimed_by='', claimed_at='', reason=? WHERE schedule_id=? AND due_at=? AND status='claimed' AND claimed_by=?`,
		reason, schedule, dueKey(due), worker)
	if err != nil {
		return false, fmt.Errorf("store: releasing a dispatch of %s: %w", schedule, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// takeDispatch moves the run's claimed dispatch to dispatched, naming
// the run, in the transaction that creates the run.
func takeDispatch(ctx context.Context, tx execer, r *Run, now time.Time) error {
	c := r.Dispatch
	res, err := tx.ExecContext(ctx, `UPDATE task_scheduler SET status='dispatched', dispatched_at=?, run_id=? WHERE schedule_id=? AND due_at=? AND status='claimed' AND claimed_by=?`,
		ts(now), r.ID, c.Schedule, dueKey(c.Due), c.Worker)
	if err != nil {
		return fmt.Errorf("store: dispatching %s: %w", c.Schedule, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w (schedule %s, due %s)", ErrDispatchTaken, c.Schedule, dueKey(c.Due))
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET schedule_id=?, schedule_due=? WHERE id=?`, c.Schedule, dueKey(c.Due), r.ID); err != nil {
		return fmt.Errorf("store: dispatching %s: %w", c.Schedule, err)
	}
	return nil
}

// CheckDispatch reports whether a claim is still its worker's to run.
func (s *Store) CheckDispatch(ctx context.Context, c DispatchClaim) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM task_scheduler WHERE schedule_id=? AND due_at=? AND status='claimed' AND claimed_by=?`,
		c.Schedule, dueKey(c.Due), c.Worker).Scan(&n); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if n != 1 {
		return fmt.Errorf("%w (schedule %s, due %s)", ErrDispatchTaken, c.Schedule, dueKey(c.Due))
	}
	return nil
}

// BeatWorker records a worker's heartbeat (its row, made on the first).
func (s *Store) BeatWorker(ctx context.Context, w Worker) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO workers (id, host, pid, serves, started_at, heartbeat, stopped_at) VALUES (?,?,?,?,?,?,?)
		ON CONFLICT(id) DO UPDATE SET heartbeat=excluded.heartbeat, stopped_at=excluded.stopped_at, serves=excluded.serves`,
		w.ID, w.Host, w.PID, w.Serves, ts(w.StartedAt), ts(w.Heartbeat), ts(w.StoppedAt))
	if err != nil {
		return fmt.Errorf("store: worker %s: %w", w.ID, err)
	}
	return nil
}

// Workers are the workers that beat since since and have not stopped,
// latest heartbeat first.
func (s *Store) Workers(ctx context.Context, since time.Time) ([]Worker, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, host, pid, serves, started_at, heartbeat, stopped_at FROM workers WHERE stopped_at = ''`)
	if err != nil {
		return nil, fmt.Errorf("store: reading workers: %w", err)
	}
	defer rows.Close()
	var out []Worker
	for rows.Next() {
		var w Worker
		var started, hb, stopped string
		if err := rows.Scan(&w.ID, &w.Host, &w.PID, &w.Serves, &started, &hb, &stopped); err != nil {
			return nil, fmt.Errorf("store: reading workers: %w", err)
		}
		w.StartedAt, w.Heartbeat, w.StoppedAt = parseTS(started), parseTS(hb), parseTS(stopped)
		if !w.Heartbeat.Before(since) {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b Worker) int { return b.Heartbeat.Compare(a.Heartbeat) })
	return out, rows.Err()
}
