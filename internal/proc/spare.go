package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Spares starts the next command of a sandbox before it is asked for:
// once a call ends, the same wrapper starts a shell in a sandbox of the
// same layout, environment and directory, which waits (having run
// nothing of the caller's) until the next call hands it its command. The
// call then waits only for its own program; the sandbox's cost is the
// same, paid while the caller does something else.
//
// A spare serves a call only if everything it was started with is what
// the call would be started with now: the wrapped command (the wrapper is
// asked again, so a layout that changed, such as a hidden path that
// appeared since, does not match), its Stamp (the identity of the paths
// it shows), the environment and the directory. Otherwise it is killed
// and the call starts as it would without it. A spare older than
// spareMaxAge is never used. Close kills the spare and stops new ones.
type Spares struct {
	mu       sync.Mutex
	spare    *spare
	starting bool
	closed   bool
	failed   int // spares in a row that never came up
	wg       sync.WaitGroup
}

// NewSpares returns an empty pool; the first spare is started after the
// first call that could have used one.
func NewSpares() *Spares { return &Spares{} }

// spareMaxAge bounds how long a spare waits: no longer than the longest
// call holds its own sandbox.
const spareMaxAge = 10 * time.Minute

// maxSparePayload bounds the command a spare is handed (the kernel's
// limit on one argument is 128 KiB): a longer one starts as before.
const maxSparePayload = 100 << 10

// spareShell is the program a spare waits in: bash, reading nothing at
// startup (-p: no BASH_ENV, no functions from the environment), running
// only builtins until it replaces itself with the call's command.
const spareShell = "bash"

// spareScript is what the waiting shell runs, given the descriptors of
// the command (a file), the go pipe and the ready pipe: it says it is
// ready, waits for one byte on the go pipe (end of file, when the spare
// is dropped, runs nothing), reads the command's arguments (separated by
// NUL) and executes them with the environment, directory and standard
// streams it was started with. Each descriptor is closed first.
func spareScript(file, goFD, ready int) string {
	return fmt.Sprintf(`printf r >&%[3]d; exec %[3]d>&-; read -r -n 1 -u %[2]d g; exec %[2]d<&-; [[ $g == g ]] || exit 125; `+
		`mapfile -t -d '' -u %[1]d a; exec %[1]d<&-; (( ${#a[@]} )) || exit 125; exec -- "${a[@]}"`, file, goFD, ready)
}

type spare struct {
	cmd     *exec.Cmd
	out     *held
	file    *os.File // the command's arguments go here
	goPipe  *os.File // one byte here runs them
	ready   chan struct{}
	up      bool // the shell reported ready (read after ready is closed)
	dropped atomic.Bool
	started time.Time
	w       Wrapped
	env     []string
	dir     string
}

// wrapSpare is the spare's command as wrap makes it now, with the extra
// descriptors numbered after the wrapper's own.
func wrapSpare(wrap Wrapper, dir string) (Wrapped, error) {
	w, err := wrapSpareAt(wrap, dir, 0)
	if err != nil || len(w.Files) == 0 {
		return w, err
	}
	closeAll(w.Files)
	closeAll(w.Pins)
	return wrapSpareAt(wrap, dir, len(w.Files))
}

