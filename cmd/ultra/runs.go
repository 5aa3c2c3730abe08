package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
)

func age(t time.Time) string { return tasks.Age(time.Since(t)) }

type runSummary struct {
	ID      string    `json:"id"`
	Phase   string    `json:"phase"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason,omitempty"`
	Task    string    `json:"task"`
	Branch  string    `json:"branch,omitempty"`
	Git     string    `json:"git,omitempty"` // landed, undone, removed, or "" while the worktree is there
	Created time.Time `json:"created_at"`
	Updated time.Time `json:"updated_at"`
}

func newRunsCmd() *cobra.Command {
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List runs with phase, status and age, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return usageErr("--limit %d is refused: give how many runs to show, 1 or more", limit)
			}
			_, st, err := openProject(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.ListRuns(cmd.Context(), limit)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			now := time.Now()
			shown := func(r *store.Run) string {
				status, _ := agent.StateOf(cmd.Context(), st, r, now)
				return status
			}
			if asJSON {
				out := []runSummary{}
				for _, r := range runs {
					out = append(out, runSummary{r.ID, r.Phase, shown(r), r.Reason, r.Task, r.Workspace.Branch, gitState(r.Workspace), r.CreatedAt, r.UpdatedAt})
				}
				return writeJSON(w, out)
			}
			if len(runs) == 0 {
				fmt.Fprintln(w, "no runs yet: start one with ultra run \"TASK\"")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tPHASE\tSTATUS\tBRANCH\tAGE\tTASK")
			for _, r := range runs {
				branch := pick(gitState(r.Workspace), "worktree")
				if r.Workspace.Branch == "" {
					branch = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Phase, shown(r), branch, age(r.CreatedAt), clip(r.Task, 60))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many runs")
	return cmd
}

// gitState is what became of a run's branch and worktree.
func gitState(ws store.Workspace) string { return ws.Fate() }

// clip is s made printable on one line of at most n runes (an ellipsis
// counted in).
func clip(s string, n int) string {
	s = event.Printable(s)
	if one := event.OneLine(s, n); utf8.RuneCountInString(one) <= n {
		return one
	}
	return event.OneLine(s, n-1)
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(event.EscapeC1(b), '\n'))
	return err
}

// printableWriter passes what commands print of the model's text (goal
// titles, reasons, errors) through event.Printable on its way to a
// terminal.
type printableWriter struct {
	w    io.Writer
	held []byte // an incomplete rune at the end of the last write
}

// Write makes b printable; a rune split across two writes (a C1 control
// is two bytes) is judged whole, with the next write.
func (p *printableWriter) Write(b []byte) (int, error) {
	in := b
	if len(p.held) > 0 {
		in = append(p.held, b...)
		p.held = nil
	}
	cut := len(in)
	for i := max(len(in)-utf8.UTFMax+1, 0); i < len(in); i++ {
		if utf8.RuneStart(in[i]) && !utf8.FullRune(in[i:]) {
			cut = i
			break
		}
	}
	if cut < len(in) {
		p.held = append([]byte(nil), in[cut:]...)
		in = in[:cut]
	}
	if _, err := io.WriteString(p.w, event.Printable(string(in))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func getRun(cmd *cobra.Command, st *store.Store, id string) (*store.Run, error) {
	if err := requireRunID(id); err != nil {
		return nil, err
	}
	r, err := st.GetRun(cmd.Context(), id)
	if errors.Is(err, store.ErrNotFound) && sharedDB() != "" {
		return nil, usageErr("%v in the fleet's shared store (ULTRA_DB is set, so ultra reads that store, not this repository's own .ultra/state: unset ULTRA_DB for the repository's runs; see ultra runs)", err)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, usageErr("%v (see ultra runs)", err)
	}
	if err != nil && strings.Contains(err.Error(), "ambiguous") {
		return nil, usageErr("%v", err)
	}
	return r, err
}
