package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

func newGoalsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "goals [RUN]",
		Short: "Show a run's goals, criteria, statuses, attempts and last evidence (default: the latest run)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			row, f, err := loadGoals(cmd, args)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), f)
			}
			printGoals(&printableWriter{w: cmd.OutOrStdout()}, row, f)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print goals.json as it is")
	cmd.AddCommand(newGoalsCriteriaCmd(), newGoalsLedgerCmd(), newGoalsSteerCmd())
	return cmd
}

// latestRun is the id of the project's newest run.
func latestRun(cmd *cobra.Command, st *store.Store) (string, error) {
	return latestRunOf(cmd, st, false)
}

// latestRunOf is the latest run a person started (not a parallel run's
// worker), or with branched the latest one with a
// branch and worktree of its own (a build, plan or repair run, never a
// chat, research or review), which goals and diffs are of.
func latestRunOf(cmd *cobra.Command, st *store.Store, branched bool) (string, error) {
	runs, err := st.ListRuns(cmd.Context(), 200)
	if err != nil {
		return "", err
	}
	for _, r := range runs {
		// A parallel run's workers are its own: the run is what a
		// person started.
		if r.TaskRow.Parent == "" && (!branched || phase.Worktree(r.Axes.Mode)) {
			return r.ID, nil
		}
	}
	if len(runs) > 0 {
		return "", usageErr("no run here has a branch of its own yet (chats, research and reviews work in the checkout): ultra run TASK starts one")
	}
	return "", usageErr("there are no runs here yet (ultra run --brief-file BRIEF.md starts one)")
}

// goalsRun finds the run named by args (or the latest) and the worktree
// that holds its records.
func goalsRun(cmd *cobra.Command, id string) (*project, *store.Run, error) {
	p, st, err := openProject(cmd)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	if id == "" {
		if id, err = latestRunOf(cmd, st, true); err != nil {
			return nil, nil, err
		}
	}
	row, err := getRun(cmd, st, id)
	if err != nil {
		return nil, nil, err
	}
	root, view, shared, err := p.sharedView(cmd, st, row)
	if err != nil {
		return nil, nil, err
	}
	if shared {
		// The records are the fleet's, as the run's steps shared them.
		q := *p
		q.StateRoot, q.shared = root, true
		return &q, view, nil
	}
	if _, err := os.Stat(row.Workdir); err != nil {
		dir, where, err := committedRecords(cmd, p.Root, row)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s's worktree %s is gone, and its committed records cannot be read: %w", row.ID, row.Workdir, err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "run %s's worktree is gone: its records as %s holds them\n", row.ID, where)
		row.Workdir = dir
	}
	return p, row, nil
}

// committedRecords writes the records of a run whose worktree is gone, as
// the repository holds them (a landed run's: its base branch now, so that
// a later change to them is found; where that branch has none, the commit
// that landed; else its branch's tip), into a temporary directory laid
// out as the worktree was.
func committedRecords(cmd *cobra.Command, repo string, row *store.Run) (dir, where string, err error) {
	ctx := cmd.Context()
	ws := row.Workspace
	commit := ws.Landed
	where = "the commit that landed it, " + workspace.Short(commit)
	if commit != "" && ws.Base != "" {
		if tip := workspace.BranchTip(ctx, repo, ws.Base); tip != "" {
			if _, err := workspace.Blob(ctx, repo, tip, agent.RecordsOf(row).Ledger()); err == nil {
				commit, where = tip, ws.Base+" at "+workspace.Short(tip)
			}
		}
	}
	if commit == "" && ws.Branch != "" {
		commit = workspace.BranchTip(ctx, repo, ws.Branch)
		where = "its branch " + ws.Branch + " at " + workspace.Short(commit)
	}
	if commit == "" {
		if ws.Branch == "" {
			return "", "", fmt.Errorf("it did not land and has no branch")
		}
		return "", "", fmt.Errorf("it did not land and its branch %s is not in this repository: gone, or not fetched (a fleet's run's branch is on the remote: git fetch origin %s:%s)", ws.Branch, ws.Branch, ws.Branch)
	}
	dir, err = os.MkdirTemp("", "ultra-records-*")
	if err != nil {
		return "", "", err
	}
	cobra.OnFinalize(func() { os.RemoveAll(dir) })
	for _, rel := range agent.RecordsOf(row).Paths() {
		b, err := workspace.Blob(ctx, repo, commit, rel)
		if err != nil {
			continue // a run without a brief has none
		}
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
			return "", "", err
		}
	}
	return dir, where, nil
}

