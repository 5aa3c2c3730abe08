package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/verify"
)

// A task that describes a web page is not proven by command criteria
// alone: the proposal is refused with the words found, nothing is
// accepted and no goal exists.
func TestBriefSurfaceRefused(t *testing.T) {
	p := scriptedStub([]*llm.Response{callsOf(tc("goals", proposal(false, "happy path", "edge case", "still there")))})
	o, dir := setup(t, p, stubVerifier{verify.StatusPass})
	o.MaxIdle = 1
	var runs []string
	o.Checker = baseAware(&runs)
	out, err := Start(context.Background(), o, Spec{Task: "make the landing page show the total", Repo: dir, Workdir: dir, Axes: axes.Default})
	if err != nil {
		t.Fatal(err)
	}
	res := toolOutputs(p.reqs)[0]
	if !strings.Contains(res, `the brief describes a web page ("landing page"), but none of the criteria that show the change`) ||
		!strings.Contains(res, `surface "web" and channel "browser"`) {
		t.Fatalf("goals result:\n%s", res)
	}
	if _, err := os.Stat(filepath.Join(dir, goal.RunRecords(out.RunID).Goals())); err == nil || out.Status == StatusComplete {
		t.Fatalf("the plan was accepted (%s, goals.json: %v)", out.Status, err)
	}
}

// The final reviewer is shown each goal's surfaces, and what the brief
// describes.
func TestReviewerSeesSurfaces(t *testing.T) {
	r := reviewerRequest(t, proposal(false, "happy path", "edge case", "still there"), "fix calc")
	brief := r.Messages[0].Content
	for _, want := range []string{"surfaces: cli through command (3)", "[happy, cli, command, pass]", "proven only by command output"} {
		if !strings.Contains(brief+r.System, want) {
			t.Fatalf("the reviewer was not shown %q:\n%s", want, brief)
		}
	}
}
