package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// TornError: the ledger's last line is incomplete (no newline at its end,
// or not valid JSON), as a write cut short by a crash leaves it. Nothing is
// appended after it until a person repairs it (RepairTorn).
type TornError struct {
	Path   string
	Line   int    // the torn line's number
	Offset int64  // where it starts; the intact lines end here
	Bytes  int    // how many bytes it has, newline included if any
	Reason string // "no newline at the end" or "not valid JSON"
}

// Error says where the torn line starts and how to repair it.
func (e *TornError) Error() string {
	back := "empty"
	if e.Line > 1 {
		back = fmt.Sprintf("line %d", e.Line-1)
	}
	return fmt.Sprintf("ledger %s line %d: torn last line, %d bytes at offset %d (%s: a write cut short?); nothing was changed: a repair saves them aside and cuts the file back to %s",
		e.Path, e.Line, e.Bytes, e.Offset, e.Reason, back)
}

// Fault is what is wrong with the first bad line of a broken chain.
type Fault string

// The faults a BrokenError names.
const (
	FaultJSON  Fault = "invalid JSON"   // not a JSON object of an entry
	FaultEntry Fault = "invalid entry"  // no kind or run id, or CR LF line endings
	FaultSeq   Fault = "seq gap"        // seq is not the line's number
	FaultPrev  Fault = "prev mismatch"  // prev is not the previous line's hash
	FaultRun   Fault = "run id differs" // from the first line's
)

// BrokenError: a line of the ledger breaks the chain: it was edited,
// deleted, moved or added by something other than Append.
type BrokenError struct {
	Path   string
	Line   int // the first bad line's number
	Fault  Fault
	Detail string // for people
}

// Error names the ledger, the line and what is wrong with it.
func (e *BrokenError) Error() string {
	return fmt.Sprintf("ledger %s line %d: %s", e.Path, e.Line, e.Detail)
}

// HeadError: the ledger does not hold, at the seq recorded elsewhere, the
// line whose hash was recorded with it.
type HeadError struct {
	Path    string
	Seq     int    // the recorded seq
	Want    string // the recorded hash
	Got     string // the hash of line Seq; "" when the ledger is shorter
	Entries int    // how many entries the ledger has
}

// Error says whether lines are missing or line Seq differs.
func (e *HeadError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("ledger %s has %d entries, but entry %d was recorded (lines removed from the end?)", e.Path, e.Entries, e.Seq)
	}
	return fmt.Sprintf("ledger %s line %d: hash %s differs from the recorded %s (the chain was recomputed after an edit?)", e.Path, e.Seq, short(e.Got), short(e.Want))
}

// Report is what Verify found.
type Report struct {
	Entries int    // intact entries (before the problem, if any)
	Head    string // hash of the last intact line; "" when none
	HeadSeq int    // its seq
	// Problem is nil when the ledger is intact; else a *TornError, a
	// *BrokenError, or why the file could not be read.
	Problem error
}

// String is the report for people: "intact: 12 entries, head 3f2a…" or the
// problem.
func (r Report) String() string {
	if r.Problem != nil {
		return r.Problem.Error()
	}
	switch r.Entries {
	case 0:
		return "intact: empty"
	case 1:
		return "intact: 1 entry, head " + short(r.Head)
	}
	return fmt.Sprintf("intact: %d entries, head %s", r.Entries, short(r.Head))
}

// Verify reads the ledger at path and checks its chain; a missing file is
// an intact, empty ledger.
func Verify(path string) Report {
	s, err := load(path)
	if err != nil {
		return Report{Problem: err}
	}
	return Report{Entries: len(s.entries), Head: s.head, HeadSeq: len(s.entries), Problem: s.problem}
}

// VerifyHead checks that the ledger at path is intact and that its line seq
// hashes to hash (as Head returned when it was recorded). It catches what
// the chain alone cannot: lines removed from the end, or every hash
// recomputed after an edit. The error is a *HeadError, or the ledger's
// problem (*TornError, *BrokenError) even when it lies after line seq.
func VerifyHead(path string, seq int, hash string) error {
	if seq < 1 {
		return fmt.Errorf("ledger %s: no entry %d to verify (seqs start at 1)", path, seq)
	}
	s, err := load(path)
	if err != nil {
		return err
	}
	if s.problem != nil {
		return s.problem
	}
	n := len(s.entries)
	if n < seq {
		return &HeadError{Path: path, Seq: seq, Want: hash, Entries: n}
	}
	got := s.head
	if seq < n {
		got = s.entries[seq].Prev // the chain is intact: line seq+1 names line seq's hash
	}
	if got != hash {
		return &HeadError{Path: path, Seq: seq, Want: hash, Got: got, Entries: n}
	}
	return nil
}

