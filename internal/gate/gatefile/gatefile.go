// Package gatefile reads and writes a run's gate decision files,
// .ultra/state/runs/RUN_ID/gate-N.json, and its baseline.json. Files are
// written once, atomically, read-only; nothing rewrites a decision.
//
// Every file carries a MAC (HMAC-SHA256) of its record, keyed by a secret
// of this installation that only ultra reads ($XDG_STATE_HOME/ultra/
// gate.key, outside every sandbox). Read refuses a file whose MAC does not
// verify: a decision forged, edited or copied from elsewhere is never
// believed, whatever its size, mode or time say.
package gatefile

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/gate"
)

// ErrForged marks a gate file whose MAC does not verify.
var ErrForged = errors.New("not signed by ultra")

// Path is the file of decision n in runDir.
func Path(runDir string, n int) string {
	return filepath.Join(runDir, fmt.Sprintf("gate-%d.json", n))
}

// BaselinePath is the run's baseline file.
func BaselinePath(runDir string) string { return filepath.Join(runDir, "baseline.json") }

// Write records d as gate-N.json; it refuses to replace an existing file.
func Write(runDir string, d gate.Decision) (string, error) {
	p := Path(runDir, d.N)
	return p, writeOnce(p, d)
}

// Read returns the run's decisions in order. A file that cannot be read is
// an error naming it: a corrupt decision is never skipped silently.
func Read(runDir string) ([]gate.Decision, error) {
	entries, err := os.ReadDir(runDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []gate.Decision
	for _, e := range entries {
		if _, ok := number(e.Name()); !ok {
			continue
		}
		var d gate.Decision
		if err := readJSON(filepath.Join(runDir, e.Name()), &d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out, nil
}

// Numbers are the numbers of the decision files in runDir, in order
// (their files unread: what they say is Read's to check).
func Numbers(runDir string) []int {
	entries, _ := os.ReadDir(runDir)
	var ns []int
	for _, e := range entries {
		if n, ok := number(e.Name()); ok {
			ns = append(ns, n)
		}
	}
	sort.Ints(ns) // by name, gate-10 comes before gate-2
	return ns
}

// number is the decision number of a file called name (gate-N.json).
func number(name string) (int, bool) {
	if !strings.HasPrefix(name, "gate-") || !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "gate-"), ".json"))
	return n, err == nil
}

// Next is the number of the run's next decision.
func Next(ds []gate.Decision) int {
	if len(ds) == 0 {
		return 1
	}
	return ds[len(ds)-1].N + 1
}

// WriteBaseline records the run's baseline.
func WriteBaseline(runDir string, b gate.Baseline) error {
	return writeOnce(BaselinePath(runDir), b)
}

// ReadBaseline returns the run's baseline, or nil when it has none.
func ReadBaseline(runDir string) (*gate.Baseline, error) {
	var b gate.Baseline
	err := readJSON(BaselinePath(runDir), &b)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &b, nil
}

func writeOnce(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s already exists: gate files are never rewritten", path)
	}
	tmp, err := writeTemp(filepath.Dir(path), v)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	// Link, not rename: it fails when another writer got there first.
	if err := os.Link(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeTemp writes v signed to a new read-only file in dir, synced, and
// returns its name (the caller links or renames it into place, and removes
// it).
func writeTemp(dir string, v any) (string, error) {
	b, err := signed(v)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Chmod(0o444)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: corrupt gate file: %w", path, err)
	}
	var m struct {
		MAC string `json:"mac"`
	}
	_ = json.Unmarshal(b, &m)
	want, err := mac(path, v)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	got, _ := hex.DecodeString(m.MAC)
	if m.MAC == "" || !hmac.Equal(got, want) {
		return fmt.Errorf("%s: %w: its MAC does not verify with this installation's gate key, so it was not written by ultra here or was changed since", path, ErrForged)
	}
	return nil
}

// signed is v's JSON with its MAC as the last field, indented. What is
// signed is the record as it will read back: JSON does not round-trip
// every string (invalid UTF-8 becomes U+FFFD), so the record goes through
// JSON once before it is signed.
func signed(v any) ([]byte, error) {
	first, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	back := reflect.New(reflect.TypeOf(v))
	if err := json.Unmarshal(first, back.Interface()); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(back.Elem().Interface())
	if err != nil {
		return nil, err
	}
	sum, err := macOf(payload)
	if err != nil {
		return nil, err
	}
	if len(payload) < 2 || payload[len(payload)-1] != '}' {
		return nil, fmt.Errorf("gate record is not a JSON object")
	}
	var out bytes.Buffer
	out.Write(payload[:len(payload)-1])
	if len(payload) > 2 {
		out.WriteByte(',')
	}
	fmt.Fprintf(&out, "%q:%q}", "mac", hex.EncodeToString(sum))
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	return pretty.Bytes(), nil
}

