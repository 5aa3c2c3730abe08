package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// BenchmarkSteerLatency is the time from `ultra steer RUN --scope
// after-current-tool` starting to the live run applying the change, as
// the run reports it (the request's outcome in the store), for a run
// whose tool calls take 100 ms each: the goal is under 1 s. Each
// iteration is one steering (the model mode back and forth); the
// reported metric is the median over the iterations, and the ratio to
// the goal.
func BenchmarkSteerLatency(b *testing.B) {
	dir := repo(b, calcProject)
	m := newModel(b,
		step{"repeat": 10000, "tool_calls": []map[string]any{call("bash", map[string]any{"command": "sleep 0.1"})}},
	)
	l := startLive(b, dir, runArgs(m, "--max-turns", "100000", "work")...)
	id := l.waitEvent(b, "the first request", isType("model_request"))["run"].(string)
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mode := []string{"fast", "smart"}[i%2]
		start := time.Now()
		res := ultra(b, dir, "steer", id, "--model-mode", mode, "--scope", "after-current-tool", "--json")
		wall := time.Since(start)
		var a struct {
			Outcome string `json:"Outcome"`
			Waited  time.Duration
		}
		if err := json.Unmarshal([]byte(res.stdout), &a); err != nil || a.Outcome != "applied" {
			b.Fatalf("steer: exit %d %s %s", res.code, res.stdout, res.stderr)
		}
		took = append(took, wall)
	}
	b.StopTimer()
	slices.Sort(took)
	med := took[len(took)/2]
	b.ReportMetric(float64(med.Milliseconds()), "median-ms")
	b.ReportMetric(med.Seconds()/1.0, "ratio-to-1s-goal")
	ultra(b, dir, "cancel", id)
}
