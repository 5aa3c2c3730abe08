// Package doctor inspects the health of a repository's ultra state (the
// store, run locks, worktrees and branches, ledgers, hooks) and of what
// ultra needs around it (sandbox, git, gate key, test runners, the model
// server), and applies the fixes that are safe to apply without a person.
//
// Inspect gathers observations (I/O) and Assess turns them into findings
// (pure); Fix applies the findings marked Auto, checking each again right
// before it acts so that it never races a live run.
package doctor

import (
	"fmt"
	"github.com/ultra-dev/ultra/internal/tasks"
	"github.com/ultra-dev/ultra/internal/workspace"
	"sort"
	"strings"
	"time"
)

// Severity is how bad a finding is.
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding kinds: the part of a finding's ID before the colon.
const (
	KindStoreUnreadable  = "store-unreadable"
	KindStoreIntegrity   = "store-integrity"
	KindStaleLock        = "stale-lock"
	KindStaleStart       = "stale-start"
	KindOrphanedWorktree = "orphaned-worktree"
	KindOrphanedBranch   = "orphaned-branch"
	KindStaleHeartbeat   = "stale-heartbeat"
	KindLedgerTorn       = "ledger-torn"
	KindLedgerTampered   = "ledger-tampered"
	KindHookMissing      = "hook-missing"
	KindHookChanged      = "hook-changed"
	KindMissingRunner    = "missing-runner"
	KindProvider         = "provider-unreachable"
	KindSandbox          = "sandbox-missing"
	KindConfig           = "config"
	// KindSetup: what a person brings to runs (MCP servers, permission
	// rules) does not load; KindMCP: an MCP server's program is not there.
	KindSetup   = "setup"
	KindMCP     = "mcp"
	KindGit     = "git-missing"
	KindGateKey = "gate-key-readable"
	// KindBaseGate: the last measurement of the checkout's tree found its
	// test suite could not run or be read: no run from it can be verified.
	KindBaseGate = "base-gate-broken"
	// KindWorktreeMissing: an unfinished run's worktree was deleted.
	KindWorktreeMissing = "worktree-missing"
)

// HeartbeatStale is how old a running run's heartbeat may be before
// doctor says its process may be stuck or gone (the same age as ultra
// tasks judges by).
const HeartbeatStale = tasks.StaleAfter

// Finding is one thing wrong that needs fixing.
type Finding struct {
	ID       string   `json:"id"` // stable: kind, or kind:subject
	Severity Severity `json:"severity"`
	Subject  string   `json:"subject"`
	Problem  string   `json:"problem"` // one sentence
	Fix      string   `json:"fix"`     // the command or action a person would run
	Auto     bool     `json:"auto"`    // ultra doctor fix applies it
	// What the fix acts on (set as the kind needs).
	Run    string `json:"run,omitempty"`
	Path   string `json:"path,omitempty"`
	Branch string `json:"branch,omitempty"`
	PID    int    `json:"pid,omitempty"`
}

// Kind is the finding's kind (its ID before the colon).
func (f Finding) Kind() string {
	k, _, _ := strings.Cut(f.ID, ":")
	return k
}

// Report is what Inspect found.
type Report struct {
	Findings []Finding `json:"findings"`
	// Notes are worth knowing but need no fixing (a resumable run, a
	// check that was skipped); they never make doctor exit non-zero.
	Notes       []string    `json:"notes"`
	Environment Environment `json:"environment"`
}

// NeedsFixing reports whether any finding needs fixing.
func (r Report) NeedsFixing() bool { return len(r.Findings) > 0 }

// Errors counts the findings of severity error.
func (r Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == Error {
			n++
		}
	}
	return n
}

