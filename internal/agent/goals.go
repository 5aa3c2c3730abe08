package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tool"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// goalState is what a run with goals keeps in the store beside
// goals.json and the ledger, which live in its worktree.
type goalState struct {
	// Brief is the brief's text when the run was started with one.
	Brief string `json:"brief,omitempty"`
	// PlanOnly: the run stops at the acceptance point whatever its run
	// control (ultra plan).
	PlanOnly bool `json:"plan_only,omitempty"`
	// Continue: a goal that fails its caps does not stop the run, which
	// moves on to the next goal (goals.on_failure = continue, fixed when
	// the run started).
	Continue bool `json:"continue,omitempty"`
	// Final: the last goal completed; every verification now is the final
	// gate (every criterion of every goal).
	Final bool `json:"final,omitempty"`
	// FinalAttempts counts the final gate's verifications.
	FinalAttempts int `json:"final_attempts,omitempty"`
	// NoCleanup: a final gate that passes goes straight to the review,
	// without a cleanup pass (goals.cleanup = false, fixed when the run
	// started).
	NoCleanup bool `json:"no_cleanup,omitempty"`
	// Cleanups counts the cleanup passes (one per final gate that passed).
	Cleanups int `json:"cleanups,omitempty"`
	// Cleanup is the cleanup pass in hand (cleanup.go).
	Cleanup *cleanupState `json:"cleanup,omitempty"`
	// Reverted are the trees of cleanups ultra reverted: none of them is
	// ever committed.
	Reverted []string `json:"reverted,omitempty"`
	// LedgerSeq and LedgerHash are the ledger's head as ultra last wrote
	// it: a chain recomputed after a hand edit no longer holds them.
	LedgerSeq  int    `json:"ledger_seq,omitempty"`
	LedgerHash string `json:"ledger_hash,omitempty"`
	// ReviewRound is the final review's round (1 for the first).
	ReviewRound int `json:"review_round,omitempty"`
	// Review is the reviewer's own conversation: a fresh context, apart
	// from the run's history.
	Review []llm.Message `json:"review,omitempty"`
	// StartCode is, for each goal, the code (the tree without ultra's
	// records) when it started: a goal completes only with a change.
	StartCode map[string]string `json:"start_code,omitempty"`
	// Refactor: a person declared the run a refactor (no change of
	// behaviour): its goals may be refactor goals.
	Refactor bool `json:"refactor,omitempty"`
	// Records is where the run keeps its brief, goals.json and ledger
	// (goal.RunRecords); "" for a run started before records were per
	// run, which keeps them in .ultra/ itself.
	Records string `json:"records,omitempty"`
	// Parallel is set for a run whose goals workers work at the same
	// time (ultra run --parallel N): parallel.go.
	Parallel *parallelState `json:"parallel,omitempty"`
	// Worker is set for a worker of a parallel run: its one goal is the
	// run's, and its work lands on the run's branch (worker.go).
	Worker *workerState `json:"worker,omitempty"`
}

// goalArtifacts are the repository paths of every run's records: the
// code the tests judge is a tree without them.
var goalArtifacts = goal.RecordPaths

// records are where the run keeps its records.
func (g *goalState) records() goal.Records {
	if g == nil || g.Records == "" {
		return goal.LegacyRecords
	}
	return goal.Records{Dir: g.Records}
}

// RecordsOf are where run row keeps its records (those of a new run when
// its state cannot be read).
func RecordsOf(row *store.Run) goal.Records {
	st, err := decodeState(row)
	if err != nil || st.Goals == nil {
		return goal.RunRecords(row.ID)
	}
	return st.Goals.records()
}

// recordsDir is the worktree's directory of rec, made when missing. Each
// of its parts must be a real directory: ultra never writes through a
// link.
func recordsDir(workdir string, rec goal.Records) (string, error) {
	dir := workdir
	for _, part := range strings.Split(rec.Dir, "/") {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(dir, 0o755); err != nil {
				return "", err
			}
		case err != nil:
			return "", err
		case !fi.IsDir():
			return "", fmt.Errorf("%s is not a directory (a link or a file): ultra does not write its records through it", dir)
		}
	}
	return dir, nil
}

