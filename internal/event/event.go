// Package event holds the one typed stream of everything that happens in a
// run: the event types, the bus that numbers and fans them out, and the
// JSONL encoding. The store, the headless output and every other surface
// read this stream; none keeps private state.
package event

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
)

// Type names an event.
type Type string

const (
	RunStarted    Type = "run_started"
	RunResumed    Type = "run_resumed"
	RunFinished   Type = "run_finished"
	PhaseChanged  Type = "phase_changed"
	AxisChanged   Type = "axis_changed"
	PlanProposed  Type = "plan_proposed"
	ModelRequest  Type = "model_request"
	ModelResponse Type = "model_response"
	ModelRetry    Type = "model_retry"
	AssistantText Type = "assistant_text"
	ToolCall      Type = "tool_call"
	ToolResult    Type = "tool_result"
	Refusal       Type = "refusal"
	VerifyResult  Type = "verify_result"
	Baseline      Type = "baseline"
	Warning       Type = "warning"
	Compaction    Type = "compaction"
	Commit        Type = "commit"
	// Ledger: ultra appended an entry to the run's goal ledger.
	Ledger Type = "ledger"
	// Criterion: ultra ran a success criterion's check.
	Criterion Type = "criterion"
	// Review: the final review's verdict.
	Review Type = "review"
	// Approval: a tool call waits for a person (manual control), or a
	// person allowed or denied one.
	Approval Type = "approval"
	// Control: a request from another process (steer, next, pause, stop,
	// cancel) was taken, applied, deferred to its scope or refused.
	Control Type = "control"
	// Answer: the result of a chat (its answer) or a research (its report).
	Answer Type = "answer"
	// Cleanup: the final gate's cleanup pass started, or ended (kept
	// and committed, reverted, or unchanged).
	Cleanup Type = "cleanup"
	// MCP: the run's MCP servers answered (or did not), before its first
	// request: each one's state and its number of tools.
	MCP Type = "mcp"
	// Hooks: a person's hooks ran at an event of the run: how many, and
	// what they decided.
	Hooks Type = "hooks"
	// Worker: a parallel run gave a goal to a worker, took its goal's
	// commit onto the run's branch, sent it back, or the worker ended.
	Worker Type = "worker"
)

// Event is one thing that happened. Data is the typed payload of Type.
type Event struct {
	Seq   int64     `json:"seq"`
	Time  time.Time `json:"time"`
	Run   string    `json:"run"`
	Type  Type      `json:"type"`
	Phase string    `json:"phase,omitempty"`
	Data  any       `json:"data,omitempty"`
}

