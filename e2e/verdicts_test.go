package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A Makefile suite with its own harness, as a person would have it: the
// test target builds the program twice (-O0, -O2) and runs it each time;
// the program prints "FAIL: name" for a failing check and its own
// "PASSED: N" / "FAILED: N". ultra verify reads those summaries, adds the
// two runs up and names the failing test; output with nothing to read is
// said to be that.
func TestVerifyReadsAMakeSuitesOwnSummaries(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"make", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not installed")
		}
	}
	prog := func(add string) string {
		return "#include <stdio.h>\nstatic int passed, failed;\n" +
			"#define CHECK(name, cond) do { if (cond) passed++; else { failed++; printf(\"FAIL: %s\\n\", name); } } while (0)\n" +
			"int main(void) {\n  for (int i = 0; i < 15; i++) CHECK(\"test_loop\", i >= 0);\n  CHECK(\"test_add\", " + add + ");\n" +
			"  printf(\"PASSED: %d\\nFAILED: %d\\n\", passed, failed);\n  return failed ? 1 : 0;\n}\n"
	}
	dir := repo(t, map[string]string{
		"Makefile": ".PHONY: test run\ntest:\n\t@$(MAKE) -s run OPT=-O0\n\t@$(MAKE) -s run OPT=-O2\nrun:\n\t@echo \"== build $(OPT)\"\n\t@$(CC) $(OPT) -o /tmp/t-$$$$ t.c && /tmp/t-$$$$\n",
		"t.c":      prog("1 + 1 == 2"),
	})
	type decision struct {
		Status  string                  `json:"gate_status"`
		Reasons []string                `json:"reasons"`
		Counts  map[string]float64      `json:"counts"`
		Failing []struct{ Name string } `json:"failing"`
	}
	verify := func(wantCode int) decision {
		t.Helper()
		res := ultra(t, dir, "verify", "--json")
		var out struct{ Decision decision }
		if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
			t.Fatalf("%v\n%s\n%s", err, res.stdout, res.stderr)
		}
		if res.code != wantCode {
			t.Fatalf("exit %d, want %d\n%s", res.code, wantCode, res.stdout)
		}
		return out.Decision
	}

	if d := verify(0); d.Status != "PASS" || d.Counts["passed"] != 32 || d.Counts["failed"] != 0 {
		t.Fatalf("green: %+v", d)
	}

	os.WriteFile(filepath.Join(dir, "t.c"), []byte(prog("1 + 1 == 3")), 0o644)
	d := verify(5)
	if d.Status != "FAIL" || d.Counts["passed"] != 15 || d.Counts["failed"] != 1 || len(d.Failing) != 1 || d.Failing[0].Name != "test_add" ||
		strings.Contains(strings.Join(d.Reasons, "; "), "none of its tests failed") {
		t.Fatalf("red: %+v", d)
	}

	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("test:\n\t@echo built\n\t@echo done\n"), 0o644)
	if d := verify(6); d.Status != "NOT_EVALUATED" ||
		!strings.Contains(strings.Join(d.Reasons, "; "), "`make test`: the output has no summary ultra can read: 2 lines, exit status 0") {
		t.Fatalf("unreadable: %+v", d)
	}
}