// writeArtifact writes one record of rec (name relative to its
// directory) as a whole: a temporary file renamed over it, never through
// a link.
func writeArtifact(workdir string, rec goal.Records, name string, data []byte) error {
	dir, err := recordsDir(workdir, rec)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tmp := name + ".next"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return renameSynced(dir, tmp, name)
}

// renameSynced renames old to name within dir (never through a link)
// and syncs dir, so that the rename survives a power loss.
func renameSynced(dir, old, name string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Rename(old, name); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// goalsPath is the path of a goal artifact in workdir.
func goalsPath(workdir, rel string) string { return filepath.Join(workdir, filepath.FromSlash(rel)) }

// ReadGoals reads the goals.json of rec in a worktree; nil when there is
// none.
func ReadGoals(workdir string, rec goal.Records) (*goal.File, error) {
	b, err := os.ReadFile(goalsPath(workdir, rec.Goals()))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f goal.File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", rec.Goals(), err)
	}
	if f.Version != goal.SchemaVersion {
		return nil, fmt.Errorf("%s: version %d, this ultra reads version %d", rec.Goals(), f.Version, goal.SchemaVersion)
	}
	return &f, nil
}

// goalsRecordedDigest is the goals.json digest the ledger's last entry
// recorded ("" when none did).
func goalsRecordedDigest(entries []ledger.Entry) string {
	for i := len(entries) - 1; i >= 0; i-- {
		var d struct {
			Goals string `json:"goals"`
		}
		if json.Unmarshal(entries[i].Data, &d) == nil && d.Goals != "" {
			return d.Goals
		}
	}
	return ""
}

// CheckGoals checks a worktree's goal records: the ledger's chain is
// whole, still holds the head ultra last wrote (seq, hash; 0 for none
// known) and goals.json is the one the ledger last recorded. A change
// ultra recorded in the ledger but had not yet put in place when it was
// stopped is completed; one it had not recorded is dropped.
func CheckGoals(workdir string, rec goal.Records, seq int, hash string) error {
	return checkGoals(workdir, rec, seq, hash, true)
}

// CheckRecorded checks a stored run's goal records as CheckGoals does,
// changing nothing (ultra goals ledger --verify).
func CheckRecorded(_ context.Context, _ string, row *store.Run) error {
	st, err := decodeState(row)
	if err != nil {
		return err
	}
	if st.Goals == nil {
		return nil
	}
	rec := st.Goals.records()
	if err := checkGoals(row.Workdir, rec, st.Goals.LedgerSeq, st.Goals.LedgerHash, false); err != nil {
		return err
	}
	return checkArtifacts(row, rec, true)
}

// CheckShared checks the records of a fleet's run as ViewShared rebuilt
// them from the shared store, as CheckRecorded checks a run's own, but
// for the evidence files: they stay on the machine that captured them.
func CheckShared(row *store.Run) error {
	st, err := decodeState(row)
	if err != nil || st.Goals == nil {
		return err
	}
	rec := st.Goals.records()
	if err := checkGoals(row.Workdir, rec, st.Goals.LedgerSeq, st.Goals.LedgerHash, false); err != nil {
		return err
	}
	return checkArtifacts(row, rec, false)
}

