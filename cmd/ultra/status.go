package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/store"
)

func newStatusCmd() *cobra.Command {
	var asJSON, verbose bool
	var n int
	cmd := &cobra.Command{
		Use:   "status [RUN_ID]",
		Short: "Show a run's phase, axes, retries, budgets, plan and last events (the latest run's without RUN_ID)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, st, row, err := openRun(cmd, shownRun(args))
			if err != nil {
				return err
			}
			defer st.Close()
			root, row, _, err := p.sharedView(cmd, st, row)
			if err != nil {
				return err
			}
			s, err := agent.Describe(cmd.Context(), st, root, row, n)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			printStatus(&printableWriter{w: cmd.OutOrStdout()}, s, verbose)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVarP(&n, "events", "n", 10, "how many of the last events to show")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "with a gate decision that reuses an earlier one's verdict, the earlier one's reasons too")
	return cmd
}

func printStatus(w io.Writer, s *agent.Status, verbose bool) {
	fmt.Fprintf(w, "run      %s\n", s.ID)
	fmt.Fprintf(w, "task     %s\n", clip(s.Task, 200))
	if s.Schedule != "" {
		fmt.Fprintf(w, "schedule %s (due %s): ultra schedule show %s\n", s.Schedule, s.ScheduleDue.Format(time.RFC3339), s.Schedule)
	}
	fmt.Fprintf(w, "phase    %s\n", s.Phase)
	line := s.Status
	if s.Reason != "" && s.Reason != s.Status { // not "interrupted: interrupted"
		line += ": " + s.Reason
	}
	fmt.Fprintf(w, "status   %s\n", line)
	if s.Class.Next != "" && s.Waiting == "" {
		fmt.Fprintf(w, "next     %s\n", s.Class.Next)
	}
	fmt.Fprintf(w, "axes     %s\n", s.Axes)
	queued := s.Status == store.StatusQueued
	if queued {
		// Its model, workdir, retries and budgets are the worker's to
		// settle when it takes the run.
		fmt.Fprintf(w, "queue    submitted to the fleet: one of its workers (ultra worker --db) takes it and starts it\n")
		fmt.Fprintf(w, "repo     %s\n", s.Repo)
	} else {
		fmt.Fprintf(w, "model    %s/%s\n", s.Provider, s.Model)
		fmt.Fprintf(w, "workdir  %s\n", s.Workdir)
	}
	if ws := s.Workspace; ws.Branch != "" {
		fmt.Fprintf(w, "branch   %s from %s@%s", ws.Branch, ws.Base, short(ws.BaseCommit))
		switch {
		case ws.Landed != "":
			fmt.Fprintf(w, " · landed as %s", short(ws.Landed))
		case ws.Undone != "":
			fmt.Fprint(w, " · undone")
		case ws.Removed != "":
			fmt.Fprint(w, " · worktree removed")
		}
		fmt.Fprintln(w)
	}
	if !queued {
		printSpend(w, s)
	}
	if s.Sandbox != "" {
		fmt.Fprintf(w, "sandbox  %s\n", s.Sandbox)
	}
	if s.Malformed+s.Refusals > 0 {
		fmt.Fprintf(w, "guards   %d refusals · %d malformed calls\n", s.Refusals, s.Malformed)
	}
	if v := s.LastVerify; v != nil {
		fmt.Fprintf(w, "verify   %s: %s (passed %d, failed %d, skipped %d)\n", v.Status, v.Reason, v.Passed, v.Failed, v.Skipped)
		if len(v.Reused) > 0 && verbose {
			fmt.Fprintln(w, "         the reused decision's reasons:")
			for _, r := range v.Reused {
				fmt.Fprintf(w, "         · %s\n", r)
			}
		}
		for _, f := range v.Failing {
			fmt.Fprintf(w, "         ✗ %s\n", f)
		}
	}
	if len(s.Goals) > 0 {
		fmt.Fprintln(w, "goals")
		for _, g := range s.Goals {
			fmt.Fprintf(w, "  %-28s %-12s criteria %d/%d passed, cycle %d — %s\n", g.ID, g.Status, g.Passed, g.Criteria, g.Attempt, clip(g.Title, 60))
		}
	} else if s.Plan != "" {
		fmt.Fprintf(w, "plan\n%s\n", indentBlock(s.Plan))
	}
	if s.PendingPlan != "" {
		fmt.Fprintf(w, "plan waiting for approval (ultra approve %s)\n%s\n", s.ID, indentBlock(s.PendingPlan))
	}
	if pp := s.ProposedPlan; pp != nil {
		fmt.Fprintf(w, "plan proposed by call %s, waiting for a person (ultra approve %s --call %s accepts it)\n%s\n", pp.Call, s.ID, pp.Call, indentBlock(pp.Plan))
	}
	if s.Waiting != "" {
		fmt.Fprintf(w, "waiting  %s\n", s.Waiting)
	}
	if len(s.Pending) > 0 {
		fmt.Fprintln(w, "pending requests")
		for _, q := range s.Pending {
			what := q.Kind
			if len(q.Axes) > 0 {
				var parts []string
				for _, name := range axes.Names {
					if v, ok := q.Axes[name]; ok {
						parts = append(parts, name+" → "+v)
					}
				}
				what += " " + strings.Join(parts, ", ")
			}
			if q.CallID != "" {
				what += " call " + q.CallID
			}
			if q.Scope != "" {
				what += " at " + q.Scope
			}
			fmt.Fprintf(w, "  #%-4d %s  %s  %s %s\n", q.ID, q.At.Local().Format("15:04:05"), what, q.Who, clip(q.Reason, 80))
		}
	}
	if len(s.Todos) > 0 {
		fmt.Fprintln(w, "todos")
		for _, t := range s.Todos {
			fmt.Fprintf(w, "  [%s] %s\n", t.Status, t.Content)
		}
	}
	if len(s.Transitions) > 0 {
		fmt.Fprintln(w, "transitions")
		for _, t := range s.Transitions {
			what := t.From + " → " + t.To
			if t.Kind == "axis" {
				what = t.Axis + ": " + orDash(t.From) + " → " + t.To
			}
			why := t.Reason
			if t.Scope != "" {
				why += " [" + t.Scope + "]"
			}
			fmt.Fprintf(w, "  %s  %-28s %-7s %s\n", t.At.Local().Format("15:04:05"), what, t.By, clip(why, 100))
		}
	}
	if len(s.Events) > 0 {
		fmt.Fprintln(w, "last events")
		for _, e := range s.Events {
			fmt.Fprintf(w, "  #%-4d %s  %-10s %-14s %s\n", e.Seq, e.Time.Local().Format("15:04:05"), e.Phase, e.Type, clip(string(e.Data), 110))
		}
	}
}

