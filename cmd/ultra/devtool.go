package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/tool"
)

// devTools are the built-in tools `ultra dev tool` runs. bash is left
// out: outside a run there is no sandbox to run it in.
var devTools = []string{"read", "glob", "grep", "write", "edit", "todo"}

func newDevToolCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "tool NAME [JSON-ARGS]",
		Short: "Run one built-in tool in the current directory and print its result as the model sees it",
		Long: "tool runs one of ultra's built-in tools (" + strings.Join(devTools, ", ") + ") outside any run,\n" +
			"with the current directory (or -C) as the workspace root, and prints the result exactly as the model\n" +
			"would read it (an error result starts with \"Error: \" and exits 1), except that grep's output is not cut\n" +
			"at 96 KiB: a head_limit large enough prints every match. JSON-ARGS is the call's arguments object\n" +
			"(default {}). write and edit count the file as read first, as the model must have read it. bash is\n" +
			"refused: outside a run it would not be sandboxed.\n\n" +
			"Example: ultra dev tool grep '{\"pattern\":\"func main\",\"output_mode\":\"content\",\"head_limit\":100000}'",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			raw := json.RawMessage("{}")
			if len(args) == 2 {
				raw = json.RawMessage(args[1])
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
					if err == nil {
						err = fmt.Errorf("got null")
					}
					return usageErr("invalid JSON arguments for %s (want a JSON object): %v", name, err)
				}
			}
			var t tool.Tool
			for _, b := range tool.Builtins() {
				if b.Spec().Name == name && slices.Contains(devTools, name) {
					t = b
				}
			}
			if t == nil {
				if name == "bash" {
					return usageErr("tool bash is not available here: outside a run it would not be sandboxed; use your shell")
				}
				return usageErr("unknown tool %q: use one of %s", name, strings.Join(devTools, ", "))
			}
			dir, _ := cmd.Flags().GetString("dir")
			if dir == "" {
				var err error
				if dir, err = os.Getwd(); err != nil {
					return err
				}
			}
			env, err := tool.NewEnv(dir, "")
			if err != nil {
				return usageErr("%v", err)
			}
			ctx, stop := interruptible()
			defer stop()
			ctx = tool.WithoutOutputCap(ctx)
			if name == "write" || name == "edit" {
				// The model can only change a file it has read.
				var a struct {
					FilePath string `json:"file_path"`
				}
				if json.Unmarshal(raw, &a) == nil && a.FilePath != "" {
					read, _ := json.Marshal(map[string]any{"file_path": a.FilePath, "limit": 1})
					tool.Read{}.Run(ctx, env, read)
				}
			}
			res := t.Run(ctx, env, raw)
			out := cmd.OutOrStdout()
			text := modelText(res)
			fmt.Fprint(out, text)
			if !strings.HasSuffix(text, "\n") {
				fmt.Fprintln(out)
			}
			if res.IsError {
				return &exitError{code: agent.ExitError, err: fmt.Errorf("")}
			}
			return nil
		},
	}
}

// modelText is a result as the model reads it (the agent's resultText).
func modelText(res tool.Result) string {
	if res.IsError && !strings.HasPrefix(res.Output, "Error") && !strings.HasPrefix(res.Output, "Refused") {
		return "Error: " + res.Output
	}
	return res.Output
}
