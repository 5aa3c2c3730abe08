package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/llm/scripted"
)

func newDevCmd() *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Tools for developing and testing ultra",
	}
	var script, addr, logPath string
	fake := &cobra.Command{
		Use:   "fakemodel --script S.json",
		Short: "Serve a scripted model that speaks the Chat Completions wire format",
		Long: "fakemodel answers each chat completion request with the next step of a script (text, tool calls,\n" +
			"HTTP errors) and logs every request. It prints its base URL, then serves until interrupted.\n" +
			"See docs/scripted-model.md for the script format.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if script == "" {
				return usageErr("--script is required")
			}
			s, err := scripted.LoadScript(script)
			if err != nil {
				return usageErr("%v", err)
			}
			srv := scripted.NewServer(s, logPath)
			ctx, stop := interruptible()
			defer stop()
			return srv.ListenAndServe(ctx, addr, func(url string) {
				fmt.Fprintln(cmd.OutOrStdout(), url)
			})
		},
	}
	fake.Flags().StringVar(&script, "script", "", "script file (JSON)")
	fake.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	fake.Flags().StringVar(&logPath, "log", "", "append one JSON line per request to this file")
	dev.AddCommand(fake, newDevToolCmd())
	return dev
}
