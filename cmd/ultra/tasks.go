package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/fleet"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// recentFinished is how many finished runs the view shows without --all.
const recentFinished = 3

// taskSource is one repository's store the view reads.
type taskSource struct {
	root string
	st   *store.Store
}

// skippedRepo is a registered repository the view could not read.
type skippedRepo struct {
	Repo   string `json:"repo"`
	Reason string `json:"reason"`
}

// tasksView is what `ultra tasks --json` prints.
type tasksView struct {
	Tasks          []tasks.Row   `json:"tasks"`
	HiddenFinished int           `json:"hidden_finished,omitempty"` // finished runs left out (see --all)
	Skipped        []skippedRepo `json:"skipped_repos,omitempty"`
	// Schedules are the active and paused schedules, each with its next
	// dispatch; NotServed names the repositories with active schedules
	// and no worker to dispatch them.
	Schedules []scheduleView `json:"schedules,omitempty"`
	NotServed []string       `json:"schedules_not_served,omitempty"`
	// QueueNotServed: runs wait in a fleet's queue and no worker of the
	// fleet is running to take them.
	QueueNotServed bool `json:"queue_not_served,omitempty"`
	// Fleet: the view is of a fleet's shared store.
	Fleet bool `json:"-"`
}

func newTasksCmd() *cobra.Command {
	var asJSON, watch, all, allRepos bool
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "Every run and session: what runs, what waits for a person, what is stuck, and the next command for each",
		Long: "Lists the repository's runs and sessions, those that need a person first, then running, stuck\n" +
			"(its process is dead or its heartbeat is older than " + tasks.StaleAfter.String() + "), paused and resumable ones,\n" +
			"with the command a person would run next. Finished runs (done, failed, cancelled) are left out\n" +
			"but for the last few unless --all. --all-repos lists every repository a run or chat started in.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sources, skipped, err := openTaskSources(cmd, allRepos)
			if err != nil {
				return err
			}
			defer func() {
				for _, s := range sources {
					s.st.Close()
				}
			}()
			out := cmd.OutOrStdout()
			draw := func(ctx context.Context, w io.Writer) error {
				v, err := collectTasks(ctx, sources, all, allRepos, time.Now())
				if err != nil {
					return err
				}
				v.Skipped = skipped
				if asJSON {
					return writeJSON(w, v)
				}
				// Tasks and reasons are the model's and the person's text.
				return printTasks(&printableWriter{w: w}, v, allRepos, time.Now())
			}
			if !watch {
				return draw(cmd.Context(), out)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			tty := false
			if f, ok := out.(*os.File); ok {
				tty = term.IsTerminal(int(f.Fd()))
			}
			for {
				var b strings.Builder
				if tty {
					b.WriteString("\x1b[H\x1b[2J")
				}
				if !asJSON {
					fmt.Fprintf(&b, "ultra tasks · %s · Ctrl-C to stop\n", time.Now().Format("15:04:05"))
				}
				if err := draw(ctx, &b); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				if !tty && !asJSON {
					b.WriteString("\n")
				}
				io.WriteString(out, b.String())
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(time.Second):
				}
			}
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&watch, "watch", false, "redraw every second until Ctrl-C")
	cmd.Flags().BoolVar(&all, "all", false, "list finished runs too")
	cmd.Flags().BoolVar(&allRepos, "all-repos", false, "list the tasks of every repository a run or chat started in")
	return cmd
}

// openTaskSources opens the store of the repository, or with allRepos of
// every registered repository (skipping, with the reason, those that are
// gone).
func openTaskSources(cmd *cobra.Command, allRepos bool) ([]taskSource, []skippedRepo, error) {
	if !allRepos {
		p, st, err := openProject(cmd)
		if err != nil {
			return nil, nil, outsideRepo(err, "ultra tasks lists the runs of the repository it runs in (or -C DIR); "+
				"ultra tasks --all-repos lists every repository's, and with ULTRA_DB=postgres://… a fleet's")
		}
		return []taskSource{{root: p.Root, st: st}}, nil, nil
	}
	repos, err := knownRepos()
	if err != nil {
		return nil, nil, err
	}
	var out []taskSource
	var skipped []skippedRepo
	for _, r := range repos {
		db := filepath.Join(r.Root, ".ultra", "state", "ultra.db")
		if fi, err := os.Stat(r.Root); err != nil || !fi.IsDir() {
			skipped = append(skipped, skippedRepo{Repo: r.Root, Reason: "the repository is gone"})
			continue
		}
		if _, err := os.Stat(db); err != nil {
			skipped = append(skipped, skippedRepo{Repo: r.Root, Reason: "it has no store (" + db + " is gone)"})
			continue
		}
		st, err := store.Open(db)
		if err != nil {
			skipped = append(skipped, skippedRepo{Repo: r.Root, Reason: err.Error()})
			continue
		}
		out = append(out, taskSource{root: r.Root, st: st})
	}
	return out, skipped, nil
}

