// Package ledger keeps a run's ledger (.ultra/runs/<run-id>/ledger.jsonl),
// the append-only, tamper-evident record of a run's goals: one JSON entry a line, each naming the sha256 of
// the previous line's exact bytes, so an edited, deleted or moved line
// breaks the chain where it happened. The file lives in the repository and
// outlives sessions, machines and crashes.
//
// Nothing here rewrites or drops a line on its own: a torn last line (a
// write cut short) or a broken chain is reported, and appending stops until
// a person looks. RepairTorn is the one explicit repair, and it saves what it
// cuts off. A chain recomputed wholesale after an edit verifies again; only
// a head recorded elsewhere (VerifyHead) catches that, and the removal of
// lines from the end.
package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
)

// Kinds of entry Append writes. Entries read from disk may carry other
// kinds (written by a newer ultra); they are kept as they are.
const (
	KindPlanCreated      = "plan_created"
	KindPlanAccepted     = "plan_accepted"
	KindGoalStarted      = "goal_started"
	KindEvidenceCaptured = "evidence_captured"
	KindCriterionPassed  = "criterion_passed"
	KindCriterionFailed  = "criterion_failed"
	KindCriterionBlocked = "criterion_blocked"
	KindGoalCompleted    = "goal_completed"
	KindGoalFailed       = "goal_failed"
	KindGoalBlocked      = "goal_blocked"
	KindSteeringAccepted = "steering_accepted"
	KindSteeringRejected = "steering_rejected"
	KindCheckpoint       = "checkpoint"
	KindReviewVerdict    = "review_verdict"
	KindCancelled        = "cancelled"
	KindFinalGate        = "final_gate"
	KindResumed          = "resumed"
	// KindCriterionBase records a criterion's result on the run's base
	// tree, measured when the plan is proposed.
	KindCriterionBase = "criterion_base"
	// KindCheckpointFailed records that a goal's commit could not be made:
	// the goal is not complete.
	KindCheckpointFailed = "checkpoint_failed"
	// KindCleanupStarted records the start of the final gate's cleanup
	// pass: the commit it starts from and the files it may edit.
	KindCleanupStarted = "cleanup_started"
	// KindCleanupCommitted records a cleanup the gate and every essential
	// criterion passed again, committed on its own.
	KindCleanupCommitted = "cleanup_committed"
	// KindCleanupReverted records a cleanup that broke a test or a
	// criterion (or could not be committed): ultra put the final tree
	// back, and says what failed.
	KindCleanupReverted = "cleanup_reverted"
	// KindCleanupUnchanged records a cleanup pass that changed nothing:
	// the final gate's result stands, nothing runs again.
	KindCleanupUnchanged = "cleanup_unchanged"
	// KindGoalDispatched records that a parallel run gave a goal to a
	// worker (its run, its branch, the run's commit it starts from).
	KindGoalDispatched = "goal_dispatched"
	// KindMergeRejected records a worker's goal commit that did not land
	// on the run's branch (outside its claims, a conflict, the merged
	// tree red), sent back to its worker with what failed.
	KindMergeRejected = "merge_rejected"
)

var kinds = []string{
	KindPlanCreated, KindPlanAccepted, KindGoalStarted, KindEvidenceCaptured,
	KindCriterionPassed, KindCriterionFailed, KindCriterionBlocked,
	KindGoalCompleted, KindGoalFailed, KindGoalBlocked,
	KindSteeringAccepted, KindSteeringRejected, KindCheckpoint,
	KindReviewVerdict, KindCancelled, KindFinalGate, KindResumed,
	KindCriterionBase, KindCheckpointFailed,
	KindCleanupStarted, KindCleanupCommitted, KindCleanupReverted, KindCleanupUnchanged,
	KindGoalDispatched, KindMergeRejected,
}

// KnownKind reports whether Append writes entries of this kind.
func KnownKind(kind string) bool { return slices.Contains(kinds, kind) }

