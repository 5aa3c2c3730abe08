package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/fleet"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
)

// submitOnly are the flags of ultra submit that are not the run's.
var submitOnly = []string{"repo", "db", "json", "base", "brief-file"}

func newSubmitCmd() *cobra.Command {
	sf := &startFlags{a: axes.Default}
	var repo, db string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "submit --repo URL [--base REF] [run flags] TASK | --brief-file BRIEF.md",
		Short: "Queue a run for the fleet: a worker on any machine clones the repository, runs it, and pushes its green branch",
		Long: "Records the run (queued) and its job in the shared store named by --db or ULTRA_DB (postgres://…), in one\n" +
			"transaction. A worker (ultra worker --db) takes it, clones or fetches --repo, runs it as ultra run would (its\n" +
			"sandbox, gate and goals), and pushes the run's branch ultra/RUN_ID to the repository when it has gone green.\n" +
			"Every run flag is checked now; a brief file is read now and travels with the job. The run is autonomous\n" +
			"unless --control says otherwise, and never waits for a person. ultra tasks, ultra status and ultra cancel with\n" +
			"the same ULTRA_DB work from any machine.\n\n" + refusedHelp + " --mode is build, plan or repair: a submitted\n" +
			"run works on a branch.",
		Example: `  export ULTRA_DB=postgres://ultra@db.internal/ultra
  ultra submit --repo git@github.com:acme/api.git "fix the flaky TestRetry"
  ultra submit --repo https://git.internal/acme/web.git --base develop --brief-file q3.md`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDetachedFlags(cmd, "ultra submit"); err != nil {
				return err
			}
			if err := sf.f.validate(); err != nil {
				return err
			}
			a, err := sf.axes(false)
			if err != nil {
				return err
			}
			if !phase.Worktree(a.Mode) {
				return usageErr("--mode %s: a submitted run works on a branch (build, plan or repair)", a.Mode)
			}
			task, brief, err := sf.task(args)
			if err != nil {
				return err
			}
			if strings.TrimSpace(repo) == "" {
				return usageErr("--repo is required: the URL every worker clones and pushes the run's branch to")
			}
			url, err := fleetDB(db)
			if err != nil {
				return err
			}
			if err := reachable(cmd.Context(), repo, sf.base); err != nil {
				return err
			}
			runArgs, err := detachedArgs(cmd, args, submitOnly)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("control") {
				a.Control = "autonomous"
			}
			st, err := store.Open(url)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := fleet.Prepare(cmd.Context(), url); err != nil {
				return err
			}
			now := time.Now()
			row := &store.Run{ID: agent.NewRunID(now), Task: task, Repo: repo, Phase: string(phase.Planning), Axes: a,
				State: json.RawMessage(`{}`), CreatedAt: now, UpdatedAt: now}
			job := fleet.RunJob{Run: row.ID, Repo: repo, Base: sf.base, Args: runArgs, Brief: brief}
			if err := fleet.Submit(cmd.Context(), st, row, job); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(w, struct {
					Run  string `json:"run"`
					Repo string `json:"repo"`
					Base string `json:"base,omitempty"`
				}{row.ID, repo, sf.base})
			}
			fmt.Fprintf(w, "run %s queued for %s\n", row.ID, repo)
			return nil
		},
	}
	sf.register(cmd)
	hideDetached(cmd)
	fl := cmd.Flags()
	fl.Lookup("base").Usage = "the branch the run's branch is cut from (default: the repository's default branch)"
	fl.Lookup("mode").Usage = "work mode: build, plan or repair (a submitted run works on a branch)"
	fl.StringVar(&repo, "repo", "", "the repository's URL, as every worker can clone and push to it")
	fl.StringVar(&db, "db", "", "the fleet's shared store, postgres://… [env ULTRA_DB]")
	fl.BoolVar(&asJSON, "json", false, "print the run as JSON")
	return cmd
}

// fleetDB is the shared store's URL: --db, else ULTRA_DB; it must be
// Postgres. The processes ultra starts get it as ULTRA_DB.
func fleetDB(flag string) (string, error) {
	url := strings.TrimSpace(flag)
	if url == "" {
		url = sharedDB()
	}
	if url == "" {
		return "", usageErr("no shared store: give --db postgres://… or set ULTRA_DB")
	}
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return "", usageErr("--db %q: the fleet's store is PostgreSQL, a postgres:// URL", redactURL(url))
	}
	os.Setenv("ULTRA_DB", url)
	return url, nil
}

// reachable checks, before a run is queued, that the repository answers
// at url and has the branch base (the remote's default without one): a
// worker would only find out later, on another machine.
func reachable(ctx context.Context, url, base string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ref := "HEAD"
	if base != "" {
		ref = "refs/heads/" + base
	}
	cmd := exec.CommandContext(ctx, "git", "ls-remote", "--exit-code", url, ref)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		if base != "" {
			return usageErr("--base %s: %s has no such branch", base, url)
		}
		return usageErr("--repo %s has no default branch: give --base", url)
	}
	return usageErr("--repo %s does not answer from here (workers clone it and push to it): %s", url, firstLine("", string(out)))
}
