// Package proc runs external commands in their own process group, with a
// timeout, a bounded in-memory capture and an optional full log on disk.
// On timeout or cancellation the whole group is killed, so nothing a
// command started outlives it.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Options control one command.
type Options struct {
	Dir        string        // working directory
	Env        []string      // full environment; nil means the current one
	Timeout    time.Duration // 0 means no timeout beyond ctx
	MaxCapture int           // bytes of output kept in memory (head and tail); default 64 KiB
	LogPath    string        // when set, the complete output is written here
	MaxLog     int64         // when > 0, the log keeps only the first MaxLog bytes
	// Tee, when set, sees the output as it is produced (a surface showing
	// a command at work); it must not block.
	Tee   io.Writer
	Stdin io.Reader // nil means no input
	// KeepGroup leaves processes the command put in the background alive
	// after it exits. By default they are killed with the group.
	KeepGroup bool
	// Wrap, when set, turns the command into the one that runs it
	// contained (package sandbox). An error from it means the command is
	// not started at all: nothing runs uncontained by accident.
	Wrap Wrapper
	// Spares, with Wrap and no Stdin, runs the command in a sandbox
	// started before the call when one matches, and starts the next one
	// when the command ends (see Spares).
	Spares *Spares
}

// Sandbox is how commands run contained: the wrapper that starts them in
// the sandbox and the environment they get there.
type Sandbox struct {
	Wrap Wrapper
	Env  func(base []string) []string // nil: the environment as it is
	// Spares, when set, starts each command's sandbox before its call
	// (see Spares); Close stops them.
	Spares *Spares
	// At is where the commands see a host path (nil: at the path
	// itself): a sandbox may show a directory at another place.
	At func(host string) string
}

// Close kills the sandbox's spare, if any; a nil s does nothing.
func (s *Sandbox) Close() {
	if s != nil {
		s.Spares.Close()
	}
}

// Inside is where the commands of s see host path p.
func (s *Sandbox) Inside(p string) string {
	if s == nil || s.At == nil {
		return p
	}
	return s.At(p)
}

// Apply makes opts run contained in s; a nil s leaves them as they are.
func (s *Sandbox) Apply(opts *Options) {
	if s == nil {
		return
	}
	opts.Wrap, opts.Spares = s.Wrap, s.Spares
	if s.Env != nil {
		if opts.Env == nil {
			opts.Env = os.Environ()
		}
		opts.Env = s.Env(opts.Env)
	}
}

// Wrapper turns a command (program, arguments, working directory) into the
// command that runs it inside a sandbox.
type Wrapper func(name string, args []string, dir string) (Wrapped, error)

// Wrapped is a command as a Wrapper made it: the program and arguments to
// start, and files it gets as descriptors 3, 4, … (closed once it started).
// Stamp is what else must be the same for a command started earlier under
// the same name, arguments and files to be this one (the identity of the
// paths a sandbox shows); Pins keep what it names from being replaced by
// other files with the same identity while such a command waits (never
// given to the command; closed with it).
type Wrapped struct {
	Name  string
	Args  []string
	Files []*os.File
	Stamp string
	Pins  []*os.File
}

// Result is what a finished command left behind.
type Result struct {
	ExitCode   int           // -1 when killed by a signal
	Output     string        // stdout and stderr interleaved, capped
	Truncated  bool          // Output omits part of the output
	TotalBytes int64         // bytes the command printed
	TimedOut   bool          // the timeout fired and the group was killed
	Canceled   bool          // ctx was cancelled and the group was killed
	Duration   time.Duration // wall time
	LogPath    string        // the full log, when Options.LogPath was set
	LogCut     bool          // the log holds only the first Options.MaxLog bytes
	Spare      bool          // it ran in a sandbox started before the call (Spares)
}

// Shell runs script with bash -c (sh when bash is missing).
func Shell(ctx context.Context, script string, opts Options) (Result, error) {
	sh := "bash"
	if _, err := exec.LookPath(sh); err != nil {
		sh = "sh"
	}
	return Run(ctx, sh, []string{"-c", script}, opts)
}

