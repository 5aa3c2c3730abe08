package e2e

import (
	"fmt"
	"os/exec"
	"slices"
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
// of the run's wall time to (model time + one run of the project's tests,
// go test ./... with a warm build cache); the goal is ≤ 1.15. Each
// iteration starts from a new repository: the baseline is measured (on
// ultra's own checkout, while the model works), nothing comes from the
// gate cache.
//
//	go test ./e2e -run '^$' -bench FullCycle -count 5
func BenchmarkFullCycle(b *testing.B) {
	const delay = 500 * time.Millisecond // per model answer
	steps := fixSteps()
	for _, s := range steps {
		s["delay_ms"] = delay.Milliseconds()
	}
	modelTime := time.Duration(len(steps)) * delay

	// One run of the tests, as a person runs them in their checkout.
	ref := repo(b, cycleProject())
	var testRuns []time.Duration
	for i := range 6 {
		start := time.Now()
		cmd := exec.Command("go", "test", "-count=1", "./...")
		cmd.Dir = ref
		out, _ := cmd.CombinedOutput() // calc fails until fixed
		if i > 0 {                     // the first one fills the build cache
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