// RepairTorn is the explicit repair of a torn ledger, for a person to
// invoke: it copies the torn last line's bytes into path + ".torn-" + a
// UTC timestamp, then cuts the file back to its last intact line, and
// returns the copy's path. It refuses a ledger that is not torn, and one
// whose earlier lines are broken. It holds the ledger's exclusive lock
// throughout.
func RepairTorn(path string) (saved string, err error) {
	f, err := openFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "", fmt.Errorf("ledger %s: %w", path, err)
	}
	s := scan(path, b)
	var torn *TornError
	switch {
	case s.problem == nil:
		return "", fmt.Errorf("ledger %s is not torn (%d entries, intact); nothing to repair", path, len(s.entries))
	case !errors.As(s.problem, &torn):
		return "", fmt.Errorf("refusing to repair: %w; only a torn last line is cut off, a broken chain needs a person", s.problem)
	}

	saved = path + ".torn-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	out, err := os.OpenFile(saved, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return "", fmt.Errorf("ledger %s: saving the torn line: %w", path, err)
	}
	_, err = out.Write(b[torn.Offset:])
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("ledger %s: saving the torn line to %s: %w (the ledger is unchanged)", path, saved, err)
	}
	if err := f.Truncate(torn.Offset); err != nil {
		return saved, fmt.Errorf("ledger %s: torn line saved to %s, but cutting it off failed: %w", path, saved, err)
	}
	if err := f.Sync(); err != nil {
		return saved, fmt.Errorf("ledger %s: torn line saved to %s and cut off, but fsync failed: %w", path, saved, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return saved, fmt.Errorf("ledger %s: torn line saved to %s and cut off, but fsyncing the directory failed: %w", path, saved, err)
	}
	return saved, nil
}

// state is what a scan of a ledger's bytes found: the intact entries and
// where they end, and the first problem after them.
type state struct {
	entries []Entry
	end     int64  // offset just past the last intact line
	lastOff int64  // where the last intact line starts
	head    string // its hash
	problem error  // *TornError, *BrokenError or nil
}

// scan checks a ledger's bytes line by line and stops at the first problem.
func scan(path string, b []byte) state {
	var s state
	for off := 0; off < len(b); {
		num := len(s.entries) + 1
		n := bytes.IndexByte(b[off:], '\n')
		if n < 0 {
			s.problem = &TornError{Path: path, Line: num, Offset: int64(off), Bytes: len(b) - off, Reason: "no newline at the end"}
			return s
		}
		line := b[off : off+n]
		e, err := decode(line)
		if err != nil {
			if off+n+1 == len(b) && !json.Valid(line) {
				s.problem = &TornError{Path: path, Line: num, Offset: int64(off), Bytes: n + 1, Reason: "not valid JSON"}
			} else {
				s.problem = &BrokenError{Path: path, Line: num, Fault: FaultJSON, Detail: "not a valid entry: " + err.Error()}
			}
			return s
		}
		if p := s.check(e, line, num); p != nil {
			p.Path = path
			s.problem = p
			return s
		}
		s.entries = append(s.entries, e)
		s.head = lineHash(line)
		s.lastOff = int64(off)
		off += n + 1
		s.end = int64(off)
	}
	return s
}

// check is what is wrong with entry e, line num of the ledger, given the
// intact lines before it (nil when nothing is).
func (s *state) check(e Entry, line []byte, num int) *BrokenError {
	bad := func(f Fault, format string, args ...any) *BrokenError {
		return &BrokenError{Line: num, Fault: f, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case bytes.HasSuffix(line, []byte("\r")):
		return bad(FaultEntry, "line ends in CR LF (line endings converted, by git's autocrlf?)")
	case e.Seq != num:
		return bad(FaultSeq, "seq is %d, want %d (a line deleted, duplicated or moved?)", e.Seq, num)
	case num == 1 && e.Prev != "":
		return bad(FaultPrev, "prev hash is not empty on the first line (lines removed from the start?)")
	case e.Prev != s.head:
		return bad(FaultPrev, "prev hash does not match line %d (edited by hand?)", num-1)
	case e.Kind == "":
		return bad(FaultEntry, "entry has no kind")
	case e.Run == "":
		return bad(FaultEntry, "entry has no run id")
	case num > 1 && e.Run != s.entries[0].Run:
		return bad(FaultRun, "run id %q differs from %q on line 1", e.Run, s.entries[0].Run)
	}
	return nil
}

// short abbreviates a hash for people.
func short(hash string) string {
	if len(hash) <= 12 {
		return hash
	}
	return hash[:12] + "…"
}
