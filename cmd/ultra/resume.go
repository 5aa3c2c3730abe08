package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/fleet"
	"github.com/ultra-dev/ultra/internal/store"
)

func newResumeCmd() *cobra.Command {
	var f runFlags
	var takeOver, rescue bool
	cmd := &cobra.Command{
		Use:   "resume RUN_ID [GUIDANCE]",
		Short: "Continue an escalated, interrupted or failed run from where it stood",
		Long: "resume continues a run from its persisted phase and history. An escalated run goes back to work\n" +
			"(iterating after failed verifications) with a fresh allotment of retries and of any budget that ran out.\n" +
			"GUIDANCE, when given, is passed to the model as a person's instructions.\n\n" +
			"A fleet's run (ULTRA_DB set) that stopped short can be resumed from any machine: the ask is queued,\n" +
			"and a fleet worker takes the run over from its last saved step and goes on with it (docs/scale.md).\n" +
			"One ask waits at a time: a second one is refused until a worker has taken the first.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			guidance := ""
			if len(args) == 2 {
				guidance = strings.TrimSpace(args[1])
			}
			if takeOver {
				if err := takeOverRun(cmd, args[0]); err != nil {
					return err
				}
			}
			return continueRun(cmd, &f, args[0], agent.ResumeOptions{Guidance: guidance, Rescue: rescue && takeOver})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&takeOver, "take-over", false, "first move the run, whose machine stopped mid-run, to this repository's clone (set by ultra worker --db)")
	_ = cmd.Flags().MarkHidden("take-over")
	cmd.Flags().BoolVar(&rescue, "rescue", false, "with --take-over: no person asked; the run's machine stopped (set by ultra worker --db)")
	_ = cmd.Flags().MarkHidden("rescue")
	return cmd
}

// takeOverRun moves a fleet's run to a worktree of this repository, from
// the snapshot of its last saved step.
func takeOverRun(cmd *cobra.Command, id string) error {
	p, st, row, err := openRun(cmd, id)
	if err != nil {
		return err
	}
	defer st.Close()
	if p.Fleet {
		return usageErr("--take-over works in a clone of the run's repository")
	}
	dir, err := p.worktreeDir()
	if err != nil {
		return usageErr("%v", err)
	}
	return agent.TakeOver(cmd.Context(), p.agentOptions(st), row, p.Root, dir, p.Config.Workspace.Setup)
}

func newApproveCmd() *cobra.Command {
	var f runFlags
	var callID, deny, profile string
	var forRun, readOnly, autonomous, asJSON, takeOver bool
	cmd := &cobra.Command{
		Use:   "approve RUN_ID [GUIDANCE]",
		Short: "Accept the plan a run waits on, or allow (deny) the tool call a manual run waits on",
		Long: "ultra approve RUN accepts the plan (goals and criteria) a run waits on and continues it; with\n" +
			"--autonomous the accepted plan runs autonomously (the work mode becomes build, the run control\n" +
			"autonomous, and --permission-profile sets the profile), each change recorded.\n\n" +
			"In manual run control every tool call waits for a person: ultra approve RUN [--call ID] allows it\n" +
			"(--for-run: its tool for the rest of the run; --read-only: every read-only call, read, glob and grep,\n" +
			"for the rest of the run), ultra approve RUN --call ID --deny \"reason\" refuses it (--for-run: and its tool for the rest of the run)\n" +
			"and the model reads the reason. A live run takes the decision within a second; a run that stopped\n" +
			"to wait (--no-wait) is continued here.",
		Example: `  ultra approve RUN                          # accept the plan
  ultra approve RUN --autonomous --permission-profile trusted
  ultra approve RUN --call call_3            # allow the waiting call
  ultra approve RUN --read-only              # allow it, and every read-only call from now on
  ultra approve RUN --call call_3 --deny "do not touch the lockfile"`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			guidance := ""
			if len(args) == 2 {
				guidance = strings.TrimSpace(args[1])
			}
			if takeOver {
				if err := takeOverRun(cmd, args[0]); err != nil {
					return err
				}
			}
			decide := callID != "" || cmd.Flags().Changed("deny") || forRun || readOnly || waitsForCall(cmd, args[0])
			if !decide {
				ro := agent.ResumeOptions{Guidance: guidance, Approve: true}
				if autonomous {
					ro.Steer = map[string]string{"control": "autonomous"}
				}
				if profile != "" {
					if ro.Steer == nil {
						ro.Steer = map[string]string{}
					}
					ro.Steer["permission_profile"] = profile
				}
				return continueRun(cmd, &f, args[0], ro)
			}
			if autonomous || profile != "" {
				return usageErr("--autonomous and --permission-profile go with accepting a plan, not with --call or --deny")
			}
			if cmd.Flags().Changed("deny") && strings.TrimSpace(deny) == "" {
				return usageErr("--deny needs a reason: the model reads it")
			}
			p, st, row, err := openRun(cmd, args[0])
			if err != nil {
				return err
			}
			allow := !cmd.Flags().Changed("deny")
			scope := ""
			switch {
			case forRun && readOnly:
				st.Close()
				return usageErr("--for-run and --read-only are two answers: --for-run allows the call's tool, --read-only every read-only call")
			case forRun:
				scope = agent.ApproveForRun
			case readOnly:
				scope = agent.ApproveReadOnly
			}
			if scope == agent.ApproveReadOnly && !allow {
				st.Close()
				return usageErr("--deny goes with --for-run (its tool refused for the rest of the run), not with --read-only")
			}
			a, err := agent.Decide(cmd.Context(), p.agentOptions(st), row.ID, callID, allow, scope, firstNonEmptyStr(deny, guidance), askWait)
			st.Close()
			if err != nil {
				return requestErr(err)
			}
			what := "approve"
			if !allow {
				what = "deny"
			}
			if a.Live || a.Outcome != "pending" {
				return printAsked(cmd, what, a, asJSON)
			}
			// The run stopped to wait for this decision: continue it.
			return continueRun(cmd, &f, row.ID, agent.ResumeOptions{})
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&callID, "call", "", "the tool call to allow or deny (default: the one the run waits on)")
	fl.StringVar(&deny, "deny", "", "refuse the call, with a reason the model reads")
	fl.BoolVar(&forRun, "for-run", false, "allow the call's tool for the rest of the run (with --deny: refuse it for the rest of the run, whatever the run control)")
	fl.BoolVar(&readOnly, "read-only", false, "allow every read-only call (read, glob, grep) for the rest of the run, the waiting one when it reads (a call that writes goes on waiting)")
	fl.BoolVar(&autonomous, "autonomous", false, "accept the plan and let it run autonomously")
	fl.StringVar(&profile, "permission-profile", "", "with an accepted plan: the permission profile it runs with")
	fl.BoolVar(&asJSON, "json", false, "print the outcome of a decision as JSON")
	fl.BoolVar(&takeOver, "take-over", false, "first move the run, a fleet's, to this repository's clone (set by ultra worker --db)")
	_ = fl.MarkHidden("take-over")
	return cmd
}

