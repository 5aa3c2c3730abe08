package schedule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParse(t *testing.T) {
	now := mustTime(t, "2026-11-29T10:00:30Z")
	tests := []struct {
		name string
		in   Input
		want Spec
		err  string
	}{
		{"cron in a zone", Input{Cron: "0 3 * * 1-5", Zone: "Europe/Berlin"}, Spec{Cron: "0 3 * * 1-5", Zone: "Europe/Berlin"}, ""},
		{"cron spaces folded", Input{Cron: " 0  3 * * * "}, Spec{Cron: "0 3 * * *", Zone: "UTC"}, ""},
		{"descriptor", Input{Cron: "@daily"}, Spec{Cron: "@daily", Zone: "UTC"}, ""},
		{"bad cron", Input{Cron: "0 3 * *"}, Spec{}, `--cron "0 3 * *"`},
		{"cron that never comes", Input{Cron: "0 0 30 2 *"}, Spec{}, "no such time ever comes"},
		{"zone inside cron", Input{Cron: "CRON_TZ=UTC 0 3 * * *"}, Spec{}, "--zone"},
		{"every", Input{Every: "6h"}, Spec{Every: Duration(6 * time.Hour), Anchor: mustTime(t, "2026-11-29T10:00:30Z"), Zone: "UTC"}, ""},
		{"every too short", Input{Every: "10ms"}, Spec{}, "shortest period"},
		{"every not a duration", Input{Every: "daily"}, Spec{}, `--every "daily"`},
		{"at with offset", Input{At: "2026-12-01T03:00:00+01:00", Zone: "Europe/Berlin"}, Spec{At: mustTime(t, "2026-12-01T02:00:00Z"), Zone: "Europe/Berlin"}, ""},
		{"at in the zone", Input{At: "2026-12-01 03:00", Zone: "America/New_York"}, Spec{At: mustTime(t, "2026-12-01T08:00:00Z"), Zone: "America/New_York"}, ""},
		{"time of day later today", Input{At: "11:15"}, Spec{At: mustTime(t, "2026-11-29T11:15:00Z"), Zone: "UTC"}, ""},
		{"time of day passed: tomorrow", Input{At: "09:00"}, Spec{At: mustTime(t, "2026-11-30T09:00:00Z"), Zone: "UTC"}, ""},
		{"at in the past", Input{At: "2020-01-01T00:00:00Z"}, Spec{}, "in the past"},
		{"at garbage", Input{At: "tomorrow"}, Spec{}, `--at "tomorrow"`},
		{"none", Input{}, Spec{}, "exactly one"},
		{"two", Input{Cron: "@daily", Every: "1h"}, Spec{}, "exactly one"},
		{"bad zone", Input{Every: "1h", Zone: "Mars/Olympus"}, Spec{}, `--zone "Mars/Olympus"`},
		{"Local is not a name", Input{Every: "1h", Zone: "Local"}, Spec{}, "--zone"},
		{"Etc/UTC is UTC", Input{Cron: "@daily", Zone: "Etc/UTC"}, Spec{Cron: "@daily", Zone: "UTC"}, ""},
		{"Zulu is UTC", Input{Every: "1h", Zone: "Zulu"}, Spec{Every: Duration(time.Hour), Anchor: mustTime(t, "2026-11-29T10:00:30Z"), Zone: "UTC"}, ""},
		{"GMT stays GMT", Input{Cron: "@daily", Zone: "Etc/GMT"}, Spec{Cron: "@daily", Zone: "Etc/GMT"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in, now)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one naming %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Cron != tt.want.Cron || got.Every != tt.want.Every || !got.Anchor.Equal(tt.want.Anchor) || !got.At.Equal(tt.want.At) || got.Zone != tt.want.Zone {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if err := got.Check(); err != nil {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}

func TestNext(t *testing.T) {
	anchor := mustTime(t, "2026-11-29T10:00:00Z")
	tests := []struct {
		name string
		spec Spec
		from string
		want string // "" means none
	}{
		{"cron in Berlin (winter, UTC+1)", Spec{Cron: "0 3 * * *", Zone: "Europe/Berlin"}, "2026-11-29T10:00:00Z", "2026-11-30T02:00:00Z"},
		{"cron in Berlin (summer, UTC+2)", Spec{Cron: "0 3 * * *", Zone: "Europe/Berlin"}, "2026-07-01T10:00:00Z", "2026-07-02T01:00:00Z"},
		{"weekdays skip the weekend", Spec{Cron: "0 3 * * 1-5", Zone: "UTC"}, "2026-11-27T04:00:00Z", "2026-11-30T03:00:00Z"},
		{"every before the anchor", Spec{Every: Duration(time.Hour), Anchor: anchor, Zone: "UTC"}, "2026-11-29T09:00:00Z", "2026-11-29T11:00:00Z"},
		{"every on a due time", Spec{Every: Duration(time.Hour), Anchor: anchor, Zone: "UTC"}, "2026-11-29T11:00:00Z", "2026-11-29T12:00:00Z"},
		{"every between", Spec{Every: Duration(time.Hour), Anchor: anchor, Zone: "UTC"}, "2026-11-29T11:59:59Z", "2026-11-29T12:00:00Z"},
		{"at ahead", Spec{At: mustTime(t, "2026-12-01T00:00:00Z"), Zone: "UTC"}, "2026-11-29T00:00:00Z", "2026-12-01T00:00:00Z"},
		{"at passed", Spec{At: mustTime(t, "2026-12-01T00:00:00Z"), Zone: "UTC"}, "2026-12-01T00:00:00Z", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.spec.Next(mustTime(t, tt.from))
			if tt.want == "" {
				if ok {
					t.Fatalf("got %s, want none", got)
				}
				return
			}
			if !ok || !got.Equal(mustTime(t, tt.want)) {
				t.Fatalf("got %s %v, want %s", got, ok, tt.want)
			}
		})
	}
}

func TestSpecStoredAsSuch(t *testing.T) {
	sp := Spec{Every: Duration(90 * time.Minute), Anchor: mustTime(t, "2026-11-29T10:00:00Z"), Zone: "Europe/Berlin"}
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"every":"1h30m0s"`) || !strings.Contains(string(b), `"anchor":"2026-11-29T10:00:00Z"`) {
		t.Fatalf("stored as %s", b)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil || back.Every != sp.Every || !back.Anchor.Equal(sp.Anchor) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if got := sp.String(); got != "every 1h30m" {
		t.Fatalf("String = %q", got)
	}
}

func TestCheckRefusesBrokenSpecs(t *testing.T) {
	for _, sp := range []Spec{
		{Zone: "UTC"},
		{Cron: "nope", Zone: "UTC"},
		{Every: Duration(time.Hour), Zone: "UTC"},
		{Cron: "@daily", Every: Duration(time.Hour), Anchor: time.Now(), Zone: "UTC"},
		{Cron: "@daily", Zone: "Nowhere/Atall"},
	} {
		if err := sp.Check(); err == nil {
			t.Errorf("Check(%+v) = nil", sp)
		}
	}
}

// Every name of UTC is shown as UTC, even in a spec stored before
// names were made one.
func TestSpecStringOneUTC(t *testing.T) {
	for _, z := range []string{"UTC", "Etc/UTC", "Etc/Universal", "UCT"} {
		if got := (Spec{Cron: "@daily", Zone: z}).String(); got != `cron "@daily" UTC` {
			t.Errorf("zone %s: %s", z, got)
		}
	}
}
