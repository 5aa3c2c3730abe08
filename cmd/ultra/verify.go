package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// Exit codes of ultra verify beyond the common ones.
const (
	exitVerifyFail         = 5
	exitVerifyNotEvaluated = 6
)

func newVerifyCmd() *cobra.Command {
	var asJSON, onlyFailed bool
	var commands []string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "verify [PATH]",
		Short: "Find, run and judge a project's tests, without a model",
		Long: "verify finds the project's test command, runs it, parses the results and judges them as the gate does:\n" +
			"PASS, CONCERNS, FAIL or NOT_EVALUATED. Exit codes: 0 PASS or CONCERNS, 5 FAIL, 6 NOT_EVALUATED.\n" +
			"--only-failed runs the tests that failed in the last `ultra verify` of PATH first, and the whole suite only when they pass.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, _ := cmd.Flags().GetString("dir")
			if len(args) == 1 {
				dir = args[0]
			}
			if dir == "" {
				dir = "."
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return usageErr("%s is not a directory", abs)
			}
			root := abs
			if r, err := workspace.Root(cmd.Context(), abs); err == nil {
				root = r
			}
			cfg, err := config.Load(root)
			if err != nil {
				return usageErr("%v", err)
			}
			source := "--command on the command line"
			if len(commands) == 0 {
				commands, source = cfg.Verify.Command, ""
			}
			if timeout == 0 {
				timeout = cfg.Verify.Timeout.D()
			}
			stateDir := filepath.Join(root, ".ultra", "state", "verify")
			lastPath := filepath.Join(stateDir, "last.json")
			var last *gate.Decision
			if onlyFailed {
				if b, err := os.ReadFile(lastPath); err == nil {
					var d gate.Decision
					if json.Unmarshal(b, &d) == nil {
						last = &d
					}
				}
			}
			if err := os.MkdirAll(stateDir, 0o755); err != nil {
				return err
			}
			ensureIgnored(filepath.Join(root, ".ultra", "state"))
			ctx, stop := interruptible()
			defer stop()
			tree, _ := workspace.TreeHash(ctx, abs)
			logDir := filepath.Join(stateDir, time.Now().UTC().Format("20060102-150405"))
			d, res, err := agent.VerifyOnce(ctx, verify.New(), verify.Request{Dir: abs, Commands: commands, CommandSource: source, Timeout: timeout, LogDir: logDir}, tree, last)
			if err != nil {
				if ctx.Err() != nil {
					return &exitError{code: agent.ExitInterrupted, err: errors.New("interrupted")}
				}
				return err
			}
			if !d.Focused {
				b, _ := json.MarshalIndent(d, "", "  ")
				_ = os.WriteFile(lastPath, b, 0o644)
			}
			// Outside a run nothing tells the project's own constructs that
			// can fake results from new ones, so they do not decide here;
			// they are named, since a run fails on any it adds.
			fakes := verify.FindingKeys(verify.FakeResults(abs))
			w := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(w, map[string]any{"decision": d, "result": res, "fakes": fakes}); err != nil {
					return err
				}
			} else {
				if res != nil {
					fmt.Fprintln(w, res.Summary())
				}
				fmt.Fprintf(w, "gate: %s\n", d.Status)
				for _, r := range d.Reasons {
					fmt.Fprintf(w, "  - %s\n", r)
				}
				if len(fakes) > 0 {
					fmt.Fprintf(w, "note: %d construct(s) in the tree can fake test results; a run's gate fails on any the run adds:\n", len(fakes))
					for _, f := range fakes[:min(len(fakes), 10)] {
						fmt.Fprintf(w, "  - %s\n", event.Printable(f))
					}
				}
			}
			switch d.Status {
			case gate.Pass, gate.Concerns, gate.Waived:
				return nil
			case gate.Fail:
				return &exitError{code: exitVerifyFail, err: errors.New("")}
			}
			return &exitError{code: exitVerifyNotEvaluated, err: errors.New("")}
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decision and the full result as JSON")
	cmd.Flags().BoolVar(&onlyFailed, "only-failed", false, "run the last failing tests first; the full suite only when they pass")
	cmd.Flags().StringArrayVar(&commands, "command", nil, "test command instead of detection (repeatable; all must pass) [config verify.command]")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "timeout of each test command (default 10m) [config verify.timeout]")
	return cmd
}
