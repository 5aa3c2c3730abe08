package check

import (
	"context"
	"os"
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
			r := benchRunner(b, contained, b.TempDir())
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

// benchRunner is a Runner on dir, in a sandbox or not.
func benchRunner(b *testing.B, contained bool, dir string) Runner {
	if contained {
		return containedRunner(b, dir)
	}
	return newRunner(b, dir)
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

// The cost of one desktop check: the Tk program of the desktop tests,
// "Save" clicked (found by OCR), "Saved 3 items" awaited; honest (it
// passes: the empty-desktop control, the check, the control without the
// input) and hostile (refused by the control without the input).
//
//	go test -run '^$' -bench DesktopCheck -benchtime 5x ./internal/check/
func BenchmarkDesktopCheck(b *testing.B) {
	if why := desktopMissing(DesktopTools()); why != "" {
		b.Skip(why)
	}
	for _, contained := range []bool{false, true} {
		for _, kind := range []string{"honest", "hostile"} {
			b.Run(mode(contained)+"/"+kind, func(b *testing.B) {
				dir := b.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte(tkApp), 0o644); err != nil {
					b.Fatal(err)
				}
				r := benchRunner(b, contained, dir)
				base := r.EvidenceDir
				c := crit(goal.ChannelDesktop, saveCheck(kind, "bench"))
				want := map[string]goal.CriterionStatus{"honest": goal.CriterionPass, "hostile": goal.CriterionFail}[kind]
				var times []time.Duration
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					r.EvidenceDir = filepath.Join(base, strconv.Itoa(i))
					began := time.Now()
					res := r.Run(context.Background(), c)
					times = append(times, time.Since(began))
					if res.Status != want {
						b.Fatalf("%s: %s", res.Status, res.Reason)
					}
				}
				b.ReportMetric(median(times), "median-ms")
			})
		}
	}
}