// mac is the MAC of a record as read back: of its JSON encoding, which is
// the encoding it was signed in (records round-trip through JSON exactly).
func mac(path string, v any) ([]byte, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	key, err := keyFor(path)
	if err != nil {
		return nil, err
	}
	return macWith(key, payload), nil
}

// MAC is the hex MAC of payload under the installation's gate key (what
// signs ultra's other records: the goal ledger's entries).
func MAC(payload []byte) (string, error) {
	m, err := macOf(payload)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(m), nil
}

// ValidMAC reports whether mac is MAC(payload).
func ValidMAC(payload []byte, mac string) bool {
	want, err := macOf(payload)
	got, derr := hex.DecodeString(mac)
	return err == nil && derr == nil && hmac.Equal(want, got)
}

// ValidMACAt reports whether mac is the MAC of payload, a record read
// from path, under the key that signs the records there (Trust).
func ValidMACAt(path string, payload []byte, mac string) bool {
	key, err := keyFor(path)
	got, derr := hex.DecodeString(mac)
	return err == nil && derr == nil && hmac.Equal(macWith(key, payload), got)
}

func macOf(payload []byte) ([]byte, error) {
	key, err := Key()
	if err != nil {
		return nil, err
	}
	return macWith(key, payload), nil
}

func macWith(key, payload []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(payload)
	return h.Sum(nil)
}

var (
	trustMu sync.Mutex
	trusted = map[string][]byte{}
)

// Trust makes the records under dir, a view of a fleet's run rebuilt on
// this machine from the shared store, verify with key (the fleet's, the
// one its machines signed them with) instead of this installation's.
// Nothing is ever signed with a trusted key here.
func Trust(dir string, key []byte) {
	trustMu.Lock()
	defer trustMu.Unlock()
	trusted[filepath.Clean(dir)] = bytes.Clone(key)
}

// keyFor is the key the records at path verify with: a trusted view's,
// or this installation's.
func keyFor(path string) ([]byte, error) {
	trustMu.Lock()
	for dir, k := range trusted {
		if rel, err := filepath.Rel(dir, filepath.Clean(path)); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			trustMu.Unlock()
			return k, nil
		}
	}
	trustMu.Unlock()
	return Key()
}

var (
	keyMu   sync.Mutex
	keyByAt = map[string][]byte{}
)

// KeyPath is the installation's gate key file.
func KeyPath() (string, error) {
	dir, err := config.StateDir()
	if err != nil {
		return "", fmt.Errorf("no place for ultra's gate key: %w", err)
	}
	return filepath.Join(dir, "gate.key"), nil
}

// Key is the installation's gate key, made (32 random bytes, mode 0600)
// the first time it is needed.
func Key() ([]byte, error) {
	path, err := KeyPath()
	if err != nil {
		return nil, err
	}
	keyMu.Lock()
	defer keyMu.Unlock()
	if k, ok := keyByAt[path]; ok {
		return k, nil
	}
	k, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		k = make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		// Written whole to a file of its own, then linked into place: an
		// ultra starting at the same moment finds either no key or all of
		// it, and when two make one, both use the one that got there first.
		tmp, terr := os.CreateTemp(filepath.Dir(path), ".gate.key-*")
		if terr != nil {
			return nil, fmt.Errorf("creating ultra's gate key %s: %w", path, terr)
		}
		defer os.Remove(tmp.Name())
		_, werr := tmp.Write(k)
		if err := tmp.Chmod(0o600); werr == nil {
			werr = err
		}
		if err := tmp.Close(); werr == nil {
			werr = err
		}
		if werr != nil {
			return nil, fmt.Errorf("writing ultra's gate key %s: %w", path, werr)
		}
		if err := os.Link(tmp.Name(), path); err != nil {
			if !errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("creating ultra's gate key %s: %w", path, err)
			}
			if k, err = os.ReadFile(path); err != nil {
				return nil, err
			}
		}
	} else if err != nil {
		return nil, fmt.Errorf("reading ultra's gate key %s: %w", path, err)
	}
	if len(k) < 32 {
		return nil, fmt.Errorf("ultra's gate key %s is too short (%d bytes); remove it to make a new one (existing gate decisions will then no longer verify)", path, len(k))
	}
	keyByAt[path] = k
	return k, nil
}
