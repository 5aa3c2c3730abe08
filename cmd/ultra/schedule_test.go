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
