package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// These tests run real tools (go, node, npm, make, bash) in temporary
// directories.

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

func verify(t *testing.T, req Request) *Result {
	t.Helper()
	if req.LogDir == "" {
		req.LogDir = filepath.Join(t.TempDir(), "verify")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := New().Verify(ctx, req)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if s := res.Summary(); len(s) > MaxSummary {
		t.Errorf("summary is %d bytes, more than %d", len(s), MaxSummary)
	}
	if len(res.Excerpt) > MaxExcerpt {
		t.Errorf("excerpt is %d bytes, more than %d", len(res.Excerpt), MaxExcerpt)
	}
	t.Logf("summary:\n%s", res.Summary())
	return res
}

func wantStatus(t *testing.T, res *Result, want Status) {
	t.Helper()
	if res.Status != want {
		t.Fatalf("status = %s, want %s (reason: %s)", res.Status, want, res.Reason)
	}
}

func wantCounts(t *testing.T, res *Result, passed, failed, skipped int) {
	t.Helper()
	if res.Passed != passed || res.Failed != failed || res.Skipped != skipped {
		t.Errorf("counts = %d passed, %d failed, %d skipped; want %d, %d, %d",
			res.Passed, res.Failed, res.Skipped, passed, failed, skipped)
	}
}

const goMod = "module example.com/calc\n\ngo 1.21\n"

const calcGo = `package calc

func Add(a, b int) int { return a + b }
func Sub(a, b int) int { return a - b }
`

func TestGoOneFailing(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{
		"go.mod":  goMod,
		"calc.go": calcGo,
		"calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add broken")
	}
}

func TestSub(t *testing.T) {
	if got := Sub(5, 3); got != 3 {
		t.Errorf("Sub(5, 3) = %d, want 3", got)
	}
}
`,
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 1, 1, 0)
	if !slices.Equal(res.Failing, []string{"example.com/calc.TestSub (calc_test.go:13)"}) {
		t.Errorf("failing = %q", res.Failing)
	}
	if res.Reason != "1 of 2 tests failed" {
		t.Errorf("reason = %q", res.Reason)
	}
	if !strings.Contains(res.Excerpt, "Sub(5, 3) = 2, want 3") {
		t.Errorf("excerpt lacks the failure message:\n%s", res.Excerpt)
	}
	c := res.Commands[0]
	if c.Command != "go test -json ./..." || !strings.HasPrefix(c.Source, "go.mod at the root") || c.ExitCode != 1 || !c.ReportOK || c.Format != "go-json" {
		t.Errorf("command = %+v", c)
	}
	log, err := os.ReadFile(c.LogPath)
	if err != nil || !strings.Contains(string(log), `"Action":"fail"`) {
		t.Errorf("log %s: %v, %d bytes", c.LogPath, err, len(log))
	}
	sum := res.Summary()
	for _, want := range []string{"fail", "example.com/calc.TestSub", c.LogPath, "Sub(5, 3)"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

func TestGoAllPass(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{
		"go.mod":  goMod,
		"calc.go": calcGo,
		"calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add broken")
	}
}

func TestSub(t *testing.T) {
	for _, c := range []struct{ a, b, want int }{{5, 3, 2}, {1, 1, 0}} {
		t.Run("", func(t *testing.T) {
			if Sub(c.a, c.b) != c.want {
				t.Fail()
			}
		})
	}
}
`,
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusPass)
	wantCounts(t, res, 4, 0, 0) // TestAdd, TestSub and its two subtests: go test -v's "---" lines
	if res.Excerpt != "" || len(res.Failing) != 0 {
		t.Errorf("excerpt %q, failing %q", res.Excerpt, res.Failing)
	}
}

func TestGoNoTests(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{"go.mod": goMod, "calc.go": calcGo})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusNotEvaluated)
	if !strings.Contains(res.Reason, "no tests ran") {
		t.Errorf("reason = %q", res.Reason)
	}
}

func TestGoEmptyModule(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{"go.mod": goMod})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusNotEvaluated)
	if !strings.Contains(res.Reason, "no packages to test") {
		t.Errorf("reason = %q", res.Reason)
	}
}

func TestGoCompileError(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{
		"go.mod":  goMod,
		"calc.go": calcGo,
		"calc_test.go": `package calc

import "testing"

func TestMul(t *testing.T) {
	if Mul(2, 3) != 6 {
		t.Fail()
	}
}
`,
		"other/other.go":      "package other\n\nfunc One() int { return 1 }\n",
		"other/other_test.go": "package other\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fail()\n\t}\n}\n",
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 1, 0, 0) // and the package that does not build: an error
	if !slices.Equal(res.Failing, []string{"example.com/calc (calc_test.go:6)"}) || res.Errors != 1 {
		t.Errorf("failing = %q (%d errors), want the package", res.Failing, res.Errors)
	}
	if !strings.Contains(res.Excerpt, "undefined: Mul") || !strings.Contains(res.Excerpt, "ERROR: example.com/calc") {
		t.Errorf("excerpt lacks the compile error:\n%s", res.Excerpt)
	}
}

