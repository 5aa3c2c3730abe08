package phase

import (
	"strings"
	"testing"
)

func TestBinding(t *testing.T) {
	retries := func(used, max int) Limit { return Limit{What: "retries", Used: used, Max: max} }
	cycles := func(used, max int) Limit { return Limit{What: "cycles of goal G001", Used: used, Max: max} }
	for _, c := range []struct {
		name string
		ls   []Limit
		want string
	}{
		{"the goal's cap comes first", []Limit{retries(2, 10), cycles(2, 5)}, "2 of 5 cycles of goal G001 used"},
		{"the retries come first", []Limit{retries(8, 10), cycles(2, 5)}, "8 of 10 retries used"},
		{"equal: the first", []Limit{retries(7, 10), cycles(2, 5)}, "7 of 10 retries used"},
		{"no goal", []Limit{retries(2, 10), {}}, "2 of 10 retries used"},
		{"the cleanup's turns come first", []Limit{retries(2, 10), CleanupLimit(3)}, "3 of 8 cleanup turns used"},
		{"a limit used past its max has none left", []Limit{retries(1, 10), cycles(6, 5)}, "6 of 5 cycles of goal G001 used"},
	} {
		if got := Binding(c.ls...).String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The reminder states the limit that ends the run first.
func TestReminderStatesTheBindingLimit(t *testing.T) {
	s := New(Budgets{MaxRetries: 10})
	s.Used.FailedVerifies = 2
	for _, c := range []struct {
		name   string
		limits []Limit
		want   string
	}{
		{"without goals", nil, "retries left: 8 of 10"},
		{"a goal's cycles", []Limit{{What: "cycles of goal G001", Used: 2, Max: 5}}, "cycles of goal G001 left: 3 of 5"},
		{"a goal with cycles to spare", []Limit{{What: "cycles of goal G001", Used: 0, Max: 20}}, "retries left: 8 of 10"},
	} {
		if r := s.ReminderWith(s.Tools(), "", c.limits...); !strings.Contains(r, c.want) {
			t.Errorf("%s: the reminder lacks %q:\n%s", c.name, c.want, r)
		}
	}
}
