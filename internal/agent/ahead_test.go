package agent

import (
	"context"
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

// waitingVerifier answers as stubVerifier, but a verification of the
// gate (not the baseline) first waits until started is closed: what must
// run beside the tests has begun.
type waitingVerifier struct {
	stubVerifier
	started chan struct{}
	t       *testing.T
}

func (v waitingVerifier) Verify(ctx context.Context, req verify.Request) (*verify.Result, error) {
	if filepath.Base(req.LogDir) != "baseline" {
		select {
		case <-v.started:
		case <-time.After(10 * time.Second):
			v.t.Error("the criteria and the second look at the base did not start beside the tests")
		}
	}
	return v.stubVerifier.Verify(ctx, req)
}

// aheadRun runs a one-goal run whose verification's tests end as status
// says (then: the model's answers after it), with a Checker that writes evidence and counts the checks run
// under each label; the gate's tests wait until the goal's criteria and
// the final gate's look at the base tree have started.
func aheadRun(t *testing.T, status verify.Status, then ...*llm.Response) (*Outcome, string, map[string]int) {
	script := append([]*llm.Response{
		callsOf(tc("goals", proposal(false, "happy path", "edge case", "still there"))),
		callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
	}, then...)
	o, dir := setup(t, scriptedStub(script), nil)
	o.MaxIdle = 1
	o.Sandbox = &sandbox.Status{Available: true}
	started := make(chan struct{})
	var mu sync.Mutex
	runs := map[string]int{}
	o.Verifier = waitingVerifier{stubVerifier{status}, started, t}
	o.Checker = func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result {
		label := filepath.Base(r.EvidenceDir)
		os.MkdirAll(r.EvidenceDir, 0o755)
		os.WriteFile(filepath.Join(r.EvidenceDir, "out.txt"), []byte(c.Scenario), 0o644)
		mu.Lock()
		runs[label]++
		if runs["cycle-1"] == 3 && runs["base-final-1"] >= 1 {
			select {
			case <-started:
			default:
				close(started)
			}
		}
		mu.Unlock()
		return passCheck(ctx, r, c)
	}
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	return out, dir, runs
}

// The criteria of a verification and the final gate's second look at
// the base tree run beside its tests, once: their results are recorded
// after the gate's verdict, in the order of the criteria.
func TestCriteriaRunBesideTheTests(t *testing.T) {
	out, dir, runs := aheadRun(t, verify.StatusPass, approval())
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if runs["cycle-1"] != 3 || runs["base-final-1"] != 2 {
		t.Fatalf("checks run %v: each criterion once on the final tree, each fail-to-pass one (two) once on the base again", runs)
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
	for _, c := range f.Goals[0].SuccessCriteria {
		if c.Expect == goal.FailToPass && (c.Recheck == nil || c.Recheck.Status != goal.CriterionFail) {
			t.Fatalf("%s: the second look at the base: %+v", c.ID, c.Recheck)
		}
		if c.Status != goal.CriterionPass || c.CapturedEvidence == nil {
			t.Fatalf("%s: %s, evidence %+v: no passing result recorded", c.ID, c.Status, c.CapturedEvidence)
		}
	}
}

// When the tests fail, the criteria started beside them count for
// nothing: none is recorded, and their evidence is removed.
func TestCriteriaBesideFailingTestsLeaveNothing(t *testing.T) {
	out, dir, runs := aheadRun(t, verify.StatusFail)
	if runs["cycle-1"] != 3 {
		t.Fatalf("checks run %v, want the criteria started beside the tests", runs)
	}
	entries, _ := ledger.Read(filepath.Join(dir, filepath.FromSlash(goal.RunRecords(out.RunID).Ledger())))
	for _, e := range entries {
		if e.Kind == ledger.KindEvidenceCaptured || e.Kind == ledger.KindCriterionBase && strings.Contains(string(e.Data), "final") {
			t.Fatalf("recorded after failing tests: %s %s %s", e.Kind, e.Criterion, e.Text)
		}
	}
	f, _ := ReadGoals(dir, goal.RunRecords(out.RunID))
	for _, c := range f.Goals[0].SuccessCriteria {
		if c.Recheck != nil || c.CapturedEvidence != nil {
			t.Fatalf("%s: recheck %+v, evidence %+v", c.ID, c.Recheck, c.CapturedEvidence)
		}
	}
	for _, label := range []string{"cycle-1", "base-final-1"} {
		m, _ := filepath.Glob(filepath.Join(dir, ".ultra", "state", "evidence", out.RunID, "*", "*", label))
		if len(m) > 0 {
			t.Fatalf("evidence of checks that count for nothing is left: %v", m)
		}
	}
}
