package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/tool"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// ReviewSpec is what a review-mode run inspects: a run's branch, a range
// of commits, or the working tree's uncommitted changes.
type ReviewSpec struct {
	Run  string `json:"run,omitempty"`  // a run whose branch is reviewed against its start
	Base string `json:"base,omitempty"` // the range's base commit
	Head string `json:"head,omitempty"` // the range's head ("" with Base: the working tree)
	// Tree is the tree under review (the head's, or the working tree's
	// as it was when the review started): findings name its files.
	Tree string `json:"tree,omitempty"`
	// Target says what is reviewed, for people.
	Target string `json:"target,omitempty"`
}

func reviewModePrompt(workdir string) string {
	return `You are ultra, a coding agent, reviewing a change in the repository at ` + workdir + `.
Inspect the diff, the tests, risks, regressions, security issues and missing evidence with read, glob, grep and read-only bash (git diff, git log, git show, …); nothing may change here.
End with review{verdict, summary, findings:[{severity, file, line, reason, fix}]}: verdict is "approve" or "blockers"; severity is blocker, major, minor or nit; file is a path of the reviewed tree relative to the repository root; line (optional) a positive line number; reason says what is wrong and fix what to do. A blocker finding means the change must not land as it is, and then the verdict is "blockers". You may add architecture:{status, reasons}, whether the change fits the codebase's structure: CLEAR (it fits), CONCERNS (it works, but its structure should change before it lands: duplicated logic, a layer bypassed, a special case beside an existing mechanism) or BLOCKED (the design is wrong for the codebase); reasons say what must change and are required unless CLEAR. A review is clean only when it approves with no architecture status other than CLEAR. ultra writes the findings to .ultra/state/reviews/.`
}

// Finding severities, most serious first.
const (
	SeverityBlocker = "blocker"
	SeverityMajor   = "major"
	SeverityMinor   = "minor"
	SeverityNit     = "nit"
)

// Severities lists the finding severities, most serious first.
var Severities = []string{SeverityBlocker, SeverityMajor, SeverityMinor, SeverityNit}

// Review verdicts (event.VerdictApprove, event.VerdictBlockers). The
// final review of a build run also accepts their older names, APPROVE and
// REQUEST_CHANGES.
const (
	VerdictApprove  = event.VerdictApprove
	VerdictBlockers = event.VerdictBlockers
)

// Finding is one thing a reviewer found.
type Finding struct {
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Reason   string `json:"reason"`
	Fix      string `json:"fix,omitempty"`
}

// String is the finding on one line: severity file:line: reason (fix: …).
func (f Finding) String() string {
	s := f.Severity + " " + f.Where() + ": " + oneLine(f.Reason, 500)
	if f.Fix != "" {
		s += " (fix: " + oneLine(f.Fix, 300) + ")"
	}
	return s
}

// Where is file:line, or the file alone.
func (f Finding) Where() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

// ReviewCall is a validated call of the review tool.
type ReviewCall struct {
	Verdict  string    // VerdictApprove or VerdictBlockers
	Summary  string    // what the reviewer checked
	Findings []Finding // in the reviewer's order (legacy blockers last)
	// Architecture is the architecture status, nil when the review gave
	// none (the final review of a build run must give one).
	Architecture *Architecture
}

// Blockers are the findings of severity blocker.
func (c ReviewCall) Blockers() []Finding {
	var out []Finding
	for _, f := range c.Findings {
		if f.Severity == SeverityBlocker {
			out = append(out, f)
		}
	}
	return out
}

var (
	reviewFields  = []string{"verdict", "architecture", "summary", "findings", "blockers"}
	findingFields = []string{"severity", "file", "line", "reason", "fix"}
	blockerFields = []string{"file", "line", "reason"}
	// blockerText is the older string form of a blocker: file[:line]: reason.
	blockerText = regexp.MustCompile(`^\s*([^\s:]+)(?::([0-9]+))?:\s+(\S.*)$`)
)

