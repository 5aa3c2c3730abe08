package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/schedule"
	"github.com/ultra-dev/ultra/internal/store"
)

func newScheduleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Runs that start by themselves: by cron, every period, or at a time (ultra worker dispatches them)",
		Long: "A schedule starts an ordinary run (ultra run with the flags and task it was given) whenever it is due.\n" +
			"ultra worker, or ultra serve, dispatches the schedules of the repository: without one running,\n" +
			"nothing starts (ultra tasks says so). Each due time is one dispatch, claimed by one worker only.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newScheduleAddCmd(), newScheduleListCmd(), newScheduleShowCmd(),
		newScheduleStateCmd("pause"), newScheduleStateCmd("resume"), newScheduleStateCmd("remove"))
	return cmd
}

// scheduleOnly are the flags of ultra schedule add that are not the run's.
var scheduleOnly = []string{"cron", "every", "at", "zone", "catch-up", "json", "repo"}

// notDetached are run flags a run that a worker starts (a scheduled or
// submitted one) cannot take: its output goes to the worker, and it
// starts from the repository's commits. The commands that make such runs
// hide them from their help, say so in it, and refuse them by name.
var notDetached = map[string]string{
	"print":               "its run's output goes to the worker",
	"output":              "its run's output goes to the worker",
	"output-format":       "its run's output goes to the worker",
	"verbose":             "its run's output goes to the worker",
	"quiet":               "its run's output goes to the worker",
	"include-uncommitted": "its run starts from commits, not from whatever a checkout holds when it starts",
	"dispatch":            "the worker sets it",
	"adopt":               "the worker sets it",
	"no-wait":             "every run a worker starts has it",
}

// refusedHelp is the paragraph of a command's help that names the run
// flags it refuses (hidden from its flags).
const refusedHelp = "Not taken, and refused by name: -p/--print, -o/--output, --output-format, -v/--verbose and\n" +
	"-q/--quiet (the run's output goes to the worker), --include-uncommitted (the run starts from commits)\n" +
	"and --no-wait (every such run has it)."

// hideDetached hides from cmd's help the run flags notDetached refuses.
func hideDetached(cmd *cobra.Command) {
	for name := range notDetached {
		if f := cmd.Flags().Lookup(name); f != nil {
			f.Hidden = true
		}
	}
}

