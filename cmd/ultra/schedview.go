package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ultra-dev/ultra/internal/fleet"
	"github.com/ultra-dev/ultra/internal/schedule"
	"github.com/ultra-dev/ultra/internal/store"
)

// scheduleView is a schedule as schedule add, list and show and ultra
// tasks print it, in JSON with the same fields everywhere. Times are
// named as a dispatch's are: a dispatch's due time is due_at, the
// schedule's next one next_due_at; a task row names its schedule
// (schedule) and due time (schedule_due_at) as a dispatch does.
type scheduleView struct {
	ID string `json:"id"`
	// Repo is the repository's root with ultra tasks --all-repos, as a
	// task row's repo; RepoURL and Base are a fleet's schedule's: the
	// repository its runs are submitted for, and their base branch.
	Repo       string           `json:"repo,omitempty"`
	RepoURL    string           `json:"repo_url,omitempty"`
	Base       string           `json:"base,omitempty"`
	Task       string           `json:"task"`
	When       string           `json:"when"` // the spec for people: every 6h, cron "0 3 * * *" UTC, at …
	Spec       json.RawMessage  `json:"spec"` // cron, every and anchor, or at; and zone
	Zone       string           `json:"zone"`
	CatchUp    string           `json:"catch_up"`
	State      string           `json:"state"` // active, paused, removed, done (a one-off that ran)
	Served     bool             `json:"served"`
	Args       []string         `json:"args"` // the `ultra run` arguments of its runs
	NextDue    time.Time        `json:"next_due_at,omitzero"`
	Last       *store.Dispatch  `json:"last_dispatch,omitempty"`
	Dispatches []store.Dispatch `json:"dispatches,omitempty"` // with show
	CreatedAt  time.Time        `json:"created_at"`
	UpdatedAt  time.Time        `json:"updated_at"`
	RemovedAt  time.Time        `json:"removed_at,omitzero"`
}

// scheduleViewOf is sc as the commands show it; served says whether a
// worker serves the store's schedules.
func scheduleViewOf(ctx context.Context, st *store.Store, sc *store.Schedule, served bool, now time.Time) scheduleView {
	v := scheduleView{ID: sc.ID, RepoURL: sc.Repo, Base: sc.Base, Task: sc.Task, Spec: sc.Spec, CatchUp: sc.CatchUp,
		State: "active", Served: served, Args: sc.Args, CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt, RemovedAt: sc.RemovedAt}
	var spec schedule.Spec
	if err := json.Unmarshal(sc.Spec, &spec); err != nil {
		v.When = "corrupt: " + err.Error()
		return v
	}
	spec.Zone = schedule.CanonicalZone(spec.Zone)
	if b, err := json.Marshal(spec); err == nil {
		v.Spec = b
	}
	v.When, v.Zone = spec.String(), spec.Zone
	recent, _ := st.Dispatches(ctx, sc.ID, 20)
	for i := range recent {
		d := recent[i]
		if d.Status == string(schedule.Queued) {
			continue
		}
		if v.Last == nil {
			v.Last = &d
		}
	}
	from := sc.CreatedAt
	if v.Last != nil && v.Last.Due.After(from) {
		from = v.Last.Due
	}
	if n, ok := spec.Next(from); ok {
		v.NextDue = n
	}
	switch {
	case !sc.RemovedAt.IsZero():
		v.State, v.NextDue = "removed", time.Time{}
	case sc.Paused:
		v.State, v.NextDue = "paused", time.Time{}
	case v.NextDue.IsZero():
		v.State = "done"
	}
	return v
}

// servedNow reports whether a worker beats for the store's schedules.
func servedNow(ctx context.Context, st *store.Store, now time.Time) bool {
	ws, err := st.Workers(ctx, now.Add(-fleet.StaleAfter))
	return err == nil && len(ws) > 0
}

// notServed is what a person reads when no worker dispatches the
// schedules of a repository, or of a fleet (a shared store).
func notServed(fleet bool) string {
	if fleet {
		return "schedules are not being served: no fleet worker is running; start one with ultra worker --db on a machine of the fleet"
	}
	return "schedules are not being served: no ultra worker (or ultra serve) runs for this repository; start one with ultra worker"
}

// isFleet reports whether st is a fleet's shared store.
func isFleet(st *store.Store) bool { return st.Backend() == store.Postgres }

// when is a due time for people: how far away it is first, then when,
// in the schedule's zone, with its weekday (a cron schedule's days are
// weekdays), to the minute unless it has seconds.
func when(t time.Time, zone string, now time.Time) string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	layout := "Mon 2006-01-02 15:04 MST"
	if t.Second() != 0 {
		layout = "Mon 2006-01-02 15:04:05 MST"
	}
	at := t.In(loc).Format(layout)
	rel := t.Sub(now).Round(time.Second)
	if rel >= 0 {
		return fmt.Sprintf("in %s (%s)", shortDur(rel), at)
	}
	return fmt.Sprintf("%s ago (%s)", shortDur(-rel), at)
}

func shortDur(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		if h := (d % (24 * time.Hour)) / time.Hour; h > 0 {
			return fmt.Sprintf("%dd%dh", d/(24*time.Hour), h)
		}
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, (d%time.Hour)/time.Minute)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, (d%time.Minute)/time.Second)
	}
	return d.String()
}

// printSchedules is the schedules' table: when each is due next, and its
// last dispatch with the run it made.
func printSchedules(w io.Writer, views []scheduleView, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCHEDULE\tWHEN\tSTATE\tNEXT\tLAST\tTASK")
	for _, v := range views {
		next, last := "-", "-"
		if !v.NextDue.IsZero() {
			next = when(v.NextDue, v.Zone, now)
		}
		if v.Last != nil {
			last = v.Last.Status
			if v.Last.Run != "" {
				last += " " + v.Last.Run
			}
		}
		task := clip(v.Task, 50)
		if v.RepoURL != "" {
			task += " · " + v.RepoURL // a fleet's: the repository its runs are for
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.When, v.State, next, last, task)
	}
	tw.Flush()
}
