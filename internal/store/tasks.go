package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
)

// TaskView is one run or session as the tasks surface lists it: the run's
// row without its state and conversation, its task row, and its runtime
// when its process ever beat.
type TaskView struct {
	ID         string
	Task       string
	Phase      string
	Status     string // the run's status as stored (see agent's statuses)
	Reason     string
	Axes       axes.Axes
	Provider   string
	Model      string
	PID        int
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time
	Branch     string // ultra/<run-id>, "" for runs from before workspaces
	Landed     bool   // the run's work was landed on its base
	Undone     bool   // the run's work was dropped
	Removed    bool   // the run's worktree was removed
	TaskRow    Task
	// Schedule and ScheduleDue name the schedule and due time that made
	// the run ("" and zero for a run a person started).
	Schedule    string
	ScheduleDue time.Time
	// Runtime is nil when the run's process never recorded a heartbeat.
	Runtime *Runtime
}

// TaskFilter selects the tasks ListTasks returns.
type TaskFilter struct {
	// All lists every task; otherwise the finished ones (done, failed,
	// cancelled) are left out except the RecentFinished most recent.
	All            bool
	RecentFinished int
	// ID, when set, lists only the run with that id or id prefix.
	ID string
}

// FinishedTaskStatuses are the task statuses of runs that are over.
var FinishedTaskStatuses = []string{"done", "failed", "cancelled"}

// selectTasks reads what the tasks surface shows, never the runs' state
// or messages (a run's state can be large).
const selectTasks = `SELECT r.id, r.task, r.phase, r.status, r.reason, r.axes, r.provider, r.model, r.pid,
	r.created_at, r.updated_at, r.finished_at,
	COALESCE(json_extract(r.workspace, '$.branch'), ''), COALESCE(json_extract(r.workspace, '$.landed'), ''),
	COALESCE(json_extract(r.workspace, '$.undone'), ''), COALESCE(json_extract(r.workspace, '$.removed'), ''),
	COALESCE(t.status,''), COALESCE(t.blockers,'[]'), COALESCE(t.retries,0), COALESCE(t.max_retries,0), COALESCE(t.checkpoint,''),
	COALESCE(t.budget_cost,0), COALESCE(t.spent_cost,0), COALESCE(t.input_tokens,0), COALESCE(t.output_tokens,0), COALESCE(t.turns,0),
	COALESCE(t.waiting,''), COALESCE(t.goal,''), COALESCE(t.claim,''),
	COALESCE(t.limit_what,''), COALESCE(t.limit_used,0), COALESCE(t.limit_max,0),
	COALESCE(t.schedule_id,''), COALESCE(t.schedule_due,''), COALESCE(t.parent,''),
	rt.task_id IS NOT NULL, COALESCE(rt.pid,0), COALESCE(rt.host,''), COALESCE(rt.worktree,''), COALESCE(rt.model,''),
	COALESCE(rt.context_tokens,0), COALESCE(rt.context_window,0), COALESCE(rt.activity,''), COALESCE(rt.heartbeat,'')
	FROM runs r LEFT JOIN tasks t ON t.id = r.id LEFT JOIN task_runtime rt ON rt.task_id = r.id`

