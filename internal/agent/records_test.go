package agent

import (
	"os"
	"testing"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/store"
)

// A run keeps its records where its state says: its own directory, or
// .ultra/ itself for a run an older ultra started.
func TestRecordsOf(t *testing.T) {
	for _, tc := range []struct {
		name, state string
		want        goal.Records
	}{
		{"per run", `{"goals":{"records":".ultra/runs/r1"}}`, goal.RunRecords("r1")},
		{"started by an older ultra", `{"goals":{"brief":"b"}}`, goal.LegacyRecords},
		{"no goals", `{}`, goal.RunRecords("r1")},
		{"unreadable state", `{`, goal.RunRecords("r1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RecordsOf(&store.Run{ID: "r1", State: []byte(tc.state)}); got != tc.want {
				t.Fatalf("RecordsOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Records are written in their directory, made part by part, never
// through a link.
func TestRecordsDirRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	if _, err := recordsDir(dir, goal.RunRecords("r1")); err != nil {
		t.Fatal(err)
	}
	if err := writeArtifact(dir, goal.RunRecords("r1"), "brief.md", []byte("b\n")); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.Symlink(other, dir+"/.ultra/runs/r2"); err != nil {
		t.Fatal(err)
	}
	if err := writeArtifact(dir, goal.RunRecords("r2"), "brief.md", []byte("b\n")); err == nil {
		t.Fatal("a records directory that is a link was written through")
	}
}
