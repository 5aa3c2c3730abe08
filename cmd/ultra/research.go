package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/phase"
)

// researchQuestionMax bounds a question read from stdin.
const researchQuestionMax = 1 << 20

// newResearchCmd is ultra research: a read-only run that investigates a
// question and ends with a report in .ultra/research/.
func newResearchCmd() *cobra.Command {
	var f runFlags
	a := axes.Default
	a.Mode, a.Control = phase.Research, "autonomous"
	cmd := &cobra.Command{
		Use:   "research [flags] QUESTION",
		Short: "Research a question about the repository (nothing changes) and write the report to .ultra/research/",
		Long: "ultra research investigates a question in the repository's code, its dependencies and its design, read-only:\n" +
			"no branch, no worktree, and the checkout is read-only to the model. The model may start read-only helpers\n" +
			"(task) for sub-questions, and ends with a report that ultra writes to .ultra/research/<time>-<slug>.md.\n" +
			"The question comes from the arguments, or from stdin when there are none.",
		Example: `  ultra research "how does the gate decide that a run is complete?"
  echo "where are budgets enforced?" | ultra research
  ultra research --output jsonl --max-turns 40 "which packages do I/O?"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := researchQuestion(cmd.InOrStdin(), args)
			if err != nil {
				return err
			}
			a, err := a.Normalize()
			if err != nil {
				return usageErr("%v", err)
			}
			if a.Mode != phase.Research {
				return usageErr("ultra research runs in the research work mode, not %s", a.Mode)
			}
			var rep researchReportSink
			out, err := researchStart(cmd, &f, a, q, &rep)
			if err == nil && out != nil && out.Status == agent.StatusComplete && f.output != "jsonl" {
				if path := rep.get(); path != "" {
					printResearchReport(cmd.OutOrStdout(), path)
				}
			}
			return finished(out, err)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&a.Permission, "permission-profile", a.Permission, "permission profile: "+strings.Join(axes.Values[axes.Permission], ", "))
	fl.StringVar(&a.ModelMode, "model-mode", a.ModelMode, "model mode: "+strings.Join(axes.Values[axes.ModelMode], ", "))
	return cmd
}

// researchQuestion is the question: the arguments, or stdin when there
// are none and stdin is not a terminal.
func researchQuestion(in io.Reader, args []string) (string, error) {
	q := strings.TrimSpace(strings.Join(args, " "))
	if q == "" && in != nil {
		if !isTerminal(in) {
			b, err := io.ReadAll(io.LimitReader(in, researchQuestionMax+1))
			if err != nil {
				return "", usageErr("reading the question from stdin: %v", err)
			}
			if len(b) > researchQuestionMax {
				return "", usageErr("the question on stdin is longer than %d bytes", researchQuestionMax)
			}
			q = strings.TrimSpace(string(b))
		}
	}
	if q == "" {
		return "", usageErr("the question is empty: give it as arguments (ultra research \"QUESTION\") or on stdin")
	}
	return q, nil
}

// researchStart starts a read-only run of axes a on task in the project's
// checkout (no worktree), with the surfaces of f and extra sinks.
func researchStart(cmd *cobra.Command, f *runFlags, a axes.Axes, task string, extra ...event.Sink) (*agent.Outcome, error) {
	p, st, err := openProject(cmd)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return launch(cmd, f, p, st, cmd.OutOrStdout(), agent.Spec{Task: task, Repo: p.Root, Workdir: p.Root, Cwd: p.Dir, Axes: a, Budgets: f.budgets(p)}, nil, extra...)
}

// researchReportSink notes the path of the report a run wrote.
type researchReportSink struct {
	mu   sync.Mutex
	path string
}

func (s *researchReportSink) Emit(e event.Event) {
	d, ok := e.Data.(event.ToolResultData)
	if !ok || d.Tool != "report" || d.IsError {
		return
	}
	if p, ok := d.Details["path"].(string); ok {
		s.mu.Lock()
		s.path = p
		s.mu.Unlock()
	}
}

func (s *researchReportSink) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// printResearchReport shows the report's path and the report.
func printResearchReport(w io.Writer, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(w, "\nReport: %s (cannot read it: %v)\n", path, err)
		return
	}
	b = []byte(event.Printable(string(b)))
	fmt.Fprintf(w, "\nReport: %s\n\n%s", path, b)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		fmt.Fprintln(w)
	}
}
