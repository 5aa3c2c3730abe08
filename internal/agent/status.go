package agent

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
	"github.com/ultra-dev/ultra/internal/tool"
)

// Status is everything `ultra status` shows about a run.
type Status struct {
	ID        string          `json:"id"`
	Task      string          `json:"task"`
	Repo      string          `json:"repo"`
	Workdir   string          `json:"workdir"`
	Workspace store.Workspace `json:"workspace"`
	// Schedule names the schedule and due time that started the run.
	Schedule    string    `json:"schedule,omitempty"`
	ScheduleDue time.Time `json:"schedule_due,omitzero"`
	Phase       string    `json:"phase"`
	Status      string    `json:"status"`
	Reason      string    `json:"reason,omitempty"`
	// Class is the run's place on the tasks surface and the next step a
	// person would take: the one classification every surface shows.
	Class       tasks.Class `json:"class"`
	Axes        axes.Axes   `json:"axes"`
	Provider    string      `json:"provider"`
	Model       string      `json:"model"`
	Plan        string      `json:"plan,omitempty"`
	PendingPlan string      `json:"pending_plan,omitempty"`
	// ProposedPlan is the plan of a goals call that waits for a person
	// (manual control): allowing the call accepts it.
	ProposedPlan *ProposedPlan `json:"proposed_plan,omitempty"`
	Retries      Retries       `json:"retries"`
	// Limit is the count that ends the run first: the retries, or the
	// current goal's build/verify cycles when fewer of them are left.
	Limit       Retries            `json:"limit"`
	Budgets     phase.Budgets      `json:"budgets"`
	Used        phase.Counters     `json:"used"`
	CacheRead   int64              `json:"cache_read_tokens"`
	CacheWrite  int64              `json:"cache_write_tokens"`
	Malformed   int                `json:"malformed_calls"`
	Refusals    int                `json:"refusals"`
	Sandbox     string             `json:"sandbox,omitempty"`
	LastVerify  *VerifyView        `json:"last_verify,omitempty"`
	Goals       []GoalView         `json:"goals,omitempty"`
	Deferred    []string           `json:"deferred,omitempty"`
	Todos       []tool.TodoItem    `json:"todos,omitempty"`
	Transitions []store.Transition `json:"transitions"`
	// Pending are requests other processes made that the run has not
	// taken yet (steering waiting for its scope, an approval, …).
	Pending []store.Request `json:"pending,omitempty"`
	// Waiting says what the run waits on a person for.
	Waiting   string      `json:"waiting,omitempty"`
	Events    []EventView `json:"events"`
	PID       int         `json:"pid,omitempty"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// GoalView is one goal as status shows it (ultra goals shows more).
type GoalView struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Attempt  int    `json:"attempt"`
	Passed   int    `json:"criteria_passed"`
	Criteria int    `json:"criteria"`
}

// Retries is a counter a run uses up: its retries, or its binding limit
// (What names it).
type Retries struct {
	What string `json:"what,omitempty"`
	Used int    `json:"used"`
	Max  int    `json:"max"`
	Left int    `json:"left"`
}

// VerifyView is a gate decision as status shows it. The decision file is
// the only record of a verification; this is read from it.
type VerifyView struct {
	Status string `json:"status"`
	// Reason is the decision's own reasons; a decision that reuses an
	// earlier one's verdict says so in one sentence, and the earlier
	// one's reasons are Reused.
	Reason   string   `json:"reason"`
	Reused   []string `json:"reused_reasons,omitempty"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	Skipped  int      `json:"skipped"`
	Failing  []string `json:"failing,omitempty"`
	Logs     []string `json:"logs,omitempty"`
	Gate     int      `json:"gate,omitempty"`      // decision number
	GateFile string   `json:"gate_file,omitempty"` // .ultra/state/runs/RUN_ID/gate-N.json
}

// lastVerification is the run's latest gate decision, read from its file.
func lastVerification(runDir string) *VerifyView {
	ds, err := gatefile.Read(runDir)
	if err != nil || len(ds) == 0 {
		return nil
	}
	d := ds[len(ds)-1]
	e := verifyEvent(d, gatefile.Path(runDir, d.N))
	return &VerifyView{Status: e.Status, Reason: e.Reason, Reused: e.ReusedReasons, Passed: e.Passed, Failed: e.Failed, Skipped: e.Skipped,
		Failing: e.Failing, Logs: e.Logs, Gate: e.Gate, GateFile: e.GateFile}
}

