package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/verify/report"
)

// stubProvider answers from a function of the request number.
type stubProvider struct {
	mu   sync.Mutex
	n    int
	next func(n int, req llm.Request) *llm.Response
	reqs []llm.Request
	keep bool
}

func (s *stubProvider) Name() string { return "stub" }
func (s *stubProvider) Stream(_ context.Context, req llm.Request, _ func(llm.Delta)) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.keep {
		s.reqs = append(s.reqs, req)
	}
	return s.next(s.n, req), nil
}

type stubVerifier struct{ status verify.Status }

func (v stubVerifier) Verify(context.Context, verify.Request) (*verify.Result, error) {
	c := verify.CommandResult{Command: "stub test", Source: "stub", Passed: 1, ReportOK: true,
		Tests: []report.Case{{Name: "TestStub", Status: report.Passed}}}
	if v.status == verify.StatusFail {
		c.ExitCode, c.Passed, c.Failed = 1, 0, 1
		c.Tests[0].Status = report.Failed
	}
	return &verify.Result{Status: v.status, Reason: "stub", Passed: c.Passed, Failed: c.Failed, Commands: []verify.CommandResult{c}}, nil
}

// goalsJSON is a proposal of one goal with three criteria (the tests'
// Checker passes them).
const goalsJSON = `{"goals":[{"title":"do it","objective":"do it well","criteria":[` +
	`{"scenario":"s1","user_model":"happy","channel":"command","check":{"run":"./app a","expect_stdout":"a"},"expected_evidence":"e"},` +
	`{"scenario":"s2","user_model":"edge","channel":"command","check":{"run":"./app b","expect_stdout":"b"},"expected_evidence":"e"},` +
	`{"scenario":"s3","user_model":"regression","channel":"command","check":{"run":"ls -a","expect_stdout":"txt"},"expected_evidence":"e"}]}]}`

// approval is the final reviewer's answer.
func approval() *llm.Response {
	return callsOf(tc("review", `{"verdict":"APPROVE","architecture":{"status":"CLEAR"}}`))
}

// reviewing reports that req is the final reviewer's.
func reviewing(req llm.Request) bool { return req.System == reviewPrompt }

// passCheck is a Checker that passes every criterion, but on the base
// tree, where each does what it must (a fail-to-pass criterion fails).
func passCheck(_ context.Context, r check.Runner, c goal.Criterion) check.Result {
	if onBase(r) && c.Expect != goal.PassToPass {
		return check.Result{Status: goal.CriterionFail, Summary: "stub on the base: " + c.Scenario}
	}
	return check.Result{Status: goal.CriterionPass, Summary: "stub: " + c.Scenario}
}

// onBase reports that a check runs on the run's base tree.
func onBase(r check.Runner) bool { return strings.HasPrefix(filepath.Base(r.EvidenceDir), "base") }

func callsOf(cs ...llm.ToolCall) *llm.Response {
	return &llm.Response{ToolCalls: cs, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}
}

func tc(name, args string) llm.ToolCall { return llm.ToolCall{Name: name, Arguments: args} }