// checkArtifacts checks what the ledger names beside goals.json: each
// evidence file (under the repository's state) has the sha256 the ledger
// recorded, and the brief is the one the plan was made from.
func checkArtifacts(row *store.Run, rec goal.Records, evidence bool) error {
	entries, err := ledger.Read(goalsPath(row.Workdir, rec.Ledger()))
	if err != nil {
		return err
	}
	root := row.Repo
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r // links above the repository are the person's, not the records'
	}
	for _, e := range entries {
		for _, f := range e.Evidence {
			if !evidence {
				break
			}
			p := filepath.Join(root, filepath.FromSlash(f.Path))
			if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
				return fmt.Errorf("evidence %s named in %s line %d is reached through a link (%s): not the file ultra wrote", f.Path, rec.Ledger(), e.Seq, real)
			}
			b, err := os.ReadFile(p)
			switch {
			case err != nil:
				return fmt.Errorf("evidence %s named in %s line %d: %w", f.Path, rec.Ledger(), e.Seq, err)
			case goal.Digest(b) != f.SHA256:
				return fmt.Errorf("evidence %s was changed after ultra captured it (%s line %d records sha256 %s, the file has %s)",
					f.Path, rec.Ledger(), e.Seq, workspace.Short(f.SHA256), workspace.Short(goal.Digest(b)))
			}
		}
		var d struct {
			Brief *string `json:"brief"`
		}
		if e.Kind == ledger.KindPlanCreated && json.Unmarshal(e.Data, &d) == nil && d.Brief != nil {
			b, err := os.ReadFile(goalsPath(row.Workdir, rec.Brief()))
			got := ""
			if err == nil {
				got = goal.Digest(b)
			}
			if got != *d.Brief {
				return fmt.Errorf("%s is not the brief the plan was made from (%s line %d)", rec.Brief(), rec.Ledger(), e.Seq)
			}
		}
	}
	return nil
}

func checkGoals(workdir string, rec goal.Records, seq int, hash string, repair bool) error {
	dir := workdir
	for _, part := range strings.Split(rec.Dir, "/") {
		dir = filepath.Join(dir, part)
		if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
			return fmt.Errorf("%s is not a directory (a link or a file): ultra's records are not where ultra wrote them", dir)
		}
	}
	path := goalsPath(workdir, rec.Ledger())
	l, err := ledger.Open(path)
	if err != nil {
		return err
	}
	if seq > 0 {
		if err := ledger.VerifyHead(path, seq, hash); err != nil {
			return err
		}
	}
	// Every entry carries a MAC only ultra can make: a line appended or
	// rewritten outside it, chain recomputed or not, does not.
	for _, e := range l.Entries() {
		unsigned, err := ledger.Unsigned(e)
		if err != nil || !gatefile.ValidMACAt(path, unsigned, e.MAC) {
			return fmt.Errorf("%s line %d (%s) does not carry ultra's signature: it was written or changed outside ultra", rec.Ledger(), e.Seq, e.Kind)
		}
	}
	want := goalsRecordedDigest(l.Entries())
	next := goalsPath(workdir, rec.Goals()) + ".next"
	if b, err := os.ReadFile(next); err == nil && repair {
		if want != "" && goal.Digest(b) == want {
			if err := os.Rename(next, goalsPath(workdir, rec.Goals())); err != nil {
				return err
			}
		} else {
			_ = os.Remove(next)
		}
	}
	b, err := os.ReadFile(goalsPath(workdir, rec.Goals()))
	if errors.Is(err, fs.ErrNotExist) {
		if want != "" {
			return fmt.Errorf("%s is missing, but the ledger records it (digest %s): restore it from the run's branch", rec.Goals(), workspace.Short(want))
		}
		return nil
	}
	if err != nil {
		return err
	}
	if got := goal.Digest(b); want != "" && got != want {
		return fmt.Errorf("%s was changed outside ultra: its digest is %s, the ledger's last entry records %s (restore it from the run's branch, e.g. git checkout -- %s)",
			rec.Goals(), workspace.Short(got), workspace.Short(want), rec.Goals())
	}
	return nil
}

// goalRecorder writes a run's goals.json and ledger, in that order of
// intent: the new goals.json is staged beside the old one, the ledger
// entry that records its digest is appended, then it is put in place (see
// CheckGoals for what a crash in between leaves).
type goalRecorder struct {
	workdir string
	rec     goal.Records
	run     string
	file    *goal.File
	ledger  *ledger.Ledger
	// ahead are the checks of the verification under way, started
	// beside its tests (startAhead); nil between verifications.
	ahead *ahead
}

