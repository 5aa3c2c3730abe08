package agent

// The final gate's cleanup pass (phase cleaning): after the final gate
// passed and ultra committed the final tree, the model may edit the files
// the run changed, and nothing else; the gate and every criterion then
// judge the cleaned tree. A cleanup they pass gets a commit of its own; one
// that breaks a test or a criterion is reverted to the committed final
// tree. Either way the review follows.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/tool"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// LayerCleanup refuses an edit of the cleanup pass outside the files the
// run changed.
const LayerCleanup = "cleanup-files"

// cleanupState is the cleanup pass in hand.
type cleanupState struct {
	// Commit is ultra's commit of the final tree the pass starts from:
	// what a reverted cleanup puts back.
	Commit string `json:"commit"`
	// Decision is the final gate's decision on that tree: the review's
	// when the cleanup is reverted or changed nothing.
	Decision gate.Decision `json:"decision"`
	// Files are the files the run changed (from its start commit to the
	// final tree, ultra's records excluded), tests and test support
	// aside: the only ones edit may change.
	Files []string `json:"files"`
	// Tests are the changed files left out of Files, each with what it is
	// to the tests (the gate's classifier): not the cleanup's to change.
	Tests map[string]string `json:"tests,omitempty"`
	// Passed names the tests that passed at the final gate: on the
	// cleaned tree each must still run and not be skipped.
	Passed []string `json:"passed,omitempty"`
	// StartTurns is the run's model requests when the pass started.
	StartTurns int `json:"start_turns"`
	// Verifying: the pass ended; the verification now judges it.
	Verifying bool `json:"verifying,omitempty"`
}

// cleanupWanted reports that a final gate that passes now goes to a
// cleanup pass: a build run with goals, a branch to commit on and a start
// commit to tell its changes by, with goals.cleanup on; and not the
// verification of a cleanup pass itself.
func (r *runner) cleanupWanted() bool {
	gs := r.st.Goals
	ws := r.row.Workspace
	return gs != nil && !gs.NoCleanup && gs.Cleanup == nil && r.st.Phase.ModeName() == phase.Build &&
		ws.Branch != "" && ws.StartCommit != ""
}

// cleanupJudged reports that the verification in hand judges a cleanup.
func (r *runner) cleanupJudged() bool {
	c := r.st.Goals.Cleanup
	return c != nil && c.Verifying
}

// cleanupLabel labels the evidence of the criteria that judge the
// cleanup pass in hand.
func (r *runner) cleanupLabel() string { return fmt.Sprintf("cleanup-%d", r.st.Goals.Cleanups) }

// cleanupLimit is the pass's limit of turns.
func (r *runner) cleanupLimit() phase.Limit {
	return phase.CleanupLimit(r.st.Phase.Used.Turns - r.st.Goals.Cleanup.StartTurns)
}

// changedFiles are the files that differ from the run's start commit to
// tree, ultra's records (anything under .ultra/) excluded, deleted files
// too (nothing to edit there).
func (r *runner) changedFiles(ctx context.Context, tree string) ([]string, error) {
	start, err := workspace.TreeOf(ctx, r.row.Workdir, r.row.Workspace.StartCommit)
	if err != nil {
		return nil, err
	}
	cs, err := workspace.DiffTrees(ctx, r.row.Workdir, start, tree)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cs {
		if c.Status == "D" || goal.IsRecord(c.Path) || strings.HasPrefix(c.Path, stateFilesPrefix) {
			continue
		}
		out = append(out, c.Path)
	}
	return out, nil
}

