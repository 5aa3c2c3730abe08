package goal

import (
	"slices"
	"strings"
	"testing"
)

const sampleBrief = `# Todo CLI

A small command-line todo list.
It stores todos in a file.

## Goals
- add and list todos
- remove a todo
  by its number
* mark done (TBD: which flag?)

## Constraints
1. no network
2) storage format to be decided
- Go only; TODOs in code are fine

## Background
Some history.

## Definition of done
All commands work and ` + "`go test ./...`" + ` passes.

- [ ] latency ??? under load
- [x] docs written

## Open questions:
- Which file format?
- [x] Which language? Go.
- ~~Colour output?~~ no
- [ ] Max list size?

- 
`

func TestParseBrief(t *testing.T) {
	b := ParseBrief(sampleBrief)
	tests := []struct {
		name      string
		got, want []string
	}{
		{"title", []string{b.Title}, []string{"Todo CLI"}},
		{"text", []string{b.Text}, []string{"A small command-line todo list.\nIt stores todos in a file.\n\n## Background\nSome history."}},
		{"goals", b.Goals, []string{"add and list todos", "remove a todo by its number", "mark done (TBD: which flag?)"}},
		{"constraints", b.Constraints, []string{"no network", "storage format to be decided", "Go only; TODOs in code are fine"}},
		{"done", b.Done, []string{"All commands work and `go test ./...` passes.", "[ ] latency ??? under load", "[x] docs written"}},
		{"open questions", b.OpenQuestions, []string{"Which file format?", "[x] Which language? Go.", "~~Colour output?~~ no", "[ ] Max list size?", ""}},
	}
	for _, tt := range tests {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestParseBriefShapes(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		title string
		text_ string
		goals []string
		done  []string
	}{
		{"empty", "", "", "", nil, nil},
		{"no title", "just do it\n", "", "just do it", nil, nil},
		{"crlf and case", "# T\r\n\r\n## GOALS\r\n- a\r\n", "T", "", []string{"a"}, nil},
		{"heading with closing hashes", "# T #\n## Definition of Done ##\nit works\n", "T", "", nil, []string{"it works"}},
		{"paragraph items", "## Goals\nfirst line\ncontinues\n\nsecond\n", "", "", []string{"first line continues", "second"}, nil},
		{"sub-heading inside", "## Goals\n- a\n### details\n- b\n", "", "", []string{"a", "b"}, nil},
		{"section ends at heading", "## Goals\n- a\n## Notes\n- not a goal\n", "", "## Notes\n- not a goal", []string{"a"}, nil},
		{"fenced code is no heading", "# T\n```\n## Goals\n- x\n```\n", "T", "```\n## Goals\n- x\n```", nil, nil},
		{"fenced code joins item", "## Definition of done\n- runs:\n```\nmake\n```\n", "", "", nil, []string{"runs: ``` make ```"}},
		{"second h1 is text", "# A\n# B\n", "A", "# B", nil, nil},
		{"title after text", "intro\n# T\n", "T", "intro", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := ParseBrief(tt.text)
			if b.Title != tt.title || b.Text != tt.text_ || !slices.Equal(b.Goals, tt.goals) || !slices.Equal(b.Done, tt.done) {
				t.Errorf("got title %q text %q goals %q done %q\nwant title %q text %q goals %q done %q",
					b.Title, b.Text, b.Goals, b.Done, tt.title, tt.text_, tt.goals, tt.done)
			}
		})
	}
}

func TestUndecided(t *testing.T) {
	tests := []struct {
		name  string
		brief Brief
		want  []string
	}{
		{"sample", ParseBrief(sampleBrief), []string{
			"Open questions, line 27: Which file format?",
			"Open questions, line 30: Max list size?",
			"Goals, line 10: mark done (TBD: which flag?)",
			"Constraints, line 14: storage format to be decided",
			"Definition of done, line 23: [ ] latency ??? under load",
		}},
		{"empty", ParseBrief("  \n\n"), []string{"the brief is empty"}},
		{"empty struct", Brief{}, []string{"the brief is empty"}},
		{"title only is not empty", ParseBrief("# T"), nil},
		{"sections only is not empty", ParseBrief("## Goals\n- a"), nil},
		{"whole words only", ParseBrief("# T\n## Goals\n- TBDx and TODOS\n- tbd\n- ToDo: x\n- To Be\n  Decided later\n- a todo list\n- TODO\n"), []string{
			"Goals, line 4: tbd", "Goals, line 5: ToDo: x", "Goals, line 6: To Be Decided later", "Goals, line 9: TODO"}},
		{"free text is not checked", ParseBrief("# T\nTBD\n"), nil},
		{"struck through needs a close", ParseBrief("# T\n## Open questions\n- ~~half\n- [X] done\n"), []string{"Open questions, line 3: ~~half"}},
		{"hand-made brief", Brief{Title: "T", OpenQuestions: []string{"a?", " "}, Done: []string{"x", "TODO y"}}, []string{
			"Open questions, item 1: a?", "Definition of done, item 2: TODO y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.brief.Undecided()
			if !slices.Equal(got, tt.want) {
				t.Errorf("Undecided() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestTaskBrief(t *testing.T) {
	long := strings.Repeat("word ", 30)
	tests := []struct {
		name, task, title, text string
		goals                   []string
	}{
		{"one line", "  Fix the login bug  ", "Fix the login bug", "Fix the login bug", []string{"Fix the login bug"}},
		{"several lines", "Add export\r\nas CSV and   JSON\n", "Add export", "Add export\nas CSV and   JSON", []string{"Add export as CSV and JSON"}},
		{"long", long, strings.TrimSpace(long)[:72] + "…", strings.TrimSpace(long), []string{strings.TrimSpace(long)}},
		{"empty", " \n ", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := TaskBrief(tt.task)
			if b.Title != tt.title || b.Text != tt.text || !slices.Equal(b.Goals, tt.goals) {
				t.Errorf("TaskBrief = %+v", b)
			}
			if len(b.Constraints)+len(b.Done)+len(b.OpenQuestions) != 0 {
				t.Errorf("TaskBrief has sections: %+v", b)
			}
			if tt.task != " \n " && len(b.Undecided()) != 0 {
				t.Errorf("a task brief has undecided items: %v", b.Undecided())
			}
		})
	}
	if got := TaskBrief("").Undecided(); !slices.Equal(got, []string{"the brief is empty"}) {
		t.Errorf("empty task: %v", got)
	}
}
