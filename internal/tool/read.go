package tool

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ultra-dev/ultra/internal/llm"
)

const (
	defaultReadLimit = 2000      // lines shown when no limit is given
	maxLineChars     = 2000      // longer lines are cut
	hugeFileSize     = 256 << 10 // files above this, read without a limit, get a note
	maxReadOutput    = 128 << 10 // bytes of numbered lines per call
	maxHashSize      = 64 << 20  // files above this are tracked by size and mtime only
	maxDirEntries    = 1000      // entries of a directory listing
	binarySniffBytes = 8 << 10   // bytes looked at to tell binary files
)

// Read shows a file with line numbers, or lists a directory.
type Read struct{}

type readArgs struct {
	FilePath string  `json:"file_path" alias:"path" required:"true"`
	Offset   flexInt `json:"offset"`
	Limit    flexInt `json:"limit"`
}

func (Read) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "read",
		Description: "Read a text file with line numbers (2000 lines unless offset/limit), or list a directory.",
		Parameters: schema(map[string]any{
			"file_path": prop("string", "Path in the workspace"),
			"offset":    prop("integer", "First line, 1-based"),
			"limit":     prop("integer", "Max lines"),
		}, "file_path"),
	}
}

func (Read) ReadOnly() bool { return true }

func (Read) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a readArgs
	if res, ok := decodeArgs("read", raw, &a); !ok {
		return res
	}
	if strings.TrimSpace(a.FilePath) == "" {
		return malformed("argument \"file_path\" of read must not be empty")
	}
	rp, err := resolvePath(env, a.FilePath)
	if err != nil {
		return errorf("%v", err)
	}
	info, err := os.Stat(rp.Abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errorf("file not found: %s", rp.Rel)
		}
		return errorf("cannot read %s: %v", rp.Rel, err)
	}
	if info.IsDir() {
		return listDir(rp)
	}
	if !info.Mode().IsRegular() {
		return errorf("%s is not a regular file (%s)", rp.Rel, info.Mode().Type())
	}
	files, err := env.tracker()
	if err != nil {
		return errorf("%v", err)
	}

	f, err := os.Open(rp.Abs)
	if err != nil {
		return errorf("cannot read %s: %v", rp.Rel, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		info = fi
	}
	hasher := sha256.New()
	counter := &lineCounter{}
	src := bufio.NewReaderSize(io.TeeReader(f, io.MultiWriter(hasher, counter)), 64<<10)
	// finish reads the rest (when small enough to hash), records the read
	// and returns the total number of lines (-1 when unknown).
	finish := func() int {
		if info.Size() > maxHashSize {
			files.RecordHash(rp.Abs, info, "")
			return -1
		}
		if _, err := io.Copy(io.Discard, src); err != nil {
			files.RecordHash(rp.Abs, info, "")
			return -1
		}
		files.RecordHash(rp.Abs, info, hex.EncodeToString(hasher.Sum(nil)))
		return counter.lines()
	}

	head, _ := src.Peek(binarySniffBytes)
	if len(head) == 0 {
		finish()
		return Result{
			Output: fmt.Sprintf("%s exists but is empty (0 bytes).", rp.Rel),
			Data:   map[string]any{"path": rp.Rel, "total_lines": 0},
		}
	}
	if isBinary(head, len(head) < binarySniffBytes) {
		finish()
		return errorf("%s is a binary file (%s); read only shows text. Inspect it with bash instead (e.g. `file %s`, `xxd %s | head`).",
			rp.Rel, humanSize(info.Size()), shellQuote(rp.Rel), shellQuote(rp.Rel))
	}

	start := max(a.Offset.N, 1)
	limit := defaultReadLimit
	if a.Limit.Set && a.Limit.N > 0 {
		limit = a.Limit.N
	}
	huge := info.Size() > hugeFileSize && !a.Limit.Set

	var out strings.Builder
	lineNo, shown, last := 0, 0, 0
	capped, cutLines := false, 0
	for shown < limit {
		if err := ctx.Err(); err != nil {
			return errorf("read of %s canceled", rp.Rel)
		}
		line, n, err := readLine(src, maxLineChars*utf8.UTFMax)
		if err != nil {
			if err != io.EOF {
				return errorf("cannot read %s: %v", rp.Rel, err)
			}
			break
		}
		lineNo++
		if lineNo < start {
			continue
		}
		text, cut := truncateRunes(string(line), maxLineChars)
		if cut || n > len(line) {
			text += fmt.Sprintf(" … [line truncated: %d bytes in total]", n)
			cutLines++
		}
		entry := fmt.Sprintf("%6d\t%s\n", lineNo, text)
		if shown > 0 && out.Len()+len(entry) > maxReadOutput {
			capped = true
			break
		}
		out.WriteString(entry)
		shown++
		last = lineNo
	}
	total := finish()

	data := map[string]any{"path": rp.Rel, "total_lines": total}
	if shown == 0 {
		if total >= 0 {
			return Result{
				Output: fmt.Sprintf("%s has only %d lines; offset %d is past the end.", rp.Rel, total, start),
				Data:   data,
			}
		}
		return Result{Output: fmt.Sprintf("%s has fewer than %d lines; offset %d is past the end.", rp.Rel, start, start), Data: data}
	}
	data["start"], data["end"] = start, last

	var notes []string
	if huge {
		notes = append(notes, fmt.Sprintf("File is large (%s).", humanSize(info.Size())))
	}
	if capped {
		notes = append(notes, fmt.Sprintf("Output capped at %s.", humanSize(maxReadOutput)))
	}
	switch {
	case total >= 0 && last < total:
		notes = append(notes, fmt.Sprintf("Showing lines %d-%d of %d. Use offset=%d to read more.", start, last, total, last+1))
	case total < 0 && (shown == limit || capped):
		notes = append(notes, fmt.Sprintf("Showing lines %d-%d; the file is too large to count its lines. Use offset=%d to read more.", start, last, last+1))
	}
	if cutLines > 0 {
		notes = append(notes, fmt.Sprintf("%d long line(s) were cut at %d characters.", cutLines, maxLineChars))
	}
	if len(notes) > 0 {
		data["partial"] = true
		out.WriteString("\n[" + strings.Join(notes, " ") + "]\n")
	}
	return Result{Output: strings.TrimSuffix(out.String(), "\n"), Data: data}
}

