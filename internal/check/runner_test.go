package check

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
)

func TestSealOpen(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	rep := &report{Channel: goal.ChannelCommand, Observed: "exit 0", Assertions: []assertion{{Name: "expect_exit", Want: "0", Got: "exit 0", OK: true}}}
	b, err := seal(key, rep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := open(key, append(b, '\n'))
	if err != nil || got.Observed != "exit 0" || len(got.Assertions) != 1 || !got.Assertions[0].OK {
		t.Fatalf("open(seal) = %+v, %v", got, err)
	}
	if _, err := open(bytes.Repeat([]byte{8}, 32), b); err == nil || !strings.Contains(err.Error(), "MAC is wrong") {
		t.Errorf("another key: %v", err)
	}
	// The report changed (ok flipped, a value edited) but the MAC kept.
	for _, edit := range [][2]string{{`"ok":true`, `"ok":false`}, {`exit 0`, `exit 1`}} {
		if _, err := open(key, bytes.Replace(b, []byte(edit[0]), []byte(edit[1]), 1)); err == nil {
			t.Errorf("an edited report (%s → %s) opened", edit[0], edit[1])
		}
	}
	if _, err := open(key, append(append([]byte{}, b...), b...)); err == nil || !strings.Contains(err.Error(), "besides the report") {
		t.Errorf("two reports: %v", err)
	}
	if _, err := open(key, append([]byte(`{"report":{},"mac":""}`), b...)); err == nil {
		t.Errorf("junk before the report opened")
	}
	if _, err := open(key, nil); err != errNoReport {
		t.Errorf("empty: %v", err)
	}
}

// A supervisor that never reports: Runner kills it (and, contained, its
// sandbox) after the timeout and its teardown reserve, and the check is
// blocked.
func TestRunnerKillsHungSupervisor(t *testing.T) {
	old := teardownReserve
	teardownReserve = 500 * time.Millisecond
	defer func() { teardownReserve = old }()
	for _, contained := range []bool{false, true} {
		t.Run(mode(contained), func(t *testing.T) {
			m := marker(t)
			var r Runner
			if contained {
				r = containedRunner(t, t.TempDir())
			} else {
				r = newRunner(t, t.TempDir())
			}
			r.Program = []string{"bash", "-c", "exec -a " + m + " sleep 60"}
			res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "true", TimeoutSeconds: 1}))
			logResult(t, res)
			wantStatus(t, res, goal.CriterionBlocked)
			wantIn(t, "reason", res.Reason, "did not end within its 1s timeout")
			wantIn(t, "receipt", res.Receipt, "supervisor killed by SIGKILL")
			if d := res.Duration; d > 4*time.Second {
				t.Errorf("took %s", d)
			}
			noneLeft(t, m)
		})
	}
}

// A program that is not the supervisor (it exits without a report) and
// a cancelled context are blocked.
func TestRunnerNoReportAndCancel(t *testing.T) {
	r := newRunner(t, t.TempDir())
	r.Program = []string{"true"}
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "true"}))
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "the check's supervisor did not report (killed?): the report pipe stayed empty")
	evidence(t, r, res, "receipt.txt")

	r = newRunner(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res = r.Run(ctx, crit(goal.ChannelCommand, goal.Check{Run: "sleep 30"}))
	wantStatus(t, res, goal.CriterionBlocked)
	if !strings.Contains(res.Reason, "cancelled") || res.Duration > 3*time.Second {
		t.Errorf("reason %q after %s", res.Reason, res.Duration)
	}
}

// Evidence files are never written through a symlink or over a file.
func TestEvidenceNoFollowNoClobber(t *testing.T) {
	r := newRunner(t, t.TempDir())
	if err := os.MkdirAll(r.EvidenceDir, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(r.EvidenceDir, "command.txt")); err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "echo hi"}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "writing the evidence")
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("the symlink's target was written: %q", b)
	}
}

func TestJSONPath(t *testing.T) {
	doc := []byte(`{"a":{"b":[{"c":"x"},{"c":2.50}],"t":true,"n":null},"s":"str"}`)
	for path, want := range map[string]string{
		"a.b.0.c": "x", "a.b.1.c": "2.50", "a.t": "true", "a.n": "null", "s": "str", "a.b.0": `{"c":"x"}`,
	} {
		got, err := jsonPath(doc, path)
		if err != nil || got != want {
			t.Errorf("jsonPath(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, bad := range []string{"a.x", "a.b.2", "a.b.-1", "s.x", "a.b.c"} {
		if _, err := jsonPath(doc, bad); err == nil {
			t.Errorf("jsonPath(%q) found something", bad)
		}
	}
	if _, err := jsonPath([]byte("not json"), "a"); err == nil {
		t.Error("a body that is not JSON gave a value")
	}
}

func TestParseStat(t *testing.T) {
	q, ok := parseStat(42, []byte("42 (a (weird) name) S 7 42 42 0 -1 4194304"))
	if !ok || q.Comm != "a (weird) name" || q.State != 'S' || q.PPid != 7 || q.Pgrp != 42 {
		t.Errorf("parseStat = %+v, %v", q, ok)
	}
}
