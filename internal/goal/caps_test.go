package goal

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestFailureSignatureSame(t *testing.T) {
	tests := []struct {
		name string
		a, b string
	}{
		{"numbers", "expected 3 items, got 2", "expected 4 items, got 7"},
		{"temp paths", "open /tmp/ultra-123abc/out.txt: no such file", "open /tmp/ultra-987zzz/out.txt: no such file"},
		{"go test temp dirs", "config at /tmp/TestLoad3810273/001/c.toml invalid", "config at /tmp/TestLoad1111/002/c.toml invalid"},
		{"mac temp", "wrote /private/var/folders/xy/abc/T/f", "wrote /var/folders/zz/def/T/g"},
		{"ports", "dial tcp 127.0.0.1:43121: connect: connection refused", "dial tcp 127.0.0.1:39877: connect: connection refused"},
		{"localhost ports", "GET http://localhost:8080/todos: 500", "GET http://localhost:9090/todos: 500"},
		{"durations", "timed out after 1.5s waiting for server", "timed out after 2m3.25s waiting for server"},
		{"durations ms", "took 153ms (limit 100ms)", "took 87µs (limit 100ms)"},
		{"hex ids", "commit 3f9a2c1 does not build", "commit a81b04e does not build"},
		{"addresses", "panic: nil map at 0xc000123456", "panic: nil map at 0xc0000ab000"},
		{"uuids", "todo 123e4567-e89b-12d3-a456-426614174000 missing", "todo 9b2f0c3e-0000-4000-8000-00000000abcd missing"},
		{"times", "at 2026-01-02T03:04:05Z: boom", "at 2026-03-09 11:22:33.123+01:00: boom"},
		{"white space", "exit status 1\n\n  stderr:  boom", "exit status 2 stderr: boom"},
	}
	for _, tt := range tests {
		for _, st := range []CriterionStatus{CriterionFail, CriterionBlocked} {
			sa, sb := FailureSignature(st, tt.a), FailureSignature(st, tt.b)
			if sa != sb {
				t.Errorf("%s (%s): %q -> %q and %q -> %q differ", tt.name, st, tt.a, NormalizeFailure(tt.a), tt.b, NormalizeFailure(tt.b))
			}
		}
	}
}

func TestFailureSignatureDifferent(t *testing.T) {
	tests := []struct {
		name string
		sa   CriterionStatus
		a    string
		sb   CriterionStatus
		b    string
	}{
		{"other text", CriterionFail, "expected milk", CriterionFail, "expected eggs"},
		{"other status", CriterionFail, "timeout", CriterionBlocked, "timeout"},
		{"words that look like hex stay", CriterionFail, "decade facade", CriterionFail, "accede beaded"},
		{"other path outside tmp", CriterionFail, "open /home/a/x", CriterionFail, "open /home/a/y"},
	}
	for _, tt := range tests {
		if FailureSignature(tt.sa, tt.a) == FailureSignature(tt.sb, tt.b) {
			t.Errorf("%s: %q and %q have the same signature", tt.name, tt.a, tt.b)
		}
	}
	if sig := FailureSignature(CriterionFail, "x"); !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(sig) {
		t.Errorf("signature %q is not 16 hex digits", sig)
	}
	if FailureSignature(CriterionFail, "x") != FailureSignature(CriterionFail, "x") {
		t.Error("not stable")
	}
}

