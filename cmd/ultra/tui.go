package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/surface/tui"
)

// tuiFlags are the root's flags for the TUI: the axes and model of the
// runs it starts.
type tuiFlags struct {
	mode, control string
}

func (t *tuiFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&t.mode, "mode", "build", "the TUI's work mode for the next run: "+strings.Join(axes.Values[axes.Mode], ", "))
	fl.StringVar(&t.control, "control", "autonomous", "the TUI's run control for the next run: "+strings.Join(axes.Values[axes.Control], ", "))
}

// interactive says stdin and stdout are a terminal: the TUI can run.
func interactive() bool {
	return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
}

// openTUI runs the TUI in the project of cmd, following attach when set.
func openTUI(cmd *cobra.Command, pf *chatFlags, tf *tuiFlags, attach string) error {
	if !interactive() {
		return usageErr("the TUI needs a terminal (stdin and stdout); in scripts use ultra run, ultra tasks, ultra status RUN")
	}
	p, st, err := openProject(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	if attach != "" {
		row, err := getRun(cmd, st, attach)
		if err != nil {
			return err
		}
		attach = row.ID
	}
	a := axes.Default
	a.Surface = "tui"
	if tf != nil {
		a.Mode, a.Control = tf.mode, tf.control
	}
	if pf != nil {
		a.Permission, a.ModelMode = pf.permission, pf.modelMode
	}
	if a, err = a.Normalize(); err != nil {
		return usageErr("%v", err)
	}
	prog := ultraProgram()
	if prog == "" {
		return usageErr("cannot find the ultra program to run commands with")
	}
	env := os.Environ()
	var extra []string
	if pf != nil {
		for _, f := range []struct{ name, v string }{{"provider", pf.provider}, {"base-url", pf.baseURL}} {
			if f.v != "" {
				extra = append(extra, "--"+f.name, f.v)
			}
		}
	}
	model := ""
	if pf != nil {
		model = pf.model
	}
	m := tui.New(tui.Options{
		Backend: &tui.Processes{Store: st, Program: prog, Dir: p.Dir, Logs: filepath.Join(p.StateRoot, "tui"), Env: env},
		Project: filepath.Base(p.Root),
		Axes:    a,
		Attach:  attach,
		Model:   model,
		Extra:   extra,
		Files:   repoFiles(p.Root),
	})
	_, err = tea.NewProgram(m, tea.WithContext(cmd.Context())).Run()
	if err != nil && !isContextDone(cmd.Context()) {
		return err
	}
	return nil
}

func isContextDone(ctx context.Context) bool { return ctx != nil && ctx.Err() != nil }

// repoFiles are the repository's tracked files, for @path completion.
func repoFiles(root string) []string {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		return nil
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) > 50000 {
		files = files[:50000]
	}
	return files
}

func newAttachCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "attach RUN",
		Short: "Open the TUI on a run another process drives (or one that ended): watch it, approve, steer",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return openTUI(cmd, nil, nil, args[0])
		},
	}
}