// listDir answers a read of a directory with its sorted entries.
func listDir(rp resolved) Result {
	entries, err := os.ReadDir(rp.Abs)
	if err != nil {
		return errorf("cannot list %s: %v", rp.Rel, err)
	}
	name := strings.TrimSuffix(rp.Rel, "/") + "/"
	if rp.Rel == "." {
		name = "The workspace root"
	}
	if len(entries) == 0 {
		return Result{Output: fmt.Sprintf("%s is an empty directory.", name), Data: map[string]any{"path": rp.Rel, "entries": 0}}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is a directory with %d %s:\n", name, len(entries), plural(len(entries), "entry", "entries"))
	for i, e := range entries {
		if i == maxDirEntries {
			fmt.Fprintf(&b, "[… %d more entries not shown; use glob to search it]\n", len(entries)-maxDirEntries)
			break
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(rp.Abs, e.Name())); err == nil && fi.IsDir() {
				isDir = true
			}
		}
		b.WriteString(e.Name())
		if isDir {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	return Result{Output: strings.TrimSuffix(b.String(), "\n"), Data: map[string]any{"path": rp.Rel, "entries": len(entries)}}
}

// readLine reads one line, without its line ending. It keeps at most keep
// bytes of it and reports the line's full length in n. At the end of the
// input it returns io.EOF (and no line).
func readLine(r *bufio.Reader, keep int) (line []byte, n int, err error) {
	var p0, p1 byte // the line's last two bytes
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line) < keep {
			line = append(line, chunk[:min(keep-len(line), len(chunk))]...)
		}
		n += len(chunk)
		for _, c := range chunk[max(0, len(chunk)-2):] {
			p0, p1 = p1, c
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		if n == 0 {
			return nil, 0, io.EOF
		}
		break
	}
	if p1 == '\n' {
		n--
		if n > 0 && p0 == '\r' {
			n--
		}
		line = line[:min(len(line), n)]
	}
	return line, n, nil
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}

// isBinary tells binary data from text by its first bytes: a NUL byte, or
// many bytes that are not valid UTF-8. complete says head is the whole
// file (so a rune cut at its end is real).
func isBinary(head []byte, complete bool) bool {
	if len(head) == 0 {
		return false
	}
	for _, c := range head {
		if c == 0 {
			return true
		}
	}
	if !complete && len(head) > utf8.UTFMax {
		// Ignore a rune cut by the sniff window.
		end := len(head)
		for i := 1; i < utf8.UTFMax && end-i >= 0; i++ {
			if utf8.RuneStart(head[end-i]) {
				if !utf8.FullRune(head[end-i:]) {
					head = head[:end-i]
				}
				break
			}
		}
	}
	invalid := 0
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			invalid++
		}
		i += size
	}
	return invalid*10 > len(head) // more than 10% invalid
}

// lineCounter counts lines of what is written to it.
type lineCounter struct {
	newlines int
	any      bool
	last     byte
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		c.any = true
		c.last = p[len(p)-1]
		for _, b := range p {
			if b == '\n' {
				c.newlines++
			}
		}
	}
	return len(p), nil
}

func (c *lineCounter) lines() int {
	if c.any && c.last != '\n' {
		return c.newlines + 1
	}
	return c.newlines
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
