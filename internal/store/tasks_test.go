package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/tasks"
)

func byID(vs []TaskView) map[string]TaskView {
	m := map[string]TaskView{}
	for _, v := range vs {
		m[v.ID] = v
	}
	return m
}

func TestListTasks(t *testing.T) { forEachBackend(t, testListTasks) }

func testListTasks(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	base := time.Now().Add(-time.Hour)
	mk := func(id, status, taskStatus string, at time.Duration) *Run {
		r := newRun(id)
		r.Status, r.Phase = status, "building"
		r.CreatedAt, r.UpdatedAt = base.Add(at), base.Add(at)
		r.TaskRow = Task{Status: taskStatus, Retries: 2, MaxRetries: 10, InputTokens: 1000, OutputTokens: 50, SpentCost: 0.25, BudgetCost: 5,
			Checkpoint: "abc123", Goal: "G001", Blockers: []string{"b1"}, LimitWhat: "cycles of goal G001", LimitUsed: 3, LimitMax: 5}
		r.Workspace = Workspace{Branch: "ultra/" + id}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	mk("r1-live", "running", "verifying", 1*time.Minute)
	mk("r2-wait", "needs_approval", "blocked", 2*time.Minute).TaskRow.Waiting = "plan acceptance: ultra approve r2-wait"
	for i := range 5 {
		mk(fmt.Sprintf("r3-done-%d", i), "complete", "done", time.Duration(3+i)*time.Minute)
	}
	mk("r4-cancel", "cancelled", "cancelled", 10*time.Minute)
	mk("r0-landed", "complete", "done", 0)
	for _, id := range []string{"r3-done-4", "r0-landed"} {
		if err := s.SetWorkspace(ctx, id, Workspace{Branch: "ultra/" + id, Landed: "deadbeef"}); err != nil {
			t.Fatal(err)
		}
	}
	beat := time.Now().Add(-3 * time.Second).UTC().Truncate(time.Millisecond)
	if err := s.Beat(ctx, "r1-live", Runtime{PID: 42, Host: "h", Model: "m", Activity: "waiting for the model", Heartbeat: beat}); err != nil {
		t.Fatal(err)
	}

	all, err := s.ListTasks(ctx, TaskFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 9 || all[0].ID != "r4-cancel" {
		t.Fatalf("all: %d tasks, first %s", len(all), all[0].ID)
	}
	m := byID(all)
	live := m["r1-live"]
	if live.Runtime == nil || live.Runtime.PID != 42 || !live.Runtime.Heartbeat.Equal(beat) || live.Runtime.Activity != "waiting for the model" {
		t.Fatalf("runtime %+v", live.Runtime)
	}
	tr := live.TaskRow
	if tr.Status != "verifying" || tr.Retries != 2 || tr.MaxRetries != 10 || tr.InputTokens != 1000 || tr.SpentCost != 0.25 ||
		tr.Checkpoint != "abc123" || tr.Goal != "G001" || len(tr.Blockers) != 1 || live.Axes != axes.Default || live.Branch != "ultra/r1-live" ||
		tr.LimitWhat != "cycles of goal G001" || tr.LimitUsed != 3 || tr.LimitMax != 5 {
		t.Fatalf("task row %+v of %+v", tr, live)
	}
	if m["r2-wait"].Runtime != nil {
		t.Fatal("a task that never beat has a runtime")
	}
	if !m["r3-done-4"].Landed || m["r3-done-3"].Landed {
		t.Fatal("landed not read from the workspace")
	}

	// By default finished tasks are left out but for the most recent and
	// those whose work waits to be landed.
	some, err := s.ListTasks(ctx, TaskFilter{RecentFinished: 2})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range some {
		ids = append(ids, v.ID)
	}
	if got := strings.Join(ids, " "); got != "r4-cancel r3-done-4 r3-done-3 r3-done-2 r3-done-1 r3-done-0 r2-wait r1-live" {
		t.Fatalf("default view %s", got)
	}
	if n, err := s.CountFinishedTasks(ctx); err != nil || n != 7 {
		t.Fatalf("finished %d %v", n, err)
	}
	one, err := s.ListTasks(ctx, TaskFilter{ID: "r2"})
	if err != nil || len(one) != 1 || one[0].ID != "r2-wait" {
		t.Fatalf("by id: %v %v", one, err)
	}
}

// Listing tasks never reads the runs' states, which can be large: on
// SQLite it reads runs through an index that holds every column it needs;
// Postgres keeps a large value out of the row it belongs to (TOAST).
func TestListTasksNeverReadsState(t *testing.T) { forEachBackend(t, testListTasksNeverReadsState) }

func testListTasksNeverReadsState(t *testing.T, dsn string) {
	s := openAt(t, dsn)
	ctx := context.Background()
	if s.Backend() == Postgres {
		var storage string
		err := s.db.QueryRowContext(ctx, `SELECT attstorage FROM pg_attribute WHERE attrelid = 'runs'::regclass AND attname = 'state'`).Scan(&storage)
		if err != nil || storage != "x" {
			t.Fatalf("the state's storage is %q (%v), want x: kept out of the row when large", storage, err)
		}
		return
	}
	for _, f := range []TaskFilter{{All: true}, {RecentFinished: 3}} {
		q, args := tasksQuery(f)
		rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, "\n"), "SCAN r USING COVERING INDEX runs_list") {
			t.Fatalf("filter %+v: the plan reads the runs' rows:\n%s", f, strings.Join(plan, "\n"))
		}
	}
}