// collectTasks reads and classifies the tasks of every source.
func collectTasks(ctx context.Context, sources []taskSource, all, allRepos bool, now time.Time) (*tasksView, error) {
	v := &tasksView{Tasks: []tasks.Row{}}
	for _, s := range sources {
		v.Fleet = v.Fleet || isFleet(s.st)
		views, err := s.st.ListTasks(ctx, store.TaskFilter{All: all, RecentFinished: recentFinished})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.root, err)
		}
		shownFinished, first := 0, len(v.Tasks)
		for i := range views {
			r := taskRow(&views[i], now)
			if len(sources) > 1 {
				r.Repo = s.root
			}
			if allRepos && strings.HasPrefix(r.Next, "ultra ") {
				// The command works from anywhere: it names the repository.
				r.Next = "ultra -C " + workspace.ShellQuote(s.root) + strings.TrimPrefix(r.Next, "ultra")
			}
			if isFinishedTask(views[i].TaskRow.Status) {
				shownFinished++
			}
			v.Tasks = append(v.Tasks, r)
		}
		if isFleet(s.st) {
			if err := fleetRepos(ctx, s.st, v.Tasks[first:]); err != nil {
				return nil, err
			}
		}
		if err := collectSchedules(ctx, v, s, len(sources) > 1, now); err != nil {
			return nil, err
		}
		if isFleet(s.st) && slices.ContainsFunc(views, func(t store.TaskView) bool { return t.Status == store.StatusQueued }) {
			v.QueueNotServed = v.QueueNotServed || !servedNow(ctx, s.st, now)
		}
		if !all {
			n, err := s.st.CountFinishedTasks(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.root, err)
			}
			v.HiddenFinished += max(0, n-shownFinished)
		}
	}
	tasks.Sort(v.Tasks)
	return v, nil
}

// collectSchedules adds the source's schedules that may still dispatch,
// and whether a worker serves them.
func collectSchedules(ctx context.Context, v *tasksView, s taskSource, repos bool, now time.Time) error {
	scheds, err := s.st.Schedules(ctx, false)
	if err != nil {
		return fmt.Errorf("%s: %w", s.root, err)
	}
	active, served := false, servedNow(ctx, s.st, now)
	for _, sc := range scheds {
		sv := scheduleViewOf(ctx, s.st, sc, served, now)
		if sv.State == "done" {
			continue
		}
		if repos {
			sv.Repo = s.root
		}
		active = active || sv.State == "active"
		v.Schedules = append(v.Schedules, sv)
	}
	if active && !served {
		v.NotServed = append(v.NotServed, s.root)
	}
	return nil
}

// fleetRepos names the repository each of a fleet's runs was submitted
// for (its origin's URL): a fleet's workers serve many.
func fleetRepos(ctx context.Context, st *store.Store, rows []tasks.Row) error {
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	origins, err := fleet.Origins(ctx, st, ids)
	if err != nil {
		return err
	}
	for i := range rows {
		if o, ok := origins[rows[i].ID]; ok {
			rows[i].Repo = redactURL(o.Repo) // a token in the URL is not shown
		}
	}
	return nil
}

func isFinishedTask(status string) bool {
	for _, s := range store.FinishedTaskStatuses {
		if s == status {
			return true
		}
	}
	return false
}

