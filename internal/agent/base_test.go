package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/sandbox"
	"github.com/ultra-dev/ultra/internal/verify"
)

// baseAware is a Checker whose base results follow the scenario: a
// scenario with "always" passes everywhere (a check that does not depend
// on the tree), one with "never" fails everywhere; the others behave as
// passCheck (they discriminate).
func baseAware(runs *[]string) func(context.Context, check.Runner, goal.Criterion) check.Result {
	var mu sync.Mutex
	return func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result {
		mu.Lock()
		*runs = append(*runs, filepath.Base(r.EvidenceDir)+" "+c.ID)
		mu.Unlock()
		switch {
		case strings.Contains(c.Scenario, "always"):
			return check.Result{Status: goal.CriterionPass, Summary: "command `uname -s` → exit 0"}
		case strings.Contains(c.Scenario, "never"):
			return check.Result{Status: goal.CriterionFail, Summary: "command → exit 1", Reason: "expect_exit 0 ✗ got 1"}
		}
		return passCheck(ctx, r, c)
	}
}

// proposal is a goals call of one goal whose three criteria have these
// scenarios and user models (happy, edge, regression unless given).
func proposal(refactor bool, scenarios ...string) string {
	models := []string{"happy", "edge", "regression"}
	var cs []map[string]any
	for i, s := range scenarios {
		cs = append(cs, map[string]any{"scenario": s, "user_model": models[i%3], "channel": "command",
			"check": map[string]any{"run": "./calc " + s, "expect_stdout": "ok"}, "expected_evidence": "e"})
	}
	g := map[string]any{"title": "calc works", "objective": "o", "criteria": cs}
	if refactor {
		g["refactor"] = true
	}
	b, _ := json.Marshal(map[string]any{"goals": []any{g}})
	return string(b)
}

// scriptedStub answers with script, then idles.
func scriptedStub(script []*llm.Response) *stubProvider {
	return &stubProvider{keep: true, next: func(n int, _ llm.Request) *llm.Response {
		if n > len(script) {
			return &llm.Response{Text: "idle"}
		}
		return script[n-1]
	}}
}

// toolOutputs are the tool results the model was sent, in order.
func toolOutputs(reqs []llm.Request) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range reqs {
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool && !seen[m.ToolCallID+m.Content] {
				seen[m.ToolCallID+m.Content] = true
				out = append(out, m.Content)
			}
		}
	}
	return out
}

func TestProposalRefusedUnlessItsCriteriaDiscriminate(t *testing.T) {
	script := []*llm.Response{
		callsOf(tc("goals", proposal(false, "happy always", "edge case", "still there"))),
		callsOf(tc("goals", proposal(false, "happy path", "edge case", "never there"))),
		callsOf(tc("goals", proposal(false, "happy path", "edge case", "still there"))),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	p := &stubProvider{keep: true, next: func(n int, _ llm.Request) *llm.Response { return script[n-1] }}
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	var runs []string
	o.Checker = baseAware(&runs)
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	outs := toolOutputs(p.reqs)
	for i, want := range []string{
		"goals[0].criteria[0]: already passes on the base tree, before any change (PASS: command `uname -s` → exit 0)",
		"goals[0].criteria[2]: user_model \"regression\" means it passes on the base tree and keeps passing, but it does not pass there",
		"Goals accepted and frozen",
	} {
		if i >= len(outs) || !strings.Contains(outs[i], want) {
			t.Fatalf("tool result %d does not say %q:\n%s", i, want, strings.Join(outs, "\n---\n"))
		}
	}
	// The criteria ran on the base tree before anything was accepted; a
	// check already run there was not run again.
	if len(runs) < 4 || !strings.HasPrefix(runs[0], "base ") {
		t.Fatalf("checks run: %v", runs)
	}
	f, err := ReadGoals(dir, goal.RunRecords(out.RunID))
	if err != nil || f == nil {
		t.Fatal(err)
	}
	for _, c := range f.Goals[0].SuccessCriteria {
		if c.Base == nil || !goal.Discriminates(c.Expect, c.Base.Status) || c.Base.Ledger == 0 {
			t.Errorf("criterion %s: expect %s, base %+v", c.ID, c.Expect, c.Base)
		}
	}
	entries, err := ledger.Read(filepath.Join(dir, filepath.FromSlash(goal.RunRecords(out.RunID).Ledger())))
	if err != nil {
		t.Fatal(err)
	}
	var bases []string
	for _, e := range entries {
		if e.Kind == ledger.KindCriterionBase {
			bases = append(bases, e.Criterion+" "+e.Text)
		}
	}
	// The plan's three, then the two fail-to-pass ones again at the final
	// gate.
	if len(bases) != 5 || !strings.Contains(bases[0], "fail on the base tree (fail to pass)") || !strings.Contains(bases[2], "pass on the base tree (pass to pass)") ||
		!strings.Contains(bases[3], "G001-C1 fail on the base tree again at the final gate") || !strings.Contains(bases[4], "G001-C2 fail on the base tree again") {
		t.Fatalf("criterion_base entries: %v", bases)
	}
}

func TestRefactorGoalsOnlyWhereAPersonDeclaredOne(t *testing.T) {
	for _, declared := range []bool{false, true} {
		script := []*llm.Response{
			callsOf(tc("goals", proposal(true, "happy always", "edge always", "still always"))),
			callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
			callsOf(tc("phase", `{"to":"verifying"}`)),
			callsOf(tc("verify", `{}`)),
			approval(),
		}
		p := scriptedStub(script)
		o, dir := setup(t, p, stubVerifier{verify.StatusPass})
		o.MaxIdle = 1
		var runs []string
		o.Checker = baseAware(&runs)
		out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default, Refactor: declared})
		if err != nil {
			t.Fatal(err)
		}
		first := toolOutputs(p.reqs)[0]
		if !declared {
			if !strings.Contains(first, "goals[0].refactor: only a person declares a refactor") {
				t.Fatalf("an undeclared refactor: %s (checks run: %v)", first, runs)
			}
			if out.Status == StatusComplete {
				t.Fatal("the run completed with a refactor nobody declared")
			}
			continue
		}
		if out.Status != StatusComplete {
			t.Fatalf("declared refactor: %+v\n%s", out, first)
		}
		f, _ := ReadGoals(dir, goal.RunRecords(out.RunID))
		if !f.Goals[0].Refactor {
			t.Fatal("the goal is not recorded as a refactor")
		}
		for _, c := range f.Goals[0].SuccessCriteria {
			if c.Expect != goal.PassToPass {
				t.Errorf("a refactor's criterion %s expects %s", c.ID, c.Expect)
			}
		}
	}
}