// Observations are the facts Inspect gathered; Assess judges them.
type Observations struct {
	// ConfigError is why ultra's configuration does not load (a
	// syntax error, an unknown key, a wrong type, with its file and
	// line): every other command refuses to start with it.
	ConfigError string
	// SetupError is why the MCP servers or the permission rules do not
	// load;
	// MCPMissing are servers whose program is not found.
	SetupError string
	MCPMissing []string
	StorePath  string
	StoreError string   // the store could not be opened or read ("" when it could)
	Integrity  []string // what PRAGMA integrity_check reported other than ok
	Runs       []RunObs
	Locks      []LockObs
	Worktrees  []WorktreeObs
	Branches   []BranchObs
	Ledgers    []LedgerObs
	Hooks      []HookObs
	Runners    []RunnerObs
	RunnerNote string       // why the test runners were not checked
	Provider   *ProviderObs // nil: no model server configured
	Env        EnvObs
	// BaseGate is the last baseline measured of the checkout's tree (nil
	// when none was).
	BaseGate *BaseGateObs
}

// BaseGateObs is a run's baseline of the tree the checkout is at.
type BaseGateObs struct {
	Tree      string
	Run       string // the run that measured it
	Evaluated bool
	Reason    string
}

// RunObs is a stored run as doctor sees it.
type RunObs struct {
	ID        string
	Status    string
	PID       int
	Heartbeat time.Time // the task's last heartbeat (zero when none)
	// Process is what this host can tell of the process of a run recorded
	// as running (agent.Observe): another machine's cannot be checked.
	Process tasks.Process
	// Gone says why the run's worktree cannot be worked in ("" when it
	// can, or when the run has none).
	Gone string
}

// LockObs is a run's lock file or starting marker.
type LockObs struct {
	Run      string
	Path     string
	Starting bool // the starting marker rather than the lock
	PID      int  // 0 when the file holds no pid
	Alive    bool
}

// WorktreeObs is a worktree git lists on an ultra branch, or a directory
// in ultra's worktree directory.
type WorktreeObs struct {
	Path     string
	Branch   string
	Listed   bool   // git worktree list shows it
	HasGit   bool   // the directory has a .git (for one git does not list)
	Run      string // the run it belongs to ("" when none in the store)
	RunState string // the run's workspace says: removed, landed or undone ("" otherwise)
	Starting bool   // a live process is making a run in it
	Live     bool   // its run's process is alive, or holds its lock
	Changed  int    // uncommitted files (-1: could not be read)
}

// BranchObs is a local branch under ultra/ that no stored run has.
type BranchObs struct {
	Name     string
	Worktree bool // checked out in a worktree (that worktree is judged instead)
	Starting bool // a live process is starting its run
	Merged   bool // its tip is on a local branch outside ultra/
	Unique   int  // commits no other ref reaches
}

// LedgerObs is the ledger check of an unfinished run with a worktree.
type LedgerObs struct {
	Run     string
	Path    string
	Problem string // "" when intact
	Torn    bool
}

// HookObs is the hook check of an unfinished run's worktree.
type HookObs struct {
	Run      string
	Worktree string
	Missing  []string // hooks (or the hooks setting) that are not there
	Changed  []string // hooks (or the hooks setting) that differ
	CanFix   bool     // ultra knows the hook's command and can install it again
}

// RunnerObs is one program a test command of the project needs.
type RunnerObs struct {
	Command string
	Program string
	Found   bool
}

// NotChecked is the status of a model server doctor did not ask.
const NotChecked = "not checked"

// ProviderObs is the configured model server and whether it answered.
type ProviderObs struct {
	Name      string
	BaseURL   string
	Reachable bool
	Status    string
	Hint      string
	Default   bool // nothing configured: the server a run would use
}

// EnvObs is the environment checks' outcome.
type EnvObs struct {
	SandboxProblem string // "" when a sandbox is available
	SandboxHint    string
	GitMissing     bool
	GateKey        string // its path ("" when unknown)
	GateKeyMode    uint32 // its permission bits (0 when it does not exist)
}

