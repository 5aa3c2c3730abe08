package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/skills"
	"github.com/ultra-dev/ultra/internal/store"
)

// runOptions are the options every command that starts or continues a
// run builds the same way: the run flags' provider (the run's own as the
// fallback, for row), checked before anything is made when preflight is
// set; the surfaces on out and extra sinks; the store; doctor's health
// check for repairs.
func runOptions(cmd *cobra.Command, f *runFlags, p *project, st *store.Store, out io.Writer, row *store.Run, check bool, extra ...event.Sink) (agent.Options, error) {
	if err := f.checkFormat(); err != nil {
		return agent.Options{}, err
	}
	// Print mode's renderer first: a failure from here on is its result.
	r, log := f.printRenderer(cmd, p, out)
	if r != nil {
		extra, out = append(extra, r), log
	}
	if err := f.validate(); err != nil {
		return agent.Options{}, err
	}
	var fb [3]string
	if row != nil {
		fb = [3]string{row.Provider, row.Model, row.BaseURL}
	}
	pc, err := f.resolveProvider(p, fb[0], fb[1], fb[2])
	if err != nil {
		return agent.Options{}, err
	}
	sinks, err := f.sinks(out)
	if err != nil {
		return agent.Options{}, err
	}
	if check {
		if err := preflight(cmd.Context(), pc, p, cmd.ErrOrStderr()); err != nil {
			return agent.Options{}, err
		}
	}
	more, err := readMCPConfigs(f.mcpConfig)
	if err != nil {
		return agent.Options{}, &exitError{code: agent.ExitUsage, err: err}
	}
	servers, err := p.mcpServers(more...)
	if err != nil {
		return agent.Options{}, &exitError{code: agent.ExitUsage, err: err}
	}
	o := f.options(p, pc, append(sinks, extra...))
	o.MCP, o.Version = servers, cmd.Root().Version
	if o.Rules, o.Hooks, err = p.settings(); err != nil {
		return agent.Options{}, &exitError{code: agent.ExitUsage, err: err}
	}
	var probs []skills.Problem
	o.Skills, probs = p.skills()
	for _, pr := range probs {
		fmt.Fprintf(cmd.ErrOrStderr(), "ultra: a skill is skipped: %s\n", pr.Error())
	}
	o.Skills, o.Hide = skillsOfRun(o.Skills)
	o.Store = st
	o.OtherStates = func() []string { return otherStates(p.Root) }
	// The TUI runs its commands with ULTRA_SURFACE=tui: the runs it
	// starts record the surface a person follows them on.
	if s := os.Getenv("ULTRA_SURFACE"); slices.Contains(axes.Values[axes.Surface], s) {
		o.Surface = s
	}
	o.Health = healthProblems(p, st)
	return o, nil
}

// launch is how every command that starts a run starts it (runOptions,
// then an interruptible context). prepare, when set, completes the spec
// with the options (say, a worktree whose setup uses the verify timeout)
// or refuses to start.
func launch(cmd *cobra.Command, f *runFlags, p *project, st *store.Store, out io.Writer, spec agent.Spec,
	prepare func(*agent.Options, *agent.Spec) error, extra ...event.Sink) (*agent.Outcome, error) {
	o, err := runOptions(cmd, f, p, st, out, nil, true, extra...)
	if err != nil {
		return nil, err
	}
	defer closeSinks(o)
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

// closeSinks ends the surfaces that draw while a run goes on (the live
// line of a terminal log), whatever way the run ended.
func closeSinks(o agent.Options) {
	for _, s := range o.Sinks {
		if c, ok := s.(interface{ Close() }); ok {
			c.Close()
		}
	}
}
