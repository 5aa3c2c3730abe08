package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/sandbox"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/verify/report"
)

// depVerifier passes the tests of a checkout only when the dependency
// file node_modules/dep/lib/impl.js (live: the dependency directory is
// the worktree's) says "patched"; when it sees that, it leaves mark.
type depVerifier struct {
	mark string
	mu   sync.Mutex
	runs []string
}

func (v *depVerifier) Verify(_ context.Context, req verify.Request) (*verify.Result, error) {
	body, _ := os.ReadFile(filepath.Join(req.Dir, "node_modules", "dep", "lib", "impl.js"))
	text := strings.TrimSpace(string(body))
	v.mu.Lock()
	v.runs = append(v.runs, filepath.Base(req.LogDir)+":"+text)
	v.mu.Unlock()
	c := verify.CommandResult{Command: "stub test", Source: "stub", Passed: 1, ReportOK: true,
		Tests: []report.Case{{Name: "TestStub", Status: report.Passed}}}
	st := verify.StatusPass
	if text != "patched" {
		st, c.ExitCode, c.Passed, c.Failed = verify.StatusFail, 1, 0, 1
		c.Tests[0].Status = report.Failed
	} else {
		_ = os.WriteFile(v.mark, nil, 0o644)
	}
	return &verify.Result{Status: st, Reason: "stub", Passed: c.Passed, Failed: c.Failed, Commands: []verify.CommandResult{c}}, nil
}

func (v *depVerifier) log() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.runs...)
}

// A call of the model's that starts right after the call that asked for
// the tests ahead, before they took the gate's checkout (the tree was
// still being hashed), runs beside them as much as a call that starts
// while they run: in a run with a live dependency directory it can
// change what the tests load and put it back before verify. The tests
// ahead must not count then; the verification judges the dependencies
// as they are.
func TestTestsAheadRequestedBeforeACallCountForNothing(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "seen")
	impl := "node_modules/dep/lib/impl.js"
	// Patch the dependency, wait until the tests saw it, put it back
	// (in place: the size and times the gate cache's key reads of the
	// directory do not change).
	cmd := `printf 'patched\n' > ` + impl + `; i=0; while [ ! -f ` + mark + ` ] && [ $i -lt 60 ]; do sleep 0.05; i=$((i+1)); done; printf 'orig\n' > ` + impl
	script := []*llm.Response{
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("write", `{"file_path":"c.txt","content":"good\n"}`)),
		callsOf(tc("bash", `{"command":"`+cmd+`"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	v := &depVerifier{mark: mark}
	out, o, dir := uncontainedDepRun(t, script, v, impl, nil, nil)
	ds, _ := gatefile.Read(RunDir(o.StateRoot, out.RunID))
	if b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(impl))); strings.TrimSpace(string(b)) != "orig" {
		t.Fatalf("the dependency was not put back (%q): this test shows nothing", b)
	}
	for _, d := range ds {
		if d.Status == gate.Pass {
			t.Fatalf("a decision passed the tree on tests that saw the patched dependency, which is back as it was: %v; verifications %v; outcome %+v", d.Reasons, v.log(), out)
		}
	}
}

// The criteria started beside the tests ahead ran with the inputs the
// tests had then: when those changed before verify (here the dependency
// directory, changed back by a call after they ended), the verification
// runs the criteria again as it runs the tests, and does not record what
// they showed with the old dependencies.
func TestCriteriaAheadWithOtherInputsRunAgain(t *testing.T) {
	checks := checksBesideChangedDeps(t)
	again := false
	for _, c := range checks {
		if strings.HasPrefix(c, "cycle-1:s1:orig") {
			again = true
		}
	}
	if !again {
		t.Fatalf("checks %v: the verification recorded the criteria run ahead with the old dependency, which changed since", checks)
	}
}

// The final gate's look at the base tree, started ahead of the last
// goal's verification, ran with the inputs of then: when they changed
// before the final gate, it looks again, and does not record what the
// criteria showed on the base with the old dependencies.
func TestDriftAheadWithOtherInputsRunsAgain(t *testing.T) {
	checks := checksBesideChangedDeps(t)
	if !slices.Contains(checks, "base-final-1:s1:orig") {
		t.Fatalf("checks %v: the final gate recorded the look at the base tree run ahead with the old dependency, which changed since", checks)
	}
}

// checksBesideChangedDeps runs a run whose model changes a dependency
// and the code, waits until the tests and the criteria ahead of verify
// ended, puts the dependency back, then verifies; it returns every check
// as label:scenario:the dependency it saw.
func checksBesideChangedDeps(t *testing.T) []string {
	t.Helper()
	dep := "node_modules/dep/index.js"
	var mu sync.Mutex
	var checks []string
	cycleDone := make(chan struct{}, 16)
	script := []*llm.Response{
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("bash", `{"command":"printf 'patched\\n' > `+dep+`; printf 'good\\n' > c.txt"}`)),
		callsOf(tc("bash", `{"command":"printf 'orig\\n' > `+dep+`"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	v := &treeVerifier{seen: make(chan string, 16)}
	// The fail-to-pass criteria pass only with the patched dependency.
	checker := func(ctx context.Context, r check.Runner, c goal.Criterion) check.Result {
		b, _ := os.ReadFile(filepath.Join(r.Dir, filepath.FromSlash(dep)))
		label := filepath.Base(r.EvidenceDir)
		mu.Lock()
		checks = append(checks, label+":"+c.Scenario+":"+strings.TrimSpace(string(b)))
		mu.Unlock()
		if label == "cycle-1" {
			defer func() { cycleDone <- struct{}{} }()
		}
		if c.Expect != goal.PassToPass && strings.TrimSpace(string(b)) != "patched" {
			return check.Result{Status: goal.CriterionFail, Summary: "stub: unpatched"}
		}
		return check.Result{Status: goal.CriterionPass, Summary: "stub: " + c.Scenario}
	}
	uncontainedDepRun(t, script, v, dep, func(n int) {
		if n == 3 { // the tests and the criteria ahead have ended
			waitFor(t, v, "good")
			for range 3 {
				<-cycleDone
			}
			// and returned their results (a call beside them would
			// make them count for nothing)
			time.Sleep(500 * time.Millisecond)
		}
	}, func(o *Options) { o.Checker = checker })
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(checks)
}

// uncontainedDepRun runs a build run with goals in a repository with a
// dependency directory holding dep (withDep: "orig"), uncontained (a
// profile that allows it), so that the model's bash can write the
// dependency directory as the tests and checks read it. before, when
// set, runs before the model's answer n (1-based) is given.
func uncontainedDepRun(t *testing.T, script []*llm.Response, v verify.Verifier, dep string, before func(n int), edit func(o *Options)) (*Outcome, Options, string) {
	t.Helper()
	p := &stubProvider{next: func(n int, _ llm.Request) *llm.Response {
		if before != nil {
			before(n)
		}
		if n > len(script) {
			return &llm.Response{Text: "idle"}
		}
		return script[n-1]
	}}
	o, dir := setup(t, p, v)
	o.MaxIdle = 1
	o.Sandbox = &sandbox.Status{Problem: "no bubblewrap"}
	if edit != nil {
		edit(&o)
	}
	withDep(t, dir, dep, "orig\n")
	ax := axes.Default
	ax.Permission = "trusted"
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: ax})
	if err != nil {
		t.Fatal(err)
	}
	return out, o, dir
}

