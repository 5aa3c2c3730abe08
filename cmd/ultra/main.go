// Command ultra is an autonomous coding agent for the terminal whose
// workflow is enforced by code: plan, build, verify, iterate, and only a
// passing verification completes a run.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/sandbox"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == check.SupervisorArg {
		os.Exit(check.Supervise())
	}
	if filepath.Base(os.Args[0]) == sandbox.ExecName {
		// go test's -exec wrapper inside the gate's sandbox.
		os.Exit(sandbox.RunExec(os.Args[1:]))
	}
	os.Exit(run(os.Args[1:]))
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, a ...any) error {
	return &exitError{code: agent.ExitUsage, err: fmt.Errorf(format, a...)}
}

func run(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(os.Stderr, "ultra:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "ultra:", err)
	if isUsage(err) {
		return agent.ExitUsage
	}
	return agent.ExitError
}
