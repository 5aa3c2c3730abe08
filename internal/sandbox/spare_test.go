package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
)

// spared runs script in sb once the spare its last call left is ready
// (Result.Spare says whether it served the call).
func spared(t *testing.T, sb *proc.Sandbox, dir, script string, timeout time.Duration) proc.Result {
	t.Helper()
	sb.Spares.Ready()
	opts := proc.Options{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=/root", "SHLVL=3", "X=a b"}, Timeout: timeout}
	sb.Apply(&opts)
	res, err := proc.Shell(context.Background(), script, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// spareWorld is a run's sandbox with spares, after a first call.
func spareWorld(t *testing.T, l Layout) *proc.Sandbox {
	st := needSandbox(t)
	sb := &proc.Sandbox{Wrap: st.Wrapper(l.Policy()), Env: l.Env, Spares: proc.NewSpares()}
	t.Cleanup(sb.Close)
	if res := spared(t, sb, l.Work, "true", 20*time.Second); res.Spare || res.ExitCode != 0 {
		t.Fatalf("the first call: %+v", res)
	}
	return sb
}

// A call served by a spare behaves as one that starts its own sandbox:
// the same output, exit code, directory, environment, descriptors,
// process ids, capabilities and seccomp filter.
func TestSpareSameAsFresh(t *testing.T) {
	w := newWorld(t)
	l := w.layout()
	l.NoUnixSockets = true
	sb := spareWorld(t, l)
	fresh := &proc.Sandbox{Wrap: sb.Wrap, Env: sb.Env}
	for _, script := range []string{
		"exit 7",
		"echo out; echo err >&2; exit 3",
		`echo "[$_]"; pwd; echo $$ $PPID $0 "$#"; env | grep -v '^_=' | sort; ls /proc/self/fd; ls /proc`,
		// bubblewrap's first process holds what it held (its eventfd has
		// another number, the descriptors of the spare being closed).
		`for f in /proc/1/fd/*; do readlink $f | sed 's/:\[.*//'; done`,
		`grep -E '^(Uid|Gid|Cap|NoNewPrivs|Seccomp)' /proc/self/status; cat /proc/self/cgroup; ps -o pid,ppid,pgid,sid,comm 2>&1`,
		`python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1; hostname; cat /dev/null; read x; echo "read $? [$x]"`,
		"kill -9 $$",
		"echo \"$(printf '%s' 'quotes \" and \\\\ backslashes'\n)\"; echo second line",
	} {
		a := spared(t, sb, l.Work, script, 20*time.Second)
		b := spared(t, fresh, l.Work, script, 20*time.Second)
		if !a.Spare || b.Spare {
			t.Fatalf("%q: spare %v, fresh %v", script, a.Spare, b.Spare)
		}
		if a.Output != b.Output || a.ExitCode != b.ExitCode {
			t.Errorf("%q:\nfrom a spare (exit %d):\n%s\nfresh (exit %d):\n%s", script, a.ExitCode, a.Output, b.ExitCode, b.Output)
		}
	}
}

// A spare's call is killed whole at its timeout, and what it left in the
// background does not outlive it.
func TestSpareTimeoutAndLeftovers(t *testing.T) {
	w := newWorld(t)
	sb := spareWorld(t, w.layout())
	start := time.Now()
	res := spared(t, sb, w.work, "sleep 97531 & setsid sleep 97532 & sleep 97533", time.Second)
	if !res.Spare || !res.TimedOut || time.Since(start) > 5*time.Second {
		t.Fatalf("spare %v, timed out %v after %s", res.Spare, res.TimedOut, time.Since(start))
	}
	res = spared(t, sb, w.work, `setsid sh -c 'sleep 0.5; echo late > late.txt' >/dev/null 2>&1 & (sleep 0.5; echo late > late2.txt) & echo started`, 20*time.Second)
	if !res.Spare || !strings.Contains(res.Output, "started") {
		t.Fatalf("%+v", res)
	}
	time.Sleep(1500 * time.Millisecond)
	for _, f := range []string{"late.txt", "late2.txt"} {
		if _, err := os.Stat(filepath.Join(w.work, f)); err == nil {
			t.Errorf("a process outlived its call and wrote %s", f)
		}
	}
	for _, p := range hostProcs(t) {
		if strings.Contains(p, "9753") {
			t.Errorf("a process outlived its call: %s", p)
		}
	}
}

// A path to hide that appears after the spare was started, or a hidden
// directory removed and made again, is hidden from the call: the spare is
// not used.
func TestSpareLayoutChanged(t *testing.T) {
	w := newWorld(t)
	l := w.layout()
	later := filepath.Join(filepath.Dir(w.secret), ".later")
	netrc := filepath.Join(filepath.Dir(w.secret), ".netrc")
	os.WriteFile(netrc, []byte("OLD NETRC"), 0o600)
	l.Hide = append(l.Hide, later, netrc)
	sb := spareWorld(t, l)
	sb.Spares.Ready()
	os.MkdirAll(later, 0o755)
	os.WriteFile(later+"/key", []byte("LATER KEY"), 0o600)
	res := spared(t, sb, w.work, "cat "+later+"/key; ls -A "+later, 20*time.Second)
	if res.Spare || strings.Contains(res.Output, "LATER KEY") {
		t.Errorf("spare %v:\n%s", res.Spare, res.Output)
	}
	sb.Spares.Ready()
	os.RemoveAll(w.secret)
	os.MkdirAll(w.secret, 0o700)
	os.WriteFile(w.secret+"/id_new", []byte("NEW KEY"), 0o600)
	res = spared(t, sb, w.work, "cat "+w.secret+"/id_new; ls -A "+w.secret, 20*time.Second)
	if res.Spare || strings.Contains(res.Output, "NEW KEY") {
		t.Errorf("spare %v:\n%s", res.Spare, res.Output)
	}
	// A hidden file replaced (an editor's save: a new file renamed over it).
	sb.Spares.Ready()
	os.WriteFile(netrc+".new", []byte("NEW NETRC"), 0o600)
	os.Rename(netrc+".new", netrc)
	res = spared(t, sb, w.work, "cat "+netrc, 20*time.Second)
	if res.Spare || strings.Contains(res.Output, "NETRC") {
		t.Errorf("spare %v:\n%s", res.Spare, res.Output)
	}
	// Another environment or directory: not the spare either.
	sb.Spares.Ready()
	opts := proc.Options{Dir: w.work, Env: []string{"PATH=" + os.Getenv("PATH"), "OTHER=1"}}
	sb.Apply(&opts)
	if res, err := proc.Shell(context.Background(), "true", opts); err != nil || res.Spare {
		t.Fatalf("%v %+v", err, res)
	}
}

// Close leaves no process of a spare behind, nor does a spare wait
// uncalled with nothing of the call run.
func TestSpareClose(t *testing.T) {
	w := newWorld(t)
	sb := spareWorld(t, w.layout())
	if !sb.Spares.Ready() {
		t.Fatal("no spare came up")
	}
	if n := bwrapChildren(t); n == 0 {
		t.Fatal("the spare's bubblewrap is not running")
	}
	sb.Close()
	if n := bwrapChildren(t); n != 0 {
		t.Fatalf("%d bubblewrap processes left after Close", n)
	}
	opts := proc.Options{Dir: w.work, Env: []string{"PATH=" + os.Getenv("PATH")}}
	sb.Apply(&opts)
	if res, err := proc.Shell(context.Background(), "true", opts); err != nil || res.Spare || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	if n := bwrapChildren(t); n != 0 {
		t.Fatalf("a closed pool started a spare: %d bubblewrap processes", n)
	}
}

// hostProcs are the command lines of the host's processes.
func hostProcs(t *testing.T) []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// bwrapChildren counts this process's bubblewrap children.
func bwrapChildren(t *testing.T) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if strings.Contains(s[:i], "(bwrap") && len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			n++
		}
	}
	return n
}
