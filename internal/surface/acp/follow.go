package acp

import (
	"context"
	"fmt"
	"github.com/ultra-dev/ultra/internal/surface/procs"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/event"
)

// cancelWait bounds how long a cancelled prompt waits for its run to
// reach a safe point before it ends anyway (the run still pauses there).
const cancelWait = 60 * time.Second

// follow streams run's events to the editor until the run stops working
// (it ended, paused, or waits on a plan the person sends back for
// revision), asking the editor whenever the run waits for a person.
// wait, when set, is the end of the command this prompt started: until
// it ends, a status other than running may be the one from before it.
func (s *session) follow(ctx context.Context, run string, wait func() (string, int)) sdk.StopReason {
	s.mu.Lock()
	f := s.fold
	s.mu.Unlock()
	bg := context.WithoutCancel(ctx)
	exited := make(chan struct{})
	var out string
	var code int
	if wait != nil {
		go func() { out, code = wait(); close(exited) }()
	} else {
		close(exited)
	}
	cancelled := ctx.Done()
	var cancelAt time.Time
	asked := map[string]bool{} // calls and plans asked about
	sawWork := wait == nil
	var carrying chan struct{} // an answer's commands
	failed := &s.carryFailed
	failed.Store(false)
	tick := time.NewTicker(s.a.o.Poll)
	defer tick.Stop()
	for {
		// The run's state first, then its events: every event written
		// before that state is among them, so a run seen waiting or
		// ended has its plan, its waiting call, its end folded.
		done := isClosed(exited) && (carrying == nil || isClosed(carrying))
		row, err := s.proj.Backend.Row(bg, run)
		if err != nil {
			s.say(ctx, "reading the run: "+err.Error())
			return sdk.StopReasonEndTurn
		}
		status := row.Status
		if status == "running" || status == "needs_approval" {
			sawWork = true
		}
		if status == "needs_approval" && !isClosed(exited) {
			done = false
		}
		for {
			evs, err := s.proj.Backend.EventsAfter(bg, run, f.Seq, 500)
			if err != nil {
				s.say(ctx, "reading the run's events: "+err.Error())
				return sdk.StopReasonEndTurn
			}
			for _, e := range evs {
				for _, u := range f.Updates(e) {
					s.a.send(bg, s.rec.ID, u)
				}
			}
			if len(evs) < 500 {
				break
			}
		}
		if f.PlanChanged {
			f.PlanChanged = false
			s.sendPlan(bg, f)
		}
		if cancelAt.IsZero() && (status == "running" || status == "needs_approval") {
			var ask func() (sdk.StopReason, bool, chan struct{})
			if w := f.Waiting; w != nil && !asked["call:"+w.CallID] {
				asked["call:"+w.CallID] = true
				ask = func() (sdk.StopReason, bool, chan struct{}) { return s.askCall(ctx, run, *w) }
			} else if key := fmt.Sprintf("plan:%d", f.PlanSeq); f.Plan != "" && w == nil && status == "needs_approval" && !asked[key] {
				asked[key] = true
				ask = func() (sdk.StopReason, bool, chan struct{}) { return s.askPlan(ctx, run) }
			}
			if ask != nil {
				end, stop, ch := ask()
				if ch != nil {
					carrying = ch
				}
				switch {
				case stop && end == sdk.StopReasonCancelled:
					cancelled, cancelAt = nil, s.pause(bg, run)
				case stop:
					return end
				}
				continue
			}
		}
		switch {
		case !cancelAt.IsZero() && (status != "running" || time.Since(cancelAt) > cancelWait):
			return sdk.StopReasonCancelled
		case failed.Load():
			return sdk.StopReasonEndTurn
		case status == "running" || !(done || sawWork):
			// It works, or the command has not taken it yet.
		case !done && (f.Finished == nil || f.Finished.Status != status || status == "needs_approval"):
			// The command, or an answer's, still drives the run: a status
			// its events have not said is one between two processes (the
			// row of a process that ended before the next claims the run
			// shows interrupted), and a live run that waits on what was
			// asked goes on with the answer.
		default:
			if isClosed(exited) && wait != nil && code != 0 && code != 3 && code != 4 && f.Finished == nil {
				s.say(ctx, fmt.Sprintf("\n\nthe command exited %d:\n\n```\n%s\n```\n", code, procs.FirstLines(out, 40)))
			}
			if f.Finished != nil && f.Finished.Status == "budget_exhausted" {
				return sdk.StopReasonMaxTurnRequests
			}
			return sdk.StopReasonEndTurn
		}
		select {
		case <-cancelled:
			cancelled, cancelAt = nil, s.pause(bg, run)
		case <-tick.C:
		}
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// pause asks run to pause at its next safe point (an editor's cancel).
func (s *session) pause(ctx context.Context, run string) time.Time {
	argv, err := argvOf("pause", run, nil, map[string]string{"reason": "cancelled in the editor"})
	if err == nil {
		if out, code := s.proj.Backend.Exec(ctx, argv); code != 0 {
			s.say(ctx, "\n\ncancel: "+procs.FirstLines(out, 5)+"\n")
		}
	}
	return time.Now()
}

// ask sends a permission request; cancelled says the editor cancelled it
// (or the prompt).
func (s *session) ask(ctx context.Context, tc sdk.ToolCallUpdate, opts []sdk.PermissionOption) (string, bool) {
	if s.a.conn == nil {
		return "", true
	}
	resp, err := s.a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(s.rec.ID), ToolCall: tc, Options: opts})
	if err != nil || resp.Outcome.Selected == nil {
		return "", true
	}
	return string(resp.Outcome.Selected.OptionId), false
}

