package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The TUI's input history survives the session, private to its owner,
// multi-line entries whole, the newest historyKeep kept.
func TestTUIHistory(t *testing.T) {
	h := history{path: filepath.Join(t.TempDir(), "tui", "history.jsonl")}
	h.add("fix the parser")
	h.add("line one\nline two")
	if got := h.load(); !slices.Equal(got, []string{"fix the parser", "line one\nline two"}) {
		t.Fatalf("loaded %q", got)
	}
	if fi, err := os.Stat(h.path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v %v", fi.Mode(), err)
	}
	for i := range historyKeep + 5 {
		h.add(fmt.Sprint("task ", i))
	}
	got := h.load()
	if len(got) != historyKeep || got[len(got)-1] != fmt.Sprint("task ", historyKeep+4) {
		t.Fatalf("%d entries, last %q", len(got), got[len(got)-1])
	}
	if again := h.load(); len(again) != historyKeep {
		t.Fatalf("after trimming, %d entries", len(again))
	}
}
