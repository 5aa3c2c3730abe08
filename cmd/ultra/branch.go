package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/landing"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// ExitRefused is the exit code of land, undo and gc when they refuse to
// do what would break a run's git invariants.
const ExitRefused = 3

// landingErr gives landing's errors their exit codes.
func landingErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, landing.ErrRefused):
		return &exitError{code: ExitRefused, err: err}
	case errors.Is(err, agent.ErrBusy), errors.Is(err, store.ErrNotFound):
		return usageErr("%v", err)
	}
	return err
}

// openLanding opens the project and, unless id is "", finds the run, for
// a landing command; close the store when done.
func openLanding(cmd *cobra.Command, id string) (landing.Options, *store.Store, string, error) {
	return openLandingRun(cmd, id, id == "")
}

// openRunLanding is openLanding for a command that names a run: an empty
// id is a usage error, not "every run".
func openRunLanding(cmd *cobra.Command, id string) (landing.Options, *store.Store, string, error) {
	if err := requireRunID(id); err != nil {
		return landing.Options{}, nil, "", err
	}
	return openLandingRun(cmd, id, false)
}

func openLandingRun(cmd *cobra.Command, id string, noRun bool) (landing.Options, *store.Store, string, error) {
	var p *project
	var st *store.Store
	var row *store.Run
	var err error
	if noRun {
		p, st, err = openProject(cmd)
	} else {
		p, st, row, err = openRun(cmd, id)
	}
	if err != nil {
		return landing.Options{}, nil, "", err
	}
	if p.Fleet && cmd.Name() == "undo" {
		st.Close()
		return landing.Options{}, nil, "", usageErr("%s is no repository: ultra undo works in the run's repository (a fleet's run: on its worker's machine, in its clone)", p.Dir)
	}
	if p.Fleet {
		st.Close()
		return landing.Options{}, nil, "", usageErr("%s is no repository: diff and land work in a checkout of the run's repository (a fleet's run: git fetch origin ultra/RUN_ID:ultra/RUN_ID there, then ultra %s RUN_ID)", p.Dir, cmd.Name())
	}
	dir, err := p.worktreeDir()
	if err != nil {
		st.Close()
		return landing.Options{}, nil, "", usageErr("%v", err)
	}
	o := landing.Options{Repo: p.Root, WorktreeDir: dir, Agent: p.agentOptions(st)}
	if row != nil {
		id = row.ID
		// A fleet's run another machine drove: its shared decisions, its
		// pushed branch.
		root, _, shared, err := p.sharedView(cmd, st, row)
		if err != nil {
			st.Close()
			return landing.Options{}, nil, "", err
		}
		o.Agent.StateRoot, o.Shared = root, shared
	}
	return o, st, id, nil
}