// Entry is one line of the ledger.
type Entry struct {
	Seq       int       `json:"seq"`  // 1-based, consecutive
	Time      time.Time `json:"time"` // UTC
	Kind      string    `json:"kind"`
	Run       string    `json:"run"` // the same on every line
	Goal      string    `json:"goal,omitempty"`
	Criterion string    `json:"criterion,omitempty"`
	// Digest is the sha256 of the evidence, or of the plan (goal.PlanDigest).
	Digest   string              `json:"digest,omitempty"`
	Evidence []goal.EvidenceFile `json:"evidence,omitempty"`
	Text     string              `json:"text,omitempty"` // a short human line
	Data     json.RawMessage     `json:"data,omitempty"`
	// Prev is the hex sha256 of the previous line's exact bytes without its
	// newline; "" on the first line.
	Prev string `json:"prev"`
	// MAC signs the entry (Unsigned) when the Ledger has a Sign function:
	// a chain anyone can recompute, an entry only the key's holder can
	// make.
	MAC string `json:"mac,omitempty"`
}

// Unsigned is the entry's line as it was signed: its encoding without the
// MAC and without the newline.
func Unsigned(e Entry) ([]byte, error) {
	e.MAC = ""
	b, err := encode(e)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

// ErrStale is wrapped by Append's error when the file changed since the
// Ledger read it (another writer, or a hand edit): open it again.
var ErrStale = errors.New("changed since it was read")

// Ledger is an opened ledger file. Its methods are safe for concurrent use;
// several Ledgers (in one process or several) may share a file: an
// exclusive flock orders their appends, and one that falls behind refuses
// to append rather than fork the chain.
type Ledger struct {
	// Now stamps entries appended without a time; Open sets time.Now.
	Now func() time.Time
	// Sign, when set, makes each appended entry's MAC from Unsigned(entry).
	Sign func(unsigned []byte) (string, error)

	mu      sync.Mutex
	path    string
	entries []Entry
	end     int64  // the file's size as last seen
	lastOff int64  // where the last line starts
	head    string // hash of the last line
	fault   error  // why Append refuses: the chain's problem, or a failed append
}

// Open reads the ledger at path (a missing file is an empty ledger) and
// verifies its chain. The path must not be a symbolic link.
//
// When the last line is torn (*TornError) or the chain is broken
// (*BrokenError), Open returns that error together with a Ledger that holds
// the intact entries before the problem, for reading; its Append refuses.
// The file is left exactly as it was. Other errors return a nil Ledger.
func Open(path string) (*Ledger, error) {
	s, err := load(path)
	if err != nil {
		return nil, err
	}
	l := &Ledger{
		Now:     time.Now,
		path:    path,
		entries: s.entries,
		end:     s.end,
		lastOff: s.lastOff,
		head:    s.head,
		fault:   s.problem,
	}
	return l, s.problem
}

// Read returns the entries of the ledger at path without opening it for
// appending. On a *TornError or *BrokenError it returns the intact entries
// before the problem along with the error.
func Read(path string) ([]Entry, error) {
	s, err := load(path)
	if err != nil {
		return nil, err
	}
	return s.entries, s.problem
}

// Entries returns a copy of the ledger's entries, oldest first.
func (l *Ledger) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// Head returns the last entry's seq and the hex sha256 of its line (0 and
// "" when the ledger is empty): record them elsewhere and VerifyHead can
// later tell whether the chain was recomputed.
func (l *Ledger) Head() (seq int, hash string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries), l.head
}

