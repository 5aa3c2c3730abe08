package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"sync"
	"time"
)

// Errors of FileTracker.Check, to tell with errors.Is.
var (
	ErrNotRead = errors.New("file has not been read in this run")
	ErrChanged = errors.New("file changed on disk since it was read")
)

// FileRecord is what a file looked like when ultra last read or wrote it.
type FileRecord struct {
	ModTime time.Time `json:"mod_time"`
	Size    int64     `json:"size"`
	Hash    string    `json:"hash,omitempty"` // hex SHA-256 of the content; empty when the file was too large to hash
}

// FileTrackerSnapshot is the persistent form of a FileTracker: records by
// absolute real path.
type FileTrackerSnapshot map[string]FileRecord

// FileTracker remembers which files the run has read (or written), so that
// write and edit only change files whose current content the model has
// seen. It is safe for concurrent use; the zero value is ready.
type FileTracker struct {
	mu    sync.Mutex
	files map[string]FileRecord
}

// NewFileTracker returns an empty tracker.
func NewFileTracker() *FileTracker { return &FileTracker{} }

// hashBytes returns the hex SHA-256 of content.
func hashBytes(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// Record notes that path (absolute, real) was read or written with the
// given content and file info.
func (t *FileTracker) Record(path string, info fs.FileInfo, content []byte) {
	t.RecordHash(path, info, hashBytes(content))
}

// RecordHash is Record for a caller that hashed the content itself; an
// empty hash means only the modification time and size are compared.
func (t *FileTracker) RecordHash(path string, info fs.FileInfo, hash string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.files == nil {
		t.files = map[string]FileRecord{}
	}
	t.files[path] = FileRecord{ModTime: info.ModTime(), Size: info.Size(), Hash: hash}
}

// Get returns the record of path.
func (t *FileTracker) Get(path string) (FileRecord, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.files[path]
	return r, ok
}

// Forget drops the record of path.
func (t *FileTracker) Forget(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.files, path)
}

// Check returns nil when path was read in this run and is unchanged since;
// otherwise an error wrapping ErrNotRead or ErrChanged. The content
// decides: a file merely touched (new modification time, same bytes)
// counts as unchanged.
func (t *FileTracker) Check(path string) error {
	if _, ok := t.Get(path); !ok {
		return ErrNotRead
	}
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: it no longer exists", ErrChanged)
		}
		return err
	}
	return t.check(path, info, func() (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	})
}

// checkContent is Check for a caller that already holds the file's
// current info and content.
func (t *FileTracker) checkContent(path string, info fs.FileInfo, content []byte) error {
	return t.check(path, info, func() (string, error) { return hashBytes(content), nil })
}

func (t *FileTracker) check(path string, info fs.FileInfo, hash func() (string, error)) error {
	rec, ok := t.Get(path)
	if !ok {
		return ErrNotRead
	}
	if info.IsDir() {
		return fmt.Errorf("%w: it is now a directory", ErrChanged)
	}
	if info.Size() != rec.Size {
		return ErrChanged
	}
	if rec.Hash == "" {
		if !info.ModTime().Equal(rec.ModTime) {
			return ErrChanged
		}
		return nil
	}
	h, err := hash()
	if err != nil {
		return err
	}
	if h != rec.Hash {
		return ErrChanged
	}
	if !info.ModTime().Equal(rec.ModTime) {
		t.RecordHash(path, info, h)
	}
	return nil
}

// Snapshot returns a copy of all records.
func (t *FileTracker) Snapshot() FileTrackerSnapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := make(FileTrackerSnapshot, len(t.files))
	maps.Copy(s, t.files)
	return s
}

// Restore replaces all records with those of s.
func (t *FileTracker) Restore(s FileTrackerSnapshot) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.files = make(map[string]FileRecord, len(s))
	maps.Copy(t.files, s)
}

// MarshalJSON encodes the tracker as its snapshot.
func (t *FileTracker) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.Snapshot())
}

// UnmarshalJSON restores the tracker from a snapshot.
func (t *FileTracker) UnmarshalJSON(b []byte) error {
	var s FileTrackerSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t.Restore(s)
	return nil
}
