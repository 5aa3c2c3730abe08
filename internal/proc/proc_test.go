package proc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExitCodeAndOutput(t *testing.T) {
	res, err := Shell(context.Background(), "echo out; echo err >&2; exit 3", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || !strings.Contains(res.Output, "out") || !strings.Contains(res.Output, "err") || res.Truncated {
		t.Fatalf("%+v", res)
	}
}

func TestTimeoutKillsWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res, err := Shell(context.Background(), "sleep 60 & echo $! > "+pidFile+"; wait", Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || time.Since(start) > 5*time.Second {
		t.Fatalf("timed out %v after %s", res.TimedOut, time.Since(start))
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	for _, c := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(c-'0')
	}
	time.Sleep(50 * time.Millisecond)
	if pid == 0 || alive(pid) {
		t.Fatalf("background child %d survived the timeout", pid)
	}
}

func TestCancelKillsGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := Shell(ctx, "sleep 30", Options{})
	if err != nil || !res.Canceled || res.ExitCode != -1 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestCaptureKeepsHeadAndTailAndFullLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "sub", "out.log")
	res, err := Shell(context.Background(), "echo FIRST; seq 1 100000; echo LAST", Options{MaxCapture: 1024, LogPath: log})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.HasPrefix(res.Output, "FIRST") || !strings.HasSuffix(strings.TrimSpace(res.Output), "LAST") ||
		!strings.Contains(res.Output, "bytes omitted") || len(res.Output) > 1200 {
		t.Fatalf("output %d bytes: %q…", len(res.Output), res.Output[:80])
	}
	full, _ := os.ReadFile(log)
	if int64(len(full)) != res.TotalBytes || !strings.Contains(string(full), "\n50000\n") {
		t.Fatalf("log has %d bytes, total %d", len(full), res.TotalBytes)
	}
}

func TestLogBounded(t *testing.T) {
	log := filepath.Join(t.TempDir(), "out.log")
	res, err := Shell(context.Background(), "seq 1 100000; echo LAST", Options{MaxCapture: 1024, LogPath: log, MaxLog: 1000})
	if err != nil {
		t.Fatal(err)
	}
	full, _ := os.ReadFile(log)
	if len(full) != 1000 || !res.LogCut || !strings.HasPrefix(string(full), "1\n2\n") {
		t.Fatalf("log has %d bytes, cut %v", len(full), res.LogCut)
	}
	// The command ran to its end and the capture saw it all.
	if res.ExitCode != 0 || !strings.HasSuffix(strings.TrimSpace(res.Output), "LAST") || res.TotalBytes < 500000 {
		t.Fatalf("%+v", res)
	}
}

func TestMissingCommand(t *testing.T) {
	if _, err := Run(context.Background(), "definitely-not-a-command-xyz", nil, Options{}); err == nil {
		t.Fatal("want a start error")
	}
}

// alive reports a process that exists and is not a zombie waiting for a
// reaper.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestEnvironDropsSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("MY_SERVICE_API_TOKEN", "tok")
	t.Setenv("KEEP_ME", "yes")
	t.Setenv("PAGER", "less")
	env := strings.Join(Environ("PAGER=cat"), "\n")
	if strings.Contains(env, "sk-secret") || strings.Contains(env, "MY_SERVICE_API_TOKEN") {
		t.Fatal("a secret reached the environment")
	}
	if !strings.Contains(env, "KEEP_ME=yes") || !strings.Contains(env, "PAGER=cat") || strings.Contains(env, "PAGER=less") {
		t.Fatalf("env:\n%s", env)
	}
	res, _ := Shell(context.Background(), "echo ${OPENAI_API_KEY:-none}", Options{Env: Environ()})
	if strings.TrimSpace(res.Output) != "none" {
		t.Fatalf("the shell saw %q", res.Output)
	}
}

func TestIsSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "GITHUB_TOKEN": true, "GH_TOKEN": true, "NPM_TOKEN": true,
		"AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true, "PGPASSWORD": true, "DB_PASSWORD": true, "OPENAI_KEY": true,
		"STRIPE_SECRET": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "ULTRA_KEY_X": true, "HF_TOKEN": true, "GITLAB_PAT": true,
		"ULTRA_DB": true, "DATABASE_URL": true, "PGPASSFILE": true, "ulTra_db": true, "ULTRA_DBX": false,
		"PATH": false, "HOME": false, "SSH_AUTH_SOCK": false, "GOPATH": false, "TERM": false, "LANG": false, "KEYBOARD": false,
	} {
		if got := IsSecret(name); got != want {
			t.Errorf("IsSecret(%s) = %v, want %v", name, got, want)
		}
	}
}