func TestGoHangTimesOut(t *testing.T) {
	t.Parallel()
	need(t, "go")
	dir := project(t, map[string]string{
		"go.mod": goMod,
		"hang_test.go": `package calc

import (
	"testing"
	"time"
)

func TestHang(t *testing.T) { time.Sleep(time.Hour) }
`,
	})
	start := time.Now()
	res := verify(t, Request{Dir: dir, Timeout: 2 * time.Second})
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Verify took %s after a 2s timeout", took)
	}
	wantStatus(t, res, StatusFail)
	if !res.Commands[0].TimedOut {
		t.Error("TimedOut not set")
	}
	if !strings.Contains(res.Reason, "timed out after 2s") || !strings.Contains(res.Reason, "process group killed") {
		t.Errorf("reason = %q", res.Reason)
	}
}

func TestExplicitZeroTests(t *testing.T) {
	t.Parallel()
	res := verify(t, Request{Dir: t.TempDir(), Commands: []string{"true"}})
	wantStatus(t, res, StatusNotEvaluated)
	if res.Reason != "`true`: the output has no summary ultra can read: 0 lines, exit status 0" {
		t.Errorf("reason = %q", res.Reason)
	}
	if res.Commands[0].Source != SourceConfig {
		t.Errorf("source = %q", res.Commands[0].Source)
	}
}

func TestExplicitPassingCountsButExit1(t *testing.T) {
	t.Parallel()
	res := verify(t, Request{Dir: t.TempDir(), Commands: []string{`echo "3 passed, 0 failed"; exit 1`}})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 3, 0, 0)
	if !strings.Contains(res.Reason, "exited 1") {
		t.Errorf("reason = %q", res.Reason)
	}
}

func TestExplicitCommandsAllMustPass(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := verify(t, Request{Dir: dir, Commands: []string{
		`echo "2 passed, 0 failed"`,
		`echo "1 passed, 1 failed"; echo "boom: the second suite"; exit 1`,
	}})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 3, 1, 0)
	if len(res.Commands) != 2 || res.Commands[0].ExitCode != 0 || res.Commands[1].ExitCode != 1 {
		t.Fatalf("commands = %+v", res.Commands)
	}
	if res.Commands[0].LogPath == res.Commands[1].LogPath {
		t.Error("commands share a log")
	}
	if !strings.Contains(res.Excerpt, "boom: the second suite") {
		t.Errorf("excerpt = %q", res.Excerpt)
	}

	res = verify(t, Request{Dir: dir, Commands: []string{`echo "2 passed, 0 failed"`, "true"}})
	wantStatus(t, res, StatusPass)
	wantCounts(t, res, 2, 0, 0)
}

func TestEnvironmentAndStdin(t *testing.T) {
	t.Parallel()
	// cat would hang on an open stdin; CI must be true.
	res := verify(t, Request{Dir: t.TempDir(), Commands: []string{`cat; test "$CI" = true && echo "1 passed, 0 failed"`}})
	wantStatus(t, res, StatusPass)
}

func TestMakefile(t *testing.T) {
	t.Parallel()
	need(t, "make")
	dir := project(t, map[string]string{
		"Makefile": ".PHONY: test\nBIN := x\n\nbuild:\n\t@true\n\ntest: build\n\t@printf 'ok 1 - adds\\nnot ok 2 - subtracts\\nok 3 - later # SKIP not yet\\n1..3\\n'\n\t@exit 1\n",
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 1, 1, 1)
	c := res.Commands[0]
	if c.Command != "make test" || !strings.HasPrefix(c.Source, "Makefile target test") {
		t.Errorf("command = %q from %q", c.Command, c.Source)
	}
	if !slices.Equal(res.Failing, []string{"subtracts"}) {
		t.Errorf("failing = %q", res.Failing)
	}
}

func TestPackageJSONNodeTest(t *testing.T) {
	t.Parallel()
	need(t, "node", "npm")
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "version": "1.0.0", "scripts": {"test": "node --test"}}`,
		"test/x.test.js": `const test = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('subtracts', () => { assert.strictEqual(3 - 1, 2); });
test('multiplies', () => { assert.strictEqual(2 * 3, 5); });
`,
	})
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 2, 1, 0)
	c := res.Commands[0]
	if c.Command != "node --test --test-reporter=tap" || !strings.HasPrefix(c.Source, "package.json scripts.test (npm, no lockfile): the script is exactly node --test, run directly") {
		t.Errorf("command = %q from %q", c.Command, c.Source)
	}
	if len(res.Failing) != 1 || !strings.HasPrefix(res.Failing[0], "multiplies (test/x.test.js:5") {
		t.Errorf("failing = %q", res.Failing)
	}

	// Fixed: all pass.
	writeFiles(t, dir, map[string]string{"test/x.test.js": `const test = require('node:test');
test('adds', () => {});
`})
	res = verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusPass)
	wantCounts(t, res, 1, 0, 0)
}

func TestPlaceholderTestScript(t *testing.T) {
	t.Parallel()
	dir := project(t, map[string]string{
		"package.json": `{"name": "x", "scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`,
	})
	found, err := Detect(dir)
	if err != nil || len(found) != 0 {
		t.Fatalf("Detect = %v, %v; want nothing", found, err)
	}
	res := verify(t, Request{Dir: dir})
	wantStatus(t, res, StatusNotEvaluated)
	if !strings.Contains(res.Reason, "no test command found") || !strings.Contains(res.Reason, "placeholder") {
		t.Errorf("reason = %q", res.Reason)
	}
	if len(res.Commands) != 0 {
		t.Errorf("commands ran: %+v", res.Commands)
	}
}