// startCleanup starts the cleanup pass after the final gate d passed and
// ultra committed its tree; it returns what the model reads. Without a
// commit of that tree to go back to, or with no file to clean, there is
// no pass: the review follows at once.
func (r *runner) startCleanup(ctx context.Context, d gate.Decision, res *verify.Result) string {
	gs := r.st.Goals
	wd := r.row.Workdir
	tip := workspace.BranchTip(ctx, wd, r.row.Workspace.Branch)
	changed, err := r.changedFiles(ctx, d.Tree)
	var files []string
	var tests map[string]string
	var cerr error
	if err == nil {
		files, tests, cerr = r.cleanable(ctx, d, changed)
	}
	why := ""
	switch {
	case err != nil:
		why = "ultra could not list the files the run changed: " + err.Error()
	case cerr != nil:
		why = "ultra could not tell the run's tests and test support from its code: " + cerr.Error()
	case len(changed) == 0:
		why = "the run changed no file ultra's records aside"
	case len(files) == 0:
		why = "the run changed only tests and test support, which a cleanup does not touch"
	case tip == "":
		why = "the run's branch has no commit of the final tree"
	default:
		if tipTree, err := workspace.TreeOf(ctx, wd, tip); err != nil || r.codeOf(ctx, tipTree) == "" || r.codeOf(ctx, tipTree) != r.codeOf(ctx, d.Tree) {
			why = "ultra could not commit the final tree, so a cleanup could not be reverted"
		}
	}
	if why != "" {
		return r.cleanupToReview(ctx, phase.BySystem, d, "none, as "+why)
	}
	gs.Cleanups++
	gs.Cleanup = &cleanupState{Commit: tip, Decision: d, Files: files, Tests: tests, Passed: passedTests(res), StartTurns: r.st.Phase.Used.Turns}
	r.recordGoal(ledger.Entry{Kind: ledger.KindCleanupStarted,
		Text: fmt.Sprintf("cleanup pass %d from %s; it may edit: %s", gs.Cleanups, workspace.Short(tip), strings.Join(files, ", ")),
		Data: jsonData(map[string]any{"commit": tip, "files": files, "tests_aside": tests, "gate": d.N})})
	r.emit(event.Cleanup, event.CleanupData{Result: "started", Files: files, Commit: tip})
	return fmt.Sprintf("Phase is now cleaning: the cleanup pass before the review (at most %d turns). You may edit only the files the run changed, tests and test support aside:\n  - %s\n%s"+
		"Look for, and remove: debugging leftovers (prints, logs, commented-out code), dead or duplicated code, and comments that narrate the change (\"fixed\", \"now does X\", \"changed Y\") rather than explain the code. Change no behaviour; edit is the only tool that changes anything here (no new files, no commands).\n"+
		"End the pass with phase{to:\"verifying\"}, with or without a change: ultra runs the tests and every criterion again on the cleaned tree. A cleanup they pass is committed on its own; one that breaks a test or a criterion is reverted, and the review sees the tree as it was before it.",
		phase.CleanupTurns, strings.Join(files, "\n  - "), testsAside(tests))
}

// testsAside tells the model which of the files the run changed are
// tests or test support, and why it may not edit them.
func testsAside(tests map[string]string) string {
	if len(tests) == 0 {
		return ""
	}
	var l []string
	for f, why := range tests {
		l = append(l, f+" ("+why+")")
	}
	slices.Sort(l)
	return "Tests and test support are not the cleanup's to change (a pass that changes no behaviour has no reason to touch them); the run also changed these, which stay as they are:\n  - " + strings.Join(l, "\n  - ") + "\n"
}

// checkCleanupEdit refuses an edit of the cleanup pass whose file (as the
// model named it, or as its links lead) is not one the run changed.
func (r *runner) checkCleanupEdit(c llm.ToolCall) *refusal {
	cl := r.st.Goals.Cleanup
	rel, real, ok := tool.EditTarget(r.env.Root, []byte(c.Arguments))
	if !ok {
		return nil // Edit.Run refuses it the same way, changing nothing
	}
	if cl != nil && slices.Contains(cl.Files, rel) && slices.Contains(cl.Files, real) {
		return nil
	}
	allowed := "none"
	if cl != nil {
		allowed = strings.Join(cl.Files, ", ")
	}
	if what := cl.testRole(rel, real); what != "" {
		return &refusal{layer: LayerCleanup, reason: fmt.Sprintf(
			"%s is %s: tests and test support are not the cleanup's to change (a pass that changes no behaviour has no reason to touch them). The cleanup pass edits only the files the run changed, tests and test support aside (%s). End the pass with phase{to:\"verifying\"}", rel, what, allowed)}
	}
	return &refusal{layer: LayerCleanup, reason: fmt.Sprintf(
		"the cleanup pass edits only the files the run changed, tests and test support aside (%s); %s is not one of them. End the pass with phase{to:\"verifying\"}", allowed, rel)}
}

// testRole says what an edit's file (as named, and as its links lead) is
// to the tests when it is a test or test support ("" when neither).
func (c *cleanupState) testRole(paths ...string) string {
	for _, p := range paths {
		if c != nil && c.Tests[p] != "" {
			return c.Tests[p]
		}
		if verify.IsTestPath(p) {
			return "a test"
		}
	}
	return ""
}

