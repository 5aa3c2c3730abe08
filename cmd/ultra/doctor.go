package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/doctor"
	"github.com/ultra-dev/ultra/internal/store"
)

func newDoctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the health of ultra's state here (store, locks, worktrees, ledgers, hooks) and what ultra needs",
		Long: "ultra doctor inspects the repository's ultra state: the store's integrity, run locks left by\n" +
			"dead processes, worktrees and ultra/ branches no run accounts for, runs recorded as running whose\n" +
			"process is gone, torn or tampered ledgers, the runs' worktree hooks, the project's test runners\n" +
			"and the configured model server; then the environment (sandbox, profiles, git, gate key).\n" +
			"Each finding has an id, what is wrong and the fix; `ultra doctor fix` applies the automatic ones.\n" +
			"It exits 1 when any finding needs fixing, 0 when none does (notes alone do not count).\n" +
			"docs/doctor.md describes every finding.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, closeEnv := doctorEnv(cmd)
			defer closeEnv()
			r := doctor.Inspect(cmd.Context(), e)
			w := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(w, r); err != nil {
					return err
				}
			} else {
				printFindings(w, r)
				fmt.Fprintln(w)
				printEnvironment(w, r.Environment)
				if p, err := findProject(cmd); err == nil {
					printSetup(w, p)
				}
			}
			return doctorExit(r)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.AddCommand(newDoctorFixCmd(), newDoctorHealCmd())
	return cmd
}

func newDoctorFixCmd() *cobra.Command {
	var asJSON, dryRun bool
	cmd := &cobra.Command{
		Use:   "fix",
		Short: "Apply doctor's automatic fixes, then inspect again",
		Long: "ultra doctor fix applies the fixes doctor marks automatic: it removes run locks and starting\n" +
			"markers of dead processes, left-over worktrees without uncommitted changes (their branch only when\n" +
			"no commit would be lost), ultra/ branches no run has whose commits are on another branch, records\n" +
			"runs whose process is gone as interrupted, installs runs' worktree hooks again and makes the gate\n" +
			"key private. It never touches a run whose process is alive, and checks each thing again right\n" +
			"before it acts. Then it inspects again and exits 1 if anything still needs fixing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, closeEnv := doctorEnv(cmd)
			defer closeEnv()
			ctx := cmd.Context()
			before := doctor.Inspect(ctx, e)
			var results []doctor.FixResult
			if dryRun {
				results = doctor.DryRun(ctx, e, before)
			} else {
				results = doctor.Fix(ctx, e, before)
			}
			after := before
			if !dryRun {
				after = doctor.Inspect(ctx, e)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if results == nil {
					results = []doctor.FixResult{}
				}
				if err := writeJSON(w, map[string]any{"dry_run": dryRun, "results": results, "report": after}); err != nil {
					return err
				}
				return doctorExit(after)
			}
			if len(results) == 0 {
				fmt.Fprintln(w, "nothing to fix automatically")
			}
			for _, res := range results {
				switch {
				case res.Would:
					fmt.Fprintf(w, "would fix %s: %s\n", res.ID, strings.TrimPrefix(res.Detail, "would "))
				case res.Fixed:
					fmt.Fprintf(w, "fixed %s: %s\n", res.ID, res.Detail)
				default:
					fmt.Fprintf(w, "not fixed %s: %s\n", res.ID, res.Detail)
				}
			}
			if dryRun {
				fmt.Fprintln(w, "(dry run: nothing was changed)")
			}
			fmt.Fprintln(w)
			printFindings(w, after)
			return doctorExit(after)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results and the report after them as JSON")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be fixed, and change nothing")
	return cmd
}

// doctorEnv is the inspection's view of the project (outside a git
// repository, only the environment is checked); close it when done.
func doctorEnv(cmd *cobra.Command) (doctor.Env, func()) {
	p, err := findProject(cmd)
	var cfgErr *configError
	switch {
	case errors.As(err, &cfgErr):
		// The repository is there: doctor checks it all the same, with
		// the configuration's error as a finding.
	case err != nil:
		// Outside a repository the user's own config still counts.
		return doctor.Env{ConfigError: errText(config.CheckUser())}, func() {}
	}
	// A store that cannot be opened is left to Inspect, which reports it.
	st, err := p.openStore()
	if err != nil {
		st = nil
	}
	e := doctorEnvOf(p, st)
	e.Provider = doctorProvider(p)
	if cfgErr == nil {
		// The MCP servers of runs (not of the health check before one: a
		// server whose program is missing blocks no verified work).
		e.SetupError, e.MCPMissing = setupProblems(p)
	}
	if cfgErr != nil {
		e.ConfigError = cfgErr.err.Error()
	}
	return e, func() {
		if st != nil {
			st.Close()
		}
	}
}

// doctorEnvOf is doctor's view of project p with its open store (nil:
// Inspect opens it, or reports why it cannot).
func doctorEnvOf(p *project, st *store.Store) doctor.Env {
	e := doctor.Env{Root: p.Root, StateRoot: p.StateRoot, Store: st, VerifyCommands: p.Config.Verify.Command, HookCommand: p.gitSettings().Hook}
	if dir, err := p.worktreeDir(); err == nil {
		e.WorktreeDir = dir
	}
	return e
}