func TestNothingToDetect(t *testing.T) {
	t.Parallel()
	res := verify(t, Request{Dir: t.TempDir()})
	wantStatus(t, res, StatusNotEvaluated)
	for _, want := range []string{"no test command found", "go.mod", "package.json", "Makefile", "verify.command"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("reason %q lacks %q", res.Reason, want)
		}
	}
}

func TestMissingRunner(t *testing.T) {
	t.Parallel()
	res := verify(t, Request{Dir: t.TempDir(), Commands: []string{"definitely-not-a-command-xyz"}})
	wantStatus(t, res, StatusNotEvaluated)
	if !res.Commands[0].NotFound || res.Commands[0].ExitCode != 127 {
		t.Errorf("command = %+v", res.Commands[0])
	}
	if !strings.Contains(res.Reason, "not found") || !strings.Contains(res.Reason, "definitely-not-a-command-xyz") {
		t.Errorf("reason = %q", res.Reason)
	}
}

func TestMissingRunnerDoesNotHideFailure(t *testing.T) {
	t.Parallel()
	res := verify(t, Request{Dir: t.TempDir(), Commands: []string{
		"definitely-not-a-command-xyz", `echo "0 passed, 1 failed"; exit 1`,
	}})
	wantStatus(t, res, StatusFail)
	if !strings.Contains(res.Reason, "1 of 1 test failed") || !strings.Contains(res.Reason, "not found") {
		t.Errorf("reason = %q", res.Reason)
	}
}

func TestLogFilePerCommandPerAttempt(t *testing.T) {
	t.Parallel()
	logDir := filepath.Join(t.TempDir(), "runs", "r1", "verify")
	dir := t.TempDir()
	req := Request{Dir: dir, LogDir: logDir, Commands: []string{`echo "1 passed, 0 failed"`, `echo "2 passed, 0 failed"`}}
	first := verify(t, req)
	second := verify(t, req)
	var paths []string
	for _, r := range []*Result{first, second} {
		for _, c := range r.Commands {
			paths = append(paths, c.LogPath)
			if !strings.HasPrefix(c.LogPath, logDir) {
				t.Errorf("log %s outside %s", c.LogPath, logDir)
			}
		}
	}
	slices.Sort(paths)
	if len(slices.Compact(paths)) != 4 {
		t.Errorf("log paths not distinct: %q", paths)
	}
	data, _ := os.ReadFile(second.Commands[1].LogPath)
	if string(data) != "2 passed, 0 failed\n" {
		t.Errorf("log = %q", data)
	}
}

func TestBoundedOnHugeOutput(t *testing.T) {
	t.Parallel()
	script := `for i in $(seq 1 20000); do echo "not ok $i - test number $i has a rather long name to make the output big"; echo "  some diagnostic line for $i"; done; exit 1`
	res := verify(t, Request{Dir: t.TempDir(), Commands: []string{script}})
	wantStatus(t, res, StatusFail)
	wantCounts(t, res, 0, 20000, 0)
	if len(res.Failing) != MaxFailing || len(res.Commands[0].Failing) != MaxFailing {
		t.Errorf("failing has %d names", len(res.Failing))
	}
	sum := res.Summary()
	if len(sum) > MaxSummary {
		t.Errorf("summary %d bytes", len(sum))
	}
	if !strings.Contains(sum, "test number 1 ") || !strings.Contains(sum, "more") {
		t.Errorf("summary:\n%s", sum)
	}
}

