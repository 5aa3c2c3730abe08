// Package goal holds a run's goals and their success criteria: the
// versioned shape of a run's goals.json, the planner's proposal and its
// validation, the steering kinds that may change an accepted plan, and the
// per-goal caps. It is pure: no I/O, no clock (times are passed in).
//
// The model proposes goals through the goals tool; code validates them;
// acceptance freezes them (their digest goes into the ledger). From then
// on only ultra's code changes goals.json: a criterion passes only when
// ultra ran its check and captured the evidence itself.
package goal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// SchemaVersion is the version of goals.json this code writes and reads.
const SchemaVersion = 1

// RunsDir holds the runs' records in the repository: each run's brief,
// goals.json and ledger under RunsDir/<run-id>/, so that runs landed one
// after another never overwrite each other's.
const RunsDir = ".ultra/runs"

// Records are where one run keeps its repo-native records, relative to
// the repository root.
type Records struct{ Dir string }

// RunRecords are the records of run id.
func RunRecords(id string) Records { return Records{Dir: RunsDir + "/" + id} }

// LegacyRecords are where runs started before per-run records kept
// theirs (the last landed run's, in .ultra/ itself).
var LegacyRecords = Records{Dir: ".ultra"}

// Brief is the run's brief.
func (r Records) Brief() string { return r.Dir + "/brief.md" }

// Goals is the run's goals.json.
func (r Records) Goals() string { return r.Dir + "/goals.json" }

// Ledger is the run's ledger.
func (r Records) Ledger() string { return r.Dir + "/ledger.jsonl" }

// Paths are the run's three records.
func (r Records) Paths() []string { return []string{r.Brief(), r.Goals(), r.Ledger()} }

// RecordPaths are the repository paths of every run's records: RunsDir
// and the legacy records. What the tests judge is a tree without them.
var RecordPaths = append([]string{RunsDir}, LegacyRecords.Paths()...)

// IsRecord reports whether p (a repository path) is one of a run's
// records.
func IsRecord(p string) bool {
	return strings.HasPrefix(p, RunsDir+"/") || slices.Contains(LegacyRecords.Paths(), p)
}

// Status is where a goal stands.
type Status string

const (
	Pending           Status = "pending"
	InProgress        Status = "in_progress"
	Complete          Status = "complete"
	Failed            Status = "failed"
	Blocked           Status = "blocked"
	NeedsUserDecision Status = "needs_user_decision"
)

// Done reports that nothing more happens to a goal with this status
// unless a person acts.
func (s Status) Done() bool {
	return s == Complete || s == Failed || s == Blocked || s == NeedsUserDecision
}

// CriterionStatus is the last result of a criterion's check.
type CriterionStatus string

const (
	CriterionPending CriterionStatus = "pending"
	CriterionPass    CriterionStatus = "pass"
	CriterionFail    CriterionStatus = "fail"
	CriterionBlocked CriterionStatus = "blocked"
)

// UserModel is whose point of view a criterion takes.
type UserModel string

const (
	Happy       UserModel = "happy"
	Edge        UserModel = "edge"
	Regression  UserModel = "regression"
	Adversarial UserModel = "adversarial"
)

// UserModels lists every user model.
var UserModels = []UserModel{Happy, Edge, Regression, Adversarial}

// Channel is how ultra runs a criterion's scenario.
type Channel string

const (
	ChannelCommand Channel = "command"
	ChannelHTTP    Channel = "http"
	ChannelTmux    Channel = "tmux"
	ChannelBrowser Channel = "browser"
	ChannelDesktop Channel = "desktop"
)

// Channels lists every channel.
var Channels = []Channel{ChannelCommand, ChannelHTTP, ChannelTmux, ChannelBrowser, ChannelDesktop}

