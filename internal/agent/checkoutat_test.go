package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// The one path every checkout of the repository is seen at is an empty
// directory of its own in the state; a symlink there is not ultra's, and
// the checkouts are then seen where they lie.
func TestCheckoutAt(t *testing.T) {
	state := t.TempDir()
	if r, err := filepath.EvalSymlinks(state); err == nil {
		state = r
	}
	o := Options{StateRoot: state}
	at := o.checkoutAt()
	if at != filepath.Join(state, "checkout") {
		t.Fatalf("checkoutAt = %q", at)
	}
	if ents, err := os.ReadDir(at); err != nil || len(ents) != 0 {
		t.Fatalf("not an empty directory: %v %v", ents, err)
	}
	if again := o.checkoutAt(); again != at {
		t.Fatalf("a second call gave %q", again)
	}
	os.Remove(at)
	if err := os.Symlink(t.TempDir(), at); err != nil {
		t.Fatal(err)
	}
	if got := o.checkoutAt(); got != "" {
		t.Fatalf("checkoutAt through a symlink = %q, want none", got)
	}
	if got := (Options{}).checkoutAt(); got != "" {
		t.Fatalf("checkoutAt without a state = %q", got)
	}
}