func openRecorder(workdir string, rec goal.Records, run string) (*goalRecorder, error) {
	if _, err := recordsDir(workdir, rec); err != nil {
		return nil, err
	}
	l, err := ledger.Open(goalsPath(workdir, rec.Ledger()))
	if err != nil {
		return nil, err
	}
	l.Sign = gatefile.MAC
	f, err := ReadGoals(workdir, rec)
	if err != nil {
		return nil, err
	}
	return &goalRecorder{workdir: workdir, rec: rec, run: run, file: f, ledger: l}, nil
}

// record appends e to the ledger with the digest of goals.json as it
// stands now (written first when it changed).
func (g *goalRecorder) record(e ledger.Entry) (ledger.Entry, error) {
	e.Run = g.run
	data := map[string]any{}
	if len(e.Data) > 0 {
		_ = json.Unmarshal(e.Data, &data)
	}
	var staged []byte
	if g.file != nil {
		staged = g.file.Encode()
		data["goals"] = goal.Digest(staged)
		if err := writeArtifact(g.workdir, g.rec, path.Base(g.rec.Goals())+".next", staged); err != nil {
			return e, fmt.Errorf("writing goals.json: %w", err)
		}
	}
	e.Data, _ = json.Marshal(data)
	out, err := g.ledger.Append(e)
	if err != nil {
		return out, fmt.Errorf("appending to the ledger: %w", err)
	}
	if staged != nil {
		name := path.Base(g.rec.Goals())
		if err := renameSynced(goalsPath(g.workdir, g.rec.Dir), name+".next", name); err != nil {
			return out, err
		}
	}
	return out, nil
}

// recordGoal appends a ledger entry for the run and keeps its head.
func (r *runner) recordGoal(e ledger.Entry) ledger.Entry {
	if r.goals == nil {
		return e
	}
	out, err := r.goals.record(e)
	if out.Seq > 0 {
		// Appended, whatever failed after: the head moved.
		r.st.Goals.LedgerSeq, r.st.Goals.LedgerHash = r.goals.ledger.Head()
	}
	if err != nil {
		r.emit(event.Warning, event.WarningData{Message: "goal records: " + err.Error()})
		r.goalsBroken = err
		return out
	}
	r.emit(event.Ledger, event.LedgerData{Seq: out.Seq, Kind: out.Kind, Goal: out.Goal, Criterion: out.Criterion, Text: out.Text})
	return out
}

// briefText is what the person asked of the run: its brief, or its task.
func (r *runner) briefText() string {
	if r.st.Goals != nil && r.st.Goals.Brief != "" {
		return r.st.Goals.Brief
	}
	return r.row.Task
}

// hasGoals reports that the run works through goals.
func (r *runner) hasGoals() bool { return r.st.Goals != nil && r.goals != nil }