func newScheduleAddCmd() *cobra.Command {
	sf := &startFlags{a: axes.Default}
	var in schedule.Input
	var catchUp, repo string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "add (--cron EXPR | --every DURATION | --at TIME) [run flags] TASK | --brief-file BRIEF.md",
		Short: "Add a schedule: a run with these flags and task, started whenever it is due",
		Long: "Adds a schedule. Exactly one of:\n" +
			"  --cron EXPR      five fields (minute hour day-of-month month day-of-week) or @daily, @hourly, …, read in --zone\n" +
			"  --every DURATION a period (30m, 6h, 24h) counted from now\n" +
			"  --at TIME        once: 2026-12-01T03:00:00+01:00, \"2026-12-01 03:00\" or 03:00 (its next occurrence) in --zone\n" +
			"--zone is an IANA name (default: this machine's zone, else UTC). Every other flag is ultra run's and\n" +
			"is checked now. A scheduled run is autonomous unless --control says otherwise, and never waits for a\n" +
			"person: what needs one ends the run with that status (ultra tasks lists it). A brief file is read\n" +
			"when each run starts. --catch-up says what a worker does about due times missed while none ran:\n" +
			"once (the default: run the latest of them once) or skip.\n\n" + refusedHelp + "\n\n" +
			"With ULTRA_DB set, --repo URL [--base BRANCH] makes a fleet's schedule, whose runs are submitted\n" +
			"for that repository (its task as arguments: --brief-file is not for it yet).",
		Example: `  ultra schedule add --cron "0 3 * * 1-5" --zone Europe/Berlin --brief-file nightly.md
  ultra schedule add --every 6h --max-cost 2 "update the dependencies and fix what breaks"
  ultra schedule add --at 23:30 --catch-up skip "regenerate the API docs"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			fleetSchedule := sharedDB() != "" || repo != ""
			if fleetSchedule {
				switch {
				case sharedDB() == "":
					return usageErr("--repo makes a fleet's schedule, in the shared store: set ULTRA_DB=postgres://…")
				case strings.TrimSpace(repo) == "":
					return usageErr("ULTRA_DB is set: a fleet's schedule needs --repo URL, the repository its runs are submitted for (unset ULTRA_DB for this repository's own schedule)")
				case sf.briefFile != "":
					return usageErr("--brief-file is not for a fleet's schedule yet: give the task as arguments")
				}
			}
			if err := checkDetachedFlags(cmd, "a schedule"); err != nil {
				return err
			}
			if err := sf.f.validate(); err != nil {
				return err
			}
			if _, err := sf.axes(false); err != nil {
				return err
			}
			task, _, err := sf.task(args)
			if err != nil {
				return err
			}
			policy, err := schedule.ParseCatchUp(catchUp)
			if err != nil {
				return usageErr("%v", err)
			}
			if in.Zone == "" {
				in.Zone = localZone()
			}
			now := time.Now()
			spec, err := schedule.Parse(in, now)
			if err != nil {
				return usageErr("%v", err)
			}
			own := scheduleOnly
			if fleetSchedule {
				own = append(own, "base")
			}
			runArgs, err := detachedArgs(cmd, args, own)
			if err != nil {
				return err
			}
			p, st, err := openProject(cmd)
			if err != nil {
				return outsideRepo(err, scheduleOutside)
			}
			defer st.Close()
			specJSON, _ := json.Marshal(spec)
			sc := &store.Schedule{ID: newScheduleID(), Spec: specJSON, Args: runArgs, Task: task, CatchUp: string(policy), CreatedAt: now, UpdatedAt: now}
			if fleetSchedule {
				sc.Repo, sc.Base = repo, sf.base
			}
			if err := st.AddSchedule(cmd.Context(), sc); err != nil {
				return err
			}
			rememberRepo(p.Root)
			w := cmd.OutOrStdout()
			served := servedNow(cmd.Context(), st, now)
			if asJSON {
				return writeJSON(w, scheduleViewOf(cmd.Context(), st, sc, served, now))
			}
			fmt.Fprintf(w, "schedule %s: %s\n", sc.ID, spec)
			if next, ok := spec.Next(now); ok {
				fmt.Fprintf(w, "next run %s\n", when(next, spec.Zone, now))
			}
			if !served {
				if fleetSchedule {
					fmt.Fprintln(w, "no worker serves the fleet yet: start one with ultra worker --db")
				} else {
					fmt.Fprintln(w, "no worker serves this repository's schedules yet: start one with ultra worker (or ultra serve)")
				}
			}
			return nil
		},
	}
	sf.register(cmd)
	hideDetached(cmd)
	fl := cmd.Flags()
	fl.Lookup("base").Usage = "branch to cut the run's branch from (default: the checkout's current branch; with --repo, the repository's default branch)"
	fl.StringVar(&in.Cron, "cron", "", "a cron expression, read in --zone")
	fl.StringVar(&in.Every, "every", "", "a period: 30m, 6h, 24h")
	fl.StringVar(&in.At, "at", "", "one time: RFC 3339, \"YYYY-MM-DD HH:MM\" or HH:MM in --zone")
	fl.StringVar(&in.Zone, "zone", "", "the IANA time zone of --cron and --at (default: this machine's, else UTC)")
	fl.StringVar(&catchUp, "catch-up", "once", "due times missed while no worker ran: once (run the latest once) or skip")
	fl.BoolVar(&asJSON, "json", false, "print the schedule as JSON")
	fl.StringVar(&repo, "repo", "", "with ULTRA_DB: a fleet's schedule, whose runs are submitted for this repository's URL (--base: the branch they start from)")
	return cmd
}

// scheduleOutside is what ultra schedule says outside a repository.
const scheduleOutside = "a repository's schedules are kept in it: run ultra schedule there (or with -C DIR); " +
	"a fleet's schedules are in its database: set ULTRA_DB=postgres://… (and give schedule add --repo URL)"

// checkDetachedFlags refuses the run flags a run a worker starts cannot
// take; what names the command's object ("a schedule").
func checkDetachedFlags(cmd *cobra.Command, what string) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if why, ok := notDetached[f.Name]; ok && err == nil {
			err = usageErr("--%s is not for %s: %s", f.Name, what, why)
		}
	})
	return err
}

// detachedArgs are the `ultra run` arguments of a run a worker starts:
// the run flags given but those the command keeps for itself (the brief
// file made absolute), the defaults of such a run, then the task after
// "--".
func detachedArgs(cmd *cobra.Command, args, own []string) ([]string, error) {
	var out []string
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if slices.Contains(own, f.Name) || err != nil {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		v := f.Value.String()
		if f.Name == "brief-file" {
			abs, aerr := filepath.Abs(v)
			if aerr != nil {
				err = aerr
				return
			}
			v = abs
		}
		out = append(out, "--"+f.Name+"="+v)
	})
	if err != nil {
		return nil, err
	}
	if !cmd.Flags().Changed("control") {
		out = append(out, "--control=autonomous")
	}
	out = append(out, "--no-wait")
	if len(args) > 0 {
		out = append(append(out, "--"), args...)
	}
	return out, nil
}

// localZone is this machine's IANA zone name: $TZ, else where
// /etc/localtime points, else UTC; every name of UTC (Etc/UTC, …) is
// UTC.
func localZone() string { return zoneOf(os.Getenv("TZ"), "/etc/localtime") }

func zoneOf(tz, localtime string) string {
	if tz = strings.TrimPrefix(tz, ":"); tz != "" {
		if _, err := time.LoadLocation(tz); err == nil && !strings.HasPrefix(tz, "/") {
			return schedule.CanonicalZone(tz)
		}
	}
	if target, err := os.Readlink(localtime); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			name := target[i+len("zoneinfo/"):]
			if _, err := time.LoadLocation(name); err == nil {
				return schedule.CanonicalZone(name)
			}
		}
	}
	return "UTC"
}

func newScheduleID() string { return "s-" + strings.ToLower(rand.Text()[:6]) }

func newScheduleListCmd() *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "The schedules, when each is due next, and its last dispatch",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, st, err := openProject(cmd)
			if err != nil {
				return outsideRepo(err, scheduleOutside)
			}
			defer st.Close()
			now := time.Now()
			scheds, err := st.Schedules(cmd.Context(), all)
			if err != nil {
				return err
			}
			served := servedNow(cmd.Context(), st, now)
			views := []scheduleView{}
			for _, sc := range scheds {
				views = append(views, scheduleViewOf(cmd.Context(), st, sc, served, now))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), struct {
					Schedules []scheduleView `json:"schedules"`
					Served    bool           `json:"served"`
				}{views, served})
			}
			w := &printableWriter{w: cmd.OutOrStdout()}
			if len(views) == 0 {
				fmt.Fprintln(w, "no schedules: add one with ultra schedule add --cron EXPR|--every D|--at TIME TASK")
				return nil
			}
			printSchedules(w, views, now)
			if !served {
				fmt.Fprintln(w, notServed(isFleet(st)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&all, "all", false, "list removed schedules too")
	return cmd
}

func newScheduleShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show SCHEDULE",
		Short: "A schedule: its run's arguments, next dispatch and recent dispatches with their runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, st, err := openProject(cmd)
			if err != nil {
				return outsideRepo(err, scheduleOutside)
			}
			defer st.Close()
			sc, err := st.GetSchedule(cmd.Context(), args[0])
			if err != nil {
				return scheduleErr(err)
			}
			now := time.Now()
			v := scheduleViewOf(cmd.Context(), st, sc, servedNow(cmd.Context(), st, now), now)
			if v.Dispatches, err = st.Dispatches(cmd.Context(), sc.ID, 20); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			w := &printableWriter{w: cmd.OutOrStdout()}
			fmt.Fprintf(w, "schedule %s (%s)\n  when:     %s\n  catch-up: %s\n  task:     %s\n",
				v.ID, v.State, v.When, v.CatchUp, v.Task)
			if v.RepoURL != "" {
				fmt.Fprintf(w, "  repo:     %s (base: %s)\n  submits:  %s\n", v.RepoURL, orDash(v.Base), submitLine(v))
			} else {
				fmt.Fprintf(w, "  runs:     ultra run %s\n", strings.Join(quoteArgs(v.Args), " "))
			}
			if !v.NextDue.IsZero() {
				fmt.Fprintf(w, "  next:     %s\n", when(v.NextDue, v.Zone, now))
			}
			if len(v.Dispatches) > 0 {
				fmt.Fprintln(w, "dispatches (newest first):")
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "  DUE\tSTATE\tRUN\tWORKER\tREASON")
				for _, d := range v.Dispatches {
					fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", when(d.Due, v.Zone, now), d.Status, orDash(d.Run), orDash(d.ClaimedBy), d.Reason)
				}
				tw.Flush()
			}
			if v.State == "active" && !v.Served {
				fmt.Fprintln(w, notServed(isFleet(st)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// submitLine is the ultra submit a fleet's schedule makes at each due
// time (--no-wait, which every submitted run has, left out).
func submitLine(v scheduleView) string {
	args := []string{"ultra", "submit", "--repo", v.RepoURL}
	if v.Base != "" {
		args = append(args, "--base", v.Base)
	}
	for _, a := range v.Args {
		if a != "--no-wait" {
			args = append(args, a)
		}
	}
	return strings.Join(quoteArgs(args), " ")
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$`\\*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

func scheduleErr(err error) error {
	if errors.Is(err, store.ErrNoSchedule) || strings.Contains(err.Error(), "ambiguous") {
		return usageErr("%v", err)
	}
	return err
}

func newScheduleStateCmd(verb string) *cobra.Command {
	short := map[string]string{
		"pause":  "Pause a schedule: nothing is dispatched until it is resumed (a run going on goes on)",
		"resume": "Resume a paused schedule from its next due time (times missed while paused are not run)",
		"remove": "Remove a schedule (its dispatches stay on record; a run going on goes on)",
	}[verb]
	return &cobra.Command{
		Use:   verb + " SCHEDULE",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, st, err := openProject(cmd)
			if err != nil {
				return outsideRepo(err, scheduleOutside)
			}
			defer st.Close()
			ctx := cmd.Context()
			sc, err := st.GetSchedule(ctx, args[0])
			if err != nil {
				return scheduleErr(err)
			}
			if !sc.RemovedAt.IsZero() {
				return usageErr("schedule %s was removed", sc.ID)
			}
			now := time.Now()
			switch verb {
			case "pause":
				if sc.Paused {
					return usageErr("schedule %s is already paused", sc.ID)
				}
				err = st.SetSchedulePaused(ctx, sc.ID, true, schedule.ReasonPaused, now)
			case "resume":
				if !sc.Paused {
					return usageErr("schedule %s is not paused", sc.ID)
				}
				if err = st.SetSchedulePaused(ctx, sc.ID, false, "", now); err == nil {
					err = skipPaused(ctx, st, sc, now)
				}
			case "remove":
				err = st.RemoveSchedule(ctx, sc.ID, schedule.ReasonRemoved, now)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "schedule %s %s\n", sc.ID, map[string]string{"pause": "paused", "resume": "resumed", "remove": "removed"}[verb])
			return nil
		},
	}
}

// skipPaused records the due times a schedule missed while it was
// paused as expired, so that a worker does not catch up on them.
func skipPaused(ctx context.Context, st *store.Store, sc *store.Schedule, now time.Time) error {
	var spec schedule.Spec
	if err := json.Unmarshal(sc.Spec, &spec); err != nil {
		return nil
	}
	from, err := st.LatestDue(ctx, sc.ID)
	if err != nil {
		return err
	}
	if from.Before(sc.CreatedAt) {
		from = sc.CreatedAt
	}
	dec := schedule.Decide(spec, schedule.CatchUpOnce, from, now)
	missed := dec.Expire
	if !dec.Due.IsZero() {
		missed = append(missed, dec.Due)
	}
	if len(missed) == 0 {
		return nil
	}
	return st.MarkDue(ctx, sc.ID, time.Time{}, missed, schedule.ReasonPaused, schedule.ReasonPaused, now)
}