// ParseReviewCall validates the arguments of the review tool, the same
// for a review-mode run and the final review of a build run:
//
//	{verdict: "approve"|"blockers", architecture: {status: "CLEAR"|"CONCERNS"|"BLOCKED", reasons},
//	 summary, findings: [{severity, file, line, reason, fix}]}
//
// plus the older form of the final review, verdict APPROVE or
// REQUEST_CHANGES with blockers [{file, line, reason}] or
// ["file:line: reason"] (each a finding of severity blocker). Unknown
// fields, a missing or unknown severity, verdict or reason, a file that
// exists(file) denies, a line that is not a positive integer and a
// verdict that contradicts the findings are errors naming the finding and
// its field, as is an architecture status that is unknown or, unless
// CLEAR, gives no reasons. The architecture status is optional here (the
// final review requires it). exists may be nil: files are then not
// checked.
func ParseReviewCall(args json.RawMessage, exists func(file string) bool) (ReviewCall, error) {
	var c ReviewCall
	if strings.TrimSpace(string(args)) == "" {
		args = json.RawMessage(`{}`)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(args, &top); err != nil || top == nil {
		return c, fmt.Errorf("the arguments must be a JSON object {verdict, architecture, summary, findings}")
	}
	if err := unknownFields("", top, reviewFields); err != nil {
		return c, err
	}
	verdict, err := optString(top, "verdict")
	if err != nil {
		return c, err
	}
	switch verdict {
	case VerdictApprove, "APPROVE":
		c.Verdict = VerdictApprove
	case VerdictBlockers, "REQUEST_CHANGES":
		c.Verdict = VerdictBlockers
	case "":
		return c, fmt.Errorf(`verdict is missing: "approve" or "blockers"`)
	default:
		return c, fmt.Errorf(`verdict must be "approve" or "blockers", not %q`, verdict)
	}
	if raw, ok := top["architecture"]; ok {
		if c.Architecture, err = parseArchitecture(raw); err != nil {
			return c, err
		}
	}
	if c.Summary, err = optString(top, "summary"); err != nil {
		return c, err
	}
	if raw, ok := top["findings"]; ok && string(raw) != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return c, fmt.Errorf("findings must be an array of {severity, file, line, reason, fix}")
		}
		for i, it := range items {
			f, err := parseFinding(fmt.Sprintf("findings[%d]", i), it, findingFields, "", exists)
			if err != nil {
				return c, err
			}
			c.Findings = append(c.Findings, f)
		}
	}
	if raw, ok := top["blockers"]; ok && string(raw) != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return c, fmt.Errorf("blockers must be an array of {file, line, reason}")
		}
		for i, it := range items {
			at := fmt.Sprintf("blockers[%d]", i)
			var s string
			if json.Unmarshal(it, &s) == nil {
				m := blockerText.FindStringSubmatch(s)
				if m == nil {
					return c, fmt.Errorf(`%s: a blocker names a file and a reason: {file, line, reason} or "file:line: reason", not %q`, at, oneLine(s, 120))
				}
				obj := map[string]any{"file": m[1], "reason": m[3]}
				if m[2] != "" {
					n, _ := strconv.Atoi(m[2])
					obj["line"] = n
				}
				it, _ = json.Marshal(obj)
			}
			f, err := parseFinding(at, it, blockerFields, SeverityBlocker, exists)
			if err != nil {
				return c, err
			}
			c.Findings = append(c.Findings, f)
		}
	}
	first := slices.IndexFunc(c.Findings, func(f Finding) bool { return f.Severity == SeverityBlocker })
	switch {
	case c.Verdict == VerdictApprove && first >= 0:
		return c, fmt.Errorf(`verdict "approve" is inconsistent with finding %d of severity blocker (%s): send verdict "blockers", or lower its severity if it need not block`, first, c.Findings[first].Where())
	case c.Verdict == VerdictBlockers && first < 0:
		return c, fmt.Errorf(`verdict "blockers" needs at least one finding of severity blocker; without one, the verdict is "approve"`)
	}
	return c, nil
}

