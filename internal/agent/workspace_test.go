package agent

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/verify"
)

// failingAfter answers with ok, then fails every request.
type failingAfter struct {
	ok []*llm.Response
	n  int
}

func (f *failingAfter) Name() string { return "stub" }
func (f *failingAfter) Stream(context.Context, llm.Request, func(llm.Delta)) (*llm.Response, error) {
	f.n++
	if f.n <= len(f.ok) {
		return f.ok[f.n-1], nil
	}
	return nil, &llm.Error{Provider: "stub", StatusCode: 404, Message: "no such model"}
}

// A run that fails before any progress leaves no branch and no worktree,
// and its record says why; one that made progress keeps both to resume.
func TestRunThatMadeNothingLeavesNothing(t *testing.T) {
	for _, c := range []struct {
		name     string
		ok       []*llm.Response
		kept     bool
		inReason string
	}{
		{name: "the first request fails", inReason: "the run made nothing, so its branch and worktree are removed"},
		{name: "a later request fails", ok: []*llm.Response{{Text: "looking"}}, kept: true, inReason: "ultra resume"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, dir := setup(t, &failingAfter{ok: c.ok}, stubVerifier{verify.StatusPass})
			o.ModelRetries = -1
			out, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default,
				Worktree: &WorktreeSpec{Dir: t.TempDir()}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != StatusFailed || !strings.Contains(out.Reason, "no such model") || !strings.Contains(out.Reason, c.inReason) {
				t.Fatalf("outcome %s: %s", out.Status, out.Reason)
			}
			row, err := o.Store.GetRun(context.Background(), out.RunID)
			if err != nil {
				t.Fatal(err)
			}
			ws := row.Workspace
			branches := gitIn(t, dir, "branch", "--list", "ultra/*")
			_, statErr := os.Stat(ws.Worktree)
			if kept := branches != "" && statErr == nil; kept != c.kept {
				t.Fatalf("branch %q, worktree %s (%v): kept %v, want %v", branches, ws.Worktree, statErr, kept, c.kept)
			}
			if (ws.Removed != "") == c.kept || row.Status != StatusFailed || !strings.Contains(row.Reason, "no such model") {
				t.Fatalf("record: status %s, reason %q, removed %q", row.Status, row.Reason, ws.Removed)
			}
			if !c.kept && !errors.Is(statErr, os.ErrNotExist) {
				t.Fatalf("the worktree: %v", statErr)
			}
		})
	}
}