func firstNonEmptyStr(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
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
	if queued, err := p.throughFleet(cmd, st, row, ro, budgetFlags(cmd)); queued || err != nil {
		return err
	}
	if err := p.goesOnHere(cmd, st, row); err != nil {
		return err
	}
	if len(f.verifyCmds) > 0 {
		return usageErr("--verify-command cannot change a run's test command: it is fixed when the run starts")
	}
	o, err := runOptions(cmd, f, p, st, cmd.OutOrStdout(), row, wouldContinue(row))
	if err != nil {
		return err
	}
	defer closeSinks(o)
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
	return strings.Contains(s, "already complete") || strings.Contains(s, "was cancelled") || strings.Contains(s, "no plan waiting") || strings.Contains(s, "waits for a person's decision")
}

// wouldContinue reports whether resuming row would go on to the model;
// the other cases are refused by agent.Resume with their own reasons, and
// the model server does not need to be checked for them.
func wouldContinue(row *store.Run) bool {
	return !agent.Live(row) && row.Status != agent.StatusComplete && row.Status != agent.StatusCancelled &&
		row.Workspace.Fate() == ""
}

// waitsForCall reports that run id waits for a decision on a tool call
// (ultra approve RUN then allows it).
func waitsForCall(cmd *cobra.Command, id string) bool {
	_, st, row, err := openRun(cmd, id)
	if err != nil {
		return false
	}
	defer st.Close()
	return agent.WaitsForCall(row)
}

// throughFleet queues a person's resume (or acceptance of the plan) of a
// fleet's run that stopped short and is not this checkout's, for the
// fleet's workers: one takes the run over from its last saved step and
// goes on with it as ro says. false: the run goes on here, or is refused
// as goesOnHere says.
func (p *project) throughFleet(cmd *cobra.Command, st *store.Store, row *store.Run, ro agent.ResumeOptions, budgets map[string]string) (bool, error) {
	if sharedDB() == "" || p.owns(row) || !agent.Resumable(row.Status) {
		return false, nil
	}
	ask := fleet.ResumeAsk{Guidance: ro.Guidance, Approve: ro.Approve, Steer: ro.Steer, Budgets: budgets}
	replaced, err := fleet.Resume(cmd.Context(), sharedDB(), st, row.ID, ask, time.Now())
	if err != nil {
		return false, usageErr("%v", err)
	}
	what := "resume"
	if ro.Approve {
		what = "acceptance of its plan"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "run %s (%s): %s queued for the fleet's workers; one takes it over from its last saved step and goes on (ultra tasks, ultra attach %s)\n", row.ID, row.Status, what, row.ID)
	if replaced != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "it replaces the ask made %s, which waited to be tried again (its take-over did not go on)\n", replaced)
	}
	return true, nil
}

// goesOnHere refuses to go on here with a fleet's run that is not this
// checkout's: its worktree, records and decisions are in a worker's clone
// (a queued run has none yet).
func (p *project) goesOnHere(cmd *cobra.Command, st *store.Store, row *store.Run) error {
	if sharedDB() == "" || p.owns(row) {
		return nil
	}
	if row.Status == store.StatusQueued {
		return usageErr("run %s is queued for the fleet's workers: one of them starts it (ultra tasks shows when; ultra cancel %s takes it out of the queue)", row.ID, row.ID)
	}
	if !agent.Resumable(row.Status) {
		return usageErr("run %s is %s: a fleet's run goes on only once it stopped short (escalated, out of budget, failed, stopped, waiting for a decision)", row.ID, row.Status)
	}
	where := row.Repo
	if rt, err := st.RuntimeOf(cmd.Context(), row.ID); err == nil && rt.Host != "" {
		where = rt.Host + ", in " + row.Repo
	}
	return usageErr("run %s is a fleet's run (it is %s): ultra resume %s [GUIDANCE] asks the fleet's workers to go on with it once it stopped short; the other commands that go on with a run work where its worktree is, on its worker (%s; docs/scale.md, \"Going on with a fleet's run\")", row.ID, row.Status, row.ID, where)
}

// budgetFlags are the budget flags given to cmd, as given.
func budgetFlags(cmd *cobra.Command) map[string]string {
	var m map[string]string
	for _, name := range []string{"max-retries", "max-turns", "max-input-tokens", "max-output-tokens", "max-wall", "max-cost"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			if m == nil {
				m = map[string]string{}
			}
			m[name] = f.Value.String()
		}
	}
	return m
}
