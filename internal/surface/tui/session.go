package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Session is what the screen shows of one run, folded from its events
// (as the store has them) and its row: nothing here is the TUI's own
// knowledge, so any process can build it for any run. It is pure.
type Session struct {
	Run    string
	Axes   axes.Axes
	Phase  string
	Status string // the run's status as every command shows it (agent.StateOf); "running" while it runs
	Goal   string
	Limit  tasks.Limit // the limit that ends the run first (the retries, or the goal's cycles)
	Tokens int64       // input and output, summed
	Cost   float64
	Seq    int64 // the last event folded

	// Waiting is the tool call that waits for a person's approval (manual
	// control), nil when none does.
	Waiting *event.ApprovalData
	// Plan is the plan that waits for acceptance, "" when none does.
	Plan string

	items []*Item
	calls map[string]*Item
}

// Items are the conversation's entries, oldest first.
func (s *Session) Items() []*Item { return s.items }

// Add appends an entry.
func (s *Session) Add(it *Item) { s.items = append(s.items, it) }

// Clear empties the conversation on screen (the run's events stay in the
// store).
func (s *Session) Clear() { s.items, s.calls = nil, nil }

// Fold takes one stored event into the session.
func (s *Session) Fold(e store.StoredEvent) {
	if e.Seq <= s.Seq {
		return
	}
	s.Seq = e.Seq
	if e.Phase != "" {
		s.Phase = e.Phase
	}
	if s.calls == nil {
		s.calls = map[string]*Item{}
	}
	switch event.Type(e.Type) {
	case event.RunStarted:
		var d event.RunStartedData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Axes, s.Status = d.Axes, "running"
			s.Add(&Item{Kind: KindUser, Body: printable(d.Task)})
			where := d.Workdir
			if d.Branch != "" {
				where = d.Branch + " · " + d.Workdir
			}
			s.Add(&Item{Kind: KindPhase, Title: printable(fmt.Sprintf("run %s · %s/%s · %s", s.Run, d.Provider, d.Model, where))})
			for _, note := range []string{workspace.UntrackedNote(d.Untracked), workspace.BriefNote(d.BriefFile, d.BriefRecord)} {
				if note != "" {
					s.Add(&Item{Kind: KindInfo, Title: printable(note)})
				}
			}
		}
	case event.RunResumed:
		var d event.RunResumedData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Status, s.Plan = "running", ""
			t := "resumed (was " + d.From + ")"
			if d.Guidance != "" {
				s.Add(&Item{Kind: KindUser, Body: printable(d.Guidance)})
			}
			s.Add(&Item{Kind: KindPhase, Title: t})
		}
	case event.PhaseChanged:
		var d event.PhaseChangedData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Phase = d.To
			s.Add(&Item{Kind: KindPhase, Title: printable(fmt.Sprintf("phase %s → %s (%s): %s", d.From, d.To, d.By, event.OneLine(d.Reason, 200)))})
		}
	case event.AxisChanged:
		var d event.AxisChangedData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Axes.Mode, s.Axes.Control, s.Axes.Permission, s.Axes.ModelMode = d.Axes.Mode, d.Axes.Control, d.Axes.Permission, d.Axes.ModelMode
			who := ""
			if d.By != "" {
				who = " by " + d.By
			}
			s.Add(&Item{Kind: KindPhase, Title: printable(fmt.Sprintf("%s %s → %s%s: %s", d.Axis, d.From, d.To, who, event.OneLine(d.Reason, 160)))})
		}
	case event.PlanProposed:
		var d event.PlanProposedData
		if json.Unmarshal(e.Data, &d) == nil {
			title := "plan proposed"
			if d.Accepted {
				title = "plan accepted (" + d.By + ")"
				s.Plan = ""
			} else {
				s.Plan = printable(d.Plan)
			}
			s.Add(&Item{Kind: KindInfo, Title: title, Body: printable(d.Plan)})
		}
	case event.AssistantText:
		var d event.AssistantTextData
		if json.Unmarshal(e.Data, &d) == nil {
			if strings.TrimSpace(d.Thinking) != "" {
				s.Add(&Item{Kind: KindThinking, Body: printable(d.Thinking)})
			}
			if strings.TrimSpace(d.Text) != "" {
				s.Add(&Item{Kind: KindAssistant, Body: printable(d.Text)})
			}
		}
	case event.ModelResponse:
		var d event.ModelResponseData
		// Tokens and cost are the run row's (Row): the store sums them.
		if json.Unmarshal(e.Data, &d) == nil {
			if d.Error != nil {
				s.Add(&Item{Kind: KindError, Title: "model error", Body: printable(d.Error.Error())})
			}
		}
	case event.ModelRetry:
		var d event.ModelRetryData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Add(&Item{Kind: KindInfo, Title: printable(fmt.Sprintf("model error: %s; retry %d in %s", event.OneLine(d.Error, 160), d.Attempt, d.Wait))})
		}
	case event.ToolCall:
		var d event.ToolCallData
		if json.Unmarshal(e.Data, &d) == nil {
			if d.Tool == "phase" || d.Tool == "verify" || d.Tool == "review" {
				break // their own events say what happened
			}
			it := &Item{Kind: KindTool, Title: printable(callTitle(d.Tool, d.Args))}
			if diff := editDiff(d.Tool, d.Args); diff != "" {
				it.Body, it.Diff = printable(diff), true
			}
			s.calls[d.CallID] = it
			s.Add(it)
		}
	case event.ToolResult:
		var d event.ToolResultData
		if json.Unmarshal(e.Data, &d) == nil {
			it := s.calls[d.CallID]
			if it == nil {
				break
			}
			it.Done, it.Failed = true, d.IsError
			switch {
			case d.IsError && strings.HasPrefix(d.Output, "Refused"):
				it.Body, it.Diff = "", false // the refusal says why
			case !it.Diff || d.IsError:
				it.Body, it.Diff = printable(d.Output), false
			}
			it.touch()
			if s.Waiting != nil && s.Waiting.CallID == d.CallID {
				s.Waiting = nil
			}
		}
	case event.Refusal:
		var d event.RefusalData
		if json.Unmarshal(e.Data, &d) == nil {
			if it := s.calls[d.CallID]; it != nil {
				it.Done, it.Failed = true, true
				it.touch()
			}
			s.Add(&Item{Kind: KindRefusal, Title: printable("[" + d.Layer + "] " + d.Tool), Body: printable(d.Reason)})
		}
	case event.Approval:
		var d event.ApprovalData
		if json.Unmarshal(e.Data, &d) == nil {
			if d.State == "waiting" {
				w := d
				s.Waiting = &w
				s.Add(&Item{Kind: KindInfo, Title: printable(fmt.Sprintf("call %s (%s) waits for your approval", d.CallID, callTitle(d.Tool, d.Args)))})
				break
			}
			if s.Waiting != nil && s.Waiting.CallID == d.CallID {
				s.Waiting = nil
			}
			line := fmt.Sprintf("call %s (%s) %s", d.CallID, d.Tool, strings.ReplaceAll(d.State, "_", " "))
			if d.Reason != "" {
				line += ": " + event.OneLine(d.Reason, 160)
			}
			s.Add(&Item{Kind: KindInfo, Title: printable(line)})
		}
	case event.VerifyResult:
		var d event.VerifyResultData
		if json.Unmarshal(e.Data, &d) == nil {
			pass := d.Status == "pass" || gate.Status(d.Status).Advances() // "pass": a verification outside the gate
			title := fmt.Sprintf("gate %s: %s · passed %d · failed %d · skipped %d · %s", d.Status, event.OneLine(d.Reason, 120), d.Passed, d.Failed, d.Skipped, d.Duration)
			var b strings.Builder
			for i, f := range d.Failing {
				if i == 12 {
					fmt.Fprintf(&b, "… and %d more\n", len(d.Failing)-12)
					break
				}
				b.WriteString("✗ " + f + "\n")
				if i < len(d.FailingWhy) && d.FailingWhy[i] != "" {
					b.WriteString("    " + event.OneLine(d.FailingWhy[i], 160) + "\n")
				}
			}
			s.Add(&Item{Kind: KindVerify, Title: printable(title), Body: printable(b.String()), Failed: !pass})
		}
	case event.Criterion:
		var d event.CriterionData
		if json.Unmarshal(e.Data, &d) == nil {
			where := ""
			if d.Base != "" {
				where = "on the base tree (" + strings.ReplaceAll(d.Base, "_", " ") + "): "
			}
			s.Add(&Item{Kind: KindInfo, Title: printable(fmt.Sprintf("criterion %s %s%s [%s] %s", d.Criterion, where, d.Status, d.Channel, event.OneLine(d.Summary, 120)))})
		}
	case event.Ledger:
		var d event.LedgerData
		if json.Unmarshal(e.Data, &d) == nil {
			switch d.Kind {
			case "goal_started":
				s.Goal = d.Goal
			case "goal_completed", "goal_failed":
				s.Add(&Item{Kind: KindPhase, Title: printable(strings.ReplaceAll(d.Kind, "_", " ") + " " + d.Goal)})
			}
		}
	case event.Review:
		var d event.ReviewData
		if json.Unmarshal(e.Data, &d) == nil {
			var body string
			for _, b := range d.Blockers {
				body += "✗ " + b + "\n"
			}
			for _, r := range d.ArchitectureReasons {
				mark := "✗"
				if d.Architecture == event.ArchitectureClear {
					mark = "·"
				}
				body += mark + " architecture: " + r + "\n"
			}
			title := fmt.Sprintf("review round %d: %s", d.Round, event.ReviewVerdict(d.Verdict))
			if d.Architecture != "" {
				title += ", architecture " + d.Architecture
			}
			s.Add(&Item{Kind: KindVerify, Title: printable(title), Body: printable(body), Failed: !event.ReviewClean(d.Verdict, d.Architecture)})
		}
	case event.Commit:
		var d event.CommitData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Add(&Item{Kind: KindPhase, Title: printable(fmt.Sprintf("committed %s on %s (gate %d %s)", workspace.Short(d.Commit), d.Branch, d.Gate, d.Status))})
		}
	case event.Cleanup:
		var d event.CleanupData
		if json.Unmarshal(e.Data, &d) == nil {
			title := ""
			switch d.Result {
			case "started":
				title = "cleanup pass: may edit " + strings.Join(d.Files, ", ")
			case "committed":
				title = fmt.Sprintf("cleanup kept: committed %s", workspace.Short(d.Commit))
			case "reverted":
				title = fmt.Sprintf("cleanup reverted to %s: %s", workspace.Short(d.Commit), event.OneLine(d.Reason, 200))
			}
			if title != "" { // unchanged: the phase's line says it
				s.Add(&Item{Kind: KindPhase, Title: printable(title), Failed: d.Result == "reverted"})
			}
		}
	case event.Control:
		var d event.ControlData
		if json.Unmarshal(e.Data, &d) == nil {
			// Approvals, waits and axis changes have their own lines.
			switch {
			case strings.HasPrefix(d.Outcome, "refused"):
				s.Add(&Item{Kind: KindError, Title: printable(fmt.Sprintf("%s request %s", d.Kind, event.OneLine(d.Outcome, 300)))})
			case d.Kind == "approve" || d.Kind == "deny" || d.Kind == "steer" || strings.HasPrefix(d.Outcome, "waiting") || strings.HasPrefix(d.Outcome, "applied"):
			default:
				s.Add(&Item{Kind: KindInfo, Title: printable(fmt.Sprintf("%s request: %s", d.Kind, event.OneLine(d.Outcome, 200)))})
			}
		}
	case event.Answer:
		var d event.AnswerData
		if json.Unmarshal(e.Data, &d) == nil && d.Path != "" {
			// A research report: its text, and where ultra wrote it.
			if strings.TrimSpace(d.Text) != "" {
				s.Add(&Item{Kind: KindAssistant, Body: printable(d.Text)})
			}
			s.Add(&Item{Kind: KindInfo, Title: printable("report written to " + d.Path)})
		}
	case event.Baseline:
		var d event.BaselineData
		if json.Unmarshal(e.Data, &d) == nil {
			line := "baseline not evaluated: " + event.OneLine(d.Reason, 200)
			if d.Evaluated {
				line = fmt.Sprintf("baseline: %d tests before the run (%d failing, %d skipped) with %s", d.Executed, d.Failed, d.Skipped, strings.Join(d.Sources, ", "))
			}
			s.Add(&Item{Kind: KindPhase, Title: printable(line)})
		}
	case event.Warning:
		var d event.WarningData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Add(&Item{Kind: KindInfo, Title: printable("warning: " + d.Message)})
		}
	case event.Compaction:
		var d event.CompactionData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Add(&Item{Kind: KindInfo, Title: printable(fmt.Sprintf("context compacted (%s): %d → %d tokens", d.Kind, d.Before, d.After))})
		}
	case event.RunFinished:
		var d event.RunFinishedData
		if json.Unmarshal(e.Data, &d) == nil {
			s.Status = d.Status
			if d.Status != "needs_approval" {
				s.Waiting = nil // a --no-wait run that ended waiting for a call still waits
			}
			kind := KindInfo
			// A complete run that exits non-zero (a review with blockers)
			// is no success either.
			if d.Status != "complete" && d.Status != "paused" && d.Status != "needs_approval" || d.Status == "complete" && d.ExitCode != 0 {
				kind = KindError
			}
			s.Add(&Item{Kind: kind, Title: printable(fmt.Sprintf("%s: %s", d.Status, event.OneLine(d.Reason, 300))),
				Body: fmt.Sprintf("turns %d · tokens %d in / %d out · $%.4f · %s", d.Turns, d.Usage.InputTokens, d.Usage.OutputTokens, d.Cost, d.Wall)})
			if next := nextSteps(d.Status, s.Axes.Mode); next != "" {
				s.Add(&Item{Kind: KindInfo, Title: next})
			}
		}
	}
}

