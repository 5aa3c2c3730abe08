package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ultra-dev/ultra/internal/llm"
)

// Write creates or replaces a whole file.
type Write struct{}

type writeArgs struct {
	FilePath string `json:"file_path" alias:"path" required:"true"`
	Content  string `json:"content" required:"true"`
}

func (Write) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "write",
		Description: "Create or replace a whole file. Read an existing file first; prefer edit to change one.",
		Parameters: schema(map[string]any{
			"file_path": prop("string", "Path in the workspace"),
			"content":   prop("string", "Full content"),
		}, "file_path", "content"),
	}
}

func (Write) ReadOnly() bool { return false }

func (Write) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a writeArgs
	if res, ok := decodeArgs("write", raw, &a); !ok {
		return res
	}
	if strings.TrimSpace(a.FilePath) == "" {
		return malformed("argument \"file_path\" of write must not be empty")
	}
	rp, files, fail := writableTarget(env, a.FilePath)
	if fail != nil {
		return *fail
	}
	existed := false
	info, err := os.Stat(rp.Abs)
	switch {
	case err == nil:
		if info.IsDir() {
			return errorf("%s is a directory; give the path of a file", rp.Rel)
		}
		existed = true
		if err := files.Check(rp.Abs); err != nil {
			return errorf("%s", staleMessage("overwrite", rp.Rel, err))
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(rp.Abs), 0o755); err != nil {
			return errorf("cannot create the directory of %s: %v", rp.Rel, err)
		}
	default:
		return errorf("cannot write %s: %v", rp.Rel, err)
	}
	content := []byte(a.Content)
	if err := ReplaceFile(rp.Abs, content, 0o644); err != nil {
		return errorf("cannot write %s: %v", rp.Rel, err)
	}
	if info, err := os.Stat(rp.Abs); err == nil {
		files.Record(rp.Abs, info, content)
	}
	how := "new file"
	if existed {
		how = "overwrote"
	}
	lines := countLines(a.Content)
	return Result{
		Output: fmt.Sprintf("Wrote %d %s to %s (%s)", lines, plural(lines, "line", "lines"), rp.Rel, how),
		Data:   map[string]any{"path": rp.Rel, "lines": lines, "bytes": len(content), "created": !existed},
	}
}

// staleMessage explains why a tracked file may not be changed.
func staleMessage(verb, rel string, err error) string {
	switch {
	case errors.Is(err, ErrNotRead):
		return fmt.Sprintf("refusing to %s %s: it has not been read in this run. Read it first with the read tool.", verb, rel)
	case errors.Is(err, ErrChanged):
		detail := strings.TrimPrefix(strings.TrimPrefix(err.Error(), ErrChanged.Error()), ": ")
		if detail != "" {
			detail = " (" + detail + ")"
		}
		return fmt.Sprintf("refusing to %s %s: file changed on disk since you read it%s; read it again.", verb, rel, detail)
	}
	return fmt.Sprintf("cannot check %s: %v", rel, err)
}

// countLines counts the lines of s, a last line without newline included.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
