package agent

// A person's hooks (package hooks) at a run's events. They run contained,
// like the model's commands: in a sandbox of the run's layout, the tree
// writable only where the phase writes. They come after ultra's own
// guards: a hook can refuse a call, ask a person, change a call's input
// (which is guarded again) or send a finished run back to work, never let
// through what ultra refuses. A PreToolUse hook that cannot run or times
// out refuses the call: the person's guard does not silently vanish.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/hooks"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/tool"
)

// LayerHook names refusals by a person's hook.
const LayerHook = "hook"

// maxHookOutput bounds what ultra keeps of a hook's output streams.
const maxHookOutput = 64 << 10

// fireHooks runs the hooks of event for target with the event's fields,
// and tells the person what they said for them (messages, hooks that
// failed).
func (r *runner) fireHooks(ctx context.Context, ev, target string, fields map[string]any) hooks.Result {
	if r.o.Hooks.Empty() {
		return hooks.Result{}
	}
	in := map[string]any{
		"session_id": r.row.ID, "transcript_path": "", "cwd": r.row.Workdir,
		"permission_mode": r.permissionMode(),
	}
	for k, v := range fields {
		in[k] = v
	}
	start := time.Now()
	res := r.o.Hooks.Fire(ctx, r.runHook, ev, target, in)
	if res.Ran > 0 {
		d := res.Permission
		if res.Block {
			d = "block"
		}
		r.emit(event.Hooks, event.HooksData{Event: ev, Target: target, Ran: res.Ran, Decision: d, Failed: len(res.Failed),
			Millis: time.Since(start).Milliseconds()})
	}
	for _, m := range append(res.Messages, res.Failed...) {
		r.emit(event.Warning, event.WarningData{Message: m})
	}
	return res
}

// permissionMode is the run's control in Claude Code's words.
func (r *runner) permissionMode() string {
	if r.st.Phase.Phase == phase.Planning {
		return "plan"
	}
	return r.row.Axes.ClaudePermissionMode()
}

// runHook runs one hook's command with bash, contained, in the run's
// tree, with input on its standard input. CLAUDE_PROJECT_DIR, and every
// script the command names by a relative path, are the project view's
// (projectView): a script the model edits or deletes in its worktree is
// never the one that judges it.
func (r *runner) runHook(ctx context.Context, h hooks.Hook, input []byte) hooks.Exec {
	own := filepath.Join(RunDir(r.o.StateRoot, r.row.ID), "hooks")
	for _, d := range []string{filepath.Join(own, "home"), filepath.Join(own, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return hooks.Exec{Err: err}
		}
	}
	project, err := r.projectView(ctx)
	if err != nil {
		return hooks.Exec{Err: fmt.Errorf("checking out the project for its hooks: %w", err)}
	}
	var shown []string
	if project != r.row.Workdir {
		shown = append(shown, project)
	}
	sb, err := runSandbox(ctx, r.o, r.row, r.st.DepDirs, !r.mcpWritable(), own, shown...)
	if err != nil {
		return hooks.Exec{Err: err}
	}
	env := append(proc.Environ(), "CLAUDE_PROJECT_DIR="+project, "ULTRA_RUN="+r.row.ID)
	// The interpreters the person's checkout chooses, whatever a version
	// file the model writes in its worktree (the working directory) says.
	env = append(env, r.toolchains()...)
	if hooks.PythonInline(h.Command) {
		// A module the model writes in its worktree does not shadow the
		// one a hook runs with -m (or imports in -c).
		env = append(env, "PYTHONSAFEPATH=1")
	}
	// The scripts the command names are the person's copies in the
	// project view; the command works in the run's tree.
	cmd, done, err := sb.Command("bash", []string{"-c", hooks.Rebase(h.Command, project)}, r.row.Workdir, env)
	if err != nil {
		return hooks.Exec{Err: err}
	}
	var stdout, stderr proc.Capture
	stdout.Max, stderr.Max = maxHookOutput, maxHookOutput
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(input), &stdout, &stderr
	if err := cmd.Start(); err != nil {
		done()
		return hooks.Exec{Err: err}
	}
	done()
	wait := make(chan error, 1)
	go func() { wait <- cmd.Wait() }()
	var x hooks.Exec
	select {
	case <-wait:
	case <-ctx.Done():
		proc.KillGroup(cmd)
		<-wait
		x.TimedOut, x.Err = true, ctx.Err()
	}
	proc.KillGroup(cmd) // nothing it started outlives it
	x.Stdout, x.Stderr = stdout.String(), stderr.String()
	if cmd.ProcessState != nil {
		x.Exit = cmd.ProcessState.ExitCode()
	}
	return x
}

