package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// reviewTools are the tools of the review table's one working phase.
var reviewTools = []string{"read", "glob", "grep", "bash", "review"}

// reviewArgs are the arguments of ultra review against m.
func reviewArgs(m *model, extra ...string) []string {
	return append([]string{"review", "--provider", "openai", "--base-url", m.url, "--model", "scripted"}, extra...)
}

// findingsFile reads the one findings file of dir's reviews.
func findingsFile(t *testing.T, dir string) (string, map[string]any) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, ".ultra", "state", "reviews", "*.json"))
	if len(files) != 1 {
		t.Fatalf("findings files %v, want one", files)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(readFile(t, files[0])), &rep); err != nil {
		t.Fatal(err)
	}
	return files[0], rep
}

// checkReviewRequests asserts that every request offered exactly the
// review table's tools and that the first one carries want.
func checkReviewRequests(t *testing.T, m *model, n int, want ...string) {
	t.Helper()
	reqs := m.srv.Requests()
	if len(reqs) != n {
		t.Fatalf("%d model requests, want %d", len(reqs), n)
	}
	for i, r := range reqs {
		if !slices.Equal(r.Tools, reviewTools) {
			t.Fatalf("request %d offered %v, want %v", i+1, r.Tools, reviewTools)
		}
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	first := ""
	for _, msg := range body.Messages {
		if msg.Role == "user" {
			first, _ = msg.Content.(string)
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(first, w) {
			t.Fatalf("the first message lacks %q:\n%s", w, first)
		}
	}
}

// A review of the working tree whose reviewer reports a blocker: exit 3,
// the findings written by ultra and printed, and nothing of the checkout
// changed (no branch, no worktree, the same status).
func TestReviewWorkingTreeBlocker(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	os.WriteFile(filepath.Join(dir, "calc/calc.go"), []byte("package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a * b\n}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "calc/mul_test.go"), []byte("package calc\n\nimport \"testing\"\n\nfunc TestMulLike(t *testing.T) {}\n"), 0o644)
	before := git(t, dir, "status", "--porcelain", "--untracked-files=all")
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"}), call("bash", map[string]any{"command": "git diff HEAD --stat"})),
		calls(call("review", map[string]any{"verdict": "blockers", "summary": "Add multiplies now.",
			"findings": []any{
				map[string]any{"severity": "blocker", "file": "calc/calc.go", "line": 5, "reason": "Add multiplies instead of adding", "fix": "return a + b"},
				map[string]any{"severity": "nit", "file": "calc/mul_test.go", "reason": "the new test checks nothing"},
			}})))
	res := ultra(t, dir, reviewArgs(m)...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	checkReviewRequests(t, m, 2, "the working tree against HEAD", "## Diff stat", "calc/calc.go", "return a * b",
		"## Tests touched", "A calc/mul_test.go")
	path, rep := findingsFile(t, dir)
	fs, _ := rep["findings"].([]any)
	if rep["verdict"] != "blockers" || rep["blockers"] != 1.0 || len(fs) != 2 {
		t.Fatalf("findings file %s: %v", path, rep)
	}
	if f := fs[0].(map[string]any); f["file"] != "calc/calc.go" || f["line"] != 5.0 || f["severity"] != "blocker" || f["fix"] != "return a + b" {
		t.Fatalf("first finding %v", f)
	}
	if _, err := os.Stat(strings.TrimSuffix(path, ".json") + ".md"); err != nil {
		t.Fatal("no readable findings beside the JSON:", err)
	}
	for _, w := range []string{"blocker", "calc/calc.go:5", "Add multiplies instead of adding", "fix: return a + b", "nit", "calc/mul_test.go"} {
		if !strings.Contains(res.stdout, w) {
			t.Fatalf("stdout lacks %q:\n%s", w, res.stdout)
		}
	}
	// One word per verdict, and no success mark on a review that found
	// blockers.
	log := res.stdout + res.stderr
	if !strings.Contains(log, "review round 1: blockers") || strings.Contains(log, "REQUEST_CHANGES") || strings.Contains(log, "✔") ||
		!strings.Contains(log, "✗ complete — the review found 1 blocker(s)") {
		t.Fatalf("mixed signals:\n%s", log)
	}
	noBranchOrWorktree(t, dir)
	if after := git(t, dir, "status", "--porcelain", "--untracked-files=all"); after != before {
		t.Fatalf("the checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// The review is a run like any other: ultra status knows it.
	j := ultra(t, dir, "status", strings.TrimSuffix(filepath.Base(path), ".json"))
	if j.code != 0 || !strings.Contains(j.stdout, "complete") {
		t.Fatalf("status of the review run: %d\n%s%s", j.code, j.stdout, j.stderr)
	}
}

// A review-mode run takes an architecture status too: an approval with
// CONCERNS is not clean, so ultra review shows the status and its
// reasons, writes them with the findings, and exits 3 with no success
// mark.
func TestReviewApprovalWithArchitectureConcerns(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	os.WriteFile(filepath.Join(dir, "calc/calc.go"), []byte("package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\tif a == 0 {\n\t\treturn b\n\t}\n\treturn a + b\n}\n"), 0o644)
	why := "Add special-cases zero beside the addition that already covers it"
	m := newModel(t, calls(call("review", map[string]any{"verdict": "approve", "summary": "Add adds",
		"architecture": architecture("CONCERNS", why)})))
	res := ultra(t, dir, reviewArgs(m)...)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	path, rep := findingsFile(t, dir)
	if rs, _ := rep["architecture_reasons"].([]any); rep["verdict"] != "approve" || rep["architecture"] != "CONCERNS" || len(rs) != 1 || rs[0] != why {
		t.Fatalf("findings file %s: %v", path, rep)
	}
	if md := readFile(t, strings.TrimSuffix(path, ".json")+".md"); !strings.Contains(md, "- architecture: CONCERNS") || !strings.Contains(md, "- "+why) {
		t.Fatalf("the readable findings:\n%s", md)
	}
	log := res.stdout + res.stderr
	for _, w := range []string{"review round 1: approve, architecture CONCERNS", "✗ architecture: " + why,
		"verdict  approve, architecture CONCERNS (0 blocker(s), 0 finding(s))", "architecture CONCERNS: " + why} {
		if !strings.Contains(log, w) {
			t.Fatalf("the output lacks %q:\n%s", w, log)
		}
	}
	if strings.Contains(log, "✔") {
		t.Fatalf("a review that is not clean is shown as a success:\n%s", log)
	}
}

// A review of a range that approves exits 0; its first message carries
// the range's diff (not the working tree's).
func TestReviewRangeApproves(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	a := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	os.WriteFile(filepath.Join(dir, "calc/calc.go"), []byte("package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"), 0o644)
	git(t, dir, "commit", "-qam", "add adds")
	b := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	// An uncommitted change that is not part of the range.
	os.WriteFile(filepath.Join(dir, "NOTES"), []byte("scratch\n"), 0o644)
	m := newModel(t, calls(call("review", map[string]any{"verdict": "approve", "summary": "the fix is right",
		"findings": []any{map[string]any{"severity": "minor", "file": "calc/calc.go", "line": 3, "reason": "the comment could name the overflow behaviour"}}})))
	res := ultra(t, dir, reviewArgs(m, "--output", "jsonl", "--base", a, "--head", b)...)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	checkReviewRequests(t, m, 1, "return a + b", "the sum of a and b", a[:12], b[:12])
	if first := string(m.srv.Requests()[0].Body); strings.Contains(first, "NOTES") {
		t.Fatal("the range's review shows a working-tree file")
	}
	evs := res.events(t)
	fin := ofType(evs, "run_finished")
	if len(fin) != 1 || data(fin[0])["status"] != "complete" {
		t.Fatalf("run_finished %v", fin)
	}
	if st := ofType(evs, "run_started"); data(st[0])["axes"].(map[string]any)["mode"] != "review" || data(st[0])["branch"] != nil {
		t.Fatalf("run_started %v", st[0])
	}
	_, rep := findingsFile(t, dir)
	if rep["verdict"] != "approve" || rep["blockers"] != 0.0 || rep["head"] != b || rep["base"] != a {
		t.Fatalf("findings %v", rep)
	}
	if !strings.Contains(res.stderr, "the comment could name the overflow behaviour") {
		t.Fatalf("the findings are not printed (stderr, since stdout is the event stream):\n%s", res.stderr)
	}
	noBranchOrWorktree(t, dir)
}

// Malformed review calls are tool errors the model reads, naming the
// finding and its field; the run goes on and the next call succeeds.
func TestReviewMalformedFindings(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	os.WriteFile(filepath.Join(dir, "calc/calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644)
	m := newModel(t,
		calls(call("review", map[string]any{"verdict": "blockers", "findings": []any{
			map[string]any{"severity": "critical", "file": "calc/calc.go", "reason": "x"}}})),
		calls(call("review", map[string]any{"verdict": "blockers", "findings": []any{
			map[string]any{"severity": "blocker", "file": "calc/calc.go", "reason": "ok"},
			map[string]any{"severity": "blocker", "file": "calc/nope.go", "reason": "a file that is not there"}}})),
		calls(call("review", map[string]any{"verdict": "approve", "findings": []any{
			map[string]any{"severity": "blocker", "file": "calc/calc.go", "line": 3, "reason": "inconsistent"}}})),
		calls(call("review", map[string]any{"verdict": "approve", "findings": []any{
			map[string]any{"severity": "major", "file": "calc/calc.go", "line": 0, "reason": "line zero"}}})),
		calls(call("review", map[string]any{"verdict": "approve", "summary": "fine", "findings": []any{}})))
	res := ultra(t, dir, reviewArgs(m, "--output", "jsonl", "--json")...)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	checkReviewRequests(t, m, 5)
	reqs := m.srv.Requests()
	for i, want := range []string{
		`findings[0].severity: \"critical\" is not a severity`,
		`findings[1].file: \"calc/nope.go\" is not a file of the reviewed tree`,
		`inconsistent with finding 0 of severity blocker`,
		`findings[0].line must be a positive integer`,
	} {
		if !strings.Contains(string(reqs[i+1].Body), want) {
			t.Fatalf("request %d does not tell the model %q", i+2, want)
		}
	}
	var results int
	evs := res.events(t)
	for _, e := range ofType(evs, "tool_result") {
		if data(e)["tool"] == "review" && data(e)["is_error"] == true {
			results++
		}
	}
	if results != 4 {
		t.Fatalf("%d failed review calls, want 4", results)
	}
	// --json with --output jsonl: the findings file is the last line.
	last := evs[len(evs)-1]
	if last["verdict"] != "approve" || last["summary"] != "fine" {
		t.Fatalf("last line %v, want the findings file", last)
	}
	_, rep := findingsFile(t, dir)
	if rep["summary"] != "fine" {
		t.Fatalf("findings %v", rep)
	}
}

// A reviewer that tries to write is refused (the phase guard; bash is
// read-only), and the file is the same on disk.
func TestReviewCannotWrite(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	changed := "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	os.WriteFile(filepath.Join(dir, "calc/calc.go"), []byte(changed), 0o644)
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("write", map[string]any{"file_path": "calc/calc.go", "content": "package calc\n"})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "a + b", "new_string": "a - b"})),
		calls(call("bash", map[string]any{"command": "echo hacked > calc/calc.go"})),
		calls(call("bash", map[string]any{"command": "sed -i s/a/b/ calc/calc.go"})),
		calls(call("review", map[string]any{"verdict": "approve", "findings": []any{}})))
	res := ultra(t, dir, reviewArgs(m, "--output", "jsonl")...)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	checkReviewRequests(t, m, 6)
	var layers []string
	for _, e := range ofType(res.events(t), "refusal") {
		layers = append(layers, data(e)["tool"].(string)+":"+data(e)["layer"].(string))
	}
	want := []string{"write:phase-guard", "edit:phase-guard", "bash:planning-read-only", "bash:planning-read-only"}
	if !slices.Equal(layers, want) {
		t.Fatalf("refusals %v, want %v", layers, want)
	}
	if got := readFile(t, filepath.Join(dir, "calc/calc.go")); got != changed {
		t.Fatalf("calc.go changed on disk:\n%s", got)
	}
	noBranchOrWorktree(t, dir)
}

// Nothing to review, or a ref that does not exist: exit 2 before any run.
func TestReviewRefusesEmptyDiffAndUnknownRefs(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t, calls(call("review", map[string]any{"verdict": "approve"})))
	res := ultra(t, dir, reviewArgs(m)...)
	if res.code != 2 || !strings.Contains(res.stderr, "nothing to review") {
		t.Fatalf("empty diff: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = ultra(t, dir, reviewArgs(m, "--base", "HEAD", "--head", "main")...)
	if res.code != 2 || !strings.Contains(res.stderr, "nothing to review") {
		t.Fatalf("empty range: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = ultra(t, dir, reviewArgs(m, "--base", "no-such-ref")...)
	if res.code != 2 || !strings.Contains(res.stderr, `"no-such-ref"`) {
		t.Fatalf("unknown base: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = ultra(t, dir, reviewArgs(m, "--base", "main", "--head", "feature-x")...)
	if res.code != 2 || !strings.Contains(res.stderr, `"feature-x"`) {
		t.Fatalf("unknown head: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if n := len(m.srv.Requests()); n != 0 {
		t.Fatalf("%d model requests, want none", n)
	}
	if runs := ultra(t, dir, "runs"); strings.Contains(runs.stdout, "review") {
		t.Fatalf("a run was made:\n%s", runs.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ultra", "state", "reviews")); err == nil {
		t.Fatal("findings were written")
	}
}

// A final reviewer that approves with architecture CONCERNS does not let
// the change land: the run goes back to iterating with the reasons as what
// must change, verifies again, and the second review, clean (APPROVE and
// CLEAR), completes it. The review events, the log and the ledger carry
// the architecture status.
func TestReviewArchitectureConcernsThenClean(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	why := "the comment of Add says a plus b where the package documents results: say Add returns the sum"
	m, res := reviseAfterReview(t, dir, calls(call("review", map[string]any{"verdict": "APPROVE", "summary": "Add adds", "architecture": architecture("CONCERNS", why)})))
	evs := res.events(t)
	checkPhases(t, evs, "building", "verifying", "cleaning", "verifying", "reviewing", "iterating", "verifying", "cleaning", "verifying", "reviewing", "complete")
	if r := data(ofType(evs, "phase_changed")[5])["reason"].(string); !strings.Contains(r, "the final review asks for changes (round 1 of 3): architecture CONCERNS: "+why) {
		t.Fatalf("back to iterating because %q", r)
	}
	// The builder got the reasons as what must change.
	reqs := m.srv.Requests()
	if b := string(reqs[7].Body); !strings.Contains(b, "asks for changes (approve, architecture CONCERNS)") || !strings.Contains(b, "- architecture CONCERNS: "+why) {
		t.Fatalf("the builder was not told the architecture's reasons:\n%s", b)
	}
	reviews := ofType(evs, "review")
	if len(reviews) != 2 {
		t.Fatalf("%d review events", len(reviews))
	}
	first, second := data(reviews[0]), data(reviews[1])
	if rs, _ := first["architecture_reasons"].([]any); first["verdict"] != "approve" || first["architecture"] != "CONCERNS" || len(rs) != 1 || rs[0] != why {
		t.Fatalf("first review event %v", first)
	}
	if second["verdict"] != "approve" || second["architecture"] != "CLEAR" {
		t.Fatalf("second review event %v", second)
	}
	l := ultra(t, dir, "goals", "ledger", "--run", runID(t, evs))
	if strings.Count(l.stdout, "review_verdict") != 2 || !strings.Contains(l.stdout, "round 1: approve, architecture CONCERNS") ||
		!strings.Contains(l.stdout, "round 2: approve, architecture CLEAR") {
		t.Fatalf("ledger:\n%s", l.stdout)
	}
}

// The final review of a build run takes the same findings: a malformed
// one is a tool error, a blocker (with its fix) sends the run back to
// iterating, and an approval with a minor finding completes it; ultra
// writes the findings as a review run's. Then ultra review RUN reviews the
// run's branch against its start.
func TestFinalReviewFindingsThenReviewRun(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	steps := append(fixSteps()[:5:5],
		calls(call("review", map[string]any{"verdict": "blockers", "architecture": architecture("CLEAR"), "findings": []any{
			map[string]any{"severity": "blocker", "file": "calc/missing.go", "reason": "no such file"}}})),
		calls(call("review", map[string]any{"verdict": "blockers", "architecture": architecture("CLEAR"), "summary": "the comment", "findings": []any{
			map[string]any{"severity": "blocker", "file": "calc/calc.go", "line": 3, "reason": "the comment says 'a plus b' loosely", "fix": "say it returns the sum"},
			map[string]any{"severity": "nit", "file": "calc/calc_test.go", "reason": "a table test would read better"}}})),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "// Add returns a plus b.", "new_string": "// Add returns the sum of a and b."})),
		calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{})),
		calls(call("review", map[string]any{"verdict": "approve", "architecture": architecture("CLEAR"), "findings": []any{
			map[string]any{"severity": "minor", "file": "calc/calc.go", "line": 4, "reason": "overflow is not mentioned"}}})))
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := m.srv.Requests()
	// (requests 0-4: the fix; 5: the end of the cleanup pass; 6: the
	// first review)
	if !strings.Contains(string(reqs[7].Body), `findings[0].file: \"calc/missing.go\" is not a file of the reviewed tree`) {
		t.Fatal("the final reviewer was not told its finding names no file")
	}
	if b := string(reqs[8].Body); !strings.Contains(b, "say it returns the sum") || !strings.Contains(b, "a table test would read better") {
		t.Fatal("the builder did not get the blocker's fix and the other findings")
	}
	id := runID(t, res.events(t))
	_, rep := findingsFile(t, dir)
	if rep["run"] != id || rep["verdict"] != "approve" || rep["round"] != 2.0 {
		t.Fatalf("findings %v", rep)
	}
	var g struct {
		Review struct {
			Verdict string `json:"verdict"`
			Rounds  int    `json:"rounds"`
		} `json:"review"`
	}
	wt := strings.TrimSpace(strings.Split(git(t, dir, "worktree", "list", "--porcelain"), "\n\n")[1])
	wt = strings.TrimPrefix(strings.SplitN(wt, "\n", 2)[0], "worktree ")
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(recordsIn(t, wt), "goals.json"))), &g); err != nil || g.Review.Verdict != "approve" || g.Review.Rounds != 2 {
		t.Fatalf("goals.json review %+v (%v)", g.Review, err)
	}

	// ultra review RUN: the run's branch against its start.
	os.Remove(filepath.Join(dir, ".ultra", "state", "reviews", id+".json"))
	rm := newModel(t, calls(call("review", map[string]any{"verdict": "approve", "summary": "the fix is right"})))
	rv := ultra(t, dir, reviewArgs(rm, "--json", id)...)
	if rv.code != 0 {
		t.Fatalf("review of the run: exit %d\n%s\n%s", rv.code, rv.stdout, rv.stderr)
	}
	checkReviewRequests(t, rm, 1, "run "+id+"'s branch", "ultra/"+id, "-\treturn a - b", "+\treturn a + b", "the sum of a and b")
	var out map[string]any
	if err := json.Unmarshal([]byte(rv.stdout[strings.LastIndex(rv.stdout, "\n{")+1:]), &out); err != nil || out["verdict"] != "approve" || out["summary"] != "the fix is right" {
		t.Fatalf("--json printed %v (%v):\n%s", out, err, rv.stdout)
	}
	if b := strings.TrimSpace(git(t, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/ultra/")); b != "ultra/"+id {
		t.Fatalf("branches after the review: %q", b)
	}
	// A run without a branch (the review run itself) has nothing to review.
	rid, _ := out["run"].(string)
	if again := ultra(t, dir, reviewArgs(rm, rid)...); again.code != 2 || !strings.Contains(again.stderr, "has no branch to review") {
		t.Fatalf("review of a review run: exit %d\n%s", again.code, again.stderr)
	}
}
