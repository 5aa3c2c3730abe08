package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/ultra-dev/ultra/internal/proc"
)

// BenchmarkShell is the cost the sandbox adds to one bash call: the same
// trivial command, plain and contained with a run's layout. Compare the
// two medians (go test -bench Shell -count 5 | benchstat). "spare" is a
// run's call as it is made: in the sandbox started for it while the model
// thought (proc.Spares), ready when the call comes; its time is from the
// call to its result.
func BenchmarkShell(b *testing.B) {
	st := needSandbox(b)
	dir := b.TempDir()
	l := Layout{Work: dir, Home: b.TempDir(), Tmp: b.TempDir(), Hide: append(Secrets(os.Getenv("HOME")), "/nonexistent/state")}
	env := []string{"PATH=" + os.Getenv("PATH")}
	strict := l
	strict.NoUnixSockets = true
	for _, c := range []struct {
		name string
		sb   *proc.Sandbox
	}{{"plain", nil}, {"sandboxed", &proc.Sandbox{Wrap: st.Wrapper(l.Policy()), Env: l.Env}},
		{"sandboxed-no-unix-sockets", &proc.Sandbox{Wrap: st.Wrapper(strict.Policy()), Env: l.Env}},
		{"spare", &proc.Sandbox{Wrap: st.Wrapper(strict.Policy()), Env: l.Env}}} {
		b.Run(c.name, func(b *testing.B) {
			sb := c.sb
			if c.name == "spare" {
				sb = &proc.Sandbox{Wrap: c.sb.Wrap, Env: c.sb.Env, Spares: proc.NewSpares()}
				defer sb.Close()
			}
			call := func() proc.Result {
				opts := proc.Options{Dir: dir, Env: env}
				sb.Apply(&opts)
				r, err := proc.Shell(context.Background(), "echo hi >/dev/null", opts)
				if err != nil || r.ExitCode != 0 {
					b.Fatal(err, r.Output)
				}
				return r
			}
			call() // the first call leaves the first spare
			b.ResetTimer()
			for range b.N {
				if sb != nil && sb.Spares != nil {
					b.StopTimer()
					sb.Spares.Ready() // the model thinks
					b.StartTimer()
				}
				if r := call(); sb != nil && sb.Spares != nil && !r.Spare {
					b.Fatal("the call did not take the spare")
				}
			}
		})
	}
}

// BenchmarkSparePrepare is the time a spare takes to be ready after the
// call before it: the sandbox's whole cost, paid while the model thinks.
func BenchmarkSparePrepare(b *testing.B) {
	st := needSandbox(b)
	dir := b.TempDir()
	l := Layout{Work: dir, Home: b.TempDir(), Tmp: b.TempDir(), Hide: append(Secrets(os.Getenv("HOME")), "/nonexistent/state"), NoUnixSockets: true}
	sb := &proc.Sandbox{Wrap: st.Wrapper(l.Policy()), Env: l.Env, Spares: proc.NewSpares()}
	defer sb.Close()
	for range b.N {
		b.StopTimer()
		opts := proc.Options{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")}}
		sb.Apply(&opts)
		if r, err := proc.Shell(context.Background(), "true", opts); err != nil || r.ExitCode != 0 {
			b.Fatal(err, r.Output)
		}
		b.StartTimer()
		if !sb.Spares.Ready() {
			b.Fatal("no spare came up")
		}
	}
}

// BenchmarkShellParts breaks a contained bash call into its parts, each
// step adding to the one before: bubblewrap with nothing but the root
// (a process and a mount namespace), the namespaces, /dev and /proc every
// command gets (Policy with no mounts), and a run's layout on top.
func BenchmarkShellParts(b *testing.B) {
	st := needSandbox(b)
	dir := b.TempDir()
	l := Layout{Work: dir, Home: b.TempDir(), Tmp: b.TempDir(), Hide: append(Secrets(os.Getenv("HOME")), "/nonexistent/state")}
	fixed := func(args ...string) proc.Wrapper {
		return func(name string, rest []string, _ string) (proc.Wrapped, error) {
			return proc.Wrapped{Name: st.Path, Args: append(append(append([]string(nil), args...), name), rest...)}, nil
		}
	}
	for _, c := range []struct {
		name string
		wrap proc.Wrapper
	}{
		{"plain", nil},
		{"bwrap-root-only", fixed("--ro-bind", "/", "/", "--")},
		{"namespaces-dev-proc", st.Wrapper(Policy{Dir: dir})},
		{"run-layout", st.Wrapper(l.Policy())},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				opts := proc.Options{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")}, Wrap: c.wrap}
				if r, err := proc.Shell(context.Background(), "true", opts); err != nil || r.ExitCode != 0 {
					b.Fatal(err, r.Output)
				}
			}
		})
	}
}

// BenchmarkNestedCall measures what a call would cost if one sandbox per
// run started each call in fresh namespaces of its own (user, PID, mount,
// IPC, UTS, network, a /proc of its own) instead of a bubblewrap per call:
// one bubblewrap runs util-linux's unshare b.N times, each time for the
// same trivial bash call. It is a measurement, not ultra's sandbox: that
// bubblewrap has no /proc of its own but the host's, bound (the kernel
// refuses a fresh /proc next to the one bubblewrap mounts, which covers
// parts of it), no /dev of each call's own, and as root it runs as uid
// 1000 (mapping uid 0 into a nested namespace needs CAP_SETFCAP, which
// --cap-drop ALL removes). Compare it
// with BenchmarkShellParts/run-layout; docs/performance.md has the numbers.
func BenchmarkNestedCall(b *testing.B) {
	st := needSandbox(b)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		b.Skip("no unshare (util-linux)")
	}
	dir := b.TempDir()
	outer := []string{"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--bind", "/proc", "/proc", "--bind", dir, dir, "--chdir", dir}
	if os.Getuid() == 0 {
		outer = append([]string{"--uid", "1000", "--gid", "1000"}, outer...)
	}
	call := unshare + " -Upfnimu --map-current-user --mount-proc --kill-child bash -c true"
	script := fmt.Sprintf("i=0; while [ $i -lt %d ]; do %s || exit 1; i=$((i+1)); done", b.N, call)
	b.ResetTimer()
	out, err := exec.Command(st.Path, append(outer, "--", "sh", "-c", script)...).CombinedOutput()
	if err != nil {
		b.Fatal(err, string(out))
	}
}