// parseFinding validates one finding (at names it: findings[2]); sev is
// the severity of a form that has none (the older blockers).
func parseFinding(at string, raw json.RawMessage, fields []string, sev string, exists func(string) bool) (Finding, error) {
	var f Finding
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return f, fmt.Errorf("%s must be an object {%s}", at, strings.Join(fields, ", "))
	}
	if err := unknownFields(at, m, fields); err != nil {
		return f, err
	}
	field := func(name string) (string, error) {
		s, err := optString(m, name)
		if err != nil {
			return "", fmt.Errorf("%s.%s", at, err.Error())
		}
		return strings.TrimSpace(s), nil
	}
	var err error
	f.Severity = sev
	if sev == "" {
		if f.Severity, err = field("severity"); err != nil {
			return f, err
		}
		if !slices.Contains(Severities, f.Severity) {
			if f.Severity == "" {
				return f, fmt.Errorf("%s.severity is missing: blocker, major, minor or nit", at)
			}
			return f, fmt.Errorf("%s.severity: %q is not a severity (blocker, major, minor or nit)", at, f.Severity)
		}
	}
	if f.Reason, err = field("reason"); err != nil {
		return f, err
	}
	if f.Reason == "" {
		return f, fmt.Errorf("%s.reason is missing: say what is wrong", at)
	}
	if f.Fix, err = field("fix"); err != nil {
		return f, err
	}
	file, err := field("file")
	if err != nil {
		return f, err
	}
	if f.File, err = reviewPath(file); err != nil {
		return f, fmt.Errorf("%s.file: %v", at, err)
	}
	if exists != nil && !exists(f.File) {
		return f, fmt.Errorf("%s.file: %q is not a file of the reviewed tree (name it relative to the repository root)", at, f.File)
	}
	if raw, ok := m["line"]; ok && string(raw) != "null" {
		n, err := strconv.Atoi(string(raw))
		if err != nil || n <= 0 {
			return f, fmt.Errorf("%s.line must be a positive integer (a line of %s), not %s", at, f.File, event.Truncate(string(raw), 40))
		}
		f.Line = n
	}
	return f, nil
}

// reviewPath is a finding's file as a clean path relative to the
// repository root.
func reviewPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("is missing: name the file the finding is about")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return "", fmt.Errorf("%q is absolute: name the file relative to the repository root", p)
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%q is not a file inside the repository", p)
	}
	return c, nil
}

func unknownFields(at string, m map[string]json.RawMessage, known []string) error {
	var bad []string
	for k := range m {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	where := "review"
	if at != "" {
		where = at
	}
	if at != "" {
		return fmt.Errorf("%s.%s: unknown field (%s takes %s)", at, bad[0], where, strings.Join(known, ", "))
	}
	return fmt.Errorf("%s: unknown field (review takes verdict, architecture, summary and findings)", bad[0])
}

// optString reads m[name] as a string ("" when absent or null).
func optString(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s must be a string, not %s", name, event.Truncate(string(raw), 40))
	}
	return s, nil
}

// ReviewReport is what ultra writes when a reviewer gives its verdict:
// .ultra/state/reviews/<run-id>.json, and a readable .md beside it.
type ReviewReport struct {
	Run      string    `json:"run"`
	Target   string    `json:"target,omitempty"`
	Base     string    `json:"base,omitempty"`
	Head     string    `json:"head,omitempty"` // "" for the working tree
	Tree     string    `json:"tree,omitempty"`
	Round    int       `json:"round,omitempty"` // the final review's round (build runs)
	Verdict  string    `json:"verdict"`
	Blockers int       `json:"blockers"`
	Summary  string    `json:"summary,omitempty"`
	Findings []Finding `json:"findings"`
	At       time.Time `json:"at"`

	// Architecture is the architecture status, "" when the review gave
	// none; ArchitectureReasons are what must change.
	Architecture        string   `json:"architecture,omitempty"`
	ArchitectureReasons []string `json:"architecture_reasons,omitempty"`
}

// ReviewPath is where a run's findings are written.
func ReviewPath(stateRoot, id string) string {
	return filepath.Join(stateRoot, "reviews", id+".json")
}

// ReadReview reads a run's findings.
func ReadReview(stateRoot, id string) (*ReviewReport, error) {
	b, err := os.ReadFile(ReviewPath(stateRoot, id))
	if err != nil {
		return nil, err
	}
	var rep ReviewReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", ReviewPath(stateRoot, id), err)
	}
	return &rep, nil
}

