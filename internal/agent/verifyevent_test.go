package agent

import (
	"reflect"
	"testing"

	"github.com/ultra-dev/ultra/internal/gate"
)

// TestVerifyEventOneSentence: a decision that reuses an earlier one's
// verdict says its own sentence as the reason, the earlier reasons apart;
// a decision of its own keeps all its reasons.
func TestVerifyEventOneSentence(t *testing.T) {
	cases := []struct {
		name   string
		d      gate.Decision
		reason string
		reused []string
	}{
		{"own run", gate.Decision{Status: gate.Pass, Reasons: []string{"all 17 tests passed", "UNCONTAINED: no sandbox"}},
			"all 17 tests passed; UNCONTAINED: no sandbox", nil},
		{"reused", gate.Decision{Status: gate.Pass, CachedFrom: 2, Reasons: []string{"the code decision 2 judged (it passed)", "all 17 tests passed", "not run again: x"}},
			"the code decision 2 judged (it passed)", []string{"all 17 tests passed", "not run again: x"}},
		{"reused, one reason", gate.Decision{Status: gate.Pass, CachedFrom: 2, Reasons: []string{"the same tree as decision 2"}},
			"the same tree as decision 2", nil},
	}
	for _, c := range cases {
		e := verifyEvent(c.d, "gate.json")
		if e.Reason != c.reason || !reflect.DeepEqual(e.ReusedReasons, c.reused) {
			t.Errorf("%s: reason %q reused %q, want %q %q", c.name, e.Reason, e.ReusedReasons, c.reason, c.reused)
		}
	}
}
