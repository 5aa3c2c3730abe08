package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
)

func needSandbox(t testing.TB) Status {
	t.Helper()
	st := Probe()
	if !st.Available {
		t.Skipf("no sandbox on this machine (%s); %s", st.Problem, st.Hint)
	}
	return st
}

// world is a host file system with what a run's sandbox must protect.
type world struct {
	work, git, state, secret, home, tmp, outside string
}

func newWorld(t *testing.T) world {
	// Not under /tmp, which the sandbox replaces: the world must be seen
	// as a person's home and checkout would be.
	root, err := os.MkdirTemp("/var/tmp", "ultra-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	w := world{work: root + "/state/worktrees/wt", git: root + "/repo/.git", state: root + "/state",
		secret: root + "/home/.ssh", home: root + "/state/runs/r/home", tmp: root + "/state/runs/r/tmp", outside: root + "/repo"}
	for _, d := range []string{w.work + "/.ultra", w.git + "/refs/heads", w.secret, w.home, w.tmp} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(w.work+"/.git", []byte("gitdir: "+w.git+"\n"), 0o644)
	os.WriteFile(w.work+"/.ultra/config", []byte("x"), 0o644)
	os.WriteFile(w.git+"/refs/heads/main", []byte("abc\n"), 0o644)
	os.WriteFile(w.state+"/ultra.db", []byte("db"), 0o644)
	os.WriteFile(w.secret+"/id_ed25519", []byte("PRIVATE KEY"), 0o600)
	os.WriteFile(w.outside+"/file", []byte("person's"), 0o644)
	return w
}

func (w world) layout() Layout {
	return Layout{Work: w.work, Protect: []string{w.work + "/.git", w.work + "/.ultra"}, GitDir: w.git,
		Hide: []string{w.state, w.secret}, Home: w.home, Tmp: w.tmp}
}

func run(t *testing.T, st Status, l Layout, script string) proc.Result {
	t.Helper()
	return runIn(t, st, l, l.Work, script)
}

// Each rule is judged by its effect on the host's files, not by what the
// command printed.
func TestSandboxEffects(t *testing.T) {
	st := needSandbox(t)
	w := newWorld(t)
	res := run(t, st, w.layout(), strings.Join([]string{
		"ls -A " + w.state + " | sed s/^/LS:/",
		"echo work > made.txt",
		"echo x > .ultra/config",
		"echo x > .git",
		"echo x > " + w.git + "/refs/heads/main",
		"echo x > " + w.git + "/refs/heads/evil",
		"echo x > " + w.outside + "/file",
		"echo x > " + w.outside + "/new",
		"echo x > " + w.state + "/ultra.db",
		"ln " + w.outside + "/file linked",
		"cat " + w.secret + "/id_ed25519",
		"echo tmp > /tmp/t; echo home > $HOME/h",
		"echo x > " + w.state + "/planted && echo PLANTED",
		"cat " + w.outside + "/file",
		"true",
	}, "; "))
	check := func(path, want string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil && want != "" {
			t.Errorf("%s: %v", path, err)
		} else if string(b) != want {
			t.Errorf("%s holds %q, want %q", path, b, want)
		}
	}
	check(w.work+"/made.txt", "work\n")
	check(w.work+"/.ultra/config", "x")
	check(w.work+"/.git", "gitdir: "+w.git+"\n")
	check(w.git+"/refs/heads/main", "abc\n")
	check(w.git+"/refs/heads/evil", "")
	check(w.outside+"/file", "person's")
	check(w.outside+"/new", "")
	check(w.state+"/ultra.db", "db")
	check(w.work+"/linked", "")
	check(w.tmp+"/t", "tmp\n")
	check(w.home+"/h", "home\n")
	if _, err := os.Stat("/tmp/t"); err == nil && !strings.HasPrefix(w.tmp, "/tmp/") {
		b, _ := os.ReadFile("/tmp/t")
		if string(b) == "tmp\n" {
			t.Error("the command wrote the host's /tmp")
		}
	}
	if strings.Contains(res.Output, "PLANTED") {
		t.Errorf("a write into a hidden directory seemed to work:\n%s", res.Output)
	}
	if strings.Contains(res.Output, "PRIVATE KEY") || strings.Contains(res.Output, "LS:ultra.db") {
		t.Errorf("hidden files were readable:\n%s", res.Output)
	}
	if !strings.Contains(res.Output, "person's") {
		t.Errorf("the checkout should stay readable:\n%s", res.Output)
	}
}

// The command sees none of the host's processes: not ultra, not its
// environment.
func TestSandboxHidesProcesses(t *testing.T) {
	st := needSandbox(t)
	w := newWorld(t)
	os.Setenv("ULTRA_TEST_CANARY_KEY", "canary-4242")
	defer os.Unsetenv("ULTRA_TEST_CANARY_KEY")
	res := run(t, st, w.layout(), `cat /proc/$PPID/environ /proc/1/environ 2>&1 | tr '\0' '\n'; for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr '\0' ' '; echo; done; ps eww 2>&1`)
	if strings.Contains(res.Output, "canary-4242") {
		t.Fatalf("the host's environment leaked:\n%s", res.Output)
	}
	self, _ := os.Executable()
	if strings.Contains(res.Output, filepath.Base(self)) {
		t.Fatalf("the host's processes are visible:\n%s", res.Output)
	}
}