// Row takes the run's row: its status is the store's; its axes and phase
// only until events say them.
func (s *Session) Row(r *store.Run) {
	if r == nil {
		return
	}
	// The row is saved at the end of a step; the events say at once what
	// changed within it (a phase, a steered axis), so they win.
	s.Run, s.Status = r.ID, r.Status
	if s.Seq == 0 || s.Axes.Mode == "" {
		s.Axes = r.Axes
	}
	if s.Seq == 0 || s.Phase == "" {
		s.Phase = r.Phase
	}
	t := r.TaskRow
	s.Limit = tasks.Limit{What: t.LimitWhat, Used: t.LimitUsed, Max: t.LimitMax}
	if s.Limit.Max == 0 {
		s.Limit = tasks.Limit{What: "retries", Used: t.Retries, Max: t.MaxRetries}
	}
	s.Tokens, s.Cost = t.InputTokens+t.OutputTokens, t.SpentCost
	if t.Goal != "" {
		s.Goal = t.Goal
	}
	if r.Status != "running" && r.Status != "needs_approval" {
		s.Waiting = nil
	}
	// The plan is the events' to clear (accepted, the run moved on): a
	// row read just before the run stopped at its plan still says
	// running, and the plan prompt shows only while the row says
	// needs_approval anyway.
}

// nextSteps says what a person can do with a run that ended.
func nextSteps(status, mode string) string {
	switch {
	case status == "complete" && (mode == "build" || mode == "repair" || mode == "plan"):
		return "next: /diff reads the change, /land merges it into its base, /undo drops it"
	case status == "paused" || status == "stopped":
		return "next: type guidance (or /resume) to go on, /next for one unit, /cancel to end it"
	case status == "escalated" || status == "budget_exhausted" || status == "failed" || status == "interrupted":
		return "next: type guidance for /resume, /status for the details, /cancel to end it"
	}
	return ""
}
