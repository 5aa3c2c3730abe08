package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
	"golang.org/x/sys/unix"
)

// Mechanism names what contains the model's processes.
const (
	Bubblewrap = "bubblewrap"
	None       = "none"
)

// Status is what this machine offers: whether commands can be contained,
// by what, and if not, what is missing and how to get it.
type Status struct {
	Available bool   `json:"available"`
	Mechanism string `json:"mechanism"`         // Bubblewrap or None
	Path      string `json:"path,omitempty"`    // the bwrap program
	Version   string `json:"version,omitempty"` // its --version
	Problem   string `json:"problem,omitempty"` // why it is not available
	Hint      string `json:"hint,omitempty"`    // how to make it available
}

// Summary is one line for a person: "bubblewrap 0.8.0 (/usr/bin/bwrap)"
// or "none: <problem>".
func (s Status) Summary() string {
	if s.Available {
		return fmt.Sprintf("%s (%s, %s)", s.Mechanism, s.Version, s.Path)
	}
	return "none: " + s.Problem
}

// ProgramEnv names the environment variable that points ultra at another
// bwrap program ("" or unset: bwrap on PATH).
const ProgramEnv = "ULTRA_BWRAP"

var (
	probeOnce sync.Once
	probed    Status
)

// Probe finds out, once per process, whether commands can be contained
// here: bwrap must exist and must be able to make its namespaces (some
// systems forbid unprivileged user namespaces).
func Probe() Status {
	probeOnce.Do(func() { probed = probe() })
	return probed
}

func probe() Status {
	st := Status{Mechanism: None}
	if runtime.GOOS != "linux" {
		st.Problem = "ultra's sandbox needs Linux (bubblewrap); this is " + runtime.GOOS
		st.Hint = "Run ultra on Linux, or accept an uncontained run with --permission-profile trusted or unrestricted"
		return st
	}
	prog := os.Getenv(ProgramEnv)
	if prog == "" {
		prog = "bwrap"
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		st.Problem = fmt.Sprintf("bubblewrap (%s) is not installed", prog)
		st.Hint = "Install bubblewrap: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), pacman -S bubblewrap (Arch)."
		if os.Getenv(ProgramEnv) != "" {
			st.Problem = fmt.Sprintf("%s=%s names no program", ProgramEnv, prog)
			st.Hint = "Unset " + ProgramEnv + " or point it at bubblewrap's bwrap."
		}
		return st
	}
	st.Path = path
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, path, "--version").Output(); err == nil {
		st.Version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap "))
	}
	// A trial run with the same namespaces and mounts every command gets.
	trial := Policy{Dir: "/"}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append(trial.Args(), "true")...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		st.Problem = "bubblewrap cannot create its sandbox here: " + msg
		st.Hint = "Allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu an AppArmor profile for bwrap: kernel.apparmor_restrict_unprivileged_userns=0), or run ultra where they are allowed."
		return st
	}
	st.Available = true
	st.Mechanism = Bubblewrap
	return st
}

// ErrUnavailable is returned by a Wrapper when there is no sandbox: the
// command is not run uncontained in its place.
var ErrUnavailable = errors.New("no sandbox is available")

// Wrapper returns the proc.Wrapper that runs commands under p. Paths of
// mounts that do not exist are left out (bubblewrap refuses them), paths
// are resolved through symlinks so that what is hidden or shown is the
// real directory, and the working directory is the command's.
func (s Status) Wrapper(p Policy) proc.Wrapper {
	return func(name string, args []string, dir string) (proc.Wrapped, error) {
		if !s.Available {
			return proc.Wrapped{}, fmt.Errorf("%w: %s", ErrUnavailable, s.Problem)
		}
		q := Resolve(p)
		if dir != "" {
			q.Dir = real(dir)
		}
		var files []*os.File
		if q.NoUnixSockets {
			f, err := filterFile()
			if err != nil {
				return proc.Wrapped{}, err
			}
			files = append(files, f)
		}
		w := proc.Wrapped{Name: s.Path, Args: append(append(q.Args(), name), args...), Files: files}
		w.Stamp, w.Pins = stamp(q)
		return w, nil
	}
}

// stamp is the identity (device and inode) of every path q shows and of
// its working directory, and the files that pin them: a sandbox started
// earlier with the same arguments is the same sandbox only while these
// are the same files. A directory removed and made again under the same
// name (a hidden one, the work tree) is another: the earlier sandbox's
// mount on it is gone, and the new one shows through the read-only root.
// While the pins are open no other file can take an inode number.
func stamp(q Policy) (string, []*os.File) {
	var b strings.Builder
	var pins []*os.File
	id := func(p string) {
		f, err := os.OpenFile(p, unix.O_PATH, 0)
		if err != nil {
			b.WriteString("-;")
			return
		}
		pins = append(pins, f)
		fi, err := f.Stat()
		if err != nil {
			b.WriteString("-;")
			return
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			fmt.Fprintf(&b, "%d:%d;", st.Dev, st.Ino)
		}
	}
	for _, m := range q.Mounts {
		id(m.Path)
		if m.Kind == BindAt || m.Kind == ReadOnlyAt {
			id(m.Src)
		}
	}
	if q.Dir != "" {
		id(q.Dir)
	}
	return b.String(), pins
}

// Resolve returns p with its paths resolved through symlinks, mounts of
// missing paths dropped, and hidden files told from hidden directories.
// A mount that repeats the one before it once resolved (/var/run/user is
// /run/user) is dropped: bubblewrap would make it again for nothing, and
// every mount is a cost paid on each command.
func Resolve(p Policy) Policy {
	_, filter := unixSocketFilter()
	q := Policy{Network: p.Network, Dir: p.Dir, NoUnixSockets: p.NoUnixSockets && filter}
	if q.Dir != "" {
		q.Dir = real(q.Dir)
	}
	if p.Moved.Src != "" && p.Moved.Path != "" {
		q.Moved = Bind{Src: real(p.Moved.Src), Path: real(p.Moved.Path)}
	}
	for _, m := range p.Mounts {
		src := m.Path
		if m.Kind == BindAt || m.Kind == ReadOnlyAt {
			src = m.Src
		}
		fi, err := os.Stat(src)
		if err != nil {
			continue
		}
		if m.Kind == BindAt || m.Kind == ReadOnlyAt {
			m.Src = real(m.Src)
		} else {
			m.Path = real(m.Path)
		}
		m.File = !fi.IsDir()
		if n := len(q.Mounts); n > 0 && q.Mounts[n-1] == m {
			continue
		}
		q.Mounts = append(q.Mounts, m)
	}
	return q
}

func real(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
