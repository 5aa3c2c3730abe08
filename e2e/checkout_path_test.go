package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/sandbox"
)

// Every contained run of a tree sees its checkout at one path of the
// repository, whatever slot holds it: the criteria's checks on the base
// tree and on the run's, side by side. The go command keys what it
// compiles by the package's directory, so a check of the tree the gate
// compiled compiles nothing of the project again.
func TestContainedRunsSeeOneCheckoutPath(t *testing.T) {
	t.Parallel()
	if st := sandbox.Probe(); !st.Available {
		t.Skip("no sandbox here: ", st.Problem)
	}
	dir := repo(t, calcProject)
	g := goalsOf("Add adds",
		crit("happy", "command", "Add adds, as its test shows", map[string]any{"run": "go test -x -count=1 -run '^TestAdd$' ./calc", "expect_exit": 0}),
		crit("edge", "command", "no subtraction is left in Add", map[string]any{"run": "grep -q 'return a - b' calc/calc.go", "expect_exit": 1}),
		crit("regression", "command", "the checks run where the checkout is", map[string]any{"run": "pwd; pwd -P", "expect_exit": 0}))
	steps := fixSteps()
	steps[1] = calls(call("goals", g))
	res := ultra(t, dir, runArgs(newModel(t, steps...), "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	id := runID(t, res.events(t))
	at := filepath.Join(dir, ".ultra", "state", "checkout")
	evidence := filepath.Join(dir, ".ultra", "state", "evidence", id)
	// label → criterion → command.txt
	runs := map[string]map[string]string{}
	filepath.WalkDir(evidence, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "command.txt" {
			label, crit := filepath.Base(filepath.Dir(p)), filepath.Base(filepath.Dir(filepath.Dir(p)))
			if runs[label] == nil {
				runs[label] = map[string]string{}
			}
			runs[label][crit] = readFile(t, p)
		}
		return nil
	})
	for _, label := range []string{"base", "cycle-1"} {
		out, ok := runs[label]["G001-C3"]
		if !ok {
			t.Fatalf("no evidence of the regression criterion on %s: %v", label, runs)
		}
		if !strings.Contains(out, "--- stdout (") || !strings.Contains(out, "\n"+at+"\n"+at+"\n") {
			t.Fatalf("the check on %s ran elsewhere than %s:\n%s", label, at, out)
		}
	}
	// The criteria of the verification start once the gate compiled the
	// tree into the build cache at the same path: calc is not compiled
	// again (go test -x shows the compiler's command for every package
	// it compiles).
	out, ok := runs["cycle-1"]["G001-C1"]
	if !ok {
		t.Fatalf("no evidence of the happy criterion on the run's tree: %v", runs)
	}
	if !strings.Contains(out, "calc.test") {
		t.Fatalf("go test -x printed no build of the test binary:\n%s", out)
	}
	if regexp.MustCompile(`/compile .*-p example\.com/calc/calc `).MatchString(out) {
		t.Fatalf("calc was compiled again for the criterion:\n%s", out)
	}
	if ents, err := os.ReadDir(at); err != nil || len(ents) != 0 {
		t.Fatalf("the checkout's mount point is not an empty directory: %v %v", ents, err)
	}
}