func loadGoals(cmd *cobra.Command, args []string) (*store.Run, *goal.File, error) {
	id := ""
	if len(args) > 0 {
		if err := requireRunID(args[0]); err != nil {
			return nil, nil, err
		}
		id = args[0]
	}
	_, row, err := goalsRun(cmd, id)
	if err != nil {
		return nil, nil, err
	}
	f, err := agent.ReadGoals(row.Workdir, agent.RecordsOf(row))
	if err != nil {
		return nil, nil, err
	}
	if f == nil {
		if n, last := refusedProposals(cmd, row.ID); n > 0 {
			return nil, nil, fmt.Errorf("run %s has no goals yet: ultra refused the planner's %d proposal(s); the last refusal:\n%s", row.ID, n, last)
		}
		return nil, nil, fmt.Errorf("run %s has no goals yet (they are proposed in planning)", row.ID)
	}
	return row, f, nil
}

// refusedProposals counts the run's goals calls that ultra refused and
// returns the answer to the last one (its first lines).
func refusedProposals(cmd *cobra.Command, id string) (int, string) {
	_, st, err := openProject(cmd)
	if err != nil {
		return 0, ""
	}
	defer st.Close()
	evs, err := st.Events(cmd.Context(), id, 0)
	if err != nil {
		return 0, ""
	}
	n, last := 0, ""
	for _, e := range evs {
		if e.Type != string(event.ToolResult) {
			continue
		}
		var d event.ToolResultData
		if json.Unmarshal(e.Data, &d) == nil && d.Tool == "goals" && d.IsError {
			n, last = n+1, d.Output
		}
	}
	lines := strings.Split(strings.TrimSpace(last), "\n")
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("… (%d more lines)", len(lines)-20))
	}
	return n, "  " + strings.Join(lines, "\n  ")
}

func printGoals(w io.Writer, row *store.Run, f *goal.File) {
	acc := "proposed, not accepted (ultra approve " + row.ID + ")"
	if a := f.Accepted; a != nil {
		acc = fmt.Sprintf("accepted by %s at %s (ledger entry %d, digest %s)", a.By, a.At.Format("2006-01-02 15:04:05"), a.Ledger, short(a.Digest))
	}
	fmt.Fprintf(w, "run %s: %s\nplan %s\n", row.ID, clip(row.Task, 120), acc)
	for _, g := range f.Goals {
		kind := ""
		if g.Refactor {
			kind = ", a refactor: every criterion passes before and after"
		}
		fmt.Fprintf(w, "\n%s  %s  (%s, cycle %d of %d%s)\n  %s\n", g.ID, g.Title, g.Status, g.Attempt, goal.MaxCycles, kind, clip(g.Objective, 200))
		if g.Commit != "" {
			fmt.Fprintf(w, "  commit %s\n", short(g.Commit))
		}
		if g.Reason != "" {
			fmt.Fprintf(w, "  why: %s\n", g.Reason)
		}
		for _, c := range g.SuccessCriteria {
			printCriterionLine(w, c, g.Status.Done())
		}
	}
	entries, _ := ledger.Read(filepath.Join(row.Workdir, filepath.FromSlash(agent.RecordsOf(row).Ledger())))
	printFinalGate(w, entries)
	if r := f.Review; r != nil {
		verdict := event.ReviewVerdict(r.Verdict)
		if r.Architecture != "" {
			verdict += ", architecture " + r.Architecture
		}
		fmt.Fprintf(w, "\nfinal review: round %d, %s\n", r.Rounds, verdict)
		for _, b := range r.Blockers {
			if b.Line > 0 {
				fmt.Fprintf(w, "  - %s:%d: %s\n", b.File, b.Line, b.Reason)
			} else {
				fmt.Fprintf(w, "  - %s: %s\n", b.File, b.Reason)
			}
		}
		for _, why := range r.ArchitectureReasons {
			fmt.Fprintf(w, "  - architecture: %s\n", clip(why, 300))
		}
	}
}

// finalGateSteps are the ledger's kinds of the final gate's steps.
var finalGateSteps = []string{ledger.KindFinalGate, ledger.KindCleanupStarted, ledger.KindCleanupUnchanged,
	ledger.KindCleanupCommitted, ledger.KindCleanupReverted, ledger.KindReviewVerdict}

