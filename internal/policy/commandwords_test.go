package policy

import (
	"strings"
	"testing"
)

func TestSimpleCommands(t *testing.T) {
	for _, c := range []struct {
		line, want, opaque string
	}{
		{"go test ./... && go vet ./...", "go test ./...|go vet ./...", ""},
		{"ls | grep -c x > out.txt", "ls|grep -c x", ""},
		{"A=1 make test", "make test", ""},
		{"echo $(id)", "", "the word $(id) expands"},
		{"$(id)", "", "expands"},
		{"cat <(ls)", "", "the word <(ls) expands"},
		{"f() { rm x; }; f", "", "declares a function"},
		{"X=rm; $X y", "", "the word $X expands"},
		{"eval ls", "", "eval runs"},
		{"sudo bash -c 'rm x'", "", "bash is given code"},
		{"python3 -c 'print(1)'", "", "python3 is given code"},
		{"python3 script.py", "python3 script.py", ""},
		{"if true; then", "", "does not parse"},
	} {
		cmds, opaque := SimpleCommands(c.line)
		var got []string
		for _, w := range cmds {
			got = append(got, strings.Join(w, " "))
		}
		if c.opaque != "" {
			if !strings.Contains(opaque, c.opaque) {
				t.Errorf("%q: opaque %q, want %q", c.line, opaque, c.opaque)
			}
			continue
		}
		if opaque != "" || strings.Join(got, "|") != c.want {
			t.Errorf("%q: %q (opaque %q), want %q", c.line, got, opaque, c.want)
		}
	}
}
