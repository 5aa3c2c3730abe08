package agent

import (
	"fmt"
	"testing"
)

func TestGoTestFlags(t *testing.T) {
	for _, tc := range []struct {
		cmds []string
		want string
	}{
		{nil, "[[]]"},
		{[]string{"make test"}, "[[]]"},
		{[]string{"go test -race ./..."}, "[[-race]]"},
		{[]string{"go test -json ./...", "go vet ./..."}, "[[]]"},
		{[]string{"go test -race -tags integration ./...", "cd sub && go test -tags=x ./..."}, "[[-race -tags=integration] [-tags=x]]"},
	} {
		if got := fmt.Sprint(goTestFlags(tc.cmds)); got != tc.want {
			t.Errorf("goTestFlags(%q) = %s, want %s", tc.cmds, got, tc.want)
		}
	}
}
