package agent

import (
	"context"

	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/store"
)

// GraderSandbox is the sandbox of a skill eval's grader, the skill
// author's program that judges what a run made (it may build and run
// that code): it works in dir, a copy of the run's final tree, writable
// and thrown away; it sees shown read-only at their own paths (the case's
// hidden answers, the run's trace); it has no network and sees none of
// ultra's state, the person's checkout or their secrets, as the run's own
// commands do not. own holds its private home and /tmp. nil when this
// machine has no sandbox.
func GraderSandbox(ctx context.Context, o Options, dir, own string, shown ...string) (*proc.Sandbox, error) {
	row := &store.Run{ID: "grader", Workdir: dir}
	row.Axes.Mode, row.Axes.Permission = phase.Build, "normal"
	return runSandbox(ctx, o, row, nil, false, own, shown...)
}
