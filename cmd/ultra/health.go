package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/doctor"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
)

// healthEnv is doctor's quick check of dir (the checkout, or a run's
// worktree): only what blocks verified work.
func healthEnv(p *project, st *store.Store, dir string) doctor.Env {
	e := doctorEnvOf(p, st)
	e.Root, e.DispatchOnly = dir, true
	return e
}

// healthProblems is agent.Options.Health: what still blocks verified work
// in a repair run's worktree.
func healthProblems(p *project, st *store.Store) func(ctx context.Context, dir string) []string {
	return func(ctx context.Context, dir string) []string {
		var out []string
		for _, f := range doctor.Blocking(doctor.Inspect(ctx, healthEnv(p, st, dir))) {
			// The gate that just ran on the run's tree says more of its
			// suite than an older baseline of the tree it started from.
			if f.Kind() != doctor.KindBaseGate {
				out = append(out, f.ID+": "+f.Problem)
			}
		}
		return out
	}
}

// findingsText lists findings for a person or a model.
func findingsText(fs []doctor.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "- %s (%s): %s\n  fix: %s\n", f.ID, f.Severity, f.Problem, f.Fix)
	}
	return strings.TrimRight(b.String(), "\n")
}

// dispatchCheck is the health check before a run that changes code
// starts, under the project's repair.on_unhealthy policy. It returns why
// the run must repair first ("" to go on as asked), or an error that
// keeps the run from starting.
func dispatchCheck(cmd *cobra.Command, p *project, st *store.Store) (string, error) {
	ctx := cmd.Context()
	env := healthEnv(p, st, p.Root)
	blocking := doctor.Blocking(doctor.Inspect(ctx, env))
	policy := pick(p.Config.Repair.OnUnhealthy, doctor.PolicyAsk)
	action := doctor.Dispatch(policy, blocking)
	w := cmd.ErrOrStderr()
	switch action {
	case doctor.Proceed:
		if len(blocking) > 0 {
			fmt.Fprintf(w, "ultra: the health check found what blocks verified work (repair.on_unhealthy = log-only: the run starts anyway):\n%s\n", findingsText(blocking))
		}
		return "", nil
	case doctor.Ask:
		if isTerminal(cmd.InOrStdin()) {
			fmt.Fprintf(w, "ultra: the health check found what blocks verified work:\n%s\nRepair it first (the run starts in repair mode)? [y/N] ", findingsText(blocking))
			line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
				return repairFirst(ctx, env, blocking), nil
			}
			return "", nil
		}
		return "", &exitError{code: agent.ExitEscalated, err: fmt.Errorf("the health check found what blocks verified work, and nobody is here to ask (repair.on_unhealthy = ask):\n%s\n"+
			"Fix it (ultra doctor heal starts a repair run), or set repair.on_unhealthy = \"auto\" or \"log-only\" in .ultra/config", findingsText(blocking))}
	}
	return repairFirst(ctx, env, blocking), nil
}

// repairFirst applies doctor's safe fixes of the blocking findings and
// says what is left for a repair run ("" when nothing is).
func repairFirst(ctx context.Context, env doctor.Env, blocking []doctor.Finding) string {
	if auto := doctor.AutoFixable(blocking); len(auto) > 0 {
		doctor.Fix(ctx, env, doctor.Report{Findings: auto})
		blocking = doctor.Blocking(doctor.Inspect(ctx, env))
	}
	if len(blocking) == 0 {
		return ""
	}
	return findingsText(blocking)
}

// healTask is the task of a repair run for findings.
func healTask(findings string) string {
	return "Repair this repository so that ultra can verify work in it again. ultra doctor found:\n" + findings +
		"\nFix what code can fix here (the test suite must run and pass, the configuration must load); the repair is verified by the gate and by ultra doctor."
}

// heal starts a repair run for what doctor finds and its safe fixes
// leave (ultra doctor heal, ultra repair).
func heal(cmd *cobra.Command, f *runFlags, control string) error {
	p, st, err := openProject(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	// The store is open already; the model server is checked once, by
	// the run's preflight.
	env := doctorEnvOf(p, st)
	ctx := cmd.Context()
	r := doctor.Inspect(ctx, env)
	w := cmd.OutOrStdout()
	for _, res := range doctor.Fix(ctx, env, doctor.Report{Findings: doctor.AutoFixable(r.Findings)}) {
		if res.Fixed {
			fmt.Fprintf(w, "fixed %s: %s\n", res.ID, res.Detail)
		}
	}
	left := doctor.Blocking(doctor.Inspect(ctx, healthEnv(p, st, p.Root)))
	if len(left) == 0 {
		fmt.Fprintln(w, "nothing left to heal: no finding blocks verified work (ultra doctor lists the rest)")
		return nil
	}
	fmt.Fprintf(w, "starting a repair run for:\n%s\n", findingsText(left))
	a := axes.Default
	a.Mode, a.Control = phase.Repair, control
	spec := agent.Spec{Task: healTask(findingsText(left)), Repo: p.Root, Workdir: p.Root, Cwd: p.Dir, Axes: a, Budgets: f.budgets(p)}
	out, err := launch(cmd, f, p, st, w, spec, func(o *agent.Options, spec *agent.Spec) error {
		dir, err := p.worktreeDir()
		if err != nil {
			return usageErr("%v", err)
		}
		spec.Worktree = &agent.WorktreeSpec{Dir: dir, Setup: p.Config.Workspace.Setup, SetupTimeout: o.VerifyTimeout}
		return nil
	})
	if out == nil && err != nil {
		return err
	}
	return finished(out, err)
}

func newDoctorHealCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "heal",
		Short: "Fix what doctor can, then start a repair run for what code cannot fix (verified by the gate and doctor)",
		Long: "ultra doctor heal applies doctor's safe fixes, then starts a repair-mode run in which the model fixes what\n" +
			"code cannot (a test suite that cannot run, a broken configuration), autonomously, on its own branch. The\n" +
			"repair completes only when the gate passes and doctor finds nothing that blocks verified work.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return heal(cmd, &f, "autonomous") },
	}
	f.register(cmd)
	return cmd
}

func newRepairCmd() *cobra.Command {
	var f runFlags
	var autonomous bool
	var scope, reason string
	cmd := &cobra.Command{
		Use:   "repair [RUN]",
		Short: "Switch a run to repair mode, or start a repair run for what doctor finds",
		Long: "ultra repair RUN switches a run to repair mode (at --scope; --autonomous also lets it go on by itself),\n" +
			"recorded like any steering. Without RUN it starts a repair run for what ultra doctor finds, as ultra\n" +
			"doctor heal does, under assisted control (it pauses after each phase) unless --autonomous.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			control := "assisted"
			if autonomous {
				control = "autonomous"
			}
			if len(args) == 0 {
				return heal(cmd, &f, control)
			}
			s := steerFlags{mode: phase.Repair, scope: scope, reason: firstNonEmptyStr(reason, "switched to repair by a person")}
			if autonomous {
				s.control = "autonomous"
			}
			return steer(cmd, args[0], &s)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&autonomous, "autonomous", false, "repair until clean, blocked or out of limits, without pausing")
	cmd.Flags().StringVar(&scope, "scope", axes.ScopeAfterTool, "with RUN: when a live run switches: "+strings.Join(axes.Scopes, ", "))
	cmd.Flags().StringVar(&reason, "reason", "", "with RUN: why (recorded)")
	return cmd
}