// doctorProvider is the model server a run would use: the configured
// one, or the default when nothing names one (Default); nil when ultra
// cannot tell.
func doctorProvider(p *project) *doctor.Provider {
	mc := p.Config.Model
	name := pick(os.Getenv("ULTRA_PROVIDER"), mc.Provider, "openai")
	d, ok := providerDefaults[name]
	configured := mc.BaseURL != "" || (ok && (os.Getenv(d.urlEnv) != "" || os.Getenv(d.keyEnv) != ""))
	var f runFlags
	pc, err := f.resolveProvider(p, "", "", "")
	if err != nil {
		if !configured {
			return nil
		}
		msg := err.Error()
		return &doctor.Provider{Name: name, BaseURL: mc.BaseURL, Probe: func(context.Context) (bool, string) { return false, msg }}
	}
	// The key and headers a run would send (model.key_command included);
	// with nothing configured, the default a run would use.
	return &doctor.Provider{Name: pc.name, BaseURL: pc.baseURL, Hint: pc.hint, Default: !configured,
		Probe: func(ctx context.Context) (bool, string) {
			return probe(ctx, pc.name, pc.baseURL, pc.apiKey(), mc.Headers)
		}}
}

// doctorExit is 1 when a finding needs fixing.
func doctorExit(r doctor.Report) error {
	if !r.NeedsFixing() {
		return nil
	}
	auto := 0
	for _, f := range r.Findings {
		if f.Auto {
			auto++
		}
	}
	msg := fmt.Sprintf("%d finding(s) need fixing (%d error(s))", len(r.Findings), r.Errors())
	if auto > 0 {
		msg += fmt.Sprintf("; ultra doctor fix applies %d of them", auto)
	}
	return &exitError{code: agent.ExitError, err: fmt.Errorf("%s", msg)}
}

func printFindings(w io.Writer, r doctor.Report) {
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "no findings: nothing needs fixing")
	} else {
		fmt.Fprintf(w, "%d finding(s):\n", len(r.Findings))
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%-7s %s\n", f.Severity, f.ID)
		fmt.Fprintf(w, "        %s\n", f.Problem)
		how := "fix"
		if f.Auto {
			how = "fix (ultra doctor fix does it)"
		}
		fmt.Fprintf(w, "        %s: %s\n", how, f.Fix)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note    %s\n", n)
	}
}

func printEnvironment(w io.Writer, r doctor.Environment) {
	if r.Sandbox.Available {
		fmt.Fprintf(w, "sandbox    ok: %s %s (%s)\n", r.Sandbox.Mechanism, r.Sandbox.Version, r.Sandbox.Path)
		fmt.Fprintln(w, "           the model's commands and the tests run in their own user, PID and IPC namespaces (and network, but for trusted and unrestricted);")
		fmt.Fprintln(w, "           only the run's worktree is writable; ultra's state, config, keys and your secrets are hidden")
	} else {
		fmt.Fprintf(w, "sandbox    MISSING: %s\n", r.Sandbox.Problem)
		fmt.Fprintf(w, "           fix: %s\n", r.Sandbox.Hint)
	}
	_, goErr := exec.LookPath("go")
	switch {
	case goErr != nil:
	case r.GoCache == "":
		fmt.Fprintln(w, "go cache   none (GOCACHE=off, or not made yet): contained Go builds start from nothing")
	case r.Sandbox.Available:
		fmt.Fprintf(w, "go cache   %s: read-only to everything the model, the gate and the criteria run (tests, builds,\n", r.GoCache)
		fmt.Fprintln(w, "           Makefiles, scripts); what they build is kept apart and goes with their sandbox; ultra fills it first with the toolchain alone")
	default:
		fmt.Fprintf(w, "go cache   %s: writable to the tests: without a sandbox nothing keeps them from it\n", r.GoCache)
	}
	if r.Landlock > 0 {
		fmt.Fprintf(w, "landlock   ok: ABI %d (a Go test binary the gate runs cannot touch the go command's work directory, where the next test binaries are linked)\n", r.Landlock)
	} else {
		fmt.Fprintln(w, "landlock   none: a Go test binary the gate runs could replace the next package's test binary in the go command's work directory")
	}
	for _, name := range []string{"restricted", "normal", "trusted", "unrestricted"} {
		fmt.Fprintf(w, "profile    %-12s %s\n", name, r.Profiles[name])
	}
	if r.Git != "" {
		fmt.Fprintf(w, "git        ok: %s\n", r.Git)
	} else {
		fmt.Fprintln(w, "git        MISSING: install git")
	}
	fmt.Fprintf(w, "gate key   %s\n", r.GateKey)
	for _, ch := range []struct{ name, what, fix string }{{"tmux", "tmux", "apt-get install tmux"}, {"browser", "chromium", "apt-get install chromium"}} {
		if p := r.Channels[ch.name]; p != "" {
			fmt.Fprintf(w, "criteria   %-8s ok: %s\n", ch.name, p)
		} else {
			fmt.Fprintf(w, "criteria   %-8s no %s: such criteria are BLOCKED (%s)\n", ch.name, ch.what, ch.fix)
		}
	}
	var have, lack, pkgs []string
	for _, t := range check.DesktopTools() {
		if r.Channels["desktop "+t.Name] != "" {
			have = append(have, t.Name)
		} else {
			lack, pkgs = append(lack, t.Name), append(pkgs, t.Package)
		}
	}
	if len(lack) == 0 {
		fmt.Fprintf(w, "criteria   %-8s ok: %s\n", "desktop", strings.Join(have, " "))
	} else {
		fmt.Fprintf(w, "criteria   %-8s no %s: such criteria are BLOCKED (apt-get install %s)\n", "desktop", strings.Join(lack, ", "), strings.Join(pkgs, " "))
	}
	var found, missing []string
	for _, t := range doctor.Runners {
		if r.Tools[t] != "" {
			found = append(found, t)
		} else {
			missing = append(missing, t)
		}
	}
	fmt.Fprintf(w, "runners    found: %s\n", strings.Join(found, " "))
	if len(missing) > 0 {
		fmt.Fprintf(w, "           not found: %s\n", strings.Join(missing, " "))
	}
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
