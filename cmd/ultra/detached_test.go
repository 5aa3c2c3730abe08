package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/agent"
)

// execRoot runs ultra's root command with args, its output in a buffer.
func execRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// The run flags a worker's run cannot take are not in the help of the
// commands that make such runs, which say that they refuse them; each is
// refused naming the flag, with exit 2, before anything is opened.
func TestDetachedFlagsHiddenAndRefused(t *testing.T) {
	t.Setenv("ULTRA_DB", "")
	dir := t.TempDir() // not a repository: a refusal comes first
	refused := []struct{ flag, arg string }{
		{"print", "-p"}, {"output", "--output=jsonl"}, {"output-format", "--output-format=json"},
		{"verbose", "-v"}, {"quiet", "-q"}, {"include-uncommitted", "--include-uncommitted"}, {"no-wait", "--no-wait"},
	}
	for _, c := range []struct {
		cmd  []string
		what string
		rest []string
	}{
		{[]string{"schedule", "add"}, "a schedule", []string{"--every", "1h"}},
		{[]string{"submit"}, "ultra submit", []string{"--repo", "file:///nowhere"}},
	} {
		help, err := execRoot(t, append(c.cmd, "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(help, "refused by name") {
			t.Errorf("ultra %s --help does not say which flags it refuses", strings.Join(c.cmd, " "))
		}
		_, flags, _ := strings.Cut(help, "\nFlags:\n")
		for _, r := range refused {
			if strings.Contains(flags, "--"+r.flag+" ") {
				t.Errorf("ultra %s --help lists --%s, which it refuses", strings.Join(c.cmd, " "), r.flag)
			}
			args := append(append(append([]string{"-C", dir}, c.cmd...), c.rest...), r.arg, "do it")
			_, err := execRoot(t, args...)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != agent.ExitUsage || !strings.Contains(err.Error(), "--"+r.flag+" is not for "+c.what) {
				t.Errorf("ultra %s: %v; want exit 2 naming --%s", strings.Join(args, " "), err, r.flag)
			}
		}
	}
}

// A flag a command would ignore is refused: --cache is a fleet worker's.
func TestWorkerCacheNeedsDB(t *testing.T) {
	t.Setenv("ULTRA_DB", "")
	_, err := execRoot(t, "-C", t.TempDir(), "worker", "--cache", t.TempDir())
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != agent.ExitUsage || !strings.Contains(err.Error(), "--cache is for a fleet's worker") {
		t.Fatalf("worker --cache without --db: %v", err)
	}
}

// ultra worker's help says what --db makes of it.
func TestWorkerHelpNamesTheFleet(t *testing.T) {
	help, err := execRoot(t, "worker", "--help")
	if err != nil || !strings.Contains(help, "it is a fleet's worker instead") || !strings.Contains(help, "needs no\nrepository") {
		t.Fatalf("%v\n%s", err, help)
	}
}
