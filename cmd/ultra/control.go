package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/store"
)

// askWait is how long a command waits for a live run to take its request
// before saying it is pending.
const askWait = 3 * time.Second

// printAsked says what became of a request, and turns a refusal into a
// usage error (exit 2).
func printAsked(cmd *cobra.Command, what string, a *agent.Asked, asJSON bool) error {
	if asJSON {
		if err := writeJSON(cmd.OutOrStdout(), a); err != nil {
			return err
		}
	} else {
		switch {
		case strings.HasPrefix(a.Outcome, "refused"):
		case a.Outcome == "pending" && !a.Live:
			fmt.Fprintf(cmd.OutOrStdout(), "%s: recorded for run %s, which no process drives now; it is taken when the run resumes\n", what, a.Run)
		case a.Outcome == "pending":
			fmt.Fprintf(cmd.OutOrStdout(), "%s: pending: run %s takes it at its scope (ultra status %s shows it)\n", what, a.Run, a.Run)
		case a.Live:
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s by run %s after %s\n", what, a.Outcome, a.Run, a.Waited.Round(time.Millisecond))
		default:
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s to run %s, which no process drives now (ultra resume %s continues it)\n", what, a.Outcome, a.Run, a.Run)
		}
	}
	if strings.HasPrefix(a.Outcome, "refused") {
		return usageErr("%s %s", what, a.Outcome)
	}
	return nil
}

// requestErr gives the errors of requests their exit codes.
func requestErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agent.ErrNotLive), errors.Is(err, agent.ErrBusy), errors.Is(err, store.ErrNotFound):
		return usageErr("%v", err)
	case strings.Contains(err.Error(), "is cancelled"), strings.Contains(err.Error(), "is complete"),
		strings.Contains(err.Error(), "unknown scope"), strings.Contains(err.Error(), "invalid "), strings.Contains(err.Error(), "nothing to change"),
		strings.Contains(err.Error(), "no tool call waiting"), strings.Contains(err.Error(), "waits on call"), strings.Contains(err.Error(), "surface is"):
		return usageErr("%v", err)
	}
	return err
}

// steerFlags are the axes a person may steer.
type steerFlags struct {
	mode, control, profile, modelMode, scope, reason string
	asJSON                                           bool
}

func (s *steerFlags) register(cmd *cobra.Command, withControl bool) {
	fl := cmd.Flags()
	fl.StringVar(&s.mode, "mode", "", "work mode: "+strings.Join(axes.Values[axes.Mode], ", "))
	if withControl {
		fl.StringVar(&s.control, "control", "", "run control: "+strings.Join(axes.Values[axes.Control], ", "))
	}
	fl.StringVar(&s.profile, "permission-profile", "", "permission profile: "+strings.Join(axes.Values[axes.Permission], ", "))
	fl.StringVar(&s.modelMode, "model-mode", "", "model mode: "+strings.Join(axes.Values[axes.ModelMode], ", "))
	fl.StringVar(&s.scope, "scope", axes.ScopeAfterTool, "when a live run applies it: "+strings.Join(axes.Scopes, ", "))
	fl.StringVar(&s.reason, "reason", "", "why (recorded with the transition)")
	fl.BoolVar(&s.asJSON, "json", false, "print the outcome as JSON")
}

func (s *steerFlags) axes() map[string]string {
	out := map[string]string{}
	for name, v := range map[string]string{axes.Mode: s.mode, axes.Control: s.control, axes.Permission: s.profile, axes.ModelMode: s.modelMode} {
		if strings.TrimSpace(v) != "" {
			out[name] = v
		}
	}
	return out
}

func steer(cmd *cobra.Command, id string, s *steerFlags) error {
	p, st, row, err := openRun(cmd, id)
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := agent.Steer(cmd.Context(), p.agentOptions(st), row.ID, agent.SteerRequest{Axes: s.axes(), Scope: s.scope, Reason: s.reason, Wait: askWait})
	if err != nil {
		return requestErr(err)
	}
	return printAsked(cmd, "steer", a, s.asJSON)
}

func newSteerCmd() *cobra.Command {
	var s steerFlags
	cmd := &cobra.Command{
		Use:   "steer RUN [--mode M] [--control C] [--permission-profile P] [--model-mode F] [--scope S] [--reason R]",
		Short: "Change the axes of a run, live or not, at a scope",
		Long: "ultra steer changes one or more axes of a run. A run another process drives takes the request from the\n" +
			"store within a second and applies it at its scope: now (an answer in flight is asked again),\n" +
			"after-current-tool (the default), after-current-unit (when the phase ends) or next-milestone (a verification,\n" +
			"a goal, a plan accepted, a review). A tool call that runs is never changed. A run nothing drives is changed\n" +
			"at once. Impossible changes (a chat cannot become a build run, a profile that needs a sandbox where there is\n" +
			"none) are refused with the reason (exit 2). Every change is recorded: ultra status RUN shows the transitions.",
		Example: `  ultra steer RUN --control autonomous
  ultra steer RUN --permission-profile restricted --scope now --reason "read-only from here"
  ultra steer RUN --mode repair --control assisted --scope after-current-unit`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return steer(cmd, args[0], &s) },
	}
	s.register(cmd, true)
	return cmd
}

func newAutonomousCmd() *cobra.Command {
	var s steerFlags
	cmd := &cobra.Command{
		Use:   "autonomous RUN",
		Short: "Let a run go on by itself: ultra steer RUN --control autonomous",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s.control = "autonomous"
			return steer(cmd, args[0], &s)
		},
	}
	s.register(cmd, false)
	return cmd
}

// newControlCmd is ultra pause, stop or next for a live run.
func newControlCmd(kind, use, short, long string) *cobra.Command {
	var reason string
	var asJSON bool
	var f runFlags
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, st, row, err := openRun(cmd, args[0])
			if err != nil {
				return err
			}
			a, err := agent.Control(cmd.Context(), p.agentOptions(st), row.ID, kind, reason, askWait)
			st.Close()
			if kind == store.ReqNext && errors.Is(err, agent.ErrNotLive) {
				// Nothing drives the run: resume it for one unit.
				f.oneUnit = true
				return continueRun(cmd, &f, row.ID, agent.ResumeOptions{})
			}
			if err != nil {
				return requestErr(err)
			}
			return printAsked(cmd, kind, a, asJSON)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome as JSON")
	if kind == store.ReqNext {
		f.register(cmd)
	}
	return cmd
}

func newNextCmd() *cobra.Command {
	return newControlCmd(store.ReqNext, "next RUN", "Let a paused run go on for one unit (a phase)",
		"ultra next lets a run that waits at the end of a unit (assisted control) go on for one more. A run no\n"+
			"process drives (paused, stopped, interrupted) is resumed here for one unit, then pauses again.")
}

func newPauseCmd() *cobra.Command {
	return newControlCmd(store.ReqPause, "pause RUN", "Pause a live run at its next safe point (resumable: ultra next or resume)",
		"ultra pause asks a running run to stop at its next point between tool calls; its state is kept and\n"+
			"ultra next RUN or ultra resume RUN goes on. A tool call that runs is never cut short.")
}

func newStopCmd() *cobra.Command {
	return newControlCmd(store.ReqStop, "stop RUN", "Stop a run: it is not resumed until a person resumes it",
		"ultra stop asks a running run to stop at its next point between tool calls (a run nothing drives is\n"+
			"marked stopped at once). Unlike pause, nothing resumes it by itself; ultra resume RUN does.")
}
