// Package skills reads Agent Skills: folders NAME/SKILL.md with a YAML
// front matter (name, description, and the optional allowed-tools,
// license, compatibility, metadata, plus the agent-mode spec's
// user-invocable, model-invocable, side-effects and permission-profile)
// and a Markdown body. Parsing and choosing are pure; Discover reads the
// folders.
package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Skill is one skill.
type Skill struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
	ToolsLine    int      `json:"-"` // the line of allowed-tools in File
	// Warnings are what of the file ultra leaves alone (an unknown key).
	Warnings       []Problem         `json:"-"`
	License        string            `json:"license,omitempty"`
	Compatibility  string            `json:"compatibility,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	UserInvocable  bool              `json:"user_invocable"`
	ModelInvocable bool              `json:"model_invocable"`
	SideEffects    string            `json:"side_effects,omitempty"`
	Profile        string            `json:"permission_profile,omitempty"`
	Body           string            `json:"-"`
	Dir            string            `json:"dir"`
	File           string            `json:"file"`
}

// Offered says the model may be offered the skill: model-invocable and
// not one that mutates production.
func (s Skill) Offered() bool { return s.ModelInvocable && s.SideEffects != "production-mutation" }

// Problem is a skill that does not read, with its file and line.
type Problem struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Why  string `json:"why"`
}

// Problems are every problem of one file, in the order of its lines.
type Problems []Problem

func (ps Problems) Error() string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Error())
	}
	return strings.Join(out, "\n")
}

func (p Problem) Error() string {
	if p.Line == 0 {
		return p.File + ": " + p.Why
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Why)
}

var (
	nameRe     = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	sideEffect = []string{"none", "read-only", "code-edits", "local-mutation", "network", "production-mutation"}
)

// Parse reads a SKILL.md's text; dir is its folder (whose name the skill
// must have).
func Parse(file, dir string, text []byte) (Skill, error) {
	s := Skill{Dir: dir, File: file, UserInvocable: true, ModelInvocable: true}
	lines := strings.Split(strings.ReplaceAll(string(text), "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return s, Problems{{file, 1, "no front matter: the file starts with a line \"---\", then name: and description:, then \"---\""}}
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return s, Problems{{file, 1, "the front matter has no closing \"---\""}}
	}
	var probs Problems
	seen := map[string]int{}
	var listKey string
	for i := 1; i < end; i++ {
		raw := lines[i]
		line := strings.TrimRight(raw, " \t")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			item := strings.TrimSpace(line)
			switch {
			case listKey == "allowed-tools" && strings.HasPrefix(item, "- "):
				s.AllowedTools = append(s.AllowedTools, unquote(strings.TrimSpace(item[2:])))
			case listKey == "metadata":
				k, v, ok := strings.Cut(item, ":")
				if !ok {
					probs = append(probs, Problem{file, i + 1, "metadata entries are key: value"})
					continue
				}
				if s.Metadata == nil {
					s.Metadata = map[string]string{}
				}
				s.Metadata[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
			default:
				probs = append(probs, Problem{file, i + 1, fmt.Sprintf("an indented line where ultra expects key: value (%q)", item)})
				continue
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			probs = append(probs, Problem{file, i + 1, fmt.Sprintf("%q is not key: value", line)})
			continue
		}
		k, v = strings.TrimSpace(k), unquote(strings.TrimSpace(v))
		if prev, dup := seen[k]; dup {
			probs = append(probs, Problem{file, i + 1, fmt.Sprintf("%s is given twice (first on line %d)", k, prev)})
			continue
		}
		seen[k] = i + 1
		listKey = ""
		var err error
		switch k {
		case "name":
			s.Name = v
		case "description":
			s.Description = v
		case "allowed-tools":
			listKey = k
			s.AllowedTools = splitTools(v)
		case "license":
			s.License = v
		case "compatibility":
			s.Compatibility = v
		case "metadata":
			listKey = k
		case "user-invocable":
			s.UserInvocable, err = strconv.ParseBool(v)
		case "model-invocable":
			s.ModelInvocable, err = strconv.ParseBool(v)
		case "side-effects":
			if !slices.Contains(sideEffect, v) {
				probs = append(probs, Problem{file, i + 1, fmt.Sprintf("side-effects %q: one of %s", v, strings.Join(sideEffect, ", "))})
				continue
			}
			s.SideEffects = v
		case "disable-model-invocation":
			// Claude Code's word for model-invocable: false.
			var off bool
			off, err = strconv.ParseBool(v)
			s.ModelInvocable = s.ModelInvocable && !off
		case "argument-hint", "model", "version", "when_to_use", "mode":
			// Claude Code's keys that change nothing here: kept.
			if s.Metadata == nil {
				s.Metadata = map[string]string{}
			}
			s.Metadata[k] = v
		case "permission-profile":
			switch v {
			case "restricted", "normal", "trusted", "unrestricted":
			default:
				probs = append(probs, Problem{file, i + 1, fmt.Sprintf("permission-profile %q: restricted, normal, trusted or unrestricted", v)})
				continue
			}
			s.Profile = v
		default:
			// Not fatal: a skill written for another agent still loads.
			s.Warnings = append(s.Warnings, Problem{file, i + 1, fmt.Sprintf("unknown key %q, left alone (name, description, allowed-tools, license, compatibility, metadata, user-invocable, model-invocable, side-effects, permission-profile; Claude Code's disable-model-invocation, argument-hint, model)", k)})
			continue
		}
		if err != nil {
			probs = append(probs, Problem{file, i + 1, fmt.Sprintf("%s must be true or false, not %q", k, v)})
		}
	}
	switch {
	case s.Name == "":
		probs = append(probs, Problem{file, 2, "no name"})
	case !nameRe.MatchString(s.Name) || len(s.Name) > 64:
		probs = append(probs, Problem{file, seen["name"], fmt.Sprintf("name %q: 1 to 64 lowercase letters, digits and hyphens", s.Name)})
	case dir != "" && filepath.Base(dir) != s.Name:
		probs = append(probs, Problem{file, seen["name"], fmt.Sprintf("name %q is not its folder's (%s)", s.Name, filepath.Base(dir))})
	}
	switch {
	case strings.TrimSpace(s.Description) == "":
		probs = append(probs, Problem{file, 2, "no description: say what the skill does and when to use it"})
	case len(s.Description) > 1024:
		probs = append(probs, Problem{file, seen["description"], fmt.Sprintf("the description has %d characters (at most 1024)", len(s.Description))})
	}
	s.ToolsLine = seen["allowed-tools"]
	if len(probs) > 0 {
		sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
		return s, probs
	}
	s.Body = strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	return s, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// splitTools reads allowed-tools given on one line: "Read, Grep", "Read
// Grep", "[Read, Grep]", "Bash(git diff:*), Read" (a space inside
// parentheses is the rule's own).
func splitTools(v string) []string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		v = v[1 : len(v)-1]
	}
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if f := unquote(strings.TrimSpace(cur.String())); f != "" {
			out = append(out, f)
		}
		cur.Reset()
	}
	for _, r := range v {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || r == ' ' || r == '\t'):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

// Dirs are the folders skills are looked up in, the first winning a
// name: .agents/skills, .claude/skills and .ultra/skills from dir up to
// root, then ~/.agents/skills and ~/.claude/skills.
func Dirs(dir, root, home string) []string {
	var out []string
	if dir != root && !strings.HasPrefix(dir, root+string(filepath.Separator)) {
		dir = root // started outside the checkout (in a run's worktree, say): its skills are not the person's
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, s := range []string{".agents", ".claude", ".ultra"} {
			out = append(out, filepath.Join(d, s, "skills"))
		}
		if d == root || d == filepath.Dir(d) || !strings.HasPrefix(d, root) {
			break
		}
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".agents", "skills"), filepath.Join(home, ".claude", "skills"))
	}
	return out
}

// Discover reads every skill in dirs: a name found twice keeps the first;
// a skill that does not read is a Problem, skipped.
func Discover(dirs []string) ([]Skill, []Problem) {
	var out []Skill
	var probs []Problem
	seen := map[string]bool{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			folder := filepath.Join(d, e.Name())
			file := filepath.Join(folder, "SKILL.md")
			text, err := os.ReadFile(file)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				probs = append(probs, Problem{file, 0, err.Error()})
				continue
			}
			s, err := Parse(file, folder, text)
			var ps Problems
			if errors.As(err, &ps) {
				probs = append(probs, ps...)
				continue
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, probs
}

// Index is the skills' names and descriptions for the system prompt, the
// offered ones only, within budget bytes (descriptions are cut, then
// skills left out, saying how many).
func Index(all []Skill, budget int) string {
	var b strings.Builder
	left := 0
	for _, s := range all {
		if !s.Offered() {
			continue
		}
		line := "- " + s.Name + ": " + oneLine(s.Description, 300) + "\n"
		if b.Len()+len(line) > budget {
			left++
			continue
		}
		b.WriteString(line)
	}
	if b.Len() == 0 {
		return ""
	}
	out := "Skills (load one with skill{name} when the task needs it):\n" + b.String()
	if left > 0 {
		out += fmt.Sprintf("(%d more skills: skill{name:\"?\"} lists them all)\n", left)
	}
	return out
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Resources lists the files of a skill's folder besides SKILL.md,
// relative to it (at most 200).
func Resources(s Skill) []string {
	var out []string
	_ = filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= 200 {
			return filepath.SkipDir
		}
		if d.IsDir() {
			if d.Name() == "hidden" && filepath.Base(filepath.Dir(filepath.Dir(p))) == "evals" {
				return filepath.SkipDir // an eval's reference answers
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // a link could lead anywhere
		}
		rel, _ := filepath.Rel(s.Dir, p)
		if rel != "SKILL.md" {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}