// Len is the number of entries.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Append writes e as the next line and returns it as written. It fills Seq
// and Prev, and Time when zero (from l.Now); times are stored in UTC. The
// kind must be one of the Kind constants, and the run id that of the
// ledger's first line.
//
// Under an exclusive flock it checks that the file is still what this
// Ledger last saw (size and last line); if not it refuses with an error
// wrapping ErrStale. The line goes out in one write(2) on a file opened
// O_APPEND and O_NOFOLLOW, then the file is fsynced, and its directory too
// when Append created the file. After a failed write or fsync the Ledger
// refuses further appends: open the file again to see where it stands.
func (l *Ledger) Append(e Entry) (Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fault != nil {
		return Entry{}, fmt.Errorf("refusing to append: %w", l.fault)
	}
	if !KnownKind(e.Kind) {
		return Entry{}, fmt.Errorf("ledger %s: unknown entry kind %q", l.path, e.Kind)
	}
	if e.Run == "" {
		return Entry{}, fmt.Errorf("ledger %s: %s entry has no run id", l.path, e.Kind)
	}
	if len(l.entries) > 0 && e.Run != l.entries[0].Run {
		return Entry{}, fmt.Errorf("ledger %s belongs to run %q; refusing an entry of run %q", l.path, l.entries[0].Run, e.Run)
	}
	e.Seq = len(l.entries) + 1
	e.Prev = l.head
	if e.Time.IsZero() {
		now := l.Now
		if now == nil {
			now = time.Now
		}
		e.Time = now()
	}
	e.Time = e.Time.UTC()
	e.MAC = ""
	if l.Sign != nil {
		unsigned, err := Unsigned(e)
		if err != nil {
			return Entry{}, fmt.Errorf("ledger %s: cannot encode the %s entry: %w", l.path, e.Kind, err)
		}
		if e.MAC, err = l.Sign(unsigned); err != nil {
			return Entry{}, fmt.Errorf("ledger %s: cannot sign the %s entry: %w", l.path, e.Kind, err)
		}
	}
	line, err := encode(e)
	if err != nil {
		return Entry{}, fmt.Errorf("ledger %s: cannot encode the %s entry: %w", l.path, e.Kind, err)
	}
	written, err := decode(line[:len(line)-1])
	if err != nil {
		return Entry{}, fmt.Errorf("ledger %s: the encoded %s entry does not read back: %w", l.path, e.Kind, err)
	}

	f, created, err := openAppend(l.path, l.end > 0)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close() // also releases the flock
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return Entry{}, fmt.Errorf("ledger %s: lock: %w", l.path, err)
	}
	if err := l.unchanged(f); err != nil {
		return Entry{}, err
	}
	if err := writeOnce(f, line); err != nil {
		l.fault = fmt.Errorf("ledger %s: appending line %d failed: %w; open it again", l.path, e.Seq, err)
		return Entry{}, l.fault
	}
	if err := f.Sync(); err != nil {
		l.fault = fmt.Errorf("ledger %s: line %d was written but fsync failed: %w; open it again", l.path, e.Seq, err)
		return Entry{}, l.fault
	}
	if created {
		if err := syncDir(filepath.Dir(l.path)); err != nil {
			l.fault = fmt.Errorf("ledger %s: line %d was written but the directory of the new file could not be fsynced: %w; open it again", l.path, e.Seq, err)
			return Entry{}, l.fault
		}
	}
	l.entries = append(l.entries, written)
	l.lastOff = l.end
	l.end += int64(len(line))
	l.head = lineHash(line[:len(line)-1])
	return written, nil
}

// unchanged checks, under the lock, that f is still the file this Ledger
// last saw: the same size and the same last line.
func (l *Ledger) unchanged(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	if fi.Size() != l.end {
		return fmt.Errorf("ledger %s %w: it has %d bytes, %d when this ledger read it (another writer or a hand edit); open it again to append", l.path, ErrStale, fi.Size(), l.end)
	}
	if l.end == 0 {
		return nil
	}
	last := make([]byte, l.end-l.lastOff)
	if _, err := f.ReadAt(last, l.lastOff); err != nil {
		return fmt.Errorf("ledger %s: reading line %d again: %w", l.path, len(l.entries), err)
	}
	if last[len(last)-1] != '\n' || lineHash(last[:len(last)-1]) != l.head {
		return fmt.Errorf("ledger %s %w: line %d is not the line this ledger read (edited by hand?); open it again to append", l.path, ErrStale, len(l.entries))
	}
	return nil
}

