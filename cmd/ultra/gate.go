package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/workspace"
)

func newGateCmd() *cobra.Command {
	g := &cobra.Command{
		Use:   "gate",
		Short: "Show or waive a run's gate decisions",
	}
	var asJSON bool
	show := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "List the gate decisions of a run, with its baseline",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, st, row, err := openRun(cmd, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			root, row, _, err := p.sharedView(cmd, st, row)
			if err != nil {
				return err
			}
			dir := agent.RunDir(root, row.ID)
			ds, err := gatefile.Read(dir)
			if err != nil {
				return err
			}
			base, err := gatefile.ReadBaseline(dir)
			if err != nil {
				return err
			}
			if asJSON {
				if ds == nil {
					ds = []gate.Decision{}
				}
				return writeJSON(cmd.OutOrStdout(), map[string]any{"run": row.ID, "baseline": base, "decisions": ds})
			}
			printGate(cmd.OutOrStdout(), row.ID, base, ds)
			return nil
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var reason, by string
	waive := &cobra.Command{
		Use:   "waive RUN_ID --reason TEXT",
		Short: "Record a person's waiver of a run's gate; an escalated run without goals becomes complete, one with goals goes on when resumed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return usageErr("a waiver needs a reason: --reason \"...\"")
			}
			p, st, row, err := openRun(cmd, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			if by == "" {
				by = whoAmI(p.Root)
			}
			out, d, err := agent.Waive(cmd.Context(), p.agentOptions(st), row.ID, by, reason)
			if errors.Is(err, agent.ErrBusy) || (err != nil && strings.Contains(err.Error(), "already complete")) {
				return usageErr("%v", err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "gate decision %d: %s\nrun %s: %s (%s)\n", d.N, d.Summary(), out.RunID, out.Status, out.Phase)
			if out.Status != agent.StatusComplete && out.Reason != "" {
				fmt.Fprintln(cmd.OutOrStdout(), out.Reason)
			}
			return nil
		},
	}
	waive.Flags().StringVar(&reason, "reason", "", "why the work is accepted without a pass (required)")
	waive.Flags().StringVar(&by, "by", "", "who waives (default: git user.name, else $USER)")
	g.AddCommand(show, waive)
	return g
}

func whoAmI(dir string) string {
	if out, err := exec.Command("git", "-C", dir, "config", "user.name").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		return strings.TrimSpace(string(out))
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

func printGate(w io.Writer, run string, base *gate.Baseline, ds []gate.Decision) {
	fmt.Fprintf(w, "run %s\n", run)
	switch {
	case base == nil:
		fmt.Fprintln(w, "baseline  none")
	case !base.Evaluated:
		fmt.Fprintf(w, "baseline  not evaluated: %s\n", base.Reason)
	default:
		errs := ""
		if base.Errors > 0 {
			errs = fmt.Sprintf(", %d errors", base.Errors)
		}
		fmt.Fprintf(w, "baseline  tree %s · %d executed, %d failed%s, %d skipped · %s\n", short(base.Tree), base.Executed, base.Failed, errs, base.Skipped, strings.Join(base.Sources, ", "))
	}
	if len(ds) == 0 {
		fmt.Fprintln(w, "no gate decisions yet")
		return
	}
	for _, d := range ds {
		c := d.Counts
		extra := ""
		switch {
		case d.CachedFrom != 0:
			extra = fmt.Sprintf(" · cached from %d", d.CachedFrom)
		case d.Reused != "":
			extra = " · from the gate cache"
		case d.Focused:
			extra = " · failed tests first"
		case d.Waiver != nil:
			extra = " · waived by " + d.Waiver.By
		}
		fmt.Fprintf(w, "gate-%d  %s  %-13s tree %s · passed %d, failed %d, errors %d, skipped %d%s\n",
			d.N, d.Time.Local().Format("2006-01-02 15:04:05"), d.Status, short(d.Tree), c.Passed, c.Failed, c.Errors, c.Skipped, extra)
		for _, r := range d.Reasons {
			fmt.Fprintf(w, "          %s\n", r)
		}
		for i, f := range d.Failing {
			if i == 10 {
				fmt.Fprintf(w, "          … %d more failing\n", len(d.Failing)-10)
				break
			}
			loc := ""
			if f.File != "" {
				loc = fmt.Sprintf(" (%s:%d)", f.File, f.Line)
			}
			fmt.Fprintf(w, "          ✗ %s%s\n", f.Name, loc)
		}
	}
}

func short(s string) string {
	if s == "" {
		return "-"
	}
	return workspace.Short(s)
}
