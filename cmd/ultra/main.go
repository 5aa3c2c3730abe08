// Command ultra is an autonomous coding agent for the terminal whose
// workflow is enforced by code: plan, build, verify, iterate, and only a
// passing verification completes a run.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gocache"
	"github.com/ultra-dev/ultra/internal/sandbox"
	"github.com/ultra-dev/ultra/internal/surface/streamjson"
)

// version is set at build time with -ldflags "-X main.version=…"; left
// as "dev", the module version the build recorded is shown instead.
var version = "dev"

// settleFlags gives the root its --version, which has no short form:
// -v is --verbose wherever it exists (the commands that print a run's
// log, and ultra -p), and nothing else. The version names the commit it
// was built from.
func settleFlags(root *cobra.Command) {
	bi, _ := debug.ReadBuildInfo()
	root.Version = versionString(version, bi)
	root.SetVersionTemplate("ultra {{.Version}}\n")
	root.Flags().Bool("version", false, "print ultra's version and the commit it was built from")
	flagErr := root.FlagErrorFunc()
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "shorthand flag: 'v'") {
			err = fmt.Errorf("%v: -v is --verbose, a flag of the commands that print a run's log (run, plan, resume, approve, chat, ultra -p); the version is ultra --version", err)
		}
		return flagErr(c, err)
	})
}

// versionString is the version ultra shows: the release set at build
// time, else the module version the Go toolchain recorded ("dev" for a
// build from a checkout), then the commit and whether the tree had
// uncommitted changes, e.g. "dev (commit 5463228, modified)".
func versionString(set string, bi *debug.BuildInfo) string {
	v := set
	if v == "" {
		v = "dev"
	}
	if bi == nil {
		return v
	}
	if v == "dev" {
		if mv := bi.Main.Version; mv != "" && mv != "(devel)" && !pseudoVersion(mv) {
			v = mv
		}
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if modified {
		return fmt.Sprintf("%s (commit %s, modified)", v, rev)
	}
	return fmt.Sprintf("%s (commit %s)", v, rev)
}

// pseudoVersion recognises the versions Go makes up for untagged commits
// (v0.0.0-20250102150405-abcdef123456, v1.2.4-0.2025…-abcdef123456,
// possibly with +dirty): they say no more than the commit does.
func pseudoVersion(v string) bool {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return false
	}
	for _, r := range v[i+1:] {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	rest := v[:i]
	j := strings.LastIndexAny(rest, "-.")
	if j < 0 || len(rest)-j-1 != 14 {
		return false
	}
	for _, r := range rest[j+1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == check.SupervisorArg {
		os.Exit(check.Supervise())
	}
	if len(os.Args) > 1 && os.Args[1] == gocache.Arg {
		// The Go build cache of ultra's sandboxes (GOCACHEPROG).
		os.Exit(gocache.Main())
	}
	if filepath.Base(os.Args[0]) == sandbox.ExecName {
		// go test's -exec wrapper inside the gate's sandbox.
		os.Exit(sandbox.RunExec(os.Args[1:]))
	}
	// A reader that goes away (ultra run … | head) must not kill a run
	// half-way: with SIGPIPE asked for, a write to a closed pipe fails
	// with EPIPE instead, and the output stops while the run goes on.
	// (Asked for, not ignored: the commands ultra starts keep the default.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
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
	settleFlags(root)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	if stdoutGone(err) {
		// The reader went away (ultra diff … | head): quietly, with the
		// status of a program SIGPIPE ended, as git's, never 0: what
		// failed to print (a verdict, say) may have been a failure.
		return exitBrokenPipe
	}
	code := agent.ExitError
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil || ee.err.Error() == "" {
			return code
		}
		err = ee.err
	} else {
		if isUsage(err) {
			code = agent.ExitUsage
		}
		if c, _, ferr := root.Find(args); ferr == nil {
			err = argsError(c, err)
		}
	}
	err = dbError(err)
	fmt.Fprintln(os.Stderr, "ultra:", event.Printable(err.Error()))
	failPrinting(root, args, err, code)
	return code
}

// failPrinting ends print mode's output with an error result when the
// command failed before its run wrote one: a reader of claude -p's JSON
// gets its result object whatever happened.
func failPrinting(root *cobra.Command, args []string, err error, code int) {
	if printing == nil {
		c, _, ferr := root.Find(args)
		if ferr != nil {
			return
		}
		f := c.Flags().Lookup("output-format")
		if f == nil || (f.Value.String() != string(streamjson.JSON) && f.Value.String() != string(streamjson.Stream)) {
			return
		}
		printing = streamjson.New(os.Stdout, streamjson.Options{Format: streamjson.Format(f.Value.String())})
	}
	printing.Fail(err.Error(), code)
}

// cobraArgs are cobra's words for a wrong number of arguments.
// (compiled when needed: every process ultra starts in its sandboxes
// runs this package's initialisation).
var cobraArgs = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(accepts (\d+) arg\(s\)|accepts at most (\d+) arg\(s\)|accepts between \d+ and \d+ arg\(s\)|requires at least (\d+) arg\(s\)), (only )?received (\d+)$`)
})

// argsError names what a command takes when it got the wrong number of
// arguments: "ultra land takes RUN_ID (none given); ultra runs lists
// the runs (see ultra land --help)".
func argsError(c *cobra.Command, err error) error {
	m := cobraArgs().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	takes := strings.TrimSpace(strings.TrimPrefix(c.Use, c.Name()))
	if takes == "" {
		takes = "no arguments"
	}
	got := m[len(m)-1] + " given"
	if got == "0 given" {
		got = "none given"
	}
	hint := ""
	if strings.Contains(takes, "RUN") {
		hint = "; ultra runs lists the runs"
	}
	return fmt.Errorf("%s takes %s (%s)%s (see %s --help)", c.CommandPath(), takes, got, hint, c.CommandPath())
}

// exitBrokenPipe is the shell's status of a program SIGPIPE ended
// (128 + 13).
const exitBrokenPipe = 141

// stdoutGone reports whether err comes of writing to a standard output
// whose reader has gone (a closed pipe), by ultra or by a program whose
// output it passes on (git diff, killed by SIGPIPE).
func stdoutGone(err error) bool {
	s := err.Error()
	if !strings.Contains(s, "/dev/stdout: broken pipe") && !strings.HasSuffix(s, "signal: broken pipe") {
		return false
	}
	fds := []unix.PollFd{{Fd: 1, Events: 0}}
	n, perr := unix.Poll(fds, 0)
	return perr == nil && n == 1 && fds[0].Revents&unix.POLLERR != 0
}
