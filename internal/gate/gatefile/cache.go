package gatefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The gate cache is the repository's memory of full verifications:
// .ultra/state/gate-cache/KK/KEY.json, one signed record per key (a tree
// and everything else that decides what its tests do; the caller makes the
// key). Unlike decisions, an entry may be replaced: a record that does not
// verify is measured again and written over.

// CacheDir is the gate cache of the repository whose state directory is
// stateRoot (.ultra/state).
func CacheDir(stateRoot string) string { return filepath.Join(stateRoot, "gate-cache") }

// CachePath is the file of key in the cache dir.
func CachePath(dir, key string) string {
	if len(key) < 3 || strings.ContainsAny(key, `/\.`) {
		return filepath.Join(dir, "invalid-key")
	}
	return filepath.Join(dir, key[:2], key+".json")
}

// WriteCache records v under key, replacing an earlier record.
func WriteCache(dir, key string, v any) error {
	path := CachePath(dir, key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := writeTemp(filepath.Dir(path), v)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Rename(tmp, path)
}

// ReadCache reads the record of key into v; ok is false when there is
// none. A record that does not verify is an error wrapping ErrForged.
func ReadCache(dir, key string, v any) (ok bool, err error) {
	err = readJSON(CachePath(dir, key), v)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("gate cache: %w", err)
	}
	return true, nil
}
