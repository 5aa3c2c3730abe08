package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
)

// launch is how every command that starts a run starts it: the run
// flags' provider (checked before anything is made), the surfaces on out
// and extra sinks, the store, doctor's health check for repairs, and an
// interruptible context. prepare, when set, completes the spec with the
// options (say, a worktree whose setup uses the verify timeout) or
// refuses to start.
func launch(cmd *cobra.Command, f *runFlags, p *project, st *store.Store, out io.Writer, spec agent.Spec,
	prepare func(*agent.Options, *agent.Spec) error, extra ...event.Sink) (*agent.Outcome, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	pc, err := f.resolveProvider(p, "", "", "")
	if err != nil {
		return nil, err
	}
	sinks, err := f.sinks(out)
	if err != nil {
		return nil, err
	}
	if err := preflight(cmd.Context(), pc, p); err != nil {
		return nil, err
	}
	o := f.options(p, pc, append(sinks, extra...))
	o.Store = st
	o.Health = healthProblems(p, st)
	if prepare != nil {
		if err := prepare(&o, &spec); err != nil {
			return nil, err
		}
	}
	// ultra tasks --all-repos lists the repositories where runs started.
	rememberRepo(p.Root)
	ctx, stop := interruptible()
	defer stop()
	res, err := agent.Start(ctx, o, spec)
	if agent.IsPreflight(err) {
		return nil, usageErr("%v", err)
	}
	return res, err
}
