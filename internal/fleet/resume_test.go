package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/store/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// stoppedFleetRun is a fleet's run that stopped short, in a fresh
// database with River's tables: the store, the database's URL, the run.
func stoppedFleetRun(t *testing.T) (*store.Store, string, string) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.URL(t)
	if err := Prepare(ctx, url); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now()
	row := &store.Run{ID: "20261129-120000-abcdef", Task: "fix it", Repo: "/clone", Workdir: "/clone", Phase: "building", Status: "escalated",
		Axes: axes.Default, State: json.RawMessage(`{}`), CreatedAt: now, UpdatedAt: now}
	if err := st.CreateRun(ctx, row); err != nil {
		t.Fatal(err)
	}
	row.Records = []store.Record{{Kind: store.RecordOrigin, Body: []byte(`{"repo":"file:///srv/calc.git"}`), At: now}}
	if err := st.SaveStep(ctx, row, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendEvent(ctx, row.ID, 1, now, string(event.RunFinished), "building", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	return st, url, row.ID
}

// askJobs are run's asks to go on in River's table: state by guidance.
func askJobs(t *testing.T, url, run string) map[string]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT args->'resume'->>'guidance', state FROM river_job WHERE args->>'run'=$1 AND args ? 'resume'`, run)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var g, s string
		if err := rows.Scan(&g, &s); err != nil {
			t.Fatal(err)
		}
		out[g] = s
	}
	return out
}

// Of people asking at once to go on with a stopped run, one ask is
// queued; each other one is refused, naming the ask that waits.
func TestResumeOneAskAtATime(t *testing.T) {
	st, url, run := stoppedFleetRun(t)
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = Resume(context.Background(), url, st, run, ResumeAsk{Guidance: "ask " + string(rune('a'+i))}, time.Now())
		})
	}
	wg.Wait()
	queued := 0
	for i, err := range errs {
		switch {
		case err == nil:
			queued++
		case !strings.Contains(err.Error(), "a person asked to go on with it") || !strings.Contains(err.Error(), "has not taken that ask yet"):
			t.Errorf("ask %d: %v", i, err)
		}
	}
	if jobs := askJobs(t, url, run); queued != 1 || len(jobs) != 1 {
		t.Fatalf("%d asks queued, jobs %v", queued, jobs)
	}
}

// An ask waiting for its next try (its take-over did not go on) gives
// way to a new one, which says so; an ask made before the run resumed
// is no longer waiting.
func TestResumeReplacesAnAskWaitingToBeTriedAgain(t *testing.T) {
	st, url, run := stoppedFleetRun(t)
	ctx := context.Background()
	if _, err := Resume(ctx, url, st, run, ResumeAsk{Guidance: "first"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE river_job SET state='retryable', attempt=1, scheduled_at=now()+interval '1 hour' WHERE args->>'run'=$1`, run); err != nil {
		t.Fatal(err)
	}
	replaced, err := Resume(ctx, url, st, run, ResumeAsk{Guidance: "second"}, time.Now())
	if err != nil || replaced == "" {
		t.Fatalf("replaced %q, %v", replaced, err)
	}
	if jobs := askJobs(t, url, run); jobs["first"] != "cancelled" || jobs["second"] != "available" {
		t.Fatalf("jobs %v", jobs)
	}
	// The run resumed since "second" was asked: a new ask goes in.
	if err := st.AppendEvent(ctx, run, 2, time.Now(), string(event.RunResumed), "building", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendEvent(ctx, run, 3, time.Now(), string(event.RunFinished), "building", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(ctx, url, st, run, ResumeAsk{Guidance: "third"}, time.Now()); err != nil {
		t.Fatalf("an ask after the run resumed: %v", err)
	}
}

// A take-over claim whose job will never try again (cancelled, replaced,
// gone) is freed for the job that asks next; one whose job waits for its
// next try still holds.
func TestStaleTakeOverClaimIsFreed(t *testing.T) {
	st, url, run := stoppedFleetRun(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	f := &Fleet{Store: st, pool: pool, Worker: store.Worker{ID: "w2"}}
	var retrying int64
	if err := pool.QueryRow(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt) VALUES ('{}', 'ultra_run', 5, 'runs', 'retryable', 1) RETURNING id`).Scan(&retrying); err != nil {
		t.Fatal(err)
	}
	held := []byte(fmt.Sprintf("job %d (worker w1)", retrying))
	if won, err := st.ClaimOnce(ctx, run, store.RecordTakeOver, 1, held, time.Now()); err != nil || !won {
		t.Fatalf("the first claim: %v %v", won, err)
	}
	c, err := f.claimTakeOver(ctx, run, 0, 77)
	if err != nil || c == nil || c.won {
		t.Fatalf("a claim of a job still trying was taken: %+v %v", c, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state='cancelled', finalized_at=now() WHERE id=$1`, retrying); err != nil {
		t.Fatal(err)
	}
	c, err = f.claimTakeOver(ctx, run, 0, 77)
	if err != nil || c == nil || !c.won || !strings.HasPrefix(string(c.body), "job 77 ") {
		t.Fatalf("a cancelled job's claim was not freed: %+v %v", c, err)
	}
	recs, err := st.Records(ctx, run, store.RecordTakeOver)
	if err != nil || len(recs) != 1 || !strings.HasPrefix(string(recs[0].Body), "job 77 ") {
		t.Fatalf("the claims: %+v %v", recs, err)
	}
}
