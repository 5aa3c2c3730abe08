package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// Test binaries run through ExecName inside the gate's sandbox: the go
// command (trusted) keeps its work directory, where it links the test
// binaries it is about to run, out of reach of the tests it starts (the
// model's code). ultra is started under this name (a link to it)
// with WritableEnv listing, separated by ':', the only directories the
// test may write.
const (
	ExecName    = "ultra-test-exec"
	WritableEnv = "ULTRA_TEST_WRITABLE"
)

// LandlockABI is the Landlock ABI version the kernel offers (0: none).
func LandlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// ExecRestricted replaces this process with argv, unable to write
// anywhere but the writable directories and the harmless devices. It
// returns only on failure: a program that cannot be restricted is not
// run.
func ExecRestricted(writable, argv, env []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("%s: no program to run", ExecName)
	}
	if LandlockABI() < 1 {
		return fmt.Errorf("%s: this kernel has no Landlock; refusing to run %s unrestricted", ExecName, argv[0])
	}
	prog := argv[0]
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if err != nil {
			return err
		}
		prog = p
	}
	var dirs []string
	for _, d := range writable {
		if d != "" {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	err := landlock.V5.BestEffort().RestrictPaths(
		landlock.RODirs("/"),
		landlock.RWDirs(dirs...).IgnoreIfMissing(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty").IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("%s: applying Landlock: %w", ExecName, err)
	}
	return syscall.Exec(prog, argv, env)
}

// RunExec is ultra's main when it is started as ExecName: go test's
// -exec wrapper for one test binary.
func RunExec(args []string) int {
	// The go command's work directory is its own: a go command the test
	// starts makes one in /tmp.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOTMPDIR=") {
			env = append(env, kv)
		}
	}
	err := ExecRestricted(strings.Split(os.Getenv(WritableEnv), ":"), args, env)
	fmt.Fprintln(os.Stderr, err)
	return 126
}