// requireRunID refuses an empty run id (ultra status "") as a usage
// error, as an unknown one is.
func requireRunID(id string) error {
	if strings.TrimSpace(id) == "" {
		return usageErr("the run id is empty: give a run id, or a unique prefix of one (ultra runs lists them)")
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func indentBlock(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// printSpend prints what a run used of its retries and budgets.
func printSpend(w io.Writer, s *agent.Status) {
	fmt.Fprintf(w, "retries  %d of %d used (%d left)\n", s.Retries.Used, s.Retries.Max, s.Retries.Left)
	if l := s.Limit; l.What != "" && l.What != "retries" {
		fmt.Fprintf(w, "limit    %d of %d %s used (%d left): ends the run before the retries do\n", l.Used, l.Max, l.What, l.Left)
	}
	b, u := s.Budgets, s.Used
	fmt.Fprintf(w, "budgets  turns %d/%d · input tokens %d/%d · output tokens %d/%d · wall %s/%s\n",
		u.Turns, b.MaxTurns, u.InputTokens, b.MaxInputTokens, u.OutputTokens, b.MaxOutputTokens,
		u.Wall.Round(time.Second), b.MaxWall)
	if b.MaxCost > 0 {
		fmt.Fprintf(w, "cost     $%.4f of $%.2f\n", u.Cost, b.MaxCost)
	} else {
		fmt.Fprintf(w, "cost     $%.4f\n", u.Cost)
	}
}