// logVerifier is a treeVerifier whose test command leaves its log in
// the verification's log directory.
type logVerifier struct{ *treeVerifier }

func (v logVerifier) Verify(ctx context.Context, req verify.Request) (*verify.Result, error) {
	res, err := v.treeVerifier.Verify(ctx, req)
	if err == nil && req.LogDir != "" {
		p := filepath.Join(req.LogDir, "stub.log")
		if os.MkdirAll(req.LogDir, 0o755) == nil && os.WriteFile(p, []byte("ok\n"), 0o644) == nil {
			res.Commands[0].LogPath = p
		}
	}
	return res, err
}

// Tests ahead of a tree the model changed again are kept in the gate
// cache; when the model comes back to that tree, the verification judges
// the cached run, so the log it names is still there.
func TestTestsAheadInTheGateCacheKeepTheirLogs(t *testing.T) {
	good, broken := make(chan struct{}), make(chan struct{})
	out, v, ds := earlyRun(t, []string{"good", "broken", "good"}, func(n int) {
		switch n {
		case 3: // the answer that breaks the tree: after "good" passed
			<-good
		case 4: // the answer that mends it: after "broken" failed
			<-broken
		}
	}, func(o *Options) {
		tv := o.Verifier.(*treeVerifier)
		o.Verifier = logVerifier{tv}
		go func() { waitFor(t, tv, "good"); close(good); waitFor(t, tv, "broken"); close(broken) }()
	})
	if len(ds) == 0 || ds[0].Reused == "" {
		t.Fatalf("decisions %+v; verifications %v; outcome %+v: want the good tree judged from the gate cache", ds, v.log(), out)
	}
	for _, d := range ds {
		for _, c := range d.Commands {
			if _, err := os.Stat(c.LogPath); c.LogPath == "" || err != nil {
				t.Errorf("decision %d names the log %q of %s: %v", d.N, c.LogPath, d.Reused, err)
			}
		}
	}
}
