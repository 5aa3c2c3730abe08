// Package headless renders a run's event stream as a readable log for a
// terminal or a CI job: one line per event, prefixed with the phase badge.
// On a terminal (EnableLive) the log is also live: the model's answer
// appears as it streams in, and a spinner line under the log says what
// the run is doing, for how long, and what it has spent.
package headless

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Log is an event sink writing a human log. It is also an
// event.LiveSink: with EnableLive it shows the run's passing state.
type Log struct {
	mu      sync.Mutex
	w       io.Writer
	color   bool
	Verbose bool // also show model requests, full assistant text and thinking
	// Quiet shows only warnings, errors, what waits for a person and the
	// run's end.
	Quiet bool
	// heldError is a model error's line, written with the next event: a
	// request cut short because the run was interrupted is not a model
	// error, and the run's end says it once.
	heldError string
	phase     string    // the last event's phase, for streamed lines
	live      *progress // nil unless EnableLive
}

// palette are the only escape sequences the log writes itself.
var palette = []string{reset, bold, dim, red, green, yellow, blue, cyan}

// New returns a log writing to w, with ANSI colours when color is set.
func New(w io.Writer, color bool) *Log { return &Log{w: w, color: color} }

const (
	reset  = "\x1b[0m"
	bold   = "\x1b[1m"
	dim    = "\x1b[2m"
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	blue   = "\x1b[34m"
	cyan   = "\x1b[36m"
)

var phaseColor = map[string]string{
	"planning": blue, "building": cyan, "verifying": yellow, "iterating": yellow,
	"complete": green, "escalated": red, "cancelled": red,
}

func (l *Log) paint(c, s string) string {
	if !l.color || c == "" {
		return s
	}
	return c + s + reset
}

func (l *Log) badge(p string) string {
	return l.paint(phaseColor[p], l.plainBadge(p))
}

// plainBadge is the phase badge without colour.
func (l *Log) plainBadge(p string) string {
	if p == "" {
		p = "ultra"
	}
	return fmt.Sprintf("[%-9s]", p)
}

// Emit writes one event.
func (l *Log) Emit(e event.Event) {
	l.mu.Lock()
	var b strings.Builder
	if e.Phase != "" {
		l.phase = e.Phase
	}
	if l.live != nil {
		l.liveEvent(&b, &e)
	}
	line := l.clean(l.format(e))
	var lines []string
	if held := l.heldError; held != "" {
		l.heldError = ""
		if !interrupted(e) {
			lines = append(lines, held)
		}
	}
	if d, ok := e.Data.(event.ModelResponseData); ok && d.Error != nil {
		l.heldError, line = line, ""
	}
	if line != "" && (!l.Quiet || quietShows(e)) {
		lines = append(lines, line)
	}
	var s *spinner
	if l.live == nil {
		for _, line := range lines {
			b.WriteString(line + "\n")
		}
	} else {
		// The run's end erases the live part for good before its lines.
		if _, end := e.Data.(event.RunFinishedData); end {
			s = l.finishLive(&b)
		}
		l.printLive(&b, lines)
	}
	l.flush(&b)
	l.mu.Unlock()
	if s != nil {
		<-s.done
	}
}

// clean keeps only the log's own escape sequences in line.
func (l *Log) clean(line string) string {
	if l.color {
		return event.PrintableKeeping(line, palette)
	}
	return event.Printable(line)
}

// quietShows reports whether --quiet shows e: warnings, errors, what a
// person must act on, and the run's end.
func quietShows(e event.Event) bool {
	switch d := e.Data.(type) {
	case event.WarningData, event.ModelRetryData, event.RunFinishedData:
		return true
	case event.ModelResponseData:
		return d.Error != nil
	case event.ApprovalData:
		return d.State == "waiting"
	case event.PlanProposedData:
		return !d.Accepted
	case event.ControlData:
		return strings.HasPrefix(d.Outcome, "waiting") || strings.HasPrefix(d.Outcome, "refused")
	}
	return false
}

// interrupted reports the end of a run a person interrupted.
func interrupted(e event.Event) bool {
	d, ok := e.Data.(event.RunFinishedData)
	return ok && d.Status == statusInterrupted
}

