package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/verify"
)

func TestParseReport(t *testing.T) {
	long := strings.Repeat("é", ReportTitleMax) // characters, not bytes
	cases := []struct {
		args, err string
		title     string
	}{
		{`{"title":"Where budgets live","body":"## Findings\nstate.go"}`, "", "Where budgets live"},
		{`{"title":"  padded  ","body":" b "}`, "", "padded"},
		{`{"title":"` + long + `","body":"b"}`, "", long},
		{`{"title":"` + long + `x","body":"b"}`, "121 characters; at most 120", ""},
		{`{"title":"","body":"b"}`, "needs a title", ""},
		{`{"title":"   ","body":"b"}`, "needs a title", ""},
		{`{"body":"b"}`, "needs a title", ""},
		{`{"title":"t","body":""}`, "needs a body", ""},
		{`{"title":"t","body":" \n\t"}`, "needs a body", ""},
		{`{"title":"t"}`, "needs a body", ""},
		{`{"title":"two\nlines","body":"b"}`, "one line", ""},
		{`{"title":"t","body":"b","summary":"s"}`, `unknown field "summary"`, ""},
		{`{"title":1,"body":"b"}`, "invalid arguments", ""},
		{`{"title":"t","body":"a\u0000b"}`, "no NUL", ""},
		{`{"title":"t","body":"b"} {}`, "more than one", ""},
		{``, "needs a title", ""},
	}
	for _, c := range cases {
		rep, err := ParseReport(json.RawMessage(c.args))
		if c.err == "" {
			if err != nil || rep.Title != c.title {
				t.Errorf("ParseReport(%s) = %+v, %v; want title %q", c.args, rep, err, c.title)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseReport(%s) error %v, want one saying %q", c.args, err, c.err)
		}
	}
}

func TestReportSlugAndName(t *testing.T) {
	for title, want := range map[string]string{
		"Where budgets live":                 "where-budgets-live",
		"  How does the GATE decide?!  ":     "how-does-the-gate-decide",
		"a/b\\c..d":                          "a-b-c-d",
		"../../etc/passwd":                   "etc-passwd",
		"Ünïcode façade":                     "n-code-fa-ade",
		"日本語":                                "report",
		"---":                                "report",
		"v1.2 → v2":                          "v1-2-v2",
		strings.Repeat("abcdefghij ", 10):    "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcd",
		strings.Repeat("x", 47) + " y":       strings.Repeat("x", 47),
		strings.Repeat("x", 47) + " " + "yz": strings.Repeat("x", 47),
	} {
		got := ReportSlug(title)
		if got != want {
			t.Errorf("ReportSlug(%q) = %q, want %q", title, got, want)
		}
		if len(got) > slugMax || strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
			t.Errorf("ReportSlug(%q) = %q breaks the slug rules", title, got)
		}
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 2*3600))
	if got := ReportName(at, "Where budgets live"); got != "20260304-030607-where-budgets-live.md" {
		t.Errorf("ReportName = %q (the time is UTC)", got)
	}
}

func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	text := reportText("20260304-050607-abc123", "where are\nbudgets?", at, Report{Title: "Budgets", Body: "In state.go."})
	want := "---\nrun: 20260304-050607-abc123\nquestion: \"where are\\nbudgets?\"\nwritten: 2026-03-04T05:06:07Z\n---\n\n# Budgets\n\nIn state.go.\n"
	if string(text) != want {
		t.Fatalf("report text:\n%s\nwant:\n%s", text, want)
	}
	rel, err := writeReport(dir, at, "Budgets", text)
	if err != nil || rel != ".ultra/research/20260304-050607-budgets.md" {
		t.Fatalf("writeReport = %q, %v", rel, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, rel)); string(b) != want {
		t.Fatalf("written: %q", b)
	}
	// Another report of the same second and title does not overwrite it.
	rel2, err := writeReport(dir, at, "Budgets", []byte("second\n"))
	if err != nil || rel2 != ".ultra/research/20260304-050607-budgets-2.md" {
		t.Fatalf("second writeReport = %q, %v", rel2, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, rel)); string(b) != want {
		t.Fatal("the first report was overwritten")
	}
	// A link at the report's own name is not written through either.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o644)
	for _, name := range []string{"other.md", "other-2.md", "other-3.md"} {
		os.Symlink(victim, filepath.Join(dir, ".ultra", "research", "20260304-050607-"+name))
	}
	if rel, err := writeReport(dir, at, "Other", []byte("x\n")); err != nil || rel != ".ultra/research/20260304-050607-other-4.md" {
		t.Fatalf("writeReport beside links = %q, %v", rel, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Fatal("a report was written through a link")
	}
}

