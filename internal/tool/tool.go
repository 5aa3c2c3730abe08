// Package tool holds the tool interface and ultra's built-in tools: read,
// write, edit, bash, glob, grep and todo. The phase and verify tools belong
// to the agent, which owns the run they change.
package tool

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/proc"
)

// Tool is one capability offered to the model.
type Tool interface {
	// Spec is the name, description and JSON Schema sent to the model.
	Spec() llm.ToolSpec
	// ReadOnly reports that the tool never changes anything, so calls to
	// it may run in parallel with other read-only calls.
	ReadOnly() bool
	// Run executes one call. It never panics on bad arguments: problems
	// come back as a Result with IsError (and Malformed when the arguments
	// themselves were at fault).
	Run(ctx context.Context, env *Env, args json.RawMessage) Result
}

// Result is what a tool call produced, as the model will read it.
type Result struct {
	Output    string         `json:"output"`
	IsError   bool           `json:"is_error,omitempty"`
	Malformed bool           `json:"malformed,omitempty"` // arguments invalid or missing required fields
	Data      map[string]any `json:"data,omitempty"`      // structured details for events
}

// Env is what tools of one run share.
type Env struct {
	Root        string        // workspace root: absolute, symlinks resolved
	StateDir    string        // run's directory under .ultra/state for full outputs
	BashTimeout time.Duration // default timeout of bash (0: 2 minutes)
	Files       *FileTracker  // which files were read, and as what
	Todos       *TodoList     // the run's todo list
	// Sandbox runs bash commands contained; nil runs them as they are (no
	// sandbox on this machine, and a profile that allows that).
	Sandbox *proc.Sandbox
	// Output, when set, sees a bash command's output as it is produced.
	Output io.Writer
}
