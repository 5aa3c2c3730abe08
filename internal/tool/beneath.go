package tool

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The worktree is the model's: a symlink in it, a symlinked directory on a
// listed path (an index entry link/secret.txt under link -> /outside), or
// one swapped in between a check and an open, must not take ultra's own
// reads (grep, glob; outside the sandbox) out of it. Every file is opened
// relative to the root's directory with openat2(RESOLVE_BENEATH): symlinks
// are followed only while they stay inside, in one system call.

// openRoot opens the directory root for openBeneath.
func openRoot(root string) (int, error) {
	return retryEINTR(func() (int, error) {
		return unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
}

// openBeneath opens rel, relative to the directory rootFD (root's), for
// reading (or, with pathOnly, to stat), never resolving outside it; a FIFO
// does not block the open, a terminal does not become ultra's.
func openBeneath(rootFD int, root, rel string, pathOnly bool) (int, error) {
	flags := uint64(unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY)
	if pathOnly {
		flags = unix.O_PATH | unix.O_CLOEXEC
	}
	how := unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := retryEINTR(func() (int, error) { return unix.Openat2(rootFD, rel, &how) })
	if !errors.Is(err, unix.ENOSYS) {
		return fd, err
	}
	// Kernels before 5.6: os.Root resolves component by component.
	r, err := os.OpenRoot(root)
	if err != nil {
		return -1, err
	}
	defer r.Close()
	f, err := r.OpenFile(filepath.FromSlash(rel), int(flags&^unix.O_PATH)|os.O_RDONLY, 0)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	return unix.Dup(int(f.Fd()))
}

func retryEINTR(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}