func setup(t testing.TB, p llm.Provider, v verify.Verifier, sinks ...event.Sink) (Options, string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("beta\n"), 0o644)
	// The gate judges git trees: the workspace is a repository, and
	// ultra's state is ignored in it.
	os.MkdirAll(filepath.Join(dir, ".ultra", "state"), 0o755)
	os.WriteFile(filepath.Join(dir, ".ultra", "state", ".gitignore"), []byte("*\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	st, err := store.Open(filepath.Join(dir, ".ultra", "state", "ultra.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return Options{Provider: p, ProviderName: "stub", Model: "m", Store: st, StateRoot: filepath.Join(dir, ".ultra", "state"),
		Verifier: v, Sinks: sinks, Checker: passCheck}, dir
}

func collect() (*[]event.Event, event.Sink) {
	var mu sync.Mutex
	var evs []event.Event
	return &evs, event.SinkFunc(func(e event.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() })
}

func TestLoopCompletesOnlyThroughVerify(t *testing.T) {
	script := []*llm.Response{
		{Text: "All tests pass, I am done."}, // a claim, not a completion
		callsOf(tc("phase", `{"to":"complete"}`)),
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	p := &stubProvider{keep: true, next: func(n int, _ llm.Request) *llm.Response { return script[n-1] }}
	evs, sink := collect()
	o, dir := setup(t, p, stubVerifier{verify.StatusPass}, sink)
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusComplete || out.ExitCode != 0 || p.n != 7 {
		t.Fatalf("outcome %+v after %d requests", out, p.n)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "c.txt")); string(b) != "gamma\n" {
		t.Fatal("write did not happen")
	}
	var refusals []string
	for _, e := range *evs {
		if d, ok := e.Data.(event.RefusalData); ok {
			refusals = append(refusals, d.Layer)
		}
	}
	if len(refusals) != 1 || refusals[0] != LayerTransition {
		t.Fatalf("refusals %v", refusals)
	}
	// Sequence numbers are dense and ordered.
	for i, e := range *evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	// Layer 1 and 3 on every request.
	for i, r := range p.reqs {
		last := r.Messages[len(r.Messages)-1].Content
		if !strings.Contains(last, "<ultra-reminder>") {
			t.Fatalf("request %d has no reminder", i)
		}
		if r.System != p.reqs[0].System && !reviewing(r) {
			t.Fatal("system prompt changed between requests")
		}
	}
	if got := toolNames(p.reqs[5].Tools); strings.Join(got, ",") != "read,glob,grep,verify" {
		t.Fatalf("verifying offered %v", got)
	}
}

func TestParallelReadOnlyCallsKeepOrder(t *testing.T) {
	p := &stubProvider{keep: true, next: func(n int, _ llm.Request) *llm.Response {
		if n == 1 {
			return callsOf(tc("read", `{"file_path":"a.txt"}`), tc("read", `{"file_path":"b.txt"}`),
				tc("grep", `{"pattern":"beta"}`), tc("bash", `{"command":"cat a.txt"}`), tc("read", `{"file_path":"b.txt"}`))
		}
		return &llm.Response{Text: "idle"}
	}}
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	if _, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default}); err != nil {
		t.Fatal(err)
	}
	msgs := p.reqs[1].Messages
	var results []llm.Message
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			results = append(results, m)
		}
	}
	if len(results) != 5 {
		t.Fatalf("%d results", len(results))
	}
	wants := []string{"alpha", "beta", "b.txt", "alpha", "beta"}
	for i, w := range wants {
		if !strings.Contains(results[i].Content, w) || results[i].IsError {
			t.Errorf("result %d (%s) = %q, want %q", i, results[i].ToolName, results[i].Content, w)
		}
		if results[i].ToolCallID != p.reqs[1].Messages[1].ToolCalls[i].ID {
			t.Errorf("result %d answers the wrong call", i)
		}
	}
}

func TestRepairHistory(t *testing.T) {
	h := []llm.Message{
		{Role: llm.RoleUser, Content: "task"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Name: "read"}, {ID: "2", Name: "bash"}}},
		{Role: llm.RoleTool, ToolCallID: "1", Content: "ok"},
	}
	got := repairHistory(h)
	if len(got) != 4 || got[3].ToolCallID != "2" || !got[3].IsError {
		t.Fatalf("repair %+v", got)
	}
	if len(repairHistory(got)) != 4 {
		t.Fatal("repair is not idempotent")
	}
}

