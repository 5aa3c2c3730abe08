package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
)

// defaultWindow is the context window a usage update gives when the run
// named none (ultra's own default).
const defaultWindow = 128_000

// Fold is what an editor is shown of one run, built from its events as
// the store has them: each event becomes zero or more session updates.
// It is pure: the same events give the same updates, so a session/load
// replays a run exactly as it was streamed.
type Fold struct {
	Run     string
	Workdir string    // the run's tree: tool call locations are made absolute against it
	Axes    axes.Axes // as the events last said
	Seq     int64     // the last event folded
	// Replay: the events are history (session/load), so the person's own
	// words (the task, guidance) are sent back as user message chunks.
	Replay bool

	// Plan is the plan that waits for acceptance, "" when none does;
	// PlanSeq the event that proposed it.
	Plan    string
	PlanSeq int64
	// Waiting is the tool call that waits for a person, nil when none.
	Waiting *event.ApprovalData
	// Finished is the run's last run_finished, nil before it ends.
	Finished *event.RunFinishedData
	// PlanChanged: an event changed the goals or criteria since the
	// caller last cleared it (the caller reads ultra goals again).
	PlanChanged bool

	Window int
	Tokens event.Usage // summed over the run's model responses
	Cost   float64
	calls  map[string]string // call id → tool
}

