package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/store"
)

// A running run whose runtime names another machine and beats is driven
// there: ultra cancel asks it (a request) instead of signalling a pid
// that means nothing here.
func TestDrivenElsewhere(t *testing.T) {
	t.Setenv("ULTRA_HOSTNAME", "here")
	st := tempStore(t)
	ctx := context.Background()
	now := time.Now()
	for i, c := range []struct {
		status, host string
		age          time.Duration
		want         bool
	}{
		{StatusRunning, "there", time.Second, true},
		{StatusRunning, "there", time.Minute, false}, // its machine stopped beating: gone
		{StatusRunning, "here", time.Second, false},  // this machine's: signalled
		{StatusRunning, "", time.Second, false},
		{"escalated", "there", time.Second, false},
	} {
		row := &store.Run{ID: "r" + string(rune('a'+i)), Task: "t", Repo: "/r", Workdir: "/r", Phase: "building", Status: c.status,
			Axes: axes.Default, State: json.RawMessage(`{}`), PID: 424242, CreatedAt: now, UpdatedAt: now}
		beatingOn(t, st, row, c.host)
		host, got := drivenElsewhere(ctx, st, row, time.Now().Add(c.age))
		if got != c.want || (got && host != "there") {
			t.Errorf("%+v: drivenElsewhere = %q %v", c, host, got)
		}
	}
}

// A run another machine still drives (its heartbeat fresh) is never taken
// over, whoever asks: nothing is touched.
func TestTakeOverRefusesALiveRun(t *testing.T) {
	t.Setenv("ULTRA_HOSTNAME", "here")
	st := tempStore(t)
	ctx := context.Background()
	now := time.Now()
	row := &store.Run{ID: "r1", Task: "t", Repo: "/r", Workdir: "/r/wt", Phase: "building", Status: StatusRunning,
		Axes: axes.Default, State: json.RawMessage(`{}`), PID: 424242, CreatedAt: now, UpdatedAt: now,
		Workspace: store.Workspace{Branch: "ultra/r1", BaseCommit: "abc"}}
	beatingOn(t, st, row, "there")
	dir := t.TempDir()
	err := TakeOver(ctx, Options{Store: st, StateRoot: t.TempDir()}, row, dir, filepath.Join(dir, "wt"), nil)
	if err == nil || !strings.Contains(err.Error(), "driven on there") {
		t.Fatalf("TakeOver of a live run: %v", err)
	}
	if got, _ := st.GetRun(ctx, row.ID); got.Workdir != "/r/wt" || got.Repo != "/r" {
		t.Fatalf("the row moved: %+v", got)
	}
}

// tempStore is a store of the test's own, closed when it ends.
func tempStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "ultra.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// beatingOn stores row, its runtime beating now on host.
func beatingOn(t *testing.T, st *store.Store, row *store.Run, host string) {
	t.Helper()
	ctx := context.Background()
	if err := st.CreateRun(ctx, row); err != nil {
		t.Fatal(err)
	}
	if err := st.Beat(ctx, row.ID, store.Runtime{PID: row.PID, Host: host}); err != nil {
		t.Fatal(err)
	}
}
