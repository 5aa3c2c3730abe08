package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "ultra",
		Short: "An autonomous coding agent whose workflow is enforced by code",
		Long: "ultra takes a task or a brief from requirement to verified change with nobody watching:\n" +
			"planning (goals with success criteria) → per goal: building → verifying → (iterating → verifying)* → commit\n" +
			"→ final gate → review → complete.\n" +
			"A goal completes only when ultra itself has run the project's tests and every criterion's scenario and seen them pass.\n\n" +
			"In a terminal, ultra with no command opens the TUI: type a task, watch it, approve calls and plans, steer its axes\n" +
			"(/help inside; ultra attach RUN watches a run another terminal started).",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.PersistentFlags().StringP("dir", "C", "", "work in this directory instead of the current one")
	// ultra -p "question": a chat that prints its answer and exits.
	var pf chatFlags
	var tf tuiFlags
	var printMode bool
	pf.register(root)
	root.Flags().VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "base-url", "model", "provider", "output", "output-format", "input-format", "permission-profile", "model-mode":
		default:
			f.Hidden = true
		}
	})
	tf.register(root)
	root.Flags().BoolVarP(&printMode, "print", "p", false, "print mode: answer the question (arguments or stdin) read-only, print the answer and exit")
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if printMode {
			return chat(cmd, &pf, args, true)
		}
		if len(args) > 0 {
			return usageErr("unknown command %q for \"ultra\" (see ultra --help)", args[0])
		}
		if interactive() {
			return openTUI(cmd, &pf, &tf, "")
		}
		return cmd.Help()
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see %s --help)", err, c.CommandPath())
	})
	root.AddCommand(newRunCmd(), newPlanCmd(), newGoalsCmd(), newResumeCmd(), newApproveCmd(), newRunsCmd(), newStatusCmd(), newCancelCmd(), newModelsCmd(), newVerifyCmd(), newGateCmd(), newDiffCmd(), newLandCmd(), newUndoCmd(), newGCCmd(), newHookCmd(), newDoctorCmd(), newDevCmd(), newTasksCmd(), newReportCmd(), newResearchCmd(), newReviewCmd(), newMCPCmd(), newSkillsCmd())
	root.AddCommand(newChatCmd(), newSteerCmd(), newAutonomousCmd(), newNextCmd(), newPauseCmd(), newStopCmd(), newRepairCmd(), newAttachCmd(), newServeCmd())
	root.AddCommand(newACPCmd(), newScheduleCmd(), newWorkerCmd(), newSubmitCmd())
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