// goalsSchema is the goals tool's input; the full shape is documented in
// docs/goals.md and docs/goals.schema.json.
var goalsSchema = json.RawMessage(`{"type":"object","properties":{"goals":{"type":"array","items":{"type":"object","properties":{` +
	`"title":{"type":"string"},"objective":{"type":"string"},"criteria":{"type":"array","items":{"type":"object","properties":{` +
	`"scenario":{"type":"string"},"user_model":{"type":"string","enum":["happy","edge","regression","adversarial"]},` +
	`"surface":{"type":"string","enum":["cli","data","http","terminal","web","desktop"],"description":"what the scenario exercises as a user meets it: cli (a command's output) and data (files, a database) are proven by the command channel; http (an endpoint) only by http, terminal (a terminal program's screen) only by tmux, web (a page) only by browser, desktop (a window) only by desktop. Default: the channel's (command: cli)"},` +
	`"channel":{"type":"string","enum":["command","http","tmux","browser","desktop"]},` +
	`"check":{"type":"object","description":"command: {run, expect_exit, expect_stdout, expect_stderr}; http: {start, port, method, path, headers, body, expect_status, expect_body, expect_json}; tmux: {start, steps:[{keys, expect}]}; browser: {start, url, steps:[{click}|{type:{selector,text}}|{wait_text}], expect_text, expect_selector}; desktop (a GUI program on a private X screen, its text read by OCR): {start, steps:[{click: text on the screen}|{click_at:{x,y}}|{type:{text}}|{key: \"Return ctrl+s\"}|{wait_text}|{screenshot:true}], expect_text, width, height}. expect_* are regular expressions."},` +
	`"expected_evidence":{"type":"string"},"essential":{"type":"boolean"}},"required":["scenario","user_model","channel","check","expected_evidence"]}},` +
	`"depends_on":{"type":"array","items":{"type":"string"},"description":"goals this one needs first, by number (G001 is the first goal proposed); the others may be worked at the same time"},` +
	`"refactor":{"type":"boolean","description":"the goal changes no behaviour (only in a run a person declared a refactor): its criteria that run the program pass before and after, those that only read its text (docs, comments) must change"}},` +
	`"required":["title","objective","criteria"]}}},"required":["goals"],"additionalProperties":false}`)

func (r *runner) goalsTool() tool.Tool {
	return funcTool{
		spec: llm.ToolSpec{Name: "goals", Parameters: goalsSchema,
			Description: "Propose the goals and their success criteria (leaves planning once accepted). Each goal needs at least 3 criteria: a happy path, an edge and a regression or adversarial case; ultra runs every check itself (command, http, tmux, browser) and only what it observes counts. " +
				"Criteria must discriminate: before accepting, ultra runs every check on the code as it is now (the base tree). A happy, edge or adversarial check must FAIL there (it shows the change; a program that does not exist yet counts as failing) and pass after; a regression check must PASS there and keep passing. A check whose result does not depend on the change is refused. " +
				"Each goal needs an essential check that fails on the base tree and RUNS something (the program, its tests, a server): checks that only read files (grep, cat, test, wc, go build) show what the code says, not what it does. Every criterion is essential (only a person makes one optional). " +
				"A command check asserts only what it names: give expect_exit, expect_stdout or expect_stderr. " +
				"User-facing behaviour is proven through its channel: a goal or brief that describes an endpoint, a web page, a terminal program's screen or a window needs a criterion on that surface (http, web, terminal, desktop), run through the http, browser, tmux or desktop channel; command output (curl | grep) proves only the cli and data surfaces. A goal that changes no behaviour is a refactor (refactor: true), which only a run a person declared a refactor takes: its checks that run the program pass before and after, those that read its text must change."},
		run: r.runGoals,
	}
}

