package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
)

func TestCommandPass(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("forty-two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir)
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{
		Run:          "cat data.txt; echo warning >&2",
		ExpectStdout: "^forty-two$|forty",
		ExpectStderr: "^warning",
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "summary", res.Summary, "expect_exit 0 ✓", `expect_stdout "^forty-two$|forty" ✓`, `expect_stderr "^warning" ✓`)
	if res.Reason != "" || res.Signature != "" {
		t.Errorf("a pass has reason %q, signature %q", res.Reason, res.Signature)
	}
	b := string(evidence(t, r, res, "command.txt"))
	wantIn(t, "command.txt", b, `-c "cat data.txt; echo warning >&2"`, "exit 0 after", "--- stdout (10 bytes)\nforty-two\n", "--- stderr (8 bytes)\nwarning\n")
	rc := string(evidence(t, r, res, "receipt.txt"))
	if !strings.HasPrefix(rc, res.Receipt+"\n") {
		t.Errorf("receipt.txt does not start with the receipt:\n%s", rc)
	}
	wantIn(t, "receipt", res.Receipt, "uncontained", "command pgid", "command (ended by itself: exit 0)", "supervisor exit 0", "leftovers: none")
}

// Patterns are multi-line: ^ and $ match at each line, as people write
// them for a program's output ("^2$" for a line that is 2).
func TestPatternsMatchLines(t *testing.T) {
	for _, c := range []struct {
		run, pattern string
		want         goal.CriterionStatus
	}{
		{"printf 'a\\n2\\n'", "^2$", goal.CriterionPass},
		{"echo 2", "^2$", goal.CriterionPass},
		{"echo 22", "^2$", goal.CriterionFail},
		{"printf 'x2\\n'", "^2$", goal.CriterionFail},
	} {
		res := newRunner(t, t.TempDir()).Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: c.run, ExpectStdout: c.pattern}))
		if res.Status != c.want {
			t.Errorf("%s against %q: %s, want %s (%s)", c.pattern, c.run, res.Status, c.want, res.Summary)
		}
	}
}

func TestCommandWrongExit(t *testing.T) {
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "echo fine; exit 3"}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, "expect_exit 0 ✗ got exit 3")
	// What the command said last says why.
	wantIn(t, "summary", res.Summary, "→ exit 3: fine")
	why := r
	why.EvidenceDir = filepath.Join(t.TempDir(), "why")
	res4 := why.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "echo starting; echo 'No module named pytest' >&2; exit 1"}))
	wantIn(t, "summary", res4.Summary, "→ exit 1: No module named pytest")
	wantIn(t, "reason", res.Reason, "expect_exit 0 ✗ got exit 3")
	// The same failure twice has the same signature.
	again := r
	again.EvidenceDir = filepath.Join(t.TempDir(), "again")
	res2 := again.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "echo fine; exit 3"}))
	if res2.Signature != res.Signature || res.Signature == "" {
		t.Errorf("signatures differ: %q vs %q", res.Signature, res2.Signature)
	}
	// An expected non-zero exit passes.
	ok := r
	ok.EvidenceDir = filepath.Join(t.TempDir(), "ok")
	res3 := ok.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "exit 3", ExpectExit: intp(3)}))
	wantStatus(t, res3, goal.CriterionPass)
}

func TestCommandStdoutMismatch(t *testing.T) {
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "echo goodbye", ExpectStdout: "hello"}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, `expect_stdout "hello" ✗ got goodbye`)
	if strings.Contains(res.Summary, "expect_exit 0 ✗") {
		t.Errorf("exit 0 reported as failed: %s", res.Summary)
	}
	wantIn(t, "signature", res.Signature, "expect_stdout", "goodbye")
	b := string(evidence(t, r, res, "command.txt"))
	wantIn(t, "command.txt", b, "goodbye")
}

func TestCommandTimeoutBlocked(t *testing.T) {
	m := marker(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "sleep 30 # " + m, TimeoutSeconds: 1}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "timed out after 1s")
	if d := res.Duration; d > 6*time.Second {
		t.Errorf("a 1 s check took %s", d)
	}
	noneLeft(t, m)
}

func TestCommandNotRunnable(t *testing.T) {
	r := newRunner(t, t.TempDir())
	for _, c := range []goal.Check{
		{Run: "true", ExpectStdout: "("},
		{Run: ""},
	} {
		res := r.Run(context.Background(), crit(goal.ChannelCommand, c))
		wantStatus(t, res, goal.CriterionBlocked)
		wantIn(t, "reason", res.Reason, "not runnable")
	}
	res := r.Run(context.Background(), crit("carrier-pigeon", goal.Check{Run: "true"}))
	wantStatus(t, res, goal.CriterionBlocked)
}

// A command that leaves a daemon behind: found by the supervisor (its
// subreaper), killed, and the result is blocked.
func TestCommandDaemonLeftover(t *testing.T) {
	m := marker(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{
		Run: "setsid nohup bash -c 'exec -a " + m + " sleep 1000' >/dev/null 2>&1 & sleep 0.3; echo started",
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "daemonized")
	wantIn(t, "receipt", res.Receipt, "daemonized")
	wantIn(t, "summary", res.Summary, "expect_exit 0 ✓")
	noneLeft(t, m)
}

// The programs under test inherit neither ultra's credentials nor the
// variable that makes a program the supervisor.
func TestCommandNoSecrets(t *testing.T) {
	t.Setenv("ULTRA_TEST_API_KEY", "sk-secret")
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: `echo "[$ULTRA_TEST_API_KEY$ULTRA_CHECK_SUPERVISOR]"`, ExpectStdout: `^\[\]\n$`}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
}
