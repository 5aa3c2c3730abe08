package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// benchEvent is an event of the usual size (a tool call's summary).
var benchEvent = json.RawMessage(`{"name":"bash","input":{"command":"go test ./..."},"output":"` + strings.Repeat("x", 300) + `"}`)

// BenchmarkAppendEvent is one event stored, one writer at a time.
func BenchmarkAppendEvent(b *testing.B) { forEachBackend(b, benchmarkAppendEvent) }

func benchmarkAppendEvent(b *testing.B, dsn string) {
	ctx := context.Background()
	s := openAt(b, dsn)
	if err := s.CreateRun(ctx, newRun("bench")); err != nil {
		b.Fatal(err)
	}
	var seq int64
	for b.Loop() {
		seq++
		if err := s.AppendEvent(ctx, "bench", seq, time.Now(), "tool_call", "building", benchEvent); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendEventParallel is events stored by several runs at
// once (one goroutine a run, GOMAXPROCS of them), sharing the store.
func BenchmarkAppendEventParallel(b *testing.B) { forEachBackend(b, benchmarkAppendEventParallel) }

func benchmarkAppendEventParallel(b *testing.B, dsn string) {
	ctx := context.Background()
	s := openAt(b, dsn)
	var runs atomic.Int64
	for i := range 64 {
		if err := s.CreateRun(ctx, newRun(fmt.Sprintf("bench-%d", i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		run := fmt.Sprintf("bench-%d", runs.Add(1)-1)
		var seq int64
		for pb.Next() {
			seq++
			if err := s.AppendEvent(ctx, run, seq, time.Now(), "tool_call", "building", benchEvent); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkEventsSince is a surface following every run: 100 events
// read after a place, from a store of 20,000 events of 20 runs.
func BenchmarkEventsSince(b *testing.B) { forEachBackend(b, benchmarkEventsSince) }

func benchmarkEventsSince(b *testing.B, dsn string) {
	ctx := context.Background()
	s := openAt(b, dsn)
	const runs, each = 20, 1000
	tx, err := s.begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	at := ts(time.Now())
	for r := range runs {
		if err := putRun(ctx, tx, newRun(fmt.Sprintf("bench-%d", r))); err != nil {
			b.Fatal(err)
		}
	}
	for i := range each {
		for r := range runs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO events (run_id, seq, at, type, phase, data) VALUES (?,?,?,?,?,?)`,
				fmt.Sprintf("bench-%d", r), i+1, at, "tool_call", "building", string(benchEvent)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	lastRow, err := s.LastRow(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var from int64
	for b.Loop() {
		evs, err := s.EventsSince(ctx, from, 100)
		if err != nil || len(evs) != 100 {
			b.Fatalf("%d events, %v", len(evs), err)
		}
		if from = evs[len(evs)-1].Row; from > lastRow-100 {
			from = 0
		}
	}
}