func TestNormalizeFailure(t *testing.T) {
	tests := []struct{ in, want string }{
		{"dial tcp 127.0.0.1:43121: refused", "dial tcp N.N.N.N:<port>: refused"},
		{"open /tmp/x/y.txt: no such file", "open <tmp>: no such file"},
		{"after 1.5s", "after <dur>"},
		{"commit 3f9a2c1", "commit <hex>"},
		{"ab12 is short", "abN is short"},
		{"  a \n\t b  ", "a b"},
	}
	for _, tt := range tests {
		if got := NormalizeFailure(tt.in); got != tt.want {
			t.Errorf("NormalizeFailure(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// threeCriteria is a goal with essential C1 and C3 and non-essential C2.
func threeCriteria() Goal {
	no := false
	g := validGoal("G")
	g.Criteria[1].Essential = &no
	return Proposal{Goals: []ProposedGoal{g}}.ToGoals(t0)[0]
}

func TestRecord(t *testing.T) {
	g := threeCriteria()
	ev := &Evidence{Summary: "exit 1"}
	steps := []struct {
		st       CriterionStatus
		sig      string
		wantLast string
		wantSame int
	}{
		{CriterionFail, "s1", "s1", 1},
		{CriterionFail, "s1", "s1", 2},
		{CriterionFail, "s2", "s2", 1},
		{CriterionBlocked, "s2", "s2", 2},
		{CriterionPending, "", "s2", 2},
		{CriterionPass, "", "", 0},
		{CriterionFail, "", "", 1},
		{CriterionFail, "", "", 2},
	}
	for i, s := range steps {
		at := t0.Add(time.Duration(i) * time.Minute)
		if !g.Record("G001-C1", s.st, s.sig, ev, at) {
			t.Fatal("criterion not found")
		}
		c := g.Criterion("G001-C1")
		if c.Status != s.st || c.LastFailure != s.wantLast || c.SameFailures != s.wantSame {
			t.Errorf("step %d: status %s last %q same %d, want %s %q %d", i, c.Status, c.LastFailure, c.SameFailures, s.st, s.wantLast, s.wantSame)
		}
		if c.CapturedAt == nil || !c.CapturedAt.Equal(at) || c.CapturedEvidence != ev || !g.UpdatedAt.Equal(at) {
			t.Errorf("step %d: captured at %v, evidence %v, updated %v", i, c.CapturedAt, c.CapturedEvidence, g.UpdatedAt)
		}
	}
	if g.Record("G009-C1", CriterionPass, "", nil, t1) {
		t.Error("Record of an unknown criterion reported success")
	}
	// the capture time is a copy
	now := t1
	g.Record("G001-C2", CriterionPass, "", nil, now)
	now = now.Add(time.Hour)
	if !g.Criterion("G001-C2").CapturedAt.Equal(t1) {
		t.Error("CapturedAt aliases the caller's variable")
	}
}

func TestJudge(t *testing.T) {
	pass := func(g *Goal, id string) { g.Record(id, CriterionPass, "", &Evidence{Summary: "ok"}, t1) }
	fail := func(g *Goal, id, reason string, n int) {
		for range n {
			g.Record(id, CriterionFail, FailureSignature(CriterionFail, reason), &Evidence{Summary: reason}, t1)
		}
	}
	tests := []struct {
		name        string
		setup       func(g *Goal)
		gate        bool
		complete    bool
		failed      bool
		reason      []string
		missing     []string
		missingNone bool
	}{
		{"all pending", func(g *Goal) {}, false, false, false,
			[]string{"the tests must pass before the criteria run; cycle 0 of 5: iterate"},
			[]string{"criterion G001-C1 (happy): not run yet", "criterion G001-C3 (regression): not run yet", "the gate did not pass"}, false},
		{"essential pass, gate fails", func(g *Goal) { pass(g, "G001-C1"); pass(g, "G001-C3") }, false, false, false,
			[]string{"the tests must pass before the criteria run"}, []string{"the gate did not pass"}, false},
		{"complete without the non-essential", func(g *Goal) { pass(g, "G001-C1"); pass(g, "G001-C3"); fail(g, "G001-C2", "x", 5) }, true, true, false,
			[]string{"the gate passed and all 2 essential criteria passed"}, nil, true},
		{"superseded does not decide", func(g *Goal) { pass(g, "G001-C1"); g.SuccessCriteria[2].Superseded = "wrong" }, true, true, false, nil, nil, true},
		{"nothing essential left", func(g *Goal) {
			g.SuccessCriteria[0].Superseded = "x"
			g.SuccessCriteria[2].Essential = false
		}, true, false, false, nil, []string{"no essential criterion is left to decide the goal"}, false},
		{"one failing", func(g *Goal) { pass(g, "G001-C1"); fail(g, "G001-C3", "exit 1: 3 tests failed", 2) }, true, false, false,
			[]string{"1 of 2 essential criteria pass"}, []string{"criterion G001-C3 (regression): fail: exit 1: 3 tests failed"}, false},
		{"same failure three times", func(g *Goal) {
			pass(g, "G001-C1")
			fail(g, "G001-C3", "exit 1: 3 tests failed in 1.2s", 1)
			fail(g, "G001-C3", "exit 1: 4 tests failed in 0.8s", 2)
		}, true, false, true,
			[]string{"criterion G001-C3 (regression) failed 3 times in a row the same way (signature ", "exit 1: 4 tests failed in 0.8s", "scenario: a user runs go test ./..."}, nil, false},
		{"different failures do not add up", func(g *Goal) {
			fail(g, "G001-C3", "compile error", 2)
			fail(g, "G001-C3", "assertion failed: milk", 2)
		}, true, false, false, nil, nil, false},
		{"non-essential repeats do not fail", func(g *Goal) { fail(g, "G001-C2", "x", 3) }, true, false, false, nil, nil, false},
		{"cycles used up", func(g *Goal) { g.Attempt = MaxCycles; pass(g, "G001-C1") }, true, false, true,
			[]string{"used 5 of 5 build/verify cycles and still not complete: criterion G001-C3 (regression): not run yet"}, nil, false},
		{"cycles used up but complete", func(g *Goal) { g.Attempt = MaxCycles + 1; pass(g, "G001-C1"); pass(g, "G001-C3") }, true, true, false, nil, nil, true},
		{"blocked criterion", func(g *Goal) {
			g.Record("G001-C1", CriterionBlocked, "b", &Evidence{Summary: "tmux missing"}, t1)
		}, true, false, false, nil, []string{"criterion G001-C1 (happy): blocked: tmux missing"}, false},
		{"failure without evidence", func(g *Goal) { g.Record("G001-C1", CriterionFail, "b", nil, t1) }, true, false, false, nil, []string{"criterion G001-C1 (happy): fail: no evidence captured"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := threeCriteria()
			tt.setup(&g)
			v := g.Judge(tt.gate)
			if v.Complete != tt.complete || v.Failed != tt.failed {
				t.Fatalf("Judge = %+v, want complete %v failed %v", v, tt.complete, tt.failed)
			}
			for _, r := range tt.reason {
				if !strings.Contains(v.Reason, r) {
					t.Errorf("reason %q does not contain %q", v.Reason, r)
				}
			}
			if v.Reason == "" {
				t.Error("no reason")
			}
			for _, m := range tt.missing {
				found := false
				for _, got := range v.Missing {
					found = found || strings.Contains(got, m)
				}
				if !found {
					t.Errorf("missing %q not in %q", m, v.Missing)
				}
			}
			if tt.missingNone && len(v.Missing) > 0 {
				t.Errorf("missing = %q, want none", v.Missing)
			}
		})
	}
}
