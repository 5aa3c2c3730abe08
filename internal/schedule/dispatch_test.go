package schedule

import (
	"testing"
	"time"
)

func TestMoves(t *testing.T) {
	legal := map[[2]State]bool{
		{Queued, Due}: true, {Queued, Expired}: true,
		{Due, Claimed}: true, {Due, Expired}: true,
		{Claimed, Dispatched}: true, {Claimed, Due}: true, {Claimed, Expired}: true,
		{Dispatched, Consumed}: true,
	}
	for _, from := range States {
		for _, to := range States {
			if got := CanMove(from, to); got != legal[[2]State{from, to}] {
				t.Errorf("CanMove(%s, %s) = %v", from, to, got)
			}
		}
	}
}

func TestParseCatchUp(t *testing.T) {
	for in, want := range map[string]CatchUp{"": CatchUpOnce, "once": CatchUpOnce, "skip": CatchUpSkip} {
		if got, err := ParseCatchUp(in); err != nil || got != want {
			t.Errorf("ParseCatchUp(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseCatchUp("all"); err == nil {
		t.Error("ParseCatchUp(all) = nil error")
	}
}

func TestDecide(t *testing.T) {
	at := func(s string) time.Time { return mustTime(t, s) }
	hourly := Spec{Every: Duration(time.Hour), Anchor: at("2026-11-29T00:00:00Z"), Zone: "UTC"}
	nightly := Spec{Cron: "0 3 * * *", Zone: "UTC"}
	tests := []struct {
		name    string
		spec    Spec
		policy  CatchUp
		from    string
		now     string
		due     string // "" none
		expired int    // listed
		missed  int
		next    string
	}{
		{"nothing due yet", hourly, CatchUpOnce, "2026-11-29T00:00:00Z", "2026-11-29T00:30:00Z", "", 0, 0, "2026-11-29T01:00:00Z"},
		{"one due on time", hourly, CatchUpOnce, "2026-11-29T00:00:00Z", "2026-11-29T01:00:02Z", "2026-11-29T01:00:00Z", 0, 0, "2026-11-29T02:00:00Z"},
		{"exactly at the due time", hourly, CatchUpOnce, "2026-11-29T00:00:00Z", "2026-11-29T01:00:00Z", "2026-11-29T01:00:00Z", 0, 0, "2026-11-29T02:00:00Z"},
		{"already recorded", hourly, CatchUpOnce, "2026-11-29T01:00:00Z", "2026-11-29T01:30:00Z", "", 0, 0, "2026-11-29T02:00:00Z"},
		{"three missed, once runs the latest", hourly, CatchUpOnce, "2026-11-29T00:00:00Z", "2026-11-29T03:20:00Z", "2026-11-29T03:00:00Z", 2, 2, "2026-11-29T04:00:00Z"},
		{"skip runs one on time", hourly, CatchUpSkip, "2026-11-29T00:00:00Z", "2026-11-29T01:00:30Z", "2026-11-29T01:00:00Z", 0, 0, "2026-11-29T02:00:00Z"},
		{"skip expires late ones", hourly, CatchUpSkip, "2026-11-29T00:00:00Z", "2026-11-29T03:20:00Z", "", 3, 3, "2026-11-29T04:00:00Z"},
		{"a long outage lists the latest only", hourly, CatchUpOnce, "2026-11-29T00:00:00Z", "2026-12-09T00:30:00Z", "2026-12-09T00:00:00Z", maxExpired, 239, "2026-12-09T01:00:00Z"},
		{"cron missed twice", nightly, CatchUpOnce, "2026-11-27T03:00:00Z", "2026-11-29T05:00:00Z", "2026-11-29T03:00:00Z", 1, 1, "2026-11-30T03:00:00Z"},
		{"cron, long outage", nightly, CatchUpOnce, "2020-01-01T00:00:00Z", "2026-11-29T05:00:00Z", "2026-11-29T03:00:00Z", maxExpired, 365, "2026-11-30T03:00:00Z"},
		{"one-off due", Spec{At: at("2026-11-29T05:00:00Z"), Zone: "UTC"}, CatchUpOnce, "2026-11-29T00:00:00Z", "2026-11-29T06:00:00Z", "2026-11-29T05:00:00Z", 0, 0, ""},
		{"one-off missed under skip", Spec{At: at("2026-11-29T05:00:00Z"), Zone: "UTC"}, CatchUpSkip, "2026-11-29T00:00:00Z", "2026-11-29T06:00:00Z", "", 1, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.spec, tt.policy, at(tt.from), at(tt.now))
			if (tt.due == "") != d.Due.IsZero() || (tt.due != "" && !d.Due.Equal(at(tt.due))) {
				t.Errorf("Due = %s, want %q", d.Due, tt.due)
			}
			if len(d.Expire) != tt.expired || d.Missed != tt.missed {
				t.Errorf("Expire %d Missed %d, want %d %d", len(d.Expire), d.Missed, tt.expired, tt.missed)
			}
			for i := 1; i < len(d.Expire); i++ {
				if !d.Expire[i-1].Before(d.Expire[i]) {
					t.Errorf("Expire not oldest first: %v", d.Expire)
				}
			}
			if len(d.Expire) > 0 && !d.Due.IsZero() && !d.Expire[len(d.Expire)-1].Before(d.Due) {
				t.Errorf("an expired time %s is not before the due one %s", d.Expire[len(d.Expire)-1], d.Due)
			}
			if (tt.next == "") != d.Next.IsZero() || (tt.next != "" && !d.Next.Equal(at(tt.next))) {
				t.Errorf("Next = %s, want %q", d.Next, tt.next)
			}
		})
	}
}