// endCleanup ends the cleanup pass (by the model's phase call, or by
// ultra when its turns are used): a pass that changed nothing goes to
// the review at once (the final gate's result stands); a change is
// verified as every change is, and afterGoalVerify keeps or reverts it.
func (r *runner) endCleanup(ctx context.Context, by phase.Actor, reason string) tool.Result {
	c := r.st.Goals.Cleanup
	if c == nil {
		// A pass ultra no longer knows (steering reopened the goals):
		// the verification decides as any other.
		if err := r.transition(phase.Verifying, by, reason, ""); err != nil {
			return r.refuseTransition(string(phase.Verifying), err.Error())
		}
		return tool.Result{Output: "Phase is now verifying. " + r.st.Phase.Purpose()}
	}
	files, err := r.cleanupChanges(ctx, c)
	if err == nil && len(files) == 0 {
		r.recordGoal(ledger.Entry{Kind: ledger.KindCleanupUnchanged, Text: "the cleanup pass changed nothing: the final gate's result on " + workspace.Short(c.Commit) + " stands"})
		r.emit(event.Cleanup, event.CleanupData{Result: "unchanged", Commit: c.Commit})
		return tool.Result{Output: r.cleanupToReview(ctx, by, c.Decision, "it changed nothing, so the final gate's result on "+workspace.Short(c.Decision.Tree)+" stands ("+reason+")")}
	}
	if err := r.transition(phase.Verifying, by, reason, ""); err != nil {
		return r.refuseTransition(string(phase.Verifying), err.Error())
	}
	c.Verifying = true
	res := r.runVerify(ctx, nil)
	res.Output = "Phase is now verifying: ultra runs the tests and every criterion on the cleaned tree.\n\n" + res.Output
	return res
}

// cleanupToReview moves a cleanup pass that has nothing to verify (none
// started, or it changed nothing) on to the review of the final gate's
// tree d, through verifying: the phase machine's only way out of it.
func (r *runner) cleanupToReview(ctx context.Context, by phase.Actor, d gate.Decision, why string) string {
	if err := r.transition(phase.Verifying, by, "the cleanup pass: "+why, ""); err != nil {
		r.escalate(phase.BySystem, StatusEscalated, "the cleanup pass could not end: "+err.Error())
		return "The run is escalated to a person: " + err.Error()
	}
	next, tr, err := r.st.Phase.AfterGoalVerify(phase.Pass, phase.GoalResult{Final: true, Complete: true, Cleaned: true, Reason: why}, why)
	if err != nil {
		r.escalate(phase.BySystem, StatusEscalated, "the cleanup pass could not end: "+err.Error())
		return "The run is escalated to a person: " + err.Error()
	}
	r.applyTransition(next, tr)
	r.st.Goals.Cleanup = nil
	r.startReview(ctx, d)
	return "The cleanup pass: " + why + ".\nA reviewer now reviews the change in a fresh context; its verdict decides whether the run completes."
}

// cleanupChanges are the files the worktree's code differs in from the
// final tree the pass started from.
func (r *runner) cleanupChanges(ctx context.Context, c *cleanupState) ([]workspace.Change, error) {
	wd := r.row.Workdir
	base, err := workspace.TreeOf(ctx, wd, c.Commit)
	if err != nil {
		return nil, err
	}
	now, err := workspace.TreeHash(ctx, wd)
	if err != nil {
		return nil, err
	}
	a, b := r.codeOf(ctx, base), r.codeOf(ctx, now)
	if a == "" || b == "" {
		return nil, fmt.Errorf("ultra could not make the trees without its records")
	}
	return workspace.DiffTrees(ctx, wd, a, b)
}

