package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/gate"
)

// A Makefile suite with its own harness: the test target builds the test
// program twice (-O0, then -O2) and runs it each time; the program prints
// "FAIL: name" for a failing check and its own "PASSED: N" / "FAILED: N".
// RED=1 makes test_add fail; BROKEN=1 makes the program not compile.
var makeSuite = map[string]string{
	"Makefile": `.PHONY: test run
test:
	@$(MAKE) -s run OPT=-O0
	@$(MAKE) -s run OPT=-O2
run:
	@echo "== build $(OPT)"
	@$(CC) $(OPT) -o t t.c && ./t
`,
	"t.c": `#include <stdio.h>
#include <stdlib.h>
static int passed, failed;
#define CHECK(name, cond) do { if (cond) passed++; else { failed++; printf("FAIL: %s\n", name); } } while (0)
int main(void) {
#ifdef BROKEN
  return x;
#endif
  for (int i = 0; i < 15; i++) CHECK("test_loop", i >= 0);
  CHECK("test_add", 1 + 1 == (getenv("RED") ? 3 : 2));
  printf("PASSED: %d\nFAILED: %d\n", passed, failed);
  return failed ? 1 : 0;
}
`,
}

func TestMakeSuiteWithItsOwnSummaries(t *testing.T) {
	t.Parallel()
	need(t, "make", "cc")
	judge := func(res *Result) gate.Decision {
		return gate.Judge(gate.Input{Run: "r", Tree: "t", N: 1, Evidence: evidenceOf(res)})
	}

	green := verify(t, Request{Dir: project(t, makeSuite)})
	wantStatus(t, green, StatusPass)
	wantCounts(t, green, 32, 0, 0) // 16 checks, two builds
	if d := judge(green); d.Status != gate.Pass || d.Counts.Passed != 32 || !slices.Equal(d.Reasons, []string{"32 tests passed"}) {
		t.Errorf("gate: %s %q %+v", d.Status, d.Reasons, d.Counts)
	}

	red := verify(t, Request{Dir: project(t, makeSuite), Commands: []string{"RED=1 make test"}})
	wantStatus(t, red, StatusFail)
	// make stops after the first build's failure.
	wantCounts(t, red, 15, 1, 0)
	if !slices.Equal(red.Failing, []string{"test_add"}) {
		t.Errorf("failing = %q", red.Failing)
	}
	d := judge(red)
	all := strings.Join(d.Reasons, "; ")
	if d.Status != gate.Fail || len(d.Failing) != 1 || d.Failing[0].Name != "test_add" || !strings.Contains(all, "1 of 16 tests failed") ||
		strings.Contains(all, "none of its tests failed") {
		t.Errorf("gate: %s %q failing %+v", d.Status, d.Reasons, d.Failing)
	}

	broken := verify(t, Request{Dir: project(t, makeSuite), Commands: []string{"make test CFLAGS=-DBROKEN CC='cc -DBROKEN'"}})
	wantStatus(t, broken, StatusFail)
	if !strings.Contains(broken.Reason, "the output has no summary ultra can read: ") || !strings.Contains(broken.Reason, "exit status 2") ||
		!strings.Contains(broken.Reason, "its first error: t.c:7:10: error: ") {
		t.Errorf("reason = %q", broken.Reason)
	}
	if d := judge(broken); d.Status != gate.Fail || !strings.Contains(strings.Join(d.Reasons, "; "), "its first error: t.c:7:10: error: ") {
		t.Errorf("gate: %s %q", d.Status, d.Reasons)
	}

	// Output with nothing to read is said to be that, not "no tests".
	quiet := verify(t, Request{Dir: t.TempDir(), Commands: []string{"echo built; echo done"}})
	wantStatus(t, quiet, StatusNotEvaluated)
	if want := "`echo built; echo done`: the output has no summary ultra can read: 2 lines, exit status 0"; quiet.Reason != want {
		t.Errorf("reason = %q, want %q", quiet.Reason, want)
	}
	if d := judge(quiet); d.Status != gate.NotEvaluated || !slices.Equal(d.Reasons, []string{"`echo built; echo done`: the output has no summary ultra can read: 2 lines, exit status 0"}) {
		t.Errorf("gate: %s %q", d.Status, d.Reasons)
	}
}
