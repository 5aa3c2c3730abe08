package axes

import (
	"strings"
	"testing"
)

func TestSetAndValidate(t *testing.T) {
	cases := []struct {
		axis, value string
		ok          bool
	}{
		{Mode, "build", true}, {Mode, "Research", true}, {Mode, "ship", false},
		{Control, "manual", true}, {Control, "auto", false},
		{Permission, "unrestricted", true}, {Permission, "root", false},
		{ModelMode, "deep", true}, {ModelMode, "slow", false},
		{Surface, "rpc", true}, {Surface, "gui", false},
		{"colour", "red", false},
	}
	for _, c := range cases {
		got, err := Default.Set(c.axis, c.value)
		if (err == nil) != c.ok {
			t.Errorf("Set(%s,%s) err=%v", c.axis, c.value, err)
			continue
		}
		if err == nil && got.Get(c.axis) != strings.ToLower(c.value) {
			t.Errorf("Set(%s,%s) gave %q", c.axis, c.value, got.Get(c.axis))
		}
		if err != nil && !strings.Contains(err.Error(), c.value) && !strings.Contains(err.Error(), c.axis) {
			t.Errorf("error must name the bad value: %v", err)
		}
	}
	if err := Default.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Axes{}).Validate(); err == nil {
		t.Fatal("empty axes must not validate")
	}
	up := Default
	up.Control = " Autonomous"
	if n, err := up.Normalize(); err != nil || n != Default || !n.AcceptsPlanWithoutPerson() {
		t.Fatalf("normalize: %+v %v", n, err)
	}
}

func TestDiffAndString(t *testing.T) {
	b, _ := Default.Set(Control, "manual")
	b, _ = b.Set(ModelMode, "deep")
	d := Diff(Default, b)
	if len(d) != 2 || d[0] != (Change{Control, "autonomous", "manual"}) || d[1] != (Change{ModelMode, "smart", "deep"}) {
		t.Fatalf("diff %+v", d)
	}
	if Default.String() != "build | autonomous | normal | smart | headless" {
		t.Fatal(Default.String())
	}
	if !Default.AcceptsPlanWithoutPerson() || b.AcceptsPlanWithoutPerson() {
		t.Fatal("plan acceptance")
	}
}

func TestSteerAxes(t *testing.T) {
	cur := Default
	cases := []struct {
		name string
		want map[string]string
		ok   bool
		err  string
		then Axes
	}{
		{"nothing", nil, false, "nothing to change", cur},
		{"one", map[string]string{ModelMode: "fast"}, true, "", Axes{Mode: "build", Control: "autonomous", Permission: "normal", ModelMode: "fast", Surface: "headless"}},
		{"several, any case", map[string]string{Control: " Manual", Permission: "RESTRICTED"}, true, "",
			Axes{Mode: "build", Control: "manual", Permission: "restricted", ModelMode: "smart", Surface: "headless"}},
		{"bad value", map[string]string{Control: "sometimes"}, false, "invalid control", cur},
		{"unknown axis", map[string]string{"colour": "red"}, false, "unknown axis", cur},
		{"surface is not steered", map[string]string{Surface: "tui"}, false, "surface", cur},
	}
	for _, c := range cases {
		got, err := cur.Steer(c.want)
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: err %v", c.name, err)
		}
		if got != c.then {
			t.Errorf("%s: axes %v, want %v", c.name, got, c.then)
		}
	}
}

func TestCheckScope(t *testing.T) {
	for _, s := range append([]string{""}, Scopes...) {
		if CheckScope(s) != nil {
			t.Errorf("scope %q refused", s)
		}
	}
	if err := CheckScope("later"); err == nil || !strings.Contains(err.Error(), "after-current-tool") {
		t.Errorf("unknown scope: %v", err)
	}
}