// wrapSpareAt is the spare's command when the wrapper gives n files.
func wrapSpareAt(wrap Wrapper, dir string, n int) (Wrapped, error) {
	return wrap(spareShell, []string{"-p", "-c", spareScript(3+n, 4+n, 5+n)}, dir)
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// usable says whether opts could run from a spare: contained, with an
// environment of its own (nil would be ultra's, as it is when the command
// starts) and without input.
func (p *Spares) usable(opts Options) bool {
	return p != nil && opts.Wrap != nil && opts.Env != nil && opts.Stdin == nil
}

// take returns the spare for the command name args under opts, nil when
// there is none or it does not match (then it is killed). The spare's
// output goes to out from now on; start runs the command in it.
func (p *Spares) take(name string, args []string, opts Options) *spare {
	if !p.usable(opts) {
		return nil
	}
	p.mu.Lock()
	s := p.spare
	p.spare = nil
	p.mu.Unlock()
	if s == nil {
		return nil
	}
	if !s.matches(name, args, opts) {
		p.drop(s)
		return nil
	}
	return s
}

func (s *spare) matches(name string, args []string, opts Options) bool {
	select {
	case <-s.ready:
		if !s.up {
			return false
		}
	default: // still starting: it catches up faster than a new one
	}
	if time.Since(s.started) > spareMaxAge || opts.Dir != s.dir || !slices.Equal(opts.Env, s.env) ||
		len(payload(name, args)) > maxSparePayload || strings.ContainsRune(name, 0) {
		return false
	}
	for _, a := range args {
		if strings.ContainsRune(a, 0) {
			return false
		}
	}
	now, err := wrapSpareAt(opts.Wrap, opts.Dir, len(s.w.Files))
	if err != nil {
		return false
	}
	closeAll(now.Files)
	closeAll(now.Pins)
	return now.Name == s.w.Name && slices.Equal(now.Args, s.w.Args) && len(now.Files) == len(s.w.Files) && now.Stamp == s.w.Stamp
}

func payload(name string, args []string) []byte {
	var b []byte
	for _, a := range append([]string{name}, args...) {
		b = append(append(b, a...), 0)
	}
	return b
}

// start hands the spare its command; its output goes to out.
func (s *spare) start(name string, args []string, out io.Writer) error {
	s.out.attach(out)
	defer s.goPipe.Close()
	defer s.file.Close()
	defer closeAll(s.w.Pins)
	if _, err := s.file.WriteAt(payload(name, args), 0); err != nil {
		return err
	}
	_, err := s.goPipe.Write([]byte{'g'})
	return err
}

// prestart starts a spare for the next command like the one opts ran, in
// the background, unless there is one or the pool is closed.
func (p *Spares) prestart(opts Options) {
	if !p.usable(opts) {
		return
	}
	p.mu.Lock()
	if p.closed || p.spare != nil || p.starting || p.failed >= 3 {
		p.mu.Unlock()
		return
	}
	p.starting = true
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		s, err := newSpare(opts)
		p.mu.Lock()
		p.starting = false
		if err != nil {
			p.failed++
			p.mu.Unlock()
			return
		}
		if p.closed {
			p.mu.Unlock()
			p.drop(s)
			return
		}
		p.spare = s
		p.mu.Unlock()
		// A spare that never comes up is dropped at once.
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			<-s.ready
			if s.dropped.Load() {
				return // killed before it came up: no failure
			}
			p.mu.Lock()
			if s.up {
				p.failed = 0
			} else {
				p.failed++
			}
			if p.spare == s && !s.up {
				p.spare = nil
				p.mu.Unlock()
				p.drop(s)
				return
			}
			p.mu.Unlock()
		}()
	}()
}

func newSpare(opts Options) (*spare, error) {
	w, err := wrapSpare(opts.Wrap, opts.Dir)
	if err != nil {
		return nil, err
	}
	defer closeAll(w.Files)
	fail := func(err error) (*spare, error) {
		closeAll(w.Pins)
		return nil, err
	}
	file, err := os.CreateTemp("", "ultra-spare-*")
	if err != nil {
		return fail(err)
	}
	os.Remove(file.Name())
	goR, goW, err := os.Pipe()
	if err != nil {
		file.Close()
		return fail(err)
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		file.Close()
		goR.Close()
		goW.Close()
		return fail(err)
	}
	s := &spare{out: &held{}, file: file, goPipe: goW, ready: make(chan struct{}), w: w, env: opts.Env, dir: opts.Dir}
	cmd := command(w.Name, w.Args, append(slices.Clone(w.Files), file, goR, readyW), opts, s.out)
	s.cmd = cmd
	err = cmd.Start()
	goR.Close()
	readyW.Close()
	if err != nil {
		readyR.Close()
		file.Close()
		goW.Close()
		return fail(err)
	}
	s.started = time.Now()
	go func() {
		b := make([]byte, 1)
		n, _ := readyR.Read(b)
		readyR.Close()
		s.up = n == 1
		close(s.ready)
	}()
	return s, nil
}

// drop kills a spare that will not be used and waits for it.
func (p *Spares) drop(s *spare) {
	s.dropped.Store(true)
	s.goPipe.Close()
	s.file.Close()
	closeAll(s.w.Pins)
	killGroup(s.cmd.Process.Pid)
	_ = s.cmd.Wait()
	<-s.ready
}

// Ready waits until the pool has a spare that came up (true), or has none
// and is starting none (false).
func (p *Spares) Ready() bool {
	if p == nil {
		return false
	}
	for {
		p.mu.Lock()
		s, starting := p.spare, p.starting
		p.mu.Unlock()
		if s != nil {
			<-s.ready
			return s.up
		}
		if !starting {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// Close kills the spare and any being started, and starts no more; it
// returns once none of their processes is left.
func (p *Spares) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	s := p.spare
	p.spare = nil
	p.mu.Unlock()
	if s != nil {
		p.drop(s)
	}
	p.wg.Wait()
}

// held passes writes on once attached; until then it keeps them (at most
// 64 KiB: what bubblewrap says when it fails).
type held struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (h *held) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w != nil {
		return h.w.Write(b)
	}
	if len(h.buf) < 64<<10 {
		h.buf = append(h.buf, b...)
	}
	return len(b), nil
}

func (h *held) attach(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.buf) > 0 {
		_, _ = w.Write(h.buf)
		h.buf = nil
	}
	h.w = w
}