func (r *runner) runGoals(ctx context.Context, args json.RawMessage) tool.Result {
	if r.st.Phase.Phase != phase.Planning {
		return r.refuse(llm.ToolCall{ID: r.callID, Name: "goals"}, &refusal{layer: LayerPhaseGuard,
			reason: "goals are proposed only in planning; after acceptance they change only through steering"})
	}
	p, err := goal.DecodeProposal(args)
	if err != nil {
		return tool.Result{IsError: true, Malformed: true, Output: "invalid arguments for goals: " + err.Error()}
	}
	probs := p.Validate()
	for gi, g := range p.Goals {
		for ci, c := range g.Criteria {
			if why := channelMissing(c.Channel); why != "" {
				probs = append(probs, goal.Problem{Where: fmt.Sprintf("goals[%d].criteria[%d].channel", gi, ci), What: why})
			}
		}
	}
	at := func(i int) string { return fmt.Sprintf("goals[%d]", i) }
	probs = append(probs, goal.BriefSurfaceProblems(p.Goals, r.briefText())...)
	probs = append(probs, r.refactorProblems(p.Goals, at)...)
	probs = append(probs, essentialProblems(p.Goals, at)...)
	now := r.o.Now().UTC()
	if len(probs) > 0 {
		// The valid criteria run on the base tree all the same: the
		// planner learns everything wrong with the proposal at once.
		probs = append(probs, r.validBaseProblems(ctx, p.ToGoals(now), probs, at)...)
		if ctx.Err() != nil {
			return tool.Result{IsError: true, Output: "interrupted while the criteria ran on the base tree"}
		}
		return proposalRefused(probs, "")
	}
	goals := p.ToGoals(now)
	// The rule behind every check: it must discriminate on the code the
	// run started from.
	if probs := r.baseProblems(ctx, goals, "base", at); len(probs) > 0 {
		if ctx.Err() != nil {
			return tool.Result{IsError: true, Output: "interrupted while the criteria ran on the base tree"}
		}
		return proposalRefused(probs, "Every criterion ran on the code this run started from (the base tree), contained, as it will run after the change. ")
	}
	r.goals.file = &goal.File{Version: goal.SchemaVersion, Run: r.row.ID, Goals: goals}
	if r.st.Goals.Brief != "" {
		r.goals.file.Brief = r.goals.rec.Brief()
	}
	digest := goal.PlanDigest(r.goals.file.Goals)
	brief := ""
	if b, err := os.ReadFile(goalsPath(r.row.Workdir, r.goals.rec.Brief())); err == nil {
		brief = goal.Digest(b)
	}
	r.recordGoal(ledger.Entry{Kind: ledger.KindPlanCreated, Digest: digest, Text: planCounts(r.goals.file), Data: jsonData(map[string]any{"brief": brief})})
	r.recordBase(r.goals.file.Goals)
	if r.goalsBroken != nil {
		return tool.Result{IsError: true, Output: "ultra could not record the goals: " + r.goalsBroken.Error()}
	}
	r.st.PendingPlan = planSummary(r.goals.file)
	byPerson := r.planAllowedNow()
	if (!r.row.Axes.AcceptsPlanWithoutPerson() && !byPerson) || r.st.Goals.PlanOnly || r.row.Axes.Mode == phase.Plan {
		r.emit(event.PlanProposed, event.PlanProposedData{Plan: r.st.PendingPlan, Accepted: false, By: r.row.Axes.Control})
		return tool.Result{Output: fmt.Sprintf("Goals recorded (%s). A person must accept them (ultra approve %s). The run pauses until then.",
			planCounts(r.goals.file), r.row.ID)}
	}
	if byPerson {
		r.acceptPlan(phase.ByPerson, "accepted by a person, who allowed the goals call that proposed it")
	} else {
		r.acceptPlan(phase.ByModel, "goals accepted by code validation (autonomous)")
	}
	if ps := r.st.Goals.Parallel; ps != nil {
		return tool.Result{Output: fmt.Sprintf("Goals accepted and frozen (%s). ultra now gives them to up to %d workers, each in a worktree of its own, and lands each goal on this run's branch when its merged tree passes; you will be told when every goal has landed.",
			planCounts(r.goals.file), ps.Workers)}
	}
	g := r.goals.file.Current()
	return tool.Result{Output: fmt.Sprintf("Goals accepted and frozen (%s). Phase is now building, goal %s: %s.\n%s\nWhen it is ready, call phase{to:\"verifying\"}: ultra runs the tests and this goal's criteria.",
		planCounts(r.goals.file), g.ID, g.Title, criteriaList(g))}
}

// proposalRefused is the goals tool's refusal, listing every problem;
// lead says what ultra did first.
func proposalRefused(probs []goal.Problem, lead string) tool.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "%sThe proposal was refused; fix these and call goals again:\n", lead)
	for _, pr := range probs {
		fmt.Fprintf(&b, "- %s\n", pr)
	}
	return tool.Result{IsError: true, Output: strings.TrimSpace(b.String())}
}