// taskRow is one stored task as the view shows it, its process checked
// from this host.
func taskRow(v *store.TaskView, now time.Time) tasks.Row {
	in := tasks.Input{
		ID: v.ID, Status: v.Status, TaskStatus: v.TaskRow.Status, Reason: v.Reason, Waiting: v.TaskRow.Waiting,
		PID: v.PID, Branch: v.Branch, Landed: v.Landed, Undone: v.Undone, Removed: v.Removed, Parent: v.TaskRow.Parent,
	}
	rt := v.Runtime
	if rt != nil {
		in.Heartbeat = rt.Heartbeat
		if in.PID == 0 {
			in.PID = rt.PID
		}
	}
	if v.Status == agent.StatusRunning {
		in.Process = agent.ProcessOf(in.PID, rt)
	}
	r := tasks.Row{
		ID: v.ID, Task: v.Task, Mode: v.Axes.Mode, Axes: v.Axes, Status: tasks.Shown(in, now), TaskStatus: v.TaskRow.Status,
		Class: tasks.Classify(in, now), Phase: v.Phase, Goal: v.TaskRow.Goal,
		Retries: v.TaskRow.Retries, MaxRetries: v.TaskRow.MaxRetries,
		Limit:       tasks.Limit{What: v.TaskRow.LimitWhat, Used: v.TaskRow.LimitUsed, Max: v.TaskRow.LimitMax},
		InputTokens: v.TaskRow.InputTokens, OutputTokens: v.TaskRow.OutputTokens,
		Cost: v.TaskRow.SpentCost, BudgetCost: v.TaskRow.BudgetCost,
		Created: v.CreatedAt, Updated: v.UpdatedAt, Checkpoint: v.TaskRow.Checkpoint,
		Schedule: v.Schedule, ScheduleDue: v.ScheduleDue, Parent: v.TaskRow.Parent, Claims: v.TaskRow.Claim,
	}
	if r.Class.Active {
		r.PID = in.PID
	}
	if rt != nil {
		r.Heartbeat, r.Activity = rt.Heartbeat, rt.Activity
		if !rt.Heartbeat.IsZero() {
			r.HeartbeatAge = now.Sub(rt.Heartbeat).Round(time.Millisecond).Seconds()
		}
	}
	return r
}

func printTasks(w io.Writer, v *tasksView, repos bool, now time.Time) error {
	if len(v.Tasks) == 0 {
		if v.HiddenFinished > 0 {
			fmt.Fprintf(w, "nothing in flight; %s not shown: ultra tasks --all\n", plural(v.HiddenFinished, "finished run", "finished runs"))
		} else if v.Fleet {
			fmt.Fprintln(w, "no runs yet: queue one with ultra submit --repo URL \"TASK\"")
		} else {
			fmt.Fprintln(w, "no runs yet: start one with ultra run \"TASK\"")
		}
	} else {
		// A fleet's runs name their repository's URL.
		repos = repos || slices.ContainsFunc(v.Tasks, func(r tasks.Row) bool { return r.Repo != "" })
		if err := tasks.Table(w, v.Tasks, now, repos); err != nil {
			return err
		}
		if v.HiddenFinished > 0 {
			fmt.Fprintf(w, "%s not shown: ultra tasks --all\n", plural(v.HiddenFinished, "older finished run", "older finished runs"))
		}
	}
	if len(v.Schedules) > 0 {
		fmt.Fprintln(w)
		printSchedules(w, v.Schedules, now)
	}
	for _, r := range v.NotServed {
		if repos {
			fmt.Fprintf(w, "%s: %s\n", r, notServed(v.Fleet))
		} else {
			fmt.Fprintln(w, notServed(v.Fleet))
		}
	}
	if v.QueueNotServed {
		fmt.Fprintln(w, "queued runs wait: no fleet worker is running to take them; start one with ultra worker --db on a machine of the fleet")
	}
	for _, s := range v.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Repo, s.Reason)
	}
	return nil
}

