package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/store"
)

func newResumeCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "resume RUN_ID [GUIDANCE]",
		Short: "Continue an escalated, interrupted or failed run from where it stood",
		Long: "resume continues a run from its persisted phase and history. An escalated run goes back to work\n" +
			"(iterating after failed verifications) with a fresh allotment of retries and of any budget that ran out.\n" +
			"GUIDANCE, when given, is passed to the model as a person's instructions.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			guidance := ""
			if len(args) == 2 {
				guidance = strings.TrimSpace(args[1])
			}
			return continueRun(cmd, &f, args[0], agent.ResumeOptions{Guidance: guidance})
		},
	}
	f.register(cmd)
	return cmd
}

func newApproveCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "approve RUN_ID [GUIDANCE]",
		Short: "Accept the plan a run waits on, and continue it",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			guidance := ""
			if len(args) == 2 {
				guidance = strings.TrimSpace(args[1])
			}
			return continueRun(cmd, &f, args[0], agent.ResumeOptions{Guidance: guidance, Approve: true})
		},
	}
	f.register(cmd)
	return cmd
}

func continueRun(cmd *cobra.Command, f *runFlags, id string, ro agent.ResumeOptions) error {
	p, st, row, err := openRun(cmd, id)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := f.validate(); err != nil {
		return err
	}
	if len(f.verifyCmds) > 0 {
		return usageErr("--verify-command cannot change a run's test command: it is fixed when the run starts")
	}
	pc, err := f.resolveProvider(p, row.Provider, row.Model, row.BaseURL)
	if err != nil {
		return err
	}
	sinks, err := f.sinks(cmd.OutOrStdout())
	if err != nil {
		return err
	}
	o := f.options(p, pc, sinks)
	o.Store = st
	ro.Budgets = f.explicitBudgets()
	ctx, stop := interruptible()
	defer stop()
	out, err := agent.Resume(ctx, o, row.ID, ro)
	if errors.Is(err, agent.ErrBusy) || agent.IsPreflight(err) || (err != nil && strings.Contains(err.Error(), "ambiguous")) {
		return &exitError{code: agent.ExitUsage, err: err}
	}
	if err != nil && out == nil && !errors.Is(err, store.ErrNotFound) && isStateError(err) {
		return usageErr("%v", err)
	}
	return finished(out, err)
}

// isStateError recognises refusals to resume a run in the wrong state.
func isStateError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "already complete") || strings.Contains(s, "was cancelled") || strings.Contains(s, "no plan waiting")
}
