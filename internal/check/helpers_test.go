package check

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/sandbox"
)

// TestMain makes the test binary the check supervisor when Runner starts
// it (the way cmd/ultra dispatches SupervisorArg).
func TestMain(m *testing.M) {
	if os.Getenv("ULTRA_CHECK_SUPERVISOR") == "1" {
		os.Exit(Supervise())
	}
	os.Exit(m.Run())
}

// testExe is the test binary, resolved (the sandbox shows it at its real
// path).
func testExe(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe
}

// newRunner is an uncontained Runner on dir whose supervisor is this test
// binary.
func newRunner(t testing.TB, dir string) Runner {
	t.Helper()
	ev := filepath.Join(t.TempDir(), "evidence")
	// The check's temporary directories (tmux's socket directory, the
	// browser's profile) under this test's own: what is left of them is
	// this check's, not another test's running beside it.
	tmp := t.TempDir()
	return Runner{
		Dir:         dir,
		Program:     []string{testExe(t), SupervisorArg},
		Env:         []string{"ULTRA_CHECK_SUPERVISOR=1", "TMPDIR=" + tmp},
		EvidenceDir: ev,
		EvidenceRel: ".ultra/evidence/G001-C1/1",
	}
}

// containedRunner is newRunner in a bubblewrap sandbox built like the
// agent's: own user, PID and network namespaces, read-only root, dir
// writable, private home and /tmp, Unix sockets only for tmux and the
// browser (chromium cannot start without one).
func containedRunner(t testing.TB, dir string) Runner {
	t.Helper()
	st := sandbox.Probe()
	if !st.Available {
		t.Skipf("no sandbox here: %s", st.Problem)
	}
	r := newRunner(t, dir)
	base := t.TempDir()
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	exe := testExe(t)
	hostHome, _ := os.UserHomeDir()
	r.Sandbox = func(ch goal.Channel) (*proc.Sandbox, error) {
		l := sandbox.Layout{
			Work: dir, Home: home, Tmp: tmp,
			NoUnixSockets: ch != goal.ChannelTmux && ch != goal.ChannelBrowser && ch != goal.ChannelDesktop,
			// The test binary lives under the host's /tmp, which the
			// sandbox replaces.
			Deps: []sandbox.Bind{{Src: exe, Path: exe}},
		}
		return &proc.Sandbox{Wrap: st.Wrapper(l.Policy()), Env: func(base []string) []string {
			env := l.Env(base)
			return append(env, sandbox.ToolEnv(hostHome, env)...)
		}}, nil
	}
	return r
}

func crit(ch goal.Channel, c goal.Check) goal.Criterion {
	return goal.Criterion{ID: "G001-C1", Scenario: "test", Channel: ch, Check: c, Essential: true}
}

// python is the python3 program (not a pyenv shim: those start slowly).
func python(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the http and browser tests need it for their servers")
	}
	out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
	if err == nil && strings.TrimSpace(string(out)) != "" {
		return strings.TrimSpace(string(out))
	}
	return p
}

// freePort is a TCP port nothing listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// serverPy answers GET /health "ok", GET /json a document, POST with the
// body upper-cased, anything else 404. With "ignore-term" it ignores
// SIGTERM.
const serverPy = `import http.server, json, signal, sys
port = int(sys.argv[1])
if "ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            self.reply(200, "text/plain", b"ok")
        elif self.path == "/json":
            self.reply(200, "application/json", json.dumps({"user": {"name": "ada", "tags": ["x", "y"]}, "n": 3}).encode())
        else:
            self.reply(404, "text/plain", b"nope")
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.reply(201, "text/plain", body.upper() + b" " + self.headers.get("X-Test", "").encode())
    def reply(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
print("serving on", port, flush=True)
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
`

// serverDir is a directory with server.py.
func serverDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "server.py"), []byte(serverPy), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// marker is a string unique to one test, to find its processes.
func marker(t testing.TB) string {
	return "ultra-check-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// procsWith lists the live processes whose command line holds s.
func procsWith(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}

// inTmp is path prefix in the temporary directory of r's checks.
func inTmp(r Runner, prefix string) string {
	for _, kv := range r.Env {
		if d, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			return filepath.Join(d, prefix)
		}
	}
	return prefix
}

// noneLeft fails the test when a process whose command line holds s is
// still alive.
func noneLeft(t *testing.T, s string) {
	t.Helper()
	if left := procsWith(s); len(left) > 0 {
		t.Errorf("processes of the check still alive after Run: %v", left)
	}
}

// evidence reads the evidence file name of res and checks its recorded
// size and sha256 against the file on disk.
func evidence(t *testing.T, r Runner, res Result, name string) []byte {
	t.Helper()
	for _, f := range res.Files {
		if f.Name != name {
			continue
		}
		if want := r.EvidenceRel + "/" + name; f.Path != want {
			t.Errorf("%s: path %q, want %q", name, f.Path, want)
		}
		b, err := os.ReadFile(filepath.Join(r.EvidenceDir, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != f.SHA256 || int64(len(b)) != f.Bytes {
			t.Errorf("%s: recorded sha256 %s and %d bytes, the file has %s and %d", name, f.SHA256, f.Bytes, hex.EncodeToString(sum[:]), len(b))
		}
		return b
	}
	var names []string
	for _, f := range res.Files {
		names = append(names, f.Name)
	}
	t.Fatalf("no evidence file %s (have %v)", name, names)
	return nil
}

// logResult shows a result in the test's log.
func logResult(t *testing.T, res Result) {
	t.Helper()
	t.Logf("status %s in %s\nsummary: %s\nreason: %s\nsignature: %s\nreceipt: %s", res.Status, res.Duration.Round(time.Millisecond), res.Summary, res.Reason, res.Signature, res.Receipt)
}

func wantStatus(t *testing.T, res Result, want goal.CriterionStatus) {
	t.Helper()
	if res.Status != want {
		t.Fatalf("status %s, want %s\nsummary: %s\nreason: %s\nreceipt: %s", res.Status, want, res.Summary, res.Reason, res.Receipt)
	}
}

func intp(n int) *int { return &n }

// wantIn fails the test for each of wants that s (named what) lacks.
func wantIn(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}
