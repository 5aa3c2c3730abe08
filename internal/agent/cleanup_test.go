package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/verify/report"
)

// contentVerifier fails the tests while file holds bad.
type contentVerifier struct{ file, bad string }

func (v contentVerifier) Verify(ctx context.Context, req verify.Request) (*verify.Result, error) {
	b, _ := os.ReadFile(filepath.Join(req.Dir, v.file))
	if strings.Contains(string(b), v.bad) {
		return stubVerifier{verify.StatusFail}.Verify(ctx, req)
	}
	return stubVerifier{verify.StatusPass}.Verify(ctx, req)
}

// cleanupRun runs script on a run with its own worktree and branch; it
// returns the outcome, the run's row and the provider.
func cleanupRun(t *testing.T, script []*llm.Response, v verify.Verifier, tune func(*Options)) (*Outcome, *store.Run, *stubProvider, []event.Event) {
	t.Helper()
	p := scriptedStub(script)
	evs, sink := collect()
	o, dir := setup(t, p, v, sink)
	o.MaxIdle = 1
	if tune != nil {
		tune(&o)
	}
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default,
		Worktree: &WorktreeSpec{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	row, err := o.Store.GetRun(context.Background(), out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return out, row, p, *evs
}

// buildThenClean is a run's work up to its cleanup pass: the goal, a
// c.txt with a debugging line left in it, the verification.
func buildThenClean(more ...*llm.Response) []*llm.Response {
	return append([]*llm.Response{
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\nDEBUG x=1\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
	}, more...)
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func ledgerKinds(t *testing.T, row *store.Run) ([]string, []ledger.Entry) {
	t.Helper()
	entries, err := ledger.Read(filepath.Join(row.Workdir, filepath.FromSlash(goal.RunRecords(row.ID).Ledger())))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range entries {
		kinds = append(kinds, e.Kind)
	}
	return kinds, entries
}

func cleanupResults(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		if d, ok := e.Data.(event.CleanupData); ok {
			out = append(out, d.Result)
		}
	}
	return out
}

// The final gate passes into the cleanup pass, which offers read, glob,
// grep, edit and phase; a cleanup the gate passes again is committed on
// its own, after the goal's commit, and the review sees it.
func TestCleanupKeptIsCommittedOnItsOwn(t *testing.T) {
	out, row, p, evs := cleanupRun(t, buildThenClean(
		callsOf(tc("read", `{"file_path":"c.txt"}`)),
		callsOf(tc("edit", `{"file_path":"c.txt","old_string":"DEBUG x=1\n","new_string":""}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		approval(),
	), stubVerifier{verify.StatusPass}, nil)
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	cleaning := 0
	for _, req := range p.reqs {
		if strings.Contains(lastUser(req), "phase: cleaning") {
			cleaning++
			if got := toolNames(req.Tools); !slices.Equal(got, []string{"read", "glob", "grep", "edit", "phase"}) {
				t.Errorf("cleaning offered %v", got)
			}
		}
	}
	if cleaning != 3 {
		t.Errorf("%d requests in cleaning, want 3", cleaning)
	}
	rc := p.reqs[len(p.reqs)-1].Messages[0].Content
	if !reviewing(p.reqs[len(p.reqs)-1]) || !strings.Contains(rc, "+gamma\n") || strings.Contains(rc, "+DEBUG") {
		t.Error("the reviewer did not see the cleaned diff")
	}
	if !strings.Contains(rc, "## The cleanup pass (committed") || !strings.Contains(rc, "-DEBUG x=1") {
		t.Errorf("the reviewer did not see the cleanup's own diff:\n%s", rc)
	}
	if b, _ := os.ReadFile(filepath.Join(row.Workdir, "c.txt")); string(b) != "gamma\n" {
		t.Errorf("c.txt is %q", b)
	}
	br := row.Workspace.Branch
	log := gitOut(t, row.Workdir, "log", "--format=%s%n%b%x00", row.Workspace.StartCommit+".."+br)
	commits := strings.Split(strings.TrimSuffix(strings.TrimSpace(log), "\x00"), "\x00")
	var cleanup, goalC int = -1, -1
	for i, c := range commits {
		if strings.Contains(c, "Ultra-Final: cleanup") {
			cleanup = i
		}
		if strings.Contains(c, "Ultra-Goal: G001") {
			goalC = i
		}
	}
	if cleanup < 0 || goalC < 0 || cleanup > goalC {
		t.Fatalf("want the cleanup's commit after the goal's:\n%s", log)
	}
	if got := gitOut(t, row.Workdir, "show", br+"~"+string(rune('0'+cleanup))+":c.txt"); got != "gamma\n" {
		t.Errorf("the cleanup's commit holds c.txt %q", got)
	}
	if got := gitOut(t, row.Workdir, "show", br+"~"+string(rune('0'+goalC))+":c.txt"); got != "gamma\nDEBUG x=1\n" {
		t.Errorf("the goal's commit holds c.txt %q", got)
	}
	kinds, _ := ledgerKinds(t, row)
	if !slices.Contains(kinds, ledger.KindCleanupStarted) || !slices.Contains(kinds, ledger.KindCleanupCommitted) || slices.Contains(kinds, ledger.KindCleanupReverted) {
		t.Errorf("ledger kinds %v", kinds)
	}
	if got := cleanupResults(evs); !slices.Equal(got, []string{"started", "committed"}) {
		t.Errorf("cleanup events %v", got)
	}
}

// A cleanup that breaks a test is reverted: the worktree and the branch
// hold the final tree as it was, the ledger says what failed, and the run
// goes on to its review and completes.
func TestCleanupThatBreaksATestIsReverted(t *testing.T) {
	out, row, p, evs := cleanupRun(t, buildThenClean(
		callsOf(tc("read", `{"file_path":"c.txt"}`)),
		callsOf(tc("edit", `{"file_path":"c.txt","old_string":"gamma","new_string":"BROKEN"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		approval(),
	), contentVerifier{file: "c.txt", bad: "BROKEN"}, nil)
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if b, _ := os.ReadFile(filepath.Join(row.Workdir, "c.txt")); string(b) != "gamma\nDEBUG x=1\n" {
		t.Errorf("c.txt on disk is %q, want the final tree's", b)
	}
	br := row.Workspace.Branch
	if got := gitOut(t, row.Workdir, "show", br+":c.txt"); got != "gamma\nDEBUG x=1\n" {
		t.Errorf("the branch's tip holds c.txt %q", got)
	}
	if log := gitOut(t, row.Workdir, "log", "--format=%B", br); strings.Contains(log, "Ultra-Final: cleanup") {
		t.Errorf("a reverted cleanup was committed:\n%s", log)
	}
	kinds, entries := ledgerKinds(t, row)
	if !slices.Contains(kinds, ledger.KindCleanupReverted) || slices.Contains(kinds, ledger.KindCleanupCommitted) {
		t.Fatalf("ledger kinds %v", kinds)
	}
	for _, e := range entries {
		if e.Kind == ledger.KindCleanupReverted && !strings.Contains(e.Text, "broke the tests") {
			t.Errorf("the revert does not say what failed: %s", e.Text)
		}
	}
	if got := cleanupResults(evs); !slices.Equal(got, []string{"started", "reverted"}) {
		t.Errorf("cleanup events %v", got)
	}
	if rv := p.reqs[len(p.reqs)-1]; !reviewing(rv) || strings.Contains(rv.Messages[0].Content, "BROKEN") {
		t.Error("the reviewer did not review the tree before the cleanup")
	}
	if !slices.Contains(kinds, ledger.KindReviewVerdict) {
		t.Error("no review")
	}
}

// A cleanup that breaks a criterion is reverted the same way.
func TestCleanupThatBreaksACriterionIsReverted(t *testing.T) {
	out, row, _, _ := cleanupRun(t, buildThenClean(
		callsOf(tc("read", `{"file_path":"c.txt"}`)),
		callsOf(tc("edit", `{"file_path":"c.txt","old_string":"DEBUG x=1\n","new_string":""}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		approval(),
	), stubVerifier{verify.StatusPass}, func(o *Options) {
		o.Checker = func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result {
			if strings.HasPrefix(filepath.Base(r.EvidenceDir), "cleanup") && c.Scenario == "s2" {
				return check.Result{Status: goal.CriterionFail, Summary: "s2 broke", Reason: "s2 broke"}
			}
			return passCheck(ctx, r, c)
		}
	})
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if b, _ := os.ReadFile(filepath.Join(row.Workdir, "c.txt")); string(b) != "gamma\nDEBUG x=1\n" {
		t.Errorf("c.txt on disk is %q, want the final tree's", b)
	}
	_, entries := ledgerKinds(t, row)
	found := false
	for _, e := range entries {
		if e.Kind == ledger.KindCleanupReverted {
			found = strings.Contains(e.Text, "broke a criterion")
		}
	}
	if !found {
		t.Error("the ledger does not record the revert with the criterion")
	}
}

// The cleanup pass edits only the files the run changed: an edit of
// another file, of one through a link the run added, or of ultra's
// records, is refused and leaves the file as it was; a write or a
// command is not offered and refused too.
func TestCleanupEditsOnlyChangedFiles(t *testing.T) {
	out, row, p, _ := cleanupRun(t, []*llm.Response{
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`), tc("bash", `{"command":"ln -s a.txt l.txt"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		callsOf(tc("read", `{"file_path":"a.txt"}`), tc("read", `{"file_path":"l.txt"}`)),
		callsOf(tc("edit", `{"file_path":"a.txt","old_string":"alpha","new_string":"ALPHA"}`),
			tc("edit", `{"path":"./a.txt","old_string":"alpha","new_string":"ALPHA"}`),
			tc("edit", `{"file_path":"l.txt","old_string":"alpha","new_string":"ALPHA"}`),
			tc("write", `{"file_path":"a.txt","content":"ALPHA\n"}`),
			tc("bash", `{"command":"echo ALPHA > a.txt"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		approval(),
	}, stubVerifier{verify.StatusPass}, nil)
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if b, _ := os.ReadFile(filepath.Join(row.Workdir, "a.txt")); string(b) != "alpha\n" {
		t.Errorf("a.txt is %q: a refused edit changed it", b)
	}
	outs := toolOutputs(p.reqs)
	refused := 0
	for _, o := range outs {
		if strings.Contains(o, "Refused [") {
			refused++
		}
	}
	if refused != 5 {
		t.Errorf("%d refusals, want 5:\n%s", refused, strings.Join(outs, "\n---\n"))
	}
	if !slices.ContainsFunc(outs, func(s string) bool { return strings.Contains(s, "Refused ["+LayerCleanup+"]") }) {
		t.Error("no refusal of the cleanup's layer")
	}
	kinds, _ := ledgerKinds(t, row)
	if !slices.Contains(kinds, ledger.KindCleanupUnchanged) {
		t.Errorf("ledger kinds %v", kinds)
	}
}

// A cleanup pass that changed nothing runs nothing again: the review of
// the final tree follows at once.
func TestCleanupUnchangedRunsNothing(t *testing.T) {
	out, row, p, evs := cleanupRun(t, buildThenClean(
		callsOf(tc("phase", `{"to":"verifying"}`)),
		approval(),
	), stubVerifier{verify.StatusPass}, nil)
	if out.Status != StatusComplete || p.n != 6 {
		t.Fatalf("outcome %+v after %d requests", out, p.n)
	}
	verifies, criteria := 0, 0
	for _, e := range evs {
		switch d := e.Data.(type) {
		case event.VerifyResultData:
			verifies++
		case event.CriterionData:
			if d.Base == "" {
				criteria++
			}
		}
	}
	if verifies != 1 || criteria != 3 {
		t.Errorf("%d verifications and %d criteria ran, want the final gate's alone (1, 3)", verifies, criteria)
	}
	if got := cleanupResults(evs); !slices.Equal(got, []string{"started", "unchanged"}) {
		t.Errorf("cleanup events %v", got)
	}
	if log := gitOut(t, row.Workdir, "log", "--format=%B", row.Workspace.Branch); strings.Contains(log, "Ultra-Final: cleanup") {
		t.Error("an empty cleanup was committed")
	}
}

// goals.cleanup = false: the final gate goes straight to the review.
func TestCleanupOff(t *testing.T) {
	out, _, p, evs := cleanupRun(t, buildThenClean(approval()), stubVerifier{verify.StatusPass}, func(o *Options) { o.NoCleanup = true })
	if out.Status != StatusComplete || p.n != 5 {
		t.Fatalf("outcome %+v after %d requests", out, p.n)
	}
	for _, e := range evs {
		if d, ok := e.Data.(event.PhaseChangedData); ok && d.To == string(phase.Cleaning) {
			t.Error("the run went to cleaning")
		}
	}
}

// The pass is bounded: when its turns are used, ultra ends it.
func TestCleanupTurnLimit(t *testing.T) {
	var script []*llm.Response
	for range phase.CleanupTurns {
		script = append(script, callsOf(tc("read", `{"file_path":"c.txt"}`)))
	}
	out, _, p, _ := cleanupRun(t, buildThenClean(append(script, approval())...), stubVerifier{verify.StatusPass}, nil)
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if n := len(p.reqs); n != 4+phase.CleanupTurns+1 || !reviewing(p.reqs[n-1]) || reviewing(p.reqs[n-2]) {
		t.Fatalf("%d requests; want the review right after %d turns of cleanup", n, phase.CleanupTurns)
	}
}

// lastUser is the text of a request's last user message (the reminder).
func lastUser(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

func TestLostTests(t *testing.T) {
	d := func(passed, skipped int) gate.Decision {
		return gate.Decision{Counts: gate.Counts{Passed: passed, Skipped: skipped, Executed: passed}}
	}
	const pass, skip = report.Passed, report.Skipped
	res := func(cases ...any) *verify.Result {
		r := &verify.Result{}
		for i := 0; i < len(cases); i += 2 {
			r.Tests = append(r.Tests, report.Case{Name: cases[i].(string), Status: cases[i+1].(report.Status)})
		}
		return r
	}
	before := res("TestA", pass, "TestB", pass, "TestC", skip)
	for _, c := range []struct {
		name          string
		passed        []string
		before, after gate.Decision
		res           *verify.Result
		want          string
	}{
		{"same", passedTests(before), d(2, 1), d(2, 1), before, ""},
		{"more", passedTests(before), d(2, 1), d(3, 1), res("TestA", pass, "TestB", pass, "TestC", pass), ""},
		{"missing", passedTests(before), d(2, 1), d(2, 1), res("TestA", pass, "TestC", skip, "TestD", pass),
			"tests that passed at the final gate do not run on the cleaned tree: 1 missing (TestB)"},
		{"skipped", passedTests(before), d(2, 1), d(1, 2), res("TestA", skip, "TestB", pass, "TestC", skip),
			"tests that passed at the final gate do not run on the cleaned tree: 1 skipped (TestA)"},
		{"counts: fewer ran", nil, d(4, 0), d(3, 0), nil, "fewer tests ran on the cleaned tree (3, against 4 before it)"},
		{"counts: fewer passed", nil, d(4, 0), gate.Decision{Counts: gate.Counts{Passed: 3, Failed: 1, Executed: 4}}, nil, "fewer tests passed on the cleaned tree (3, against 4 before it)"},
		{"counts: more skipped", nil, d(4, 0), d(4, 1), res(), "more tests were skipped on the cleaned tree (1, against 0 before it)"},
		{"counts: same", nil, d(4, 0), d(4, 0), nil, ""},
	} {
		if got := lostTests(&cleanupState{Passed: c.passed, Decision: c.before}, c.after, c.res); got != c.want {
			t.Errorf("%s: lostTests = %q, want %q", c.name, got, c.want)
		}
	}
}
