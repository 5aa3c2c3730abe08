package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cycleProject is a small Go project: calcProject and three more
// packages with tests.
func cycleProject() map[string]string {
	files := map[string]string{}
	for k, v := range calcProject {
		files[k] = v
	}
	for i := range 3 {
		p := fmt.Sprintf("util%d", i)
		files[p+"/"+p+".go"] = fmt.Sprintf("package %s\n\nfunc Double(n int) int { return 2 * n }\n", p)
		files[p+"/"+p+"_test.go"] = fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tfor i := 0; i < 1000; i++ {\n\t\tif Double(i) != i+i {\n\t\t\tt.Fatal(i)\n\t\t}\n\t}\n}\n\nfunc TestTable(t *testing.T) {\n\tfor _, c := range []int{1, 2, 3} {\n\t\tt.Run(\"case\", func(t *testing.T) {\n\t\t\tif Double(c) != 2*c {\n\t\t\t\tt.Fatal(c)\n\t\t\t}\n\t\t})\n\t}\n}\n", p)
	}
	return files
}

// BenchmarkFullCycle is one whole run of ultra on a small Go project,
// from start to the committed fix: plan, edit, verify, commit, with the
// scripted model taking a fixed time per answer. Its measure is the ratio
// of the run's wall time to (model time + one run of the project's tests
// after the fix, go test ./... with a warm build cache: the fixed package
// compiles); the goal is ≤ 1.15. Each
// iteration starts from a new repository: the baseline is measured (on
// ultra's own checkout, while the model works), nothing comes from the
// gate cache. The baseline runs while the model works: with answers of
// 500 ms it is done by the first verification; with answers of 200 ms the
// model is faster than a cold build of the project at the gate's new
// checkout, and the first verification waits for the rest of it.
//
//	go test ./e2e -run '^$' -bench FullCycle -count 5
func BenchmarkFullCycle(b *testing.B) {
	for _, delay := range []time.Duration{500 * time.Millisecond, 200 * time.Millisecond} {
		b.Run(fmt.Sprintf("answer=%s", delay), func(b *testing.B) { fullCycle(b, delay) })
	}
}

// fullCycle is BenchmarkFullCycle with the model taking delay per answer.
func fullCycle(b *testing.B, delay time.Duration) {
	steps := fixSteps()
	for _, s := range steps {
		s["delay_ms"] = delay.Milliseconds()
	}
	modelTime := time.Duration(len(steps)) * delay

	// One run of the tests, as a person runs them in their checkout after
	// making the fix: the changed package compiles, the rest is cached.
	ref := repo(b, cycleProject())
	var testRuns []time.Duration
	for i := range 6 {
		fixed := strings.Replace(calcProject["calc/calc.go"], "return a - b", fmt.Sprintf("return a + b // %d", i), 1)
		if err := os.WriteFile(filepath.Join(ref, "calc", "calc.go"), []byte(fixed), 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		cmd := exec.Command("go", "test", "-count=1", "./...")
		cmd.Dir = ref
		out, _ := cmd.CombinedOutput()
		if i > 0 { // the first one fills the build cache
			testRuns = append(testRuns, time.Since(start))
		}
		if len(out) == 0 {
			b.Fatal("go test printed nothing")
		}
	}
	tests := median(testRuns)

	var cycles []time.Duration
	for i := 0; i < b.N; i++ {
		dir := repo(b, cycleProject())
		m := newModel(b, steps...)
		start := time.Now()
		res := ultra(b, dir, runArgs(m, "fix calc")...)
		cycles = append(cycles, time.Since(start))
		if res.code != 0 {
			b.Fatalf("run failed (exit %d):\n%s", res.code, res.stderr)
		}
	}
	cycle := median(cycles)
	b.ReportMetric(float64(cycle.Milliseconds()), "cycle-ms")
	b.ReportMetric(float64(modelTime.Milliseconds()), "model-ms")
	b.ReportMetric(float64(tests.Milliseconds()), "tests-ms")
	b.ReportMetric(float64(cycle)/float64(modelTime+tests), "ratio")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
