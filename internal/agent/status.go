package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tool"
)

// Status is everything `ultra status` shows about a run.
type Status struct {
	ID          string             `json:"id"`
	Task        string             `json:"task"`
	Repo        string             `json:"repo"`
	Workdir     string             `json:"workdir"`
	Workspace   store.Workspace    `json:"workspace"`
	Phase       string             `json:"phase"`
	Status      string             `json:"status"`
	Reason      string             `json:"reason,omitempty"`
	Axes        axes.Axes          `json:"axes"`
	Provider    string             `json:"provider"`
	Model       string             `json:"model"`
	Plan        string             `json:"plan,omitempty"`
	PendingPlan string             `json:"pending_plan,omitempty"`
	Retries     Retries            `json:"retries"`
	Budgets     phase.Budgets      `json:"budgets"`
	Used        phase.Counters     `json:"used"`
	CacheRead   int64              `json:"cache_read_tokens"`
	CacheWrite  int64              `json:"cache_write_tokens"`
	Malformed   int                `json:"malformed_calls"`
	Refusals    int                `json:"refusals"`
	LastVerify  *VerifyView        `json:"last_verify,omitempty"`
	Deferred    []string           `json:"deferred,omitempty"`
	Todos       []tool.TodoItem    `json:"todos,omitempty"`
	Transitions []store.Transition `json:"transitions"`
	Events      []EventView        `json:"events"`
	PID         int                `json:"pid,omitempty"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   time.Time          `json:"updated_at"`
}

// Retries is the retry counter of a run.
type Retries struct {
	Used int `json:"used"`
	Max  int `json:"max"`
	Left int `json:"left"`
}

// VerifyView is the latest verification of a run.
type VerifyView = verifyRecord

// EventView is a stored event as status shows it.
type EventView struct {
	Seq   int64           `json:"seq"`
	Time  time.Time       `json:"time"`
	Type  string          `json:"type"`
	Phase string          `json:"phase,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// Describe reads a run's status from the store, with its last n events.
func Describe(ctx context.Context, st *store.Store, row *store.Run, n int) (*Status, error) {
	rs, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	status := ShownStatus(row)
	s := &Status{
		ID: row.ID, Task: row.Task, Repo: row.Repo, Workdir: row.Workdir, Workspace: row.Workspace, Phase: row.Phase, Status: status,
		Reason: row.Reason, Axes: row.Axes, Provider: row.Provider, Model: row.Model,
		Plan: rs.Phase.Plan, PendingPlan: rs.PendingPlan,
		Retries: Retries{Used: rs.Phase.Used.FailedVerifies, Max: rs.Phase.Budgets.MaxRetries, Left: rs.Phase.RetriesLeft()},
		Budgets: rs.Phase.Budgets, Used: rs.Phase.Used,
		CacheRead: rs.Usage.CacheReadTokens, CacheWrite: rs.Usage.CacheWriteTokens,
		Malformed: rs.Malformed, Refusals: rs.Refusals, LastVerify: rs.LastVerify, Deferred: rs.Deferred, Todos: rs.Todos,
		PID: row.PID, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}
	if s.Transitions, err = st.Transitions(ctx, row.ID); err != nil {
		return nil, err
	}
	evs, err := st.Events(ctx, row.ID, n)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		s.Events = append(s.Events, EventView{Seq: e.Seq, Time: e.Time, Type: e.Type, Phase: e.Phase, Data: e.Data})
	}
	return s, nil
}
