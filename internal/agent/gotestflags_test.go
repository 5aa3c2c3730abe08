package agent

import (
	"fmt"
	"strings"
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

func TestGoWarmArgs(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "list -e -export -test -deps -f {{with .Error}}{{$.ImportPath}}: {{.}}{{end}} ./..."},
		{[]string{"-race", "-tags=x"}, "list -e -export -test -deps -f {{with .Error}}{{$.ImportPath}}: {{.}}{{end}} -race -tags=x ./..."},
		// go list cannot build coverage-instrumented test packages.
		{[]string{"-cover"}, "test -exec=true -count=1 -cover ./..."},
		{[]string{"-race", "-covermode=atomic"}, "test -exec=true -count=1 -race -covermode=atomic ./..."},
	} {
		if got := strings.Join(goWarmArgs(tc.flags), " "); got != tc.want {
			t.Errorf("goWarmArgs(%q) = %s, want %s", tc.flags, got, tc.want)
		}
	}
}
