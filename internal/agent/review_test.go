package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/verify"
)

func TestParseReviewArchitecture(t *testing.T) {
	for _, c := range []struct {
		name, args string
		err        string // "" when valid
		status     string // "" when none was given
		reasons    int
	}{
		{"clear", `{"verdict":"approve","architecture":{"status":"CLEAR"}}`, "", "CLEAR", 0},
		{"clear with a note", `{"verdict":"approve","architecture":{"status":"CLEAR","reasons":["fits the store layer"]}}`, "", "CLEAR", 1},
		{"concerns", `{"verdict":"approve","architecture":{"status":"CONCERNS","reasons":["a second parser beside the lexer"," a layer bypassed "]}}`, "", "CONCERNS", 2},
		{"blocked with blockers", `{"verdict":"REQUEST_CHANGES","architecture":{"status":"BLOCKED","reasons":["wrong design"]},"blockers":["calc/calc.go: wrong"]}`, "", "BLOCKED", 1},
		{"none", `{"verdict":"approve"}`, "", "", 0},
		{"null", `{"verdict":"approve","architecture":null}`, "", "", 0},
		{"a string", `{"verdict":"approve","architecture":"CLEAR"}`, `architecture must be an object {status`, "", 0},
		{"no status", `{"verdict":"approve","architecture":{"reasons":["r"]}}`, `architecture.status is missing: "CLEAR", "CONCERNS" or "BLOCKED"`, "", 0},
		{"unknown status", `{"verdict":"approve","architecture":{"status":"FINE"}}`, `architecture.status: "FINE" is not a status`, "", 0},
		{"status in lower case", `{"verdict":"approve","architecture":{"status":"clear"}}`, `architecture.status: "clear" is not a status`, "", 0},
		{"status not a string", `{"verdict":"approve","architecture":{"status":1}}`, `architecture.status must be a string`, "", 0},
		{"concerns without reasons", `{"verdict":"approve","architecture":{"status":"CONCERNS"}}`, `architecture.reasons is missing: status CONCERNS needs at least one reason`, "", 0},
		{"blocked with no reasons", `{"verdict":"approve","architecture":{"status":"BLOCKED","reasons":[]}}`, `architecture.reasons is missing: status BLOCKED`, "", 0},
		{"an empty reason", `{"verdict":"approve","architecture":{"status":"CONCERNS","reasons":["r"," "]}}`, `architecture.reasons[1] is empty`, "", 0},
		{"reasons a string", `{"verdict":"approve","architecture":{"status":"CONCERNS","reasons":"r"}}`, `architecture.reasons must be an array of strings`, "", 0},
		{"a reason not a string", `{"verdict":"approve","architecture":{"status":"CONCERNS","reasons":[{"why":"r"}]}}`, `architecture.reasons[0] must be a string`, "", 0},
		{"unknown field", `{"verdict":"approve","architecture":{"status":"CLEAR","why":"r"}}`, `architecture.why: unknown field (architecture takes status, reasons)`, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseReviewCall(json.RawMessage(c.args), inReviewed)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got.ArchitectureStatus() != c.status || got.Architecture != nil && len(got.Architecture.Reasons) != c.reasons {
				t.Fatalf("got %+v (%v), want status %q with %d reasons", got.Architecture, err, c.status, c.reasons)
			}
		})
	}
}

