package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	// hold, when set, keeps the first verification whose log directory
	// starts with holdName ("ahead-" when empty) from ending until it
	// is closed.
	hold     chan struct{}
	holdName string
	held     bool
	holding  chan struct{} // closed when the held run has started
}

func (v *treeVerifier) Verify(_ context.Context, req verify.Request) (*verify.Result, error) {
	v.mu.Lock()
	name := v.holdName
	if name == "" {
		name = "ahead-"
	}
	hold := v.hold != nil && !v.held && strings.HasPrefix(filepath.Base(req.LogDir), name)
	v.held = v.held || hold
	v.mu.Unlock()
	if hold {
		close(v.holding)
		select {
		case <-v.hold:
		case <-time.After(20 * time.Second):
		}
	}
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

// In a run with dependency directories (live in what ultra runs), a call
// that runs the model's code while the tests ahead still run (it could
// change what they load there and put it back) makes them count for
// nothing: the tests run again after it.
func TestTestsAheadBesideACallCountForNothing(t *testing.T) {
	v, _ := heldBesideBash(t, "")
	var runs []string
	for _, r := range v.log() {
		if name, _, _ := strings.Cut(r, ":"); name != "baseline" {
			runs = append(runs, name)
		}
	}
	if len(runs) < 2 || !strings.HasPrefix(runs[0], "ahead-") {
		t.Fatalf("verifications %v: want the tests held beside the bash call, then run again after it", v.log())
	}
}

// A baseline measured while a call of the model's ran beside it serves
// its run but is not kept in the gate cache for other runs.
func TestBaselineBesideACallIsNotCached(t *testing.T) {
	v, o := heldBesideBash(t, "baseline")
	if !v.held {
		t.Fatal("the baseline was not held")
	}
	recs, _ := filepath.Glob(filepath.Join(gatefile.CacheDir(o.StateRoot), "*", "*.json"))
	from := regexp.MustCompile(`"from":\s*"baseline"`)
	for _, p := range recs {
		if b, _ := os.ReadFile(p); from.Match(b) {
			t.Fatalf("the baseline is in the gate cache: %s", p)
		}
	}
	if len(recs) == 0 {
		t.Fatal("nothing in the gate cache: this test shows nothing")
	}
}

// heldBesideBash runs a run whose model writes c.txt, then runs bash
// while the verification named holdName (see treeVerifier) is held.
func heldBesideBash(t *testing.T, holdName string) (*treeVerifier, Options) {
	script := []*llm.Response{
		callsOf(tc("goals", goalsJSON)),
		callsOf(tc("write", `{"file_path":"c.txt","content":"good\n"}`)),
		callsOf(tc("bash", `{"command":"true"}`)),
		callsOf(tc("phase", `{"to":"verifying"}`)),
		callsOf(tc("verify", `{}`)),
		approval(),
	}
	hold := make(chan struct{})
	v := &treeVerifier{seen: make(chan string, 16), hold: hold, holdName: holdName, holding: make(chan struct{})}
	p := &stubProvider{next: func(n int, _ llm.Request) *llm.Response {
		if n == 3 { // the bash call comes while the first run ahead runs
			select {
			case <-v.holding:
			case <-time.After(20 * time.Second):
			}
		}
		if n == 4 { // the bash call ran while the first run ahead was held
			close(hold)
		}
		if n > len(script) {
			return &llm.Response{Text: "idle"}
		}
		return script[n-1]
	}}
	o, dir := setup(t, p, v)
	o.MaxIdle = 1
	withDep(t, dir, "node_modules/dep/index.js", "module.exports = 1\n")
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil || out.Status != StatusComplete {
		t.Fatalf("outcome %+v %v; verifications %v", out, err, v.log())
	}
	return v, o
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

// withDep gives the repository in dir a dependency directory,
// node_modules, ignored by git and live in what ultra runs, holding file
// (a path from the repository's top) with body.
func withDep(t *testing.T, dir, file, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(file))
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(body), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n"), 0o644)
	for _, args := range [][]string{{"add", ".gitignore"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ignore"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
