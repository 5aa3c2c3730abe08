// Package schedule holds when a schedule dispatches a run and what a
// worker does about it: a schedule's spec (a cron expression, a period
// or one instant, always in a named time zone), its next due times, the
// states of one dispatch (queued, due, claimed, dispatched, consumed,
// expired) and their legal moves, and which missed dispatches a worker
// still runs under the schedule's catch-up policy. It is pure: the clock
// is passed in, and nothing is read or written.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Spec is when a schedule is due. Exactly one of Cron, Every and At is
// set. Times carry their zone: a cron expression is read in Zone, a
// period counts from Anchor (an instant), and At is an instant shown in
// Zone.
type Spec struct {
	Cron   string    `json:"cron,omitempty"`
	Every  Duration  `json:"every,omitempty"`
	Anchor time.Time `json:"anchor,omitzero"` // the instant an Every period counts from
	At     time.Time `json:"at,omitzero"`
	Zone   string    `json:"zone"` // an IANA zone name: Europe/Berlin, UTC
}

// Duration is a time amount stored as such ("6h0m0s"), not as a count.
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MinEvery is the shortest period a schedule may have.
const MinEvery = time.Second

// maxSteps bounds how many due times one look at a schedule walks: a
// cron schedule missed for years is judged by its latest misses only.
const maxSteps = 10000

// Input is what a person gives `ultra schedule add`, flag by flag.
type Input struct {
	Cron  string // --cron
	Every string // --every
	At    string // --at
	Zone  string // --zone (an IANA name)
}

// Parse checks in and makes the spec it names, now being the moment the
// schedule is added (an --every period counts from it; an --at time of
// day means its next occurrence). Errors name the flag.
func Parse(in Input, now time.Time) (Spec, error) {
	set := 0
	for _, v := range []string{in.Cron, in.Every, in.At} {
		if strings.TrimSpace(v) != "" {
			set++
		}
	}
	if set != 1 {
		return Spec{}, errors.New("give exactly one of --cron, --every and --at")
	}
	zone := CanonicalZone(strings.TrimSpace(in.Zone))
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "Local" {
		return Spec{}, fmt.Errorf("--zone %q: not a time zone name (e.g. UTC, Europe/Berlin, America/New_York)", in.Zone)
	}
	sp := Spec{Zone: zone}
	switch {
	case strings.TrimSpace(in.Cron) != "":
		expr := strings.Join(strings.Fields(in.Cron), " ")
		if strings.Contains(strings.ToUpper(expr), "TZ=") {
			return Spec{}, fmt.Errorf("--cron %q: give the zone with --zone, not in the expression", in.Cron)
		}
		sched, err := cron.ParseStandard(expr)
		if err != nil {
			return Spec{}, fmt.Errorf("--cron %q: %v (five fields: minute hour day-of-month month day-of-week, or @daily, @hourly, …)", in.Cron, err)
		}
		if sched.Next(now.In(loc)).IsZero() {
			return Spec{}, fmt.Errorf("--cron %q: no such time ever comes (the 30th of February?)", in.Cron)
		}
		sp.Cron = expr
	case strings.TrimSpace(in.Every) != "":
		d, err := time.ParseDuration(strings.TrimSpace(in.Every))
		if err != nil {
			return Spec{}, fmt.Errorf("--every %q: not a duration (30m, 6h, 24h)", in.Every)
		}
		if d < MinEvery {
			return Spec{}, fmt.Errorf("--every %q: the shortest period is %s", in.Every, MinEvery)
		}
		sp.Every = Duration(d.Truncate(time.Second))
		sp.Anchor = now.Truncate(time.Second).UTC()
	default:
		at, err := parseAt(strings.TrimSpace(in.At), loc, now)
		if err != nil {
			return Spec{}, err
		}
		if !at.After(now) {
			return Spec{}, fmt.Errorf("--at %q: %s is in the past", in.At, at.In(loc).Format(time.RFC3339))
		}
		sp.At = at.UTC()
	}
	return sp, nil
}

// atLayouts are the forms --at takes besides RFC 3339 (which carries its
// offset): a date and time, or a time of day, in the schedule's zone.
var atLayouts = []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02T15:04"}

