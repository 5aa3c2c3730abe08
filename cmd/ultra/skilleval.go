package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/skills"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// evalPassThrough are the flags of ultra skills eval that every trial's
// run is given as they were given.
var evalPassThrough = []string{"provider", "base-url", "model", "model-mode", "permission-profile", "no-stream",
	"max-turns", "max-wall", "max-cost", "max-input-tokens", "max-output-tokens", "bash-timeout", "verify-command", "verify-timeout"}

func newSkillsEvalCmd() *cobra.Command {
	var cases []string
	var invoke, keep, asJSON, noBaseline bool
	var graderTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "eval NAME",
		Short: "Run a skill's eval cases as real runs, with the skill and without it, and grade them",
		Long: `Each case NAME/evals/case-N (task.md, a grader, hidden/, work/) is run as a real
ultra run in a scratch repository made from work/ (or, without work/, from
the repository's HEAD): once with the skill, once without it. The skill is
offered to the model as in any run (a skill the model may not load is
invoked, as --skill does; --invoke always invokes it). The grader then runs
in a sandbox on a copy of the run's final tree, with the case's hidden/
(which no run sees), the run's trace and its result; exit 0 passes.

A failed trial's workspace is kept (its path is printed); a passed one is
removed unless --keep. Exit 0 when every case passes with the skill, 1
when one does not.`,
		Example: `  ultra skills eval go-fix
  ultra skills eval go-fix --case case-2 --model qwen3-coder --base-url http://127.0.0.1:11434/v1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := findProject(cmd)
			if err != nil {
				return err
			}
			all, _ := p.skills()
			i := slices.IndexFunc(all, func(s skills.Skill) bool { return s.Name == args[0] })
			if i < 0 {
				return usageErr("no skill %q here (ultra skills list)", args[0])
			}
			s := all[i]
			found, probs := skills.Cases(s)
			for _, pr := range probs {
				fmt.Fprintf(cmd.ErrOrStderr(), "ultra: an eval case is skipped: %s\n", pr.Error())
			}
			var run []skills.Case
			for _, c := range found {
				if len(cases) == 0 || slices.Contains(cases, c.Name) {
					run = append(run, c)
				}
			}
			for _, want := range cases {
				if !slices.ContainsFunc(found, func(c skills.Case) bool { return c.Name == want }) {
					return usageErr("skill %s has no eval case %q (%s)", s.Name, want, caseNames(found))
				}
			}
			if len(run) == 0 {
				return usageErr("skill %s has no eval cases: add %s/evals/case-1 with task.md and a grader (docs/ecosystem.md)", s.Name, s.Dir)
			}
			if !s.Offered() && !s.UserInvocable {
				return usageErr("skill %s is neither model- nor user-invocable: no run can use it", s.Name)
			}
			e := &evaluation{p: p, skill: s, invoke: invoke || !s.Offered(), keep: keep, graderTimeout: graderTimeout,
				log: cmd.ErrOrStderr(), flags: passThrough(cmd)}
			if e.root, err = e.makeRoot(); err != nil {
				return err
			}
			var trials []skills.Trial
			for _, c := range run {
				for _, with := range []bool{true, false} {
					if !with && noBaseline {
						continue
					}
					t := e.trial(cmd.Context(), c, with)
					trials = append(trials, t)
					if cmd.Context().Err() != nil {
						return &exitError{code: agent.ExitInterrupted, err: errors.New("interrupted")}
					}
				}
			}
			if asJSON {
				err = json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"skill": s.Name, "trials": trials})
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "skill %s: %s\n%s", s.Name, countOf(len(run), "eval case"), skills.Table(trials, !noBaseline))
				for _, t := range trials {
					if t.Kept != "" {
						fmt.Fprintf(cmd.OutOrStdout(), "kept: %s %s: %s\n", t.Case, withWord(t.WithSkill), t.Kept)
					}
				}
			}
			if err != nil {
				return err
			}
			if _, err := os.ReadDir(e.root); err == nil {
				_ = os.Remove(e.root) // only when nothing was kept in it
			}
			for _, t := range trials {
				if t.WithSkill && t.Error != "" {
					return &exitError{code: agent.ExitError, err: fmt.Errorf("%s could not be tried with skill %s: %s", t.Case, s.Name, t.Error)}
				}
			}
			for _, t := range trials {
				if t.WithSkill && !t.Pass {
					return &exitError{code: agent.ExitError, err: fmt.Errorf("skill %s fails %s", s.Name, t.Case)}
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&cases, "case", nil, "run only this case (case-N; repeatable)")
	fl.BoolVar(&invoke, "invoke", false, "invoke the skill in the runs with it (its instructions lead the task, as --skill) instead of offering it to the model")
	fl.BoolVar(&noBaseline, "no-baseline", false, "run the cases with the skill only")
	fl.BoolVar(&keep, "keep", false, "keep every trial's workspace, passed or not")
	fl.BoolVar(&asJSON, "json", false, "print the trials as JSON")
	fl.DurationVar(&graderTimeout, "grader-timeout", 5*time.Minute, "how long a grader may take")
	fl.String("provider", "", "model provider of the runs (as ultra run)")
	fl.String("base-url", "", "provider base URL of the runs (as ultra run)")
	fl.String("model", "", "model of the runs (as ultra run)")
	fl.String("model-mode", "", "model mode of the runs (as ultra run)")
	fl.String("permission-profile", "", "permission profile of the runs (default: the skill's permission-profile, else ultra run's)")
	fl.Bool("no-stream", false, "ask for whole answers (as ultra run)")
	fl.Int("max-turns", 0, "model requests budget of each run (as ultra run)")
	fl.Duration("max-wall", 0, "wall time budget of each run (as ultra run)")
	fl.Float64("max-cost", 0, "cost budget of each run in US dollars (as ultra run)")
	fl.Int64("max-input-tokens", 0, "input token budget of each run (as ultra run)")
	fl.Int64("max-output-tokens", 0, "output token budget of each run (as ultra run)")
	fl.Duration("bash-timeout", 0, "default timeout of a bash call (as ultra run)")
	fl.StringArray("verify-command", nil, "test command of each run's gate (as ultra run)")
	fl.Duration("verify-timeout", 0, "timeout of each test command (as ultra run)")
	return cmd
}

// passThrough is the flags of evalPassThrough as given, for each run.
func passThrough(cmd *cobra.Command) []string {
	var out []string
	for _, name := range evalPassThrough {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		if vs, err := cmd.Flags().GetStringArray(name); err == nil {
			for _, v := range vs {
				out = append(out, "--"+name+"="+v)
			}
			continue
		}
		out = append(out, "--"+name+"="+f.Value.String())
	}
	return out
}

func caseNames(cs []skills.Case) string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		return "it has none"
	}
	return "its cases: " + strings.Join(names, ", ")
}

func withWord(with bool) string {
	if with {
		return "with the skill"
	}
	return "without it"
}

// evaluation is one ultra skills eval: its trials live below root.
type evaluation struct {
	p             *project
	skill         skills.Skill
	invoke, keep  bool
	graderTimeout time.Duration
	log           io.Writer
	flags         []string
	root          string
}

// makeRoot is the folder of this evaluation's trials, in the
// repository's state (hidden from every run's commands).
func (e *evaluation) makeRoot() (string, error) {
	base := filepath.Join(e.p.StateRoot, "skill-evals")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	ensureIgnored(e.p.StateRoot)
	return os.MkdirTemp(base, e.skill.Name+"-"+time.Now().UTC().Format("20060102T150405")+"-")
}

// trial runs case c once, with the skill or without it, and grades it.
func (e *evaluation) trial(ctx context.Context, c skills.Case, with bool) skills.Trial {
	t := skills.Trial{Case: c.Name, WithSkill: with}
	dir := filepath.Join(e.root, c.Name, map[bool]string{true: "with", false: "without"}[with])
	fmt.Fprintf(e.log, "ultra: %s %s: running\n", c.Name, withWord(with))
	fail := func(err error) skills.Trial {
		t.Error, t.Kept = err.Error(), dir
		fmt.Fprintf(e.log, "ultra: %s %s: %v\n", c.Name, withWord(with), err)
		return t
	}
	repo := filepath.Join(dir, "repo")
	if err := e.scratch(ctx, c, with, dir, repo); err != nil {
		return fail(fmt.Errorf("making its repository: %w", err))
	}
	trace := filepath.Join(dir, "trace.jsonl")
	logFile := filepath.Join(dir, "log.txt")
	t.ExitCode = e.run(ctx, c, with, repo, trace, logFile)
	row := trialRun(ctx, repo)
	work := repo
	if row != nil {
		t.Run, t.Status, work = row.ID, row.Status, row.Workdir
	} else {
		// No run started (the model server is out of reach, a flag is
		// wrong): the trial says nothing of the skill.
		return fail(fmt.Errorf("the run did not start (exit %d): %s", t.ExitCode, lastLogLine(logFile)))
	}
	result := filepath.Join(dir, "result.json")
	b, _ := json.MarshalIndent(map[string]any{"case": c.Name, "with_skill": with, "run": t.Run, "status": t.Status, "exit_code": t.ExitCode}, "", "  ")
	if err := os.WriteFile(result, b, 0o644); err != nil {
		return fail(err)
	}
	// The run's worktree as it stands; the tree it started from when the
	// run removed it (a run that made nothing).
	graded := filepath.Join(dir, "graded")
	tree, err := "HEAD^{tree}", error(nil)
	if _, serr := os.Stat(work); serr == nil && work != repo {
		tree, err = workspace.TreeHash(ctx, work)
	} else {
		work = repo
	}
	if err == nil {
		err = workspace.ExportTree(ctx, work, tree, graded)
	}
	if err != nil {
		return fail(fmt.Errorf("copying the run's tree for the grader: %w", err))
	}
	t.Pass, t.Grade, err = e.grade(ctx, c, with, dir, graded, trace, result)
	if err != nil {
		return fail(fmt.Errorf("grading: %w", err))
	}
	_ = os.WriteFile(filepath.Join(dir, "grade.txt"), []byte(t.Grade+"\n"), 0o644)
	fmt.Fprintf(e.log, "ultra: %s %s: run %s %s (exit %d), %s\n", c.Name, withWord(with), t.Run, t.Status, t.ExitCode, map[bool]string{true: "passed", false: "failed"}[t.Pass])
	if t.Pass && !e.keep {
		forgetRepo(repo)
		_ = os.RemoveAll(dir)
		_ = os.Remove(filepath.Dir(dir))
	} else {
		t.Kept = dir
	}
	return t
}

// scratch makes the trial's repository: the case's work/ (or the
// repository's HEAD) committed on main, with the skill in its
// .agents/skills when the trial has it (without its evals), and a
// configuration that keeps the run's worktrees in the trial's folder.
func (e *evaluation) scratch(ctx context.Context, c skills.Case, with bool, dir, repo string) error {
	if err := os.MkdirAll(filepath.Dir(repo), 0o755); err != nil {
		return err
	}
	if c.Work != "" {
		if err := copyTree(c.Work, repo, nil); err != nil {
			return err
		}
	} else if err := workspace.ExportTree(ctx, e.p.Root, "HEAD^{tree}", repo); err != nil {
		return err // (it makes repo, which must not exist)
	}
	git := func(args ...string) error {
		out, err := workspace.Command(ctx, repo, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=ultra", "-c", "user.email=ultra@localhost", "commit", "-q", "--allow-empty", "--no-verify", "-m", "eval " + c.Name}} {
		if err := git(args...); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte("/.agents/\n"), 0o644); err != nil {
		return err
	}
	cfg := fmt.Sprintf("[workspace]\ndir = %q\n", filepath.Join(dir, "worktrees"))
	if err := os.MkdirAll(filepath.Join(repo, ".ultra"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, ".ultra", "config"), []byte(cfg), 0o644); err != nil {
		return err
	}
	if with {
		return copyTree(e.skill.Dir, filepath.Join(repo, ".agents", "skills", e.skill.Name), func(rel string) bool { return rel == "evals" })
	}
	return nil
}

// run runs the trial's task with ultra run in repo, its events written to
// trace and its log to logFile; it returns the run's exit code.
func (e *evaluation) run(ctx context.Context, c skills.Case, with bool, repo, trace, logFile string) int {
	args := []string{"run", "--output", "jsonl", "--control", "autonomous"}
	m := e.p.Config.Model
	for _, d := range []struct{ flag, value string }{{"provider", m.Provider}, {"base-url", m.BaseURL}, {"model", m.Name}, {"permission-profile", e.skill.Profile}} {
		if d.value != "" && !slices.ContainsFunc(e.flags, func(f string) bool { return strings.HasPrefix(f, "--"+d.flag+"=") }) {
			args = append(args, "--"+d.flag+"="+d.value)
		}
	}
	args = append(args, e.flags...)
	if with && e.invoke {
		args = append(args, "--skill", e.skill.Name)
	}
	args = append(args, "--", c.Task)
	cmd := exec.CommandContext(ctx, ultraProgram(), args...)
	cmd.Dir = repo
	// The skill's folder (its answers), and the person's checkout, which
	// holds the scratch repository and whose files (an ignored .env) a
	// trial's model must not read: its own worktree and repository are
	// shown again inside it.
	hide := e.skill.Dir + string(filepath.ListSeparator) + e.p.Root
	if prev := os.Getenv("ULTRA_HIDE"); prev != "" {
		hide = prev + string(filepath.ListSeparator) + hide
	}
	cmd.Env = append(os.Environ(), "ULTRA_HIDE="+hide)
	if !with {
		cmd.Env = append(cmd.Env, "ULTRA_SKIP_SKILLS="+e.skill.Name)
	}
	out, err1 := os.Create(trace)
	logf, err2 := os.Create(logFile)
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintf(e.log, "ultra: %v\n", err)
		return agent.ExitError
	}
	defer out.Close()
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = out, logf
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	fmt.Fprintf(logf, "ultra skills eval: %v\n", err)
	return agent.ExitError
}

// trialRun is the run ultra run made in repo (nil when none was made).
func trialRun(ctx context.Context, repo string) *store.Run {
	st, err := store.Open(filepath.Join(repo, ".ultra", "state", "ultra.db"))
	if err != nil {
		return nil
	}
	defer st.Close()
	rows, err := st.ListRuns(ctx, 1)
	if err != nil || len(rows) == 0 {
		return nil
	}
	return rows[0]
}

// grade runs the case's grader, contained, in graded (a copy of the
// run's final tree): its first argument and working directory. It sees
// the case's hidden answers, the run's trace and result, read-only.
func (e *evaluation) grade(ctx context.Context, c skills.Case, with bool, dir, graded, trace, result string) (bool, string, error) {
	shown := []string{trace, result, c.Grader[len(c.Grader)-1]}
	env := append(os.Environ(), "ULTRA_EVAL_WORK="+graded, "ULTRA_EVAL_TRACE="+trace, "ULTRA_EVAL_RESULT="+result,
		"ULTRA_EVAL_CASE="+c.Name, "ULTRA_EVAL_WITH_SKILL="+map[bool]string{true: "1", false: "0"}[with])
	if c.Hidden != "" {
		shown = append(shown, c.Hidden)
		env = append(env, "ULTRA_EVAL_HIDDEN="+c.Hidden)
	}
	o := e.p.agentOptions(nil)
	sb, err := agent.GraderSandbox(ctx, o, graded, filepath.Join(dir, "grader"), shown...)
	if err != nil {
		return false, "", err
	}
	if sb == nil {
		fmt.Fprintf(e.log, "ultra: no sandbox on this machine: the grader of %s runs uncontained\n", c.Name)
	}
	name, args := c.Grader[0], append(slices.Clone(c.Grader[1:]), graded)
	if len(c.Grader) > 1 {
		if p, err := exec.LookPath(name); err == nil {
			name = p
		}
	}
	cmd, done, err := sb.Command(name, args, graded, env)
	if err != nil {
		return false, "", err
	}
	defer done()
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return false, "", fmt.Errorf("%s does not start: %w", c.Grader[len(c.Grader)-1], err)
	}
	timer := time.AfterFunc(e.graderTimeout, func() { proc.KillGroup(cmd) })
	err = cmd.Wait()
	timedOut := !timer.Stop()
	text := lastLines(buf.String(), 20)
	if timedOut {
		return false, text + fmt.Sprintf("\n(the grader did not end in %s)", e.graderTimeout), nil
	}
	return err == nil, text, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// copyTree copies the regular files, folders and links below src to
// dst; skip leaves out a path (relative to src, slashed) and what is
// below it.
func copyTree(src, dst string, skip func(rel string) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel != "." && skip != nil && skip(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, info.Mode().Perm())
		}
		return nil
	})
}

// lastLogLine is the last line of a trial's log that says something:
// why its run ended.
func lastLogLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return strings.TrimPrefix(l, "ultra: ")
		}
	}
	return "(the log is empty)"
}