// Updates folds one stored event and returns what the editor is sent.
func (f *Fold) Updates(e store.StoredEvent) []sdk.SessionUpdate {
	if e.Seq <= f.Seq {
		return nil
	}
	f.Seq = e.Seq
	if e.Run == "" {
		e.Run = f.Run
	}
	if f.calls == nil {
		f.calls = map[string]string{}
	}
	var out []sdk.SessionUpdate
	say := func(s string) {
		if strings.TrimSpace(s) != "" {
			out = append(out, sdk.UpdateAgentMessageText(event.Printable(s)))
		}
	}
	note := func(s string) { // what happened, as the agent's thought
		if strings.TrimSpace(s) != "" {
			out = append(out, sdk.UpdateAgentThoughtText(event.Printable(s)+"\n"))
		}
	}
	user := func(s string) {
		if f.Replay && strings.TrimSpace(s) != "" {
			out = append(out, sdk.UpdateUserMessageText(event.Printable(s)))
		}
	}
	switch event.Type(e.Type) {
	case event.RunStarted:
		var d event.RunStartedData
		if json.Unmarshal(e.Data, &d) == nil {
			f.Workdir, f.Axes = d.Workdir, d.Axes
			user(d.Task)
			where := d.Workdir
			if d.Branch != "" {
				where = "branch " + d.Branch + " (" + d.Workdir + ")"
			}
			note(fmt.Sprintf("run %s · %s · %s/%s · %s", e.Run, d.Axes.String(), d.Provider, d.Model, where))
			out = append(out, modeUpdate(d.Axes.Mode))
		}
	case event.RunResumed:
		var d event.RunResumedData
		if json.Unmarshal(e.Data, &d) == nil {
			f.Plan, f.Finished = "", nil
			user(d.Guidance)
			note("resumed (was " + d.From + ")")
		}
	case event.PhaseChanged:
		var d event.PhaseChangedData
		if json.Unmarshal(e.Data, &d) == nil {
			note(fmt.Sprintf("phase %s → %s (%s): %s", d.From, d.To, d.By, event.OneLine(d.Reason, 200)))
		}
	case event.AxisChanged:
		var d event.AxisChangedData
		if json.Unmarshal(e.Data, &d) == nil {
			f.Axes.Mode, f.Axes.Control, f.Axes.Permission, f.Axes.ModelMode = d.Axes.Mode, d.Axes.Control, d.Axes.Permission, d.Axes.ModelMode
			note(fmt.Sprintf("%s %s → %s: %s", d.Axis, d.From, d.To, event.OneLine(d.Reason, 160)))
			if d.Axis == axes.Mode {
				out = append(out, modeUpdate(d.To))
			} else {
				out = append(out, configUpdate(f.Axes))
			}
		}
	case event.PlanProposed:
		var d event.PlanProposedData
		if json.Unmarshal(e.Data, &d) == nil {
			f.PlanChanged = true
			if d.Accepted {
				f.Plan = ""
				note("plan accepted (" + d.By + ")")
			} else {
				f.Plan, f.PlanSeq = d.Plan, e.Seq
				say("**Plan proposed**\n\n" + d.Plan + "\n\n")
			}
		}
	case event.AssistantText:
		var d event.AssistantTextData
		if json.Unmarshal(e.Data, &d) == nil {
			if strings.TrimSpace(d.Thinking) != "" {
				out = append(out, sdk.UpdateAgentThoughtText(event.Printable(d.Thinking)+"\n"))
			}
			say(d.Text)
		}
	case event.Answer:
		var d event.AnswerData
		if json.Unmarshal(e.Data, &d) == nil && d.Path != "" {
			say(d.Text)
			say("\n\nreport written to " + d.Path + "\n")
		}
	case event.ModelResponse:
		var d event.ModelResponseData
		if json.Unmarshal(e.Data, &d) == nil {
			if d.Error != nil {
				say("model error: " + d.Error.Error() + "\n")
			}
			f.Tokens.InputTokens += d.Usage.InputTokens
			f.Tokens.OutputTokens += d.Usage.OutputTokens
			f.Tokens.CacheReadTokens += d.Usage.CacheReadTokens
			f.Tokens.CacheWriteTokens += d.Usage.CacheWriteTokens
			f.Cost += d.Cost
			out = append(out, f.usage(int(d.Usage.InputTokens+d.Usage.OutputTokens)))
		}
	case event.Compaction:
		var d event.CompactionData
		if json.Unmarshal(e.Data, &d) == nil {
			if d.Window > 0 {
				f.Window = d.Window
			}
			note(fmt.Sprintf("context compacted (%s): %d → %d tokens", d.Kind, d.Before, d.After))
		}
	case event.ToolCall:
		var d event.ToolCallData
		if json.Unmarshal(e.Data, &d) == nil {
			f.calls[d.CallID] = d.Tool
			opts := []sdk.ToolCallStartOpt{
				sdk.WithStartKind(kindOf(d.Tool)),
				sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
				sdk.WithStartRawInput(rawInput(d.Args)),
			}
			if l := locations(f.Workdir, d.Tool, d.Args); l != nil {
				opts = append(opts, sdk.WithStartLocations(l))
			}
			if c := diffOf(f.Workdir, d.Tool, d.Args); c != nil {
				opts = append(opts, sdk.WithStartContent(c))
			}
			out = append(out, sdk.StartToolCall(sdk.ToolCallId(d.CallID), callTitle(d.Tool, d.Args), opts...))
		}
	case event.ToolResult:
		var d event.ToolResultData
		if json.Unmarshal(e.Data, &d) == nil {
			if f.Waiting != nil && f.Waiting.CallID == d.CallID {
				f.Waiting = nil
			}
			if _, ok := f.calls[d.CallID]; !ok {
				break
			}
			status := sdk.ToolCallStatusCompleted
			if d.IsError {
				status = sdk.ToolCallStatusFailed
			}
			opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status), sdk.WithUpdateRawOutput(map[string]any{"output": event.Printable(d.Output), "is_error": d.IsError})}
			if _, isDiff := map[string]bool{"edit": true, "write": true}[d.Tool]; !isDiff || d.IsError {
				if c := textContent(event.Printable(d.Output)); c != nil {
					opts = append(opts, sdk.WithUpdateContent(c))
				}
			}
			out = append(out, sdk.UpdateToolCall(sdk.ToolCallId(d.CallID), opts...))
		}
	case event.Refusal:
		var d event.RefusalData
		if json.Unmarshal(e.Data, &d) == nil {
			text := "[" + d.Layer + "] " + d.Reason
			if _, ok := f.calls[d.CallID]; ok && d.CallID != "" {
				out = append(out, sdk.UpdateToolCall(sdk.ToolCallId(d.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
					sdk.WithUpdateContent(textContent(event.Printable("refused "+text)))))
			} else {
				note("refused " + d.Tool + ": " + text)
			}
		}
	case event.Approval:
		var d event.ApprovalData
		if json.Unmarshal(e.Data, &d) == nil {
			if d.State == "waiting" {
				w := d
				f.Waiting = &w
				if _, ok := f.calls[d.CallID]; ok {
					out = append(out, sdk.UpdateToolCall(sdk.ToolCallId(d.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusPending)))
				}
				break
			}
			if f.Waiting != nil && f.Waiting.CallID == d.CallID {
				f.Waiting = nil
			}
			line := fmt.Sprintf("call %s (%s) %s", d.CallID, d.Tool, strings.ReplaceAll(d.State, "_", " "))
			if d.Reason != "" {
				line += ": " + event.OneLine(d.Reason, 160)
			}
			note(line)
			if _, ok := f.calls[d.CallID]; ok && d.State != "denied" {
				out = append(out, sdk.UpdateToolCall(sdk.ToolCallId(d.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
			}
		}
	case event.VerifyResult:
		var d event.VerifyResultData
		if json.Unmarshal(e.Data, &d) == nil {
			var b strings.Builder
			fmt.Fprintf(&b, "gate %s: %s · passed %d · failed %d · skipped %d", d.Status, event.OneLine(d.Reason, 160), d.Passed, d.Failed, d.Skipped)
			for i, name := range d.Failing {
				if i == 12 {
					fmt.Fprintf(&b, "\n… and %d more", len(d.Failing)-12)
					break
				}
				b.WriteString("\n✗ " + name)
			}
			note(b.String())
		}
	case event.Criterion:
		var d event.CriterionData
		if json.Unmarshal(e.Data, &d) == nil {
			f.PlanChanged = true
			where := ""
			if d.Base != "" {
				where = " on the base tree"
			}
			note(fmt.Sprintf("criterion %s%s: %s [%s] %s", d.Criterion, where, d.Status, d.Channel, event.OneLine(d.Summary, 120)))
		}
	case event.Ledger:
		var d event.LedgerData
		if json.Unmarshal(e.Data, &d) == nil {
			f.PlanChanged = true
			if d.Kind == "goal_completed" || d.Kind == "goal_failed" {
				note(strings.ReplaceAll(d.Kind, "_", " ") + " " + d.Goal)
			}
		}
	case event.Review:
		var d event.ReviewData
		if json.Unmarshal(e.Data, &d) == nil {
			var b strings.Builder
			fmt.Fprintf(&b, "review round %d: %s", d.Round, event.ReviewVerdict(d.Verdict))
			for _, x := range d.Blockers {
				b.WriteString("\n✗ " + x)
			}
			note(b.String())
		}
	case event.Commit:
		var d event.CommitData
		if json.Unmarshal(e.Data, &d) == nil {
			short := d.Commit
			if len(short) > 12 {
				short = short[:12]
			}
			note(fmt.Sprintf("committed %s on %s (gate %d %s)", short, d.Branch, d.Gate, d.Status))
		}
	case event.Warning:
		var d event.WarningData
		if json.Unmarshal(e.Data, &d) == nil {
			say("warning: " + d.Message + "\n")
		}
	case event.Control:
		var d event.ControlData
		if json.Unmarshal(e.Data, &d) == nil && strings.HasPrefix(d.Outcome, "refused") {
			say(fmt.Sprintf("%s request %s\n", d.Kind, event.OneLine(d.Outcome, 300)))
		}
	case event.RunFinished:
		var d event.RunFinishedData
		if json.Unmarshal(e.Data, &d) == nil {
			fin := d
			f.Finished = &fin
			if d.Status != "needs_approval" {
				f.Waiting = nil
			}
			say("\n\n" + Ending(d, f.Axes.Mode))
		}
	}
	return out
}

// usage is a usage update: used tokens of the last request, the window,
// and the run's cost so far.
func (f *Fold) usage(used int) sdk.SessionUpdate {
	size := f.Window
	if size <= 0 {
		size = defaultWindow
	}
	u := &sdk.SessionUsageUpdate{Used: used, Size: size}
	if f.Cost > 0 {
		u.Cost = &sdk.Cost{Amount: f.Cost, Currency: "USD"}
	}
	return sdk.SessionUpdate{UsageUpdate: u}
}

// Ending says in words how a run ended and what a person can do next,
// offering the commands (/land) the editor lists.
func Ending(d event.RunFinishedData, mode string) string {
	var b strings.Builder
	switch d.Status {
	case "complete":
		if d.ExitCode != 0 {
			fmt.Fprintf(&b, "**The run ended complete but not clean** (exit %d): %s", d.ExitCode, d.Reason)
		} else {
			fmt.Fprintf(&b, "**The run is complete**: %s", d.Reason)
		}
	case "needs_approval":
		fmt.Fprintf(&b, "**The run waits for a person**: %s", d.Reason)
	case "paused", "stopped":
		fmt.Fprintf(&b, "**The run is %s**: %s", d.Status, d.Reason)
	default:
		fmt.Fprintf(&b, "**The run ended %s**: %s", strings.ReplaceAll(d.Status, "_", " "), d.Reason)
	}
	fmt.Fprintf(&b, "\n\nturns %d · tokens %d in / %d out · $%.4f · %s", d.Turns, d.Usage.InputTokens, d.Usage.OutputTokens, d.Cost, d.Wall)
	if next := nextSteps(d.Status, mode, d.ExitCode); next != "" {
		b.WriteString("\n\n" + next)
	}
	return event.Printable(b.String())
}

// nextSteps names the commands that go on from a run that ended.
func nextSteps(status, mode string, code int) string {
	switch {
	case status == "complete" && code == 0 && (mode == "build" || mode == "repair" || mode == "plan"):
		return "Next: `/diff` shows the change, `/land` merges it into its base, `/undo` drops it."
	case status == "paused" || status == "stopped":
		return "Next: send guidance to resume it, `/next` for one unit, `/cancel` to end it."
	case status == "escalated" || status == "budget_exhausted" || status == "failed" || status == "interrupted":
		return "Next: send guidance to resume it, `/status` for the details, `/cancel` to end it."
	}
	return ""
}

func modeUpdate(mode string) sdk.SessionUpdate {
	return sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(mode)}}
}

func configUpdate(a axes.Axes) sdk.SessionUpdate {
	return sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: ConfigOptions(a)}}
}
