package main

import (
	"os"
	"path/filepath"
	"testing"
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