// Run runs name with args. The error is non-nil only when the command could
// not be started; a command that ran and failed reports it in Result.
func Run(ctx context.Context, name string, args []string, opts Options) (Result, error) {
	if opts.MaxCapture <= 0 {
		opts.MaxCapture = 64 << 10
	}
	capture := &Capture{Max: opts.MaxCapture}
	var sink io.Writer = capture
	var logFile *os.File
	var logged *capped
	if opts.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(opts.LogPath), 0o755); err != nil {
			return Result{}, fmt.Errorf("creating log directory: %w", err)
		}
		// Never through a symlink: the directory may be one a contained
		// command could write.
		f, err := os.OpenFile(opts.LogPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return Result{}, fmt.Errorf("creating log file: %w", err)
		}
		logFile = f
		defer logFile.Close()
		logged = &capped{w: logFile, left: opts.MaxLog, unlimited: opts.MaxLog <= 0}
		sink = io.MultiWriter(capture, logged)
	}
	if opts.Tee != nil {
		sink = io.MultiWriter(sink, opts.Tee)
	}
	out := &lockedWriter{w: sink}

	var (
		extra []*os.File
		cmd   *exec.Cmd
		start time.Time
	)
	sp := opts.Spares.take(name, args, opts)
	if sp != nil {
		cmd = sp.cmd
		start = time.Now()
		if err := sp.start(name, args, out); err != nil {
			opts.Spares.drop(sp)
			return Result{}, err
		}
	} else {
		if opts.Wrap != nil {
			w, err := opts.Wrap(name, args, opts.Dir)
			if err != nil {
				return Result{}, err
			}
			name, args, extra = w.Name, w.Args, w.Files
			defer closeAll(extra)
			closeAll(w.Pins)
		}
		cmd = command(name, args, extra, opts, out)
		start = time.Now()
		if err := cmd.Start(); err != nil {
			return Result{}, err
		}
	}
	// The next command's sandbox is made while the caller works.
	defer opts.Spares.prestart(opts)
	pgid := cmd.Process.Pid

	var timeout <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	res := Result{Spare: sp != nil}
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timeout:
		res.TimedOut = true
		killGroup(pgid)
		waitErr = <-done
	case <-ctx.Done():
		res.Canceled = true
		killGroup(pgid)
		waitErr = <-done
	}
	if !opts.KeepGroup {
		killGroup(pgid)
	}
	res.Duration = time.Since(start)
	res.ExitCode = exitCode(cmd, waitErr)
	res.Output, res.Truncated, res.TotalBytes = capture.Result()
	if logFile != nil {
		res.LogPath, res.LogCut = opts.LogPath, logged.cut
	}
	return res, nil
}

// command is the process that runs name with args and the extra files
// under opts, its output (both streams, one pipe) to out, in a process
// group of its own; a spare's is made here too.
func command(name string, args []string, extra []*os.File, opts Options, out io.Writer) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.ExtraFiles = extra
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	cmd.Stdout = out
	cmd.Stderr = out
	if opts.Stdin != nil {
		cmd.Stdin = opts.Stdin
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Grandchildren holding the pipes open must not hang Wait forever.
	cmd.WaitDelay = waitDelay
	return cmd
}

// waitDelay bounds how long a command's output is read after it exited:
// grandchildren holding the pipes open must not hang Wait forever.
const waitDelay = 2 * time.Second

// capped writes to w until left bytes are written and drops the rest,
// never failing the command that prints.
type capped struct {
	w         io.Writer
	left      int64
	unlimited bool
	cut       bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if !c.unlimited {
		if int64(len(p)) > c.left {
			p, c.cut = p[:c.left], true
		}
		c.left -= int64(len(p))
	}
	if len(p) > 0 {
		_, _ = c.w.Write(p)
	}
	return n, nil
}

// killGroup sends SIGKILL to every process of the group.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1
		}
		return cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Capture keeps the first and last halves of a stream, at most Max bytes
// (0: 64 KiB) with a marker where bytes were left out. It is safe for
// concurrent writers.
type Capture struct {
	Max   int
	mu    sync.Mutex
	head  []byte
	tail  []byte // the last bytes, in order
	total int64
}

func (c *Capture) limit() int {
	if c.Max <= 0 {
		return 64 << 10
	}
	return c.Max
}

func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	max := c.limit()
	half := max / 2
	rest := p
	if len(c.head) < half {
		n := min(half-len(c.head), len(rest))
		c.head = append(c.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		c.tail = append(c.tail, rest...)
		if len(c.tail) > max-half {
			c.tail = append(c.tail[:0:0], c.tail[len(c.tail)-(max-half):]...)
		}
	}
	return len(p), nil
}

// Result is what was kept, whether bytes were left out, and how many
// were written.
func (c *Capture) Result() (string, bool, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := int64(len(c.head) + len(c.tail))
	if kept >= c.total {
		return string(c.head) + string(c.tail), false, c.total
	}
	omitted := c.total - kept
	return fmt.Sprintf("%s\n… [%d bytes omitted] …\n%s", c.head, omitted, c.tail), true, c.total
}

// String is what was kept.
func (c *Capture) String() string {
	s, _, _ := c.Result()
	return s
}

// Len is how many bytes were written.
func (c *Capture) Len() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Command makes the process that runs name with args in dir, contained by
// s (a nil s: as they are), for a caller that starts it and talks to it
// over its standard streams itself (an MCP server): env is its
// environment before the sandbox's, it gets a process group of its own,
// and dies with ultra. done closes what the sandbox gave it; call it
// once the process has started (or will not be).
func (s *Sandbox) Command(name string, args []string, dir string, env []string) (cmd *exec.Cmd, done func(), err error) {
	var extra []*os.File
	if s != nil && s.Env != nil {
		env = s.Env(env)
	}
	if s != nil && s.Wrap != nil {
		w, err := s.Wrap(name, args, dir)
		if err != nil {
			return nil, nil, err
		}
		closeAll(w.Pins)
		name, args, extra = w.Name, w.Args, w.Files
	}
	cmd = exec.Command(name, args...)
	cmd.ExtraFiles = extra
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = waitDelay
	return cmd, func() { closeAll(extra) }, nil
}

// KillGroup kills the process group a Command started.
func KillGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		killGroup(cmd.Process.Pid)
	}
}
