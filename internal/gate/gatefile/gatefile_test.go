package gatefile

import (
	"errors"
	"path/filepath"

	"github.com/ultra-dev/ultra/internal/verify/report"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/gate"
)

func TestWriteReadOnce(t *testing.T) {
	dir := t.TempDir()
	if ds, err := Read(dir + "/missing"); err != nil || ds != nil || Next(ds) != 1 {
		t.Fatal(ds, err)
	}
	for _, n := range []int{2, 1, 10} {
		if _, err := Write(dir, gate.Decision{Schema: 1, N: n, Status: gate.Fail, Time: time.Unix(int64(n), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := Read(dir)
	if err != nil || len(ds) != 3 || ds[0].N != 1 || ds[2].N != 10 || Next(ds) != 11 {
		t.Fatalf("%+v %v", ds, err)
	}
	if _, err := Write(dir, gate.Decision{N: 2, Status: gate.Pass}); err == nil || !strings.Contains(err.Error(), "never rewritten") {
		t.Fatalf("rewrite allowed: %v", err)
	}
	fi, _ := os.Stat(Path(dir, 1))
	if fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("gate file is writable: %v", fi.Mode())
	}
	os.WriteFile(dir+"/gate-11.json", []byte("{not json"), 0o644)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "gate-11.json") {
		t.Fatalf("corrupt file not reported: %v", err)
	}
}

func TestBaseline(t *testing.T) {
	dir := t.TempDir()
	if b, err := ReadBaseline(dir); b != nil || err != nil {
		t.Fatal(b, err)
	}
	if err := WriteBaseline(dir, gate.Baseline{Tree: "x", Evaluated: true, Executed: 3}); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBaseline(dir)
	if err != nil || b.Tree != "x" || b.Executed != 3 {
		t.Fatal(b, err)
	}
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gatefile-state")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// A decision with every field set survives signing and reading exactly;
// any change to the file's record, or a file signed with another key, is
// refused.
func TestSignedDecisions(t *testing.T) {
	dir := t.TempDir()
	d := gate.Decision{Schema: 1, N: 1, Time: time.Date(2026, 11, 24, 1, 2, 3, 456789, time.FixedZone("x", 3600)),
		Run: "r", Goal: "G001", Tree: "abc", Commands: []gate.Command{{Command: "go test ./...", ExitCode: 1, Duration: 1500 * time.Millisecond, Passed: 3, Failed: 1}},
		Counts: gate.Counts{Passed: 3, Failed: 1, Executed: 4}, Failing: []gate.Failure{{Name: "TestX", File: "x_test.go", Line: 3, Message: "got 1"}},
		Flaky: []string{"TestY"}, Status: gate.Fail, Reasons: []string{"1 test failed", "ünïcode <&>"},
		Waiver: &gate.Waiver{By: "p", Reason: "why"}}
	p, err := Write(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Read(dir)
	if err != nil || len(ds) != 1 || ds[0].Reasons[1] != "ünïcode <&>" || ds[0].Waiver.By != "p" || ds[0].Commands[0].Duration != 1500*time.Millisecond {
		t.Fatalf("%+v %v", ds, err)
	}
	raw, _ := os.ReadFile(p)
	if !strings.Contains(string(raw), `"mac": "`) {
		t.Fatalf("no MAC in the file:\n%s", raw)
	}
	forge := func(name, content string) error {
		d2 := t.TempDir()
		os.WriteFile(filepath.Join(d2, name), []byte(content), 0o444)
		_, err := Read(d2)
		return err
	}
	edited := strings.Replace(string(raw), `"gate_status": "FAIL"`, `"gate_status": "PASS"`, 1)
	if edited == string(raw) {
		t.Fatal("test did not edit the status")
	}
	for name, content := range map[string]string{
		"edited":       edited,
		"mac removed":  strings.Replace(string(raw), `"mac"`, `"mac_"`, 1),
		"field added":  strings.Replace(string(raw), `"n": 1,`, `"n": 1, "cached_from": 1,`, 1),
		"hand written": `{"n": 1, "gate_status": "PASS", "tree": "abc"}`,
	} {
		if err := forge("gate-1.json", content); !errors.Is(err, ErrForged) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Signed with another installation's key.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if _, err := Read(dir); !errors.Is(err, ErrForged) {
		t.Fatalf("a decision of another installation verified: %v", err)
	}
	if _, err := ReadBaseline(dir); err != nil {
		t.Fatal(err)
	}
}

func TestSignedBaseline(t *testing.T) {
	dir := t.TempDir()
	if err := WriteBaseline(dir, gate.Baseline{Tree: "x", Evaluated: true, Executed: 3, Tests: map[string]report.Status{"a": report.Passed, "b": report.Failed}}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(BaselinePath(dir))
	os.Chmod(BaselinePath(dir), 0o644)
	os.WriteFile(BaselinePath(dir), []byte(strings.Replace(string(raw), `"executed": 3`, `"executed": 4`, 1)), 0o444)
	if _, err := ReadBaseline(dir); !errors.Is(err, ErrForged) {
		t.Fatalf("edited baseline read: %v", err)
	}
}

func TestKeyIsPrivate(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	k, err := Key()
	if err != nil || len(k) != 32 {
		t.Fatal(k, err)
	}
	p, _ := KeyPath()
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
}

// Many processes making the key at once all end up with the same one.
func TestKeyRace(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	p, _ := KeyPath()
	keys := make(chan string, 16)
	for range 16 {
		go func() {
			// Each goroutine plays a fresh process: no cached key.
			keyMu.Lock()
			delete(keyByAt, p)
			keyMu.Unlock()
			k, err := Key()
			if err != nil {
				keys <- "error: " + err.Error()
				return
			}
			keys <- string(k)
		}()
	}
	first := <-keys
	for range 15 {
		if k := <-keys; k != first {
			t.Fatalf("two keys: %q and %q", first, k)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != first {
		t.Fatal("the key on disk is not the one used")
	}
}

// Test output is not always valid UTF-8; a decision quoting it still
// verifies when read back.
func TestSignedDecisionWithInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	d := gate.Decision{N: 1, Status: gate.Fail, Reasons: []string{"bad \xff\xfe bytes"}, Failing: []gate.Failure{{Name: "T", Message: "\xc3\x28"}}}
	if _, err := Write(dir, d); err != nil {
		t.Fatal(err)
	}
	if ds, err := Read(dir); err != nil || len(ds) != 1 {
		t.Fatalf("%v %v", ds, err)
	}
	if err := WriteBaseline(dir, gate.Baseline{Tree: "x", Tests: map[string]report.Status{"\xff": report.Passed}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBaseline(dir); err != nil {
		t.Fatal(err)
	}
}

// Records under a trusted directory (a fleet's run's view) verify with
// the fleet's key, and nowhere else; a file changed there still does not.
func TestTrustedView(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	fleetKey, err := Key()
	if err != nil {
		t.Fatal(err)
	}
	worker := t.TempDir()
	if _, err := Write(worker, gate.Decision{N: 1, Status: gate.Pass, Tree: "abc"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(Path(worker, 1))
	if err != nil {
		t.Fatal(err)
	}
	// Another machine: its own key.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	view, elsewhere := t.TempDir(), t.TempDir()
	for _, dir := range []string{filepath.Join(view, "runs", "r"), elsewhere} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(Path(dir, 1), raw, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Read(filepath.Join(view, "runs", "r")); !errors.Is(err, ErrForged) {
		t.Fatalf("before Trust: %v", err)
	}
	Trust(view, fleetKey)
	ds, err := Read(filepath.Join(view, "runs", "r"))
	if err != nil || len(ds) != 1 || ds[0].Tree != "abc" {
		t.Fatalf("the view: %+v %v", ds, err)
	}
	if _, err := Read(elsewhere); !errors.Is(err, ErrForged) {
		t.Fatalf("the fleet's key trusted outside its view: %v", err)
	}
	if _, err := Read(view + "-other"); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), `"abc"`, `"abd"`, 1)
	if err := os.WriteFile(Path(filepath.Join(view, "runs", "r"), 2), []byte(strings.Replace(edited, `"n": 1`, `"n": 2`, 1)), 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(filepath.Join(view, "runs", "r")); !errors.Is(err, ErrForged) {
		t.Fatalf("an edited record in the view: %v", err)
	}
}
