package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/proc"
)

// Bash runs a shell command in the workspace root.
type Bash struct{}

type bashArgs struct {
	Command     string  `json:"command" alias:"cmd" required:"true"`
	TimeoutMS   flexInt `json:"timeout_ms" alias:"timeout"`
	Description string  `json:"description"`
}

// maxBashCapture is how much of a command's output the result keeps (head
// and tail); the rest goes to a file under StateDir/outputs.
const maxBashCapture = 30 << 10

// maxBashLog bounds that file: a command printing without end (a loop, a
// `yes`) must not fill the person's disk until its timeout.
var maxBashLog int64 = 64 << 20

// bashEnvOverrides are set for every command on top of the inherited
// environment.
var bashEnvOverrides = []string{"ULTRA=1", "GIT_TERMINAL_PROMPT=0", "PAGER=cat", "GIT_PAGER=cat"}

var outputSeq atomic.Int64

func (Bash) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "bash",
		Description: "Run bash -c in the workspace root; returns output and exit code. No stdin; long output is cut (full output saved to a file); background processes are killed at exit.",
		Parameters: schema(map[string]any{
			"command":     prop("string", "Command"),
			"timeout_ms":  prop("integer", "Timeout, ms (max 600000)"),
			"description": prop("string", "What it does, in a few words"),
		}, "command"),
	}
}

func (Bash) ReadOnly() bool { return false }

func (Bash) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a bashArgs
	if res, ok := decodeArgs("bash", raw, &a); !ok {
		return res
	}
	if strings.TrimSpace(a.Command) == "" {
		return malformed("argument \"command\" of bash must not be empty")
	}
	root, err := rootOf(env)
	if err != nil {
		return errorf("%v", err)
	}
	timeout := env.BashTimeout
	if timeout <= 0 {
		timeout = DefaultBashTimeout
	}
	if a.TimeoutMS.Set && a.TimeoutMS.N > 0 {
		timeout = time.Duration(a.TimeoutMS.N) * time.Millisecond
	}
	timeout = min(timeout, MaxBashTimeout)

	logPath := ""
	if env.StateDir != "" {
		logPath = filepath.Join(env.StateDir, "outputs",
			fmt.Sprintf("bash-%s-%d.log", time.Now().Format("20060102-150405"), outputSeq.Add(1)))
	}
	opts := proc.Options{
		Dir:        root,
		Env:        bashEnv(),
		Timeout:    timeout,
		MaxCapture: maxBashCapture,
		LogPath:    logPath,
		MaxLog:     maxBashLog,
		Tee:        env.Output,
	}
	env.Sandbox.Apply(&opts)
	res, err := proc.Shell(ctx, a.Command, opts)
	if err != nil {
		return errorf("could not start the command: %v", err)
	}
	saved := ""
	if res.LogPath != "" {
		if res.Truncated {
			saved = res.LogPath
		} else {
			_ = os.Remove(res.LogPath)
		}
	}

	var b strings.Builder
	out := strings.ToValidUTF8(strings.TrimRight(res.Output, "\n"), "\uFFFD")
	if out == "" {
		out = "(no output)"
	}
	b.WriteString(out)
	b.WriteString("\n\n")
	if res.Truncated {
		if saved != "" {
			shown := saved
			if within(root, saved) {
				shown = relTo(root, saved)
			}
			kept := "the full output"
			if res.LogCut {
				kept = "its first " + humanSize(maxBashLog)
			}
			fmt.Fprintf(&b, "[output truncated: %s in total, only the start and end are shown; %s is in %s (use read with offset/limit or grep on it)]\n", humanSize(res.TotalBytes), kept, shown)
		} else {
			fmt.Fprintf(&b, "[output truncated: %s in total, only the start and end are shown]\n", humanSize(res.TotalBytes))
		}
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "[timed out after %s; the command's process group was killed]\n", timeout)
	case res.Canceled:
		b.WriteString("[canceled; the command's process group was killed]\n")
	}
	fmt.Fprintf(&b, "[exit code %d]", res.ExitCode)

	data := map[string]any{
		"exit_code":   res.ExitCode,
		"duration_ms": res.Duration.Milliseconds(),
		"timed_out":   res.TimedOut,
		"truncated":   res.Truncated,
		"bytes":       res.TotalBytes,
	}
	if a.Description != "" {
		data["description"] = a.Description
	}
	if saved != "" {
		data["output_path"] = saved
	}
	return Result{
		Output:  b.String(),
		IsError: res.ExitCode != 0 || res.TimedOut || res.Canceled,
		Data:    data,
	}
}

// bashEnv is the inherited environment, without credentials (the model
// must not see the keys ultra talks to it with), with bashEnvOverrides.
func bashEnv() []string { return proc.Environ(bashEnvOverrides...) }

// ShellCommand returns the command a bash call would run, decoding its
// arguments exactly as Bash.Run does (aliases, double encoding and all), so
// that a guard judges the very command that would run. ok is false when
// the arguments name no command.
func ShellCommand(raw json.RawMessage) (command string, ok bool) {
	var a bashArgs
	if _, good := decodeArgs("bash", raw, &a); !good || strings.TrimSpace(a.Command) == "" {
		return "", false
	}
	return a.Command, true
}