// hooked says c is a tool call hooks see (ultra's workflow tools are not).
func hooked(c llm.ToolCall) string { return hooks.ClaudeName(c.Name) }

// hasToolHooks says hooks are configured for c's tool (its calls then
// run one at a time).
func (r *runner) hasToolHooks(c llm.ToolCall) bool {
	name := hooked(c)
	return name != "" && (len(r.o.Hooks.For(hooks.PreToolUse, name)) > 0 || len(r.o.Hooks.For(hooks.PostToolUse, name)) > 0 ||
		len(r.o.Hooks.For(hooks.PostToolUseFailure, name)) > 0)
}

// preToolUse runs the PreToolUse hooks of call *c, which the guard let
// through. It may change the call's input (guarded again), refuse it, or
// mark it for a person (asks) or as allowed ahead (allowed).
func (r *runner) preToolUse(ctx context.Context, c *llm.ToolCall) (ref *refusal, asks, allowed bool) {
	name := hooked(*c)
	if name == "" {
		return nil, false, false
	}
	res := r.fireHooks(ctx, hooks.PreToolUse, name, map[string]any{"tool_name": name, "tool_input": r.hookInput(*c), "tool_use_id": c.ID})
	if len(res.Failed) > 0 {
		why := strings.Join(res.Failed, "; ")
		r.emit(event.Warning, event.WarningData{Message: "a PreToolUse hook could not decide call " + c.ID + ", so it is refused: " + why})
		return &refusal{layer: LayerHook, reason: "a PreToolUse hook of the person's did not decide (it could not run, failed or timed out), so ultra refuses the call (it fails closed): " + why}, false, false
	}
	if res.Block || res.Permission == "deny" {
		return &refusal{layer: LayerHook, reason: "a PreToolUse hook of the person's refuses this call: " + firstNonEmpty(res.Reason, "no reason given")}, false, false
	}
	if len(res.UpdatedInput) > 0 {
		if !json.Valid(res.UpdatedInput) {
			return &refusal{layer: LayerHook, reason: "a PreToolUse hook changed the call's input into something that is not JSON"}, false, false
		}
		c.Arguments = string(res.UpdatedInput)
		r.emit(event.Warning, event.WarningData{Message: fmt.Sprintf("a PreToolUse hook changed call %s's input to %s", c.ID, event.Truncate(c.Arguments, 300))})
		if ref := r.check(*c); ref != nil {
			return ref, false, false
		}
	}
	if res.Context != "" {
		r.notes = append(r.notes, "A hook of the person's says, about call "+c.ID+": "+res.Context)
	}
	return nil, res.Permission == "ask", res.Permission == "allow"
}

// postToolUse runs the PostToolUse (or PostToolUseFailure) hooks of a
// call that ran, and adds what they tell the model to its result.
func (r *runner) postToolUse(ctx context.Context, c llm.ToolCall, res *tool.Result) {
	name := hooked(c)
	if name == "" {
		return
	}
	ev, fields := hooks.PostToolUse, map[string]any{"tool_name": name, "tool_input": r.hookInput(c), "tool_use_id": c.ID,
		"tool_response": map[string]any{"output": event.Truncate(res.Output, 20000), "is_error": res.IsError}}
	if res.IsError {
		ev = hooks.PostToolUseFailure
		fields["error"] = event.Truncate(res.Output, 4000)
	}
	h := r.fireHooks(ctx, ev, name, fields)
	if h.Block {
		res.Output += "\n\nA " + ev + " hook of the person's says: " + firstNonEmpty(h.Reason, "(no reason given)")
	}
	if h.Context != "" {
		res.Output += "\n\n[hook] " + h.Context
	}
}

// stopHooks runs the Stop hooks when a run would complete: a block is a
// reason the run goes back to work ("" when none blocks).
func (r *runner) stopHooks(ctx context.Context) string {
	h := r.fireHooks(ctx, hooks.Stop, "", map[string]any{"stop_hook_active": r.st.StopHookBlocks > 0})
	switch {
	case h.Block:
		r.st.StopHookBlocks++
		return firstNonEmpty(h.Reason, "a Stop hook blocked without a reason")
	case len(h.Failed) > 0:
		r.st.StopHookBlocks++
		return "a Stop hook could not run, so the run does not complete (ultra fails closed): " + strings.Join(h.Failed, "; ")
	}
	return ""
}

