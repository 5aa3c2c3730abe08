package main

import (
	"strings"

	"github.com/spf13/cobra"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "ultra",
		Short:         "An autonomous coding agent whose workflow is enforced by code",
		Long:          "ultra takes a task from requirement to verified change with nobody watching:\nplanning → building → verifying → (iterating → verifying)* → complete.\nOnly a passing run of the project's own tests, made by ultra itself, completes a run.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.PersistentFlags().StringP("dir", "C", "", "work in this directory instead of the current one")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see %s --help)", err, c.CommandPath())
	})
	root.AddCommand(newRunCmd(), newPlanCmd(), newGoalsCmd(), newResumeCmd(), newApproveCmd(), newRunsCmd(), newStatusCmd(), newCancelCmd(), newModelsCmd(), newVerifyCmd(), newGateCmd(), newDiffCmd(), newLandCmd(), newUndoCmd(), newGCCmd(), newHookCmd(), newDoctorCmd(), newDevCmd())
	return root
}

// isUsage recognises cobra's own argument errors.
func isUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument", "flag needs an argument"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
