package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/tasks"
)

func TestAssess(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	type want struct {
		id       string
		severity Severity
		auto     bool
		fix      string // a substring of the fix
	}
	cases := []struct {
		name     string
		obs      Observations
		findings []want
		notes    []string // substrings, in order
	}{
		{name: "healthy", obs: Observations{Provider: &ProviderObs{Name: "openai", BaseURL: "https://api.openai.com/v1", Reachable: true, Status: "answers"}},
			notes: []string{"model server: openai at https://api.openai.com/v1 answers"}},
		{name: "the default a run would use does not answer", obs: Observations{Provider: &ProviderObs{Name: "openai", BaseURL: "http://127.0.0.1:11434/v1", Default: true, Status: "no answer: connection refused"}},
			notes: []string{"no model server is configured, and the default a run would use (openai at http://127.0.0.1:11434/v1) does not answer: no answer: connection refused; set model.base_url"}},
		{name: "the default answers", obs: Observations{Provider: &ProviderObs{Name: "openai", BaseURL: "http://127.0.0.1:11434/v1", Default: true, Reachable: true, Status: "answers"}},
			notes: []string{"a run uses the default, openai at http://127.0.0.1:11434/v1, which answers"}},
		{name: "no provider is only a note", obs: Observations{}, notes: []string{"no model server is configured"}},
		{name: "a config that does not load", obs: Observations{ConfigError: "config /r/.ultra/config:1: expected '.' or ']'"},
			findings: []want{{"config", Error, false, "correct the file at the line named"}}},
		{name: "store cannot be opened", obs: Observations{StorePath: "/r/.ultra/state/ultra.db", StoreError: "file is not a database"},
			findings: []want{{"store-unreadable", Error, false, "mv /r/.ultra/state/ultra.db"}},
			notes:    []string{"run checks", "no model server"}},
		{name: "integrity", obs: Observations{StorePath: "db", Integrity: []string{"row 3 missing from index"}},
			findings: []want{{"store-integrity", Error, false, ".recover"}}},
		{name: "stale lock and marker; live ones are fine", obs: Observations{Locks: []LockObs{
			{Run: "r1", Path: "/s/runs/r1/lock", PID: 99999},
			{Run: "r2", Path: "/s/runs/r2/starting", Starting: true, PID: 0},
			{Run: "r3", Path: "/s/runs/r3/lock", PID: 12, Alive: true},
		}}, findings: []want{{"stale-lock:r1", Warning, true, "rm /s/runs/r1/lock"}, {"stale-start:r2", Warning, true, "rm /s/runs/r2/starting"}}},
		{name: "running with a dead process", obs: Observations{Runs: []RunObs{{ID: "r1", Status: "running", PID: 42, Process: tasks.ProcessDead}}},
			findings: []want{{"stale-heartbeat:r1", Warning, true, "interrupted"}},
			notes:    []string{"ultra resume r1"}},
		{name: "a base whose suite cannot run", obs: Observations{Provider: &ProviderObs{Reachable: true, Status: NotChecked},
			BaseGate: &BaseGateObs{Tree: "0123456789abcdef", Run: "r1", Reason: "no test command found"}},
			findings: []want{{"base-gate-broken", Error, false, "ultra doctor heal"}}},
		{name: "a base with failing tests is a task, not a finding", obs: Observations{Provider: &ProviderObs{Reachable: true, Status: NotChecked},
			BaseGate: &BaseGateObs{Tree: "0123456789abcdef", Run: "r1", Evaluated: true}}},
		{name: "a landed run's clean worktree is only a note", obs: Observations{Provider: &ProviderObs{Reachable: true, Status: NotChecked},
			Worktrees: []WorktreeObs{{Path: "/w/r1", Branch: "ultra/r1", Listed: true, Run: "r1", RunState: "landed"}}},
			notes: []string{"run r1 was landed; its worktree /w/r1 can go: ultra gc"}},
		{name: "an unfinished run whose worktree was deleted", obs: Observations{Provider: &ProviderObs{Reachable: true, Status: NotChecked},
			Runs: []RunObs{{ID: "r1", Status: "escalated", Gone: "its worktree is missing"}, {ID: "r2", Status: "complete", Gone: "its worktree is missing"}}},
			findings: []want{{"worktree-missing:r1", Warning, false, "ultra cancel r1"}}},
		{name: "another machine's run, beating: nothing", obs: Observations{Provider: &ProviderObs{Reachable: true, Status: NotChecked},
			Runs: []RunObs{{ID: "r1", Status: "running", PID: 7, Process: tasks.ProcessUnknown, Heartbeat: now.Add(-time.Second)}}}},
		{name: "interrupted is only a note", obs: Observations{Runs: []RunObs{{ID: "r1", Status: "interrupted"}}},
			notes: []string{"run r1 was interrupted and can be resumed: ultra resume r1"}},
		{name: "interrupted with its worktree gone: no note", obs: Observations{Runs: []RunObs{{ID: "r1", Status: "interrupted", Gone: "removed"}}}},
		{name: "live run, stale heartbeat: a note", obs: Observations{Runs: []RunObs{{ID: "r1", Status: "running", PID: 7, Process: tasks.ProcessAlive, Heartbeat: now.Add(-time.Hour)}}},
			notes: []string{"is stuck: no heartbeat for 1h"}},
		{name: "live run, fresh heartbeat", obs: Observations{Runs: []RunObs{{ID: "r1", Status: "running", PID: 7, Process: tasks.ProcessAlive, Heartbeat: now.Add(-time.Second)}}}},
		{name: "worktrees", obs: Observations{Worktrees: []WorktreeObs{
			{Path: "/w/a", Branch: "ultra/a", Listed: true},                               // unknown, clean
			{Path: "/w/b", Branch: "ultra/b", Listed: true, Run: "b", RunState: "landed"}, // landed: a note
			{Path: "/w/c", Branch: "ultra/c", Listed: true, Changed: 2},                   // uncommitted work
			{Path: "/w/d", Branch: "ultra/d", Listed: true, Run: "d"},                     // a run's own
			{Path: "/w/e", Branch: "ultra/e", Listed: true, Starting: true},               // being made
			{Path: "/w/f", Branch: "ultra/f", Listed: true, Run: "f", RunState: "removed", Live: true},
			{Path: "/w/g"},               // a directory git does not list
			{Path: "/w/h", HasGit: true}, // one with a .git of its own
			{Path: "/w/i", Branch: "ultra/i", Listed: true, Changed: -1},
		}}, findings: []want{
			{"orphaned-worktree:/w/a", Warning, true, "git worktree remove --force /w/a"},
			{"orphaned-worktree:/w/c", Warning, false, "git -C /w/c status"},
			{"orphaned-worktree:/w/g", Warning, true, "rm -rf /w/g"},
			{"orphaned-worktree:/w/h", Warning, false, "ls -la /w/h"},
			{"orphaned-worktree:/w/i", Warning, false, "git worktree remove"},
		}, notes: []string{"run b was landed; its worktree /w/b can go: ultra gc"}},
		{name: "branches", obs: Observations{Branches: []BranchObs{
			{Name: "ultra/m", Merged: true},
			{Name: "ultra/u", Unique: 3},
			{Name: "ultra/o"},
			{Name: "ultra/w", Worktree: true, Unique: 2},
			{Name: "ultra/s", Starting: true},
			{Name: "ultra/mu", Merged: true, Unique: -1},
		}}, findings: []want{
			{"orphaned-branch:ultra/m", Warning, true, "git branch -D ultra/m"},
			{"orphaned-branch:ultra/u", Warning, false, "git log ultra/u"},
			{"orphaned-branch:ultra/o", Warning, false, "git log ultra/o"},
			{"orphaned-branch:ultra/mu", Warning, false, "git log ultra/mu"},
		}},
		{name: "ledgers", obs: Observations{Ledgers: []LedgerObs{
			{Run: "a", Path: "/w/a/.ultra/ledger.jsonl"},
			{Run: "b", Path: "/w/b/.ultra/ledger.jsonl", Problem: "torn last line", Torn: true},
			{Run: "c", Path: "/w/c/.ultra/ledger.jsonl", Problem: "line 2 does not carry ultra's signature"},
		}}, findings: []want{
			{"ledger-torn:b", Error, false, "ultra goals ledger --run b --repair-torn"},
			{"ledger-tampered:c", Error, false, "ultra goals ledger --run c --verify"},
		}},
		{name: "hooks", obs: Observations{Hooks: []HookObs{
			{Run: "a", Worktree: "/w/a", CanFix: true},
			{Run: "b", Worktree: "/w/b", Missing: []string{"pre-commit hook"}, CanFix: true},
			{Run: "c", Worktree: "/w/c", Changed: []string{"pre-push hook"}, CanFix: true},
			{Run: "d", Worktree: "/w/d", Changed: []string{"pre-push hook"}},
		}}, findings: []want{
			{"hook-missing:b", Warning, true, "ultra doctor fix"},
			{"hook-changed:c", Warning, true, "ultra doctor fix"},
			{"hook-changed:d", Warning, false, "ultra undo d"},
		}},
		{name: "runners", obs: Observations{Runners: []RunnerObs{
			{Command: "go test ./...", Program: "go", Found: true},
			{Command: "cargo test", Program: "cargo"},
			{Command: "cd b && cargo test", Program: "cargo"},
		}}, findings: []want{{"missing-runner:cargo", Warning, false, "install cargo"}}},
		{name: "no test command is a note", obs: Observations{RunnerNote: "no test command was found"}, notes: []string{"no test command was found"}},
		{name: "provider unreachable", obs: Observations{Provider: &ProviderObs{Name: "openai", BaseURL: "http://127.0.0.1:9/v1", Status: "no answer: connection refused"}},
			findings: []want{{"provider-unreachable:openai", Warning, false, "http://127.0.0.1:9/v1"}}},
		{name: "environment", obs: Observations{Provider: &ProviderObs{Reachable: true, Status: NotChecked}, Env: EnvObs{SandboxProblem: "bwrap not found", SandboxHint: "apt-get install bubblewrap", GitMissing: true, GateKey: "/k/gate.key", GateKeyMode: 0o644}},
			findings: []want{{"sandbox-missing", Error, false, "apt-get install bubblewrap"}, {"git-missing", Error, false, "install git"}, {"gate-key-readable", Error, true, "chmod 600 /k/gate.key"}}},
		{name: "private gate key", obs: Observations{Provider: &ProviderObs{Reachable: true, Status: NotChecked}, Env: EnvObs{GateKey: "/k/gate.key", GateKeyMode: 0o600}}},
		{name: "errors come first", obs: Observations{StorePath: "db", Provider: &ProviderObs{Reachable: true, Status: NotChecked},
			Locks: []LockObs{{Run: "r", Path: "l"}}, Integrity: []string{"bad"}},
			findings: []want{{"store-integrity", Error, false, ""}, {"stale-lock:r", Warning, true, ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.obs.Provider == nil && c.name != "no provider is only a note" && c.name != "store cannot be opened" {
				c.obs.Provider = &ProviderObs{Reachable: true, Status: NotChecked}
			}
			r := Assess(c.obs, now)
			if len(r.Findings) != len(c.findings) {
				t.Fatalf("findings %+v, want %d", r.Findings, len(c.findings))
			}
			for i, w := range c.findings {
				f := r.Findings[i]
				if f.ID != w.id || f.Severity != w.severity || f.Auto != w.auto || !strings.Contains(f.Fix, w.fix) {
					t.Errorf("finding %d = %+v, want %+v", i, f, w)
				}
				if f.Problem == "" || f.Fix == "" || f.Subject == "" {
					t.Errorf("finding %s lacks a problem, fix or subject: %+v", f.ID, f)
				}
				if strings.Contains(strings.TrimSuffix(f.Problem, "."), "\n") {
					t.Errorf("finding %s: problem is not one sentence: %q", f.ID, f.Problem)
				}
			}
			if len(r.Notes) != len(c.notes) {
				t.Fatalf("notes %q, want %d", r.Notes, len(c.notes))
			}
			for i, n := range c.notes {
				if !strings.Contains(r.Notes[i], n) {
					t.Errorf("note %d = %q, want %q in it", i, r.Notes[i], n)
				}
			}
			if r.NeedsFixing() != (len(c.findings) > 0) {
				t.Errorf("NeedsFixing = %v with %d findings", r.NeedsFixing(), len(c.findings))
			}
		})
	}
}

func TestCommandProgram(t *testing.T) {
	for cmd, want := range map[string]string{
		"go test -json ./...":            "go",
		"cd sub && npm test":             "npm",
		"GOFLAGS=-mod=mod go test ./...": "go",
		"env CI=1 pytest -q":             "pytest",
		"./gradlew test":                 "./gradlew",
		"":                               "",
		"cmake --build build && ctest --test-dir build": "cmake",
	} {
		if got := CommandProgram(cmd); got != want {
			t.Errorf("CommandProgram(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestFindingKind(t *testing.T) {
	if k := (Finding{ID: "orphaned-worktree:/a:b"}).Kind(); k != KindOrphanedWorktree {
		t.Fatalf("kind %q", k)
	}
	if k := (Finding{ID: "git-missing"}).Kind(); k != KindGit {
		t.Fatalf("kind %q", k)
	}
}

func TestDispatch(t *testing.T) {
	blocking := []Finding{{ID: KindBaseGate}}
	cases := []struct {
		policy   string
		blocking []Finding
		want     string
	}{
		{PolicyAuto, nil, Proceed},
		{PolicyAsk, nil, Proceed},
		{PolicyLogOnly, nil, Proceed},
		{PolicyAuto, blocking, Repair},
		{PolicyAsk, blocking, Ask},
		{PolicyLogOnly, blocking, Proceed},
		{"", blocking, Ask}, // unset: ask
		{"nonsense", blocking, Ask},
	}
	for _, c := range cases {
		if got := Dispatch(c.policy, c.blocking); got != c.want {
			t.Errorf("Dispatch(%q, %d) = %s, want %s", c.policy, len(c.blocking), got, c.want)
		}
	}
	r := Report{Findings: []Finding{{ID: "stale-lock:r1"}, {ID: KindStoreIntegrity}, {ID: "missing-runner:go"}, {ID: "orphaned-branch:ultra/x"}, {ID: KindBaseGate}}}
	var ids []string
	for _, f := range Blocking(r) {
		ids = append(ids, f.ID)
	}
	if strings.Join(ids, ",") != "store-integrity,missing-runner:go,base-gate-broken" {
		t.Fatalf("blocking: %v", ids)
	}
}
