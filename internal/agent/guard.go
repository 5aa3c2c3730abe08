package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/mcp"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/tool"
)

// Refusal layers, as named in tool results and events.
const (
	LayerPhaseGuard   = "phase-guard"        // layer 2: tool not allowed in the phase
	LayerReadOnly     = "planning-read-only" // layer 2: bash in planning that may write
	LayerStateFiles   = "state-files"        // safety: ultra's own files
	LayerPolicy       = "policy"             // the permission profile
	LayerTransition   = "transition"         // the phase machine refused a move
	LayerVerifyPhase  = "verify-phase"       // verify outside verifying
	LayerGit          = "git-guard"          // git commands that would break the run's git invariants
	LayerSafety       = "safety"             // destructive actions a person must confirm, in every profile
	LayerPerson       = "person"             // a tool a person refused for the rest of the run
	layerMalformed    = "malformed"          // not a refusal: the call itself was broken
	stateFilesPrefix  = ".ultra/"
	maxRefusalDetails = 300
)

// refusal is why a call may not run.
type refusal struct {
	layer  string
	reason string
}

// permits asks the permission profile whether the run may use a tool.
func permits(a axes.Axes, toolName string) bool {
	ok, _ := policy.ToolPermitted(a.Permission, toolName)
	return ok
}

// check is the execution guard (layer 2) plus the safety rules. It neither
// emits nor changes anything (the commit guard may hash the working tree).
func (r *runner) check(c llm.ToolCall) *refusal {
	p := r.st.Phase.Phase
	r.mcpWait()
	if _, ok := r.tools[c.Name]; !ok {
		return &refusal{layer: layerMalformed, reason: fmt.Sprintf("unknown tool %q. Tools available in phase %s: %s",
			c.Name, p, strings.Join(r.offered(), ", "))}
	}
	if why, ok := r.st.DeniedTools[c.Name]; ok {
		return &refusal{layer: LayerPerson, reason: fmt.Sprintf("a person refused tool %q for the rest of this run: %s", c.Name, why)}
	}
	if ok, why := policy.ToolPermitted(r.row.Axes.Permission, c.Name); !ok {
		return &refusal{layer: LayerPolicy, reason: fmt.Sprintf("the %s permission profile does not permit tool %q: %s",
			r.row.Axes.Permission, c.Name, why)}
	}
	if r.narrowed(c.Name) {
		return &refusal{layer: LayerPhaseGuard, reason: fmt.Sprintf("tool %q is not among the allowed-tools of the skill the person invoked for this run. Allowed now: %s",
			c.Name, strings.Join(r.offered(), ", "))}
	}
	if ref := r.skillScoped(c); ref != nil {
		return ref
	}
	if ref := r.mcpDenied(c.Name); ref != nil {
		return ref
	}
	if mcp.IsTool(c.Name) && r.phaseAllows(c.Name) && r.askedWith != nil && !slices.Contains(r.askedWith, c.Name) {
		return &refusal{layer: LayerPhaseGuard, reason: fmt.Sprintf(
			"tool %q was not offered in the request this answer replies to: load it with mcp_search{query} first; it is offered from your next answer on", c.Name)}
	}
	if c.Name == mcpSearchName && r.phaseAllows(c.Name) && r.askedWith != nil && !slices.Contains(r.askedWith, c.Name) {
		return &refusal{layer: LayerPhaseGuard, reason: fmt.Sprintf(
			"mcp_search is not offered now: the MCP tools this phase allows are few enough to be offered directly (%s); call them by name",
			strings.Join(r.mcpOffered(r.mcpClass()), ", "))}
	}
	if r.phaseAllows(c.Name) && r.askedWith != nil && !slices.Contains(r.askedWith, c.Name) {
		return &refusal{layer: LayerPhaseGuard, reason: fmt.Sprintf(
			"tool %q was not offered in the request this answer replies to (the phase changed during the answer); call it in your next answer", c.Name)}
	}
	if !r.phaseAllows(c.Name) {
		return &refusal{layer: LayerPhaseGuard, reason: fmt.Sprintf(
			"tool %q is not allowed in phase %s (ultra's phase guard). Allowed now: %s.%s",
			c.Name, p, strings.Join(r.offered(), ", "), phaseHint(p, c.Name))}
	}
	if ref := r.ruleRefusal(c); ref != nil {
		return ref
	}
	if c.Name == "edit" && p == phase.Cleaning && r.hasGoals() {
		if ref := r.checkCleanupEdit(c); ref != nil {
			return ref
		}
	}
	if (c.Name == "write" || c.Name == "edit") && r.worker() != nil && p != phase.Cleaning {
		if ref := r.checkClaimed(c); ref != nil {
			return ref
		}
	}
	if !json.Valid([]byte(c.Arguments)) && strings.TrimSpace(c.Arguments) != "" {
		return &refusal{layer: layerMalformed, reason: fmt.Sprintf("invalid JSON arguments for %s: %s. Send a JSON object, e.g. %s",
			c.Name, event.Truncate(c.Arguments, 120), exampleArgs(c.Name))}
	}
	if c.Name == "bash" {
		// Judge the command exactly as the tool will decode it.
		cmd, ok := tool.ShellCommand(json.RawMessage(c.Arguments))
		if !ok {
			return nil // the tool reports the missing or broken argument
		}
		if r.st.Phase.ShellReadOnly() {
			if v := policy.ClassifyShell(cmd); !v.ReadOnly {
				later := "changes wait for building."
				if !phase.Worktree(r.row.Axes.Mode) {
					later = "a " + r.row.Axes.Mode + " run changes nothing."
				}
				return &refusal{layer: LayerReadOnly, reason: fmt.Sprintf(
					"phase %s is read-only and this command is not provably read-only: %s. Use read, glob, grep or read-only commands such as ls, cat, git log; %s",
					p, v.Reason, later)}
			}
		}
		if h := policy.DestructiveIn(cmd, r.row.Workdir, r.scratchDirs()); h != nil {
			return &refusal{layer: LayerSafety, reason: fmt.Sprintf(
				"%s. This needs a person's confirmation and nobody is watching this run, so it is stopped for one. Safe alternative: %s", h.What, h.Alternative)}
		}
		if bad, why := policy.ShellWritesProtected(cmd, []string{stateFilesPrefix}); bad {
			return &refusal{layer: LayerStateFiles, reason: ".ultra/ holds ultra's own state and only ultra writes it (" + why + ")"}
		}
		if bad, why := policy.ShellWritesProtected(cmd, []string{".git/"}); bad {
			return &refusal{layer: LayerGit, reason: ".git holds the repository's branches and history; change them only with git commands, which ultra's git guard checks (" + why + ")"}
		}
		if ref := r.checkGit(cmd); ref != nil {
			return ref
		}
	}
	return nil
}

