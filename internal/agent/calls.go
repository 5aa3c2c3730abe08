package agent

// The calls of one answer: guarded, run (read-only ones side by side) and
// recorded.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/tool"
)

// runCalls guards and runs the calls of one answer, in order; consecutive
// read-only calls run in parallel.
func (r *runner) runCalls(ctx context.Context, calls []llm.ToolCall) (changed bool) {
	results := make([]tool.Result, len(calls))
	took := make([]time.Duration, len(calls))
	for i := 0; i < len(calls); {
		// A batch of consecutive read-only calls that the guard lets through.
		j := i
		for j < len(calls) && r.parallelSafe(calls[j]) {
			j++
		}
		if j-i > 1 {
			r.ctl.begin(fmt.Sprintf("running %d read-only calls at once", j-i))
			var wg sync.WaitGroup
			for k := i; k < j; k++ {
				r.emit(event.ToolCall, event.ToolCallData{CallID: calls[k].ID, Tool: calls[k].Name, Args: rawArgs(calls[k].Arguments)})
				wg.Add(1)
				go func(k int) {
					defer wg.Done()
					start := time.Now()
					results[k] = r.execute(ctx, calls[k])
					took[k] = time.Since(start)
				}(k)
			}
			wg.Wait()
			for k := i; k < j; k++ {
				results[k].Output = r.redact(results[k].Output)
				r.record(calls[k], results[k], took[k])
			}
			i = j
			continue
		}
		r.safePoint(ctx)
		r.emit(event.ToolCall, event.ToolCallData{CallID: calls[i].ID, Tool: calls[i].Name, Args: rawArgs(calls[i].Arguments)})
		waits := r.asksAPerson(calls[i])
		if ctx.Err() != nil {
			results[i] = tool.Result{IsError: true, Output: "interrupted before this call ran"}
		} else if r.stop != nil {
			why := "the run stopped for a person before this call"
			if r.stop.Status == StatusComplete {
				why = "the run completed before this call"
			}
			results[i] = tool.Result{IsError: true, Output: "not run: " + why + " (" + r.stop.Reason + ")"}
		} else if ref := r.check(calls[i]); ref != nil {
			results[i] = r.refuse(calls[i], ref)
			if ref.layer == LayerSafety {
				r.escalate(phase.BySystem, StatusEscalated, "a destructive action needs a person's confirmation: "+ref.reason)
			}
		} else if ref := r.hookGate(ctx, &calls[i]); ref != nil {
			results[i] = r.refuse(calls[i], ref)
		} else if res, ok := r.approved(ctx, calls[i]); !ok {
			results[i] = res
		} else if ref := r.checkAgain(calls[i], waits); ref != nil {
			results[i] = r.refuse(calls[i], ref)
		} else {
			r.callID = calls[i].ID
			if r.acts(calls[i]) {
				r.taintAhead()
				changed = true
			}
			start := time.Now()
			results[i] = r.runOne(ctx, calls[i])
			took[i] = time.Since(start)
			r.postToolUse(ctx, calls[i], &results[i])
		}
		results[i].Output = r.redact(results[i].Output)
		r.record(calls[i], results[i], took[i])
		i++
	}
	for k, c := range calls {
		r.appendMessage(llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: resultText(results[k]), IsError: results[k].IsError})
	}
	if r.stop == nil && ctx.Err() != nil {
		r.finish(StatusInterrupted, "interrupted")
	}
	return changed
}

// acts says whether c runs code or writes files of the model's: a tool
// of its own that is not read-only (ultra's tools of the workflow, and
// the todo list, do neither).
func (r *runner) acts(c llm.ToolCall) bool {
	t, ok := r.tools[c.Name]
	if !ok {
		return true
	}
	if _, workflow := t.(funcTool); workflow || c.Name == "todo" {
		return false
	}
	return !t.ReadOnly()
}