// usageSum is tokens and cost summed over model responses.
type usageSum struct {
	Responses        int     `json:"responses"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	Cost             float64 `json:"cost"` // US dollars
}

func (s *usageSum) add(u store.Usage) {
	s.Responses += u.Responses
	s.InputTokens += u.InputTokens
	s.OutputTokens += u.OutputTokens
	s.CacheReadTokens += u.CacheReadTokens
	s.CacheWriteTokens += u.CacheWriteTokens
	s.Cost += u.Cost
}

type runUsage struct {
	Run  string `json:"run"`
	Mode string `json:"mode"`
	usageSum
}

type modeUsage struct {
	Mode string `json:"mode"`
	usageSum
}

type modelUsage struct {
	Model string `json:"model"`
	usageSum
}

// usageReport is what `ultra report --json` prints; with a run, Runs
// and Modes are left out.
type usageReport struct {
	Run    string       `json:"run,omitempty"`
	Runs   []runUsage   `json:"runs,omitempty"`
	Modes  []modeUsage  `json:"modes,omitempty"`
	Models []modelUsage `json:"models"`
	Total  usageSum     `json:"total"`
}

// summarise groups usage rows by run (in their order), mode and model.
func summarise(rows []store.Usage) usageReport {
	rep := usageReport{Runs: []runUsage{}, Modes: []modeUsage{}, Models: []modelUsage{}}
	runIdx, modeIdx, modelIdx := map[string]int{}, map[string]int{}, map[string]int{}
	for _, u := range rows {
		i, ok := runIdx[u.Run]
		if !ok {
			i = len(rep.Runs)
			runIdx[u.Run] = i
			rep.Runs = append(rep.Runs, runUsage{Run: u.Run, Mode: u.Mode})
		}
		rep.Runs[i].add(u)
		j, ok := modeIdx[u.Mode]
		if !ok {
			j = len(rep.Modes)
			modeIdx[u.Mode] = j
			rep.Modes = append(rep.Modes, modeUsage{Mode: u.Mode})
		}
		rep.Modes[j].add(u)
		k, ok := modelIdx[u.Model]
		if !ok {
			k = len(rep.Models)
			modelIdx[u.Model] = k
			rep.Models = append(rep.Models, modelUsage{Model: u.Model})
		}
		rep.Models[k].add(u)
		rep.Total.add(u)
	}
	sort.SliceStable(rep.Modes, func(a, b int) bool { return rep.Modes[a].Cost > rep.Modes[b].Cost })
	sort.SliceStable(rep.Models, func(a, b int) bool { return rep.Models[a].Cost > rep.Models[b].Cost })
	return rep
}

func newReportCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "report [RUN]",
		Short: "Tokens and cost by run, mode and model; with RUN, that run's by model",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, st, err := openProject(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			run := ""
			if len(args) == 1 {
				row, err := getRun(cmd, st, args[0])
				if err != nil {
					return err
				}
				run = row.ID
			}
			rows, err := st.UsageByRunModel(cmd.Context(), run)
			if err != nil {
				return err
			}
			rep := summarise(rows)
			if run != "" {
				rep.Run, rep.Runs, rep.Modes = run, nil, nil
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(w, rep)
			}
			printReport(w, rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printReport(w io.Writer, rep usageReport) {
	if rep.Total.Responses == 0 && len(rep.Models) == 0 {
		if rep.Run != "" {
			fmt.Fprintf(w, "run %s has no model responses yet\n", rep.Run)
		} else {
			fmt.Fprintln(w, "no model responses yet: start a run with ultra run \"TASK\"")
		}
		return
	}
	section := func(first string, names []string, sums []usageSum, total bool) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\t%9s %12s %10s %10s %11s %10s\n", first, "RESPONSES", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "COST")
		for i, s := range sums {
			fmt.Fprintf(tw, "%s\t%9d %12d %10d %10d %11d %10s\n", names[i], s.Responses, s.InputTokens, s.OutputTokens,
				s.CacheReadTokens, s.CacheWriteTokens, fmt.Sprintf("$%.4f", s.Cost))
		}
		if total {
			s := rep.Total
			fmt.Fprintf(tw, "TOTAL\t%9d %12d %10d %10d %11d %10s\n", s.Responses, s.InputTokens, s.OutputTokens,
				s.CacheReadTokens, s.CacheWriteTokens, fmt.Sprintf("$%.4f", s.Cost))
		}
		tw.Flush()
	}
	if rep.Run == "" {
		var names []string
		var sums []usageSum
		for _, r := range rep.Runs {
			names, sums = append(names, r.Run+" ("+orDash(r.Mode)+")"), append(sums, r.usageSum)
		}
		section("RUN (MODE)", names, sums, false)
		fmt.Fprintln(w)
		names, sums = nil, nil
		for _, m := range rep.Modes {
			names, sums = append(names, orDash(m.Mode)), append(sums, m.usageSum)
		}
		section("MODE", names, sums, false)
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "run %s\n", rep.Run)
	}
	var names []string
	var sums []usageSum
	for _, m := range rep.Models {
		names, sums = append(names, orDash(m.Model)), append(sums, m.usageSum)
	}
	section("MODEL", names, sums, true)
}