// Nothing a command starts outlives it, setsid or not.
func TestSandboxKillsLeftovers(t *testing.T) {
	st := needSandbox(t)
	w := newWorld(t)
	res := run(t, st, w.layout(), `setsid sh -c 'sleep 0.5; echo late > late.txt' >/dev/null 2>&1 & nohup sh -c 'sleep 0.5; echo late > late2.txt' >/dev/null 2>&1 & echo started`)
	if !strings.Contains(res.Output, "started") {
		t.Fatal(res.Output)
	}
	time.Sleep(1500 * time.Millisecond)
	for _, f := range []string{"late.txt", "late2.txt"} {
		if _, err := os.Stat(filepath.Join(w.work, f)); err == nil {
			t.Errorf("a process outlived its call and wrote %s", f)
		}
	}
}

// Without the network only the sandbox's own loopback answers; with it,
// the host's listener does.
func TestSandboxNetwork(t *testing.T) {
	st := needSandbox(t)
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from host\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3 || echo refused`, port)
	if res := run(t, st, w.layout(), script); strings.Contains(res.Output, "hello from host") {
		t.Fatalf("reached the host without the network: %s", res.Output)
	}
	l := w.layout()
	l.Network = true
	if res := run(t, st, l, script); !strings.Contains(res.Output, "hello from host") {
		t.Fatalf("the network profile could not connect: %s", res.Output)
	}
}

// A read-only work tree takes no writes at all.
func TestSandboxReadOnlyWork(t *testing.T) {
	st := needSandbox(t)
	w := newWorld(t)
	l := w.layout()
	l.ReadOnlyWork = true
	run(t, st, l, "echo x > made.txt; mkdir d")
	if _, err := os.Stat(filepath.Join(w.work, "made.txt")); err == nil {
		t.Fatal("wrote a read-only work tree")
	}
}

// A wrapper without a sandbox refuses to start anything.
func TestNoSandboxRunsNothing(t *testing.T) {
	dir := t.TempDir()
	st := Status{Problem: "bubblewrap is not installed"}
	opts := proc.Options{Dir: dir}
	(&proc.Sandbox{Wrap: st.Wrapper(Layout{Work: dir}.Policy())}).Apply(&opts)
	if _, err := proc.Shell(context.Background(), "touch ran", opts); err == nil {
		t.Fatal("started a command without its sandbox")
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("the command ran")
	}
}

// Without the network, a command cannot open a Unix socket either: a
// socket file it can see does not connect it to a service outside. Pipes
// and socketpairs still work.
func TestSandboxNoUnixSockets(t *testing.T) {
	st := needSandbox(t)
	if _, ok := unixSocketFilter(); !ok {
		t.Skip("no seccomp filter for this architecture")
	}
	w := newWorld(t)
	sock := filepath.Join(w.outside, "daemon.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var reached atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	l := w.layout()
	l.NoUnixSockets = true
	script := fmt.Sprintf(`python3 -c "
import socket
a, b = socket.socketpair(); a.send(b'x'); print('pair', b.recv(1))
s = socket.socket(socket.AF_UNIX)
s.connect('%s')
print('connected')
" 2>&1; echo done`, sock)
	res := run(t, st, l, script)
	if reached.Load() != 0 || strings.Contains(res.Output, "connected") {
		t.Fatalf("the command reached a Unix socket:\n%s", res.Output)
	}
	if !strings.Contains(res.Output, "pair b'x'") || !strings.Contains(res.Output, "Permission denied") {
		t.Fatalf("socketpair should work and AF_UNIX be refused:\n%s", res.Output)
	}
	l.NoUnixSockets = false
	if res := run(t, st, l, script); reached.Load() == 0 {
		t.Fatalf("the control could not connect:\n%s", res.Output)
	}
}

// Two spellings of one directory (/var/run/user is /run/user) are one
// mount; the same path hidden again after another mount is kept, since
// the later mount may lie inside it.
func TestResolveDropsRepeatedMounts(t *testing.T) {
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	dir, other := root+"/run/user", root+"/other"
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(other, 0o755)
	os.Symlink(root+"/run", root+"/varrun")
	hide := func(p string) Mount { return Mount{Kind: Hidden, Path: p} }
	for _, tc := range []struct {
		name string
		in   []Mount
		want []string
	}{
		{"symlinked spelling", []Mount{hide(dir), hide(root + "/varrun/user"), hide(other)}, []string{dir, other}},
		{"same path twice", []Mount{hide(dir), hide(dir)}, []string{dir}},
		{"apart", []Mount{hide(dir), hide(other), hide(dir)}, []string{dir, other, dir}},
		{"other kind", []Mount{hide(dir), {Kind: Writable, Path: dir}}, []string{dir, dir}},
		{"missing", []Mount{hide(root + "/nope"), hide(dir)}, []string{dir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range Resolve(Policy{Mounts: tc.in}).Mounts {
				got = append(got, m.Path)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("mounts %v, want %v", got, tc.want)
			}
		})
	}
}
