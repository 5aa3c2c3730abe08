package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// Only the lines ultra wrote are shared: up to the head it recorded, and
// only when the file still holds that head.
func TestOwnLines(t *testing.T) {
	lines := [][]byte{[]byte(`{"seq":1}`), []byte(`{"seq":2}`), []byte(`{"seq":3,"forged":true}`)}
	hash := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	for _, c := range []struct {
		name string
		seq  int
		hash string
		want int
	}{
		{"a line appended after ultra's head is not shared", 2, hash(lines[1]), 2},
		{"every line ultra wrote", 3, hash(lines[2]), 3},
		{"no head recorded: nothing", 0, "", 0},
		{"the head's line rewritten: nothing", 2, hash([]byte(`{"seq":2,"edited":1}`)), 0},
		{"lines cut from the end: nothing", 4, hash(lines[2]), 0},
	} {
		if got := ownLines(lines, c.seq, c.hash); got != c.want {
			t.Errorf("%s: %d lines, want %d", c.name, got, c.want)
		}
	}
}
