package main

import (
	"errors"
	"strings"
	"testing"
)

func TestArgsErrorNamesWhatTheCommandTakes(t *testing.T) {
	root := newRoot()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"land"}, "ultra land takes RUN_ID (none given); ultra runs lists the runs (see ultra land --help)"},
		{[]string{"status", "a", "b"}, "ultra status takes [RUN_ID] (2 given); ultra runs lists the runs"},
		{[]string{"goals", "criteria"}, "ultra goals criteria takes GOAL (none given) (see ultra goals criteria --help)"},
	} {
		root.SetArgs(tc.args)
		err := root.Execute()
		if err == nil || !isUsage(err) {
			t.Fatalf("%v: %v", tc.args, err)
		}
		c, _, _ := root.Find(tc.args)
		if got := argsError(c, err).Error(); !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
	if err := argsError(root, errors.New("other")); err.Error() != "other" {
		t.Errorf("other errors change: %v", err)
	}
}