// Payloads, one per event type.
type (
	RunStartedData struct {
		Task     string   `json:"task"`
		Repo     string   `json:"repo"`
		Workdir  string   `json:"workdir"`
		Branch   string   `json:"branch,omitempty"`   // the run's branch, ultra/<run-id>
		Base     string   `json:"base,omitempty"`     // the branch it was cut from
		Start    string   `json:"start,omitempty"`    // the run's first commit
		Snapshot []string `json:"snapshot,omitempty"` // uncommitted files taken into it
		// Untracked and Modified are the checkout's uncommitted files the
		// run does not see: new files, and changed or staged tracked ones.
		Untracked []string `json:"untracked,omitempty"`
		Modified  []string `json:"modified,omitempty"`
		// BriefFile is the untracked file of the checkout the brief was
		// read from (left out of Untracked), BriefRecord where the run
		// keeps its text.
		BriefFile   string    `json:"brief_file,omitempty"`
		BriefRecord string    `json:"brief_record,omitempty"`
		Axes        axes.Axes `json:"axes"`
		Provider    string    `json:"provider"`
		Model       string    `json:"model"`
		Budgets     any       `json:"budgets"`
		// Contained says whether the model's commands and the tests run in
		// a sandbox; Sandbox names it, or why there is none.
		Contained bool   `json:"contained"`
		Sandbox   string `json:"sandbox"`
	}
	// LedgerData is one ledger entry, in short.
	LedgerData struct {
		Seq       int    `json:"seq"`
		Kind      string `json:"kind"`
		Goal      string `json:"goal,omitempty"`
		Criterion string `json:"criterion,omitempty"`
		Text      string `json:"text,omitempty"`
	}
	// CriterionData is the result of a criterion's check, as ultra ran it.
	CriterionData struct {
		Goal      string   `json:"goal"`
		Criterion string   `json:"criterion"`
		Surface   string   `json:"surface,omitempty"` // cli, data, http, terminal, web, desktop
		Channel   string   `json:"channel"`
		Status    string   `json:"status"` // pass, fail, blocked
		Summary   string   `json:"summary"`
		Reason    string   `json:"reason,omitempty"`
		Receipt   string   `json:"receipt,omitempty"`
		Evidence  []string `json:"evidence,omitempty"` // paths of the artifacts
		Duration  string   `json:"duration,omitempty"`
		// Base is set for a run on the code the run started from: what
		// the result there had to be (fail_to_pass, pass_to_pass).
		Base string `json:"base,omitempty"`
	}
	// ReviewData is a review's verdict: VerdictApprove or VerdictBlockers,
	// with its architecture status (ReviewClean says whether both let the
	// change land).
	ReviewData struct {
		Round    int      `json:"round"`
		Verdict  string   `json:"verdict"`
		Blockers []string `json:"blockers,omitempty"`
		// Architecture is CLEAR, CONCERNS or BLOCKED; "" when the review
		// gave none (a review-mode run may omit it).
		Architecture        string   `json:"architecture,omitempty"`
		ArchitectureReasons []string `json:"architecture_reasons,omitempty"`
	}
	// CleanupData is a step of the final gate's cleanup pass.
	CleanupData struct {
		// Result: "started", "committed", "reverted" or "unchanged".
		Result string   `json:"result"`
		Files  []string `json:"files,omitempty"`  // the files the pass may edit (started) or changed
		Commit string   `json:"commit,omitempty"` // the cleanup's commit, or the commit put back
		Reason string   `json:"reason,omitempty"` // what failed (reverted)
	}
	// HooksData is one event's hooks as they ran: Decision is block,
	// deny, ask, allow or "" (nothing decided); Failed counts those that
	// did not decide (could not run, failed, timed out).
	HooksData struct {
		Event    string `json:"event"`
		Target   string `json:"target,omitempty"` // the tool, for the tool events
		Ran      int    `json:"ran"`
		Decision string `json:"decision,omitempty"`
		Failed   int    `json:"failed,omitempty"`
		Millis   int64  `json:"ms"`
	}
	// MCPData is the run's MCP servers as they started.
	MCPData struct {
		Servers []MCPServerData `json:"servers"`
	}
	MCPServerData struct {
		Name  string `json:"name"`
		State string `json:"state"` // connected, failed, off
		Error string `json:"error,omitempty"`
		Tools int    `json:"tools"`
	}
	// CommitData is ultra's commit of a tree its gate let through.
	CommitData struct {
		Commit string `json:"commit"`
		Branch string `json:"branch"`
		Tree   string `json:"tree"`
		Gate   int    `json:"gate"`
		Status string `json:"status"`
	}
	// WorkerData is one step of a parallel run's worker: started,
	// resumed, landed (its goal's commit merged into the run's branch as
	// Commit), sent_back (with Reason, what failed), or ended (with its
	// Status and Reason).
	WorkerData struct {
		Worker string `json:"worker"`
		Goal   string `json:"goal"`
		Event  string `json:"event"`
		Branch string `json:"branch,omitempty"`
		Commit string `json:"commit,omitempty"`
		Status string `json:"status,omitempty"`
		Reason string `json:"reason,omitempty"`
	}
	RunResumedData struct {
		Guidance string `json:"guidance,omitempty"`
		From     string `json:"from"`
		// By is who went on with the run: "person", or "fleet" for a
		// fleet's worker taking over a run whose machine stopped.
		By string `json:"by,omitempty"`
	}
	RunFinishedData struct {
		Status   string  `json:"status"`
		Reason   string  `json:"reason"`
		ExitCode int     `json:"exit_code"`
		Turns    int     `json:"turns"`
		Usage    Usage   `json:"usage"`
		Wall     string  `json:"wall"`
		Cost     float64 `json:"cost"` // US dollars, from the pricing table
	}
	PhaseChangedData struct {
		From   string `json:"from"`
		To     string `json:"to"`
		By     string `json:"by"`
		Reason string `json:"reason"`
	}
	AxisChangedData struct {
		Axis   string    `json:"axis"`
		From   string    `json:"from"`
		To     string    `json:"to"`
		Reason string    `json:"reason"`
		Scope  string    `json:"scope,omitempty"`
		By     string    `json:"by,omitempty"`
		Axes   axes.Axes `json:"axes"` // all five after the change
	}
	// ApprovalData: State is "waiting", "allowed", "allowed_for_run" (the
	// call's tool for the rest of the run), "allowed_read_only_for_run"
	// (every read-only call for the rest of the run) or "denied"; every
	// such decision logs the five axes. ReadOnly says a waiting call's
	// tool only reads: an answer allowing read-only calls covers its kind.
	ApprovalData struct {
		CallID   string          `json:"call_id"`
		Tool     string          `json:"tool"`
		Args     json.RawMessage `json:"args,omitempty"`
		State    string          `json:"state"`
		ReadOnly bool            `json:"read_only,omitempty"`
		Reason   string          `json:"reason,omitempty"`
		Axes     axes.Axes       `json:"axes"`
	}
	ControlData struct {
		Request int64  `json:"request"`
		Kind    string `json:"kind"`
		Outcome string `json:"outcome"` // applied, pending, refused: why
		Scope   string `json:"scope,omitempty"`
		Who     string `json:"who,omitempty"`
	}
	AnswerData struct {
		Text string `json:"text"`
		Path string `json:"path,omitempty"` // where ultra wrote it (a research report)
	}
	PlanProposedData struct {
		Plan     string `json:"plan"`
		Accepted bool   `json:"accepted"`
		By       string `json:"by"`
	}
	ModelRequestData struct {
		Turn     int      `json:"turn"`
		Model    string   `json:"model"`
		Tools    []string `json:"tools"`
		Messages int      `json:"messages"`
	}
	ModelResponseData struct {
		Turn       int         `json:"turn"`
		Model      string      `json:"model"`
		Usage      Usage       `json:"usage"`
		StopReason string      `json:"stop_reason,omitempty"`
		Cost       float64     `json:"cost,omitempty"` // US dollars
		ToolCalls  int         `json:"tool_calls"`
		Duration   string      `json:"duration"`
		Error      *ModelError `json:"error,omitempty"`
	}
	ModelRetryData struct {
		Turn    int    `json:"turn"`
		Attempt int    `json:"attempt"` // 1 for the first retry
		Error   string `json:"error"`
		Wait    string `json:"wait"`
	}
	AssistantTextData struct {
		Text string `json:"text"`
		// Thinking is the model's readable reasoning before the text,
		// when the provider returned any.
		Thinking string `json:"thinking,omitempty"`
	}
	ToolCallData struct {
		CallID string          `json:"call_id"`
		Tool   string          `json:"tool"`
		Args   json.RawMessage `json:"args"`
	}
	ToolResultData struct {
		CallID    string         `json:"call_id"`
		Tool      string         `json:"tool"`
		IsError   bool           `json:"is_error"`
		Malformed bool           `json:"malformed,omitempty"`
		Output    string         `json:"output"` // bounded
		Duration  string         `json:"duration"`
		Details   map[string]any `json:"details,omitempty"`
	}
	RefusalData struct {
		CallID  string    `json:"call_id,omitempty"`
		Tool    string    `json:"tool"`
		Layer   string    `json:"layer"` // "phase-guard", "planning-read-only", "transition", "state-files", "policy"
		Reason  string    `json:"reason"`
		Allowed []string  `json:"allowed,omitempty"`
		Axes    axes.Axes `json:"axes"`
	}
	VerifyResultData struct {
		Status  string   `json:"status"`
		Reason  string   `json:"reason"`
		Passed  int      `json:"passed"`
		Failed  int      `json:"failed"`
		Errors  int      `json:"errors,omitempty"` // tests that could not run, modules that could not be collected
		Skipped int      `json:"skipped"`
		Failing []string `json:"failing,omitempty"`
		// FailingWhy is, for each of Failing, where and why it failed in
		// one line ("calc_test.go:12: want 5, got -1"), "" when the runner
		// said neither.
		FailingWhy []string `json:"failing_why,omitempty"`
		Commands   []string `json:"commands,omitempty"`
		Logs       []string `json:"logs,omitempty"`
		Gate       int      `json:"gate,omitempty"`      // decision number
		GateFile   string   `json:"gate_file,omitempty"` // the decision file
		Tree       string   `json:"tree,omitempty"`      // the verified tree
		Cached     bool     `json:"cached,omitempty"`    // a PASS of the same tree was reused
		Reused     string   `json:"reused,omitempty"`    // the gate cache's measurement of the same tree was judged
		// ReusedReasons are, for a decision that reuses an earlier one's
		// verdict (Cached), that one's reasons; Reason is this decision's
		// own sentence.
		ReusedReasons []string `json:"reused_reasons,omitempty"`
		Focused       bool     `json:"focused,omitempty"` // only previously failing tests ran
		Flaky         []string `json:"flaky,omitempty"`
		Duration      string   `json:"duration"`
	}
	BaselineData struct {
		Tree      string   `json:"tree"`
		Evaluated bool     `json:"evaluated"`
		Reason    string   `json:"reason,omitempty"`
		Executed  int      `json:"executed"`
		Failed    int      `json:"failed"`
		Errors    int      `json:"errors,omitempty"`
		Skipped   int      `json:"skipped"`
		Sources   []string `json:"sources,omitempty"`
		Duration  string   `json:"duration"`
		// Reused: the suite did not run, the gate cache had this tree.
		Reused string `json:"reused,omitempty"`
	}
	CompactionData struct {
		Kind   string `json:"kind"`   // "prune" or "summary"
		Before int    `json:"before"` // estimated tokens of the request
		After  int    `json:"after"`
		Window int    `json:"window"`
		Detail string `json:"detail"`
	}
	WarningData struct {
		Message string `json:"message"`
	}
)

