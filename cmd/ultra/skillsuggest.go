package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/skills"
	"github.com/ultra-dev/ultra/internal/store"
)

func newSkillsSuggestCmd() *cobra.Command {
	var last, minRuns int
	var accept string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "suggest",
		Short: "Draft skills from what runs of this repository repeated; write one only when you accept it",
		Long: `ultra reads the recorded runs of this repository (their commands, the files
they changed, the tests that failed) and drafts a narrow skill for each folder
that several runs changed and checked the same way, with an eval case (the
last such run's task, and a grader that runs the check). Nothing is written:
read the drafts, then accept one with --accept NAME, which writes
.agents/skills/NAME/SKILL.md and NAME/evals/case-1 in this checkout, for you
to edit, try (ultra skills eval NAME) and commit.`,
		Example: `  ultra skills suggest
  ultra skills suggest --accept calc-changes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, st, err := openProject(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			have, _ := p.skills()
			var names []string
			for _, s := range have {
				names = append(names, s.Name)
			}
			runs, err := runEvidence(cmd.Context(), st, last)
			if err != nil {
				return err
			}
			drafts := skills.Suggest(runs, names, minRuns)
			out := cmd.OutOrStdout()
			if accept != "" {
				for _, d := range drafts {
					if d.Name == accept {
						dir, err := writeDraft(p.Root, d)
						if err != nil {
							return err
						}
						fmt.Fprintf(out, "wrote %s (SKILL.md, evals/case-1): edit it, try it with ultra skills eval %s, and commit it\n", dir, d.Name)
						return nil
					}
				}
				return usageErr("no draft %q from the last %d runs (ultra skills suggest lists them)", accept, len(runs))
			}
			if asJSON {
				if drafts == nil {
					drafts = []skills.Draft{}
				}
				return json.NewEncoder(out).Encode(map[string]any{"runs": len(runs), "drafts": drafts})
			}
			if len(drafts) == 0 {
				fmt.Fprintf(out, "no draft: of the last %d runs, no %d changed one folder and checked it the same way\n", len(runs), max(minRuns, 2))
				return nil
			}
			for _, d := range drafts {
				fmt.Fprintf(out, "%s: %s\n  from runs %s\n", d.Name, d.Description, strings.Join(d.Runs, ", "))
				for _, e := range d.Evidence {
					fmt.Fprintf(out, "  - %s\n", e)
				}
				fmt.Fprintf(out, "  accept it: ultra skills suggest --accept %s\n\n", d.Name)
			}
			fmt.Fprintln(out, "nothing was written")
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&last, "last", 50, "read this many of the latest runs")
	fl.IntVar(&minRuns, "min-runs", 2, "a pattern is what at least this many runs did (at least 2)")
	fl.StringVar(&accept, "accept", "", "write the draft NAME into .agents/skills/NAME")
	fl.BoolVar(&asJSON, "json", false, "print the drafts as JSON (with each SKILL.md and eval case)")
	return cmd
}

// runEvidence reads what the latest runs did from their recorded events,
// oldest first: the commands and edits that went through, and the
// tests that failed at their verifications.
func runEvidence(ctx context.Context, st *store.Store, last int) ([]skills.RunEvidence, error) {
	rows, err := st.ListRuns(ctx, last)
	if err != nil {
		return nil, err
	}
	var out []skills.RunEvidence
	for i := len(rows) - 1; i >= 0; i-- {
		row := rows[i]
		evs, err := st.EventsAfter(ctx, row.ID, 0, 0)
		if err != nil {
			return nil, err
		}
		ev := skills.RunEvidence{Run: row.ID, Task: row.Task}
		type pending struct{ tool, arg string }
		calls := map[string]pending{}
		for _, e := range evs {
			switch event.Type(e.Type) {
			case event.ToolCall:
				var d event.ToolCallData
				if json.Unmarshal(e.Data, &d) != nil {
					continue
				}
				var a struct {
					Command  string `json:"command"`
					FilePath string `json:"file_path"`
				}
				_ = json.Unmarshal(d.Args, &a)
				switch d.Tool {
				case "bash":
					calls[d.CallID] = pending{"bash", a.Command}
				case "edit", "write":
					calls[d.CallID] = pending{"edit", relTo(row.Workdir, a.FilePath)}
				}
			case event.ToolResult:
				var d event.ToolResultData
				if json.Unmarshal(e.Data, &d) != nil || d.IsError {
					continue
				}
				switch c := calls[d.CallID]; c.tool {
				case "bash":
					ev.Commands = append(ev.Commands, c.arg)
				case "edit":
					ev.Changed = append(ev.Changed, c.arg)
				}
			case event.VerifyResult:
				var d event.VerifyResultData
				if json.Unmarshal(e.Data, &d) != nil {
					continue
				}
				for i, f := range d.Failing {
					if i < len(d.FailingWhy) && d.FailingWhy[i] != "" {
						f += ": " + d.FailingWhy[i]
					}
					ev.Failing = append(ev.Failing, f)
				}
				ev.Gate = append(ev.Gate, d.Commands...)
			}
		}
		out = append(out, ev)
	}
	return out, nil
}

// relTo is p relative to dir when it lies below it, else p slashed.
func relTo(dir, p string) string {
	if filepath.IsAbs(p) {
		if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(p)
}

// writeDraft writes an accepted draft into root's .agents/skills: never
// over a skill folder that is there.
func writeDraft(root string, d skills.Draft) (string, error) {
	dir := filepath.Join(root, ".agents", "skills", d.Name)
	if _, err := os.Lstat(dir); err == nil {
		return "", usageErr("%s is there already: ultra does not write over a skill", dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	caseDir := filepath.Join(dir, "evals", "case-1")
	if err := os.MkdirAll(caseDir, 0o755); err != nil {
		return "", err
	}
	for _, f := range []struct {
		name, body string
		mode       os.FileMode
	}{
		{filepath.Join(dir, "SKILL.md"), d.SkillMD, 0o644},
		{filepath.Join(caseDir, "task.md"), d.Task + "\n", 0o644},
		{filepath.Join(caseDir, "grader"), d.Grader, 0o755},
	} {
		if err := os.WriteFile(f.name, []byte(f.body), f.mode); err != nil {
			return "", err
		}
	}
	return dir, nil
}