func TestNormaliseCalls(t *testing.T) {
	got := normaliseCalls([]llm.ToolCall{{Name: "a"}, {ID: "x", Name: "b"}, {ID: "x", Name: "c"}}, 7, nil)
	ids := []string{got[0].ID, got[1].ID, got[2].ID}
	if ids[0] != "ultra_7_1" || ids[1] != "x" || ids[2] != "ultra_7_3" {
		t.Fatalf("ids %v", ids)
	}
	// A model's id becomes part of commands people paste: only plain
	// words are kept.
	for _, c := range []struct{ id, want string }{
		{"call_abc-DEF_09", "call_abc-DEF_09"},
		{"toolu_01A09q90qw90lq917835lq9", "toolu_01A09q90qw90lq917835lq9"},
		{"x;touch /tmp/PWNED;#", "ultra_2_1"},
		{"c3 --for-run --autonomous", "ultra_2_1"},
		{"--deny=x", "ultra_2_1"},
		{"a\x1b]52;c;eA==\a", "ultra_2_1"},
		{strings.Repeat("a", 65), "ultra_2_1"},
	} {
		if got := normaliseCalls([]llm.ToolCall{{ID: c.id, Name: "bash"}}, 2, nil)[0].ID; got != c.want {
			t.Errorf("%q became %q, want %q", c.id, got, c.want)
		}
	}
	// An id is one call's for the whole run: a later answer reusing it
	// gets ultra's.
	seen := map[string]bool{}
	normaliseCalls([]llm.ToolCall{{ID: "call_1", Name: "bash"}}, 3, seen)
	if got := normaliseCalls([]llm.ToolCall{{ID: "call_1", Name: "bash"}}, 5, seen)[0].ID; got != "ultra_5_1" {
		t.Errorf("a reused id stayed %q", got)
	}
	// ultra's own names are ultra's: a model using one gets another, and
	// a replacement is never an id already used.
	seen = map[string]bool{}
	first := normaliseCalls([]llm.ToolCall{{ID: "ultra_3_1", Name: "bash"}}, 2, seen)[0].ID
	second := normaliseCalls([]llm.ToolCall{{ID: "ultra_3_1", Name: "bash"}}, 3, seen)[0].ID
	if first == "ultra_3_1" || second == first || !seen[first] || !seen[second] {
		t.Errorf("ids %q then %q (seen %v)", first, second, seen)
	}
	for _, id := range []string{"--for-run", "-h", "--", "-"} {
		if got := normaliseCalls([]llm.ToolCall{{ID: id, Name: "bash"}}, 4, nil)[0].ID; got != "ultra_4_1" {
			t.Errorf("%q stayed %q", id, got)
		}
	}
}

func TestExitCodes(t *testing.T) {
	cases := map[string]int{StatusComplete: 0, StatusEscalated: 3, StatusNeedsApproval: 3, StatusBudgetExhausted: 4,
		StatusInterrupted: 130, StatusFailed: 1}
	for s, want := range cases {
		if got := ExitCode(s); got != want {
			t.Errorf("ExitCode(%s) = %d, want %d", s, got, want)
		}
	}
}

func TestInterruptedRunIsResumable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &stubProvider{next: func(n int, _ llm.Request) *llm.Response {
		if n == 2 {
			cancel()
			return callsOf(tc("bash", `{"command":"sleep 5"}`))
		}
		return callsOf(tc("goals", goalsJSON))
	}}
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	start := time.Now()
	out, err := Start(ctx, o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusInterrupted || out.ExitCode != 130 || time.Since(start) > 4*time.Second {
		t.Fatalf("outcome %+v in %s", out, time.Since(start))
	}
	row, _ := o.Store.GetRun(context.Background(), out.RunID)
	if row.Status != StatusInterrupted || row.Phase != string(phase.Building) {
		t.Fatalf("row %+v", row)
	}
	p.next = func(n int, _ llm.Request) *llm.Response {
		return map[int]*llm.Response{3: callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)), 4: callsOf(tc("phase", `{"to":"verifying"}`)),
			5: callsOf(tc("verify", `{}`)), 6: approval()}[n]
	}
	out, err = Resume(context.Background(), o, out.RunID, ResumeOptions{})
	if err != nil || out.Status != StatusComplete {
		t.Fatalf("resume %+v %v", out, err)
	}
	msgs, _ := o.Store.Messages(context.Background(), out.RunID)
	var saw bool
	for _, m := range msgs {
		var msg llm.Message
		json.Unmarshal(m, &msg)
		if msg.Role == llm.RoleTool && strings.Contains(msg.Content, "interrupted") {
			saw = true
		}
	}
	if !saw {
		t.Fatal("the interrupted call has no result in the history")
	}
}

