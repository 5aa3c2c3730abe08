package tui

import (
	"context"

	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/surface/procs"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// Backend is everything the TUI reads and does outside itself: it
// follows runs in the store, and acts only by running ultra's own
// commands (the command line is the one implementation of every action,
// with its checks), each in its own process that outlives the TUI.
type Backend interface {
	Row(ctx context.Context, id string) (*store.Run, error)
	EventsAfter(ctx context.Context, id string, seq int64, limit int) ([]store.StoredEvent, error)
	Runtime(ctx context.Context, id string) (store.Runtime, error)
	// Exec runs `ultra ARGS` to its end and returns what it printed and
	// its exit code.
	Exec(ctx context.Context, args []string) (string, int)
	// Start runs `ultra ARGS`, a command that starts or continues a run,
	// and returns as soon as the run is known (its first event printed),
	// with a wait for the command's end.
	Start(ctx context.Context, args []string) (run string, wait func() (string, int), err error)
	// Tasks are the rows of `ultra tasks`.
	Tasks(ctx context.Context, all bool) ([]tasks.Row, error)
}

// Processes is the Backend of a real terminal (procs.Processes).
var _ Backend = (*procs.Processes)(nil)

// firstLines keeps what a person reads of a command's output.
func firstLines(text string, n int) string { return procs.FirstLines(text, n) }
