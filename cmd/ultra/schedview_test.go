package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/store"
)

// jsonKeys are the sorted field names of a JSON object.
func jsonKeys(t *testing.T, obj json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// A schedule is the same JSON object in schedule list, schedule add and
// ultra tasks: the same fields by the same names, its zone spelled
// once, its next due time next_due_at (a dispatch's is due_at), and
// whether a worker serves it.
func TestScheduleJSONOneShape(t *testing.T) {
	t.Setenv("ULTRA_DB", "")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	added, err := execRoot(t, "-C", dir, "schedule", "add", "--every", "1h", "--zone", "Etc/UTC", "--json", "tidy up")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := execRoot(t, "-C", dir, "schedule", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := execRoot(t, "-C", dir, "tasks", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var l, tv struct {
		Schedules []json.RawMessage `json:"schedules"`
	}
	if err := json.Unmarshal([]byte(listed), &l); err != nil || len(l.Schedules) != 1 {
		t.Fatalf("schedule list --json: %v\n%s", err, listed)
	}
	if err := json.Unmarshal([]byte(tasks), &tv); err != nil || len(tv.Schedules) != 1 {
		t.Fatalf("tasks --json: %v\n%s", err, tasks)
	}
	want := jsonKeys(t, l.Schedules[0])
	if got := jsonKeys(t, json.RawMessage(added)); !slices.Equal(got, want) {
		t.Errorf("schedule add --json has %v, schedule list --json %v", got, want)
	}
	if got := jsonKeys(t, tv.Schedules[0]); !slices.Equal(got, want) {
		t.Errorf("tasks --json's schedules have %v, schedule list --json's %v", got, want)
	}
	for _, k := range []string{"id", "next_due_at", "served", "zone", "when", "state"} {
		if !slices.Contains(want, k) {
			t.Errorf("a schedule lacks %q: %v", k, want)
		}
	}
	var v struct {
		Zone string `json:"zone"`
		Spec struct {
			Zone string `json:"zone"`
		} `json:"spec"`
	}
	json.Unmarshal(l.Schedules[0], &v)
	if v.Zone != "UTC" || v.Spec.Zone != "UTC" {
		t.Errorf("zone %q, spec's %q: want UTC for Etc/UTC", v.Zone, v.Spec.Zone)
	}
}

// A fleet's schedule's repository URL is in its JSON (repo_url), apart
// from the repository root ultra tasks --all-repos gives every row
// (repo), which used to hide it.
func TestScheduleViewFleetRepo(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "ultra.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	sc := &store.Schedule{ID: "s-abcdef", Spec: json.RawMessage(`{"every":"1h0m0s","anchor":"2026-01-01T00:00:00Z","zone":"UTC"}`),
		Args: []string{"--", "x"}, Task: "x", Repo: "git@git.internal:acme/api.git", Base: "develop", CatchUp: "once", CreatedAt: now, UpdatedAt: now}
	v := scheduleViewOf(context.Background(), st, sc, true, now)
	v.Repo = "/src/api"
	b, _ := json.Marshal(v)
	for _, want := range []string{`"repo":"/src/api"`, `"repo_url":"git@git.internal:acme/api.git"`, `"base":"develop"`, `"served":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("lacks %s: %s", want, b)
		}
	}
}

// A fleet's view speaks of the fleet: its worker is ultra worker --db,
// its runs are queued with ultra submit, and its schedules name their
// repository.
func TestFleetWording(t *testing.T) {
	var b strings.Builder
	now := time.Now()
	v := &tasksView{Fleet: true, NotServed: []string{"/x"}, Schedules: []scheduleView{{ID: "s-abcdef", When: "every 2h", State: "active", Task: "tidy", RepoURL: "git@h:a/b.git"}}}
	printTasks(&b, v, false, now)
	for _, want := range []string{"no runs yet: queue one with ultra submit --repo URL", "tidy · git@h:a/b.git", "no fleet worker is running; start one with ultra worker --db"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(notServed(false), "--db") || !strings.Contains(notServed(false), "this repository") {
		t.Errorf("a repository's: %s", notServed(false))
	}
	got := submitLine(scheduleView{RepoURL: "git@h:a/b.git", Base: "dev", Args: []string{"--control=autonomous", "--no-wait", "--", "tidy up"}})
	if got != "ultra submit --repo git@h:a/b.git --base dev --control=autonomous -- 'tidy up'" {
		t.Errorf("submitLine: %s", got)
	}
}
