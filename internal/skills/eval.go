package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Case is one eval case of a skill, a folder NAME/evals/case-N: task.md
// (what a person would ask), a grader (an executable grader, or
// grader.js, grader.py or grader.sh run with node, python3 or sh), hidden/
// (reference answers only the grader sees) and work/ (the starting
// workspace; without it, the case starts from the repository's HEAD).
type Case struct {
	Name   string   `json:"name"`
	Dir    string   `json:"dir"`
	Task   string   `json:"task"`
	Grader []string `json:"grader"` // the command, its program first
	Hidden string   `json:"hidden,omitempty"`
	Work   string   `json:"work,omitempty"`
}

// graders are the grader files a case may have, in the order they are
// looked for, with the program that runs each ("" runs the file itself).
var graders = []struct{ file, program string }{
	{"grader", ""}, {"grader.js", "node"}, {"grader.py", "python3"}, {"grader.sh", "sh"},
}

// Cases reads a skill's eval cases, in the order of their numbers; a case
// that does not read is a Problem, left out.
func Cases(s Skill) ([]Case, []Problem) {
	root := filepath.Join(s.Dir, "evals")
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil
	}
	var out []Case
	var probs []Problem
	for _, e := range entries {
		if _, ok := caseNumber(e.Name()); !ok {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() {
			probs = append(probs, Problem{dir, 0, "an eval case is a folder (task.md, a grader, hidden/, work/)"})
			continue
		}
		c, err := readCase(dir)
		if err != nil {
			probs = append(probs, *err)
			continue
		}
		c.Name = e.Name()
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := caseNumber(out[i].Name)
		b, _ := caseNumber(out[j].Name)
		return a < b
	})
	return out, probs
}

// caseNumber is N of a folder named case-N.
func caseNumber(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "case-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

func readCase(dir string) (Case, *Problem) {
	c := Case{Dir: dir}
	task := filepath.Join(dir, "task.md")
	b, err := os.ReadFile(task)
	if err != nil {
		return c, &Problem{task, 0, "no task.md: the case's prompt, as a person would write it"}
	}
	if c.Task = strings.TrimSpace(string(b)); c.Task == "" {
		return c, &Problem{task, 1, "task.md is empty"}
	}
	for _, g := range graders {
		p := filepath.Join(dir, g.file)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if g.program == "" {
			if fi.Mode()&0o111 == 0 {
				return c, &Problem{p, 0, "the grader is not executable (chmod +x it, or name it grader.js, grader.py or grader.sh)"}
			}
			c.Grader = []string{p}
		} else {
			c.Grader = []string{g.program, p}
		}
		break
	}
	if c.Grader == nil {
		return c, &Problem{dir, 0, "no grader: an executable grader, or grader.js, grader.py or grader.sh (exit 0 passes)"}
	}
	if fi, err := os.Stat(filepath.Join(dir, "hidden")); err == nil && fi.IsDir() {
		c.Hidden = filepath.Join(dir, "hidden")
	}
	if fi, err := os.Stat(filepath.Join(dir, "work")); err == nil && fi.IsDir() {
		c.Work = filepath.Join(dir, "work")
	}
	return c, nil
}

// Trial is one eval run of a case: with the skill or without it.
type Trial struct {
	Case      string `json:"case"`
	WithSkill bool   `json:"with_skill"`
	Pass      bool   `json:"pass"`
	Run       string `json:"run,omitempty"`
	Status    string `json:"status,omitempty"` // the run's
	ExitCode  int    `json:"exit_code"`        // the run's
	Grade     string `json:"grade,omitempty"`  // the grader's last lines
	Kept      string `json:"kept,omitempty"`   // the trial's workspace, kept when it failed
	Error     string `json:"error,omitempty"`  // what kept the trial from running or grading
}

// Table is the trials as a table: a line per case, pass or fail with the
// skill and without it, and a last line of totals.
func Table(trials []Trial, baseline bool) string {
	var b strings.Builder
	var names []string
	with, without := map[string]Trial{}, map[string]Trial{}
	for _, t := range trials {
		if _, seen := with[t.Case]; !seen {
			if _, seen := without[t.Case]; !seen {
				names = append(names, t.Case)
			}
		}
		if t.WithSkill {
			with[t.Case] = t
		} else {
			without[t.Case] = t
		}
	}
	width := len("CASE")
	for _, n := range names {
		width = max(width, len(n))
	}
	row := func(cells ...string) {
		line := fmt.Sprintf("%-*s  %-10s", width, cells[0], cells[1])
		if len(cells) > 2 {
			line += "  " + cells[2]
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	if baseline {
		row("CASE", "WITH SKILL", "WITHOUT")
	} else {
		row("CASE", "WITH SKILL")
	}
	passed, passedWithout := 0, 0
	for _, n := range names {
		if with[n].Pass {
			passed++
		}
		if without[n].Pass {
			passedWithout++
		}
		if baseline {
			row(n, verdict(with[n]), verdict(without[n]))
		} else {
			row(n, verdict(with[n]))
		}
	}
	fmt.Fprintf(&b, "with the skill: %d of %d passed", passed, len(names))
	if baseline {
		fmt.Fprintf(&b, "; without it: %d of %d", passedWithout, len(names))
	}
	b.WriteString("\n")
	return b.String()
}

func verdict(t Trial) string {
	switch {
	case t.Case == "":
		return "-"
	case t.Error != "":
		return "error"
	case t.Pass:
		return "pass"
	}
	return "fail"
}