// verifyEvent is the verify_result event of decision d, recorded at path.
func verifyEvent(d gate.Decision, path string) event.VerifyResultData {
	e := event.VerifyResultData{Status: string(d.Status), Reason: strings.Join(d.Reasons, "; "), Passed: d.Counts.Passed,
		Failed: d.Counts.Failed, Errors: d.Counts.Errors, Skipped: d.Counts.Skipped, Failing: d.FailingNames(),
		Gate: d.N, GateFile: path, Tree: d.Tree, Cached: d.CachedFrom != 0, Reused: d.Reused, Focused: d.Focused, Flaky: d.Flaky}
	if d.CachedFrom != 0 && len(d.Reasons) > 1 {
		// One sentence: this decision's; the earlier one's reasons apart.
		e.Reason, e.ReusedReasons = d.Reasons[0], d.Reasons[1:]
	}
	for _, f := range d.Failing {
		e.FailingWhy = append(e.FailingWhy, failureWhy(f))
	}
	if strings.Join(e.FailingWhy, "") == "" {
		e.FailingWhy = nil
	}
	for _, c := range d.Commands {
		e.Commands = append(e.Commands, c.Command)
		if c.LogPath != "" {
			e.Logs = append(e.Logs, c.LogPath)
		}
	}
	return e
}

// failureWhy is where and why a test failed, in one line: its file and
// line, and the first line of the runner's message that says something.
func failureWhy(f gate.Failure) string {
	where := f.File
	if where != "" && f.Line > 0 {
		where += ":" + strconv.Itoa(f.Line)
	}
	// The gate keeps the runner's key line (report.KeyLine); pytest marks
	// its explanation lines with "E", the text is after it.
	msg, _ := strings.CutPrefix(strings.TrimSpace(f.Message), "E ")
	msg = strings.TrimSpace(msg)
	switch {
	case where == "" || strings.HasPrefix(strings.TrimPrefix(msg, "./"), where+":"):
		// A compiler's error names its place itself.
		return event.OneLine(msg, 160)
	case msg == "":
		return where
	}
	return event.OneLine(where+": "+msg, 160)
}

// EventView is a stored event as status shows it.
type EventView struct {
	Seq   int64           `json:"seq"`
	Time  time.Time       `json:"time"`
	Type  string          `json:"type"`
	Phase string          `json:"phase,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// Describe reads a run's status from the store and its latest gate
// decision from the run's directory under stateRoot, with its last n
// events.
func Describe(ctx context.Context, st *store.Store, stateRoot string, row *store.Run, n int) (*Status, error) {
	rs, err := decodeState(row)
	if err != nil {
		return nil, err
	}
	status, class := StateOf(ctx, st, row, time.Now())
	reason := row.Reason
	if status != row.Status {
		// Recorded as running, but no process drives it: why, in the
		// words ultra tasks uses.
		reason = strings.TrimPrefix(class.Why, status+": ")
	}
	s := &Status{
		ID: row.ID, Task: row.Task, Repo: row.Repo, Workdir: row.Workdir, Workspace: row.Workspace, Phase: row.Phase, Status: status,
		Reason: reason, Class: class, Axes: row.Axes, Provider: row.Provider, Model: row.Model,
		Plan: rs.Phase.Plan, PendingPlan: rs.PendingPlan,
		Retries: Retries{Used: rs.Phase.Used.FailedVerifies, Max: rs.Phase.Budgets.MaxRetries, Left: rs.Phase.RetriesLeft()},
		Budgets: rs.Phase.Budgets, Used: rs.Phase.Used,
		CacheRead: rs.Usage.CacheReadTokens, CacheWrite: rs.Usage.CacheWriteTokens,
		Malformed: rs.Malformed, Refusals: rs.Refusals, Sandbox: rs.Sandbox, LastVerify: lastVerification(RunDir(stateRoot, row.ID)), Deferred: rs.Deferred, Todos: rs.Todos,
		PID: row.PID, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt, Schedule: row.Schedule, ScheduleDue: row.ScheduleDue,
	}
	lim := rs.Phase.RetryLimit()
	var f *goal.File
	if rs.Goals != nil {
		// Only a run with goals has records: a chat run must not read
		// another run's.
		f, _ = ReadGoals(row.Workdir, rs.Goals.records())
	}
	if f != nil {
		lim = phase.Binding(lim, cyclesOf(f, rs.Goals))
		for _, g := range f.Goals {
			v := GoalView{ID: g.ID, Title: g.Title, Status: string(g.Status), Attempt: g.Attempt}
			for _, c := range g.SuccessCriteria {
				if c.Superseded == "" {
					v.Criteria++
					if c.Status == "pass" {
						v.Passed++
					}
				}
			}
			s.Goals = append(s.Goals, v)
		}
	}
	s.Limit = Retries{What: lim.What, Used: lim.Used, Max: lim.Max, Left: lim.Left()}
	if s.Transitions, err = st.Transitions(ctx, row.ID); err != nil {
		return nil, err
	}
	if s.Pending, err = st.OpenRequests(ctx, row.ID); err != nil {
		return nil, err
	}
	s.Waiting = row.TaskRow.Waiting
	if c := rs.AwaitingCall; c != nil && c.Name == "goals" {
		if plan, err := goal.ProposalText([]byte(c.Arguments)); err == nil {
			s.ProposedPlan = &ProposedPlan{Call: c.ID, Plan: plan}
		}
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

// ProposedPlan is a waiting goals call's plan.
type ProposedPlan struct {
	Call string `json:"call"`
	Plan string `json:"plan"`
}