func TestWriteReportRefusesLinks(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for name, prepare := range map[string]func(dir, elsewhere string){
		"linked .ultra": func(dir, elsewhere string) {
			os.Symlink(elsewhere, filepath.Join(dir, ".ultra"))
		},
		"linked .ultra/research": func(dir, elsewhere string) {
			os.Mkdir(filepath.Join(dir, ".ultra"), 0o755)
			os.Symlink(elsewhere, filepath.Join(dir, ".ultra", "research"))
		},
		"linked .ultra/research inside the repository": func(dir, _ string) {
			os.MkdirAll(filepath.Join(dir, "docs"), 0o755)
			os.Mkdir(filepath.Join(dir, ".ultra"), 0o755)
			os.Symlink("../docs", filepath.Join(dir, ".ultra", "research"))
		},
		".ultra is a file": func(dir, _ string) {
			os.WriteFile(filepath.Join(dir, ".ultra"), []byte("x"), 0o644)
		},
		".ultra/research is a file": func(dir, _ string) {
			os.Mkdir(filepath.Join(dir, ".ultra"), 0o755)
			os.WriteFile(filepath.Join(dir, ".ultra", "research"), []byte("x"), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			prepare(dir, elsewhere)
			rel, err := writeReport(dir, at, "t", []byte("x\n"))
			if err == nil {
				t.Fatalf("writeReport wrote %s", rel)
			}
			if !strings.Contains(err.Error(), ".ultra") {
				t.Errorf("error %q does not name the place", err)
			}
			for _, d := range []string{elsewhere, filepath.Join(dir, "docs")} {
				if es, _ := os.ReadDir(d); len(es) != 0 {
					t.Errorf("something was written through the link into %s: %v", d, es)
				}
			}
		})
	}
}

// researchAxes are the axes of ultra research.
func researchAxes() axes.Axes {
	a := axes.Default
	a.Mode = phase.Research
	return a
}

func TestReportThroughLinkEscalatesAndWritesNothing(t *testing.T) {
	p := &stubProvider{next: func(n int, _ llm.Request) *llm.Response {
		return callsOf(tc("report", `{"title":"t","body":"b"}`))
	}}
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	elsewhere := t.TempDir()
	os.Symlink(elsewhere, filepath.Join(dir, ".ultra", "research"))
	out, err := Start(context.Background(), o, Spec{Task: "q", Repo: dir, Workdir: dir, Axes: researchAxes()})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusEscalated || !strings.Contains(out.Reason, "symbolic link") || p.n != 1 {
		t.Fatalf("outcome %+v after %d requests", out, p.n)
	}
	if es, _ := os.ReadDir(elsewhere); len(es) != 0 {
		t.Fatalf("written through the link: %v", es)
	}
}

func TestHelperStopsWhenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &stubProvider{keep: true, next: func(n int, req llm.Request) *llm.Response {
		switch {
		case n == 1:
			return callsOf(tc("task", `{"prompt":"read a.txt"}`))
		case strings.HasPrefix(req.System, "You are a read-only helper"):
			if n == 3 {
				cancel() // a person interrupts during the helper's work
			}
			return callsOf(tc("read", `{"file_path":"a.txt"}`))
		}
		return callsOf(tc("report", `{"title":"t","body":"b"}`))
	}}
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	out, err := Start(ctx, o, Spec{Task: "q", Repo: dir, Workdir: dir, Axes: researchAxes()})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusInterrupted || p.n != 3 {
		t.Fatalf("outcome %+v after %d requests, want interrupted after 3", out, p.n)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ultra", "research")); !os.IsNotExist(err) {
		t.Fatal("a report was written")
	}
	// The helper's requests had its own context and tools.
	h := p.reqs[1]
	if got := toolNames(h.Tools); strings.Join(got, ",") != "read,glob,grep,bash" {
		t.Errorf("helper offered %v", got)
	}
	if h.Messages[0].Role != llm.RoleUser || h.Messages[0].Content != "read a.txt" {
		t.Errorf("helper's first message %+v", h.Messages[0])
	}
}

// liveSink records the passing state a run shows.
type liveSink struct {
	mu    sync.Mutex
	lives []event.Live
}

func (s *liveSink) Emit(event.Event) {}
func (s *liveSink) Live(l event.Live) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lives = append(s.lives, l)
}

// A research helper's command is the run's activity while it runs: its
// output is kept as the command's, not shown as the model's answer.
func TestHelperCommandIsTheActivity(t *testing.T) {
	p := &stubProvider{keep: true, next: func(n int, req llm.Request) *llm.Response {
		switch {
		case n == 1:
			return callsOf(tc("task", `{"prompt":"count the files"}`))
		case strings.HasPrefix(req.System, "You are a read-only helper") && n == 2:
			return callsOf(tc("bash", `{"command":"ls"}`))
		case strings.HasPrefix(req.System, "You are a read-only helper"):
			return &llm.Response{Text: "two files"}
		}
		return callsOf(tc("report", `{"title":"t","body":"b"}`))
	}}
	sink := &liveSink{}
	o, dir := setup(t, p, stubVerifier{verify.StatusPass}, sink)
	if _, err := Start(context.Background(), o, Spec{Task: "q", Repo: dir, Workdir: dir, Axes: researchAxes()}); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	var acts []string
	for _, l := range sink.lives {
		if l.Activity != "" {
			acts = append(acts, l.Activity)
		}
	}
	if !slices.Contains(acts, "running `ls`") {
		t.Fatalf("activities %q", acts)
	}
}
