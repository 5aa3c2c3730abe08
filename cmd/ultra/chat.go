package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
)

// chatFlags are the flags of ultra chat and ultra -p.
type chatFlags struct {
	runFlags
	permission, modelMode string
	inputFormat           string // --input-format: text or stream-json
}

func (c *chatFlags) register(cmd *cobra.Command) {
	c.runFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&c.permission, "permission-profile", "normal", "permission profile: "+strings.Join(axes.Values[axes.Permission], ", "))
	fl.StringVar(&c.modelMode, "model-mode", "smart", "model mode: "+strings.Join(axes.Values[axes.ModelMode], ", "))
	fl.StringVar(&c.inputFormat, "input-format", "text", "text (the question as arguments or stdin) or stream-json (user messages as JSON lines on stdin, as claude -p reads them: one answer each, in one session; needs --output-format stream-json)")
}

func newChatCmd() *cobra.Command {
	var f chatFlags
	var print bool
	cmd := &cobra.Command{
		Use:   "chat [SESSION] [QUESTION]",
		Short: "Ask questions about the project: read-only, no branch, the answer is the result",
		Long: "ultra chat answers questions about the repository. The model may read files and run read-only\n" +
			"commands; nothing changes, no branch or worktree is made. Each chat is a session that goes on:\n" +
			"ultra chat SESSION \"next question\" continues it with its history. Without a question, ultra chat\n" +
			"asks for questions one by one in a terminal, and otherwise reads one question (all of stdin).",
		Example: `  ultra chat "what does this project do?"
  ultra chat 20261124-090000-a1b2c3 "and where are its tests?"
  ultra -p "which function parses the config?"    # print the answer only`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return chat(cmd, &f, args, print)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVarP(&print, "print", "p", false, "print mode, as claude -p: the answer alone (or --output-format's JSON), no prompt, no session line")
	return cmd
}

// chat runs ultra chat (and ultra -p, print true): one question, or a
// session of them.
func chat(cmd *cobra.Command, f *chatFlags, args []string, print bool) error {
	p, st, err := openProject(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	session := ""
	// A first argument shaped like a run id names a session, and one that
	// names none is an error rather than the start of a question.
	if len(args) > 0 && command.LooksLikeRun(args[0]) {
		row, err := getRun(cmd, st, args[0])
		if err != nil {
			return err
		}
		if row.Axes.Mode != phase.Chat {
			return usageErr("run %s is a %s run, not a chat session (see ultra runs)", row.ID, row.Axes.Mode)
		}
		session, args = row.ID, args[1:]
	}
	question := strings.TrimSpace(strings.Join(args, " "))
	in := cmd.InOrStdin()
	interactive := false
	streamIn, err := f.streamInput(question)
	if err != nil {
		return err
	}
	if streamIn {
		print = true
	} else if question == "" {
		if isTerminal(in) {
			interactive = !print
			if print {
				return usageErr("ultra -p needs a question: as arguments or on stdin")
			}
		} else {
			b, err := io.ReadAll(in)
			if err != nil {
				return fmt.Errorf("reading the question from stdin: %w", err)
			}
			question = strings.TrimSpace(string(b))
			if question == "" {
				return usageErr("the question is empty: give it as arguments or on stdin")
			}
		}
	}
	a := axes.Axes{Mode: phase.Chat, Control: "autonomous", Permission: f.permission, ModelMode: f.modelMode, Surface: "headless"}
	if a, err = a.Normalize(); err != nil {
		return usageErr("%v", err)
	}
	if err := f.validate(); err != nil {
		return err
	}
	var row *store.Run
	if session != "" {
		row, _ = st.GetRun(cmd.Context(), session)
	}
	// The answer goes to stdout; the log only with --output jsonl (to
	// stdout) or -v (to stderr, ultra -p -v too).
	logTo := io.Discard
	switch {
	case f.output == "jsonl":
		logTo = cmd.OutOrStdout()
	case f.verbose:
		logTo = cmd.ErrOrStderr()
	}
	o, err := runOptions(cmd, &f.runFlags, p, st, logTo, row, true)
	if err != nil {
		return err
	}
	defer closeSinks(o)
	rememberRepo(p.Root)
	ctx, stop := interruptible()
	defer stop()
	ask := func(q string) (*agent.Outcome, error) {
		if session != "" {
			return agent.Resume(ctx, o, session, agent.ResumeOptions{Guidance: q})
		}
		return agent.Start(ctx, o, agent.Spec{Task: q, Repo: p.Root, Workdir: p.Root, Cwd: p.Dir, Axes: a, Budgets: f.budgets(p)})
	}
	answer := func(q string) error {
		out, err := ask(q)
		if agent.IsPreflight(err) {
			return usageErr("%v", err)
		}
		if err != nil {
			return &exitError{code: agent.ExitError, err: err}
		}
		session = out.RunID
		if out.ExitCode != 0 {
			return &exitError{code: out.ExitCode, err: fmt.Errorf("chat %s %s: %s", out.RunID, out.Status, out.Reason)}
		}
		if f.output != "jsonl" && !f.structured() {
			fmt.Fprintln(cmd.OutOrStdout(), event.Printable(strings.TrimRight(out.Answer, "\n")))
		}
		return nil
	}
	if streamIn {
		return readUserMessages(in, answer)
	}
	if !interactive {
		err := answer(question)
		if err == nil && !print && f.output != "jsonl" && !f.structured() {
			fmt.Fprintf(cmd.ErrOrStderr(), "(session %s: ultra chat %s \"next question\")\n", session, session)
		}
		return err
	}
	w := cmd.ErrOrStderr()
	fmt.Fprintln(w, "ultra chat: ask about this project; an empty line or Ctrl-D ends the session.")
	sc := bufio.NewScanner(in)
	for {
		fmt.Fprint(w, "you> ")
		if !sc.Scan() {
			break
		}
		q := strings.TrimSpace(sc.Text())
		if q == "" {
			break
		}
		if err := answer(q); err != nil {
			return err
		}
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintln(w)
	if session != "" {
		fmt.Fprintf(w, "(session %s: ultra chat %s continues it)\n", session, session)
	}
	return nil
}