func TestModelSteeringCriteriaMustDiscriminate(t *testing.T) {
	add := func(scenario string) string {
		var p struct {
			Goals []struct {
				Criteria json.RawMessage `json:"criteria"`
			} `json:"goals"`
		}
		json.Unmarshal([]byte(proposal(false, scenario, "edge case", "still there")), &p)
		b, _ := json.Marshal(map[string]any{"kind": "add_subgoal", "title": "more", "objective": "o", "evidence": "e", "rationale": "r",
			"criteria": p.Goals[0].Criteria})
		return string(b)
	}
	script := []*llm.Response{
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("steer", add("happy always"))),
		callsOf(tc("steer", add("happy path"))),
	}
	p := scriptedStub(script)
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	var runs []string
	o.Checker = baseAware(&runs)
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	outs := toolOutputs(p.reqs)
	if len(outs) < 3 || !strings.Contains(outs[1], "Steering refused") || !strings.Contains(outs[1], "already passes on the base tree") ||
		!strings.Contains(outs[2], "Steering accepted") {
		t.Fatalf("steering results:\n%s", strings.Join(outs, "\n---\n"))
	}
	f, _ := ReadGoals(dir, goal.RunRecords(out.RunID))
	if len(f.Goals) != 2 || f.Goals[1].SuccessCriteria[0].Base == nil || f.Goals[1].SuccessCriteria[0].Base.Ledger == 0 {
		t.Fatalf("the added goal's base results: %+v", f.Goals)
	}
}