// encode is e's line, newline included. HTML characters stay as they are
// (for people reading the file); Data is compacted, so the line holds no
// other newline.
func encode(e Entry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if bytes.IndexByte(b[:len(b)-1], '\n') >= 0 {
		return nil, errors.New("the encoded line holds a newline")
	}
	return b, nil
}

// decode parses one line (without its newline) into an entry.
func decode(line []byte) (Entry, error) {
	var e Entry
	if len(line) == 0 || line[0] != '{' {
		return e, errors.New("not a JSON object")
	}
	err := json.Unmarshal(line, &e)
	return e, err
}

// LineHash is the hex sha256 of a line's exact bytes (without its
// newline): what the next line's Prev, and a recorded head, name.
func LineHash(line []byte) string { return lineHash(line) }

// lineHash is LineHash, inside the package.
func lineHash(line []byte) string {
	s := sha256.Sum256(line)
	return hex.EncodeToString(s[:])
}

// The flags every open of a ledger file shares: never through a symbolic
// link, and never blocking on a FIFO or device someone put in its place.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// openFile opens the ledger file at path, refusing a symbolic link and
// anything but a regular file.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|openFlags, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("ledger %s is a symbolic link; refusing to follow it", path)
	}
	if pe, ok := err.(*fs.PathError); ok {
		return nil, fmt.Errorf("ledger %s: %s: %w", path, pe.Op, pe.Err)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("ledger %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openAppend opens the ledger file for appending (read-write, so the
// staleness check reads the very file it then writes). When the Ledger saw
// no bytes it creates the file, and reports whether it did; otherwise the
// file must still be there.
func openAppend(path string, exists bool) (f *os.File, created bool, err error) {
	const flag = os.O_RDWR | os.O_APPEND
	if !exists {
		f, err = openFile(path, flag|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
		// Another writer created it since, or something else is there:
		// the open below and the staleness check tell.
	}
	f, err = openFile(path, flag, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("ledger %s %w: it is gone; open it again to append", path, ErrStale)
	}
	if err != nil {
		return nil, false, err
	}
	return f, false, nil
}

// writeOnce writes b with a single write(2): a short write is an error,
// never completed by a second write that another appender could precede.
func writeOnce(f *os.File, b []byte) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if werr != syscall.EINTR { // EINTR: nothing was written
				return true
			}
		}
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("short write: %d of %d bytes (the last line is now torn)", n, len(b))
	}
	return nil
}

// syncDir fsyncs a directory, so a file just created in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// load reads the ledger at path under a shared flock (so an append in
// progress is never seen half-written) and scans it. A missing file is an
// empty ledger.
func load(path string) (state, error) {
	b, err := readLocked(path)
	if err != nil {
		return state{}, err
	}
	return scan(path, b), nil
}

// readLocked is the ledger file's bytes, read under a shared flock; nil
// for a missing file.
func readLocked(path string) ([]byte, error) {
	f, err := openFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	return b, nil
}

// Lines are the exact bytes (without the newline) of the intact lines of
// the ledger at path, line i holding entry i+1; with the ledger's
// problem after them, as Read.
func Lines(path string) ([][]byte, error) {
	b, err := readLocked(path)
	if err != nil {
		return nil, err
	}
	s := scan(path, b)
	lines := make([][]byte, 0, len(s.entries))
	for rest := b[:s.end]; len(rest) > 0; {
		n := bytes.IndexByte(rest, '\n')
		lines = append(lines, rest[:n])
		rest = rest[n+1:]
	}
	return lines, s.problem
}

// Scan reads a ledger's bytes (name says whose, in errors) as Read reads
// its file: the intact entries, and the problem after them.
func Scan(name string, b []byte) ([]Entry, error) {
	s := scan(name, b)
	return s.entries, s.problem
}