// sessionHooks runs SessionStart (source startup or resume): what the
// hooks print is context the model reads first.
func (r *runner) sessionStart(ctx context.Context, source string) {
	for _, n := range append(slices.Clone(r.o.Hooks.Notes), r.o.Rules.Notes...) {
		r.emit(event.Warning, event.WarningData{Message: n})
	}
	h := r.fireHooks(ctx, hooks.SessionStart, source, map[string]any{"source": source})
	if h.Context != "" {
		r.notes = append(r.notes, "The person's SessionStart hooks say:\n"+h.Context)
	}
}

// sessionEnd runs SessionEnd when the run's process lets it go.
func (r *runner) sessionEnd(reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*hooks.DefaultTimeout)
	defer cancel()
	r.fireHooks(ctx, hooks.SessionEnd, reason, map[string]any{"reason": reason})
}

// notifyHooks runs Notification when the run waits for a person.
func (r *runner) notifyHooks(message string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.fireHooks(ctx, hooks.Notification, "", map[string]any{"message": message})
}

// hookGate runs the PreToolUse hooks of *c and keeps what they decided
// for the approval.
func (r *runner) hookGate(ctx context.Context, c *llm.ToolCall) *refusal {
	ref, asks, allowed := r.preToolUse(ctx, c)
	if ref != nil {
		return ref
	}
	if r.hookSays == nil {
		r.hookSays = map[string]string{}
	}
	switch {
	case asks:
		r.hookSays[c.ID] = "ask"
	case allowed:
		r.hookSays[c.ID] = "allow"
	}
	return nil
}

// promptHooks runs UserPromptSubmit on the run's task: a block ends the
// run before the model is asked (true); context goes to the model.
func (r *runner) promptHooks(ctx context.Context, prompt string) bool {
	h := r.fireHooks(ctx, hooks.UserPromptSubmit, "", map[string]any{"prompt": prompt})
	if h.Block {
		r.finish(StatusEscalated, "a UserPromptSubmit hook of the person's blocked the task: "+firstNonEmpty(h.Reason, "no reason given"))
		return true
	}
	if h.Context != "" {
		r.notes = append(r.notes, "The person's UserPromptSubmit hooks add:\n"+h.Context)
	}
	return false
}

// endReason is why the run's process lets it go, for SessionEnd.
func (r *runner) endReason() string {
	if r.stop != nil {
		return string(r.stop.Status)
	}
	return "other"
}

// hookInput is a call's input as Claude Code gives it to hooks: its
// arguments, a file_path made absolute in the run's tree.
func (r *runner) hookInput(c llm.ToolCall) any {
	var m map[string]any
	if json.Unmarshal([]byte(c.Arguments), &m) != nil {
		return rawArgs(c.Arguments)
	}
	for _, k := range []string{"file_path", "path"} {
		if p, ok := m[k].(string); ok && p != "" && !filepath.IsAbs(p) {
			if _, has := m["file_path"]; k == "path" && has {
				continue
			}
			m[k] = filepath.Join(r.row.Workdir, p)
		}
	}
	return m
}

// toolchains are the variables that pin the interpreters version managers
// choose by the working directory's files (.python-version, .ruby-version,
// .node-version, go.mod's toolchain) to those the person's checkout
// chooses: a hook works in the run's tree, where the model writes.
func (r *runner) toolchains() []string {
	r.toolchainOnce.Do(func() {
		r.toolchainEnv = []string{"GOTOOLCHAIN=local"}
		for _, m := range []struct{ prog, env string }{{"pyenv", "PYENV_VERSION"}, {"rbenv", "RBENV_VERSION"}, {"nodenv", "NODENV_VERSION"}} {
			if os.Getenv(m.env) != "" {
				continue // the person pinned it already (proc.Environ passes it on)
			}
			p, err := exec.LookPath(m.prog)
			if err != nil {
				continue
			}
			// Bounded: a version manager that hangs must not hold every
			// hook of the run.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			cmd := exec.CommandContext(ctx, p, "version-name")
			cmd.Dir = r.row.Repo
			defer cancel()
			out, err := cmd.Output()
			if v := strings.TrimSpace(string(out)); err == nil && v != "" && !strings.ContainsAny(v, "\n=") {
				r.toolchainEnv = append(r.toolchainEnv, m.env+"="+v)
			}
		}
	})
	return r.toolchainEnv
}
