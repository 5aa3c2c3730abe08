package skills

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// RunEvidence is what one run of a repository did that a skill could
// capture: the commands its model ran, the files it changed, the tests
// that failed at its verifications and the gate's commands.
type RunEvidence struct {
	Run      string
	Task     string
	Commands []string
	Changed  []string // paths relative to the repository
	Failing  []string // "TestAdd: calc_test.go:6: Add(2, 3) = -1, want 5"
	Gate     []string // the gate's test commands
}

// Draft is a skill drafted from repeated evidence, with one eval case: a
// person reads it and accepts it, or not.
type Draft struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Area        string   `json:"area"`     // the folder the runs changed
	Runs        []string `json:"runs"`     // the runs that changed it
	Evidence    []string `json:"evidence"` // what repeated, a line each
	SkillMD     string   `json:"skill_md"`
	Task        string   `json:"task"`   // the eval case's task.md
	Grader      string   `json:"grader"` // the eval case's grader (sh)
}

// idle are commands that only look around: no skill is made of them.
var idle = []string{"ls", "cat", "pwd", "echo", "head", "tail", "grep", "rg", "find", "wc", "sed", "awk", "tree", "true", "cd", "sort", "diff", "stat", "file", "which"}

// Suggest drafts a skill for each folder that at least minRuns runs
// changed and whose runs repeated a check (the same command in at least
// minRuns of them, or the gate's), none named as an existing skill is.
// Pure: the caller reads the runs.
func Suggest(runs []RunEvidence, existing []string, minRuns int) []Draft {
	minRuns = max(minRuns, 2)
	byArea := map[string][]int{} // area → indexes of the runs that changed it
	for i, r := range runs {
		seen := map[string]bool{}
		for _, f := range r.Changed {
			a := area(f)
			if a == "" || seen[a] {
				continue
			}
			seen[a] = true
			byArea[a] = append(byArea[a], i)
		}
	}
	areas := make([]string, 0, len(byArea))
	for a := range byArea {
		areas = append(areas, a)
	}
	sort.Strings(areas)
	var out []Draft
	for _, a := range areas {
		idx := byArea[a]
		if len(idx) < minRuns {
			continue
		}
		d := Draft{Area: a, Name: draftName(a)}
		if slices.Contains(existing, d.Name) {
			continue
		}
		var these []RunEvidence
		for _, i := range idx {
			these = append(these, runs[i])
			d.Runs = append(d.Runs, runs[i].Run)
		}
		files := repeated(these, minRuns, func(r RunEvidence) []string {
			var in []string
			for _, f := range r.Changed {
				if area(f) == a {
					in = append(in, f)
				}
			}
			return in
		})
		commands := repeated(these, minRuns, func(r RunEvidence) []string {
			var cs []string
			for _, c := range r.Commands {
				if c = normalize(c); c != "" && !slices.Contains(idle, firstWord(c)) {
					cs = append(cs, c)
				}
			}
			return cs
		})
		gate := repeated(these, 1, func(r RunEvidence) []string { return r.Gate })
		failing := repeated(these, minRuns, func(r RunEvidence) []string {
			var fs []string
			for _, f := range r.Failing {
				name, _, _ := strings.Cut(f, ":")
				fs = append(fs, strings.TrimSpace(name))
			}
			return fs
		})
		if len(commands) == 0 && len(gate) == 0 {
			continue // nothing to check the area with: no skill to capture
		}
		check := ""
		switch {
		case len(commands) > 0:
			check = commands[0].text
		default:
			check = gate[0].text
		}
		d.Description = oneLine(fmt.Sprintf("Use when changing %s/ in this repository: the files earlier runs changed there, the checks they ran (%s) and the failures they met.", a, strings.ReplaceAll(check, `"`, "'")), 1024)
		for _, f := range files {
			d.Evidence = append(d.Evidence, fmt.Sprintf("changed %s in %d runs", f.text, f.runs))
		}
		for _, c := range commands {
			d.Evidence = append(d.Evidence, fmt.Sprintf("ran `%s` in %d runs", c.text, c.runs))
		}
		for _, f := range failing {
			d.Evidence = append(d.Evidence, fmt.Sprintf("%s failed in %d runs", f.text, f.runs))
		}
		d.Task = these[len(these)-1].Task
		d.Grader = "#!/bin/sh\n# Drafted by ultra skills suggest: the case passes when the check the\n# earlier runs used passes on the run's final tree (the first argument).\ncd \"$1\" || exit 1\n" + check + "\n"
		d.SkillMD = skillMD(d, files, commands, gate, failing, these)
		out = append(out, d)
	}
	return out
}

