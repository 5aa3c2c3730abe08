package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Builtins returns ultra's built-in tools: read, write, edit, bash, glob,
// grep and todo, in that order.
func Builtins() []Tool {
	return []Tool{Read{}, Write{}, Edit{}, Bash{}, Glob{}, Grep{}, Todo{}, WebFetch{}}
}

// NewEnv returns an Env for the workspace at root (made absolute, symlinks
// resolved) with an empty file tracker and todo list. stateDir is where
// full command outputs go (may be empty: then they are not saved).
func NewEnv(root, stateDir string) (*Env, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace root %s is not a directory", root)
	}
	return &Env{
		Root:     real,
		StateDir: stateDir,
		Files:    NewFileTracker(),
		Todos:    NewTodoList(),
	}, nil
}

// DefaultBashTimeout is the timeout of bash when neither the call nor the
// Env sets one; MaxBashTimeout caps what a call may ask for.
const (
	DefaultBashTimeout = 2 * time.Minute
	MaxBashTimeout     = 10 * time.Minute
)

func (e *Env) tracker() (*FileTracker, error) {
	if e == nil || e.Files == nil {
		return nil, fmt.Errorf("internal error: the run has no file tracker")
	}
	return e.Files, nil
}
