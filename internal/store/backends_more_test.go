package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// column is what the backends must agree on of a column.
type column struct {
	name, class string // class: int, float, text or bytes
	notNull     bool
}

// schemaOf reads the store's tables (with their columns in order) and
// its indexes made by the migrations.
func schemaOf(t *testing.T, s *Store) (map[string][]column, []string) {
	t.Helper()
	ctx := context.Background()
	q := `SELECT m.name, c.name, c.type, c."notnull" OR c.pk > 0 FROM sqlite_master m, pragma_table_info(m.name) c
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite%' ORDER BY m.name, c.cid`
	iq := `SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`
	if s.Backend() == Postgres {
		q = `SELECT table_name, column_name, data_type, is_nullable = 'NO' FROM information_schema.columns
			WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`
		// Those a primary key or a unique constraint makes are SQLite's
		// automatic ones.
		iq = `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%\_pkey' ORDER BY indexname`
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	tables := map[string][]column{}
	for rows.Next() {
		var table, typ string
		var c column
		if err := rows.Scan(&table, &c.name, &typ, &c.notNull); err != nil {
			t.Fatal(err)
		}
		switch strings.ToUpper(typ) {
		case "INTEGER", "BIGINT":
			c.class = "int"
		case "REAL", "DOUBLE PRECISION":
			c.class = "float"
		case "TEXT":
			c.class = "text"
		case "BLOB", "BYTEA":
			c.class = "bytes"
		default:
			t.Fatalf("%s.%s: type %s has no class", table, c.name, typ)
		}
		tables[table] = append(tables[table], c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	irows, err := s.db.QueryContext(ctx, iq)
	if err != nil {
		t.Fatal(err)
	}
	defer irows.Close()
	var indexes []string
	for irows.Next() {
		var n string
		if err := irows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, n)
	}
	return tables, indexes
}

// The Postgres schema ends in the tables, columns (names, order, kind of
// type, NOT NULL) and indexes of SQLite's, version for version. When
// this fails after a new SQLite migration, append its Postgres
// counterpart to pgMigrations.
func TestSchemasAgree(t *testing.T) {
	if len(pgMigrations) != len(migrations) {
		t.Fatalf("%d SQLite migrations and %d Postgres ones: append each migration to both lists", len(migrations), len(pgMigrations))
	}
	lite := openAt(t, newDSN(t, SQLite))
	pg := openAt(t, newDSN(t, Postgres))
	lt, li := schemaOf(t, lite)
	pt, pi := schemaOf(t, pg)
	// SQLite's events have an implicit rowid; Postgres's have a column
	// and its index.
	pt["events"] = slices.DeleteFunc(pt["events"], func(c column) bool { return c.name == "rowid" })
	pi = slices.DeleteFunc(pi, func(n string) bool { return n == "events_rowid" })
	if fmt.Sprint(lt) != fmt.Sprint(pt) {
		t.Errorf("tables differ\nsqlite   %v\npostgres %v", lt, pt)
	}
	if fmt.Sprint(li) != fmt.Sprint(pi) {
		t.Errorf("indexes differ\nsqlite   %v\npostgres %v", li, pi)
	}
	// Text compares and orders byte by byte, as in SQLite, whatever the
	// database's collation.
	rows, err := pg.db.QueryContext(context.Background(), `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND data_type = 'text' AND COALESCE(collation_name, '') != 'C' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var col string
		rows.Scan(&col)
		t.Errorf("%s: text without COLLATE \"C\"", col)
	}
}

// Processes opening a new store at once all get there, and migrate it
// once.
func TestConcurrentOpens(t *testing.T) { forEachBackend(t, testConcurrentOpens) }

func testConcurrentOpens(t *testing.T, dsn string) {
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			s, err := Open(dsn)
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := openAt(t, dsn)
	var n, v int
	if err := s.db.QueryRowContext(context.Background(), `SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != len(migrations) || v != len(migrations) {
		t.Fatalf("%d versions recorded, the last %d; want %d", n, v, len(migrations))
	}
}

// A reader that follows every run's events by the place of the last it
// saw, while writers append at once, sees every event once, in
// increasing places, and each run's in its order.
func TestEventsSinceMissesNone(t *testing.T) { forEachBackend(t, testEventsSinceMissesNone) }

func testEventsSinceMissesNone(t *testing.T, dsn string) {
	ctx := context.Background()
	const writers, each = 6, 60
	s := openAt(t, dsn)
	for w := range writers {
		if err := s.CreateRun(ctx, newRun(fmt.Sprintf("run-%d", w))); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			// Each writer its own process, as a fleet's are.
			ws, err := Open(dsn)
			if err != nil {
				errs <- err
				return
			}
			defer ws.Close()
			for i := range each {
				if err := ws.AppendEvent(ctx, fmt.Sprintf("run-%d", w), int64(i+1), time.Now(), "x", "", json.RawMessage(`{}`)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	seen := map[string]int64{}
	var last int64
	total := 0
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		evs, err := s.EventsSince(ctx, last, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Row <= last {
				t.Fatalf("place %d after %d", e.Row, last)
			}
			if e.Seq != seen[e.Run]+1 {
				t.Fatalf("run %s: event %d after %d: one was skipped", e.Run, e.Seq, seen[e.Run])
			}
			last, seen[e.Run] = e.Row, e.Seq
			total++
		}
		if finished && len(evs) == 0 {
			break
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if total != writers*each {
		t.Fatalf("read %d events, %d written", total, writers*each)
	}
	if n, _ := s.LastRow(ctx); n != last {
		t.Fatalf("last row %d, read up to %d", n, last)
	}
}

// On Postgres an event's place is drawn under a lock held to the end of
// its transaction: an insert that comes second waits for the first to
// commit, so a reader never sees the later place while the earlier one
// can still appear.
func TestEventPlacesCommitInOrder(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, newDSN(t, Postgres))
	if err := s.CreateRun(ctx, newRun("r")); err != nil {
		t.Fatal(err)
	}
	first, err := s.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback()
	if _, err := first.ExecContext(ctx, `INSERT INTO events (run_id, seq, at, type, phase, data) VALUES (?,?,?,?,?,?)`,
		"r", 1, ts(time.Now()), "x", "", "{}"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() { second <- s.AppendEvent(ctx, "r", 2, time.Now(), "x", "", json.RawMessage(`{}`)) }()
	select {
	case err := <-second:
		t.Fatalf("the second insert did not wait for the first (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if evs, err := s.EventsSince(ctx, 0, 10); err != nil || len(evs) != 0 {
		t.Fatalf("before the first commits: %+v %v", evs, err)
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	evs, err := s.EventsSince(ctx, 0, 10)
	if err != nil || len(evs) != 2 || evs[0].Seq != 1 || evs[1].Seq != 2 || evs[0].Row >= evs[1].Row {
		t.Fatalf("after: %+v %v", evs, err)
	}
}

// Requests, the interrupted mark and the integrity check, on each
// backend.
func TestRequests(t *testing.T) { forEachBackend(t, testRequests) }

func testRequests(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	r := newRun("261130-010101-dddd")
	r.PID = 4242
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	id1, err := s.AddRequest(ctx, Request{Run: r.ID, Kind: ReqSteer, Axes: map[string]string{"mode": "plan"}, Scope: "run", Who: "me"})
	if err != nil {
		t.Fatal(err)
	}
	id2, err := s.AddRequest(ctx, Request{Run: r.ID, Kind: ReqApprove, CallID: "c1"})
	if err != nil || id2 <= id1 {
		t.Fatalf("ids %d then %d (%v)", id1, id2, err)
	}
	open, err := s.OpenRequests(ctx, r.ID)
	if err != nil || len(open) != 2 || open[0].ID != id1 || open[0].Axes["mode"] != "plan" || open[1].CallID != "c1" {
		t.Fatalf("open %+v %v", open, err)
	}
	if err := s.FinishRequest(ctx, id1, "applied"); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRequest(ctx, id1, "again"); !errors.Is(err, ErrTaken) {
		t.Fatalf("taken twice: %v", err)
	}
	if open, _ = s.OpenRequests(ctx, r.ID); len(open) != 1 || open[0].ID != id2 {
		t.Fatalf("open after one is taken: %+v", open)
	}
	q, err := s.Request(ctx, id1)
	if err != nil || q.Outcome != "applied" || q.DoneAt.IsZero() {
		t.Fatalf("request %+v %v", q, err)
	}
	if all, _ := s.Requests(ctx, r.ID); len(all) != 2 {
		t.Fatalf("all %+v", all)
	}
	if _, err := s.Request(ctx, 999999); err == nil {
		t.Fatal("an unknown request was found")
	}

	if err := s.Beat(ctx, r.ID, Runtime{PID: 4242}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.MarkInterrupted(ctx, r.ID, 1, "gone"); ok || err != nil {
		t.Fatalf("marked for another pid: %v %v", ok, err)
	}
	if ok, err := s.MarkInterrupted(ctx, r.ID, 4242, "gone"); !ok || err != nil {
		t.Fatalf("mark: %v %v", ok, err)
	}
	got, _ := s.GetRun(ctx, r.ID)
	rt, _ := s.RuntimeOf(ctx, r.ID)
	if got.Status != "interrupted" || got.PID != 0 || got.TaskRow.Status != "paused" || rt.PID != 0 {
		t.Fatalf("after the mark: %s pid %d task %s runtime pid %d", got.Status, got.PID, got.TaskRow.Status, rt.PID)
	}
	// A command's output kept as the partial output can be anything.
	if err := s.Beat(ctx, r.ID, Runtime{PID: 1, Partial: "bin\x00ary \xff out"}); err != nil {
		t.Fatal(err)
	}
	want := "bin\x00ary \xff out"
	if s.Backend() == Postgres {
		want = "bin\uFFFDary \uFFFD out"
	}
	if rt, err := s.RuntimeOf(ctx, r.ID); err != nil || rt.Partial != want {
		t.Fatalf("partial %q %v, want %q", rt.Partial, err, want)
	}
	if problems, err := s.IntegrityCheck(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("integrity %v %v", problems, err)
	}
}
