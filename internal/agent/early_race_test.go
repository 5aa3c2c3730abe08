package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
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
	p := &stubProvider{next: func(n int, _ llm.Request) *llm.Response {
		if n > len(script) {
			return &llm.Response{Text: "idle"}
		}
		return script[n-1]
	}}
	o, dir := setup(t, p, v)
	o.MaxIdle = 1
	// Uncontained (a profile that allows it): the model's bash can write
	// the dependency directory, as the tests can read it.
	o.Sandbox = &sandbox.Status{Problem: "no bubblewrap"}
	withDep(t, dir, impl, "orig\n")
	ax := axes.Default
	ax.Permission = "trusted"
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: ax})
	if err != nil {
		t.Fatal(err)
	}
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