// count is a text and how many runs it came up in.
type count struct {
	text string
	runs int
}

// repeated are the texts of at least min of the runs (each run counted
// once), most runs first, then in the order first met.
func repeated(runs []RunEvidence, min int, of func(RunEvidence) []string) []count {
	n := map[string]int{}
	var order []string
	for _, r := range runs {
		seen := map[string]bool{}
		for _, t := range of(r) {
			if t == "" || seen[t] {
				continue
			}
			seen[t] = true
			if n[t] == 0 {
				order = append(order, t)
			}
			n[t]++
		}
	}
	var out []count
	for _, t := range order {
		if n[t] >= min {
			out = append(out, count{t, n[t]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].runs > out[j].runs })
	return out
}

// area is the folder of a changed file ("" for one at the root: too
// broad for a narrow skill, and for ultra's own records).
func area(file string) string {
	file = path.Clean(strings.TrimPrefix(file, "./"))
	dir := path.Dir(file)
	if dir == "." || strings.HasPrefix(file, "../") || strings.HasPrefix(dir, ".ultra") || strings.HasPrefix(dir, ".git") {
		return ""
	}
	return dir
}

// draftName is a skill name for an area: internal/agent → internal-agent-changes.
func draftName(area string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(area) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 56 {
		name = strings.Trim(name[:56], "-")
	}
	if name == "" {
		name = "area"
	}
	return name + "-changes"
}

func normalize(c string) string { return strings.Join(strings.Fields(c), " ") }

func firstWord(c string) string {
	w, _, _ := strings.Cut(c, " ")
	return path.Base(w)
}

func skillMD(d Draft, files, commands, gate, failing []count, runs []RunEvidence) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %q\nuser-invocable: true\nmodel-invocable: true\nside-effects: code-edits\npermission-profile: normal\nmetadata:\n  source: ultra skills suggest\n  runs: %q\n---\n",
		d.Name, d.Description, strings.Join(d.Runs, " "))
	fmt.Fprintf(&b, "# Changing %s/\n\n", d.Area)
	fmt.Fprintf(&b, "Drafted from %d runs of this repository that changed %s/. Read it, correct it, and keep it narrow.\n\n", len(runs), d.Area)
	if len(files) > 0 {
		b.WriteString("## Files the runs changed\n\n")
		for _, f := range files {
			fmt.Fprintf(&b, "- `%s` (%d runs)\n", f.text, f.runs)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Checks\n\nAfter each change, run:\n\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "- `%s` (the runs ran it %d times)\n", c.text, c.runs)
	}
	for _, g := range gate {
		if !slices.ContainsFunc(commands, func(c count) bool { return c.text == g.text }) {
			fmt.Fprintf(&b, "- `%s` (ultra's gate)\n", g.text)
		}
	}
	b.WriteString("\n")
	if len(failing) > 0 {
		b.WriteString("## Failures the runs met\n\n")
		for _, f := range failing {
			why := ""
			for _, r := range runs {
				for _, x := range r.Failing {
					if name, rest, ok := strings.Cut(x, ":"); ok && strings.TrimSpace(name) == f.text && why == "" {
						why = strings.TrimSpace(rest)
					}
				}
			}
			fmt.Fprintf(&b, "- %s failed in %d runs", f.text, f.runs)
			if why != "" {
				fmt.Fprintf(&b, ": %s", oneLine(why, 200))
			}
			b.WriteString("\n")
		}
		b.WriteString("\nRead the test that fails and fix the code it tests; never weaken the test.\n")
	}
	return b.String()
}
