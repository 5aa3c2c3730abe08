package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/llm/scripted"
)

// researchArgs are the arguments of a headless JSONL research run
// against m.
func researchArgs(m *model, extra ...string) []string {
	return append([]string{"research", "--output", "jsonl", "--provider", "openai", "--base-url", m.url, "--model", "scripted"}, extra...)
}

// wireMsg is one message of a logged Chat Completions request.
type wireMsg struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
}

func (m wireMsg) text() string {
	switch c := m.Content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				s, _ := pm["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// messagesOf are a logged request's messages.
func messagesOf(t *testing.T, r scripted.LoggedRequest) []wireMsg {
	t.Helper()
	var body struct {
		Messages []wireMsg `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("request %d: %v", r.N, err)
	}
	return body.Messages
}

// toolResults are the texts of a request's tool messages.
func toolResults(t *testing.T, r scripted.LoggedRequest) []string {
	var out []string
	for _, m := range messagesOf(t, r) {
		if m.Role == "tool" {
			out = append(out, m.text())
		}
	}
	return out
}

// isHelper reports that a logged request is a research helper's.
func isHelper(r scripted.LoggedRequest) bool {
	return strings.HasPrefix(r.System, "You are a read-only helper")
}

// reports lists the files under dir's .ultra/research.
func reports(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, ".ultra", "research"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, filepath.Join(dir, ".ultra", "research", e.Name()))
	}
	return out
}

// onlyReportChanged checks that the checkout has no run branch or
// worktree and that nothing but the one report is new in it.
func onlyReportChanged(t *testing.T, dir string) {
	t.Helper()
	if b := strings.TrimSpace(git(t, dir, "branch", "--list", "ultra/*")); b != "" {
		t.Errorf("a research run made a branch: %s", b)
	}
	if wt := strings.Split(strings.TrimSpace(git(t, dir, "worktree", "list")), "\n"); len(wt) != 1 {
		t.Errorf("a research run made a worktree: %v", wt)
	}
	st := strings.Split(strings.TrimSpace(git(t, dir, "status", "--porcelain", "--untracked-files=all")), "\n")
	if len(st) != 1 || !strings.HasPrefix(st[0], "?? .ultra/research/") || !strings.HasSuffix(st[0], ".md") {
		t.Errorf("git status after research: %q, want only the new report", st)
	}
}

func TestResearchHelperReportsAndRunWritesReport(t *testing.T) {
	dir := repo(t, calcProject)
	prompt := "Find where Add is defined and what it returns. Report the file and line."
	m := newModel(t,
		calls(call("task", map[string]any{"prompt": prompt, "description": "find Add"})),
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		text("HELPER-REPORT: Add is in calc/calc.go at line 4; it returns a - b."),
		calls(call("report", map[string]any{"title": "Where Add lives, and what it does", "body": "## Findings\n\nAdd subtracts: `return a - b` (calc/calc.go:5).\n"})),
	)
	res := ultra(t, dir, researchArgs(m, "where is Add and what does it return?")...)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := m.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	main, h1, h2, back := reqs[0], reqs[1], reqs[2], reqs[3]
	if isHelper(main) || !isHelper(h1) || !isHelper(h2) || isHelper(back) {
		t.Fatalf("request order: main %v, helper %v %v, main %v", isHelper(main), isHelper(h1), isHelper(h2), isHelper(back))
	}
	if want := []string{"read", "glob", "grep", "bash", "todo", "task", "report"}; !slices.Equal(main.Tools, want) {
		t.Errorf("research offered %v, want %v", main.Tools, want)
	}
	// The helper's context is fresh: its own system prompt, the prompt as
	// its first message, only the read-only tools.
	if h1.System == main.System || !isHelper(h1) {
		t.Errorf("helper's system prompt: %q", h1.System)
	}
	for _, h := range []scripted.LoggedRequest{h1, h2} {
		if want := []string{"read", "glob", "grep", "bash"}; !slices.Equal(h.Tools, want) {
			t.Errorf("helper request %d offered %v, want %v", h.N, h.Tools, want)
		}
	}
	msgs := messagesOf(t, h1)
	var users []wireMsg
	for _, mm := range msgs {
		if mm.Role == "user" {
			users = append(users, mm)
		}
		if mm.Role == "assistant" || mm.Role == "tool" {
			t.Errorf("the helper's first request carries the run's conversation: %+v", mm)
		}
	}
	if len(users) == 0 || users[0].text() != prompt {
		t.Fatalf("helper's first user message %+v, want the prompt %q", users, prompt)
	}
	if strings.Contains(string(h1.Body), "where is Add and what does it return?") {
		t.Error("the helper's request carries the run's question")
	}
	if tr := toolResults(t, h2); len(tr) != 1 || !strings.Contains(tr[0], "return a - b") {
		t.Errorf("helper's read result: %q", tr)
	}
	// Its final answer is the task's result in the run's next request.
	if back.System != main.System {
		t.Error("the run's system prompt changed after the helper")
	}
	if tr := toolResults(t, back); len(tr) != 1 || !strings.Contains(tr[0], "HELPER-REPORT: Add is in calc/calc.go at line 4") {
		t.Errorf("task result in the run's next request: %q", tr)
	}

	files := reports(t, dir)
	if len(files) != 1 {
		t.Fatalf("reports: %v", files)
	}
	name := filepath.Base(files[0])
	if !strings.HasSuffix(name, "-where-add-lives-and-what-it-does.md") || len(name) != len("20060102-150405-")+len("where-add-lives-and-what-it-does.md") {
		t.Errorf("report file name %q", name)
	}
	body := readFile(t, files[0])
	evs := res.events(t)
	id := runID(t, evs)
	if !strings.HasPrefix(body, "---\nrun: "+id+"\nquestion: \"where is Add and what does it return?\"\n") {
		t.Errorf("report header:\n%s", body)
	}
	if !strings.Contains(body, "# Where Add lives, and what it does\n") || !strings.Contains(body, "Add subtracts: `return a - b` (calc/calc.go:5).") {
		t.Errorf("report body:\n%s", body)
	}
	onlyReportChanged(t, dir)

	// The events show the helper's calls (marked by the task's call id)
	// and the report's path; the run completed through the phase machine.
	var helperCalls int
	for _, e := range ofType(evs, "tool_call") {
		if strings.Contains(data(e)["call_id"].(string), "/") {
			helperCalls++
			if data(e)["tool"] != "read" {
				t.Errorf("helper call event %v", data(e))
			}
		}
	}
	if helperCalls != 1 {
		t.Errorf("%d helper call events, want 1", helperCalls)
	}
	var reported string
	for _, e := range ofType(evs, "tool_result") {
		if d := data(e); d["tool"] == "report" && d["is_error"] == false {
			det, _ := d["details"].(map[string]any)
			reported, _ = det["report"].(string)
		}
	}
	if reported != ".ultra/research/"+name {
		t.Errorf("report event names %q, want .ultra/research/%s", reported, name)
	}
	pc := ofType(evs, "phase_changed")
	if len(pc) != 1 || data(pc[0])["from"] != "researching" || data(pc[0])["to"] != "complete" || data(pc[0])["by"] != "model" {
		t.Errorf("phase changes: %v", pc)
	}
	fin := ofType(evs, "run_finished")
	if len(fin) != 1 || data(fin[0])["status"] != "complete" || !strings.Contains(data(fin[0])["reason"].(string), name) {
		t.Errorf("run_finished: %v", fin)
	}
	if tu := data(fin[0])["turns"].(float64); tu != 4 {
		t.Errorf("the run counted %v turns, want 4 (the helper's count)", tu)
	}
}

func TestResearchHelperCannotWrite(t *testing.T) {
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("task", map[string]any{"prompt": "Change calc.go."})),
		calls(call("write", map[string]any{"file_path": "pwned.txt", "content": "x"}),
			call("bash", map[string]any{"command": "echo hi > pwned2.txt"}),
			call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "a - b", "new_string": "a + b"}),
			call("task", map[string]any{"prompt": "nested"})),
		text("I could not change anything."),
		calls(call("report", map[string]any{"title": "Nothing changed", "body": "The helper was refused."})),
	)
	res := ultra(t, dir, researchArgs(m, "can a helper write?")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, f := range []string{"pwned.txt", "pwned2.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s exists after a helper's refused call", f)
		}
	}
	if got := readFile(t, filepath.Join(dir, "calc", "calc.go")); got != calcProject["calc/calc.go"] {
		t.Errorf("calc.go changed:\n%s", got)
	}
	onlyReportChanged(t, dir)
	layers := map[string]string{}
	for _, e := range ofType(res.events(t), "refusal") {
		d := data(e)
		if !strings.Contains(d["call_id"].(string), "/") {
			t.Errorf("refusal of a helper's call without the helper's mark: %v", d)
		}
		layers[d["tool"].(string)] = d["layer"].(string)
	}
	want := map[string]string{"write": "phase-guard", "bash": "planning-read-only", "edit": "phase-guard", "task": "phase-guard"}
	for tool, layer := range want {
		if layers[tool] != layer {
			t.Errorf("refusal of the helper's %s: %q, want %q (all: %v)", tool, layers[tool], layer, layers)
		}
	}
	reqs := m.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	tr := toolResults(t, reqs[2])
	if len(tr) != 4 {
		t.Fatalf("helper got %d results", len(tr))
	}
	for i, r := range tr {
		if !strings.HasPrefix(r, "Refused [") {
			t.Errorf("helper result %d: %q", i, r)
		}
	}
	if !strings.Contains(tr[3], "cannot start helpers") {
		t.Errorf("nested task refusal: %q", tr[3])
	}
}

func TestResearchHelperCutAtTurnLimit(t *testing.T) {
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("task", map[string]any{"prompt": "Read forever."})),
		step{"repeat": 12, "tool_calls": []any{call("read", map[string]any{"file_path": "calc/calc.go"})}},
		calls(call("report", map[string]any{"title": "Cut short", "body": "The helper ran out of turns."})),
	)
	res := ultra(t, dir, researchArgs(m, "does a helper stop?")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := m.srv.Requests()
	if len(reqs) != 14 {
		t.Fatalf("%d requests, want 14 (1 + 12 helper turns + 1)", len(reqs))
	}
	for i, r := range reqs {
		if want := i >= 1 && i <= 12; isHelper(r) != want {
			t.Errorf("request %d: helper %v, want %v", i+1, isHelper(r), want)
		}
	}
	tr := toolResults(t, reqs[13])
	if len(tr) != 1 || !strings.Contains(tr[0], "used all its 12 turns") || !strings.Contains(tr[0], "read ") {
		t.Errorf("task result after the turn limit: %q", tr)
	}
	if len(reports(t, dir)) != 1 {
		t.Error("no report after the helper was cut")
	}
}

func TestResearchMalformedReportIsToolError(t *testing.T) {
	dir := repo(t, calcProject)
	m := newModel(t,
		text("I think Add subtracts."), // not a report: the run goes on
		calls(call("report", map[string]any{"title": "", "body": "x"})),
		calls(call("report", map[string]any{"title": "t", "body": "b", "summary": "extra"})),
		calls(call("report", map[string]any{"title": strings.Repeat("x", 121), "body": "b"})),
		calls(call("report", map[string]any{"title": "no body", "body": "  "})),
		calls(call("report", map[string]any{"title": "Add subtracts", "body": "It does."})),
	)
	res := ultra(t, dir, researchArgs(m, "what does Add do?")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := m.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !strings.Contains(string(reqs[1].Body), "only report{title, body} ends it") {
		t.Error("the reminder after an answer without a tool call does not say that report ends the run")
	}
	var errs []string
	ok := 0
	for _, e := range ofType(res.events(t), "tool_result") {
		if d := data(e); d["tool"] == "report" {
			if d["is_error"] == true {
				errs = append(errs, d["output"].(string))
			} else {
				ok++
			}
		}
	}
	if len(errs) != 4 || ok != 1 {
		t.Fatalf("report results: %d errors %q, %d ok", len(errs), errs, ok)
	}
	for i, want := range []string{"needs a title", "unknown field", "at most 120", "needs a body"} {
		if !strings.Contains(errs[i], want) {
			t.Errorf("error %d %q does not say %q", i, errs[i], want)
		}
	}
	files := reports(t, dir)
	if len(files) != 1 || !strings.HasSuffix(files[0], "-add-subtracts.md") {
		t.Errorf("reports: %v", files)
	}
}

func TestResearchHelperTurnsCountAgainstBudget(t *testing.T) {
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("task", map[string]any{"prompt": "Read a lot."})),
		step{"repeat": 10, "tool_calls": []any{call("read", map[string]any{"file_path": "calc/calc.go"})}},
		calls(call("report", map[string]any{"title": "never", "body": "never"})),
	)
	res := ultra(t, dir, researchArgs(m, "--max-turns", "3", "does the budget hold?")...)
	if res.code != 4 {
		t.Fatalf("exit %d, want 4\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if n := len(m.srv.Requests()); n != 3 {
		t.Errorf("%d requests with --max-turns 3", n)
	}
	evs := res.events(t)
	fin := ofType(evs, "run_finished")
	if len(fin) != 1 || data(fin[0])["status"] != "budget_exhausted" {
		t.Fatalf("run_finished: %v", fin)
	}
	var taskOut string
	for _, e := range ofType(evs, "tool_result") {
		if d := data(e); d["tool"] == "task" {
			taskOut = d["output"].(string)
		}
	}
	if !strings.Contains(taskOut, "budget ran out") {
		t.Errorf("task result: %q", taskOut)
	}
	if len(reports(t, dir)) != 0 {
		t.Error("a report was written")
	}
}

func TestResearchQuestionFromStdin(t *testing.T) {
	dir := repo(t, calcProject)
	m := newModel(t, calls(call("report", map[string]any{"title": "From stdin", "body": "Asked on stdin."})))
	cmd := exec.Command(ultraBin, researchArgs(m)...)
	cmd.Stdin = strings.NewReader("  what does Add do?\n")
	res := ultraCmd(t, cmd, dir, ultraEnv(t))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(string(m.srv.Requests()[0].Body), `Question:\nwhat does Add do?`) {
		t.Error("the question on stdin is not the run's question")
	}
	// No question at all: a usage error before any request.
	empty := newModel(t, text("never asked"))
	cmd = exec.Command(ultraBin, researchArgs(empty)...)
	cmd.Stdin = strings.NewReader(" \n")
	res = ultraCmd(t, cmd, dir, ultraEnv(t))
	if res.code != 2 || !strings.Contains(res.stderr, "the question is empty") || len(empty.srv.Requests()) != 0 {
		t.Errorf("empty question: exit %d, %q, %d requests", res.code, res.stderr, len(empty.srv.Requests()))
	}
}