// BenchmarkStep measures the harness's own cost per step: request
// building, a read tool call, events and the persisted step, with a model
// that answers at once.
func BenchmarkStep(b *testing.B) {
	p := &stubProvider{next: func(n int, _ llm.Request) *llm.Response {
		if n == 1 {
			return callsOf(tc("goals", goalsJSON))
		}
		return callsOf(tc("read", fmt.Sprintf(`{"file_path":"a.txt","offset":%d}`, 1)))
	}}
	o, dir := setup(b, p, stubVerifier{verify.StatusPass})
	b.ResetTimer()
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default,
		Budgets: phase.Budgets{MaxTurns: b.N + 1}})
	if err != nil || out.Status != StatusBudgetExhausted {
		b.Fatal(out, err)
	}
}

// BenchmarkPromptOverhead reports what every request carries besides the
// conversation: the system prompt and the tool definitions of the phase
// that offers the most tools (bytes, and tokens estimated at four bytes a
// token).
func BenchmarkPromptOverhead(b *testing.B) {
	p := &stubProvider{keep: true, next: func(n int, _ llm.Request) *llm.Response {
		if n == 1 {
			return callsOf(tc("goals", goalsJSON))
		}
		return &llm.Response{Text: "x"}
	}}
	o, dir := setup(b, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	if _, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default}); err != nil {
		b.Fatal(err)
	}
	req := p.reqs[1] // building: the most tools
	size := 0
	for b.Loop() {
		tools, _ := json.Marshal(req.Tools)
		size = len(req.System) + len(tools)
	}
	b.ReportMetric(float64(size), "bytes/request")
	b.ReportMetric(float64(size)/4, "est-tokens/request")
	b.ReportMetric(float64(len(req.Tools)), "tools")
}