func TestInvalidRequest(t *testing.T) {
	t.Parallel()
	if _, err := New().Verify(context.Background(), Request{Dir: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("no error for a missing directory")
	}
	file := filepath.Join(t.TempDir(), "f")
	writeFiles(t, filepath.Dir(file), map[string]string{"f": "x"})
	_, err := New().Verify(context.Background(), Request{Dir: t.TempDir(), Commands: []string{"true"}, LogDir: filepath.Join(file, "logs")})
	if err == nil {
		t.Error("no error when the log directory cannot be created")
	}
}

func TestCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	res, err := New().Verify(ctx, Request{Dir: t.TempDir(), LogDir: t.TempDir(), Commands: []string{"sleep 60", "true"}})
	if err == nil || res == nil || res.Status != StatusNotEvaluated || len(res.Commands) != 1 {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
	if time.Since(start) > 10*time.Second {
		t.Error("cancellation was slow")
	}
}

func TestHasMakeTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"test:\n\tgo test ./...\n", true},
		{"test: build lint\n", true},
		{"unit test: deps\n", true},
		{"test::\n", true},
		{"test:=value\n", false},
		{"test ::= value\n", false},
		{"test = x:y\n", false},
		{".PHONY: test\n", false},
		{"all:\n\ttest: not a rule\n", false},
		{"# test:\n", false},
		{"tests:\n", false},
		{"check: test\n", false},
	} {
		if got := hasMakeTarget(tc.text, "test"); got != tc.want {
			t.Errorf("hasMakeTarget(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// Not parallel: it changes the environment.
func TestTestEnv(t *testing.T) {
	has := func(env []string, kv string) bool { return slices.Contains(env, kv) }
	count := func(env []string, prefix string) int {
		n := 0
		for _, kv := range env {
			if strings.HasPrefix(kv, prefix) {
				n++
			}
		}
		return n
	}

	t.Setenv("CI", "false")
	t.Setenv("GOFLAGS", "-mod=vendor")
	env := testEnv()
	if !has(env, "CI=true") || count(env, "CI=") != 1 {
		t.Errorf("CI not forced to true: %d CI entries", count(env, "CI="))
	}
	if !has(env, "GOFLAGS=-mod=vendor -count=1") || count(env, "GOFLAGS=") != 1 {
		t.Errorf("user's GOFLAGS not kept, or results may come from go's test cache: %q", env)
	}
	t.Setenv("GOFLAGS", "-mod=vendor -count=3")
	if env := testEnv(); !has(env, "GOFLAGS=-mod=vendor -count=3") || count(env, "GOFLAGS=") != 1 {
		t.Error("user's -count overridden")
	}

	os.Unsetenv("GOFLAGS")
	goenv := filepath.Join(t.TempDir(), "env")
	t.Setenv("GOENV", goenv)
	if env := testEnv(); !has(env, "GOFLAGS="+defaultGoFlags) {
		t.Error("default GOFLAGS not set")
	}
	// GOFLAGS in the environment replaces the go env file's: the file's
	// flags are kept, with fresh results added.
	writeFiles(t, filepath.Dir(goenv), map[string]string{"env": "GOPROXY=off\nGOFLAGS=-buildvcs=false\n"})
	if env := testEnv(); !has(env, "GOFLAGS=-buildvcs=false -count=1") {
		t.Errorf("GOFLAGS from the go env file lost, or results may come from go's test cache: %q", env)
	}
}

// The tests may write the attempt directory (their report goes there):
// nothing they leave or swap in makes ultra write through a symlink, or
// read a file through one.
func TestResultsAreNeverReadOrWrittenThroughSymlinks(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("TOP-SECRET-7731\n"), 0o600)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("the person's file\n"), 0o644)
	dir := t.TempDir()
	attempt := t.TempDir()
	d := Detected{Kind: "custom", Runner: "sh", Format: "junit", Report: "$ULTRA_REPORT"}
	// Planted before the command: its log and report names, as links.
	command := `d=$(dirname "$ULTRA_REPORT"); for f in "$d"/*.log; do rm -f "$f"; ln -s ` + secret + ` "$f"; done; ln -sf ` + secret + ` "$ULTRA_REPORT"; echo "1 passed, 1 failed"; exit 1`
	name := "1-" + slug(strings.TrimSpace(d.Dir+" "+d.Runner+" "+command))
	os.Symlink(victim, filepath.Join(attempt, name+".log"))
	os.Symlink(secret, filepath.Join(attempt, name+".report.xml"))
	cr, err := runOne(context.Background(), dir, d, command, attempt, "1", time.Minute, os.Environ(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "the person's file\n" {
		t.Fatalf("ultra wrote through a planted symlink: %q", b)
	}
	all := fmt.Sprintf("%+v", cr)
	if strings.Contains(all, "TOP-SECRET") {
		t.Fatalf("ultra read a file through a symlink the tests made:\n%s", all)
	}
	if cr.ReportOK {
		t.Fatal("a report that is a symlink was read")
	}
}
