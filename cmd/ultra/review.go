package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
)

// newReviewCmd is ultra review: a review-mode run that inspects a diff
// (a run's branch, a range, or the working tree's uncommitted changes)
// and ends with structured findings, which ultra writes to
// .ultra/state/reviews/<run-id>.json.
func newReviewCmd() *cobra.Command {
	var f runFlags
	var base, head string
	var asJSON bool
	a := axes.Default
	a.Mode, a.Control, a.ModelMode = phase.Review, "autonomous", "deep"
	cmd := &cobra.Command{
		Use:   "review [flags] [RUN | --base A [--head B]]",
		Short: "Review a diff (a run's branch, a range, or the uncommitted changes) and report findings; exit 3 on blockers",
		Long: "ultra review starts a read-only review run (no branch, no worktree) whose reviewer inspects the diff's tests, risks,\n" +
			"regressions, security issues and missing evidence, and answers with findings (severity, file, line, reason, fix).\n" +
			"ultra writes them to .ultra/state/reviews/<run-id>.json (and .md) and prints them.\n\n" +
			"What is reviewed:\n" +
			"  ultra review                  the working tree's uncommitted changes against HEAD (untracked files included)\n" +
			"  ultra review RUN              the run's branch against the run's start\n" +
			"  ultra review --base A --head B   the range A..B\n" +
			"  ultra review --base A         A against the working tree\n\n" +
			"Exit codes: 0 approved without blockers; 3 blockers (or the run stopped for a person); 2 usage, unknown refs or an empty diff.",
		Example: `  ultra review
  ultra review --base main --head feature
  ultra review 20261122-020815-a3f9c1 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if head != "" && base == "" {
				return usageErr("--head needs --base (the range is --base A --head B)")
			}
			if len(args) == 1 && (base != "" || head != "") {
				return usageErr("give a run or a range (--base, --head), not both")
			}
			a, err := a.Normalize()
			if err != nil {
				return usageErr("%v", err)
			}
			if a.Mode != phase.Review {
				return usageErr("ultra review runs in the review work mode, not %s", a.Mode)
			}
			if err := f.validate(); err != nil {
				return err
			}
			p, err := findProject(cmd)
			if err != nil {
				return err
			}
			var st *store.Store
			rs := agent.ReviewSpec{Base: base, Head: head}
			if len(args) == 1 {
				if st, err = p.openStore(); err != nil {
					return err
				}
				defer st.Close()
				if rs, err = runReviewSpec(cmd, st, args[0]); err != nil {
					return err
				}
			}
			// An unknown ref or an empty diff is refused before anything
			// is made.
			target, err := agent.PrepareReview(cmd.Context(), p.Root, rs)
			var ie *agent.ReviewInputError
			if errors.As(err, &ie) {
				return usageErr("%v", err)
			} else if err != nil {
				return err
			}
			if st == nil {
				if st, err = p.openStore(); err != nil {
					return err
				}
				defer st.Close()
			}
			spec := agent.Spec{Task: "review " + target.Spec.Target, Message: target.Message(), Repo: p.Root, Workdir: p.Root, Cwd: p.Dir, Axes: a, Budgets: f.budgets(p), Review: &target.Spec}
			logTo := cmd.OutOrStdout()
			if asJSON && f.output != "jsonl" {
				logTo = cmd.ErrOrStderr() // stdout holds only the findings' JSON
			}
			out, err := launch(cmd, &f, p, st, logTo, spec, nil)
			var ee *exitError
			if errors.As(err, &ee) {
				return err
			}
			if err != nil || out.Status != agent.StatusComplete {
				return finished(out, err)
			}
			return reportReview(cmd, p.StateRoot, out, asJSON, f.output == "jsonl")
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&base, "base", "", "review from this commit (branch, tag or hash); alone: against the working tree")
	fl.StringVar(&head, "head", "", "review up to this commit (with --base)")
	fl.BoolVar(&asJSON, "json", false, "print the findings file (JSON) instead of the findings list")
	fl.StringVar(&a.ModelMode, "model-mode", a.ModelMode, "model mode: "+strings.Join(axes.Values[axes.ModelMode], ", "))
	fl.StringVar(&a.Permission, "permission-profile", a.Permission, "permission profile: "+strings.Join(axes.Values[axes.Permission], ", ")+" (the review is read-only in every one)")
	return cmd
}

// runReviewSpec is the review of a run's branch against the run's start.
func runReviewSpec(cmd *cobra.Command, st *store.Store, id string) (agent.ReviewSpec, error) {
	row, err := getRun(cmd, st, id)
	if err != nil {
		return agent.ReviewSpec{}, err
	}
	ws := row.Workspace
	if ws.Branch == "" || ws.StartCommit == "" {
		return agent.ReviewSpec{}, usageErr("run %s has no branch to review (a %s run works without one)", row.ID, row.Axes.Mode)
	}
	return agent.ReviewSpec{Run: row.ID, Base: ws.StartCommit, Head: ws.Branch}, nil
}

// reportReview prints the findings of a finished review and exits 3 when
// there are blockers.
func reportReview(cmd *cobra.Command, stateRoot string, out *agent.Outcome, asJSON, jsonl bool) error {
	rep, err := agent.ReadReview(stateRoot, out.RunID)
	if err != nil {
		return &exitError{code: agent.ExitError, err: fmt.Errorf("run %s completed but its findings cannot be read: %w", out.RunID, err)}
	}
	w := cmd.OutOrStdout()
	switch {
	case asJSON && jsonl:
		// One line, so that stdout stays JSON lines.
		b, _ := json.Marshal(rep)
		fmt.Fprintln(w, string(b))
	case asJSON:
		if err := writeJSON(w, rep); err != nil {
			return err
		}
	default:
		if jsonl {
			w = cmd.ErrOrStderr() // stdout is the event stream
		}
		printReviewFindings(w, rep, agent.ReviewPath(stateRoot, out.RunID))
	}
	blockers := rep.Blockers
	for _, f := range rep.Findings {
		if f.Severity == agent.SeverityBlocker && blockers == 0 {
			blockers = 1
		}
	}
	if blockers > 0 || rep.Verdict == agent.VerdictBlockers {
		return &exitError{code: agent.ExitEscalated, err: fmt.Errorf("review %s: %d blocker(s) (%s)", out.RunID, blockers, agent.ReviewPath(stateRoot, out.RunID))}
	}
	if !event.ReviewClean(rep.Verdict, rep.Architecture) {
		return &exitError{code: agent.ExitEscalated, err: fmt.Errorf("review %s: architecture %s (%s)", out.RunID, rep.Architecture, agent.ReviewPath(stateRoot, out.RunID))}
	}
	return nil
}

func printReviewFindings(w io.Writer, rep *agent.ReviewReport, path string) {
	// Every line carries the model's words (and file names it chose).
	w = &printableWriter{w: w}
	fmt.Fprintf(w, "\nreview   %s\n", rep.Target)
	verdict := rep.Verdict
	if rep.Architecture != "" {
		verdict += ", architecture " + rep.Architecture
	}
	fmt.Fprintf(w, "verdict  %s (%d blocker(s), %d finding(s))\n", verdict, rep.Blockers, len(rep.Findings))
	for _, r := range rep.ArchitectureReasons {
		fmt.Fprintf(w, "         architecture: %s\n", clip(r, 600))
	}
	if s := strings.TrimSpace(rep.Summary); s != "" {
		fmt.Fprintf(w, "summary  %s\n", clip(s, 400))
	}
	for i, f := range rep.Findings {
		fmt.Fprintf(w, "%3d. %-7s %s: %s\n", i+1, f.Severity, f.Where(), clip(f.Reason, 600))
		if f.Fix != "" {
			fmt.Fprintf(w, "     fix: %s\n", clip(f.Fix, 600))
		}
	}
	fmt.Fprintf(w, "findings %s\n", path)
}
