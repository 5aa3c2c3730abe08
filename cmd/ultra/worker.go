package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/fleet"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/surface/procs"
)

func newWorkerCmd() *cobra.Command {
	var maxRuns int
	var unit bool
	var db, cache string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Dispatch the repository's schedules, or with --db a fleet's runs: a foreground daemon (ultra serve runs one too)",
		Long: "Runs in the foreground until interrupted, and starts a run whenever one of the repository's\n" +
			"schedules is due (ultra schedule). Each run is an ordinary `ultra run` in its own process, which\n" +
			"goes on if the worker stops. Any number of workers may serve one repository: each due time is\n" +
			"claimed by one of them only. --systemd-unit prints a user unit that keeps a worker running.\n\n" +
			"With --db postgres://… (or ULTRA_DB) it is a fleet's worker instead: it takes the runs queued with\n" +
			"ultra submit and the fleet's schedules from that database, from any directory (it needs no\n" +
			"repository), and clones each run's repository into --cache.",
		Example: `  ultra worker
  ultra worker --systemd-unit > ~/.config/systemd/user/ultra-worker.service
  systemctl --user enable --now ultra-worker
  ultra worker --db postgres://ultra@db.internal/ultra --max-runs 2   # a fleet's worker, anywhere`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxRuns < 1 {
				return usageErr("--max-runs must be at least 1")
			}
			if db != "" || sharedDB() != "" {
				return serveFleet(cmd, db, cache, maxRuns, unit)
			}
			if cache != "" {
				return usageErr("--cache is for a fleet's worker (--db postgres://… or ULTRA_DB), which keeps its clones there; a repository's worker runs in the repository")
			}
			p, st, err := openProject(cmd)
			if err != nil {
				return outsideRepo(err, workerOutside)
			}
			defer st.Close()
			if unit {
				return printUnit(cmd.OutOrStdout(), p.Root, maxRuns)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			d, err := newDispatcher(p, st, maxRuns, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			rememberRepo(p.Root)
			d.Log("worker %s serves the schedules of %s", d.Worker.ID, p.Root)
			err = d.Serve(ctx)
			d.Log("%s", stoppedLine(d.Running()))
			return err
		},
	}
	cmd.Flags().IntVar(&maxRuns, "max-runs", 1, "how many scheduled runs this worker starts at once, at most")
	cmd.Flags().BoolVar(&unit, "systemd-unit", false, "print a systemd user unit that runs this worker, and exit")
	cmd.Flags().StringVar(&db, "db", "", "take submitted runs from the fleet's shared store, postgres://… [env ULTRA_DB]")
	cmd.Flags().StringVar(&cache, "cache", "", "with --db: where the worker keeps its clones (default $XDG_CACHE_HOME/ultra/fleet)")
	return cmd
}

// workerOutside is what ultra worker says outside a repository.
const workerOutside = "ultra worker serves the schedules of the repository it runs in: start it there (or with -C DIR); " +
	"a fleet's worker needs no repository: ultra worker --db postgres://…"

// serveFleet is a fleet's worker: it takes submitted runs from the
// shared store's queue until interrupted.
func serveFleet(cmd *cobra.Command, db, cache string, maxRuns int, unit bool) error {
	url, err := fleetDB(db)
	if err != nil {
		return err
	}
	if unit {
		return printFleetUnit(cmd.OutOrStdout(), maxRuns)
	}
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(base, "ultra", "fleet")
	}
	if cache, err = filepath.Abs(cache); err != nil {
		return err
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return err
	}
	prog, err := program()
	if err != nil {
		return err
	}
	st, err := store.Open(url)
	if err != nil {
		return err
	}
	defer st.Close()
	// The first signal stops taking runs and waits for those going on;
	// a second asks them to stop at their next safe point.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, stop := context.WithCancel(cmd.Context())
	defer stop()
	hard, stopHard := context.WithCancel(context.Background())
	defer stopHard()
	go func() {
		select {
		case <-sigs:
			stop()
		case <-ctx.Done():
			return
		}
		select {
		case <-sigs:
			stopHard()
		case <-hard.Done():
		}
	}()
	out := cmd.OutOrStdout()
	var mu sync.Mutex
	f := &fleet.Fleet{
		Hard: hard,
		URL:  url, Store: st, Program: prog, Cache: cache, MaxRuns: maxRuns,
		Worker: fleet.NewWorker("runs", time.Now()),
		Log: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(out, "%s %s\n", time.Now().Format("2006-01-02 15:04:05"), fmt.Sprintf(format, args...))
		},
	}
	// The runs keep ultra's per-user state (their worktrees, the fleet's
	// key) in the fleet's state directory, apart from the person's.
	f.Env = append(os.Environ(), "ULTRA_SURFACE=headless", "ULTRA_DB="+url, "XDG_STATE_HOME="+f.State())
	f.Log("worker %s takes runs from %s (clones in %s)", f.Worker.ID, redactURL(url), cache)
	err = f.Serve(ctx)
	f.Log("worker stopped")
	return err
}