// Markdown is the report for people.
func (rep *ReviewReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Review of %s\n\n", firstNonEmpty(rep.Target, "run "+rep.Run))
	fmt.Fprintf(&b, "- run: %s\n- verdict: %s\n- blockers: %d\n- findings: %d\n", rep.Run, rep.Verdict, rep.Blockers, len(rep.Findings))
	if rep.Architecture != "" {
		fmt.Fprintf(&b, "- architecture: %s\n", rep.Architecture)
	}
	if rep.Base != "" {
		fmt.Fprintf(&b, "- base: %s\n- head: %s\n", rep.Base, firstNonEmpty(rep.Head, "the working tree"))
	}
	if s := strings.TrimSpace(rep.Summary); s != "" {
		fmt.Fprintf(&b, "\n## Summary\n\n%s\n", s)
	}
	if len(rep.ArchitectureReasons) > 0 {
		fmt.Fprintf(&b, "\n## Architecture: %s\n\n", rep.Architecture)
		for _, r := range rep.ArchitectureReasons {
			fmt.Fprintf(&b, "- %s\n", strings.TrimSpace(r))
		}
	}
	if len(rep.Findings) > 0 {
		b.WriteString("\n## Findings\n")
		for i, f := range rep.Findings {
			fmt.Fprintf(&b, "\n%d. **%s** `%s`: %s\n", i+1, f.Severity, f.Where(), strings.TrimSpace(f.Reason))
			if f.Fix != "" {
				fmt.Fprintf(&b, "   Fix: %s\n", strings.TrimSpace(f.Fix))
			}
		}
	}
	return b.String()
}