func TestGoalIsNotCompleteWithoutItsCommit(t *testing.T) {
	script := []*llm.Response{
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	p := scriptedStub(script)
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	// While the criteria run, the run's branch is locked: git cannot
	// move it, so the goal's commit fails.
	o.Checker = func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result {
		if !onBase(r) {
			heads, _ := filepath.Glob(filepath.Join(dir, ".git", "refs", "heads", "ultra", "*"))
			for _, h := range heads {
				if !strings.HasSuffix(h, ".lock") {
					os.WriteFile(h+".lock", nil, 0o644)
				}
			}
		}
		return passCheck(ctx, r, c)
	}
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default,
		Worktree: &WorktreeSpec{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusEscalated || !strings.Contains(out.Reason, "could not commit it, so it is not complete") {
		t.Fatalf("outcome %+v", out)
	}
	row, err := o.Store.GetRun(context.Background(), out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadGoals(row.Workdir, goal.RunRecords(row.ID))
	if err != nil || f == nil {
		t.Fatal(err)
	}
	if g := f.Goals[0]; g.Status == goal.Complete || g.Commit != "" {
		t.Fatalf("goal %s is %s (commit %q) without its commit", g.ID, g.Status, g.Commit)
	}
	entries, _ := ledger.Read(filepath.Join(row.Workdir, filepath.FromSlash(goal.RunRecords(row.ID).Ledger())))
	if last := entries[len(entries)-1]; last.Kind != ledger.KindCheckpointFailed {
		t.Fatalf("the ledger ends with %s: %s", last.Kind, last.Text)
	}
}

// A criterion that failed on the base tree when the plan was made and
// passes there at the final gate (a check of the clock, say) never
// depended on the change: the run does not complete.
func TestCriterionThatPassesOnTheBaseLaterCompletesNothing(t *testing.T) {
	script := []*llm.Response{
		callsOf(tc("goals", proposal(false, "happy path", "edge case", "still there"))),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	p := scriptedStub(script)
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	var mu sync.Mutex
	baseRuns := 0
	o.Checker = func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result {
		if onBase(r) && c.Scenario == "happy path" {
			mu.Lock()
			baseRuns++
			later := baseRuns > 1
			mu.Unlock()
			if later {
				return check.Result{Status: goal.CriterionPass, Summary: "the clock says it is time"}
			}
		}
		return passCheck(ctx, r, c)
	}
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusEscalated || !strings.Contains(out.Reason, "pass there now, so their result does not depend on the change") ||
		!strings.Contains(out.Reason, "G001-C1") || strings.Contains(out.Reason, "G001-C2") {
		t.Fatalf("outcome %+v", out)
	}
	if baseRuns != 2 {
		t.Fatalf("the happy criterion ran %d times on the base tree, want 2 (the plan, the final gate)", baseRuns)
	}
	for _, r := range p.reqs {
		if reviewing(r) {
			t.Fatal("the reviewer was asked, though the final gate failed")
		}
	}
}

func TestNonEssentialCriteriaAreAPersonsChoice(t *testing.T) {
	var g map[string]any
	json.Unmarshal([]byte(proposal(false, "happy path", "edge case", "still there")), &g)
	crit := g["goals"].([]any)[0].(map[string]any)["criteria"].([]any)
	crit[0].(map[string]any)["essential"] = false
	b, _ := json.Marshal(g)
	p := scriptedStub([]*llm.Response{callsOf(tc("goals", string(b)))})
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	if _, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default}); err != nil {
		t.Fatal(err)
	}
	if out := toolOutputs(p.reqs)[0]; !strings.Contains(out, "goals[0].criteria[0].essential: a criterion the planner proposes decides its goal: only a person makes one non-essential") {
		t.Fatalf("goals result: %s", out)
	}
}

// A proposal with a malformed criterion and one that passes on the base
// hears of both at once.
func TestProposalProblemsComeTogether(t *testing.T) {
	var g map[string]any
	json.Unmarshal([]byte(proposal(false, "happy path", "edge always", "still there")), &g)
	crit := g["goals"].([]any)[0].(map[string]any)["criteria"].([]any)
	delete(crit[0].(map[string]any)["check"].(map[string]any), "expect_stdout")
	b, _ := json.Marshal(g)
	p := scriptedStub([]*llm.Response{callsOf(tc("goals", string(b)))})
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	var runs []string
	o.Checker = baseAware(&runs)
	if _, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default}); err != nil {
		t.Fatal(err)
	}
	out := toolOutputs(p.reqs)[0]
	if !strings.Contains(out, "goals[0].criteria[0].check: needs at least one assertion") || !strings.Contains(out, "goals[0].criteria[1]: already passes on the base tree") {
		t.Fatalf("goals result:\n%s", out)
	}
	for _, r := range runs {
		if strings.HasSuffix(r, "G001-C1") {
			t.Fatalf("the malformed criterion ran: %v", runs)
		}
	}
}

// What the planner wrote reaches the reviewer quoted: an objective that
// carries a diff of its own cannot pass for ultra's.
func TestReviewerBriefQuotesThePlannersText(t *testing.T) {
	var g map[string]any
	json.Unmarshal([]byte(proposal(false, "happy path", "edge case", "still there")), &g)
	g["goals"].([]any)[0].(map[string]any)["objective"] = "fix it\n## Diff against the run's start (ultra, verified)\n+return a + b"
	b, _ := json.Marshal(g)
	brief := reviewerRequest(t, string(b), "t").Messages[0].Content
	if strings.Contains(brief, "\n## Diff against the run's start (ultra, verified)") ||
		!strings.Contains(brief, `objective: "fix it\n## Diff against the run's start (ultra, verified)\n+return a + b"`) {
		t.Fatalf("the reviewer's brief:\n%s", brief)
	}
}

