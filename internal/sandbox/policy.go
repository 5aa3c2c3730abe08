// Package sandbox contains the processes the model causes: each bash call
// and every test process the gate runs. On Linux it uses bubblewrap
// (user, PID, IPC, UTS and, unless the profile allows the network, network
// namespaces; a read-only view of the file system with chosen paths
// writable or hidden; no capabilities). Whatever runs inside cannot see
// ultra's process or environment, cannot read ultra's state, keys or
// configuration, cannot write outside the paths it is given, and does not
// outlive its call: when the command ends, its PID namespace ends with it.
//
// The rules live in the mounts, not in any reading of command lines: a
// script, an interpreter, a symlink or a computed path meets the same
// read-only or empty directory a plain command does.
//
// Policy (this file) is pure: a layout of paths rendered into bubblewrap's
// arguments. Probe and Wrapper (bwrap.go) are the I/O edge.
package sandbox

import (
	"path/filepath"
	"strings"
)

// Kind is what a mount does to a path inside the sandbox.
type Kind int

const (
	// ReadOnly shows the host path read-only at the same place.
	ReadOnly Kind = iota
	// Writable shows the host path writable at the same place.
	Writable
	// Hidden replaces a directory with an empty one (a file with an empty
	// file): nothing of it can be read, and nothing written there lasts.
	Hidden
	// BindAt shows the host path Src, writable, at Path.
	BindAt
	// ReadOnlyAt shows the host path Src, read-only, at Path.
	ReadOnlyAt
)

// Mount is one step of the sandbox's view of the file system. Mounts apply
// in order: a later one covers what an earlier one showed.
type Mount struct {
	Kind Kind
	Path string // where, inside the sandbox
	Src  string // BindAt and ReadOnlyAt: the host path shown at Path
	File bool   // the path is a file, not a directory
}

// Policy is one sandbox: its mounts (on top of a read-only root, a minimal
// /dev and a /proc of its own) and whether it has the network.
type Policy struct {
	Mounts  []Mount
	Network bool
	// Dir is the working directory: a host path, shown inside the
	// sandbox where the mounts show it (see Moved).
	Dir string
	// Moved is a host directory (Src) the sandbox shows at another place
	// (Path) instead of its own: every mount and working directory below
	// Src is rendered at the same place below Path (Args). The paths of
	// Mounts and Dir stay host paths, so that Resolve can check and
	// resolve them.
	Moved Bind
	// NoUnixSockets: the command cannot create Unix domain sockets (a
	// seccomp filter, given to bubblewrap as descriptor 3), so no socket
	// file it can see connects it to a service outside; socketpair(2)
	// still works.
	NoUnixSockets bool
}

// Args renders the policy as bubblewrap's arguments, up to and including
// the "--" that precedes the command.
func (p Policy) Args() []string {
	a := []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	}
	if !p.Network {
		a = append(a, "--unshare-net")
	}
	a = append(a,
		// The command cannot outlive ultra, cannot reach ultra's terminal
		// (no TIOCSTI), and has no capabilities, even as root.
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
	)
	for _, m := range p.Mounts {
		at := p.Inside(m.Path)
		switch m.Kind {
		case ReadOnly:
			a = append(a, "--ro-bind", m.Path, at)
		case Writable:
			a = append(a, "--bind", m.Path, at)
		case BindAt:
			a = append(a, "--bind", m.Src, at)
		case ReadOnlyAt:
			a = append(a, "--ro-bind", m.Src, at)
		case Hidden:
			if m.File {
				a = append(a, "--ro-bind", "/dev/null", at)
			} else {
				a = append(a, "--tmpfs", at)
			}
		}
	}
	// Hidden directories are read-only too: a write there fails, instead
	// of seeming to work and vanishing (the mounts shown inside them stay
	// as they are).
	for _, m := range p.Mounts {
		if m.Kind == Hidden && !m.File {
			a = append(a, "--remount-ro", p.Inside(m.Path))
		}
	}
	if p.NoUnixSockets {
		a = append(a, "--seccomp", "3")
	}
	if p.Dir != "" {
		a = append(a, "--chdir", p.Inside(p.Dir))
	}
	return append(a, "--")
}