// A run whose conversation outgrows the context window is compacted
// (old tool output pruned, then older turns summarised) and completes.
func TestCompactionKeepsARunGoing(t *testing.T) {
	big := strings.Repeat("line of a large file\n", 2000) // ~40 KB
	summaryAsked := false
	var p *stubProvider
	p = &stubProvider{keep: true, next: func(n int, req llm.Request) *llm.Response {
		if strings.HasPrefix(req.System, "You summarise") {
			summaryAsked = true
			return &llm.Response{Text: "Goal: fix. Decisions: none.", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}
		}
		switch {
		case n <= 6:
			return callsOf(tc("bash", fmt.Sprintf(`{"command":"printf '%%s' \"$BIG\" ; echo %d"}`, n)))
		}
		return nil
	}}
	t.Setenv("BIG", big)
	step := 0
	p.next = func(n int, req llm.Request) *llm.Response {
		if reviewing(req) {
			return approval()
		}
		if strings.HasPrefix(req.System, "You summarise") {
			summaryAsked = true
			return &llm.Response{Text: "Goal: fix. Decisions: none.", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}
		}
		step++
		switch {
		case step == 1:
			return callsOf(tc("goals", goalsJSON))
		case step <= 7:
			return callsOf(tc("bash", fmt.Sprintf(`{"command":"printf '%%s' \"$BIG\"; echo %d"}`, step)))
		case step == 8:
			return callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`), tc("phase", `{"to":"verifying"}`))
		}
		return callsOf(tc("verify", `{}`))
	}
	evs, sink := collect()
	o, dir := setup(t, p, stubVerifier{verify.StatusPass}, sink)
	o.ContextWindow = 20_000
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil || out.Status != StatusComplete {
		t.Fatalf("%+v %v", out, err)
	}
	var kinds []string
	for _, e := range *evs {
		if d, ok := e.Data.(event.CompactionData); ok {
			kinds = append(kinds, d.Kind)
			if d.After >= d.Before {
				t.Errorf("compaction did not shrink: %+v", d)
			}
		}
	}
	t.Logf("compactions %v", kinds)
	if len(kinds) == 0 || kinds[0] != "prune" {
		t.Fatalf("compactions %v", kinds)
	}
	if slices.Contains(kinds, "summary") != summaryAsked {
		t.Fatalf("summary events %v, asked %v", kinds, summaryAsked)
	}
	last := p.reqs[len(p.reqs)-1]
	if n := estimate(last); n > 20_000 {
		t.Fatalf("last request still %d tokens", n)
	}
}

func TestCompactionSummarisesWhenPruningIsNotEnough(t *testing.T) {
	talk := strings.Repeat("thinking out loud about the code. ", 600) // ~20 KB of answer text
	step := 0
	asked := 0
	p := &stubProvider{keep: true}
	p.next = func(n int, req llm.Request) *llm.Response {
		if reviewing(req) {
			return approval()
		}
		if strings.HasPrefix(req.System, "You summarise") {
			asked++
			return &llm.Response{Text: "Goal: t. Decisions: read a.txt.", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}
		}
		step++
		r := &llm.Response{Text: talk, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}
		switch {
		case step == 1:
			r.ToolCalls = []llm.ToolCall{tc("goals", goalsJSON)}
		case step <= 8:
			r.ToolCalls = []llm.ToolCall{tc("read", fmt.Sprintf(`{"file_path":"a.txt","offset":%d}`, step%2+1))}
		case step == 9:
			r.ToolCalls = []llm.ToolCall{tc("write", `{"file_path":"c.txt","content":"gamma\n"}`), tc("phase", `{"to":"verifying"}`)}
		default:
			r.ToolCalls = []llm.ToolCall{tc("verify", `{}`)}
		}
		return r
	}
	evs, sink := collect()
	o, dir := setup(t, p, stubVerifier{verify.StatusPass}, sink)
	o.ContextWindow = 20_000
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil || out.Status != StatusComplete {
		t.Fatalf("%+v %v", out, err)
	}
	summaries := 0
	for _, e := range *evs {
		if d, ok := e.Data.(event.CompactionData); ok && d.Kind == "summary" {
			summaries++
			if d.After >= d.Before {
				t.Errorf("summary did not shrink: %+v", d)
			}
		}
	}
	if summaries == 0 || asked != summaries {
		t.Fatalf("%d summaries, %d asked", summaries, asked)
	}
	last := p.reqs[len(p.reqs)-2] // the last of the run's own context, before the review
	if !strings.Contains(last.Messages[0].Content, "<ultra-summary>") || !strings.Contains(last.Messages[0].Content, "G001-do-it: do it") {
		t.Fatalf("first message %q", last.Messages[0].Content[:min(200, len(last.Messages[0].Content))])
	}
}

// Deep mode thinks; the model's thinking goes back with its answer.
func TestThinkingInDeepModeIsPassedBack(t *testing.T) {
	p := &stubProvider{keep: true, next: func(n int, _ llm.Request) *llm.Response {
		switch n {
		case 1:
			r := callsOf(tc("read", `{"file_path":"a.txt"}`))
			r.Thinking = []llm.Thinking{{Text: "look first", Signature: "sig1"}}
			return r
		case 2:
			return callsOf(tc("goals", goalsJSON))
		}
		return &llm.Response{Text: "idle"}
	}}
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle, o.ThinkingBudget = 1, 4000
	if _, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default}); err != nil {
		t.Fatal(err)
	}
	if p.reqs[0].ThinkingBudget != 4000 || p.reqs[2].ThinkingBudget != 0 {
		t.Fatalf("budgets: planning %d, building %d", p.reqs[0].ThinkingBudget, p.reqs[2].ThinkingBudget)
	}
	a := p.reqs[1].Messages[1]
	if a.Role != llm.RoleAssistant || len(a.Thinking) != 1 || a.Thinking[0].Signature != "sig1" {
		t.Fatalf("assistant message %+v", a)
	}
}

// A credential of ultra's that reaches a tool's output by whatever route
// is replaced before the model, the events or the store see it.
func TestCredentialsAreRedactedFromToolResults(t *testing.T) {
	t.Setenv("EXAMPLE_API_KEY", "env-secret-4711")
	script := []*llm.Response{
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("bash", `{"command":"echo env-secret-4711; echo header-secret-0815"}`)),
		{Text: "done"},
	}
	p := &stubProvider{keep: true, next: func(n int, _ llm.Request) *llm.Response {
		if n > len(script) {
			return &llm.Response{Text: "done"}
		}
		return script[n-1]
	}}
	evs, sink := collect()
	o, dir := setup(t, p, stubVerifier{verify.StatusPass}, sink)
	o.Secrets = []string{"header-secret-0815"}
	Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	seen := false
	// (The scripted model wrote the values into its own call: what it
	// must not receive is them in a result.)
	for _, req := range p.reqs {
		for _, m := range req.Messages {
			if m.Role != llm.RoleTool {
				continue
			}
			if strings.Contains(m.Content, "env-secret-4711") || strings.Contains(m.Content, "header-secret-0815") {
				t.Fatalf("a credential reached the model: %s", m.Content)
			}
			seen = seen || strings.Contains(m.Content, "[redacted")
		}
	}
	if !seen {
		t.Fatal("the bash call's output never reached the model")
	}
	for _, e := range *evs {
		if b, _ := json.Marshal(e); e.Type == event.ToolResult && strings.Contains(string(b), "secret-") {
			t.Fatalf("a credential reached the events: %s", b)
		}
	}
}

// A criterion whose channel's program is missing here could never pass:
// the proposal is refused with what to do.
func TestChannelMissingRefused(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if why := channelMissing(goal.ChannelTmux); !strings.Contains(why, "tmux is not installed") || !strings.Contains(why, "apt-get install tmux") {
		t.Fatalf("channelMissing(tmux) = %q", why)
	}
	if why := channelMissing(goal.ChannelDesktop); !strings.Contains(why, "apt-get install xvfb xdotool imagemagick tesseract-ocr") || !strings.Contains(why, "a desktop criterion could never pass") {
		t.Fatalf("channelMissing(desktop) = %q", why)
	}
	if why := channelMissing(goal.ChannelCommand); why != "" {
		t.Fatalf("channelMissing(command) = %q", why)
	}
}

// The default per-user state is hidden too when XDG_STATE_HOME points
// elsewhere (runs started without it keep their gate key there).
func TestHiddenPathsIncludeTheDefaultState(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory: ", err)
	}
	got := hiddenPaths("/r/.ultra/state")
	for _, want := range []string{"/r/.ultra/state", filepath.Join(os.Getenv("XDG_STATE_HOME"), "ultra"), filepath.Join(home, ".local", "state", "ultra")} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not hidden: %v", want, got)
		}
	}
	known := []string{"/o/.ultra/state", "/r/.ultra/state"}
	o := Options{StateRoot: "/r/.ultra/state", OtherStates: func() []string { return known }}
	if h := o.hidden(); !slices.Contains(h, "/o/.ultra/state") || len(h) != len(slices.Compact(slices.Sorted(slices.Values(h)))) {
		t.Errorf("other states: %v", h)
	}
	// A repository first used while the run goes on is hidden from the
	// next command.
	known = append(known, "/n/.ultra/state")
	if h := o.hidden(); !slices.Contains(h, "/n/.ultra/state") {
		t.Errorf("a repository registered later: %v", h)
	}
}

// A running command's output reaches the store's runtime row redacted,
// bounded, and never through the live stream (the command's output pump
// must not wait on a surface; line mode does not show it).
func TestCommandOutputKeptForAttachedSurfaces(t *testing.T) {
	var lives []event.Live
	c := &control{live: func(l event.Live) { lives = append(lives, l) },
		redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret-123", "[redacted]") }}
	c.begin("running `env`")
	lives = nil
	c.Write([]byte("KEY=sk-secret-123\n"))
	if _, _, partial, _ := c.runtime(); partial != "KEY=[redacted]\n" {
		t.Fatalf("partial %q", partial)
	}
	c.Write([]byte(strings.Repeat("x", 2*maxPartial)))
	c.Write([]byte("then sk-secret-123"))
	if len(lives) != 0 {
		t.Fatalf("output went to the live stream: %d fragments", len(lives))
	}
	_, _, partial, _ := c.runtime()
	if strings.Contains(partial, "sk-secret-123") || !strings.HasSuffix(partial, "then [redacted]") || len(partial) > maxPartial {
		t.Fatalf("partial of %d bytes, secret kept: %v", len(partial), strings.Contains(partial, "sk-secret"))
	}
	c2 := &control{redact: c.redact}
	c2.Write([]byte("token sk-secret-123 here"))
	if _, _, p, _ := c2.runtime(); p != "token [redacted] here" {
		t.Fatalf("partial %q", p)
	}
}

// Readable thinking streams apart from the answer: to this process's
// surfaces marked as thinking, to the store in its own field, redacted
// and bounded; a new answer starts both afresh.
func TestThinkingStreamsApart(t *testing.T) {
	var lives []event.Live
	c := &control{live: func(l event.Live) { lives = append(lives, l) },
		redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret-123", "[redacted]") }}
	c.begin("waiting for the model")
	lives = nil
	c.delta(llm.Delta{Kind: llm.DeltaThinking, Text: "the key is sk-secret-123; "})
	_, _, _, thinking := c.runtime()
	if thinking != "the key is [redacted]; " {
		t.Fatalf("thinking %q", thinking)
	}
	c.delta(llm.Delta{Kind: llm.DeltaThinking, Text: strings.Repeat("t", 2*maxPartial)})
	c.delta(llm.Delta{Kind: llm.DeltaThinking, Text: "the newest thought"})
	c.delta(llm.Delta{Kind: llm.DeltaText, Text: "The answer."})
	if len(lives) != 4 || !lives[0].Thinking || !lives[2].Thinking || lives[3].Thinking || lives[3].Text != "The answer." {
		t.Fatalf("live fragments: %+v", lives[0])
	}
	_, _, partial, thinking := c.runtime()
	// Long thinking keeps its newest part: what a surface shows moving.
	if partial != "The answer." || !strings.HasSuffix(thinking, "tttthe newest thought") || len(thinking) > maxPartial {
		t.Fatalf("partial %q, thinking of %d bytes: …%q", partial, len(thinking), thinking[max(0, len(thinking)-40):])
	}
	c.newAnswer()
	if _, _, p, th := c.runtime(); p != "" || th != "" {
		t.Fatalf("after a new answer: %q %q", p, th)
	}
}

func TestFailureWhy(t *testing.T) {
	// Messages as the gate keeps them: the runner's key line.
	for _, c := range []struct {
		f    gate.Failure
		want string
	}{
		{gate.Failure{Name: "T", File: "calc/calc_test.go", Line: 9, Message: "Mul(2, 3) = 5, want 6"}, "calc/calc_test.go:9: Mul(2, 3) = 5, want 6"},
		{gate.Failure{Name: "T", File: "tests/test_calc.py", Line: 7, Message: "AssertionError: -1 != 5"}, "tests/test_calc.py:7: AssertionError: -1 != 5"},
		{gate.Failure{Name: "T", File: "a.test.js"}, "a.test.js"},
		{gate.Failure{Name: "T", Message: "  expected 2\n  got 3"}, "expected 2 got 3"},
		{gate.Failure{Name: "T"}, ""},
		{gate.Failure{Name: "T", File: "test_calc.py", Line: 4, Message: "E       assert -1 == 5"}, "test_calc.py:4: assert -1 == 5"},
		{gate.Failure{Name: "ex/calc", File: "calc_test.go", Line: 6, Message: "./calc_test.go:6:5: undefined: Mul"}, "./calc_test.go:6:5: undefined: Mul"},
	} {
		if got := failureWhy(c.f); got != c.want {
			t.Errorf("failureWhy(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
}