// settleCleanup keeps or reverts the cleanup that verification d judged
// (gr: what the final gate found on it); it returns the decision the
// review judges and what the model reads.
func (r *runner) settleCleanup(ctx context.Context, d gate.Decision, res *verify.Result, gr phase.GoalResult) (gate.Decision, string) {
	c := r.st.Goals.Cleanup
	defer func() { r.st.Goals.Cleanup = nil }()
	var changed []string
	if cs, err := r.cleanupChanges(ctx, c); err == nil {
		for _, ch := range cs {
			changed = append(changed, ch.Path)
		}
	}
	o := d.Outcome()
	lost := lostTests(c, d, res)
	why := ""
	switch {
	case (o == phase.Pass || o == phase.Concerns) && gr.Complete && !gr.Failed && lost != "":
		why = lost
	case (o == phase.Pass || o == phase.Concerns) && gr.Complete && !gr.Failed:
		commit, err := r.commitGoal(ctx, d, "cleanup pass", "The final gate's cleanup pass: "+strings.Join(changed, ", ")+".\nThe tests and every essential criterion passed again on the cleaned tree.",
			[]string{"Ultra-Final: cleanup"})
		if err == nil && commit != "" {
			r.recordGoal(ledger.Entry{Kind: ledger.KindCleanupCommitted,
				Text: fmt.Sprintf("committed %s: %s; the tests and every essential criterion passed on tree %s", workspace.Short(commit), strings.Join(changed, ", "), workspace.Short(d.Tree)),
				Data: jsonData(map[string]any{"commit": commit, "files": changed, "tree": d.Tree, "gate": d.N})})
			r.emit(event.Cleanup, event.CleanupData{Result: "committed", Files: changed, Commit: commit})
			return d, fmt.Sprintf("The cleanup passed the tests and every essential criterion: ultra committed it as %s.\n", workspace.Short(commit))
		}
		why = "ultra could not commit it"
		if err != nil {
			why += ": " + err.Error()
		}
	case o == phase.Fail:
		why = "it broke the tests: " + strings.Join(d.Reasons, "; ")
		if names := d.FailingNames(); len(names) > 0 {
			why = "it broke the tests: " + strings.Join(names, ", ")
		}
	case o != phase.Pass && o != phase.Concerns:
		why = "its verification did not pass: " + d.Summary()
	default:
		why = "it broke a criterion: " + gr.Reason
	}
	why = oneLine(why, 600)
	if d.Tree != "" {
		r.st.Goals.Reverted = append(r.st.Goals.Reverted, d.Tree)
	}
	if err := r.revertCleanup(ctx, c); err != nil {
		r.recordGoal(ledger.Entry{Kind: ledger.KindCleanupReverted, Text: "not reverted: " + oneLine(err.Error(), 300) + "; " + why})
		r.escalate(phase.BySystem, StatusEscalated, "ultra could not revert a cleanup that failed ("+why+"): "+err.Error())
		return c.Decision, "ultra could not revert the cleanup: " + err.Error() + "\n"
	}
	r.recordGoal(ledger.Entry{Kind: ledger.KindCleanupReverted,
		Text: fmt.Sprintf("reverted to %s (%s): %s", workspace.Short(c.Commit), strings.Join(changed, ", "), why),
		Data: jsonData(map[string]any{"commit": c.Commit, "files": changed, "tree": d.Tree, "gate": d.N})})
	r.emit(event.Cleanup, event.CleanupData{Result: "reverted", Files: changed, Commit: c.Commit, Reason: why})
	return c.Decision, fmt.Sprintf("The cleanup is reverted (%s): the files are back as ultra committed them in %s.\n", why, workspace.Short(c.Commit))
}

// revertCleanup puts the code of the worktree back as commit c.Commit
// holds it; ultra's records (which went on recording) stay as they are.
func (r *runner) revertCleanup(ctx context.Context, c *cleanupState) error {
	wd := r.row.Workdir
	cs, err := r.cleanupChanges(ctx, c)
	if err != nil {
		return err
	}
	var restore []string
	for _, ch := range cs {
		switch ch.Status {
		case "A":
			if err := os.Remove(filepath.Join(wd, filepath.FromSlash(ch.Path))); err != nil && !os.IsNotExist(err) {
				return err
			}
		case "R", "C":
			if err := os.Remove(filepath.Join(wd, filepath.FromSlash(ch.Path))); err != nil && !os.IsNotExist(err) {
				return err
			}
			restore = append(restore, ch.From)
		default:
			restore = append(restore, ch.Path)
		}
	}
	if len(restore) > 0 {
		args := append([]string{"checkout", "--no-overlay", c.Commit, "--"}, restore...)
		if out, err := workspace.Git(ctx, wd, args...); err != nil {
			return fmt.Errorf("git checkout: %v: %s", err, oneLine(out, 300))
		}
	}
	if left, err := r.cleanupChanges(ctx, c); err != nil || len(left) > 0 {
		if err == nil {
			err = fmt.Errorf("the code still differs from %s in %s", workspace.Short(c.Commit), left[0].Path)
		}
		return err
	}
	return nil
}

// cleanupForReview is what the reviewer reads of the cleanup passes: each
// committed cleanup's own diff (a test or a behaviour it changed is
// plain there), each reverted one's reason.
func (r *runner) cleanupForReview(ctx context.Context) string {
	var b strings.Builder
	for _, e := range r.goals.ledger.Entries() {
		switch e.Kind {
		case ledger.KindCleanupCommitted:
			var d struct {
				Commit string `json:"commit"`
			}
			_ = json.Unmarshal(e.Data, &d)
			args := []string{"show", "--text", "--no-ext-diff", "--no-textconv", "--format=", "--stat", "-p", d.Commit, "--", "."}
			for _, p := range goalArtifacts {
				args = append(args, ":(exclude)"+p)
			}
			diff, _ := workspace.Git(ctx, r.row.Workdir, args...)
			fmt.Fprintf(&b, "\n## The cleanup pass (committed %s on its own, after the final gate)\nIt must change no behaviour: check that it did not.\n%s\n", workspace.Short(d.Commit), event.Truncate(diff, 20<<10))
		case ledger.KindCleanupReverted:
			fmt.Fprintf(&b, "\n## A cleanup pass was reverted\n%s\n", oneLine(e.Text, 400))
		}
	}
	return b.String()
}
