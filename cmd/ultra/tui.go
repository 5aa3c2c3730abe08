package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/surface/procs"
	"github.com/ultra-dev/ultra/internal/surface/tui"
	"github.com/ultra-dev/ultra/internal/tool"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// tuiFlags are the root's flags for the TUI: the axes and model of the
// runs it starts.
type tuiFlags struct {
	mode, control      string
	includeUncommitted bool
}

func (t *tuiFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&t.mode, "mode", "build", "the TUI's work mode for the next run: "+strings.Join(axes.Values[axes.Mode], ", "))
	fl.StringVar(&t.control, "control", "autonomous", "the TUI's run control for the next run: "+strings.Join(axes.Values[axes.Control], ", "))
	fl.BoolVar(&t.includeUncommitted, "include-uncommitted", false, "the runs the TUI starts begin from the checkout's uncommitted changes (as ultra run --include-uncommitted)")
}

// interactive says stdin and stdout are a terminal: the TUI can run.
func interactive() bool { return isTerminal(os.Stdin) && isTerminal(os.Stdout) }

// isTerminal says the stream (a command's input or output) is a terminal.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
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
	env := append(os.Environ(), "ULTRA_SURFACE=tui")
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
	var startExtra []string
	if tf != nil && tf.includeUncommitted {
		startExtra = append(startExtra, "--include-uncommitted")
	}
	logs := filepath.Join(p.StateRoot, "tui")
	// Never through a link the repository commits in ultra's state.
	if err := realDirs(p.Root, logs); err != nil {
		return err
	}
	pruneLogs(logs, 24*time.Hour)
	// Runs elsewhere hide the state of the repositories the registry
	// knows (the commands' output files here among it).
	rememberRepo(p.Root)
	hist := history{path: p.historyPath()}
	m := tui.New(tui.Options{
		Backend:  &procs.Processes{Store: st, Program: prog, Dir: p.Dir, Logs: logs, Env: env},
		Project:  filepath.Base(p.Root),
		Axes:     a,
		Attach:   attach,
		Model:    model,
		Extra:    extra,
		Worktree: startExtra,
		Files:    repoFiles(p.Root),
		History:  hist.load(),
		Remember: hist.add,
		Skills:   tuiSkills(p),
	})
	_, err = tea.NewProgram(m, tea.WithContext(cmd.Context())).Run()
	if err != nil && !isContextDone(cmd.Context()) {
		return err
	}
	return nil
}

func isContextDone(ctx context.Context) bool { return ctx != nil && ctx.Err() != nil }

// tuiSkills are the skills a person may invoke with /NAME.
func tuiSkills(p *project) []tui.Skill {
	all, _ := p.skills()
	var out []tui.Skill
	for _, s := range all {
		if s.UserInvocable {
			out = append(out, tui.Skill{Name: s.Name, Description: s.Description})
		}
	}
	return out
}

// repoFiles are the repository's tracked files, for @path completion.
func repoFiles(root string) []string {
	out, err := workspace.Command(context.Background(), root, "ls-files", "-z").Output()
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
			if err := requireRunID(args[0]); err != nil {
				return err
			}
			return openTUI(cmd, nil, nil, args[0])
		},
	}
}

// history is what a person typed into the TUI in this repository, one
// JSON string a line, private to them (0600), the last historyKeep kept.
type history struct{ path string }

const historyKeep = 1000

func (h history) load() []string {
	b, err := os.ReadFile(h.path)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		var s string
		if json.Unmarshal([]byte(l), &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	if len(out) > historyKeep {
		out = out[len(out)-historyKeep:]
		h.rewrite(out)
	}
	return out
}

func (h history) rewrite(entries []string) {
	var b strings.Builder
	for _, e := range entries {
		j, _ := json.Marshal(e)
		b.Write(j)
		b.WriteByte('\n')
	}
	_ = tool.ReplaceFile(h.path, []byte(b.String()), 0o600)
}

func (h history) add(s string) {
	if os.MkdirAll(filepath.Dir(h.path), 0o700) != nil {
		return
	}
	_ = os.Chmod(filepath.Dir(h.path), 0o700)
	f, err := os.OpenFile(h.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	j, _ := json.Marshal(s)
	_, _ = f.Write(append(j, '\n'))
}

// pruneLogs removes the output files of commands a TUI ran (the TUI reads
// and removes each when the command ends; one that outlived its TUI
// leaves its file) once they are older than age.
func pruneLogs(dir string, age time.Duration) {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return // none yet, or not a real folder (a link is never followed)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
