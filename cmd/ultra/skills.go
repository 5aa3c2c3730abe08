package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/policy"
	"github.com/ultra-dev/ultra/internal/rules"
	"github.com/ultra-dev/ultra/internal/skills"
)

// skills are the Agent Skills for runs started in p: looked up from the
// directory ultra was started in up to the repository root (in the
// person's checkout, never a run's worktree), then in the person's home.
func (p *project) skills() ([]skills.Skill, []skills.Problem) {
	home, _ := os.UserHomeDir()
	return skills.Discover(skills.Dirs(p.Dir, p.Root, home))
}

// skillsOfRun are the skills a run is given, and the paths its contained
// commands must not see besides ultra's own: every skill's eval cases
// (their hidden answers are the graders'), and the paths ULTRA_HIDE lists
// (separated by colons). A skill ULTRA_SKIP_SKILLS names (separated by
// commas) is left out: ultra skills eval runs its cases without the
// skill that way.
func skillsOfRun(all []skills.Skill) ([]skills.Skill, []string) {
	var hide []string
	add := func(p string) {
		if _, err := os.Lstat(p); err == nil && filepath.IsAbs(p) && !slices.Contains(hide, p) {
			hide = append(hide, p)
		}
	}
	for _, p := range filepath.SplitList(os.Getenv("ULTRA_HIDE")) {
		add(p)
	}
	skip := strings.Split(os.Getenv("ULTRA_SKIP_SKILLS"), ",")
	var kept []skills.Skill
	for _, s := range all {
		add(filepath.Join(s.Dir, "evals"))
		if !slices.Contains(skip, s.Name) {
			kept = append(kept, s)
		}
	}
	return kept, hide
}

// invokeSkill is a person's --skill NAME on a run: the skill's
// instructions lead the task, its allowed-tools narrow the run's tools,
// and the run's profile must be at least the one it names.
func invokeSkill(all []skills.Skill, name, profile string, spec *agent.Spec) error {
	for _, s := range all {
		if s.Name != name {
			continue
		}
		if !s.UserInvocable {
			return usageErr("skill %s (%s) is not user-invocable", name, s.File)
		}
		if s.Profile != "" {
			need, _ := policy.ProfileOf(s.Profile)
			have, _ := policy.ProfileOf(profile)
			if !policy.AtLeast(have, need) {
				return usageErr("skill %s needs at least the %s permission profile; this run's is %s (--permission-profile %s)", name, s.Profile, profile, s.Profile)
			}
		}
		if spec.Task == "" {
			spec.Task = clipLine(s.Name+": "+s.Description, 100)
		}
		spec.Message = fmt.Sprintf("The person invoked the skill %s for this run. Its instructions (%s):\n\n%s\n\nThe task: %s",
			s.Name, s.File, s.Body, spec.Task)
		spec.SkillTools, spec.SkillScopes = agent.SkillTools(s), agent.SkillScopes(s)
		return nil
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	return usageErr("no skill %q (skills here: %s; ultra skills list)", name, strings.Join(names, ", "))
}

func newSkillsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "Agent Skills (SKILL.md): list them, show one, check them",
		Long: `Agent Skills are folders NAME/SKILL.md in .agents/skills, .claude/skills or
.ultra/skills (from the current directory up to the repository root) and in
~/.agents/skills and ~/.claude/skills. Their names and descriptions are in
every run's prompt; the model loads one with skill{name}; a person runs one
with ultra run --skill NAME. See docs/ecosystem.md.`,
	}
	cmd.AddCommand(newSkillsListCmd(), newSkillsShowCmd(), newSkillsLintCmd(), newSkillsEvalCmd(), newSkillsSuggestCmd())
	return cmd
}

func newSkillsListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "The skills found here, where each is, and who may invoke it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := findProject(cmd)
			if err != nil {
				return err
			}
			all, probs := p.skills()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"skills": all, "problems": probs})
			}
			if len(all) == 0 && len(probs) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no skills: put NAME/SKILL.md in .agents/skills, .claude/skills or .ultra/skills (here or up to the repository root), or in ~/.agents/skills or ~/.claude/skills")
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 2, 2, ' ', 0)
			fmt.Fprintln(w, "SKILL\tINVOKED BY\tDESCRIPTION\tFILE")
			for _, s := range all {
				var by []string
				if s.UserInvocable {
					by = append(by, "person")
				}
				if s.Offered() {
					by = append(by, "model")
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, strings.Join(by, ","), clipLine(s.Description, 60), s.File)
			}
			w.Flush()
			for _, pr := range probs {
				fmt.Fprintf(cmd.ErrOrStderr(), "skipped: %s\n", pr.Error())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the skills and problems as JSON")
	return cmd
}

func newSkillsShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "One skill's fields, instructions and files",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := findProject(cmd)
			if err != nil {
				return err
			}
			all, probs := p.skills()
			for _, s := range all {
				if s.Name != args[0] {
					continue
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "%s (%s)\n%s\n", s.Name, s.File, s.Description)
				if len(s.AllowedTools) > 0 {
					fmt.Fprintf(out, "allowed-tools: %s\n", strings.Join(s.AllowedTools, ", "))
				}
				for _, pr := range append(s.Warnings, toolProblems(s)...) {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", pr.Error())
				}
				fmt.Fprintf(out, "user-invocable: %v, model-invocable: %v", s.UserInvocable, s.ModelInvocable)
				if s.SideEffects != "" {
					fmt.Fprintf(out, ", side-effects: %s", s.SideEffects)
				}
				if s.Profile != "" {
					fmt.Fprintf(out, ", permission-profile: %s", s.Profile)
				}
				fmt.Fprintf(out, "\n\n%s\n", s.Body)
				if res := skills.Resources(s); len(res) > 0 {
					fmt.Fprintf(out, "\nfiles: %s\n", strings.Join(res, ", "))
				}
				if cs, _ := skills.Cases(s); len(cs) > 0 {
					fmt.Fprintf(out, "eval cases: %s (ultra skills eval %s)\n", strings.TrimPrefix(caseNames(cs), "its cases: "), s.Name)
				}
				return nil
			}
			var why []string
			for _, pr := range probs {
				if filepath.Base(filepath.Dir(pr.File)) == args[0] {
					why = append(why, pr.Error())
				}
			}
			if len(why) > 0 {
				return usageErr("skill %q does not read, so runs leave it out:\n%s", args[0], strings.Join(why, "\n"))
			}
			return usageErr("no skill %q here (ultra skills list)", args[0])
		},
	}
}

// toolProblems are the entries of s's allowed-tools that do not read as
// Claude Code's tool rules (an unknown tool, a typo): each would narrow
// the tools to less than the author meant.
func toolProblems(s skills.Skill) []skills.Problem {
	var out []skills.Problem
	for _, e := range s.AllowedTools {
		if err := rules.CheckTool(e); err != nil {
			out = append(out, skills.Problem{File: s.File, Line: s.ToolsLine, Why: "allowed-tools: " + err.Error()})
		}
	}
	return out
}

func newSkillsLintCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "lint",
		Short: "Check every SKILL.md: each problem with its file and line; exit 1 when any",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := findProject(cmd)
			if err != nil {
				return err
			}
			all, probs := p.skills()
			cases := 0
			var caseProbs []skills.Problem
			for _, s := range all {
				cs, ps := skills.Cases(s)
				cases += len(cs)
				caseProbs = append(caseProbs, append(append(s.Warnings, toolProblems(s)...), ps...)...)
			}
			for _, pr := range append(probs, caseProbs...) {
				fmt.Fprintln(cmd.OutOrStdout(), pr.Error())
			}
			switch {
			case len(probs) > 0:
				files := map[string]bool{}
				for _, pr := range probs {
					files[pr.File] = true
				}
				return &exitError{code: agent.ExitError, err: fmt.Errorf("%d of %d skills do not read", len(files), len(all)+len(files))}
			case len(caseProbs) > 0:
				return &exitError{code: agent.ExitError, err: fmt.Errorf("%d problems in skills that read (allowed-tools, eval cases)", len(caseProbs))}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s and %s, all read\n", countOf(len(all), "skill"), countOf(cases, "eval case"))
			return nil
		},
	}
}

// countOf is n things, in the singular for one: "1 skill", "2 skills".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