// Usage counts tokens, as events report them.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// ModelError is a failed model request, as events report it.
type ModelError struct {
	Provider   string `json:"provider"`
	StatusCode int    `json:"status_code,omitempty"`
	Message    string `json:"message"`
	Retryable  bool   `json:"retryable"`
}

// Error is a one-line description.
func (e *ModelError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.StatusCode, e.Message)
	}
	return e.Provider + ": " + e.Message
}

// Sink receives every event of a bus, in order.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }

// Bus numbers events and delivers them to its sinks synchronously, in
// order. It is safe for concurrent use.
type Bus struct {
	mu    sync.Mutex
	run   string
	seq   int64
	now   func() time.Time
	sinks []Sink
}

// NewBus returns a bus for run whose numbering continues after lastSeq.
func NewBus(run string, lastSeq int64, now func() time.Time, sinks ...Sink) *Bus {
	if now == nil {
		now = time.Now
	}
	return &Bus{run: run, seq: lastSeq, now: now, sinks: sinks}
}

// Add attaches another sink.
func (b *Bus) Add(s Sink) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sinks = append(b.sinks, s)
}

// Emit records one event of type t in phase with payload data.
func (b *Bus) Emit(t Type, phase string, data any) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	e := Event{Seq: b.seq, Time: b.now().UTC(), Run: b.run, Type: t, Phase: phase, Data: data}
	for _, s := range b.sinks {
		s.Emit(e)
	}
	return e
}