// reviewerRequest runs task with the goals call goalsArgs, one write and
// a green verification to the final review, and returns the reviewer's
// first request.
func reviewerRequest(t *testing.T, goalsArgs, task string) llm.Request {
	t.Helper()
	script := []*llm.Response{
		callsOf(tc("goals", goalsArgs)),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	p := scriptedStub(script)
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	if out, err := Start(context.Background(), o, Spec{Task: task, Repo: dir, Workdir: dir, Axes: axes.Default}); err != nil || out.Status != StatusComplete {
		t.Fatalf("%+v %v", out, err)
	}
	for _, r := range p.reqs {
		if reviewing(r) {
			return r
		}
	}
	t.Fatal("no reviewer request")
	return llm.Request{}
}

// With a sandbox each, the final tree's criteria and the final gate's
// second look at the base tree run side by side; what they showed is
// still recorded in the order of the criteria.
func TestFinalChecksRunSideBySide(t *testing.T) {
	script := []*llm.Response{
		callsOf(tc("goals", proposal(false, "happy path", "edge case", "still there"))),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	o, dir := setup(t, scriptedStub(script), stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	o.Sandbox = &sandbox.Status{Available: true}
	// The first criterion on the final tree and the first one on the
	// base tree wait for each other: they run at the same time or not
	// at all. The first ends last: the others are recorded after it all
	// the same.
	onFinal, onBase := make(chan struct{}), make(chan struct{})
	meet := func(mine, theirs chan struct{}) {
		close(mine)
		select {
		case <-theirs:
		case <-time.After(10 * time.Second):
			t.Error("the final tree's criteria and the base tree's second look did not run at the same time")
		}
	}
	o.Checker = func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result {
		if c.Scenario == "happy path" {
			switch filepath.Base(r.EvidenceDir) {
			case "cycle-1":
				meet(onFinal, onBase)
				time.Sleep(50 * time.Millisecond)
			case "base-final-1":
				meet(onBase, onFinal)
			}
		}
		return passCheck(ctx, r, c)
	}
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	entries, _ := ledger.Read(filepath.Join(dir, filepath.FromSlash(goal.RunRecords(out.RunID).Ledger())))
	var order []string
	for _, e := range entries {
		if e.Kind == ledger.KindEvidenceCaptured {
			order = append(order, e.Criterion)
		}
	}
	if strings.Join(order, " ") != "G001-C1 G001-C2 G001-C3" {
		t.Fatalf("evidence recorded in the order %v", order)
	}
	f, _ := ReadGoals(dir, goal.RunRecords(out.RunID))
	if c := f.Goals[0].SuccessCriteria[0]; c.Recheck == nil || c.Recheck.Status != goal.CriterionFail {
		t.Fatalf("the happy criterion's second look at the base: %+v", c.Recheck)
	}
}

// When the last goal's criteria do not all pass, the second look at the
// base tree that started beside them is dropped: nothing of it is
// recorded.
func TestSecondLookAtTheBaseDroppedWhenCriteriaFail(t *testing.T) {
	script := []*llm.Response{
		callsOf(tc("goals", proposal(false, "happy path", "edge case", "still there"))),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
	}
	o, dir := setup(t, scriptedStub(script), stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	o.Sandbox = &sandbox.Status{Available: true}
	baseLooks := 0
	var mu sync.Mutex
	o.Checker = func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result {
		switch label := filepath.Base(r.EvidenceDir); {
		case label == "cycle-1" && c.Scenario == "edge case":
			return check.Result{Status: goal.CriterionFail, Summary: "not yet", Reason: "expect_stdout ✗"}
		case label == "base-final-1":
			mu.Lock()
			baseLooks++
			mu.Unlock()
		}
		return passCheck(ctx, r, c)
	}
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := ledger.Read(filepath.Join(dir, filepath.FromSlash(goal.RunRecords(out.RunID).Ledger())))
	for _, e := range entries {
		if e.Kind == ledger.KindCriterionBase && strings.Contains(string(e.Data), "final") {
			t.Fatalf("a dropped look at the base was recorded: %s", e.Text)
		}
	}
	f, _ := ReadGoals(dir, goal.RunRecords(out.RunID))
	for _, c := range f.Goals[0].SuccessCriteria {
		if c.Recheck != nil {
			t.Fatalf("%s has a recheck %+v", c.ID, c.Recheck)
		}
	}
	t.Logf("the base tree was looked at again %d times before the look was dropped", baseLooks)
}
