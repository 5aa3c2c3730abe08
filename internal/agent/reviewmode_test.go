package agent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// files of a reviewed tree, for the validation's existence check.
func inReviewed(f string) bool {
	return f == "calc/calc.go" || f == "calc/calc_test.go" || f == "README.md"
}

func TestParseReviewCall(t *testing.T) {
	cases := []struct {
		name     string
		args     string
		err      string // "" for a valid call; else a part of the error
		verdict  string
		findings int
		blockers int
	}{
		{"approve, no findings", `{"verdict":"approve"}`, "", VerdictApprove, 0, 0},
		{"approve with minor findings", `{"verdict":"approve","summary":"ok","findings":[{"severity":"minor","file":"calc/calc.go","line":3,"reason":"r","fix":"f"},{"severity":"nit","file":"README.md","reason":"typo"}]}`, "", VerdictApprove, 2, 0},
		{"blockers", `{"verdict":"blockers","findings":[{"severity":"major","file":"calc/calc.go","reason":"r"},{"severity":"blocker","file":"calc/calc.go","line":5,"reason":"wrong"}]}`, "", VerdictBlockers, 2, 1},
		{"null line and fix are absent", `{"verdict":"approve","findings":[{"severity":"nit","file":"README.md","line":null,"fix":null,"reason":"r"}]}`, "", VerdictApprove, 1, 0},
		{"./ and a clean path", `{"verdict":"approve","findings":[{"severity":"nit","file":"./calc//calc.go","reason":"r"}]}`, "", VerdictApprove, 1, 0},
		// The final review's older form.
		{"APPROVE", `{"verdict":"APPROVE"}`, "", VerdictApprove, 0, 0},
		{"REQUEST_CHANGES with blocker objects", `{"verdict":"REQUEST_CHANGES","blockers":[{"file":"calc/calc.go","line":3,"reason":"r"}]}`, "", VerdictBlockers, 1, 1},
		{"REQUEST_CHANGES with blocker strings", `{"verdict":"REQUEST_CHANGES","blockers":["calc/calc.go:3: the comment lies","README.md: stale"]}`, "", VerdictBlockers, 2, 2},
		{"findings and blockers together", `{"verdict":"blockers","findings":[{"severity":"nit","file":"README.md","reason":"r"}],"blockers":[{"file":"calc/calc.go","reason":"r"}]}`, "", VerdictBlockers, 2, 1},

		{"not an object", `[1]`, "must be a JSON object", "", 0, 0},
		{"empty arguments", ``, "verdict is missing", "", 0, 0},
		{"unknown verdict", `{"verdict":"lgtm"}`, `verdict must be "approve" or "blockers", not "lgtm"`, "", 0, 0},
		{"verdict not a string", `{"verdict":true}`, "verdict must be a string", "", 0, 0},
		{"unknown top-level field", `{"verdict":"approve","score":3}`, "score: unknown field", "", 0, 0},
		{"unknown finding field", `{"verdict":"approve","findings":[{"severity":"nit","file":"README.md","reason":"r"},{"severity":"nit","file":"README.md","reason":"r","confidence":0.9}]}`, "findings[1].confidence: unknown field", "", 0, 0},
		{"findings not an array", `{"verdict":"approve","findings":{"severity":"nit"}}`, "findings must be an array", "", 0, 0},
		{"finding not an object", `{"verdict":"approve","findings":["README.md: typo"]}`, "findings[0] must be an object", "", 0, 0},
		{"bad severity", `{"verdict":"blockers","findings":[{"severity":"critical","file":"calc/calc.go","reason":"r"}]}`, `findings[0].severity: "critical" is not a severity`, "", 0, 0},
		{"severity in capitals", `{"verdict":"blockers","findings":[{"severity":"BLOCKER","file":"calc/calc.go","reason":"r"}]}`, `findings[0].severity: "BLOCKER" is not a severity`, "", 0, 0},
		{"missing severity", `{"verdict":"approve","findings":[{"file":"calc/calc.go","reason":"r"}]}`, "findings[0].severity is missing", "", 0, 0},
		{"missing reason", `{"verdict":"approve","findings":[{"severity":"nit","file":"calc/calc.go"}]}`, "findings[0].reason is missing", "", 0, 0},
		{"blank reason", `{"verdict":"approve","findings":[{"severity":"nit","file":"calc/calc.go","reason":"  "}]}`, "findings[0].reason is missing", "", 0, 0},
		{"reason not a string", `{"verdict":"approve","findings":[{"severity":"nit","file":"calc/calc.go","reason":7}]}`, "findings[0].reason must be a string", "", 0, 0},
		{"missing file", `{"verdict":"approve","findings":[{"severity":"nit","reason":"r"}]}`, "findings[0].file: is missing", "", 0, 0},
		{"file not in the tree", `{"verdict":"blockers","findings":[{"severity":"blocker","file":"calc/calc.go","reason":"r"},{"severity":"blocker","file":"calc/nope.go","reason":"r"}]}`, `findings[1].file: "calc/nope.go" is not a file of the reviewed tree`, "", 0, 0},
		{"absolute file", `{"verdict":"approve","findings":[{"severity":"nit","file":"/etc/passwd","reason":"r"}]}`, `findings[0].file: "/etc/passwd" is absolute`, "", 0, 0},
		{"file outside", `{"verdict":"approve","findings":[{"severity":"nit","file":"../x/calc/calc.go","reason":"r"}]}`, "is not a file inside the repository", "", 0, 0},
		{"line zero", `{"verdict":"approve","findings":[{"severity":"nit","file":"README.md","line":0,"reason":"r"}]}`, "findings[0].line must be a positive integer", "", 0, 0},
		{"negative line", `{"verdict":"approve","findings":[{"severity":"nit","file":"README.md","line":-4,"reason":"r"}]}`, "findings[0].line must be a positive integer", "", 0, 0},
		{"fractional line", `{"verdict":"approve","findings":[{"severity":"nit","file":"README.md","line":2.5,"reason":"r"}]}`, "findings[0].line must be a positive integer", "", 0, 0},
		{"line as a string", `{"verdict":"approve","findings":[{"severity":"nit","file":"README.md","line":"12","reason":"r"}]}`, "findings[0].line must be a positive integer", "", 0, 0},
		{"approve with a blocker", `{"verdict":"approve","findings":[{"severity":"nit","file":"README.md","reason":"r"},{"severity":"blocker","file":"calc/calc.go","line":3,"reason":"r"}]}`, `verdict "approve" is inconsistent with finding 1 of severity blocker (calc/calc.go:3)`, "", 0, 0},
		{"APPROVE with blockers", `{"verdict":"APPROVE","blockers":[{"file":"calc/calc.go","reason":"r"}]}`, `verdict "approve" is inconsistent`, "", 0, 0},
		{"blockers without a blocker", `{"verdict":"blockers","findings":[{"severity":"major","file":"calc/calc.go","reason":"r"}]}`, `verdict "blockers" needs at least one finding of severity blocker`, "", 0, 0},
		{"REQUEST_CHANGES without blockers", `{"verdict":"REQUEST_CHANGES"}`, `needs at least one finding of severity blocker`, "", 0, 0},
		{"old blocker without a file", `{"verdict":"REQUEST_CHANGES","blockers":[{"reason":"r"}]}`, "blockers[0].file: is missing", "", 0, 0},
		{"old blocker with a severity", `{"verdict":"REQUEST_CHANGES","blockers":[{"file":"calc/calc.go","reason":"r","severity":"nit"}]}`, "blockers[0].severity: unknown field", "", 0, 0},
		{"old blocker string without a file", `{"verdict":"REQUEST_CHANGES","blockers":["it is wrong"]}`, `blockers[0]: a blocker names a file and a reason`, "", 0, 0},
		{"old blocker string naming no file of the tree", `{"verdict":"REQUEST_CHANGES","blockers":["calc/calc.go:3: ok","main.go:1: wrong"]}`, `blockers[1].file: "main.go" is not a file of the reviewed tree`, "", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseReviewCall([]byte(c.args), inReviewed)
			if c.err != "" {
				if err == nil {
					t.Fatalf("no error, want %q (got %+v)", c.err, got)
				}
				if !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %q, want it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if got.Verdict != c.verdict || len(got.Findings) != c.findings || len(got.Blockers()) != c.blockers {
				t.Fatalf("got verdict %s, %d findings, %d blockers; want %s, %d, %d", got.Verdict, len(got.Findings), len(got.Blockers()), c.verdict, c.findings, c.blockers)
			}
		})
	}
}