// JSONL writes each event as one JSON object per line.
type JSONL struct {
	mu sync.Mutex
	w  io.Writer
}

// NewJSONL returns a sink writing to w.
func NewJSONL(w io.Writer) *JSONL { return &JSONL{w: w} }

// Emit writes e and a newline.
func (j *JSONL) Emit(e Event) {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(Event{Seq: e.Seq, Time: e.Time, Run: e.Run, Type: Warning,
			Data: WarningData{Message: "unencodable event " + string(e.Type) + ": " + err.Error()}})
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.w.Write(append(EscapeC1(b), '\n'))
}

// EscapeC1 writes the C1 control characters (U+0080–U+009F) of encoded
// JSON as \u escapes, as encoding/json already does for C0: some
// terminals act on them, and JSON lines end up on terminals. They can
// only stand inside strings, so the JSON means the same.
func EscapeC1(b []byte) []byte {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == 0xC2 && b[i+1] >= 0x80 && b[i+1] <= 0x9F {
			var out []byte
			out = append(out, b[:i]...)
			for ; i < len(b); i++ {
				if i+1 < len(b) && b[i] == 0xC2 && b[i+1] >= 0x80 && b[i+1] <= 0x9F {
					out = fmt.Appendf(out, "\\u%04x", b[i+1])
					i++
					continue
				}
				out = append(out, b[i])
			}
			return out
		}
	}
	return b
}

// Truncate bounds s to n bytes for an event, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "… [truncated]"
}

// Live is a passing state of a run: what it is doing now and the text
// streaming in from the model. It is not an event: it is never numbered,
// stored or written as JSONL (a surface that attaches later reads the
// activity and the partial answer from the task's runtime in the store).
type Live struct {
	Run string
	// Activity is what the run does now ("waiting for the model",
	// "running go test ./..."), set with Since when it changes; "" when
	// the run does nothing a person waits on.
	Activity string
	Since    time.Time
	// Text is a fragment of the answer streaming in; Thinking marks a
	// fragment of the model's thinking.
	Text     string
	Thinking bool
}

// LiveSink is a sink that also shows the passing state of a run.
type LiveSink interface {
	Live(Live)
}

// Live delivers l to the sinks that show passing state, in order.
func (b *Bus) Live(l Live) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l.Run = b.run
	if l.Since.IsZero() && l.Activity != "" {
		l.Since = b.now()
	}
	for _, s := range b.sinks {
		if ls, ok := s.(LiveSink); ok {
			ls.Live(l)
		}
	}
}
