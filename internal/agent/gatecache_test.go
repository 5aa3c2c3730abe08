package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/sandbox"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/verify/report"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// countingVerifier counts the suites it runs and fails them all.
type countingVerifier struct{ runs, only atomic.Int32 }

func (v *countingVerifier) Verify(ctx context.Context, req verify.Request) (*verify.Result, error) {
	if len(req.Only) > 0 {
		v.only.Add(1)
	} else {
		v.runs.Add(1)
	}
	return stubVerifier{verify.StatusFail}.Verify(ctx, req)
}

func cacheSetup(t *testing.T) (Options, string, *countingVerifier) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the gate key
	v := &countingVerifier{}
	o, dir := setup(t, nil, v)
	o.Sandbox = &sandbox.Status{Problem: "not needed by this test"}
	o.Now = func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }
	return o, dir, v
}

func judgeOnce(t *testing.T, o Options, dir, run string, last *gate.Decision) gate.Decision {
	t.Helper()
	tree, err := workspace.TreeHash(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	in := gate.Input{Run: run, Tree: tree, N: 1, Time: o.Now()}
	d, res, err := o.judgeHermetic(context.Background(), RunDir(o.StateRoot, run), dir, nil, true,
		verify.Request{LogDir: t.TempDir()}, in, last, nil)
	if err != nil || res == nil {
		t.Fatalf("judge: %v %v", err, res)
	}
	return d
}

// A tree measured once, by any run of the repository, is not run again
// with the same commands and environment; anything that could change what
// the tests do makes a new measurement.
func TestGateCacheAcrossRuns(t *testing.T) {
	o, dir, v := cacheSetup(t)
	first := judgeOnce(t, o, dir, "run-1", nil)
	if v.runs.Load() != 1 || first.Reused != "" || first.Status != gate.Fail {
		t.Fatalf("first measurement: runs=%d reused=%q status=%s", v.runs.Load(), first.Reused, first.Status)
	}
	second := judgeOnce(t, o, dir, "run-2", nil)
	if v.runs.Load() != 1 {
		t.Fatalf("the same tree ran again in another run (%d runs)", v.runs.Load())
	}
	if !strings.Contains(second.Reused, "run-1") || second.Status != gate.Fail || second.Counts != first.Counts {
		t.Fatalf("cached decision: reused=%q status=%s counts=%+v, want run-1's", second.Reused, second.Status, second.Counts)
	}
	// Even with a failing decision to start from, no focused run: the
	// full measurement of this tree is known.
	judgeOnce(t, o, dir, "run-3", &first)
	if v.runs.Load() != 1 || v.only.Load() != 0 {
		t.Fatalf("runs=%d focused=%d, want the cache", v.runs.Load(), v.only.Load())
	}

	// A new tree is measured.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644)
	judgeOnce(t, o, dir, "run-4", nil)
	if v.runs.Load() != 2 {
		t.Fatalf("a changed tree was not measured (%d runs)", v.runs.Load())
	}
	// The environment of the tests changed.
	t.Setenv("NODE_OPTIONS", "--max-old-space-size=100")
	judgeOnce(t, o, dir, "run-5", nil)
	if v.runs.Load() != 3 {
		t.Fatalf("a changed environment did not measure again (%d runs)", v.runs.Load())
	}
	// Turned off.
	o.NoGateCache = true
	judgeOnce(t, o, dir, "run-6", nil)
	if v.runs.Load() != 4 {
		t.Fatalf("verify.cache = false still used the cache (%d runs)", v.runs.Load())
	}
}

// A record that does not verify with the gate key (written by the model,
// copied from another machine, edited) is never believed: the tree is
// measured again and the record replaced.
func TestGateCacheForgedRecordIsMeasuredAgain(t *testing.T) {
	o, dir, v := cacheSetup(t)
	judgeOnce(t, o, dir, "run-1", nil)
	var paths []string
	filepath.WalkDir(gatefile.CacheDir(o.StateRoot), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) != 1 {
		t.Fatalf("cache records: %q", paths)
	}
	data, _ := os.ReadFile(paths[0])
	forged := strings.Replace(string(data), `"status": "fail"`, `"status": "pass"`, 1)
	forged = strings.ReplaceAll(forged, `"failed": 1`, `"failed": 0`)
	os.Chmod(paths[0], 0o644)
	if err := os.WriteFile(paths[0], []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	d := judgeOnce(t, o, dir, "run-2", nil)
	if v.runs.Load() != 2 || d.Reused != "" || d.Status != gate.Fail {
		t.Fatalf("a forged record was believed: runs=%d reused=%q status=%s", v.runs.Load(), d.Reused, d.Status)
	}
	judgeOnce(t, o, dir, "run-3", nil)
	if v.runs.Load() != 2 {
		t.Fatalf("the forged record was not replaced (%d runs)", v.runs.Load())
	}
}

// Installing or upgrading a package in a dependency directory changes its
// stamp (and so the key); nothing else does.
func TestDepStamp(t *testing.T) {
	dir := t.TempDir()
	nm := filepath.Join(dir, "node_modules")
	os.MkdirAll(filepath.Join(nm, "left-pad", "lib"), 0o755)
	os.WriteFile(filepath.Join(nm, "left-pad", "package.json"), []byte(`{"version":"1.0.0"}`), 0o644)
	venv := filepath.Join(dir, ".venv")
	site := filepath.Join(venv, "lib", "python3.11", "site-packages")
	os.MkdirAll(filepath.Join(site, "requests"), 0o755)
	a, b := depStamp(nm), depStamp(venv)
	if a != depStamp(nm) || b != depStamp(venv) {
		t.Fatal("stamp not stable")
	}
	os.WriteFile(filepath.Join(nm, "left-pad", "package.json"), []byte(`{"version":"1.3.0"}`), 0o644)
	if depStamp(nm) == a {
		t.Error("an upgraded package did not change node_modules' stamp")
	}
	os.MkdirAll(filepath.Join(site, "pytest"), 0o755)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(venv, "lib", "python3.11"), past, past) // only site-packages tells
	if depStamp(venv) == b {
		t.Error("a package installed into a virtualenv did not change its stamp")
	}
}

// When the last verification failed and no runner can select its failing
// tests, the focused attempt runs the whole suite: it is the full run
// (failed tests re-run once), not followed by another.
func TestUnselectableFocusedRunIsTheFullRun(t *testing.T) {
	v := &countingVerifier{}
	last := &gate.Decision{Status: gate.Fail, Failing: []gate.Failure{{Name: "TestStub"}}}
	var reqs []verify.Request
	rec := verifierFunc(func(ctx context.Context, req verify.Request) (*verify.Result, error) {
		reqs = append(reqs, req)
		return v.Verify(ctx, req)
	})
	d, res, err := judgeVerification(context.Background(), rec, verify.Request{Dir: t.TempDir()}, "", nil, gate.Input{N: 2}, last)
	if err != nil || res == nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || !reqs[0].RerunWhenAll || len(reqs[0].Only) != 1 {
		t.Fatalf("%d verifications (%+v), want one: the focused attempt that ran everything", len(reqs), reqs)
	}
	if d.Focused || d.Status != gate.Fail {
		t.Fatalf("decision focused=%v status=%s, want a full FAIL", d.Focused, d.Status)
	}
}

type verifierFunc func(context.Context, verify.Request) (*verify.Result, error)

func (f verifierFunc) Verify(ctx context.Context, req verify.Request) (*verify.Result, error) {
	return f(ctx, req)
}

// Only the tests' own answers are kept: nothing the machine may have
// caused (errors, collection failures, resources, a runner that ran
// nothing, a timeout) and no selection.
func TestCacheable(t *testing.T) {
	run := func(c verify.CommandResult, tests ...report.Case) *verify.Result {
		r := &verify.Result{Commands: []verify.CommandResult{c}, Tests: tests, Errors: c.Errors}
		return r
	}
	pass := report.Case{Name: "TestA", Status: report.Passed}
	for _, tc := range []struct {
		name string
		res  *verify.Result
		want bool
	}{
		{"passing", run(verify.CommandResult{Passed: 1}, pass), true},
		{"failing test", run(verify.CommandResult{ExitCode: 1, Passed: 1, Failed: 1}, pass, report.Case{Name: "TestB", Status: report.Failed}), true},
		{"collection error", run(verify.CommandResult{ExitCode: 1, Passed: 1, Errors: 1}, pass, report.Case{Name: "pkg", Status: report.Error, Kind: report.KindCollection}), false},
		{"out of disk", run(verify.CommandResult{ExitCode: 1, Passed: 1, Failed: 1}, pass, report.Case{Name: "TestB", Status: report.Failed, Message: "write: no space left on device"}), false},
		{"ran nothing", run(verify.CommandResult{ExitCode: 4}), false},
		{"timed out", run(verify.CommandResult{TimedOut: true, Passed: 1}, pass), false},
		{"runner missing", run(verify.CommandResult{ExitCode: 127, NotFound: true}), false},
		{"selection", run(verify.CommandResult{Passed: 1, Selected: true}, pass), false},
	} {
		if got := cacheable(tc.res); got != tc.want {
			t.Errorf("%s: cacheable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A measurement counts for GateCacheMaxAge after it was made, however
// often it is used; ultra gc removes older records.
func TestGateCacheAge(t *testing.T) {
	o, dir, v := cacheSetup(t)
	judgeOnce(t, o, dir, "run-1", nil)
	now := time.Now()
	if n := PruneGateCache(o.StateRoot, GateCacheMaxAge, now, false); n != 0 {
		t.Fatalf("a fresh record was pruned (%d)", n)
	}
	later := now.Add(GateCacheMaxAge + time.Hour)
	if n := PruneGateCache(o.StateRoot, GateCacheMaxAge, later, true); n != 1 {
		t.Fatalf("dry run: %d records, want 1", n)
	}
	key := o.cacheKey(dir, nil, mustTree(t, dir), verify.Request{})
	if o.cached(key) == nil {
		t.Fatal("a dry run removed the record")
	}
	// Used often, it still expires: an old measurement is made again.
	old := o
	old.Now = func() time.Time { return o.Now().Add(GateCacheMaxAge + time.Hour) }
	judgeOnce(t, old, dir, "run-2", nil)
	if v.runs.Load() != 2 {
		t.Fatalf("a measurement older than %s was reused (%d runs)", GateCacheMaxAge, v.runs.Load())
	}
	if n := PruneGateCache(o.StateRoot, GateCacheMaxAge, later, false); n != 1 {
		t.Fatalf("%d records pruned, want 1", n)
	}
	if o.cached(key) != nil {
		t.Fatal("the pruned record is still found")
	}
}

func mustTree(t *testing.T, dir string) string {
	t.Helper()
	tree, err := workspace.TreeHash(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// rerunVerifier records whether each run asked for the re-run of failed
// tests, and fails or passes as told.
type rerunVerifier struct {
	status verify.Status
	runs   int
	rerun  []bool
}

func (v *rerunVerifier) Verify(ctx context.Context, req verify.Request) (*verify.Result, error) {
	v.runs++
	v.rerun = append(v.rerun, req.Rerun)
	return stubVerifier{v.status}.Verify(ctx, req)
}

// A baseline keeps every test's first outcome, so its failed tests are
// not run again; the measurement is kept in the gate cache all the same
// (a verification that reuses it finds no test flaky: every failure
// counts).
func TestBaselineRunsFailedTestsOnce(t *testing.T) {
	for _, status := range []verify.Status{verify.StatusFail, verify.StatusPass} {
		t.Run(string(status), func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			v := &rerunVerifier{status: status}
			o, dir := setup(t, nil, v)
			o.Sandbox = &sandbox.Status{Problem: "not needed by this test"}
			o.Now = func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }
			tree, err := workspace.TreeHash(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			keep := func() bool { return true }
			measureOnce := func(run string) measurement {
				m, err := o.measure(context.Background(), RunDir(o.StateRoot, run), dir, nil, tree,
					verify.Request{LogDir: t.TempDir()}, run, "baseline", keep)
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			measureOnce("run-1")
			if len(v.rerun) != 1 || v.rerun[0] {
				t.Fatalf("the baseline asked for a re-run of its failures: %v", v.rerun)
			}
			if m := measureOnce("run-2"); m.Cached == nil || v.runs != 1 {
				t.Fatalf("second baseline of the same tree: cached=%v runs=%d", m.Cached != nil, v.runs)
			}
		})
	}
}