func newDiffCmd() *cobra.Command {
	var stat, nameOnly, committed, records bool
	cmd := &cobra.Command{
		Use:   "diff [RUN_ID]",
		Short: "Show what a run changed against its base (the latest run's without RUN_ID)",
		Long: "Show what a run changed against the commit its branch was cut from: the worktree as it is now\n" +
			"(committed and uncommitted changes, new files included), or only the branch's commits with --committed.\n" +
			"The code only: ultra's records of the run (its brief, goals and ledger under .ultra/runs/) are summed\n" +
			"up in one line; --records shows them too.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, st, id, err := openLandingRun(cmd, shownBranchedRun(args), false)
			if err != nil {
				return err
			}
			defer st.Close()
			spec, err := landing.Diff(cmd.Context(), o, id, committed)
			if err != nil {
				return landingErr(err)
			}
			gitArgs := []string{"--no-pager", "diff", "--color=auto"}
			switch {
			case stat:
				gitArgs = append(gitArgs, "--stat")
			case nameOnly:
				gitArgs = append(gitArgs, "--name-status")
			}
			gitArgs = append(gitArgs, spec.From, spec.To)
			if !stat && !nameOnly {
				fmt.Fprintf(cmd.OutOrStdout(), "# %s\n", spec.Header)
			}
			// The code; ultra's own records (goals, ledger) after it with
			// --records (--stat then sums both in one table), else a line.
			parts := [][]string{{"--", ".", ":(exclude).ultra"}}
			switch {
			case records && stat:
				parts = [][]string{nil}
			case records:
				parts = append(parts, []string{"--", ".ultra"})
			}
			var out io.Writer = cmd.OutOrStdout()
			// The model wrote these files: a terminal gets only what
			// prints (a pipe gets the patch as it is).
			if isTerminal(out) {
				out = &printableWriter{w: out}
			}
			for _, pathspec := range parts {
				g := workspace.Command(cmd.Context(), o.Repo, append(slices.Clone(gitArgs), pathspec...)...)
				g.Stdout, g.Stderr = out, cmd.ErrOrStderr()
				if err := g.Run(); err != nil {
					return err
				}
			}
			if records {
				return nil
			}
			code, recs, err := workspace.ChangeStat(cmd.Context(), o.Repo, spec.From, spec.To)
			if err != nil {
				return err
			}
			if code.Files == 0 && !stat && !nameOnly {
				fmt.Fprintln(cmd.OutOrStdout(), "# no change to the code")
			}
			if recs.Files > 0 {
				// A list of files gets its note apart from the list.
				note := cmd.OutOrStdout()
				if nameOnly {
					note = cmd.ErrOrStderr()
				}
				fmt.Fprintf(note, "# ultra's records of runs: %s under .ultra/ (ultra diff %s --records shows them)\n", recs, id)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&stat, "stat", false, "summarise the changes per file")
	cmd.Flags().BoolVar(&nameOnly, "name-status", false, "list the changed files")
	cmd.Flags().BoolVar(&committed, "committed", false, "only the run's commits, not its worktree's uncommitted changes")
	cmd.Flags().BoolVar(&records, "records", false, "show ultra's records of the run (brief, goals, ledger) too, not only the code")
	return cmd
}

func newLandCmd() *cobra.Command {
	var allowLinks bool
	cmd := &cobra.Command{
		Use:   "land RUN_ID",
		Short: "Merge a run's branch into its base, only if its final tree is green",
		Long: "Merge a stopped run's branch into the branch it was cut from. The branch's tip must be a tree the\n" +
			"gate passed. If the base moved since the run started, the base is merged into the run's branch in\n" +
			"its worktree first and that tree verified; only a green merge lands. The base moves by\n" +
			"fast-forward, in the checkout that has it checked out (git refuses if that would overwrite\n" +
			"local changes). Symbolic links that would leave the repository, reach .git, .ultra or .ultra/state,\n" +
			"or point at a path the repository does not hold are refused unless --allow-outside-links.\n" +
			"Exit 3 when landing is refused.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, st, id, err := openRunLanding(cmd, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			o.AllowOutsideLinks = allowLinks
			ctx, stop := interruptible()
			defer stop()
			res, err := landing.Land(ctx, o, id)
			if err != nil {
				return landingErr(err)
			}
			w := cmd.OutOrStdout()
			if res.Merge != "" {
				fmt.Fprintf(w, "%s had moved: merged it into the run's branch as %s; gate decision %d: %s\n", res.Base, short(res.Merge), res.MergeGate.N, res.MergeGate.Status)
			}
			fmt.Fprintf(w, "landed run %s on %s: %s is now at %s (%d commit(s))\n", res.Run, res.Base, res.Base, short(res.Commit), len(res.Commits))
			for _, c := range res.Commits {
				fmt.Fprintf(w, "  %s\n", c)
			}
			if code, recs, err := workspace.ChangeStat(ctx, o.Repo, res.From, res.Commit); err == nil {
				fmt.Fprintf(w, "the code: %s", code)
				if recs.Files > 0 {
					fmt.Fprintf(w, "; ultra's records: %s under .ultra/runs/%s/", recs, res.Run)
				}
				fmt.Fprintln(w)
			}
			if len(res.Uncommitted) > 0 {
				fmt.Fprintf(w, "not landed: %d uncommitted file(s) in the run's worktree after its last green commit (%s)\n", len(res.Uncommitted), workspace.ListSome(res.Uncommitted, 5))
			}
			if wd := res.Waived; wd != nil {
				why := ""
				if len(wd.Reasons) > 0 {
					why = ": " + wd.Reasons[0]
				}
				fmt.Fprintf(w, "note: what landed was let through by a person's waiver, not by its tests (decision %d%s)\n", wd.N, event.OneLine(why, 200))
			}
			for _, l := range res.Links {
				fmt.Fprintf(w, "landed as you allowed: the link %q -> %q %s\n", l.Path, l.Target, l.Why)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&allowLinks, "allow-outside-links", false, "land symbolic links that leave the repository, reach .git or .ultra, or point at a path it does not hold (refused otherwise)")
	return cmd
}

func newUndoCmd() *cobra.Command {
	var toLastGreen, dryRun bool
	cmd := &cobra.Command{
		Use:   "undo RUN_ID [--to-last-green]",
		Short: "Drop a run's work, or roll it back to its last green commit",
		Long: "Drop a stopped run's work: its worktree and its branch. With --to-last-green, reset the run's\n" +
			"branch and worktree to its last commit whose tree the gate passed, dropping what came after.\n" +
			"Either way ultra says what it drops; --dry-run only says it. Exit 3 when undo is refused.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, st, id, err := openRunLanding(cmd, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			res, err := landing.Undo(cmd.Context(), o, id, toLastGreen, dryRun)
			if err != nil {
				return landingErr(err)
			}
			printUndo(cmd.OutOrStdout(), res)
			return nil
		},
	}
	cmd.Flags().BoolVar(&toLastGreen, "to-last-green", false, "keep the run, reset to its last green commit")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be dropped, and drop nothing")
	return cmd
}

func printUndo(w io.Writer, res *landing.Undone) {
	verb := "dropped"
	if res.DryRun {
		verb = "would drop"
	}
	switch {
	case res.To != "" && res.DryRun:
		fmt.Fprintf(w, "run %s: would reset %s to its last green commit %s\n", res.Run, res.Branch, short(res.To))
	case res.To != "":
		fmt.Fprintf(w, "run %s: %s reset to its last green commit %s\n", res.Run, res.Branch, short(res.To))
	case res.DryRun && res.Worktree != "":
		fmt.Fprintf(w, "run %s: would remove its worktree and branch %s\n", res.Run, res.Branch)
	case res.DryRun:
		fmt.Fprintf(w, "run %s: would remove branch %s (its worktree is already gone)\n", res.Run, res.Branch)
	case res.Worktree != "":
		fmt.Fprintf(w, "run %s: worktree and branch %s removed\n", res.Run, res.Branch)
	default:
		fmt.Fprintf(w, "run %s: branch %s removed (its worktree was already gone)\n", res.Run, res.Branch)
	}
	if res.DryRun {
		fmt.Fprintln(w, "(dry run: nothing was changed)")
	}
	if len(res.Commits) == 0 && len(res.Uncommitted) == 0 {
		fmt.Fprintf(w, "%s nothing: the run had no commits or changes of its own\n", verb)
	}
	if len(res.Commits) > 0 {
		fmt.Fprintf(w, "%s %d commit(s):\n", verb, len(res.Commits))
		for _, c := range res.Commits {
			fmt.Fprintf(w, "  %s\n", c)
		}
		if !res.DryRun && res.Tip != "" {
			fmt.Fprintf(w, "  (until git prunes them: git branch rescue %s)\n", short(res.Tip))
		}
	}
	if len(res.Uncommitted) > 0 {
		fmt.Fprintf(w, "%s uncommitted changes to %d file(s):\n", verb, len(res.Uncommitted))
		for _, f := range res.Uncommitted {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
}

func newGCCmd() *cobra.Command {
	var force, dryRun bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove the worktrees of finished runs; never loses unmerged work without --force",
		Long: "Remove the worktrees of finished runs (complete, cancelled or landed), worktrees whose run is\n" +
			"gone or broken, and leftovers of interrupted starts. A worktree with uncommitted changes, or of\n" +
			"a run that can still be resumed, is kept unless --force; a branch with commits its base does not\n" +
			"have is kept unless --force. Runs in progress are never touched.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, st, _, err := openLanding(cmd, "")
			if err != nil {
				return err
			}
			defer st.Close()
			done, err := landing.GC(cmd.Context(), o, force, dryRun)
			w := cmd.OutOrStdout()
			if dryRun {
				fmt.Fprintln(w, "(dry run: nothing was changed)")
			}
			if len(done) == 0 && err == nil {
				fmt.Fprintln(w, "nothing to collect")
			}
			width := 8
			for _, c := range done {
				width = max(width, len(c.Action))
			}
			for _, c := range done {
				who := c.Run
				if who == "" {
					who = "(no run)"
				}
				fmt.Fprintf(w, "%-*s %s %s", width, c.Action, who, c.Path)
				if c.Detail != "" {
					fmt.Fprintf(w, ": %s", c.Detail)
				}
				fmt.Fprintln(w)
			}
			return landingErr(err)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "also remove worktrees with uncommitted changes or resumable runs, and branches with unmerged commits")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be removed, and remove nothing")
	return cmd
}

// newHookCmd is what a run's worktree hooks call.
func newHookCmd() *cobra.Command {
	var stateRoot, run string
	h := &cobra.Command{Use: "hook", Short: "Git hooks of runs' worktrees (called by git)", Hidden: true}
	pre := &cobra.Command{
		Use:   "pre-commit --state DIR --run RUN_ID",
		Short: "Refuse a commit whose tree has no passing gate decision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if stateRoot == "" || run == "" {
				return usageErr("--state and --run are required")
			}
			dir, _ := os.Getwd()
			tree, err := workspace.IndexTree(cmd.Context(), dir)
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("commit refused: %w", err)}
			}
			ds, err := gatefile.Read(agent.RunDir(stateRoot, run))
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("commit refused: reading run %s's gate decisions: %w", run, err)}
			}
			if gate.Green(ds, tree) == nil {
				return &exitError{code: 1, err: fmt.Errorf("commit refused: the staged tree %s has no passing gate decision in run %s. "+
					"ultra commits a run's work itself each time the gate passes", short(tree), run)}
			}
			return nil
		},
	}
	pre.Flags().StringVar(&stateRoot, "state", "", "the project's state root (.ultra/state)")
	pre.Flags().StringVar(&run, "run", "", "the run whose gate decides")
	h.AddCommand(pre)
	return h
}