// channelMissing says why a channel's criteria could never pass on this
// machine, or "".
func channelMissing(ch goal.Channel) string {
	switch ch {
	case goal.ChannelTmux:
		if _, err := exec.LookPath("tmux"); err != nil {
			return "tmux is not installed here, so a tmux criterion could never pass: use another channel (a person can install it: apt-get install tmux)"
		}
	case goal.ChannelBrowser:
		if check.FindChromium("") == "" {
			return "chromium is not installed here, so a browser criterion could never pass: use another channel (a person can install it: apt-get install chromium)"
		}
	case goal.ChannelDesktop:
		if why := check.DesktopMissing(); why != "" {
			return why + " is needed here, so a desktop criterion could never pass: use another channel (a person can install them)"
		}
	}
	return ""
}

// planCounts is "3 goals, 10 criteria".
func planCounts(f *goal.File) string {
	n := 0
	for _, g := range f.Goals {
		n += len(g.SuccessCriteria)
	}
	return fmt.Sprintf("%d goals, %d criteria", len(f.Goals), n)
}

// planSummary is the plan as a person reads it when approving.
func planSummary(f *goal.File) string { return goal.PlanText(f.Goals, false) }

// criteriaList is a goal's criteria with their last results.
func criteriaList(g *goal.Goal) string {
	var b strings.Builder
	for _, c := range g.SuccessCriteria {
		if c.Superseded != "" {
			continue
		}
		fmt.Fprintf(&b, "  - %s [%s, %s, %s] %s: %s\n", c.ID, c.UserModel, c.SurfaceOf(), c.Channel, c.Status, c.Scenario)
	}
	return strings.TrimRight(b.String(), "\n")
}

// acceptGoals freezes the proposed goals and starts the first one.
func (r *runner) acceptGoals(by string) {
	f := r.goals.file
	if f == nil || f.Accepted != nil {
		return
	}
	now := r.o.Now().UTC()
	digest := goal.PlanDigest(f.Goals)
	f.Accepted = &goal.Acceptance{By: by, At: now, Digest: digest, Ledger: r.goals.ledger.Len() + 1}
	// Accepted.Ledger names the entry that records it: the next one.
	r.recordGoal(ledger.Entry{Kind: ledger.KindPlanAccepted, Digest: digest, Text: "accepted by " + by + ": " + planCounts(f)})
	if r.st.Goals.Parallel == nil {
		r.startGoal() // a parallel run's goals start with their workers
	}
}

// startGoal marks the next pending goal in progress.
func (r *runner) startGoal() *goal.Goal {
	g := r.goals.file.Current()
	if g == nil || g.Status == goal.InProgress {
		return g
	}
	now := r.o.Now().UTC()
	g.Status, g.StartedAt, g.UpdatedAt = goal.InProgress, &now, now
	if code := r.codeNow(); code != "" {
		if r.st.Goals.StartCode == nil {
			r.st.Goals.StartCode = map[string]string{}
		}
		r.st.Goals.StartCode[g.ID] = code
	}
	r.recordGoal(ledger.Entry{Kind: ledger.KindGoalStarted, Goal: g.ID, Text: g.Title})
	return g
}

// codeNow is the worktree's tree without ultra's records ("" when git
// cannot say).
func (r *runner) codeNow() string {
	ctx := context.Background()
	tree, err := workspace.TreeHash(ctx, r.row.Workdir)
	if err != nil {
		return ""
	}
	return r.codeOf(ctx, tree)
}

// codeOf is tree without the run's records.
func (r *runner) codeOf(ctx context.Context, tree string) string {
	code, err := workspace.WithoutPaths(ctx, r.row.Workdir, tree, r.st.Goals.records().Paths())
	if err != nil {
		return ""
	}
	return code
}

