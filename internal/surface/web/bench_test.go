package web

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkEventLatency is the time from an event's store to its arrival
// at an SSE client, over a real store and HTTP: each iteration stores one
// event and waits for it. It reports the median and the 90th percentile
// (the goal is a median under 50 ms).
func BenchmarkEventLatency(b *testing.B) {
	st := newStore(b)
	s := New(Options{Events: storeEvents{st}, Commands: &fakeCommands{}, Token: token})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL+"/api/runs/"+runA+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	got := make(chan time.Time, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				got <- time.Now()
			}
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		at := time.Now()
		appendEvent(b, st, runA, int64(i+1))
		select {
		case t := <-got:
			lat = append(lat, t.Sub(at))
		case <-time.After(5 * time.Second):
			b.Fatalf("event %d did not arrive", i+1)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms-p90")
}

// BenchmarkIdleClients is the server's memory with 20 idle clients on the
// stream of everything: the heap and goroutines they add.
func BenchmarkIdleClients(b *testing.B) {
	const clients = 20
	st := newStore(b)
	for i := 0; i < b.N; i++ {
		s := New(Options{Events: storeEvents{st}, Commands: &fakeCommands{}, Token: token})
		ts := httptest.NewServer(s.Handler())
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		var bodies []*http.Response
		for c := 0; c < clients; c++ {
			req, _ := http.NewRequest("GET", ts.URL+"/api/events", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, resp)
		}
		time.Sleep(200 * time.Millisecond) // idle, polled meanwhile
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/1024, "KiB-heap-20-clients")
		b.ReportMetric(float64(runtime.NumGoroutine()-g0), "goroutines-20-clients")
		for _, r := range bodies {
			r.Body.Close()
		}
		ts.Close()
	}
}