func TestParseReviewCallFields(t *testing.T) {
	c, err := ParseReviewCall([]byte(`{"verdict":"blockers","summary":"s","findings":[{"severity":"blocker","file":"./calc/calc.go","line":5,"reason":" r ","fix":"f"}],"blockers":["README.md:2: stale"]}`), inReviewed)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{{Severity: "blocker", File: "calc/calc.go", Line: 5, Reason: "r", Fix: "f"}, {Severity: "blocker", File: "README.md", Line: 2, Reason: "stale"}}
	if c.Summary != "s" || len(c.Findings) != 2 || c.Findings[0] != want[0] || c.Findings[1] != want[1] {
		t.Fatalf("got %+v", c)
	}
	if s := c.Findings[0].String(); s != "blocker calc/calc.go:5: r (fix: f)" {
		t.Fatalf("String() = %q", s)
	}
	// Without an existence check any relative file is accepted.
	if _, err := ParseReviewCall([]byte(`{"verdict":"approve","findings":[{"severity":"nit","file":"any/where.go","reason":"r"}]}`), nil); err != nil {
		t.Fatal(err)
	}
}

func TestIsTestFile(t *testing.T) {
	for p, want := range map[string]bool{
		"calc/calc_test.go": true, "tests/test_parse.py": true, "pkg/test_x.py": true, "web/app.test.ts": true,
		"web/app.spec.js": true, "src/test/java/FooTest.java": true, "e2e/review_test.go": true, "__tests__/a.js": true,
		"calc/calc.go": false, "latest.go": false, "contest/main.go": false, "attest.py": false, "README.md": false,
	} {
		if got := IsTestFile(p); got != want {
			t.Errorf("IsTestFile(%q) = %v, want %v", p, got, want)
		}
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestPrepareReview(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a\n")
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "one")
	a := gitIn(t, dir, "rev-parse", "HEAD")

	var ie *ReviewInputError
	if _, err := PrepareReview(ctx, dir, ReviewSpec{}); !errors.As(err, &ie) || !strings.Contains(err.Error(), "nothing to review") {
		t.Fatalf("a clean checkout: %v", err)
	}
	if _, err := PrepareReview(ctx, dir, ReviewSpec{Base: "nope"}); !errors.As(err, &ie) || !strings.Contains(err.Error(), `base "nope"`) {
		t.Fatalf("an unknown base: %v", err)
	}
	if _, err := PrepareReview(ctx, dir, ReviewSpec{Base: "main", Head: "feature"}); !errors.As(err, &ie) || !strings.Contains(err.Error(), `head "feature"`) {
		t.Fatalf("an unknown head: %v", err)
	}

	write("a.go", "package a\n\nfunc A() {}\n")
	write("a_test.go", "package a\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "two")
	b := gitIn(t, dir, "rev-parse", "HEAD")
	write("untracked.txt", strings.Repeat("x", 100)+"\n")

	// The range: the working tree's file is not part of it.
	rt, err := PrepareReview(ctx, dir, ReviewSpec{Base: a, Head: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if rt.Spec.Base != a || rt.Spec.Head != b || rt.Spec.Tree != gitIn(t, dir, "rev-parse", b+"^{tree}") {
		t.Fatalf("spec %+v", rt.Spec)
	}
	if strings.Contains(rt.Diff, "untracked.txt") || !strings.Contains(rt.Diff, "+func A() {}") {
		t.Fatalf("range diff:\n%s", rt.Diff)
	}
	if len(rt.Tests) != 1 || rt.Tests[0] != "A a_test.go" {
		t.Fatalf("tests %v", rt.Tests)
	}
	if !strings.HasPrefix(rt.Stat, " a.go") {
		t.Fatalf("the stat lost its first line's indentation: %q", rt.Stat)
	}
	// The working tree against HEAD: the untracked file is in it, and the
	// checkout's index is untouched.
	wt, err := PrepareReview(ctx, dir, ReviewSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if wt.Spec.Base != b || wt.Spec.Head != "" || !strings.Contains(wt.Diff, "untracked.txt") {
		t.Fatalf("working tree review %+v\n%s", wt.Spec, wt.Diff)
	}
	if st := gitIn(t, dir, "status", "--porcelain"); st != "?? untracked.txt" {
		t.Fatalf("status after preparing: %q", st)
	}
	if !inTree(ctx, dir, wt.Spec.Tree, "untracked.txt") || inTree(ctx, dir, wt.Spec.Tree, "gone.txt") {
		t.Fatal("the reviewed tree's files")
	}

	// A diff beyond the bound is cut, and the message says where and how
	// to see the rest.
	big := &ReviewTarget{Spec: rt.Spec, Stat: rt.Stat, Diff: "diff --git a/x b/x\n" + strings.Repeat("+line\n", MaxReviewDiff/6+100)}
	msg := big.Message()
	if len(msg) > MaxReviewDiff+4096 || !strings.Contains(msg, "[diff cut here") || !strings.Contains(msg, "git diff "+a+" "+b) {
		t.Fatalf("cut message (%d bytes) ends: %s", len(msg), msg[len(msg)-300:])
	}
	if m := rt.Message(); strings.Contains(m, "diff cut") || !strings.Contains(m, "A a_test.go") || !strings.Contains(m, "+func A() {}") {
		t.Fatalf("message:\n%s", m)
	}
}
