package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchGoals are four independent goals: each a small program of its
// own (cmd/opN), which no other goal touches.
func benchGoals() ([]any, []string) {
	var goals []any
	var files []string
	for i, op := range []struct{ name, expr, want, neg string }{
		{"add", "a + b", "5", "1"}, {"sub", "a - b", "-1", "-5"}, {"mul", "a * b", "6", "-6"}, {"max", "max(a, b)", "3", "3"},
	} {
		prog := fmt.Sprintf("./cmd/op%d", i+1)
		goals = append(goals, map[string]any{"title": "Program op" + fmt.Sprint(i+1) + " " + op.name + "s", "objective": prog + " A B prints " + op.expr, "criteria": []any{
			crit("happy", "command", op.name+" of 2 and 3", map[string]any{"run": "go run " + prog + " 2 3", "expect_stdout": "^" + op.want + "$"}),
			crit("edge", "command", op.name+" of -2 and 3", map[string]any{"run": "go run " + prog + " -2 3", "expect_stdout": "^" + op.neg + "$"}),
			crit("regression", "command", "the calculator still adds", map[string]any{"run": "go run ./cmd/calc add 2 3", "expect_stdout": "^5$"}),
		}})
		files = append(files, fmt.Sprintf("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strconv\"\n)\n\nfunc main() {\n\ta, _ := strconv.Atoi(os.Args[1])\n\tb, _ := strconv.Atoi(os.Args[2])\n\tfmt.Println(%s)\n}\n", op.expr))
	}
	return goals, files
}

// BenchmarkParallelBrief runs one brief of four independent goals twice
// on a small Go project: with --parallel 4 (four workers, each claiming
// and writing its program) and one goal after another, the scripted
// model taking a fixed time per answer, so that the model's time
// dominates. It reports the median wall time of each (par-ms, seq-ms) and
// their ratio (goal: ≤ 0.5). A goal's work is six answers (read, glob,
// write, a build, phase, verify; a worker claims first): the sequential
// run asks the model 27 times, the parallel one 10 times one after
// another (3 for the run, 7 for each worker at once); what is left is
// ultra's: the gate, the criteria, and for the parallel run its merges,
// which it verifies one at a time (commits handed in together land
// together).
//
//	go test ./e2e -run '^$' -bench ParallelBrief -benchtime 5x
func BenchmarkParallelBrief(b *testing.B) {
	const answer = 3 * time.Second
	goals, files := benchGoals()
	brief := filepath.Join(b.TempDir(), "BRIEF.md")
	os.WriteFile(brief, []byte("# Four programs\n\nFour small programs.\n\n## Definition of done\n- each program works as its criteria show\n"), 0o644)
	slow := func(steps ...step) []step {
		for _, s := range steps {
			s["delay_ms"] = answer.Milliseconds()
		}
		return steps
	}
	// A goal's work: look around, write the program, build it, verify.
	work := func(i int) []step {
		return []step{calls(call("read", map[string]any{"file_path": "cmd/calc/main.go"})), calls(call("glob", map[string]any{"pattern": "cmd/*/main.go"})),
			calls(call("write", map[string]any{"file_path": fmt.Sprintf("cmd/op%d/main.go", i+1), "content": files[i]})),
			calls(call("bash", map[string]any{"command": "go vet ./..."})),
			calls(call("phase", map[string]any{"to": "verifying"})), calls(call("verify", map[string]any{}))}
	}
	var par, seq []time.Duration
	for range b.N {
		// Parallel: four workers.
		var lanes []any
		for i := range goals {
			lanes = append(lanes, lane(fmt.Sprintf("G%03d", i+1), slow(append([]step{claimCall(fmt.Sprintf("cmd/op%d/main.go", i+1))}, work(i)...)...)...))
		}
		m := newScript(b, map[string]any{"steps": slow(calls(call("goals", map[string]any{"goals": goals})), endCleanup(), approve()), "lanes": lanes})
		dir := repo(b, opsProject)
		start := time.Now()
		res := ultra(b, dir, runArgs(m, "--parallel", "4", "--brief-file", brief)...)
		par = append(par, time.Since(start))
		if res.code != 0 {
			b.Fatalf("parallel run: exit %d\n%s", res.code, lastLines(res.stderr+res.stdout, 20))
		}
		// One goal after another.
		steps := []step{calls(call("goals", map[string]any{"goals": goals}))}
		for i := range goals {
			steps = append(steps, work(i)...)
		}
		steps = append(steps, endCleanup(), approve())
		m = newScript(b, map[string]any{"steps": slow(steps...)})
		dir = repo(b, opsProject)
		start = time.Now()
		res = ultra(b, dir, runArgs(m, "--brief-file", brief)...)
		seq = append(seq, time.Since(start))
		if res.code != 0 {
			b.Fatalf("sequential run: exit %d\n%s", res.code, lastLines(res.stderr+res.stdout, 20))
		}
	}
	p, s := median(par), median(seq)
	b.ReportMetric(float64(p.Milliseconds()), "par-ms")
	b.ReportMetric(float64(s.Milliseconds()), "seq-ms")
	b.ReportMetric(float64(p)/float64(s), "ratio")
	b.Logf("parallel %v, sequential %v (medians of %d); answers take %s", par, seq, b.N, answer)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