// ListTasks returns the tasks f selects, newest first.
func (s *Store) ListTasks(ctx context.Context, f TaskFilter) ([]TaskView, error) {
	q, args := tasksQuery(f)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing tasks: %w", err)
	}
	defer rows.Close()
	var out []TaskView
	for rows.Next() {
		v, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// tasksQuery is the query of ListTasks and its arguments.
func tasksQuery(f TaskFilter) (string, []any) {
	q := selectTasks
	var args []any
	finished := `('` + strings.Join(FinishedTaskStatuses, `','`) + `')`
	switch {
	case f.ID != "":
		q += ` WHERE r.id = ? OR r.id LIKE ? ESCAPE '\'`
		args = append(args, f.ID, likePrefix(f.ID))
	case !f.All:
		// Every run that is not over, the most recent that are, and every
		// completed one whose work waits for a person to land it: what
		// needs a person is never left out. (A parallel run's workers land
		// with their run, never alone.)
		q += ` WHERE COALESCE(t.status,'') NOT IN ` + finished +
			` OR r.id IN (SELECT id FROM tasks WHERE status IN ` + finished + ` ORDER BY updated_at DESC LIMIT ?)` +
			` OR (r.status = 'complete' AND COALESCE(json_extract(r.workspace, '$.branch'), '') != '' AND COALESCE(t.parent, '') = ''` +
			` AND COALESCE(json_extract(r.workspace, '$.landed'), '') = '' AND COALESCE(json_extract(r.workspace, '$.undone'), '') = '')`
		args = append(args, f.RecentFinished)
	}
	q += ` ORDER BY r.created_at DESC, r.id DESC`
	return q, args
}

func scanTask(rows scanner) (TaskView, error) {
	var v TaskView
	var ax, created, updated, finishedAt, landed, undone, removed, blockers, hb, due string
	var hasRuntime bool
	var rt Runtime
	t := &v.TaskRow
	if err := rows.Scan(&v.ID, &v.Task, &v.Phase, &v.Status, &v.Reason, &ax, &v.Provider, &v.Model, &v.PID,
		&created, &updated, &finishedAt, &v.Branch, &landed, &undone, &removed,
		&t.Status, &blockers, &t.Retries, &t.MaxRetries, &t.Checkpoint, &t.BudgetCost, &t.SpentCost,
		&t.InputTokens, &t.OutputTokens, &t.Turns, &t.Waiting, &t.Goal, &t.Claim,
		&t.LimitWhat, &t.LimitUsed, &t.LimitMax, &v.Schedule, &due, &t.Parent,
		&hasRuntime, &rt.PID, &rt.Host, &rt.Worktree, &rt.Model, &rt.ContextTokens, &rt.ContextWindow, &rt.Activity, &hb); err != nil {
		return v, fmt.Errorf("store: listing tasks: %w", err)
	}
	if err := json.Unmarshal([]byte(ax), &v.Axes); err != nil {
		return v, fmt.Errorf("store: run %s: corrupt axes: %w", v.ID, err)
	}
	if blockers != "" && blockers != "[]" {
		_ = json.Unmarshal([]byte(blockers), &t.Blockers)
	}
	v.CreatedAt, v.UpdatedAt, v.FinishedAt = parseTS(created), parseTS(updated), parseTS(finishedAt)
	v.ScheduleDue = parseTS(due)
	v.Landed, v.Undone, v.Removed = landed != "", undone != "", removed != ""
	if hasRuntime {
		rt.Heartbeat = parseTS(hb)
		v.Runtime = &rt
	}
	return v, nil
}

// CountFinishedTasks is how many runs are over (done, failed, cancelled).
func (s *Store) CountFinishedTasks(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE status IN ('`+strings.Join(FinishedTaskStatuses, `','`)+`')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: counting finished tasks: %w", err)
	}
	return n, nil
}

// Usage is the tokens and cost of a run's model responses with one model.
type Usage struct {
	Run              string  `json:"run"`
	Mode             string  `json:"mode"` // the run's work mode
	Model            string  `json:"model"`
	Responses        int     `json:"responses"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	Cost             float64 `json:"cost"` // US dollars
}

// UsageByRunModel sums the model_response events by run and model (of run
// id alone when it is set; a prefix is not resolved here).
func (s *Store) UsageByRunModel(ctx context.Context, run string) ([]Usage, error) {
	// Written for both backends: json_extract is SQLite's and a function
	// of the same name in the Postgres schema (which returns text, hence
	// the casts); runs are grouped by their key, so that Postgres lets
	// the query read the run's other columns.
	q := `SELECT r.id, COALESCE(json_extract(r.axes, '$.mode'), ''), COALESCE(json_extract(e.data, '$.model'), ''),
		COUNT(*) - COUNT(json_extract(e.data, '$.error')),
		COALESCE(SUM(CAST(json_extract(e.data, '$.usage.input_tokens') AS BIGINT)), 0),
		COALESCE(SUM(CAST(json_extract(e.data, '$.usage.output_tokens') AS BIGINT)), 0),
		COALESCE(SUM(CAST(json_extract(e.data, '$.usage.cache_read_tokens') AS BIGINT)), 0),
		COALESCE(SUM(CAST(json_extract(e.data, '$.usage.cache_write_tokens') AS BIGINT)), 0),
		COALESCE(SUM(CAST(json_extract(e.data, '$.cost') AS DOUBLE PRECISION)), 0)
		FROM events e JOIN runs r ON r.id = e.run_id
		WHERE e.type = 'model_response'`
	var args []any
	if run != "" {
		q += ` AND e.run_id = ?`
		args = append(args, run)
	}
	q += ` GROUP BY r.id, 3 ORDER BY MIN(r.created_at), r.id, 3`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: summing usage: %w", err)
	}
	defer rows.Close()
	var out []Usage
	for rows.Next() {
		var u Usage
		if err := rows.Scan(&u.Run, &u.Mode, &u.Model, &u.Responses, &u.InputTokens, &u.OutputTokens,
			&u.CacheReadTokens, &u.CacheWriteTokens, &u.Cost); err != nil {
			return nil, fmt.Errorf("store: summing usage: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
