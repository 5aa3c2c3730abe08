package command

import (
	"strings"
	"testing"
)

// New checks what Parse checks: a form's fields go through the same
// rules as a typed line, and make the same argv.
func TestNewMatchesParse(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		flags map[string]string
		line  string // the typed line that means the same ("" when New must refuse)
		err   string
	}{
		{name: "approve", flags: map[string]string{"call": "call_3", "for-run": "true"}, line: "/approve --call call_3 --for-run"},
		{name: "approve", flags: map[string]string{"autonomous": "", "permission-profile": "TRUSTED"}, line: "/approve --autonomous --permission-profile trusted"},
		{name: "approve", flags: map[string]string{"for-run": "false"}, line: "/approve"},
		{name: "deny", args: []string{"not", "that"}, line: "/deny not that"},
		{name: "steer", flags: map[string]string{"mode": "plan", "scope": "now"}, line: "/steer --mode plan --scope now"},
		{name: "mode", args: []string{"review"}, flags: map[string]string{"--reason": "x"}, line: "/mode review --reason x"},
		{name: "diff", args: []string{"20261122"}, flags: map[string]string{"stat": "true"}, line: "/diff 20261122 --stat"},
		{name: "nope", err: "unknown command /nope"},
		{name: "approve", flags: map[string]string{"callz": "x"}, err: "unknown flag --callz"},
		{name: "approve", flags: map[string]string{"for-run": "yes"}, err: "--for-run is a switch"},
		{name: "approve", flags: map[string]string{"call": " "}, err: "--call needs a value"},
		{name: "steer", flags: map[string]string{"mode": "party"}, err: `"party" is not a work mode`},
		{name: "steer", err: "nothing to change"},
		{name: "approve", flags: map[string]string{"for-run": "", "read-only": ""}, err: "two answers"},
		{name: "deny", err: "give the reason"},
		{name: "status", args: []string{"-rf"}, err: "is not a run id"},
		{name: "status", args: []string{"a", "b"}, err: "unexpected argument"},
		{name: "doctor", args: []string{"explode"}, err: "not a doctor action"},
	}
	for _, c := range cases {
		inv, err := New(c.name, c.args, c.flags)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("New(%s %v %v) = %v, want error %q", c.name, c.args, c.flags, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("New(%s %v %v): %v", c.name, c.args, c.flags, err)
			continue
		}
		want, err := Parse(c.line)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.line, err)
		}
		a, errA := inv.CLIArgs("20261122-020815-a3f9c1")
		b, errB := want.CLIArgs("20261122-020815-a3f9c1")
		if errA != nil || errB != nil || strings.Join(a, "\x00") != strings.Join(b, "\x00") {
			t.Errorf("New(%s %v %v) runs %q (%v), the typed line %q runs %q (%v)", c.name, c.args, c.flags, a, errA, c.line, b, errB)
		}
	}
}
