package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The machine's zone is spelled one way: UTC for every name of UTC,
// whether it comes from $TZ or from where /etc/localtime points.
func TestZoneOf(t *testing.T) {
	dir := t.TempDir()
	link := func(target string) string {
		p := filepath.Join(dir, filepath.Base(target)+"-localtime")
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name, tz, localtime, want string
	}{
		{"Etc/UTC link", "", link("/usr/share/zoneinfo/Etc/UTC"), "UTC"},
		{"Universal link", "", link("/usr/share/zoneinfo/Universal"), "UTC"},
		{"a zone link", "", link("/usr/share/zoneinfo/Europe/Berlin"), "Europe/Berlin"},
		{"TZ Etc/UTC", "Etc/UTC", "", "UTC"},
		{"TZ with a colon", ":Etc/UTC", "", "UTC"},
		{"TZ a zone", "America/New_York", "", "America/New_York"},
		{"nothing", "", filepath.Join(dir, "none"), "UTC"},
	} {
		if got := zoneOf(tt.tz, tt.localtime); got != tt.want {
			t.Errorf("%s: zoneOf(%q, %q) = %q, want %q", tt.name, tt.tz, tt.localtime, got, tt.want)
		}
	}
}

// One run is "1 run", and the worker's last line agrees with its count.
func TestPluralLines(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{plural(1, "finished run", "finished runs"), "1 finished run"},
		{plural(0, "finished run", "finished runs"), "0 finished runs"},
		{plural(4, "finished run", "finished runs"), "4 finished runs"},
		{stoppedLine(0), "worker stopped"},
		{stoppedLine(1), "worker stopped; the run it started goes on in its own process"},
		{stoppedLine(2), "worker stopped; the 2 runs it started go on in their own processes"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	var b strings.Builder
	printTasks(&b, &tasksView{HiddenFinished: 1}, false, time.Now())
	if got := b.String(); got != "nothing in flight; 1 finished run not shown: ultra tasks --all\n" {
		t.Errorf("printTasks: %q", got)
	}
}

// A due time reads how far away it is first, then when, with its
// weekday, in the schedule's zone, to the minute unless it has seconds.
func TestWhen(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		t    time.Time
		zone string
		want string
	}{
		{time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC), "Europe/Berlin", "in 16h00m (Mon 2026-11-30 03:00 CET)"},
		{time.Date(2026, 11, 29, 15, 42, 15, 0, time.UTC), "UTC", "in 5h42m (Sun 2026-11-29 15:42:15 UTC)"},
		{time.Date(2026, 11, 29, 9, 55, 0, 0, time.UTC), "UTC", "5m00s ago (Sun 2026-11-29 09:55 UTC)"},
		{time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC), "UTC", "in 3d3h (Wed 2026-12-02 13:00 UTC)"},
	} {
		if got := when(tt.t, tt.zone, now); got != tt.want {
			t.Errorf("when(%s, %s) = %q, want %q", tt.t, tt.zone, got, tt.want)
		}
	}
}
