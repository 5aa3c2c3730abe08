package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/fleet"
	"github.com/ultra-dev/ultra/internal/store"
)

func newCancelCmd() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "cancel RUN_ID",
		Short: "Stop a run for good (a running one is interrupted first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, st, row, err := openRun(cmd, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			queued := row.Status == store.StatusQueued
			out, err := agent.Cancel(cmd.Context(), p.agentOptions(st), row.ID, reason)
			if errors.Is(err, agent.ErrBusy) || (err != nil && strings.Contains(err.Error(), "already")) {
				return usageErr("%v", err)
			}
			if err != nil {
				return err
			}
			if url := sharedDB(); queued && url != "" {
				// Out of the queue as well: no worker takes it.
				if _, err := fleet.CancelJob(cmd.Context(), url, row.ID); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "ultra: run %s is cancelled; its job stays in the queue (%v), and the worker that takes it leaves it\n", row.ID, err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "run %s cancelled: %s\n", out.RunID, out.Reason)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded with the transition)")
	return cmd
}
