package agent

import (
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
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
	// StatusPaused: a person paused the run (ultra pause), or assisted
	// control finished its unit; ultra next or resume goes on.
	StatusPaused = "paused"
	// StatusStopped: a person stopped the run (ultra stop); only a
	// person's resume continues it.
	StatusStopped = "stopped"
)

// Resumable reports whether a run with status stopped short and a
// person's resume goes on with it (not running, not ended for good, not
// queued).
func Resumable(status string) bool {
	switch status {
	case StatusEscalated, StatusBudgetExhausted, StatusNeedsApproval, StatusInterrupted, StatusFailed, StatusPaused, StatusStopped:
		return true
	}
	return false
}

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
	case StatusEscalated, StatusNeedsApproval, StatusCancelled, StatusPaused, StatusStopped:
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
	// RedBaseSaid: the base's failing tests were said (noteRedBase).
	RedBaseSaid bool `json:"red_base_said,omitempty"`
	// VerifyCommands are the test commands fixed when the run started
	// (empty: detection); nothing changes them during the run.
	VerifyCommands []string `json:"verify_commands,omitempty"`
	// AllowTestChanges: a person started the run allowing it to change
	// the project's existing tests (--allow-test-changes).
	AllowTestChanges bool `json:"allow_test_changes,omitempty"`
	// DeclaredCode and DeclaredSupport are the person's declarations of
	// what files are to the tests, fixed when the run started.
	DeclaredCode    []string `json:"declared_code,omitempty"`
	DeclaredSupport []string `json:"declared_support,omitempty"`
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
	// SkillIndex is the skills' list in the system prompt, fixed when
	// the run started; SkillTools what an invoked skill leaves of the
	// tools (nil: all).
	SkillIndex string   `json:"skill_index,omitempty"`
	SkillTools []string `json:"skill_tools,omitempty"`
	// SkillScopes are its entries that allow a tool for some calls only.
	SkillScopes []string `json:"skill_scopes,omitempty"`
	// StopHookBlocks counts the times a person's Stop hook sent the run
	// back to work.
	StopHookBlocks int `json:"stop_hook_blocks,omitempty"`
	// MCPLoaded are the MCP tools mcp_search loaded: offered, when the
	// servers bring too many to offer all, where the phase allows them.
	MCPLoaded []string `json:"mcp_loaded,omitempty"`
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
	// AllowedTools are the tools a person allowed for the rest of the run
	// (manual control: ultra approve --for-run).
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// DeniedTools are the tools a person refused for the rest of the run
	// (ultra approve --deny REASON --for-run): refused by the guard under
	// every run control, with the reason the person gave.
	DeniedTools map[string]string `json:"denied_tools,omitempty"`
	// AllowReadOnly: a person allowed every read-only call for the rest
	// of the run (manual control: ultra approve --read-only).
	AllowReadOnly bool `json:"allow_read_only,omitempty"`
	// AwaitingCall is the call a manual run stopped on to wait for a
	// person (--no-wait); resume settles it.
	AwaitingCall *llm.ToolCall `json:"awaiting_call,omitempty"`
	// Review is what a review-mode run inspects.
	Review *ReviewSpec `json:"review,omitempty"`
	// Checkpoint is the last commit ultra made on the run's branch (a
	// tree the gate passed).
	Checkpoint string `json:"checkpoint,omitempty"`
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

// TaskStatus is a run's status in the tasks surface's vocabulary
// (todo|running|verifying|reviewing|done|blocked|paused|failed|cancelled|retrying).
func TaskStatus(status string, p phase.Phase) string {
	switch status {
	case StatusRunning:
		switch p {
		case phase.Verifying:
			return "verifying"
		case phase.Reviewing:
			return "reviewing"
		case phase.Iterating:
			return "retrying"
		}
		return "running"
	case StatusComplete:
		return "done"
	case StatusCancelled:
		return "cancelled"
	case StatusEscalated, StatusBudgetExhausted, StatusNeedsApproval:
		return "blocked"
	case StatusPaused, StatusStopped, StatusInterrupted:
		return "paused"
	}
	return "failed"
}

// taskRow is the run's row of the tasks surface as its state stands.
func (r *runner) taskRow() store.Task {
	t := r.row.TaskRow
	u, b := r.st.Phase.Used, r.st.Phase.Budgets
	status := r.row.Status
	t.Status = TaskStatus(status, r.st.Phase.Phase)
	t.Retries, t.MaxRetries = u.FailedVerifies, b.MaxRetries
	// What the surfaces show: the limit that ends the run first.
	lim := phase.Binding(r.st.Phase.RetryLimit(), r.cycleLimit())
	t.LimitWhat, t.LimitUsed, t.LimitMax = lim.What, lim.Used, lim.Max
	t.BudgetCost, t.SpentCost = b.MaxCost, u.Cost
	t.InputTokens, t.OutputTokens, t.Turns = u.InputTokens, u.OutputTokens, u.Turns
	t.Waiting = r.waiting()
	t.Goal = ""
	if r.goals != nil && r.goals.file != nil {
		for _, g := range r.goals.file.Goals {
			if g.Status == goal.InProgress {
				t.Goal = g.ID
			}
		}
	}
	if r.st.Checkpoint != "" {
		t.Checkpoint = r.st.Checkpoint
	}
	if w := r.worker(); w != nil {
		t.Parent, t.Claim = w.Run, r.claimText
		if t.Goal == "" {
			t.Goal = w.Goal
		}
	}
	return t
}
