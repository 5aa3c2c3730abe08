package policy

import "testing"

func TestToolPermitted(t *testing.T) {
	for _, tc := range []struct {
		profile, tool string
		ok            bool
	}{
		{"restricted", "read", true}, {"restricted", "bash", true}, {"restricted", "write", false}, {"restricted", "edit", false},
		{"normal", "write", true}, {"normal", "edit", true}, {"trusted", "write", true}, {"unrestricted", "edit", true},
		{"bogus", "read", false},
	} {
		if ok, why := ToolPermitted(tc.profile, tc.tool); ok != tc.ok || (!ok && why == "") {
			t.Errorf("%s/%s: %v %q", tc.profile, tc.tool, ok, why)
		}
	}
	for name, p := range Profiles {
		if p.NeedsSandbox == p.Network {
			t.Errorf("%s: a profile with the network may run uncontained, one without may not", name)
		}
	}
	if p, err := ProfileOf("x"); err == nil || p.WriteWork || p.Network {
		t.Fatal("an unknown profile must fail closed")
	}
}
