package e2e

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/store"
)

// BenchmarkFleetThroughput: trivial scripted runs (pyCalc's fix) through
// the fleet, with one and with two workers (two runs at once each), on
// this machine; reports runs per minute. Each iteration submits 6 runs
// and waits for all to complete.
//
//	go test ./e2e -run XXX -bench FleetThroughput -benchtime 1x -count 3
func BenchmarkFleetThroughput(b *testing.B) {
	const perIter = 6
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			f := newFleetWith(b, perIter*b.N, func(int) []step { return fleetSteps() })
			for range workers {
				startFleetWorkerB(b, f.machine(b), 2)
			}
			job := 0
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				var ids []string
				for range perIter {
					job++
					ids = append(ids, f.submit(b, job))
				}
				for _, id := range ids {
					f.waitTask(b, id, "complete", 5*time.Minute)
				}
			}
			b.ReportMetric(float64(perIter*b.N)/time.Since(start).Minutes(), "runs/min")
		})
	}
}

// BenchmarkFleetPickup: from ultra submit's return to the run's row taken
// over by an idle worker (the queue's pickup, the fetch of the clone and
// the start of ultra run); reports the median.
//
//	go test ./e2e -run XXX -bench FleetPickup -benchtime 5x -count 3
func BenchmarkFleetPickup(b *testing.B) {
	f := newFleetWith(b, b.N, func(int) []step { return fleetSteps() })
	startFleetWorkerB(b, f.machine(b), 1)
	st, err := store.Open(f.db)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var lat []time.Duration
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		id := f.submit(b, i)
		at := time.Now()
		for {
			if row, err := st.GetRun(context.Background(), id); err == nil && row.Status != store.StatusQueued {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		lat = append(lat, time.Since(at))
		f.waitTask(b, id, "complete", 5*time.Minute)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "ms-median")
}
