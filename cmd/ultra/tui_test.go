package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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

// Command output a TUI left behind (its command outlived it) is removed
// after a day; the history and recent files stay.
func TestPruneTUILogs(t *testing.T) {
	dir := t.TempDir()
	old, fresh, hist := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log"), filepath.Join(dir, "history.jsonl")
	for _, f := range []string{old, fresh, hist} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-48 * time.Hour)
	for _, f := range []string{old, hist} {
		if err := os.Chtimes(f, long, long); err != nil {
			t.Fatal(err)
		}
	}
	pruneLogs(dir, 24*time.Hour)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("an old command output stayed")
	}
	for _, f := range []string{fresh, hist} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A C1 control split across two writes is still removed.
func TestPrintableWriterHoldsSplitRunes(t *testing.T) {
	var b strings.Builder
	w := &printableWriter{w: &b}
	raw := []byte("a\u009b2Jb é")
	for i := range raw {
		if _, err := w.Write(raw[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); got != "a2Jb é" {
		t.Fatalf("wrote %q", got)
	}
}

// The TUI's history is per user, where every run's sandbox hides it, not
// in the repository's .ultra/state.
func TestTUIHistoryIsPerUser(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	p := &project{Root: "/src/calc", StateRoot: "/src/calc/.ultra/state"}
	got := p.historyPath()
	if !strings.HasPrefix(got, filepath.Join(state, "ultra", "tui")+string(filepath.Separator)) || !strings.Contains(filepath.Base(got), "calc-") {
		t.Fatalf("history at %s", got)
	}
	if other := (&project{Root: "/other/calc"}).historyPath(); other == got {
		t.Fatal("two repositories share a history")
	}
}
