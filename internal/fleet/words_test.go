package fleet

import "testing"

// One thing is one thing: "1 due time", "the run", never "1 due times".
func TestLogWordsPlural(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{missed(1), "1 due time missed"},
		{missed(3), "3 due times missed"},
		{waitingFor(1), "waiting for the run going on to end (signal again to stop it at its next safe point)"},
		{waitingFor(2), "waiting for the 2 runs going on to end (signal again to stop them at their next safe point)"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
