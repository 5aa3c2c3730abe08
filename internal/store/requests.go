package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Request kinds: what another process asks of a run.
const (
	ReqSteer   = "steer"   // change axes (Request.Axes) at Request.Scope
	ReqApprove = "approve" // allow a waiting tool call (CallID; Scope "run": allow the tool for the rest of the run)
	ReqDeny    = "deny"    // refuse a waiting tool call with Reason, which the model reads
	ReqNext    = "next"    // go on for one unit
	ReqPause   = "pause"   // stop at the next safe point, resumable
	ReqStop    = "stop"    // stop at the next safe point, not resumed without a person
	ReqCancel  = "cancel"  // stop for good
)

// Request is one thing a person (or another surface) asks of a run, kept
// until the run's process takes it: a live run picks its requests up
// from the store within a second.
type Request struct {
	ID      int64             `json:"id"`
	Run     string            `json:"run"`
	Kind    string            `json:"kind"`
	CallID  string            `json:"call_id,omitempty"`
	Axes    map[string]string `json:"axes,omitempty"` // steer: axis → value
	Scope   string            `json:"scope,omitempty"`
	Reason  string            `json:"reason,omitempty"`
	Who     string            `json:"who,omitempty"`
	Session string            `json:"session,omitempty"`
	At      time.Time         `json:"at"`
	DoneAt  time.Time         `json:"done_at,omitzero"`
	Outcome string            `json:"outcome,omitempty"` // applied, refused: why, …
}

// AddRequest records q for its run and returns its id.
func (s *Store) AddRequest(ctx context.Context, q Request) (int64, error) {
	ax, _ := json.Marshal(q.Axes)
	if q.At.IsZero() {
		q.At = time.Now()
	}
	var id int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO requests (run_id, kind, call_id, axes, scope, reason, who, session, created_at) VALUES (?,?,?,?,?,?,?,?,?) RETURNING id`,
		q.Run, q.Kind, q.CallID, string(ax), q.Scope, q.Reason, q.Who, q.Session, ts(q.At)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: recording a %s request for run %s: %w", q.Kind, q.Run, err)
	}
	return id, nil
}

const reqCols = `id, run_id, kind, call_id, axes, scope, reason, who, session, created_at, done_at, outcome`

// OpenRequests are the run's requests not yet taken, oldest first.
func (s *Store) OpenRequests(ctx context.Context, run string) ([]Request, error) {
	return s.requests(ctx, `SELECT `+reqCols+` FROM requests WHERE run_id=? AND done_at='' ORDER BY id`, run)
}

// Requests are all of the run's requests, oldest first.
func (s *Store) Requests(ctx context.Context, run string) ([]Request, error) {
	return s.requests(ctx, `SELECT `+reqCols+` FROM requests WHERE run_id=? ORDER BY id`, run)
}

// Request reads one request.
func (s *Store) Request(ctx context.Context, id int64) (*Request, error) {
	qs, err := s.requests(ctx, `SELECT `+reqCols+` FROM requests WHERE id=?`, id)
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("request %d: %w", id, sql.ErrNoRows)
	}
	return &qs[0], nil
}

func (s *Store) requests(ctx context.Context, q string, arg any) ([]Request, error) {
	rows, err := s.db.QueryContext(ctx, q, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		var r Request
		var ax, at, done string
		if err := rows.Scan(&r.ID, &r.Run, &r.Kind, &r.CallID, &ax, &r.Scope, &r.Reason, &r.Who, &r.Session, &at, &done, &r.Outcome); err != nil {
			return nil, err
		}
		_ = json.Unmarshal([]byte(ax), &r.Axes)
		r.At, r.DoneAt = parseTS(at), parseTS(done)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ErrTaken is returned when a request was already taken.
var ErrTaken = errors.New("request already taken")

// FinishRequest marks a request taken with its outcome (compare and
// swap: a request is taken once).
func (s *Store) FinishRequest(ctx context.Context, id int64, outcome string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE requests SET done_at=?, outcome=? WHERE id=? AND done_at=''`, ts(time.Now()), outcome, id)
	if err != nil {
		return fmt.Errorf("store: finishing request %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %d", ErrTaken, id)
	}
	return nil
}

// Beat records a live task's runtime (its heartbeat).
func (s *Store) Beat(ctx context.Context, run string, rt Runtime) error {
	if rt.Heartbeat.IsZero() {
		rt.Heartbeat = time.Now()
	}
	since := ""
	if !rt.ActivitySince.IsZero() {
		since = ts(rt.ActivitySince)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO task_runtime (task_id, pid, host, worktree, model, context_tokens, context_window, activity, heartbeat, activity_since, partial, thinking)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(task_id) DO UPDATE SET pid=excluded.pid, host=excluded.host, worktree=excluded.worktree,
		model=excluded.model, context_tokens=excluded.context_tokens, context_window=excluded.context_window,
		activity=excluded.activity, heartbeat=excluded.heartbeat, activity_since=excluded.activity_since, partial=excluded.partial, thinking=excluded.thinking`,
		run, rt.PID, rt.Host, rt.Worktree, rt.Model, rt.ContextTokens, rt.ContextWindow, rt.Activity, ts(rt.Heartbeat), since, rt.Partial, rt.Thinking)
	return err
}

// RuntimeOf reads a task's runtime (zero when it never beat).
func (s *Store) RuntimeOf(ctx context.Context, run string) (Runtime, error) {
	var rt Runtime
	var hb, since string
	err := s.db.QueryRowContext(ctx, `SELECT pid, host, worktree, model, context_tokens, context_window, activity, heartbeat, activity_since, partial, thinking FROM task_runtime WHERE task_id=?`, run).
		Scan(&rt.PID, &rt.Host, &rt.Worktree, &rt.Model, &rt.ContextTokens, &rt.ContextWindow, &rt.Activity, &hb, &since, &rt.Partial, &rt.Thinking)
	if errors.Is(err, sql.ErrNoRows) {
		return rt, nil
	}
	rt.Heartbeat = parseTS(hb)
	if since != "" {
		rt.ActivitySince = parseTS(since)
	}
	return rt, err
}
