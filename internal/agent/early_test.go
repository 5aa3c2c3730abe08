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
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/verify/report"
)

// treeVerifier fails the tests of a checkout whose c.txt says "broken"
// and records every verification: the name of its log directory
// ("baseline", "ahead-N", or the decision's number), the c.txt it saw
// and GOFLAGS then.
type treeVerifier struct {
	mu   sync.Mutex
	runs []string
	seen chan string // each verification's c.txt, when it ends
}

func (v *treeVerifier) Verify(_ context.Context, req verify.Request) (*verify.Result, error) {
	body, _ := os.ReadFile(filepath.Join(req.Dir, "c.txt"))
	text := strings.TrimSpace(string(body))
	v.mu.Lock()
	v.runs = append(v.runs, filepath.Base(req.LogDir)+":"+text+":"+os.Getenv("GOFLAGS"))
	v.mu.Unlock()
	c := verify.CommandResult{Command: "stub test", Source: "stub", Passed: 1, ReportOK: true,
		Tests: []report.Case{{Name: "TestStub", Status: report.Passed}}}
	st := verify.StatusPass
	if text == "broken" {
		st, c.ExitCode, c.Passed, c.Failed = verify.StatusFail, 1, 0, 1
		c.Tests[0].Status = report.Failed
	}
	defer func() {
		select {
		case v.seen <- text:
		default:
		}
	}()
	return &verify.Result{Status: st, Reason: "stub", Passed: c.Passed, Failed: c.Failed, Commands: []verify.CommandResult{c}}, nil
}

func (v *treeVerifier) log() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.runs...)
}

// earlyRun runs a build run with goals whose model writes c.txt once per
// entry of writes, then verifies. before, when set, runs before the
// model's answer n (1-based) is given.
func earlyRun(t *testing.T, writes []string, before func(n int), edit func(o *Options)) (*Outcome, *treeVerifier, []gate.Decision) {
	t.Helper()
	script := []*llm.Response{callsOf(tc("goals", goalsJSON))}
	for _, w := range writes {
		script = append(script, callsOf(tc("write", `{"file_path":"c.txt","content":"`+w+`\n"}`)))
	}
	script = append(script, callsOf(tc("phase", `{"to":"verifying"}`)), callsOf(tc("verify", `{}`)), approval())
	v := &treeVerifier{seen: make(chan string, 16)}
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
	if edit != nil {
		edit(&o)
	}
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := gatefile.Read(RunDir(o.StateRoot, out.RunID))
	if err != nil {
		t.Fatal(err)
	}
	return out, v, ds
}

// waitFor waits until the verifier has ended a verification of a c.txt
// that says want.
func waitFor(t *testing.T, v *treeVerifier, want string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case got := <-v.seen:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("no verification of c.txt %q ended; verifications: %v", want, v.log())
		}
	}
}

// The tests start when the model's write leaves the tree changed; the
// verification of that same tree judges their results and does not run
// them again.
func TestTestsAheadServeTheVerification(t *testing.T) {
	ready := make(chan struct{})
	out, v, ds := earlyRun(t, []string{"good"}, func(n int) {
		if n == 3 { // the model thinks until the tests ahead ended
			<-ready
		}
	}, func(o *Options) {
		tv := o.Verifier.(*treeVerifier)
		go func() { waitFor(t, tv, "good"); close(ready) }()
	})
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v; verifications %v", out, v.log())
	}
	var ahead, decision int
	for _, r := range v.log() {
		name, _, _ := strings.Cut(r, ":")
		switch {
		case strings.HasPrefix(name, "ahead-"):
			ahead++
		case name != "baseline":
			decision++
		}
	}
	if ahead != 1 || decision != 0 {
		t.Fatalf("verifications %v: want the tests once, ahead of verify, and not again", v.log())
	}
	if len(ds) != 1 || ds[0].Status != gate.Pass || !strings.Contains(strings.Join(ds[0].Reasons, "; "), "ahead of verify") {
		t.Fatalf("decisions %+v", ds)
	}
}

// Tests ahead of a tree the model changed again count for nothing, even
// when they passed and ended before the change: the verification judges
// the tree as it is when the model calls verify.
func TestTestsAheadOfAnOlderTreeDoNotCount(t *testing.T) {
	ready := make(chan struct{})
	out, v, ds := earlyRun(t, []string{"good", "broken"}, func(n int) {
		if n == 3 { // the answer that breaks the tree: after "good" passed
			<-ready
		}
	}, func(o *Options) {
		tv := o.Verifier.(*treeVerifier)
		go func() { waitFor(t, tv, "good"); close(ready) }()
	})
	if out.Status == StatusComplete {
		t.Fatalf("the run completed on a broken tree: %+v", out)
	}
	if len(ds) == 0 || ds[len(ds)-1].Status != gate.Fail {
		t.Fatalf("decisions %+v: want the broken tree failed", ds)
	}
	passed := false
	for _, r := range v.log() {
		if strings.HasPrefix(r, "ahead-") && strings.Contains(r, ":good:") {
			passed = true
		}
	}
	if !passed {
		t.Fatalf("verifications %v: the good tree was not tested ahead, so this test shows nothing", v.log())
	}
}

// An input of the tests that changed after they ran ahead (here the
// environment the go command reads) makes them run again: the decision
// is not judged from the run with the old inputs.
func TestTestsAheadWithOtherInputsRunAgain(t *testing.T) {
	t.Setenv("GOFLAGS", "")
	ready := make(chan struct{})
	out, v, _ := earlyRun(t, []string{"good"}, func(n int) {
		switch n {
		case 3: // the phase call: the tests ahead have ended
			<-ready
		case 4: // the verify call
			os.Setenv("GOFLAGS", "-count=1")
		}
	}, func(o *Options) {
		tv := o.Verifier.(*treeVerifier)
		go func() { waitFor(t, tv, "good"); close(ready) }()
	})
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	again := false
	for _, r := range v.log() {
		if strings.HasSuffix(r, ":good:-count=1") {
			again = true
		}
	}
	if !again {
		t.Fatalf("verifications %v: want the tests run again with the new environment", v.log())
	}
}

// verify.ahead = false: the tests run only when the model calls verify.
func TestTestsAheadOff(t *testing.T) {
	out, v, _ := earlyRun(t, []string{"good"}, nil, func(o *Options) { o.NoTestsAhead = true })
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	for _, r := range v.log() {
		if strings.HasPrefix(r, "ahead-") {
			t.Fatalf("verifications %v: tests ran ahead though turned off", v.log())
		}
	}
}