// Assess turns observations into a report's findings and notes. It does
// no I/O.
func Assess(o Observations, now time.Time) Report {
	var r Report
	add := func(f Finding) { r.Findings = append(r.Findings, f) }
	note := func(format string, a ...any) { r.Notes = append(r.Notes, fmt.Sprintf(format, a...)) }

	if o.ConfigError != "" {
		add(Finding{ID: KindConfig, Severity: Error, Subject: "config", Problem: o.ConfigError + ": every other ultra command refuses to start until it is fixed",
			Fix: "correct the file at the line named (ultra doctor shows what loads once it does; README's Configuration lists the keys)"})
	}
	if o.SetupError != "" {
		add(Finding{ID: KindSetup, Severity: Error, Subject: "setup", Problem: o.SetupError + ": runs and chats refuse to start until it is fixed",
			Fix: "correct the file at the line named (docs/ecosystem.md shows the formats)"})
	}
	for _, m := range o.MCPMissing {
		add(Finding{ID: KindMCP, Severity: Warning, Subject: "mcp", Problem: m + ": its tools are not offered to runs",
			Fix: "install the program, or correct the server's command (ultra mcp list shows whether each server answers)"})
	}
	// The environment.
	if o.Env.SandboxProblem != "" {
		fix := o.Env.SandboxHint
		if fix == "" {
			fix = "install bubblewrap (apt-get install bubblewrap)"
		}
		add(Finding{ID: KindSandbox, Severity: Error, Subject: "sandbox", Problem: "no sandbox can contain the model's commands and the tests: " + o.Env.SandboxProblem, Fix: fix})
	}
	if o.Env.GitMissing {
		add(Finding{ID: KindGit, Severity: Error, Subject: "git", Problem: "git is not installed: ultra works in git repositories", Fix: "install git (apt-get install git)"})
	}
	if b := o.BaseGate; b != nil && !b.Evaluated {
		add(Finding{ID: KindBaseGate, Severity: Error, Subject: "tree " + workspace.Short(b.Tree), Run: b.Run,
			Problem: "the checkout's test suite could not run or be read when run " + b.Run + " measured it (" + b.Reason + "): no run from this tree can be verified",
			Fix:     "ultra doctor heal (a repair run makes the suite run; land it with ultra land RUN), or set verify.command in .ultra/config"})
	}
	if o.Env.GateKey != "" && o.Env.GateKeyMode&0o077 != 0 {
		add(Finding{ID: KindGateKey, Severity: Error, Subject: o.Env.GateKey, Path: o.Env.GateKey, Auto: true,
			Problem: fmt.Sprintf("the gate key %s is readable by others (mode %04o): anyone who reads it can forge gate decisions", o.Env.GateKey, o.Env.GateKeyMode),
			Fix:     "chmod 600 " + o.Env.GateKey})
	}

	// The store.
	if o.StoreError != "" {
		add(Finding{ID: KindStoreUnreadable, Severity: Error, Subject: o.StorePath, Path: o.StorePath,
			Problem: "ultra's store cannot be read: " + o.StoreError,
			Fix:     fmt.Sprintf("move %s aside (mv %s %s.broken) and let ultra make a new one; the runs it recorded are then forgotten", o.StorePath, o.StorePath, o.StorePath)})
		note("the run checks (locks, worktrees, branches, ledgers, hooks) were skipped: without the store ultra cannot tell which runs exist")
	}
	if len(o.Integrity) > 0 {
		add(Finding{ID: KindStoreIntegrity, Severity: Error, Subject: o.StorePath, Path: o.StorePath,
			Problem: fmt.Sprintf("the store %s fails SQLite's integrity check: %s", o.StorePath, firstOf(o.Integrity, 3)),
			Fix:     fmt.Sprintf("stop every ultra process, then recover it: sqlite3 %s .recover | sqlite3 %s.recovered && mv %s.recovered %s", o.StorePath, o.StorePath, o.StorePath, o.StorePath)})
	}

	// Run locks and starting markers a dead process left.
	for _, l := range o.Locks {
		if l.Alive {
			continue
		}
		holder := "a process that is gone"
		if l.PID > 0 {
			holder = fmt.Sprintf("process %d, which is gone", l.PID)
		}
		if l.Starting {
			add(Finding{ID: KindStaleStart + ":" + l.Run, Severity: Warning, Subject: l.Path, Run: l.Run, Path: l.Path, PID: l.PID, Auto: true,
				Problem: fmt.Sprintf("run %s's starting marker was left by %s", l.Run, holder),
				Fix:     "rm " + l.Path})
			continue
		}
		add(Finding{ID: KindStaleLock + ":" + l.Run, Severity: Warning, Subject: l.Path, Run: l.Run, Path: l.Path, PID: l.PID, Auto: true,
			Problem: fmt.Sprintf("run %s's lock was left by %s", l.Run, holder),
			Fix:     "rm " + l.Path})
	}

	// Runs, read as every surface reads them (tasks.Shown): interrupted
	// ones can be resumed; a row that still says running for a dead
	// process is corrected.
	for _, run := range o.Runs {
		in := tasks.Input{ID: run.ID, Status: run.Status, PID: run.PID, Process: run.Process, Heartbeat: run.Heartbeat}
		shown := tasks.Shown(in, now)
		switch {
		case run.Status == "running" && shown == tasks.Interrupted:
			add(Finding{ID: KindStaleHeartbeat + ":" + run.ID, Severity: Warning, Subject: "run " + run.ID, Run: run.ID, PID: run.PID, Auto: true,
				Problem: fmt.Sprintf("run %s was interrupted (its process %d is gone), but the store still records it as running", run.ID, run.PID),
				Fix:     "ultra doctor fix (records the run as interrupted)"})
			if run.Gone == "" {
				note("run %s was interrupted and can be resumed: ultra resume %s", run.ID, run.ID)
			}
		case shown == tasks.StuckStatus:
			note("run %s is stuck: %s (ultra status %s)", run.ID, tasks.Classify(in, now).Why, run.ID)
		case run.Status == "interrupted" && run.Gone == "":
			note("run %s was interrupted and can be resumed: ultra resume %s", run.ID, run.ID)
		case run.Gone == "its worktree is missing" && run.Status != "complete" && run.Status != "cancelled":
			add(Finding{ID: KindWorktreeMissing + ":" + run.ID, Severity: Warning, Subject: "run " + run.ID, Run: run.ID,
				Problem: fmt.Sprintf("run %s (%s) cannot go on: its worktree was deleted outside ultra", run.ID, run.Status),
				Fix:     fmt.Sprintf("ultra cancel %s (its commits stay on branch ultra/%s; ultra undo %s drops them), then git worktree prune", run.ID, run.ID, run.ID)})
		}
	}

	// Worktrees no run (or only a finished one) accounts for.
	for _, w := range o.Worktrees {
		if w.Starting || w.Live {
			continue
		}
		var why string
		switch {
		case w.Run == "":
			why = "no run in the store has it"
		case w.RunState == "landed" && w.Listed && w.Changed == 0:
			// The normal end of a run: gc removes it, nothing is wrong.
			note("run %s was landed; its worktree %s can go: ultra gc", w.Run, w.Path)
			continue
		case w.RunState != "":
			why = fmt.Sprintf("its run %s was %s", w.Run, w.RunState)
		default:
			continue // a run's own worktree
		}
		f := Finding{ID: KindOrphanedWorktree + ":" + w.Path, Severity: Warning, Subject: w.Path, Run: w.Run, Path: w.Path, Branch: w.Branch, Auto: true}
		switch {
		case w.Listed:
			f.Problem = fmt.Sprintf("the worktree %s is left over: %s", w.Path, why)
			f.Fix = fmt.Sprintf("git worktree remove --force %s && git worktree prune", w.Path)
			if w.Branch != "" {
				f.Fix += fmt.Sprintf(" (then git branch -d %s, once its commits are on another branch)", w.Branch)
			}
		default:
			f.Problem = fmt.Sprintf("the directory %s in ultra's worktree directory is left over: git does not list it and %s", w.Path, why)
			f.Fix = "rm -rf " + w.Path
		}
		switch {
		case w.Changed > 0:
			f.Auto = false
			f.Problem += fmt.Sprintf(", and it has %d uncommitted file(s)", w.Changed)
			f.Fix = fmt.Sprintf("keep what you want of its changes (git -C %s status), then: %s", w.Path, f.Fix)
		case w.Changed < 0:
			f.Auto = false
			f.Problem += ", and git cannot read its changes"
		case !w.Listed && w.HasGit:
			f.Auto = false
			f.Problem += ", and it holds a .git of its own"
			f.Fix = fmt.Sprintf("check it holds nothing you want (ls -la %s), then: rm -rf %s", w.Path, w.Path)
		}
		add(f)
	}

	// Branches no run has.
	for _, b := range o.Branches {
		if b.Worktree || b.Starting {
			continue
		}
		f := Finding{ID: KindOrphanedBranch + ":" + b.Name, Severity: Warning, Subject: b.Name, Branch: b.Name}
		switch {
		case b.Merged && b.Unique == 0:
			f.Auto = true
			f.Problem = fmt.Sprintf("branch %s belongs to no run in the store; its commits are all on another branch", b.Name)
			f.Fix = "git branch -D " + b.Name
		case b.Unique > 0:
			f.Problem = fmt.Sprintf("branch %s belongs to no run in the store and holds %d commit(s) no other branch has", b.Name, b.Unique)
			f.Fix = fmt.Sprintf("look at its work (git log %s), merge what you want, then git branch -D %s", b.Name, b.Name)
		default:
			f.Problem = fmt.Sprintf("branch %s belongs to no run in the store; its commits are on other refs but not on a branch outside ultra/", b.Name)
			f.Fix = fmt.Sprintf("look at its work (git log %s), then git branch -D %s", b.Name, b.Name)
		}
		add(f)
	}

	// Ledgers of unfinished runs.
	for _, l := range o.Ledgers {
		if l.Problem == "" {
			continue
		}
		if l.Torn {
			add(Finding{ID: KindLedgerTorn + ":" + l.Run, Severity: Error, Subject: l.Path, Run: l.Run, Path: l.Path,
				Problem: fmt.Sprintf("run %s's ledger has a torn last line (a write cut short): %s", l.Run, l.Problem),
				Fix:     fmt.Sprintf("ultra goals ledger --run %s --verify, then ultra goals ledger --run %s --repair-torn", l.Run, l.Run)})
			continue
		}
		add(Finding{ID: KindLedgerTampered + ":" + l.Run, Severity: Error, Subject: l.Path, Run: l.Run, Path: l.Path,
			Problem: fmt.Sprintf("run %s's goal records do not check out: %s", l.Run, l.Problem),
			Fix:     fmt.Sprintf("ultra goals ledger --run %s --verify says where; restore the file from the run's branch or undo the run (ultra undo %s)", l.Run, l.Run)})
	}

	// Hooks of unfinished runs' worktrees.
	for _, h := range o.Hooks {
		if len(h.Missing) == 0 && len(h.Changed) == 0 {
			continue
		}
		fix := "ultra doctor fix (installs the run's hooks again)"
		if !h.CanFix {
			fix = fmt.Sprintf("undo the run (ultra undo %s) and start it again: ultra cannot tell which hook command to install", h.Run)
		}
		if len(h.Missing) > 0 {
			add(Finding{ID: KindHookMissing + ":" + h.Run, Severity: Warning, Subject: h.Worktree, Run: h.Run, Path: h.Worktree, Auto: h.CanFix,
				Problem: fmt.Sprintf("run %s's worktree lacks ultra's %s, so commits there are not checked", h.Run, strings.Join(h.Missing, " and ")),
				Fix:     fix})
			continue
		}
		add(Finding{ID: KindHookChanged + ":" + h.Run, Severity: Warning, Subject: h.Worktree, Run: h.Run, Path: h.Worktree, Auto: h.CanFix,
			Problem: fmt.Sprintf("run %s's worktree has a changed %s", h.Run, strings.Join(h.Changed, " and ")),
			Fix:     fix})
	}

	// Test runners of this project.
	if o.RunnerNote != "" {
		note("%s", o.RunnerNote)
	}
	seen := map[string]bool{}
	for _, rn := range o.Runners {
		if rn.Found || rn.Program == "" || seen[rn.Program] {
			continue
		}
		seen[rn.Program] = true
		add(Finding{ID: KindMissingRunner + ":" + rn.Program, Severity: Warning, Subject: rn.Program,
			Problem: fmt.Sprintf("the project's test command (%s) needs %s, which is not on PATH: no run can pass its gate here", rn.Command, rn.Program),
			Fix:     fmt.Sprintf("install %s, or set verify.command in .ultra/config", rn.Program)})
	}

	// The model server.
	switch p := o.Provider; {
	case p == nil:
		note("no model server is configured (model.base_url, or the provider's URL or key variable): its reachability was not checked")
	case p.Default && !p.Reachable:
		// Nobody chose it: a note, but one that says a run would fail.
		note("no model server is configured, and the default a run would use (%s at %s) does not answer: %s; set model.base_url (in .ultra/config or your own config) or the provider's URL or key variable", p.Name, p.BaseURL, p.Status)
	case p.Default:
		note("no model server is configured: a run uses the default, %s at %s, which answers", p.Name, p.BaseURL)
	case p.Reachable && p.Status == NotChecked:
	case p.Reachable:
		note("model server: %s at %s answers", p.Name, p.BaseURL)
	default:
		fix := fmt.Sprintf("start the server at %s, or point ultra at another (model.base_url in .ultra/config, or the provider's URL variable)", p.BaseURL)
		if p.Hint != "" {
			fix = p.Hint
		}
		add(Finding{ID: KindProvider + ":" + p.Name, Severity: Warning, Subject: p.BaseURL,
			Problem: fmt.Sprintf("the %s model server at %s does not answer: %s", p.Name, p.BaseURL, p.Status),
			Fix:     fix})
	}

	sort.SliceStable(r.Findings, func(i, j int) bool {
		return r.Findings[i].Severity == Error && r.Findings[j].Severity != Error
	})
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.Notes == nil {
		r.Notes = []string{}
	}
	return r
}

