package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/surface/acp"
	"github.com/ultra-dev/ultra/internal/surface/procs"
)

func newACPCmd() *cobra.Command {
	var provider, baseURL, model string
	a := axes.Default
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve an editor over the Agent Client Protocol on stdin and stdout (Zed, JetBrains, Neovim)",
		Long: "ultra acp is the agent an editor starts: it speaks the Agent Client Protocol (JSON-RPC) on stdin and\n" +
			"stdout. Each session works in the repository of its cwd; a prompt starts or continues a run with ultra's\n" +
			"own commands, whose events stream to the editor. Work modes are the session's modes, the other axes its\n" +
			"config options; slash commands are ultra's. See docs/editors.md for the editors' settings.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ax, err := a.Normalize()
			if err != nil {
				return usageErr("%v", err)
			}
			prog := ultraProgram()
			if prog == "" {
				return usageErr("cannot find the ultra program to run commands with")
			}
			var extra []string
			for _, f := range []struct{ name, v string }{{"provider", provider}, {"base-url", baseURL}, {"model", model}} {
				if f.v != "" {
					extra = append(extra, "--"+f.name, f.v)
				}
			}
			env := append(os.Environ(), "ULTRA_SURFACE=rpc")
			ag := acp.New(acp.Options{
				Axes:    ax,
				Extra:   extra,
				Version: cmd.Root().Version,
				Open: func(cwd string) (*acp.Project, error) {
					return openACPProject(cwd, prog, env)
				},
			})
			defer ag.Close()
			conn := sdk.NewAgentSideConnection(ag, cmd.OutOrStdout(), cmd.InOrStdin())
			// stdout is the protocol's: the connection's own notes go to
			// stderr, which editors log.
			conn.SetLogger(slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
			ag.Connect(conn)
			select {
			case <-conn.Done():
			case <-cmd.Context().Done():
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&a.Mode, "mode", a.Mode, "a new session's work mode: "+strings.Join(axes.Values[axes.Mode], ", "))
	fl.StringVar(&a.Control, "control", a.Control, "a new session's run control: "+strings.Join(axes.Values[axes.Control], ", "))
	fl.StringVar(&a.Permission, "permission-profile", a.Permission, "a new session's permission profile: "+strings.Join(axes.Values[axes.Permission], ", "))
	fl.StringVar(&a.ModelMode, "model-mode", a.ModelMode, "a new session's model mode: "+strings.Join(axes.Values[axes.ModelMode], ", "))
	fl.StringVar(&provider, "provider", "", "model provider of the runs sessions start (as ultra run --provider)")
	fl.StringVar(&baseURL, "base-url", "", "provider base URL of the runs sessions start (as ultra run --base-url)")
	fl.StringVar(&model, "model", "", "model of the runs sessions start (as ultra run --model)")
	return cmd
}

// openACPProject opens the repository of a session's cwd as openProject
// does: its store, and ultra's commands run in cwd.
func openACPProject(cwd, prog string, env []string) (*acp.Project, error) {
	p, err := findProjectIn(cwd)
	if err != nil {
		return nil, err
	}
	st, err := p.openStore()
	if err != nil {
		return nil, err
	}
	rememberRepo(p.Root)
	logs := filepath.Join(p.StateRoot, "acp", "logs")
	// Never through a link the repository commits in ultra's state.
	if err := realDirs(p.Root, logs); err != nil {
		st.Close()
		return nil, err
	}
	pruneLogs(logs, 24*time.Hour)
	return &acp.Project{
		Backend: &procs.Processes{Store: st, Program: prog, Dir: p.Dir, Logs: logs, Env: env},
		Root:    p.Root,
		State:   p.StateRoot,
		Close:   func() { st.Close() },
	}, nil
}