// statusInterrupted is the status of a run stopped by a signal.
const statusInterrupted = "interrupted"

func (l *Log) format(e event.Event) string {
	b := l.badge(e.Phase)
	switch d := e.Data.(type) {
	case event.RunStartedData:
		s := fmt.Sprintf("%s %s %s\n%s   %s · %s/%s · %s", b, l.paint(bold, "run"), e.Run, b, d.Axes, d.Provider, d.Model, event.OneLine(d.Task, 120))
		if d.Branch != "" {
			s += fmt.Sprintf("\n%s   branch %s from %s · worktree %s", b, d.Branch, d.Base, d.Workdir)
		}
		if len(d.Snapshot) > 0 {
			s += fmt.Sprintf("\n%s   started from %d uncommitted file(s) of your checkout", b, len(d.Snapshot))
		}
		if len(d.Untracked) > 0 {
			s += fmt.Sprintf("\n%s   %s", b, workspace.UntrackedNote(d.Untracked))
		}
		if note := workspace.BriefNote(d.BriefFile, d.BriefRecord); note != "" {
			s += fmt.Sprintf("\n%s   %s", b, note)
		}
		if d.Sandbox != "" {
			if d.Contained {
				s += fmt.Sprintf("\n%s   sandbox %s", b, d.Sandbox)
			} else {
				s += fmt.Sprintf("\n%s   %s: %s", b, l.paint(red, "UNCONTAINED"), d.Sandbox)
			}
		}
		return s
	case event.RunResumedData:
		s := fmt.Sprintf("%s %s %s (was %s)", b, l.paint(bold, "resumed"), e.Run, d.From)
		if d.Guidance != "" {
			s += ": " + event.OneLine(d.Guidance, 120)
		}
		return s
	case event.PhaseChangedData:
		return fmt.Sprintf("%s %s %s → %s (%s): %s", b, l.paint(bold, "phase"), d.From, d.To, d.By, event.OneLine(d.Reason, 160))
	case event.AxisChangedData:
		s := fmt.Sprintf("%s %s %s: %s → %s", b, l.paint(bold, "axis"), d.Axis, d.From, d.To)
		if d.By != "" {
			s += " by " + d.By
		}
		if d.Scope != "" {
			s += " [" + d.Scope + "]"
		}
		return s + ": " + event.OneLine(d.Reason, 160) + " · now " + d.Axes.String()
	case event.ApprovalData:
		switch d.State {
		case "waiting":
			if plan, err := goal.ProposalText(d.Args); d.Tool == "goals" && err == nil {
				return fmt.Sprintf("%s %s call %s (goals) proposes this plan; accepting the call accepts it: ultra approve %s --call %s (or --deny REASON)\n%s", b,
					l.paint(yellow, "approval"), d.CallID, e.Run, d.CallID, indent(plan))
			}
			return fmt.Sprintf("%s %s call %s (%s %s) waits for a person: ultra approve %s --call %s (--for-run: its tool for the rest of the run; --read-only: every read-only call; or --deny REASON)", b,
				l.paint(yellow, "approval"), d.CallID, d.Tool, event.OneLine(string(d.Args), 100), e.Run, d.CallID)
		case "denied":
			return fmt.Sprintf("%s %s call %s (%s) denied: %s", b, l.paint(red, "approval"), d.CallID, d.Tool, event.OneLine(d.Reason, 160))
		}
		return fmt.Sprintf("%s %s call %s (%s) %s", b, l.paint(green, "approval"), d.CallID, d.Tool, strings.ReplaceAll(d.State, "_", " "))
	case event.ControlData:
		what := d.Kind
		if d.Request > 0 {
			what = fmt.Sprintf("%s request #%d", d.Kind, d.Request)
		}
		if d.Scope != "" {
			what += " [" + d.Scope + "]"
		}
		c := dim
		if strings.HasPrefix(d.Outcome, "refused") || strings.HasPrefix(d.Outcome, "waiting") {
			c = yellow
		}
		return fmt.Sprintf("%s %s %s: %s", b, l.paint(c, "control"), what, event.OneLine(d.Outcome, 200))
	case event.AnswerData:
		if d.Path != "" {
			return fmt.Sprintf("%s %s %s", b, l.paint(bold, "report"), d.Path)
		}
		return ""
	case event.PlanProposedData:
		state := "waiting for approval"
		if d.Accepted {
			state = "accepted (" + d.By + ")"
		}
		return fmt.Sprintf("%s %s %s\n%s", b, l.paint(bold, "plan"), state, indent(d.Plan))
	case event.ModelRequestData:
		if !l.Verbose {
			return ""
		}
		return fmt.Sprintf("%s %s turn %d · %s · tools: %s", b, l.paint(dim, "model"), d.Turn, d.Model, strings.Join(d.Tools, ","))
	case event.ModelResponseData:
		if d.Error != nil {
			return fmt.Sprintf("%s %s %s", b, l.paint(red, "model error:"), d.Error.Error())
		}
		if !l.Verbose {
			return ""
		}
		return fmt.Sprintf("%s %s turn %d · %d in / %d out tokens · %s", b, l.paint(dim, "usage"), d.Turn, d.Usage.InputTokens, d.Usage.OutputTokens, d.Duration)
	case event.ModelRetryData:
		return fmt.Sprintf("%s %s %s; retry %d in %s", b, l.paint(yellow, "model error:"), d.Error, d.Attempt, d.Wait)
	case event.AssistantTextData:
		// Either may be empty: an answer of thinking and tool calls only,
		// or text already shown as it streamed in.
		var parts []string
		if l.Verbose && strings.TrimSpace(d.Thinking) != "" {
			parts = append(parts, fmt.Sprintf("%s %s\n%s", b, l.paint(dim, "model thinks:"), l.paint(dim, indent(d.Thinking))))
		}
		if strings.TrimSpace(d.Text) != "" {
			if l.Verbose {
				parts = append(parts, fmt.Sprintf("%s %s\n%s", b, l.paint(dim, "model says:"), indent(d.Text)))
			} else {
				parts = append(parts, fmt.Sprintf("%s %s", b, l.paint(dim, event.OneLine(d.Text, 160))))
			}
		}
		return strings.Join(parts, "\n")
	case event.ToolCallData:
		switch d.Tool {
		case "phase", "verify", "review": // their own events say what happened
			if !l.Verbose {
				return ""
			}
		}
		return fmt.Sprintf("%s %s %s", b, l.paint(bold, d.Tool), argSummary(d.Args))
	case event.ToolResultData:
		if !d.IsError {
			if l.Verbose {
				return fmt.Sprintf("%s   %s", b, l.paint(dim, event.OneLine(d.Output, 160)))
			}
			return ""
		}
		if strings.HasPrefix(d.Output, "Refused") || d.Tool == "verify" {
			return "" // the refusal or verify event says it
		}
		// A refusal that lists its problems (a proposal's) shows each.
		lines := strings.Split(strings.TrimSpace(d.Output), "\n")
		s := fmt.Sprintf("%s   %s %s", b, l.paint(red, "✗"), event.OneLine(lines[0], 200))
		n := 0
		for _, ln := range lines[1:] {
			if !strings.HasPrefix(ln, "- ") {
				continue
			}
			if n++; n > 12 {
				s += fmt.Sprintf("\n%s     …", b)
				break
			}
			s += fmt.Sprintf("\n%s     %s", b, event.OneLine(ln, 400))
		}
		return s
	case event.RefusalData:
		return fmt.Sprintf("%s   %s %s: %s", b, l.paint(red, "refused"), "["+d.Layer+"]", event.OneLine(d.Reason, 200))
	case event.VerifyResultData:
		c := red
		if d.Status == "pass" || gate.Status(d.Status).Advances() { // "pass": a verification outside the gate
			c = green
		}
		errs := ""
		if d.Errors > 0 {
			errs = fmt.Sprintf(", errors %d", d.Errors)
		}
		took := d.Duration
		if d.Reused != "" || d.Cached {
			took = "not run again: gate cache"
		}
		s := fmt.Sprintf("%s %s %s: %s (passed %d, failed %d%s, skipped %d; %s)", b, l.paint(bold, "gate"),
			l.paint(c, d.Status), d.Reason, d.Passed, d.Failed, errs, d.Skipped, took)
		if d.GateFile != "" {
			s += fmt.Sprintf("\n%s   %s", b, l.paint(dim, d.GateFile))
		}
		for i, f := range d.Failing {
			if i == 10 {
				s += fmt.Sprintf("\n%s   … and %d more", b, len(d.Failing)-10)
				break
			}
			s += fmt.Sprintf("\n%s   ✗ %s", b, f)
			if i < len(d.FailingWhy) && d.FailingWhy[i] != "" {
				s += fmt.Sprintf("\n%s     %s", b, l.paint(dim, event.OneLine(d.FailingWhy[i], 160)))
			}
		}
		return s
	case event.BaselineData:
		if !d.Evaluated {
			return fmt.Sprintf("%s %s not evaluated: %s", b, l.paint(bold, "baseline"), d.Reason)
		}
		errs, took := "", d.Duration
		if d.Errors > 0 {
			errs = fmt.Sprintf(", %d errors", d.Errors)
		}
		if d.Reused != "" {
			took = "from the gate cache: " + d.Reused
		}
		return fmt.Sprintf("%s %s %d tests (%d failing%s, %d skipped) with %s; %s", b, l.paint(bold, "baseline"),
			d.Executed, d.Failed, errs, d.Skipped, strings.Join(d.Sources, ", "), took)
	case event.CompactionData:
		return fmt.Sprintf("%s %s %s: %s (%d → %d of %d tokens)", b, l.paint(yellow, "compacted"), d.Kind, d.Detail, d.Before, d.After, d.Window)
	case event.CriterionData:
		if d.Base != "" {
			// On the code the run started from: what it must be there.
			return fmt.Sprintf("%s   %s %s on the base tree: %s [%s] %s (%s)", b, l.paint(dim, "·"), l.paint(bold, d.Criterion), d.Status, d.Channel,
				event.OneLine(d.Summary, 160), strings.ReplaceAll(d.Base, "_", " "))
		}
		c, mark := red, "✗"
		switch d.Status {
		case "pass":
			c, mark = green, "✓"
		case "blocked":
			c, mark = yellow, "!"
		}
		s := fmt.Sprintf("%s   %s %s %s [%s] %s (%s)", b, l.paint(c, mark), l.paint(bold, d.Criterion), d.Status, d.Channel, event.OneLine(d.Summary, 160), d.Duration)
		if d.Status != "pass" && d.Reason != "" {
			s += fmt.Sprintf("\n%s     %s", b, event.OneLine(d.Reason, 200))
		}
		if len(d.Evidence) > 0 && (l.Verbose || d.Status != "pass") {
			s += fmt.Sprintf("\n%s     %s", b, l.paint(dim, "evidence: "+strings.Join(d.Evidence, ", ")))
		}
		return s
	case event.LedgerData:
		switch d.Kind {
		case "plan_accepted", "goal_started", "goal_completed", "goal_failed", "final_gate", "steering_accepted", "steering_rejected", "cancelled":
		default:
			if !l.Verbose {
				return ""
			}
		}
		ids := strings.TrimSpace(d.Goal + " " + d.Criterion)
		return fmt.Sprintf("%s %s %s %s %s", b, l.paint(bold, "ledger"), l.paint(dim, fmt.Sprintf("#%d", d.Seq)), d.Kind, strings.TrimSpace(ids+" "+event.OneLine(d.Text, 160)))
	case event.ReviewData:
		// Success styling only for a clean review: it approves and its
		// architecture is CLEAR.
		c, v := red, event.ReviewVerdict(d.Verdict)
		if event.ReviewClean(d.Verdict, d.Architecture) {
			c = green
		}
		if d.Architecture != "" {
			v += ", architecture " + d.Architecture
		}
		s := fmt.Sprintf("%s %s round %d: %s", b, l.paint(bold, "review"), d.Round, l.paint(c, v))
		for _, bl := range d.Blockers {
			s += fmt.Sprintf("\n%s   ✗ %s", b, event.OneLine(bl, 200))
		}
		for _, r := range d.ArchitectureReasons {
			mark := "✗"
			if d.Architecture == event.ArchitectureClear {
				mark = "·"
			}
			s += fmt.Sprintf("\n%s   %s architecture: %s", b, mark, event.OneLine(r, 200))
		}
		return s
	case event.CommitData:
		return fmt.Sprintf("%s %s %s on %s (gate %d %s)", b, l.paint(green, "committed"), short(d.Commit), d.Branch, d.Gate, d.Status)
	case event.WorkerData:
		switch d.Event {
		case "started", "resumed":
			return fmt.Sprintf("%s %s %s %s %s on %s", b, l.paint(bold, "worker"), d.Worker, d.Event, d.Goal, d.Branch)
		case "landed":
			return fmt.Sprintf("%s %s %s %s as %s", b, l.paint(bold, "worker"), d.Goal, l.paint(green, "landed"), short(d.Commit))
		case "released":
			return fmt.Sprintf("%s %s %s: %s", b, l.paint(bold, "worker"), d.Goal, d.Reason)
		case "sent_back":
			return fmt.Sprintf("%s %s %s %s: %s", b, l.paint(bold, "worker"), d.Goal, l.paint(yellow, "sent back"), event.OneLine(d.Reason, 200))
		}
		return fmt.Sprintf("%s %s %s (%s) %s: %s", b, l.paint(bold, "worker"), d.Worker, d.Goal, d.Status, event.OneLine(d.Reason, 200))
	case event.CleanupData:
		switch d.Result {
		case "started":
			return fmt.Sprintf("%s %s from %s: may edit %s", b, l.paint(bold, "cleanup pass"), short(d.Commit), strings.Join(d.Files, ", "))
		case "committed":
			return fmt.Sprintf("%s %s %s as %s (%s)", b, l.paint(bold, "cleanup"), l.paint(green, "kept"), short(d.Commit), strings.Join(d.Files, ", "))
		case "reverted":
			return fmt.Sprintf("%s %s %s to %s: %s", b, l.paint(bold, "cleanup"), l.paint(red, "reverted"), short(d.Commit), event.OneLine(d.Reason, 200))
		}
		return fmt.Sprintf("%s %s %s", b, l.paint(bold, "cleanup"), d.Result)
	case event.WarningData:
		return fmt.Sprintf("%s %s %s", b, l.paint(yellow, "warning:"), d.Message)
	case event.RunFinishedData:
		// Success is a complete run that exits 0: a review that found
		// blockers completes, and its exit says what it found.
		c, mark := red, "✗"
		switch {
		case d.Status == "complete" && d.ExitCode == 0:
			c, mark = green, "✔"
		case d.Status == "needs_approval" || d.Status == "paused" || d.Status == "stopped":
			// It waits for a person, as asked: no failure.
			c, mark = yellow, "⏸"
		}
		s := fmt.Sprintf("%s %s %s", b, l.paint(c, mark), l.paint(bold, d.Status))
		if d.Reason != "" && d.Reason != d.Status {
			s += " — " + d.Reason
		}
		s += fmt.Sprintf("\n%s   run %s · turns %d · tokens %d in / %d out · $%.4f · %s · exit %d",
			b, e.Run, d.Turns, d.Usage.InputTokens, d.Usage.OutputTokens, d.Cost, d.Wall, d.ExitCode)
		return s
	}
	return ""
}

// argSummary shows a tool call's arguments in one short line.
func argSummary(raw json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return event.OneLine(string(raw), 120)
	}
	if g, ok := m["goals"].([]any); ok {
		return fmt.Sprintf("%d goals proposed", len(g))
	}
	if k, ok := m["kind"].(string); ok {
		return k + " " + event.OneLine(fmt.Sprint(m["goal"], " ", m["criterion"]), 80)
	}
	for _, k := range []string{"command", "file_path", "pattern", "to"} {
		if v, ok := m[k]; ok {
			s := fmt.Sprint(v)
			if k == "to" {
				s = "→ " + s
			}
			return event.OneLine(s, 140)
		}
	}
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return event.OneLine(string(b), 120)
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("… (%d more lines)", len(lines)-20))
	}
	return "    " + strings.Join(lines, "\n    ")
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