func firstOf(lines []string, n int) string {
	if len(lines) <= n {
		return strings.Join(lines, "; ")
	}
	return strings.Join(lines[:n], "; ") + fmt.Sprintf("; and %d more", len(lines)-n)
}

// CommandProgram is the program a shell test command runs first: the
// first word after any variable assignments and a leading "cd DIR &&".
func CommandProgram(command string) string {
	fields := strings.Fields(command)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "cd" && i+2 < len(fields) && (fields[i+2] == "&&" || fields[i+2] == ";"):
			i += 2
		case strings.Contains(f, "=") && !strings.HasPrefix(f, "=") && isAssignment(f):
		case f == "env" || f == "exec" || f == "(":
		default:
			return strings.Trim(f, `"'(`)
		}
	}
	return ""
}

func isAssignment(f string) bool {
	name, _, _ := strings.Cut(f, "=")
	for i, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != ""
}

// Dispatch policies (project config repair.on_unhealthy): what a run does
// when the health check before it starts finds something that blocks
// verified work.
const (
	PolicyAuto    = "auto"     // fix what code can, then repair the rest: the run starts in repair mode
	PolicyAsk     = "ask"      // ask the person (in a terminal); without one, refuse to start
	PolicyLogOnly = "log-only" // start anyway and record the findings
)

// Policies lists the dispatch policies.
var Policies = []string{PolicyAuto, PolicyAsk, PolicyLogOnly}

// Dispatch actions.
const (
	Proceed = "proceed"
	Repair  = "repair"
	Ask     = "ask"
)

// blocksDispatch are the findings that keep any run from being verified
// or recorded truly: a corrupt store, no git, a readable gate key, a test
// suite that cannot run, a test runner that is missing.
var blocksDispatch = map[string]bool{KindStoreUnreadable: true, KindStoreIntegrity: true, KindGit: true,
	KindGateKey: true, KindBaseGate: true, KindMissingRunner: true}

// Blocking are the findings of r that block dispatch.
func Blocking(r Report) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if blocksDispatch[f.Kind()] {
			out = append(out, f)
		}
	}
	return out
}

// Dispatch decides what a run about to start does under policy when the
// health check found blocking (the findings that block dispatch).
func Dispatch(policy string, blocking []Finding) string {
	if len(blocking) == 0 {
		return Proceed
	}
	switch policy {
	case PolicyAuto:
		return Repair
	case PolicyLogOnly:
		return Proceed
	}
	return Ask
}
