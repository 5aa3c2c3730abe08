package tasks

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
)

// Row is one task as the view shows it (and as `ultra tasks --json`
// prints it).
type Row struct {
	Repo       string    `json:"repo,omitempty"` // the repository's root, with --all-repos; a fleet's run: the URL it was submitted for
	ID         string    `json:"id"`
	Task       string    `json:"task"`
	Mode       string    `json:"mode"`
	Axes       axes.Axes `json:"axes"`
	Status     string    `json:"status"`      // the run's status as every command shows it (Shown)
	TaskStatus string    `json:"task_status"` // todo|running|verifying|reviewing|done|blocked|paused|failed|cancelled|retrying
	Class                // class, waiting_for, why, next, active
	Phase      string    `json:"phase"`
	Goal       string    `json:"goal,omitempty"` // the goal in progress
	// Parent is the parallel run a worker works for; Claims what the
	// worker holds (files and lines), until its goal lands.
	Parent     string `json:"parent,omitempty"`
	Claims     string `json:"claims,omitempty"`
	Retries    int    `json:"retries"`
	MaxRetries int    `json:"max_retries"`
	// Limit is the limit that ends the run first (the retries, or the
	// goal's build/verify cycles): what the table shows.
	Limit        Limit     `json:"limit,omitzero"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Cost         float64   `json:"cost"`
	BudgetCost   float64   `json:"budget_cost,omitempty"`
	Created      time.Time `json:"created_at"`
	Updated      time.Time `json:"updated_at"`
	PID          int       `json:"pid,omitempty"`
	Heartbeat    time.Time `json:"heartbeat,omitzero"`
	HeartbeatAge float64   `json:"heartbeat_age_seconds,omitempty"`
	Activity     string    `json:"activity,omitempty"`
	Checkpoint   string    `json:"checkpoint,omitempty"`
	// Schedule and ScheduleDue: the schedule that started the run and
	// the due time it started it for (a dispatch's schedule and due_at).
	Schedule    string    `json:"schedule,omitempty"`
	ScheduleDue time.Time `json:"schedule_due_at,omitzero"`
}

// Table writes rows as the view's table; with repos, each row names its
// repository. When a schedule started any of the runs, a SCHEDULE column
// names it ("-" for a run a person started).
func Table(w io.Writer, rows []Row, now time.Time, repos bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	scheduled := false
	for i := range rows {
		scheduled = scheduled || rows[i].Schedule != ""
	}
	head := "MODE\tSTATUS\tPHASE\tAXES\tGOAL\tLIMIT\tTOKENS\tCOST\tAGE\tBEAT\tCHECKPOINT\tNEXT\n"
	if scheduled {
		head = "SCHEDULE\t" + head
	}
	head = "ID\t" + head
	if repos {
		head = "REPO\t" + head
	}
	io.WriteString(tw, head)
	var b strings.Builder
	for i := range rows {
		r := &rows[i]
		b.Reset()
		if repos {
			b.WriteString(dash(repoCell(r.Repo)))
			b.WriteByte('\t')
		}
		b.WriteString(r.ID)
		b.WriteByte('\t')
		if scheduled {
			b.WriteString(dash(r.Schedule))
			b.WriteByte('\t')
		}
		b.WriteString(dash(r.Mode))
		b.WriteByte('\t')
		b.WriteString(statusCell(r))
		b.WriteByte('\t')
		b.WriteString(dash(r.Phase))
		b.WriteByte('\t')
		b.WriteString(r.Axes.String())
		b.WriteByte('\t')
		b.WriteString(goalCell(r))
		b.WriteByte('\t')
		b.WriteString(r.LimitOrRetries().Short())
		b.WriteByte('\t')
		b.WriteString(Tokens(r.InputTokens))
		b.WriteByte('/')
		b.WriteString(Tokens(r.OutputTokens))
		b.WriteByte('\t')
		b.WriteString(costCell(r.Cost, r.BudgetCost))
		b.WriteByte('\t')
		b.WriteString(Age(now.Sub(r.Created)))
		b.WriteByte('\t')
		if r.Heartbeat.IsZero() || r.Status != "running" { // only a driven run has a live beat
			b.WriteString("-")
		} else {
			b.WriteString(Age(now.Sub(r.Heartbeat)))
		}
		b.WriteByte('\t')
		b.WriteString(dash(shortCommit(r.Checkpoint)))
		b.WriteByte('\t')
		b.WriteString(dash(r.Next))
		b.WriteByte('\n')
		io.WriteString(tw, b.String())
	}
	return tw.Flush()
}

// Limit is a count a run uses up and escalates when it is gone.
type Limit struct {
	What string `json:"what"` // "retries", "cycles of goal G001", "final gate verifications"
	Used int    `json:"used"`
	Max  int    `json:"max"`
}

// Short is the limit in a table cell: "2/10 retries", "3/5 cycles".
func (l Limit) Short() string {
	if l.Max == 0 {
		return "-"
	}
	what, _, _ := strings.Cut(l.What, " of ")
	return fmt.Sprintf("%d/%d %s", l.Used, l.Max, what)
}

// LimitOrRetries is the run's binding limit, or its retries for a run
// that recorded none.
func (r *Row) LimitOrRetries() Limit {
	if r.Limit.Max > 0 {
		return r.Limit
	}
	return Limit{What: "retries", Used: r.Retries, Max: r.MaxRetries}
}

func statusCell(r *Row) string {
	switch {
	case r.Class.Class == Waiting && r.For != "":
		return Waiting + ":" + r.For
	case r.Class.Class == Running && r.TaskStatus != "" && r.TaskStatus != Running:
		return Running + ":" + r.TaskStatus
	case r.Class.Class == Resumable || r.Class.Class == Paused:
		if r.Status != "" && r.Status != r.Class.Class {
			return r.Class.Class + ":" + r.Status
		}
	}
	return r.Class.Class
}

func goalCell(r *Row) string {
	if r.Parent != "" {
		// A worker: its goal, its run, what it claims.
		s := "↳ " + dash(r.Goal) + " of " + r.Parent
		if r.Claims != "" {
			s += " claims " + clip(r.Claims, 48)
		}
		return s
	}
	task := clip(r.Task, 40)
	if r.Goal != "" {
		return r.Goal + " " + task
	}
	return dash(task)
}

func costCell(spent, budget float64) string {
	if budget > 0 {
		return fmt.Sprintf("$%.2f/$%.2f", spent, budget)
	}
	return fmt.Sprintf("$%.2f", spent)
}

// Tokens is a token count in short form: 950, 12.3k, 4.1M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

func shortCommit(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// repoCell is a repository in a table cell: a root's or a URL's last
// element, without .git ("/srv/git/shop.git" and
// "git@host:team/shop.git" are both "shop").
func repoCell(repo string) string {
	if repo == "" {
		return ""
	}
	base := path.Base(filepath.ToSlash(strings.TrimRight(repo, "/")))
	if i := strings.LastIndexByte(base, ':'); i >= 0 {
		base = base[i+1:]
	}
	return strings.TrimSuffix(base, ".git")
}