// Check is what ultra runs for a criterion; which fields apply depends on
// the channel. Every expect_* text field is a regular expression (Go
// syntax, unanchored, multi-line: ^ and $ match at each line's start and
// end).
//
//	command: run, expect_exit, expect_stdout, expect_stderr
//	http:    start, port, method, path, headers, body, expect_status, expect_body, expect_json
//	tmux:    start, steps [{keys, expect}], width, height
//	browser: start, url, steps [{click} | {type: {selector, text}} | {wait_text}], expect_text, expect_selector
//	desktop: start, steps [{click} | {click_at: {x, y}} | {type: {text}} | {key} | {wait_text} | {screenshot}], expect_text, width, height
type Check struct {
	// command
	Run          string `json:"run,omitempty"`
	ExpectExit   *int   `json:"expect_exit,omitempty"`
	ExpectStdout string `json:"expect_stdout,omitempty"`
	ExpectStderr string `json:"expect_stderr,omitempty"`

	// http, tmux, browser, desktop: the command that starts the program
	// under test (a server for http and browser, the program in the pane
	// for tmux, a GUI program on a private X display for desktop).
	Start string `json:"start,omitempty"`

	// http
	Port         int               `json:"port,omitempty"`
	Method       string            `json:"method,omitempty"`
	Path         string            `json:"path,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	Body         string            `json:"body,omitempty"`
	ExpectStatus int               `json:"expect_status,omitempty"`
	ExpectBody   string            `json:"expect_body,omitempty"`
	// ExpectJSON asserts values in a JSON answer: a dotted path (a.b.0.c)
	// to a pattern its value (as JSON text, strings unquoted) must match.
	ExpectJSON map[string]string `json:"expect_json,omitempty"`

	// tmux, browser and desktop
	Steps []Step `json:"steps,omitempty"`
	// tmux: the pane's size (default 120×40); desktop: the screen's size
	// in pixels (default 1024×768).
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`

	// browser (and desktop: expect_text, the text read off the screen)
	URL            string `json:"url,omitempty"`
	ExpectText     string `json:"expect_text,omitempty"`
	ExpectSelector string `json:"expect_selector,omitempty"`

	// TimeoutSeconds bounds the whole check (default 60).
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// Step is one step of a tmux, browser or desktop check: exactly one
// action (tmux: keys, expect or both).
type Step struct {
	// tmux: keys to send (tmux send-keys syntax: "ls Enter", "C-c"), then
	// text the pane must show.
	Keys   string `json:"keys,omitempty"`
	Expect string `json:"expect,omitempty"`
	// browser: click a CSS selector, type into one, wait for a pattern in
	// the page's text. desktop: click the text read off the screen (one or
	// more words, as shown), type text into the focused window, wait for
	// a pattern in the screen's text.
	Click    string    `json:"click,omitempty"`
	Type     *TypeStep `json:"type,omitempty"`
	WaitText string    `json:"wait_text,omitempty"`
	// desktop: click at a point of the screen; press keys (xdotool key
	// names, "Return", "ctrl+s"); keep a screenshot of the screen now.
	ClickAt    *Point `json:"click_at,omitempty"`
	Key        string `json:"key,omitempty"`
	Screenshot bool   `json:"screenshot,omitempty"`
}

// Point is a place on a desktop check's screen, in pixels from its top
// left corner.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// TypeStep types text into the element a CSS selector names (browser) or
// into the focused window (desktop: no selector).
type TypeStep struct {
	Selector string `json:"selector"`
	Text     string `json:"text"`
}

// Evidence is what ultra captured when it ran a criterion's check.
type Evidence struct {
	Summary string         `json:"summary"`           // short; what the model is told
	Files   []EvidenceFile `json:"files,omitempty"`   // full artifacts, on disk
	Receipt string         `json:"receipt,omitempty"` // what the check started and stopped
	Tree    string         `json:"tree,omitempty"`    // the tree the check ran on
	Ledger  int            `json:"ledger,omitempty"`  // the ledger entry that records it
}

// EvidenceFile is one artifact, relative to the repository root.
type EvidenceFile struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// Criterion is one success criterion of a goal, as goals.json holds it.
type Criterion struct {
	ID        string    `json:"id"` // G001-C1
	Scenario  string    `json:"scenario"`
	UserModel UserModel `json:"userModel"`
	// Surface is what the scenario exercises (cli, data, http, terminal,
	// web, desktop); criteria recorded before it existed have none
	// (SurfaceOf: their channel's).
	Surface          Surface `json:"surface,omitempty"`
	Channel          Channel `json:"channel"`
	Check            Check   `json:"check"`
	ExpectedEvidence string  `json:"expectedEvidence"`
	Essential        bool    `json:"essential"`
	// StopCondition says when to stop trying: after MaxSameFailures
	// identical failures the goal fails with a diagnosis.
	StopCondition    string          `json:"stopCondition,omitempty"`
	Status           CriterionStatus `json:"status"`
	CapturedEvidence *Evidence       `json:"capturedEvidence,omitempty"`
	CapturedAt       *time.Time      `json:"capturedAt,omitempty"`
	// LastFailure is the signature of the last failure and how many times
	// in a row it was the same.
	LastFailure  string `json:"lastFailure,omitempty"`
	SameFailures int    `json:"sameFailures,omitempty"`
	// Superseded: steering marked it blocked or superseded; it no longer
	// decides its goal.
	Superseded string `json:"superseded,omitempty"`
	// Expect is what the criterion's result on the run's base tree must
	// be: FailToPass (it shows the change: it fails before and must pass
	// after) or PassToPass (a regression criterion, or any criterion of a
	// refactor: it passes before and must keep passing).
	Expect string `json:"expect,omitempty"`
	// Base is the criterion's result on the base tree, which ultra
	// measured before the plan was accepted.
	Base *BaseResult `json:"base,omitempty"`
	// Recheck is its result on the base tree again, at the last final
	// gate: a fail-to-pass criterion must still fail there.
	Recheck *BaseResult `json:"recheck,omitempty"`
}

// What a criterion's result on the run's base tree must be.
const (
	FailToPass = "fail_to_pass"
	PassToPass = "pass_to_pass"
)

// ExpectFor is what the base tree must do with a criterion of user model
// m that does or does not only read files (ReadsOnly), in a goal that is
// (or is not) a refactor: regression criteria must pass there, and so
// must a refactor's criteria that run the program (its behaviour stays
// the same); the others must not (a refactor's criteria that read files
// show the change of its text: documentation, comments).
func ExpectFor(m UserModel, readsOnly, refactor bool) string {
	if m == Regression || refactor && !readsOnly {
		return PassToPass
	}
	return FailToPass
}

// BaseResult is what ultra observed when it ran a criterion's check on
// the code the run started from.
type BaseResult struct {
	Status  CriterionStatus `json:"status"`
	Summary string          `json:"summary"`
	Reason  string          `json:"reason,omitempty"`
	Tree    string          `json:"tree,omitempty"` // the base code tree (without ultra's records)
	Files   []EvidenceFile  `json:"files,omitempty"`
	At      time.Time       `json:"at"`
	Ledger  int             `json:"ledger,omitempty"` // the criterion_base entry
	// NotRun says why the check was not run on the base (a person added
	// the criterion by steering a stopped run); Status is then pending.
	NotRun string `json:"notRun,omitempty"`
}

// Discriminates reports whether a base result is what expect asks: a
// fail-to-pass criterion must not pass on the base (a fail, or a check
// the base cannot even run, counts as failing), a pass-to-pass one must
// pass there.
func Discriminates(expect string, base CriterionStatus) bool {
	if expect == PassToPass {
		return base == CriterionPass
	}
	return base == CriterionFail || base == CriterionBlocked
}

// Goal is one goal of a brief.
type Goal struct {
	ID          string     `json:"id"` // G001-slug
	Title       string     `json:"title"`
	Objective   string     `json:"objective"`
	Status      Status     `json:"status"`
	Attempt     int        `json:"attempt"` // build/verify cycles used
	CreatedAt   time.Time  `json:"createdAt"`
	StartedAt   *time.Time `json:"startedAt,omitempty"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
	Commit      string     `json:"commit,omitempty"`
	Reason      string     `json:"reason,omitempty"` // why it failed, is blocked or waits for a person
	// Refactor: the goal asks for no change of behaviour (a person
	// declared the run a refactor), so all its criteria are pass-to-pass.
	Refactor bool `json:"refactor,omitempty"`
	// DependsOn are the ids of the goals this one needs first: it starts
	// only after them (see Order), and in a parallel run its work starts
	// from a run branch that holds theirs.
	DependsOn       []string    `json:"dependsOn,omitempty"`
	SuccessCriteria []Criterion `json:"successCriteria"`
}

// Acceptance records who froze the plan and its digest.
type Acceptance struct {
	By     string    `json:"by"` // "person" or "autonomous run control"
	At     time.Time `json:"at"`
	Digest string    `json:"digest"` // PlanDigest of the accepted goals
	Ledger int       `json:"ledger"` // the plan_accepted entry
}

// File is a run's goals.json.
type File struct {
	Version  int         `json:"version"`
	Run      string      `json:"run"`
	Brief    string      `json:"brief,omitempty"` // Records.Brief when the run has one
	Accepted *Acceptance `json:"accepted,omitempty"`
	Goals    []Goal      `json:"goals"`
	// Review is the final review's state: rounds used and the last verdict.
	Review *Review `json:"review,omitempty"`
}

// Review is the state of the final review.
type Review struct {
	Rounds   int       `json:"rounds"`
	Verdict  string    `json:"verdict,omitempty"` // approve | blockers (older records: APPROVE | REQUEST_CHANGES)
	Blockers []Blocker `json:"blockers,omitempty"`
	// Architecture is the last verdict's architecture status, CLEAR,
	// CONCERNS or BLOCKED ("" in older records), and its reasons (what
	// must change, unless CLEAR).
	Architecture        string   `json:"architecture,omitempty"`
	ArchitectureReasons []string `json:"architecture_reasons,omitempty"`
}

// Blocker is one finding that keeps a reviewer from approving.
type Blocker struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

// Goal returns the goal with id, or nil.
func (f *File) Goal(id string) *Goal {
	for i := range f.Goals {
		if f.Goals[i].ID == id {
			return &f.Goals[i]
		}
	}
	return nil
}

// Current is the goal being worked on: the first in progress, else the
// first pending in the goals' order (Order: the list's, except that a goal
// comes after those it depends on); nil when none is left.
func (f *File) Current() *Goal {
	for i := range f.Goals {
		if f.Goals[i].Status == InProgress {
			return &f.Goals[i]
		}
	}
	for _, i := range Order(f.Goals) {
		if f.Goals[i].Status == Pending {
			return &f.Goals[i]
		}
	}
	return nil
}

// Criterion returns the criterion with id of goal g, or nil.
func (g *Goal) Criterion(id string) *Criterion {
	for i := range g.SuccessCriteria {
		if g.SuccessCriteria[i].ID == id {
			return &g.SuccessCriteria[i]
		}
	}
	return nil
}

// Encode is goals.json's bytes: indented, stable, ending in a newline.
func (f *File) Encode() []byte {
	b, _ := json.MarshalIndent(f, "", "  ")
	return append(b, '\n')
}

// Digest is the sha256 of b, hex.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// PlanDigest is the digest of what acceptance freezes: each goal's id,
// title, objective and criteria definitions (not their statuses or
// evidence).
func PlanDigest(goals []Goal) string {
	type crit struct {
		ID, Scenario     string
		UserModel        UserModel
		Surface          Surface `json:",omitempty"`
		Channel          Channel
		Check            Check
		ExpectedEvidence string
		Essential        bool
		Superseded       string
		Expect           string `json:",omitempty"`
	}
	type g struct {
		ID, Title, Objective string
		Refactor             bool     `json:",omitempty"`
		DependsOn            []string `json:",omitempty"`
		Criteria             []crit
	}
	var out []g
	for _, x := range goals {
		e := g{ID: x.ID, Title: x.Title, Objective: x.Objective, Refactor: x.Refactor, DependsOn: x.DependsOn}
		for _, c := range x.SuccessCriteria {
			e.Criteria = append(e.Criteria, crit{c.ID, c.Scenario, c.UserModel, c.Surface, c.Channel, c.Check, c.ExpectedEvidence, c.Essential, c.Superseded, c.Expect})
		}
		out = append(out, e)
	}
	b, _ := json.Marshal(out)
	return Digest(b)
}

// Proposal is the planner's goals{...} call: the interface scripts and
// other tools rely on (fields may be added; these stay).
type Proposal struct {
	Goals []ProposedGoal `json:"goals"`
}

// ProposedGoal is one goal of a proposal.
type ProposedGoal struct {
	Title     string              `json:"title"`
	Objective string              `json:"objective"`
	Criteria  []ProposedCriterion `json:"criteria"`
	// Refactor: the goal changes no behaviour, so its criteria are all
	// pass-to-pass. Only a run a person declared a refactor takes it.
	Refactor bool `json:"refactor,omitempty"`
	// DependsOn names the goals this one needs first, by their number
	// (G001 is the first goal proposed) or their id.
	DependsOn []string `json:"depends_on,omitempty"`
}

// ProposedCriterion is one criterion of a proposed goal.
type ProposedCriterion struct {
	Scenario  string    `json:"scenario"`
	UserModel UserModel `json:"user_model"`
	// Surface is what the scenario exercises; without one, the
	// channel's (DefaultSurface).
	Surface          Surface `json:"surface,omitempty"`
	Channel          Channel `json:"channel"`
	Check            Check   `json:"check"`
	ExpectedEvidence string  `json:"expected_evidence"`
	// Essential defaults to true: a goal completes only when every
	// essential criterion passes.
	Essential     *bool  `json:"essential,omitempty"`
	StopCondition string `json:"stop_condition,omitempty"`
}

// Caps counted in code.
const (
	// MaxCycles is how many build/verify cycles a goal may use.
	MaxCycles = 5
	// MaxSameFailures is how many identical failures of one criterion in
	// a row fail its goal.
	MaxSameFailures = 3
	// MaxReviewRounds is how often the final review may send the run back
	// before it escalates.
	MaxReviewRounds = 2
)