// refuse turns a refusal into the tool result the model reads, and records
// it: a refusal event, or a malformed call.
func (r *runner) refuse(c llm.ToolCall, ref *refusal) tool.Result {
	if ref.layer == layerMalformed {
		return tool.Result{IsError: true, Malformed: true, Output: ref.reason}
	}
	r.st.Refusals++
	r.emit(event.Refusal, event.RefusalData{CallID: c.ID, Tool: c.Name, Layer: ref.layer, Reason: ref.reason,
		Allowed: r.offered(), Axes: r.row.Axes})
	return tool.Result{IsError: true, Output: "Refused [" + ref.layer + "]: " + ref.reason, Data: map[string]any{"layer": ref.layer}}
}

func phaseHint(p phase.Phase, name string) string {
	switch {
	case name == "verify":
		return " verify runs only in verifying: call phase{to:\"verifying\"} when the change is ready."
	case p == phase.Planning:
		return " Planning is read-only: finish the plan and propose the goals with goals{goals:[...]}."
	case p == phase.Verifying:
		return " Call verify; its result decides the next phase."
	}
	return ""
}

func exampleArgs(name string) string {
	switch name {
	case "read":
		return `{"file_path":"main.go"}`
	case "edit":
		return `{"file_path":"main.go","old_string":"a","new_string":"b"}`
	case "write":
		return `{"file_path":"main.go","content":"..."}`
	case "bash":
		return `{"command":"ls"}`
	case "phase":
		return `{"to":"verifying","reason":"..."}`
	case "review":
		// {} is no review: the smallest one the tool accepts.
		return `{"verdict":"approve","architecture":{"status":"CLEAR"},"summary":"..."}`
	}
	return `{}`
}

// scratchDirs are the directories of the model's commands' own: a
// sandbox's private /tmp (none without a sandbox, where /tmp is the
// machine's).
func (r *runner) scratchDirs() []string {
	if r.st.Sandbox == "" || strings.HasPrefix(r.st.Sandbox, "none") {
		return nil
	}
	return []string{"/tmp"}
}
