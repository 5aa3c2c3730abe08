package main

import (
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
)

func TestCheckParallel(t *testing.T) {
	with := func(mode, control string) axes.Axes {
		a := axes.Default
		a.Mode, a.Control = mode, control
		return a
	}
	for _, c := range []struct {
		n    int
		a    axes.Axes
		want string // "" for none
	}{
		{0, with("build", "assisted"), ""},
		{2, with("build", "autonomous"), ""},
		{32, with("repair", "manual"), ""},
		{4, with("plan", "manual"), ""},
		{1, with("build", "autonomous"), "give 2 to 32 workers"},
		{33, with("build", "autonomous"), "give 2 to 32 workers"},
		{-2, with("build", "autonomous"), "give 2 to 32 workers"},
		{2, with("chat", "autonomous"), "a chat run builds nothing"},
		{2, with("build", "assisted"), "does not go with assisted control"},
	} {
		err := checkParallel(c.n, c.a)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("--parallel %d %v: %v, want %q", c.n, c.a, err, c.want)
		}
	}
}
