package check

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/sandbox"
)

// The cost of judging a trivial command through the check supervisor
// against running it directly with proc (the same shell, the same
// sandbox): the difference is the check's overhead per criterion.
//
//	go test -bench . -count 5 ./internal/check/
//
// Each benchmark also reports the median of its runs (median-ms).

func BenchmarkCommandCheck(b *testing.B) {
	for _, contained := range []bool{false, true} {
		b.Run(mode(contained), func(b *testing.B) {
			dir := b.TempDir()
			var r Runner
			if contained {
				r = containedRunner(b, dir)
			} else {
				r = newRunner(b, dir)
			}
			base := r.EvidenceDir
			c := crit(goal.ChannelCommand, goal.Check{Run: "test -d ."})
			var times []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				r.EvidenceDir = filepath.Join(base, strconv.Itoa(i))
				began := time.Now()
				res := r.Run(context.Background(), c)
				times = append(times, time.Since(began))
				if res.Status != goal.CriterionPass {
					b.Fatalf("%s: %s", res.Status, res.Reason)
				}
			}
			b.ReportMetric(median(times), "median-ms")
		})
	}
}

func BenchmarkCommandDirect(b *testing.B) {
	for _, contained := range []bool{false, true} {
		b.Run(mode(contained), func(b *testing.B) {
			dir := b.TempDir()
			var sb *proc.Sandbox
			if contained {
				st := sandbox.Probe()
				if !st.Available {
					b.Skipf("no sandbox here: %s", st.Problem)
				}
				l := sandbox.Layout{Work: dir, Home: b.TempDir(), Tmp: b.TempDir(), NoUnixSockets: true}
				sb = &proc.Sandbox{Wrap: st.Wrapper(l.Policy()), Env: l.Env}
			}
			var times []time.Duration
			b.ResetTimer()
			for b.Loop() {
				opts := proc.Options{Dir: dir}
				sb.Apply(&opts)
				began := time.Now()
				res, err := proc.Shell(context.Background(), "test -d .", opts)
				times = append(times, time.Since(began))
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("exit %d, %v: %s", res.ExitCode, err, res.Output)
				}
			}
			b.ReportMetric(median(times), "median-ms")
		})
	}
}

func mode(contained bool) string {
	if contained {
		return "contained"
	}
	return "uncontained"
}

// median in milliseconds.
func median(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Microseconds()) / 1000
}