func TestReviewVerdictWords(t *testing.T) {
	concerns := &Architecture{Status: ArchitectureConcerns, Reasons: []string{"a second parser", "a layer\nbypassed"}}
	for _, c := range []struct {
		verdict  string
		arch     *Architecture
		blockers []string
		text     string
		must     []string
	}{
		{VerdictApprove, &Architecture{Status: ArchitectureClear}, nil, "round 2: approve, architecture CLEAR", nil},
		{VerdictApprove, &Architecture{Status: ArchitectureClear, Reasons: []string{"fits"}}, nil, "round 2: approve, architecture CLEAR (fits)", nil},
		{VerdictApprove, concerns, nil, "round 2: approve, architecture CONCERNS (a second parser; a layer bypassed)",
			[]string{"architecture CONCERNS: a second parser", "architecture CONCERNS: a layer bypassed"}},
		{VerdictBlockers, &Architecture{Status: ArchitectureClear}, []string{"a.go:3: wrong"}, "round 2: blockers, architecture CLEAR; blockers: a.go:3: wrong", []string{"a.go:3: wrong"}},
		{VerdictBlockers, nil, []string{"a.go: wrong"}, "round 2: blockers; blockers: a.go: wrong", []string{"a.go: wrong"}},
	} {
		if got := reviewVerdictText(2, c.verdict, c.arch, c.blockers); got != c.text {
			t.Errorf("reviewVerdictText = %q, want %q", got, c.text)
		}
		if got := mustChange(c.blockers, c.arch); strings.Join(got, "|") != strings.Join(c.must, "|") {
			t.Errorf("mustChange(%v, %+v) = %q, want %q", c.blockers, c.arch, got, c.must)
		}
	}
}

// reviewedRun runs a one-goal build whose builder verifies again after
// every review that sends it back; the final reviewer answers reviews in
// turn. seen is called with the run's ledger before each reviewer request.
func reviewedRun(t *testing.T, reviews []string, seen func(n int, entries []ledger.Entry)) (*Outcome, *stubProvider, []event.Event, string) {
	t.Helper()
	step, asked := 0, 0
	var dir string
	p := &stubProvider{keep: true}
	p.next = func(n int, req llm.Request) *llm.Response {
		if reviewing(req) {
			if seen != nil {
				var entries []ledger.Entry
				if ls, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(goal.RunsDir), "*", "ledger.jsonl")); len(ls) == 1 {
					entries, _ = ledger.Read(ls[0])
				}
				seen(asked, entries)
			}
			asked++
			if asked > len(reviews) {
				return &llm.Response{Text: "no more reviews"}
			}
			return callsOf(tc("review", reviews[asked-1]))
		}
		step++
		switch {
		case step == 1:
			return callsOf(tc("goals", goalsJSON))
		case step == 2:
			return callsOf(tc("write", `{"file_path":"c.txt","content":"gamma\n"}`))
		case step%2 == 1:
			return callsOf(tc("phase", `{"to":"verifying"}`))
		}
		return callsOf(tc("verify", `{}`))
	}
	evs, sink := collect()
	o, d := setup(t, p, stubVerifier{verify.StatusPass}, sink)
	dir = d
	out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	return out, p, *evs, dir
}

// verdicts are the run's review_verdict entries.
func verdicts(t *testing.T, dir, id string) []ledger.Entry {
	t.Helper()
	entries, err := ledger.Read(filepath.Join(dir, filepath.FromSlash(goal.RunRecords(id).Ledger())))
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Entry
	for _, e := range entries {
		if e.Kind == ledger.KindReviewVerdict {
			out = append(out, e)
		}
	}
	return out
}

type verdictData struct {
	Round               int      `json:"round"`
	Verdict             string   `json:"verdict"`
	Architecture        string   `json:"architecture"`
	ArchitectureReasons []string `json:"architecture_reasons"`
	Clean               bool     `json:"clean"`
}