// writeReview writes rep as JSON and markdown under the state root.
func writeReview(stateRoot string, rep *ReviewReport) (string, error) {
	p := ReviewPath(stateRoot, rep.Run)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	if err := tool.ReplaceFile(p, append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	// The findings are the model's words; the page is for people.
	if err := tool.ReplaceFile(strings.TrimSuffix(p, ".json")+".md", []byte(event.Printable(rep.Markdown())), 0o644); err != nil {
		return "", err
	}
	return p, nil
}

// inTree reports whether file is a path of tree (a commit's or a tree's
// hash) in the repository at dir.
func inTree(ctx context.Context, dir, tree, file string) bool {
	if tree == "" {
		return false
	}
	_, err := workspace.Git(ctx, dir, "cat-file", "-e", tree+":"+file)
	return err == nil
}

// reviewedFile reports whether a finding may name file: a file of the
// reviewed tree, or one the change deleted (a file of its base).
func (r *runner) reviewedFile(ctx context.Context) func(string) bool {
	if rs := r.st.Review; r.st.Phase.ModeName() == phase.Review && rs != nil {
		return func(f string) bool {
			return inTree(ctx, r.row.Workdir, rs.Tree, f) || inTree(ctx, r.row.Workdir, rs.Base, f)
		}
	}
	// The final review of a build run: the run's worktree as it stands
	// (the tree the final gate passed), or the run's start.
	return func(f string) bool {
		if st, err := os.Lstat(filepath.Join(r.row.Workdir, filepath.FromSlash(f))); err == nil && !st.IsDir() {
			return true
		}
		return inTree(ctx, r.row.Workdir, r.row.Workspace.StartCommit, f)
	}
}

// runReviewMode takes the verdict of a review-mode run: ultra writes the
// findings, and the run completes (the reviewer's exit).
func (r *runner) runReviewMode(ctx context.Context, args json.RawMessage) tool.Result {
	c, err := ParseReviewCall(args, r.reviewedFile(ctx))
	if err != nil {
		return tool.Result{IsError: true, Output: "invalid review: " + err.Error() + ". Nothing was recorded: send the corrected review{verdict, architecture, summary, findings}."}
	}
	rep := r.reviewReport(c, 0)
	path, err := writeReview(r.o.StateRoot, rep)
	if err != nil {
		return tool.Result{IsError: true, Output: "ultra could not write the findings: " + err.Error()}
	}
	reason := fmt.Sprintf("the review approved (%d findings, no blockers)", len(c.Findings))
	if rep.Blockers > 0 {
		reason = fmt.Sprintf("the review found %d blocker(s) (%d findings)", rep.Blockers, len(c.Findings))
	}
	if a := c.Architecture; a != nil && a.Status != ArchitectureClear {
		reason += fmt.Sprintf("; architecture %s: %s", a.Status, oneLine(strings.Join(a.Reasons, "; "), 300))
	}
	r.emitReview(1, c)
	if err := r.transition(phase.Complete, phase.ByReviewer, reason, ""); err != nil {
		return tool.Result{IsError: true, Output: err.Error()}
	}
	r.finish(StatusComplete, reason)
	if !c.Clean() {
		// The review is complete; its blockers and architecture
		// concerns are the change's, and ultra review exits with them.
		r.stop.ExitCode = ExitEscalated
	}
	return tool.Result{Output: "Review recorded: " + reason + ". ultra wrote the findings to " + path + ". The review is complete.",
		Data: map[string]any{"verdict": c.Verdict, "architecture": c.ArchitectureStatus(), "blockers": rep.Blockers, "findings": len(c.Findings), "file": path}}
}

func (r *runner) reviewReport(c ReviewCall, round int) *ReviewReport {
	rep := &ReviewReport{Run: r.row.ID, Round: round, Verdict: c.Verdict, Blockers: len(c.Blockers()), Summary: c.Summary,
		Findings: c.Findings, At: r.o.Now().UTC()}
	if a := c.Architecture; a != nil {
		rep.Architecture, rep.ArchitectureReasons = a.Status, a.Reasons
	}
	if rs := r.st.Review; rs != nil {
		rep.Target, rep.Base, rep.Head, rep.Tree = rs.Target, rs.Base, rs.Head, rs.Tree
	} else {
		rep.Target = "run " + r.row.ID + "'s change"
		rep.Base, rep.Head = r.row.Workspace.StartCommit, r.row.Workspace.Branch
	}
	return rep
}

// emitReview is the review event surfaces show.
func (r *runner) emitReview(round int, c ReviewCall) {
	var lines []string
	for _, f := range c.Blockers() {
		lines = append(lines, f.Where()+": "+oneLine(f.Reason, 300))
	}
	d := event.ReviewData{Round: round, Verdict: c.Verdict, Blockers: lines}
	if a := c.Architecture; a != nil {
		d.Architecture, d.ArchitectureReasons = a.Status, a.Reasons
	}
	r.emit(event.Review, d)
}

// ReviewTarget is a diff made ready for a review-mode run.
type ReviewTarget struct {
	Spec  ReviewSpec // resolved: commits, the reviewed tree
	Stat  string     // git diff --stat
	Diff  string     // the whole diff
	Files []string   // "M path" lines (git diff --name-status)
	Tests []string   // the test files among them
}

// ReviewInputError is a review that cannot start: an unknown ref, or
// nothing to review. The command exits with a usage error.
type ReviewInputError struct{ Msg string }

func (e *ReviewInputError) Error() string { return e.Msg }

// PrepareReview resolves what s names in the repository at dir and
// reads its diff: Base (default HEAD) against Head, or against the
// working tree (tracked changes and untracked files that are not ignored)
// when Head is "".
func PrepareReview(ctx context.Context, dir string, s ReviewSpec) (*ReviewTarget, error) {
	resolve := func(flag, ref string) (string, error) {
		c, err := workspace.Git(ctx, dir, "rev-parse", "--verify", "-q", "--end-of-options", ref+"^{commit}")
		if err != nil || c == "" {
			return "", &ReviewInputError{Msg: fmt.Sprintf("%s %q is not a commit of the repository at %s (unknown ref)", flag, ref, dir)}
		}
		return c, nil
	}
	baseName := firstNonEmpty(s.Base, "HEAD")
	base, err := resolve("base", baseName)
	if err != nil {
		return nil, err
	}
	out := s
	out.Base = base
	var target string
	if s.Head == "" {
		tree, err := workspace.TreeHash(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("reading the working tree of %s: %w", dir, err)
		}
		out.Tree = tree
		target = fmt.Sprintf("the working tree against %s (%s)", baseName, workspace.Short(base))
	} else {
		head, err := resolve("head", s.Head)
		if err != nil {
			return nil, err
		}
		out.Head = head
		if out.Tree, err = workspace.TreeOf(ctx, dir, head); err != nil {
			return nil, err
		}
		target = fmt.Sprintf("%s (%s) against %s (%s)", s.Head, workspace.Short(head), baseName, workspace.Short(base))
	}
	if s.Run != "" {
		target = "run " + s.Run + "'s branch: " + target
	}
	out.Target = firstNonEmpty(s.Target, target)
	baseTree, err := workspace.TreeOf(ctx, dir, base)
	if err != nil {
		return nil, err
	}
	if baseTree == out.Tree {
		return nil, &ReviewInputError{Msg: "nothing to review: " + out.Target + " has no changes (the diff is empty)"}
	}
	t := &ReviewTarget{Spec: out}
	if t.Stat, err = gitText(ctx, dir, "diff", "--no-ext-diff", "--no-color", "--stat=120", baseTree, out.Tree); err != nil {
		return nil, err
	}
	if t.Diff, err = gitText(ctx, dir, "diff", "--no-ext-diff", "--no-color", "--no-textconv", baseTree, out.Tree); err != nil {
		return nil, err
	}
	names, err := workspace.Git(ctx, dir, "diff", "--name-status", "--no-renames", baseTree, out.Tree)
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(names, "\n") {
		st, file, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		t.Files = append(t.Files, st+" "+file)
		if IsTestFile(file) {
			t.Tests = append(t.Tests, st+" "+file)
		}
	}
	return t, nil
}

// gitText is a git command's output as it is (workspace.Git trims it,
// which would cut the first line's indentation of a diff stat).
func gitText(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := workspace.Command(ctx, dir, args...).Output()
	if err != nil {
		msg := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("git %s in %s: %s", strings.Join(args, " "), dir, msg)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// testFile matches the usual names of test files across languages.
var testFile = regexp.MustCompile(`(^|/)(tests?|__tests__|spec|e2e)/|_test\.[a-z]+$|(^|/)test_[^/]*\.py$|\.(test|spec)\.[a-z]+$|(^|/)[A-Z][A-Za-z0-9]*Tests?\.(java|kt|cs|swift)$`)

// IsTestFile reports whether a path looks like a test.
func IsTestFile(p string) bool { return testFile.MatchString(p) }

// MaxReviewDiff bounds the diff a review's first message carries.
const MaxReviewDiff = 60 << 10

// Message is the review-mode run's first message: the target, the diff
// stat, the tests touched and the diff, cut at MaxReviewDiff.
func (t *ReviewTarget) Message() string {
	var b strings.Builder
	s := t.Spec
	fmt.Fprintf(&b, "Review %s.\n\n", s.Target)
	show := "git diff " + s.Base + " " + s.Tree
	if s.Head != "" {
		show = "git diff " + s.Base + " " + s.Head
		b.WriteString("The files on disk are the checkout's, which may differ from the head: read the head's version with git show " + workspace.Short(s.Head) + ":PATH.\n")
	} else {
		b.WriteString("The files on disk are the working tree under review.\n")
	}
	fmt.Fprintf(&b, "In bash, %s shows the whole diff.\n\n## Diff stat\n%s\n\n## Tests touched\n", show, t.Stat)
	if len(t.Tests) == 0 {
		b.WriteString("(none: no test file changed)\n")
	} else {
		b.WriteString(strings.Join(t.Tests, "\n") + "\n")
	}
	diff := t.Diff
	if len(diff) > MaxReviewDiff {
		cut := strings.LastIndexByte(diff[:MaxReviewDiff], '\n')
		if cut <= 0 {
			cut = MaxReviewDiff
		}
		file := ""
		if i := strings.LastIndex(diff[:cut], "\ndiff --git "); i >= 0 {
			file = strings.SplitN(diff[i+1:], "\n", 2)[0]
		}
		diff = diff[:cut] + fmt.Sprintf("\n[diff cut here, at %d of %d bytes, inside %q: run %s in bash for the rest]", cut, len(t.Diff), file, show)
	}
	fmt.Fprintf(&b, "\n## Diff\n%s\n", diff)
	return b.String()
}