// askCall asks the editor about a call that waits, and carries out the
// answer; stop says the turn ends (with the reason).
func (s *session) askCall(ctx context.Context, run string, w event.ApprovalData) (sdk.StopReason, bool, chan struct{}) {
	s.mu.Lock()
	refused := slices.Contains(s.rec.Denied, w.Tool)
	s.mu.Unlock()
	if refused && w.Tool != "goals" {
		a, err := AutoDenied(run, w)
		return s.carry(ctx, a, err)
	}
	tc := sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(w.CallID),
		Title:      sdk.Ptr(callTitle(w.Tool, w.Args)),
		Kind:       sdk.Ptr(kindOf(w.Tool)),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		RawInput:   rawInput(w.Args),
		Locations:  locations(s.fold.Workdir, w.Tool, w.Args),
		Content:    diffOf(s.fold.Workdir, w.Tool, w.Args),
	}
	if w.Tool == "goals" {
		tc.Title = sdk.Ptr("Accept the plan: " + callTitle(w.Tool, w.Args))
	}
	opt, cancelled := s.ask(ctx, tc, CallOptions(w))
	if cancelled {
		return sdk.StopReasonCancelled, true, nil
	}
	a, err := CallAnswer(run, w, opt)
	if a.DenyTool != "" {
		s.mu.Lock()
		if !slices.Contains(s.rec.Denied, a.DenyTool) {
			s.rec.Denied = append(s.rec.Denied, a.DenyTool)
		}
		s.mu.Unlock()
		_ = s.save()
	}
	return s.carry(ctx, a, err)
}

// askPlan asks the editor to accept the plan run waits on.
func (s *session) askPlan(ctx context.Context, run string) (sdk.StopReason, bool, chan struct{}) {
	tc := sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(fmt.Sprintf("plan-%s-%d", run, s.fold.PlanSeq)),
		Title:      sdk.Ptr("Accept the plan"),
		Kind:       sdk.Ptr(sdk.ToolKindSwitchMode),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		Content:    textContent(event.Printable(s.fold.Plan)),
	}
	opt, cancelled := s.ask(ctx, tc, PlanOptions())
	if cancelled {
		return sdk.StopReasonCancelled, true, nil
	}
	a, err := PlanAnswer(run, opt)
	return s.carry(ctx, a, err)
}

// carry runs an answer's commands, one after the other, beside the
// follow loop: an approval of a run no process drives goes on with it in
// its own process until the run stops again, its events streamed
// meanwhile. The channel closes when they are done.
func (s *session) carry(ctx context.Context, a Answer, err error) (sdk.StopReason, bool, chan struct{}) {
	done := make(chan struct{})
	if err != nil {
		close(done)
		s.say(ctx, "\n\n"+err.Error()+"\n")
		return sdk.StopReasonEndTurn, true, done
	}
	if a.Say != "" {
		s.a.send(ctx, s.rec.ID, sdk.UpdateAgentThoughtText(a.Say+"\n"))
	}
	bg := context.WithoutCancel(ctx)
	go func() {
		defer close(done)
		for _, argv := range a.Argv {
			out, code := s.proj.Backend.Exec(bg, s.withMCP(argv))
			if code != 0 && code != 3 && code != 4 {
				s.say(bg, fmt.Sprintf("\n\n`ultra %s` exited %d: %s\n", strings.Join(argv, " "), code, procs.FirstLines(out, 8)))
				s.carryFailed.Store(true)
				return
			}
		}
	}()
	if a.EndTurn {
		<-done
	}
	return sdk.StopReasonEndTurn, a.EndTurn, done
}