func TestUsageByRunModel(t *testing.T) { forEachBackend(t, testUsageByRunModel) }

func testUsageByRunModel(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openAt(t, dsn)
	a, b := newRun("run-a"), newRun("run-b")
	b.Axes.Mode = "review"
	b.CreatedAt = a.CreatedAt.Add(time.Second)
	for _, r := range []*Run{a, b} {
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	seq := map[string]int64{}
	ev := func(run, typ, data string) {
		seq[run]++
		if err := s.AppendEvent(ctx, run, seq[run], time.Now(), typ, "building", json.RawMessage(data)); err != nil {
			t.Fatal(err)
		}
	}
	ev("run-a", "model_response", `{"model":"big","usage":{"input_tokens":100,"output_tokens":10,"cache_read_tokens":40},"cost":0.5}`)
	ev("run-a", "model_response", `{"model":"big","usage":{"input_tokens":200,"output_tokens":20,"cache_write_tokens":7},"cost":0.25}`)
	ev("run-a", "model_response", `{"model":"small","usage":{"input_tokens":5,"output_tokens":1}}`)
	ev("run-a", "model_response", `{"model":"big","usage":{"input_tokens":0,"output_tokens":0},"error":{"message":"boom"}}`)
	ev("run-a", "tool_result", `{"usage":{"input_tokens":999}}`)
	ev("run-b", "model_response", `{"model":"big","usage":{"input_tokens":1,"output_tokens":2},"cost":1}`)

	got, err := s.UsageByRunModel(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Usage{
		{Run: "run-a", Mode: "build", Model: "big", Responses: 2, InputTokens: 300, OutputTokens: 30, CacheReadTokens: 40, CacheWriteTokens: 7, Cost: 0.75},
		{Run: "run-a", Mode: "build", Model: "small", Responses: 1, InputTokens: 5, OutputTokens: 1},
		{Run: "run-b", Mode: "review", Model: "big", Responses: 1, InputTokens: 1, OutputTokens: 2, Cost: 1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("usage\n got %+v\nwant %+v", got, want)
	}
	one, err := s.UsageByRunModel(ctx, "run-b")
	if err != nil || len(one) != 1 || one[0].Run != "run-b" {
		t.Fatalf("one run: %+v %v", one, err)
	}
}

// A store made by an ultra from before the tasks surface (schema version
// 3) opens with this one, and its runs appear among the tasks.
func TestTasksFromSchemaVersion3(t *testing.T) { forEachBackend(t, testTasksFromSchemaVersion3) }

func testTasksFromSchemaVersion3(t *testing.T, dsn string) {
	ctx := context.Background()
	raw, list := oldStore(t, dsn)
	for i, m := range list[:3] {
		if _, err := raw.q.ExecContext(ctx, m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
		raw.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, i+1)
	}
	db := raw
	old := []struct{ id, phase, status string }{
		{"old-done", "complete", "complete"},
		{"old-esc", "iterating", "escalated"},
		{"old-plan", "planning", "needs_approval"},
		{"old-killed", "building", "running"}, // its process died long ago
		{"old-int", "building", "interrupted"},
	}
	at := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339Nano)
	for _, r := range old {
		_, err := db.ExecContext(ctx, `INSERT INTO runs (id, task, repo, workdir, phase, status, reason, axes, provider, model, state, pid, created_at, updated_at, finished_at, base_url, workspace)
			VALUES (?, 'fix it', '/r', '/r', ?, ?, 'why', ?, 'openai', 'm', '{"phase":{}}', 0, ?, ?, '', '', '{"branch":"ultra/x"}')`,
			r.id, r.phase, r.status, `{"mode":"build","control":"autonomous","permission_profile":"normal","model_mode":"smart","surface":"headless"}`, at, at)
		if err != nil {
			t.Fatal(err)
		}
	}
	db.ExecContext(ctx, `INSERT INTO transitions (run_id, kind, from_v, to_v, by, reason, at) VALUES ('old-esc', 'phase', 'planning', 'building', 'model', 'plan', ?)`, at)
	db.q.(*sql.DB).Close()

	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_version`).Scan(&v)
	if v != len(migrations) {
		t.Fatalf("schema version %d, want %d", v, len(migrations))
	}
	views, err := s.ListTasks(ctx, TaskFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	m := byID(views)
	want := map[string]struct{ taskStatus, class, next string }{
		"old-done":   {"done", tasks.Done, "ultra land old-done"},
		"old-esc":    {"blocked", tasks.Resumable, "ultra resume old-esc"},
		"old-plan":   {"blocked", tasks.Waiting, "ultra approve old-plan"},
		"old-killed": {"running", tasks.Resumable, "ultra resume old-killed"},
		"old-int":    {"paused", tasks.Resumable, "ultra resume old-int"},
	}
	for id, w := range want {
		got, ok := m[id]
		if !ok {
			t.Fatalf("%s missing from the tasks", id)
		}
		c := tasks.Classify(inputOf(got), time.Now())
		if got.TaskRow.Status != w.taskStatus || c.Class != w.class || c.Next != w.next || got.Phase == "" || got.Axes.Mode != "build" {
			t.Errorf("%s: task status %s, class %+v; want %+v", id, got.TaskRow.Status, c, w)
		}
	}
	trs, err := s.Transitions(ctx, "old-esc")
	if err != nil || len(trs) != 1 || trs[0].To != "building" {
		t.Fatalf("transitions %+v %v", trs, err)
	}
	// The old store takes new steps as any other.
	if _, err := s.UsageByRunModel(ctx, ""); err != nil {
		t.Fatal(err)
	}
}

// oldStore opens the database at dsn as an older ultra would, with an
// empty schema_version table, and returns it with its backend's
// migrations.
func oldStore(t *testing.T, dsn string) (conn, []string) {
	t.Helper()
	driver, name, list := "sqlite", "file:"+dsn, migrations
	if isPostgresURL(dsn) {
		driver, name, list = "pgx", dsn, pgMigrations
	} else if err := os.MkdirAll(filepath.Dir(dsn), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(createSchemaVersion); err != nil {
		t.Fatal(err)
	}
	return conn{q: db, pg: driver == "pgx"}, list
}

// inputOf is what `ultra tasks` gives the classifier, the process
// taken as dead when no pid drives the run (as here: no live process).
func inputOf(v TaskView) tasks.Input {
	in := tasks.Input{ID: v.ID, Status: v.Status, TaskStatus: v.TaskRow.Status, Reason: v.Reason, Waiting: v.TaskRow.Waiting,
		PID: v.PID, Branch: v.Branch, Landed: v.Landed, Undone: v.Undone, Process: tasks.ProcessDead}
	if v.Runtime != nil {
		in.Heartbeat = v.Runtime.Heartbeat
		in.Process = tasks.ProcessAlive
	}
	return in
}

// fill1000 makes a store of 1,000 runs as a busy repository has them: a
// few live (with heartbeats), some waiting or escalated, most complete;
// each with a state of about 40 KB, 30 messages and 60 events.
func fill1000(b *testing.B, dsn string) *Store {
	b.Helper()
	ctx := context.Background()
	s := openAt(b, dsn)
	state := json.RawMessage(`{"phase":{"phase":"building"},"files":"` + strings.Repeat("x", 40_000) + `"}`)
	msg := `{"role":"tool","content":"` + strings.Repeat("y", 2_000) + `"}`
	ev := `{"model":"gpt-5","usage":{"input_tokens":12000,"output_tokens":800,"cache_read_tokens":9000},"cost":0.02,"tool_calls":1,"duration":"2s"}`
	tx, err := s.begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now().Add(-30 * 24 * time.Hour)
	for i := range 1000 {
		id := fmt.Sprintf("260101-%06d-%04x", i, i)
		status, taskStatus := "complete", "done"
		switch {
		case i%100 == 1:
			status, taskStatus = "running", "running"
		case i%100 == 2:
			status, taskStatus = "needs_approval", "blocked"
		case i%25 == 3:
			status, taskStatus = "escalated", "blocked"
		case i%50 == 4:
			status, taskStatus = "cancelled", "cancelled"
		}
		at := start.Add(time.Duration(i) * 40 * time.Minute)
		r := &Run{ID: id, Task: "make the failing test in pkg/calc pass, number " + id, Repo: "/r", Workdir: "/w/" + id,
			Phase: "building", Status: status, Axes: axes.Default, Provider: "openai", Model: "gpt-5", State: state,
			CreatedAt: at, UpdatedAt: at.Add(time.Minute), PID: 0,
			Workspace: Workspace{Branch: "ultra/" + id, Worktree: "/w/" + id},
			TaskRow:   Task{Status: taskStatus, Retries: i % 4, MaxRetries: 10, InputTokens: 600_000, OutputTokens: 40_000, SpentCost: 1.2, Checkpoint: "0123456789abcdef0123"}}
		if err := putRun(ctx, tx, r); err != nil {
			b.Fatal(err)
		}
		for j := range 30 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO messages (run_id, seq, data) VALUES (?,?,?)`, id, j+1, msg); err != nil {
				b.Fatal(err)
			}
		}
		for j := range 60 {
			typ := "tool_result"
			if j%3 == 0 {
				typ = "model_response"
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO events (run_id, seq, at, type, phase, data) VALUES (?,?,?,?,?,?)`, id, j+1, ts(at), typ, "building", ev); err != nil {
				b.Fatal(err)
			}
		}
		if status == "running" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO task_runtime (task_id, pid, host, heartbeat) VALUES (?,?,?,?)`, id, 1, "h", ts(time.Now())); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkListTasks1000 is `ultra tasks` over 1,000 runs: the query,
// the classification and the table (default view, and --all).
func BenchmarkListTasks1000(b *testing.B) { forEachBackend(b, benchmarkListTasks1000) }

func benchmarkListTasks1000(b *testing.B, dsn string) {
	s := fill1000(b, dsn)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		f    TaskFilter
	}{{"default", TaskFilter{RecentFinished: 3}}, {"all", TaskFilter{All: true}}} {
		b.Run(c.name, func(b *testing.B) {
			rows := 0
			for b.Loop() {
				views, err := s.ListTasks(ctx, c.f)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.CountFinishedTasks(ctx); err != nil {
					b.Fatal(err)
				}
				now := time.Now()
				out := make([]tasks.Row, 0, len(views))
				for _, v := range views {
					out = append(out, tasks.Row{ID: v.ID, Task: v.Task, Mode: v.Axes.Mode, Axes: v.Axes, Status: v.Status,
						TaskStatus: v.TaskRow.Status, Class: tasks.Classify(inputOf(v), now), Phase: v.Phase,
						Retries: v.TaskRow.Retries, MaxRetries: v.TaskRow.MaxRetries, InputTokens: v.TaskRow.InputTokens,
						OutputTokens: v.TaskRow.OutputTokens, Cost: v.TaskRow.SpentCost, Created: v.CreatedAt, Updated: v.UpdatedAt,
						Checkpoint: v.TaskRow.Checkpoint})
				}
				tasks.Sort(out)
				if err := tasks.Table(io.Discard, out, now, false); err != nil {
					b.Fatal(err)
				}
				rows = len(out)
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}

// BenchmarkReport1000 is `ultra report` over 1,000 runs of 20 model
// responses each.
func BenchmarkReport1000(b *testing.B) { forEachBackend(b, benchmarkReport1000) }

func benchmarkReport1000(b *testing.B, dsn string) {
	s := fill1000(b, dsn)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.UsageByRunModel(ctx, ""); err != nil {
			b.Fatal(err)
		}
	}
}
