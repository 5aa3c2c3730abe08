package fleet

import (
	"encoding/json"
	"testing"
	"time"
)

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

// The worker logs a due time as ultra schedule shows it: in the
// schedule's zone, UTC spelled UTC.
func TestDueIn(t *testing.T) {
	due := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ spec, want string }{
		{`{"cron":"0 3 * * *","zone":"Europe/Berlin"}`, "2026-11-30 03:00:00 CET"},
		{`{"cron":"0 3 * * *","zone":"Etc/UTC"}`, "2026-11-30 02:00:00 UTC"},
		{`not json`, "2026-11-30 02:00:00 UTC"},
	} {
		if got := dueIn(json.RawMessage(tt.spec), due); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.spec, got, tt.want)
		}
	}
}