// printFinalGate shows the final gate's steps with their results, as the
// ledger records them: the gate on the final tree, its cleanup pass (kept,
// reverted or unchanged) and the review's verdicts.
func printFinalGate(w io.Writer, entries []ledger.Entry) {
	var lines []string
	for _, e := range entries {
		if slices.Contains(finalGateSteps, e.Kind) {
			lines = append(lines, fmt.Sprintf("  #%d %s: %s", e.Seq, strings.ReplaceAll(e.Kind, "_", " "), clip(e.Text, 200)))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nfinal gate:\n%s\n", strings.Join(lines, "\n"))
	}
}

// printCriterionLine shows a criterion: its status, its base results and
// its last result, "final" once its goal is done ("latest" before).
func printCriterionLine(w io.Writer, c goal.Criterion, done bool) {
	mark := map[goal.CriterionStatus]string{goal.CriterionPass: "✓", goal.CriterionFail: "✗", goal.CriterionBlocked: "!", goal.CriterionPending: "·"}[c.Status]
	ess := ""
	if !c.Essential {
		ess = ", not essential"
	}
	if c.Superseded != "" {
		ess += ", superseded: " + c.Superseded
	}
	fmt.Fprintf(w, "  %s %s [%s, %s, %s%s] %s: %s\n", mark, c.ID, c.UserModel, c.SurfaceOf(), c.Channel, ess, c.Status, clip(c.Scenario, 100))
	if line := goal.BaseLine(c); line != "" {
		fmt.Fprintf(w, "      base:  %s\n", line)
	}
	if b := c.Recheck; b != nil {
		again := "still fails there, as it must"
		if b.Status == goal.CriterionPass {
			again = "PASSES there now: its result does not depend on the change"
		}
		fmt.Fprintf(w, "      final gate, on the base tree again: %s (%s)\n", b.Status, again)
	}
	if e := c.CapturedEvidence; e != nil {
		label := "latest"
		if done {
			label = "final"
		}
		fmt.Fprintf(w, "      %s: %s: %s\n", label, c.Status, clip(e.Summary, 160))
	}
}

func newGoalsCriteriaCmd() *cobra.Command {
	var asJSON bool
	var runID string
	cmd := &cobra.Command{
		Use:   "criteria GOAL",
		Short: "Show one goal's criteria: scenario, check, status and the evidence ultra captured",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ids []string
			if runID != "" || cmd.Flags().Changed("run") {
				ids = []string{runID}
			}
			_, f, err := loadGoals(cmd, ids)
			if err != nil {
				return err
			}
			g := findGoal(f, args[0])
			if g == nil {
				var known []string
				for _, x := range f.Goals {
					known = append(known, x.ID)
				}
				return usageErr("no goal %q in this run (goals: %s)", args[0], strings.Join(known, ", "))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), g.SuccessCriteria)
			}
			w := &printableWriter{w: cmd.OutOrStdout()}
			fmt.Fprintf(w, "%s  %s (%s)\n", g.ID, g.Title, g.Status)
			for _, c := range g.SuccessCriteria {
				fmt.Fprintln(w)
				printCriterionLine(w, c, g.Status.Done())
				chk := checkJSON(c.Check)
				fmt.Fprintf(w, "      check: %s\n      expected evidence: %s\n", chk, c.ExpectedEvidence)
				if b := c.Base; b != nil && b.NotRun == "" {
					fmt.Fprintf(w, "      on the base tree %s: %s\n", short(b.Tree), clip(b.Summary, 200))
					for _, ef := range b.Files {
						fmt.Fprintf(w, "      base evidence: %s (sha256 %s, %d bytes)\n", ef.Path, short(ef.SHA256), ef.Bytes)
					}
				}
				if c.SameFailures > 0 {
					fmt.Fprintf(w, "      same failure %d times in a row (limit %d)\n", c.SameFailures, goal.MaxSameFailures)
				}
				if e := c.CapturedEvidence; e != nil {
					if e.Receipt != "" {
						fmt.Fprintf(w, "      receipt: %s\n", e.Receipt)
					}
					for _, ef := range e.Files {
						fmt.Fprintf(w, "      evidence: %s (sha256 %s, %d bytes)\n", ef.Path, short(ef.SHA256), ef.Bytes)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&runID, "run", "", "the run (default: the latest)")
	return cmd
}

// evidenceCount is how many evidence files a ledger names.
func evidenceCount(path string) int {
	entries, _ := ledger.Read(path)
	n := 0
	for _, e := range entries {
		n += len(e.Evidence)
	}
	return n
}

// findGoal finds a goal by its id, its number (G001, g1, 1) or the id of
// one of its criteria (G001-C2).
func findGoal(f *goal.File, id string) *goal.Goal {
	num := func(s string) int {
		s = strings.TrimPrefix(strings.TrimPrefix(s, "G"), "g")
		if i := strings.IndexAny(s, "-"); i >= 0 {
			s = s[:i]
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return -1
		}
		return n
	}
	for i := range f.Goals {
		if f.Goals[i].ID == id || strings.EqualFold(f.Goals[i].ID, id) {
			return &f.Goals[i]
		}
	}
	if n := num(id); n > 0 {
		for i := range f.Goals {
			if num(f.Goals[i].ID) == n {
				return &f.Goals[i]
			}
		}
	}
	return nil
}

func newGoalsLedgerCmd() *cobra.Command {
	var asJSON, verify, repairTorn bool
	var runID string
	cmd := &cobra.Command{
		Use:   "ledger [RUN]",
		Short: "Print a run's ledger; --verify checks its hash chain and says where it breaks (exit 1)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				// As `ultra goals RUN` takes it; --run says the same.
				if cmd.Flags().Changed("run") && runID != args[0] {
					return usageErr("the run is named twice (%s and --run %s): name it once", args[0], runID)
				}
				runID = args[0]
			}
			if runID != "" || cmd.Flags().Changed("run") {
				if err := requireRunID(runID); err != nil {
					return err
				}
			}
			p, row, err := goalsRun(cmd, runID)
			if err != nil {
				return err
			}
			path := filepath.Join(row.Workdir, filepath.FromSlash(agent.RecordsOf(row).Ledger()))
			w := io.Writer(&printableWriter{w: cmd.OutOrStdout()})
			if repairTorn && p.shared {
				return usageErr("run %s is driven on another machine: repair its ledger there (this is the fleet's copy of its records)", row.ID)
			}
			if repairTorn {
				// A person's explicit repair of a line a crash cut short: the
				// torn bytes are kept beside the ledger, never dropped.
				saved, err := ledger.RepairTorn(path)
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				fmt.Fprintf(w, "%s: the torn last line is cut off and kept in %s\n", path, saved)
				return nil
			}
			if verify {
				rep := ledger.Verify(path)
				problem := rep.Problem
				if problem == nil && p.shared {
					problem = agent.CheckShared(row)
				} else if problem == nil {
					problem = agent.CheckRecorded(cmd.Context(), p.StateRoot, row)
				}
				if asJSON {
					out := map[string]any{"ledger": path, "entries": rep.Entries, "head": rep.Head, "head_seq": rep.HeadSeq, "intact": problem == nil}
					if problem != nil {
						out["problem"] = problem.Error()
					}
					if err := writeJSON(w, out); err != nil {
						return err
					}
				} else if problem == nil && p.shared {
					fmt.Fprintf(w, "run %s's ledger in the shared store: %s; goals.json and the brief match it (its %d evidence files stay on the machine that captured them)\n", row.ID, rep, evidenceCount(path))
				} else if problem == nil {
					fmt.Fprintf(w, "%s: %s; goals.json, the brief and %d evidence files match it\n", path, rep, evidenceCount(path))
				}
				if problem != nil {
					return &exitError{code: 1, err: fmt.Errorf("%s: %v", path, problem)}
				}
				return nil
			}
			entries, err := ledger.Read(path)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if asJSON {
				return writeJSON(w, entries)
			}
			if len(entries) == 0 {
				fmt.Fprintf(w, "run %s has an empty ledger\n", row.ID)
			}
			for _, e := range entries {
				ids := strings.Trim(e.Goal+" "+e.Criterion, " ")
				fmt.Fprintf(w, "%4d  %s  %-18s %-14s %s\n", e.Seq, e.Time.Local().Format("15:04:05"), e.Kind, ids, clip(e.Text, 140))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&verify, "verify", false, "check the hash chain, the signatures, the head ultra recorded, goals.json, the brief and the evidence files")
	cmd.Flags().BoolVar(&repairTorn, "repair-torn", false, "after a crash cut the last line short: keep its bytes in a .torn file beside the ledger and cut the ledger back to its last whole line")
	cmd.Flags().StringVar(&runID, "run", "", "the run (default: the latest)")
	return cmd
}

func newGoalsSteerCmd() *cobra.Command {
	var s goal.Steer
	var order, checkJSON, criteriaJSON, goalsJSON string
	var essential string
	cmd := &cobra.Command{
		Use:   "steer RUN --kind KIND --evidence TEXT --rationale TEXT [...]",
		Short: "A person's structured change to a run's accepted goals, recorded in the ledger",
		Long: `Kinds: ` + strings.Join(goal.SteerKinds, ", ") + `.
Every change needs --evidence (what was observed) and --rationale (why the change).
Only a person may weaken or remove an accepted essential criterion.`,
		Example: `  ultra goals steer RUN --kind add_subgoal --title "Export as CSV" --objective "..." --criteria @criteria.json --evidence "users asked" --rationale "in scope"
  ultra goals steer RUN --kind revise_criterion --goal G002 --criterion G002-C3 --check '{"run":"make e2e","expect_exit":0}' --evidence "..." --rationale "..."
  ultra goals steer RUN --kind mark_blocked_superseded --goal G003 --note "needs the vendor's API" --evidence "..." --rationale "..."`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRunID(args[0]); err != nil {
				return err
			}
			// A person's typing mistakes are usage errors, not steering the
			// ledger records.
			switch {
			case s.Kind == "":
				return usageErr("--kind is required: one of %s", strings.Join(goal.SteerKinds, ", "))
			case !slices.Contains(goal.SteerKinds, s.Kind):
				return usageErr("unknown --kind %q: one of %s (natural-language steering is not accepted)", s.Kind, strings.Join(goal.SteerKinds, ", "))
			case strings.TrimSpace(s.Evidence) == "":
				return usageErr("--evidence is required: what was observed that calls for the change")
			case strings.TrimSpace(s.Rationale) == "":
				return usageErr("--rationale is required: why the change")
			}
			if order != "" {
				s.Order = strings.Split(order, ",")
			}
			for _, x := range []struct {
				flag, text string
				into       any
			}{{"--check", checkJSON, &s.Check}, {"--criteria", criteriaJSON, &s.Criteria}, {"--split", goalsJSON, &s.Split}} {
				if x.text == "" {
					continue
				}
				text := x.text
				if strings.HasPrefix(text, "@") {
					b, err := os.ReadFile(text[1:])
					if err != nil {
						return usageErr("%s: %v", x.flag, err)
					}
					text = string(b)
				}
				if err := json.Unmarshal([]byte(text), x.into); err != nil {
					return usageErr("%s: not valid JSON: %v", x.flag, err)
				}
			}
			switch essential {
			case "":
			case "true", "false":
				v := essential == "true"
				s.Essential = &v
			default:
				return usageErr("--essential must be true or false")
			}
			p, st, row, err := openRun(cmd, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			if s.Goal != "" {
				if f, _ := agent.ReadGoals(row.Workdir, agent.RecordsOf(row)); f != nil {
					if g := findGoal(f, s.Goal); g != nil {
						s.Goal = g.ID
					}
				}
			}
			f, err := agent.SteerGoals(cmd.Context(), p.agentOptions(st), row.ID, s)
			var refused *agent.SteerRefused
			switch {
			case errors.As(err, &refused):
				return &exitError{code: 1, err: fmt.Errorf("steering refused (recorded in the ledger): %w", err)}
			case errors.Is(err, agent.ErrBusy):
				return usageErr("%v", err)
			case err != nil:
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "steering accepted: %s (recorded in %s)\n", s.Kind, agent.RecordsOf(row).Ledger())
			printGoals(&printableWriter{w: cmd.OutOrStdout()}, row, f)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&s.Kind, "kind", "", "one of: "+strings.Join(goal.SteerKinds, ", "))
	fl.StringVar(&s.Goal, "goal", "", "the goal (id or G001)")
	fl.StringVar(&s.Criterion, "criterion", "", "the criterion (e.g. G001-C2)")
	fl.StringVar(&s.Title, "title", "", "a goal's title (add_subgoal, revise_pending_wording)")
	fl.StringVar(&s.Objective, "objective", "", "a goal's objective")
	fl.StringVar(&s.Scenario, "scenario", "", "a criterion's scenario (revise_pending_wording)")
	fl.StringVar(&order, "order", "", "reorder_pending: the pending goals' ids, comma-separated, in the new order")
	fl.StringVar(&checkJSON, "check", "", "revise_criterion: the new check, JSON (or @file)")
	fl.StringVar(&criteriaJSON, "criteria", "", "add_subgoal: the new goal's criteria, JSON array as in the goals tool (or @file)")
	fl.StringVar(&goalsJSON, "split", "", "split_subgoal: the goals that replace it, JSON array as in the goals tool (or @file)")
	fl.StringVar(&essential, "essential", "", "revise_criterion: true or false")
	fl.StringVar(&s.Note, "note", "", "annotate_ledger, mark_blocked_superseded: the note")
	fl.StringVar(&s.Evidence, "evidence", "", "what was observed that calls for the change (required)")
	fl.StringVar(&s.Rationale, "rationale", "", "why the change (required)")
	return cmd
}

// checkJSON is a check as JSON for a person: & < > as they are.
func checkJSON(c goal.Check) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(c)
	return strings.TrimSpace(b.String())
}