func parseAt(s string, loc *time.Location, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.Truncate(time.Second), nil
	}
	for _, l := range atLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	for _, l := range []string{"15:04:05", "15:04"} {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			local := now.In(loc)
			at := time.Date(local.Year(), local.Month(), local.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc)
			if !at.After(now) {
				at = time.Date(local.Year(), local.Month(), local.Day()+1, t.Hour(), t.Minute(), t.Second(), 0, loc)
			}
			return at, nil
		}
	}
	return time.Time{}, fmt.Errorf("--at %q: not a time (2026-12-01T03:00:00+01:00, \"2026-12-01 03:00\" or 03:00 in --zone)", s)
}

// utcNames are the tz database's other names of UTC itself (Etc/UTC is
// where /etc/localtime points on many machines).
var utcNames = map[string]bool{"Etc/UTC": true, "Etc/UCT": true, "Etc/Universal": true, "Etc/Zulu": true, "UCT": true, "Universal": true, "Zulu": true}

// CanonicalZone is the one spelling ultra stores and shows of a zone
// name: UTC for every name of UTC, any other name as it is.
func CanonicalZone(name string) string {
	if utcNames[name] {
		return "UTC"
	}
	return name
}

// location is the spec's zone; a zone this machine does not know reads
// as UTC (Check reports it).
func (s Spec) location() *time.Location {
	if loc, err := time.LoadLocation(s.Zone); err == nil && s.Zone != "" {
		return loc
	}
	return time.UTC
}

// Check reports what is wrong with a stored spec.
func (s Spec) Check() error {
	n := 0
	if s.Cron != "" {
		n++
		if _, err := cron.ParseStandard(s.Cron); err != nil {
			return fmt.Errorf("cron %q: %v", s.Cron, err)
		}
	}
	if s.Every != 0 {
		n++
		if time.Duration(s.Every) < MinEvery || s.Anchor.IsZero() {
			return fmt.Errorf("every %s: shorter than %s or without an anchor", time.Duration(s.Every), MinEvery)
		}
	}
	if !s.At.IsZero() {
		n++
	}
	if n != 1 {
		return errors.New("a schedule needs exactly one of cron, every and at")
	}
	if _, err := time.LoadLocation(s.Zone); err != nil || s.Zone == "" {
		return fmt.Errorf("zone %q: unknown", s.Zone)
	}
	return nil
}

// Next is the first due time strictly after t; false when there is none
// (a one-off whose instant has passed).
func (s Spec) Next(t time.Time) (time.Time, bool) {
	switch {
	case s.Cron != "":
		sched, err := cron.ParseStandard(s.Cron)
		if err != nil {
			return time.Time{}, false
		}
		n := sched.Next(t.In(s.location()))
		return n.UTC(), !n.IsZero()
	case s.Every > 0:
		every := time.Duration(s.Every)
		if t.Before(s.Anchor) {
			return s.Anchor.Add(every).UTC(), true
		}
		k := t.Sub(s.Anchor)/every + 1
		return s.Anchor.Add(k * every).UTC(), true
	case !s.At.IsZero():
		if s.At.After(t) {
			return s.At.UTC(), true
		}
	}
	return time.Time{}, false
}

// String says when the schedule is due, for people.
func (s Spec) String() string {
	switch {
	case s.Cron != "":
		return fmt.Sprintf("cron %q %s", s.Cron, CanonicalZone(s.Zone))
	case s.Every > 0:
		return "every " + shortDuration(time.Duration(s.Every))
	case !s.At.IsZero():
		if s.At.Second() == 0 {
			return "at " + s.At.In(s.location()).Format("2006-01-02 15:04 MST")
		}
		return "at " + s.At.In(s.location()).Format("2006-01-02 15:04:05 MST")
	}
	return "never"
}

// shortDuration drops a duration's zero tails: 6h, 1h30m, 45s.
func shortDuration(d time.Duration) string {
	v := d.String()
	if strings.HasSuffix(v, "m0s") {
		v = strings.TrimSuffix(v, "0s")
	}
	if strings.HasSuffix(v, "h0m") {
		v = strings.TrimSuffix(v, "0m")
	}
	return v
}