// parallelSafe reports that a call is read-only and passes the guard.
func (r *runner) parallelSafe(c llm.ToolCall) bool {
	t, ok := r.tools[c.Name]
	if !ok || !t.ReadOnly() || r.row.Axes.Control == "manual" || r.hasToolHooks(c) {
		return false
	}
	return r.check(c) == nil
}

// runOne runs one call the guards let through, saying so as the run's
// activity first: what a surface shows, and what the command's output
// (env.Output) is kept as, is this call's, not the model's answer.
func (r *runner) runOne(ctx context.Context, c llm.ToolCall) tool.Result {
	r.ctl.begin(activityOf(c))
	return r.execute(ctx, c)
}

func (r *runner) execute(ctx context.Context, c llm.ToolCall) tool.Result {
	t := r.tools[c.Name]
	// In planning, bash runs only commands proven read-only (and the
	// baseline may be writing its file meanwhile).
	// ultra's own tools (phase, verify, goals, review) write ultra's records
	// and commit; they run no code of the model's.
	if _, own := t.(funcTool); own || t.ReadOnly() || r.st.Phase.ShellReadOnly() {
		return t.Run(ctx, r.env, json.RawMessage(c.Arguments))
	}
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	before := r.fingerprint(runDir)
	gitBefore, tipBefore := r.gitFingerprint()
	res := t.Run(ctx, r.env, json.RawMessage(c.Arguments))
	reason := ""
	gitAfter, tipAfter := r.gitFingerprint()
	switch {
	case r.fingerprint(runDir) != before:
		reason = fmt.Sprintf("a %s call changed ultra's own files (.ultra/ or the run's gate files and hooks), which only ultra may write", c.Name)
	case gitAfter != gitBefore:
		reason = fmt.Sprintf("a %s call moved a protected branch, the run's base branch or its worktree's branch, or changed the worktree's hooks setting, which no run may do", c.Name)
	case tipAfter != tipBefore && !r.tipGreen(tipAfter):
		reason = fmt.Sprintf("a %s call moved the run's branch to a commit whose tree the gate never passed (a commit that went around ultra's checks)", c.Name)
	}
	if reason != "" {
		layer := LayerStateFiles
		if strings.Contains(reason, "branch") {
			layer = LayerGit
		}
		r.emit(event.Refusal, event.RefusalData{CallID: c.ID, Tool: c.Name, Layer: layer, Reason: reason, Axes: r.row.Axes})
		r.st.Refusals++
		r.escalate(phase.BySystem, StatusEscalated, reason+"; a person must check them before the run goes on")
		res.IsError = true
		res.Output += "\n\nRefused [" + layer + "]: " + reason + ". The run is escalated to a person."
	}
	return res
}

// record emits a call's result and keeps the failure counters.
func (r *runner) record(c llm.ToolCall, res tool.Result, took time.Duration) {
	r.emit(event.ToolResult, event.ToolResultData{CallID: c.ID, Tool: c.Name, IsError: res.IsError, Malformed: res.Malformed,
		Output: event.Truncate(res.Output, 2000), Details: res.Data, Duration: took.Round(time.Microsecond).String()})
	if res.Malformed {
		r.st.Malformed++
	}
	// Identical failing calls with identical results, one after another,
	// mean the model is stuck; anything else in between resets the count.
	if !res.IsError {
		r.st.LastFailure = failureStreak{}
		return
	}
	sig := c.Name + "\x00" + canonicalArgs(c.Arguments) + "\x00" + res.Output
	if r.st.LastFailure.Sig == sig {
		r.st.LastFailure.Count++
	} else {
		r.st.LastFailure = failureStreak{Sig: sig, Count: 1}
	}
	if n := r.st.LastFailure.Count; n >= r.o.MaxRepeats && r.stop == nil {
		r.escalate(phase.BySystem, StatusEscalated, fmt.Sprintf("the model repeated the same failing call %d times: %s %s",
			n, c.Name, event.Truncate(c.Arguments, 200)))
	}
}