// newDispatcher is a dispatcher of the project's schedules that starts
// each run with ultra's own `ultra run`, logging a line per thing it does
// to out.
func newDispatcher(p *project, st *store.Store, maxRuns int, out io.Writer) (*fleet.Dispatcher, error) {
	prog, err := program()
	if err != nil {
		return nil, err
	}
	logs := filepath.Join(p.StateRoot, "worker")
	// Never through a link the repository commits in ultra's state.
	if err := realDirs(p.Root, logs); err != nil {
		return nil, err
	}
	pruneLogs(logs, 7*24*time.Hour)
	be := &procs.Processes{Store: st, Program: prog, Dir: p.Root, Logs: logs, Env: append(os.Environ(), "ULTRA_SURFACE=headless")}
	var mu sync.Mutex
	d := &fleet.Dispatcher{
		Store:   st,
		Worker:  fleet.NewWorker("schedules", time.Now()),
		MaxRuns: maxRuns,
		Log: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(out, "%s %s\n", time.Now().Format("2006-01-02 15:04:05"), fmt.Sprintf(format, args...))
		},
		Start: func(ctx context.Context, sc *store.Schedule, claim store.DispatchClaim) (string, func() (string, int), error) {
			argv := append([]string{"run", "--output", "jsonl", "--dispatch", dispatchArg(claim)}, sc.Args...)
			// Starting is not cut short when the worker stops: the run
			// would be half made.
			return be.Start(context.WithoutCancel(ctx), argv)
		},
	}
	return d, nil
}

// stoppedLine is the worker's last line, n being how many of the runs
// it started are still going on.
func stoppedLine(n int) string {
	switch n {
	case 0:
		return "worker stopped"
	case 1:
		return "worker stopped; the run it started goes on in its own process"
	}
	return fmt.Sprintf("worker stopped; the %d runs it started go on in their own processes", n)
}

// plural is n things: "1 run", "3 runs".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// printUnit prints a systemd user unit that keeps a worker running for
// the repository at root.
func printUnit(w io.Writer, root string, maxRuns int) error {
	abs, err := program()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, `[Unit]
Description=ultra worker for %[1]s
After=network-online.target

[Service]
Type=simple
WorkingDirectory=%[1]s
# The programs the tests need (go, node, python), as in the shell this unit was printed from.
Environment=PATH=%[3]s
# The model's provider and keys, as for ultra run (OPENAI_BASE_URL, ULTRA_MODEL, …):
# EnvironmentFile=%%h/.config/ultra/worker.env
ExecStart=%[2]s worker --max-runs %[4]d
Restart=on-failure
RestartSec=5
# The worker stops on SIGTERM; the runs it started go on in their own processes.
KillMode=process

[Install]
WantedBy=default.target
`, root, abs, os.Getenv("PATH"), maxRuns)
	return nil
}

// printFleetUnit prints a systemd user unit that keeps a fleet's worker
// running; the database's URL comes from an environment file, never the
// unit itself.
func printFleetUnit(w io.Writer, maxRuns int) error {
	abs, err := program()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, `[Unit]
Description=ultra fleet worker
After=network-online.target

[Service]
Type=simple
# ULTRA_DB=postgres://…, and the model's provider and keys (OPENAI_BASE_URL, ULTRA_MODEL, …); mode 0600:
EnvironmentFile=%%h/.config/ultra/fleet.env
# The programs the tests need (go, node, python), as in the shell this unit was printed from.
Environment=PATH=%s
ExecStart=%s worker --max-runs %d
Restart=on-failure
RestartSec=5
# On stop the worker waits for its runs; a run still going on at the stop timeout is
# killed with it, and the fleet's other workers take it over from its last saved step.
KillMode=mixed

[Install]
WantedBy=default.target
`, os.Getenv("PATH"), abs, maxRuns)
	return nil
}

// program is the ultra program's absolute path, which the commands a
// worker starts (and its units) run.
func program() (string, error) {
	prog := ultraProgram()
	if prog == "" {
		return "", fmt.Errorf("cannot find the ultra program to run commands with")
	}
	return filepath.Abs(prog)
}
