package agent

import (
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/tool"
)

// Run statuses, as stored and shown.
const (
	StatusRunning         = "running"
	StatusComplete        = "complete"
	StatusEscalated       = "escalated"
	StatusBudgetExhausted = "budget_exhausted"
	StatusNeedsApproval   = "needs_approval"
	StatusInterrupted     = "interrupted"
	StatusFailed          = "failed"
	StatusCancelled       = "cancelled"
)

// Exit codes of ultra run and resume.
const (
	ExitComplete    = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitEscalated   = 3
	ExitBudget      = 4
	ExitInterrupted = 130
)

// ExitCode maps a run status to the process exit code.
func ExitCode(status string) int {
	switch status {
	case StatusComplete:
		return ExitComplete
	case StatusEscalated, StatusNeedsApproval, StatusCancelled:
		return ExitEscalated
	case StatusBudgetExhausted:
		return ExitBudget
	case StatusInterrupted:
		return ExitInterrupted
	}
	return ExitError
}

// runState is everything about a run beyond its row's columns, persisted as
// JSON with every step so a killed run resumes where it stood.
type runState struct {
	Phase phase.State `json:"phase"`
	// VerifyCommands are the test commands fixed when the run started
	// (empty: detection); nothing changes them during the run.
	VerifyCommands []string `json:"verify_commands,omitempty"`
	// AllowTestChanges: a person started the run allowing it to change
	// the project's existing tests (--allow-test-changes).
	AllowTestChanges bool `json:"allow_test_changes,omitempty"`
	// DepDirs are the worktree's ignored dependency directories
	// (node_modules, .venv, …) as the run found them when it started,
	// before the model could act: read-only to the model, and the only
	// ones the gate's checkout gets.
	DepDirs []string `json:"dep_dirs,omitempty"`
	// BaseTree is the tree the run started from, whose tests the baseline
	// measures (fixed before the model could act).
	BaseTree string `json:"base_tree,omitempty"`
	// Sandbox is what contained the model's commands when the run last
	// started or resumed ("none: why" when nothing did).
	Sandbox string `json:"sandbox,omitempty"`
	// Instructions are the project's AGENTS.md/CLAUDE.md, read when the
	// run started: the system prompt stays the same for the whole run.
	Instructions string `json:"instructions,omitempty"`
	// Models is the run's routing table (model mode → model).
	Models        map[string]string        `json:"models,omitempty"`
	PendingPlan   string                   `json:"pending_plan,omitempty"`
	EscalatedFrom phase.Phase              `json:"escalated_from,omitempty"`
	Todos         []tool.TodoItem          `json:"todos,omitempty"`
	Files         tool.FileTrackerSnapshot `json:"files,omitempty"`
	Deferred      []string                 `json:"deferred,omitempty"` // concerns of a CONCERNS gate
	IdleAnswers   int                      `json:"idle_answers,omitempty"`
	Malformed     int                      `json:"malformed,omitempty"`
	Refusals      int                      `json:"refusals,omitempty"`
	LastFailure   failureStreak            `json:"last_failure,omitempty"`
	Usage         usageTotals              `json:"usage"`
	// Goals is set for a run that works through goals (every run started
	// since goals exist); runs from before have none.
	Goals *goalState `json:"goals,omitempty"`
}

type usageTotals struct {
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// failureStreak counts identical failing calls in a row.
type failureStreak struct {
	Sig   string `json:"sig,omitempty"`
	Count int    `json:"count,omitempty"`
}