func verdictOf(t *testing.T, e ledger.Entry) verdictData {
	t.Helper()
	var d verdictData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func reviewEvents(evs []event.Event) []event.ReviewData {
	var out []event.ReviewData
	for _, e := range evs {
		if d, ok := e.Data.(event.ReviewData); ok {
			out = append(out, d)
		}
	}
	return out
}

// builderMessages are the user messages the builder got after the first
// review, in order.
func builderMessages(p *stubProvider) []string {
	var out []string
	for _, r := range p.reqs {
		if reviewing(r) {
			continue
		}
		for _, m := range r.Messages {
			if m.Role == llm.RoleUser && strings.HasPrefix(m.Content, "The final review") && !slices.Contains(out, m.Content) {
				out = append(out, m.Content)
			}
		}
	}
	return out
}

const (
	reviewClean    = `{"verdict":"APPROVE","architecture":{"status":"CLEAR"}}`
	reviewConcerns = `{"verdict":"approve","summary":"works","architecture":{"status":"CONCERNS","reasons":["c.txt duplicates what a.txt already holds: extend a.txt"]}}`
	reviewBlocked  = `{"verdict":"approve","architecture":{"status":"BLOCKED","reasons":["the design is wrong: one file per letter"]}}`
)

// A review that approves with architecture CLEAR completes the run, and
// the records say both.
func TestFinalReviewCleanCompletes(t *testing.T) {
	out, _, evs, dir := reviewedRun(t, []string{reviewClean}, nil)
	if out.Status != StatusComplete || out.ExitCode != 0 {
		t.Fatalf("outcome %+v", out)
	}
	vs := verdicts(t, dir, out.RunID)
	if len(vs) != 1 {
		t.Fatalf("%d verdicts", len(vs))
	}
	if d := verdictOf(t, vs[0]); d.Verdict != VerdictApprove || d.Architecture != ArchitectureClear || !d.Clean || vs[0].Text != "round 1: approve, architecture CLEAR" {
		t.Fatalf("verdict %+v: %q", d, vs[0].Text)
	}
	f, err := ReadGoals(dir, goal.RunRecords(out.RunID))
	if err != nil || f.Review == nil || f.Review.Verdict != VerdictApprove || f.Review.Architecture != ArchitectureClear || f.Review.Rounds != 1 {
		t.Fatalf("goals.json review %+v (%v)", f.Review, err)
	}
	if rs := reviewEvents(evs); len(rs) != 1 || rs[0].Architecture != ArchitectureClear || !event.ReviewClean(rs[0].Verdict, rs[0].Architecture) {
		t.Fatalf("review events %+v", rs)
	}
}

// An approval with architecture CONCERNS is not clean: the run goes back
// to iterating, the builder is told the reasons as what must change, the
// ledger and goals.json record them; the next, clean review completes it.
func TestFinalReviewArchitectureConcernsIterate(t *testing.T) {
	out, p, evs, dir := reviewedRun(t, []string{reviewConcerns, reviewClean}, nil)
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	msgs := builderMessages(p)
	if len(msgs) != 1 || !strings.Contains(msgs[0], "asks for changes (approve, architecture CONCERNS)") ||
		!strings.Contains(msgs[0], "- architecture CONCERNS: c.txt duplicates what a.txt already holds: extend a.txt") {
		t.Fatalf("the builder was told %q", msgs)
	}
	var iterating []string
	for _, e := range evs {
		if d, ok := e.Data.(event.PhaseChangedData); ok && d.From == "reviewing" {
			iterating = append(iterating, d.To+": "+d.Reason)
		}
	}
	if len(iterating) != 2 || !strings.HasPrefix(iterating[0], "iterating: the final review asks for changes (round 1 of 3): architecture CONCERNS: c.txt duplicates") ||
		!strings.HasPrefix(iterating[1], "complete:") {
		t.Fatalf("transitions from reviewing: %q", iterating)
	}
	vs := verdicts(t, dir, out.RunID)
	if len(vs) != 2 {
		t.Fatalf("%d verdicts", len(vs))
	}
	d := verdictOf(t, vs[0])
	if d.Round != 1 || d.Verdict != VerdictApprove || d.Architecture != ArchitectureConcerns || d.Clean ||
		len(d.ArchitectureReasons) != 1 || !strings.Contains(vs[0].Text, "approve, architecture CONCERNS (c.txt duplicates what a.txt already holds") {
		t.Fatalf("first verdict %+v: %q", d, vs[0].Text)
	}
	if d := verdictOf(t, vs[1]); d.Round != 2 || !d.Clean {
		t.Fatalf("second verdict %+v", d)
	}
	rs := reviewEvents(evs)
	if len(rs) != 2 || rs[0].Architecture != ArchitectureConcerns || len(rs[0].ArchitectureReasons) != 1 || rs[1].Architecture != ArchitectureClear {
		t.Fatalf("review events %+v", rs)
	}
	f, _ := ReadGoals(dir, goal.RunRecords(out.RunID))
	if f.Review == nil || f.Review.Rounds != 2 || f.Review.Architecture != ArchitectureClear {
		t.Fatalf("goals.json review %+v", f.Review)
	}
}

// Architecture BLOCKED in the last round the caps allow escalates the run.
func TestFinalReviewBlockedInTheLastRoundEscalates(t *testing.T) {
	reviews := []string{reviewConcerns, reviewConcerns, reviewBlocked}
	if len(reviews) != goal.MaxReviewRounds+1 {
		t.Fatalf("the test assumes %d review rounds", len(reviews))
	}
	out, p, _, dir := reviewedRun(t, reviews, nil)
	if out.Status != StatusEscalated || out.ExitCode != ExitEscalated {
		t.Fatalf("outcome %+v", out)
	}
	if !strings.Contains(out.Reason, "still asks for changes in its last round (round 3 of 3): architecture BLOCKED: the design is wrong") {
		t.Fatalf("reason %q", out.Reason)
	}
	vs := verdicts(t, dir, out.RunID)
	if len(vs) != 3 || verdictOf(t, vs[2]).Architecture != ArchitectureBlocked {
		t.Fatalf("verdicts %+v", vs)
	}
	f, _ := ReadGoals(dir, goal.RunRecords(out.RunID))
	if f.Review == nil || f.Review.Architecture != ArchitectureBlocked || len(f.Review.ArchitectureReasons) != 1 || f.Review.Rounds != 3 {
		t.Fatalf("goals.json review %+v", f.Review)
	}
	if n := len(builderMessages(p)); n != 2 {
		t.Fatalf("the builder was sent back %d times, want 2", n)
	}
}

// The final review must give its architecture status: without it the
// call is a tool error naming the field, and nothing is recorded.
func TestFinalReviewWithoutArchitectureIsAToolError(t *testing.T) {
	var before []int
	out, p, evs, dir := reviewedRun(t, []string{`{"verdict":"APPROVE","summary":"fine"}`, reviewClean}, func(n int, entries []ledger.Entry) {
		c := 0
		for _, e := range entries {
			if e.Kind == ledger.KindReviewVerdict {
				c++
			}
		}
		before = append(before, c)
	})
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if len(before) != 2 || before[1] != 0 {
		t.Fatalf("review_verdict entries before each review request: %v", before)
	}
	var errs []string
	for _, r := range p.reqs {
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool && m.ToolName == "review" && m.IsError && !slices.Contains(errs, m.Content) {
				errs = append(errs, m.Content)
			}
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "invalid review: architecture is missing") ||
		!strings.Contains(errs[0], `architecture: {status: "CLEAR" | "CONCERNS" | "BLOCKED"`) || !strings.Contains(errs[0], "Nothing was recorded") {
		t.Fatalf("the reviewer read %q", errs)
	}
	if vs := verdicts(t, dir, out.RunID); len(vs) != 1 || verdictOf(t, vs[0]).Round != 1 {
		t.Fatalf("verdicts %+v", vs)
	}
	if rs := reviewEvents(evs); len(rs) != 1 {
		t.Fatalf("review events %+v", rs)
	}
}

// The example a review with broken JSON is refused with is itself a
// review the tool accepts ({} is none).
func TestReviewExampleArgsAreAReview(t *testing.T) {
	c, err := ParseReviewCall(json.RawMessage(exampleArgs("review")), func(string) bool { return true })
	if err != nil || c.Architecture == nil {
		t.Fatalf("exampleArgs(review) = %s: %v (architecture %v)", exampleArgs("review"), err, c.Architecture)
	}
}