// resumeGoals puts the goals of a resumed run in order. A person's resume
// of an escalated run reopens the goals that failed, with their cycles and
// repeated failures counted again from zero (as the retries are); a goal
// steering added while the run stood makes the final gate wait for it;
// the next goal is started if none is in progress.
func (r *runner) resumeGoals(escalated bool) {
	f := r.goals.file
	if f == nil || f.Accepted == nil {
		return
	}
	now := r.o.Now().UTC()
	for i := range f.Goals {
		g := &f.Goals[i]
		if escalated && g.Status == goal.Failed {
			g.Status, g.Reason, g.Attempt, g.UpdatedAt = goal.Pending, "", 0, now
			for j := range g.SuccessCriteria {
				g.SuccessCriteria[j].LastFailure, g.SuccessCriteria[j].SameFailures = "", 0
			}
			r.recordGoal(ledger.Entry{Kind: ledger.KindResumed, Goal: g.ID, Text: "reopened by a person's resume: its cycles and repeated failures count from zero"})
		}
	}
	if escalated {
		// The review's rounds and the final gate's attempts start again
		// too; a run that stopped in review goes back to iterating.
		r.st.Goals.FinalAttempts, r.st.Goals.ReviewRound, r.st.Goals.Review = 0, 0, nil
		// A cleanup pass the run stopped in is over: its edits, if any,
		// face the final gate again with the rest.
		r.st.Goals.Cleanup = nil
	}
	if f.Current() != nil {
		r.st.Goals.Final = false
		if r.st.Goals.Parallel == nil {
			r.startGoal()
		}
	}
}

// cycleLimit is the limit of build/verify cycles that binds the run now
// (cyclesOf).
func (r *runner) cycleLimit() phase.Limit {
	if !r.hasGoals() {
		return phase.Limit{}
	}
	if r.st.Phase.Phase == phase.Cleaning && r.st.Goals.Cleanup != nil {
		return r.cleanupLimit()
	}
	return cyclesOf(r.goals.file, r.st.Goals)
}

// cyclesOf is the limit of build/verify cycles of a run with goals f and
// goal state gs: the current goal's, or the final gate's verifications;
// none before the goals are accepted.
func cyclesOf(f *goal.File, gs *goalState) phase.Limit {
	switch {
	case f == nil || f.Accepted == nil || gs == nil:
		return phase.Limit{}
	case gs.Final:
		return phase.Limit{What: "final gate verifications", Used: gs.FinalAttempts, Max: goal.MaxCycles}
	}
	if g := f.Current(); g != nil {
		return goalCycles(g)
	}
	return phase.Limit{}
}

// goalCycles is goal g's limit of build/verify cycles.
func goalCycles(g *goal.Goal) phase.Limit {
	return phase.Limit{What: "cycles of goal " + g.ID, Used: g.Attempt, Max: goal.MaxCycles}
}

// goalReminder is the reminder's line about the goal in hand.
func (r *runner) goalReminder() string {
	if !r.hasGoals() || r.goals.file == nil || r.goals.file.Accepted == nil {
		return ""
	}
	f := r.goals.file
	if c := r.st.Goals.Cleanup; c != nil && r.st.Phase.Phase == phase.Cleaning {
		return "goals: all complete, the final gate passed; the cleanup pass may edit only: " + strings.Join(c.Files, ", ") +
			". End it with phase{to:\"verifying\"}, with or without a change."
	}
	if r.st.Goals.Final {
		return "goals: all complete; the final gate runs the tests and every criterion of every goal on the final tree"
	}
	g := f.Current()
	if g == nil {
		return ""
	}
	n := 0
	for i := range f.Goals {
		if f.Goals[i].ID == g.ID {
			n = i + 1
		}
	}
	return fmt.Sprintf("goal %d of %d: %s (%s), cycle %d of %d; criteria:\n%s", n, len(f.Goals), g.ID, g.Title,
		min(g.Attempt+1, goal.MaxCycles), goal.MaxCycles, criteriaList(g))
}