// Inside is where a host path is seen inside the sandbox: below
// Moved.Path when it lies below Moved.Src, else at itself.
func (p Policy) Inside(host string) string {
	return moved(p.Moved, host)
}

// moved is host below m.Path when it lies below m.Src (host itself
// when m moves nothing).
func moved(m Bind, host string) string {
	if m.Src == "" || m.Path == "" || !within(m.Src, host) {
		return host
	}
	rel, _ := filepath.Rel(m.Src, host)
	return filepath.Join(m.Path, rel)
}

// Layout is what a sandbox for ultra's runs needs to know: which tree the
// command works on, what else it may write, and what it must not see.
type Layout struct {
	// Work is the tree the command works on (the run's worktree, or the
	// gate's checkout): writable unless ReadOnlyWork.
	Work         string
	ReadOnlyWork bool
	// WorkAt is where the sandbox shows Work ("": at its own path), so
	// that every sandbox of a checkout sees it at one path whatever host
	// directory holds it (the go command keys what it compiles by the
	// package's directory). What the layout names below Work (Dir,
	// Protect, Writable, Deps, Hide, GitDir) is shown at the same place
	// below WorkAt, and so is the working directory a Wrapper is given
	// (Policy.Moved); the host path of Work is not shown. WorkAt must be
	// an empty directory of the host, or lie in a hidden one: the root
	// is the host's, read-only, and WorkAt is shown after the hidden
	// paths.
	WorkAt string
	// Protect are paths inside Work shown read-only (the worktree's .git
	// file, .ultra/, dependency directories made by ultra's setup).
	Protect []string
	// Writable are other directories the command may write (the gate's
	// report directory).
	Writable []string
	// Deps are dependency directories (node_modules, .venv) shown
	// read-only inside the work tree: the gate's checkout has none of its
	// own.
	Deps []Bind
	// GitDir is the repository's git directory: readable (git log, diff,
	// status work), never writable (no object, ref, config or hook of the
	// repository changes from inside).
	GitDir string
	// Hide are ultra's state and configuration and the person's secrets:
	// directories become empty, files empty.
	Hide []string
	// Home and Tmp are the command's private home and /tmp (host
	// directories, writable): configuration the command writes (go env -w,
	// git config --global, tool caches) stays there.
	Home, Tmp string
	Network   bool
	// NoUnixSockets: see Policy.NoUnixSockets.
	NoUnixSockets bool
	Dir           string // working directory (default Work)
}

