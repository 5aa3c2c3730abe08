package sandbox

import (
	"slices"
	"testing"
)

func TestDatabaseSockets(t *testing.T) {
	for _, tt := range []struct {
		url, pghost string
		want        []string
	}{
		{"postgres://ultra@/ultra?host=/tmp/ultra-pg-1", "", []string{"/tmp/ultra-pg-1"}},
		{"postgres://ultra:pw@db.internal:5432/ultra", "", nil},
		{"postgres://u@/d?host=/a,/b", "/c,db.internal", []string{"/a", "/b", "/c"}},
		{"", "", nil},
	} {
		if got := databaseSockets(tt.url, tt.pghost); !slices.Equal(got, tt.want) {
			t.Errorf("databaseSockets(%q, %q) = %q, want %q", tt.url, tt.pghost, got, tt.want)
		}
	}
	t.Setenv("ULTRA_DB", "postgres://u@/d?host=/tmp/fleet-sock")
	if s := Secrets("/home/x"); !slices.Contains(s, "/tmp/fleet-sock") || !slices.Contains(s, "/var/run/postgresql") {
		t.Fatalf("Secrets leaves the database's sockets: %q", s)
	}
}