// Policy orders the layout's mounts so that each later one wins: /tmp is
// replaced first, then secrets and state are hidden, then the git
// directory, home, the work tree (at WorkAt, which may lie in a hidden
// directory) and the writable directories are shown again (they may lie
// inside hidden ones), and last what lies inside the work tree is
// covered again: the git directory read-only, protected paths
// read-only, hidden paths hidden.
func (l Layout) Policy() Policy {
	var ms []Mount
	if l.Tmp != "" {
		ms = append(ms, Mount{Kind: BindAt, Src: l.Tmp, Path: "/tmp"})
	}
	for _, h := range l.Hide {
		if l.Tmp != "" && within("/tmp", h) {
			continue // already gone with the host's /tmp
		}
		if coveredBy(l.Hide, h) {
			continue // gone with the hidden directory it lies in
		}
		if l.moves(h) {
			continue // hidden again once the work tree is shown
		}
		ms = append(ms, Mount{Kind: Hidden, Path: h})
	}
	if l.GitDir != "" && !l.moves(l.GitDir) {
		ms = append(ms, Mount{Kind: ReadOnly, Path: l.GitDir})
		// What is hidden inside the git directory (ultra's lock) stays so.
		for _, h := range l.Hide {
			if within(l.GitDir, h) {
				ms = append(ms, Mount{Kind: Hidden, Path: h})
			}
		}
	}
	if l.Home != "" {
		ms = append(ms, Mount{Kind: Writable, Path: l.Home})
	}
	if l.Work != "" {
		k := Writable
		if l.ReadOnlyWork {
			k = ReadOnly
		}
		ms = append(ms, Mount{Kind: k, Path: l.Work})
	}
	for _, w := range l.Writable {
		ms = append(ms, Mount{Kind: Writable, Path: w})
	}
	for _, d := range l.Deps {
		ms = append(ms, Mount{Kind: ReadOnlyAt, Src: d.Src, Path: d.Path})
	}
	if l.Work != "" {
		if l.GitDir != "" && within(l.Work, l.GitDir) {
			ms = append(ms, Mount{Kind: ReadOnly, Path: l.GitDir})
		}
		for _, p := range l.Protect {
			if within(l.Work, p) && !l.ReadOnlyWork {
				ms = append(ms, Mount{Kind: ReadOnly, Path: p})
			}
		}
		for _, h := range l.Hide {
			if within(l.Work, h) {
				ms = append(ms, Mount{Kind: Hidden, Path: h})
			}
		}
	}
	dir := l.Dir
	if dir == "" {
		dir = l.Work
	}
	p := Policy{Mounts: ms, Network: l.Network, Dir: dir, NoUnixSockets: l.NoUnixSockets}
	if l.Work != "" && l.WorkAt != "" {
		p.Moved = Bind{Src: l.Work, Path: l.WorkAt}
	}
	return p
}

// Inside is where host path p is seen in the sandbox of l: below WorkAt
// when it lies below Work.
func (l Layout) Inside(p string) string {
	if !l.moves(p) {
		return p
	}
	return moved(Bind{Src: l.Work, Path: l.WorkAt}, p)
}

// moves says p lies in the work tree and the sandbox shows it below
// WorkAt. Mounts there are made only after the work tree's (a mount
// point below WorkAt exists only then).
func (l Layout) moves(p string) bool {
	return l.Work != "" && l.WorkAt != "" && within(l.Work, p)
}

// Bind shows host path Src at Path.
type Bind struct{ Src, Path string }

// Env is the environment of a command in the sandbox: base with HOME,
// the XDG directories and TMPDIR moved into its private home and /tmp, and
// the variables that point programs at the host's agents and sessions
// (SSH and GPG agents, D-Bus, X and Wayland displays) removed.
func (l Layout) Env(base []string) []string {
	drop := map[string]bool{
		"HOME": true, "TMPDIR": true, "TMP": true, "TEMP": true,
		"XDG_CONFIG_HOME": true, "XDG_CACHE_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true,
		"XDG_RUNTIME_DIR": true, "SSH_AUTH_SOCK": true, "SSH_AGENT_PID": true, "GPG_AGENT_INFO": true,
		"DBUS_SESSION_BUS_ADDRESS": true, "DISPLAY": true, "WAYLAND_DISPLAY": true, "XAUTHORITY": true,
		"KRB5CCNAME": true,
	}
	var env []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	if l.Home != "" {
		env = append(env, "HOME="+l.Home,
			"XDG_CONFIG_HOME="+filepath.Join(l.Home, ".config"),
			"XDG_CACHE_HOME="+filepath.Join(l.Home, ".cache"),
			"XDG_DATA_HOME="+filepath.Join(l.Home, ".local", "share"),
			"XDG_STATE_HOME="+filepath.Join(l.Home, ".local", "state"))
	}
	if l.Tmp != "" {
		env = append(env, "TMPDIR=/tmp")
	}
	return env
}

// within reports whether p is dir or below it (both clean and absolute).
// coveredBy says p lies strictly inside another of the hidden paths.
func coveredBy(hidden []string, p string) bool {
	for _, h := range hidden {
		if filepath.Clean(h) != filepath.Clean(p) && within(h, p) {
			return true
		}
	}
	return false
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
