package ledger_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
)

// t0 is the clock's first reading in the tests.
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)

// clock returns a Now that starts at t0 and moves a second a call.
func clock() func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n-1) * time.Second)
	}
}

// newLedger appends n checkpoint entries ("step 1", …) to a fresh ledger
// and returns its path.
func newLedger(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	l := mustOpen(t, path)
	l.Now = clock()
	for i := 1; i <= n; i++ {
		if _, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1", Text: "step " + string(rune('0'+i%10))}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func mustOpen(t testing.TB, path string) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lines splits a well-formed ledger into its lines, without newlines.
func lines(t testing.TB, path string) [][]byte {
	t.Helper()
	b := readFile(t, path)
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end in a newline", path)
	}
	return bytes.Split(b[:len(b)-1], []byte("\n"))
}

func join(ls [][]byte) []byte {
	var b []byte
	for _, l := range ls {
		b = append(append(b, l...), '\n')
	}
	return b
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// rechain re-encodes lines after edit changed their entries, recomputing
// every prev as a forger would (seq is left as edit made it).
func rechain(t testing.TB, ls [][]byte, edit func(i int, e *ledger.Entry)) [][]byte {
	t.Helper()
	var out [][]byte
	prev := ""
	for i, l := range ls {
		var e ledger.Entry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(i+1, &e)
		}
		e.Prev = prev
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		prev = hash(b)
	}
	return out
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAppendReopenRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	l := mustOpen(t, path)
	if seq, h := l.Head(); seq != 0 || h != "" || l.Len() != 0 {
		t.Fatalf("missing file: Head() = %d, %q, Len() = %d; want an empty ledger", seq, h, l.Len())
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created the file: %v", err)
	}
	l.Now = clock()
	zone := time.FixedZone("UTC+2", 2*3600)
	in := []ledger.Entry{
		{Kind: ledger.KindPlanCreated, Run: "run-1", Digest: strings.Repeat("ab", 32), Text: "plan: 2 goals"},
		{Kind: ledger.KindPlanAccepted, Run: "run-1", Time: time.Date(2025, 3, 4, 9, 0, 0, 0, zone), Text: "accepted by person"},
		{Kind: ledger.KindEvidenceCaptured, Run: "run-1", Goal: "G001-login", Criterion: "G001-C1",
			Digest:   strings.Repeat("cd", 32),
			Evidence: []goal.EvidenceFile{{Name: "stdout", Path: ".ultra/evidence/G001-C1/stdout.txt", SHA256: strings.Repeat("ef", 32), Bytes: 42}},
			Text:     "a <b> & \"quoted\"\nsecond line",
			Data:     json.RawMessage("{ \"exit\": 0,\n \"ms\": [1, 2] }")},
		{Kind: ledger.KindCriterionPassed, Run: "run-1", Goal: "G001-login", Criterion: "G001-C1", Seq: 99, Prev: "forged"},
	}
	var out []ledger.Entry
	for _, e := range in {
		w, err := l.Append(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}

	ls := lines(t, path)
	if len(ls) != len(in) {
		t.Fatalf("file has %d lines, want %d", len(ls), len(in))
	}
	for i, w := range out {
		if w.Seq != i+1 {
			t.Errorf("entry %d: Seq = %d", i+1, w.Seq)
		}
		want := ""
		if i > 0 {
			want = hash(ls[i-1])
		}
		if w.Prev != want {
			t.Errorf("entry %d: Prev = %q, want the hash of line %d, %q", i+1, w.Prev, i, want)
		}
		if w.Time.Location() != time.UTC {
			t.Errorf("entry %d: time %v is not UTC", i+1, w.Time)
		}
	}
	// The clock is read for the entries without a time only.
	if out[0].Time != t0 || out[2].Time != t0.Add(time.Second) || out[3].Time != t0.Add(2*time.Second) {
		t.Errorf("zero times not taken from l.Now: %v, %v, %v", out[0].Time, out[2].Time, out[3].Time)
	}
	if want := time.Date(2025, 3, 4, 7, 0, 0, 0, time.UTC); out[1].Time != want {
		t.Errorf("given time stored as %v, want %v", out[1].Time, want)
	}
	if got := string(out[2].Data); got != `{"exit":0,"ms":[1,2]}` {
		t.Errorf("Data written as %s, want it compacted", got)
	}
	if !bytes.Contains(ls[2], []byte(`a <b> & \"quoted\"\nsecond line`)) {
		t.Errorf("text not written plainly: %s", ls[2])
	}
	if seq, h := l.Head(); seq != 4 || h != hash(ls[3]) {
		t.Errorf("Head() = %d, %s; want 4, %s", seq, h, hash(ls[3]))
	}

	again := mustOpen(t, path)
	if got := again.Entries(); !reflect.DeepEqual(got, out) {
		t.Errorf("reopened entries differ from those Append returned:\n got %+v\nwant %+v", got, out)
	}
	if got, err := ledger.Read(path); err != nil || !reflect.DeepEqual(got, out) {
		t.Errorf("Read = %+v, %v; want the appended entries", got, err)
	}
	if a, b := fmtHead(l), fmtHead(again); a != b {
		t.Errorf("reopened head %s, want %s", b, a)
	}
	// The reopened ledger goes on where the first stopped.
	w, err := again.Append(ledger.Entry{Kind: ledger.KindResumed, Run: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Seq != 5 || w.Prev != hash(ls[3]) {
		t.Errorf("appended after reopening: seq %d prev %s", w.Seq, w.Prev)
	}
}

func fmtHead(l *ledger.Ledger) string {
	seq, h := l.Head()
	return string(rune('0'+seq)) + ":" + h
}

func TestSecondLedgerRefusesStale(t *testing.T) {
	for _, n := range []int{0, 3} {
		path := newLedger(t, n) // with n 0, not even created yet
		a := mustOpen(t, path)
		b := mustOpen(t, path)
		if _, err := a.Append(ledger.Entry{Kind: ledger.KindGoalStarted, Run: "run-1", Goal: "G001"}); err != nil {
			t.Fatal(err)
		}
		before := readFile(t, path)
		_, err := b.Append(ledger.Entry{Kind: ledger.KindGoalStarted, Run: "run-1", Goal: "G002"})
		if !errors.Is(err, ledger.ErrStale) || !strings.Contains(err.Error(), "open it again") {
			t.Fatalf("%d entries: the second ledger appended after the first: %v; want ErrStale", n, err)
		}
		if !bytes.Equal(readFile(t, path), before) {
			t.Errorf("%d entries: a refused append changed the file", n)
		}
		if r := ledger.Verify(path); r.Problem != nil || r.Entries != n+1 {
			t.Errorf("%d entries: Verify = %v", n, r)
		}
		b = mustOpen(t, path)
		if w, err := b.Append(ledger.Entry{Kind: ledger.KindGoalStarted, Run: "run-1", Goal: "G002"}); err != nil || w.Seq != n+2 {
			t.Errorf("%d entries: reopened and appended: %+v, %v", n, w, err)
		}
	}
}

func TestAppendRefusesHandEdits(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, path string)
	}{
		{"the last line edited, same size", func(t *testing.T, path string) {
			b := readFile(t, path)
			writeFile(t, path, bytes.Replace(b, []byte(`"step 3"`), []byte(`"step X"`), 1))
		}},
		{"the last line deleted", func(t *testing.T, path string) {
			writeFile(t, path, join(lines(t, path)[:2]))
		}},
		{"the file deleted", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := newLedger(t, 3)
			l := mustOpen(t, path)
			tc.edit(t, path)
			before, _ := os.ReadFile(path)
			if _, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1"}); !errors.Is(err, ledger.ErrStale) {
				t.Fatalf("Append after a hand edit: %v; want ErrStale", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Error("a refused append changed the file")
			}
		})
	}
}

func TestConcurrentAppendsDoNotFork(t *testing.T) {
	const writers, rounds = 8, 20
	path := newLedger(t, 2)
	for round := range rounds {
		ls := make([]*ledger.Ledger, writers)
		for i := range ls {
			l := mustOpen(t, path)
			ls[i] = l
		}
		start := make(chan struct{})
		errs := make(chan error, writers)
		var wg sync.WaitGroup
		for _, l := range ls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1"})
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		won := 0
		for err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ledger.ErrStale):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of %d ledgers opened at the same head appended; want exactly 1", round, won, writers)
		}
	}
	if r := ledger.Verify(path); r.Problem != nil || r.Entries != 2+rounds {
		t.Errorf("Verify = %v; want intact with %d entries", r, 2+rounds)
	}
}

func TestAppendWaitsForTheLock(t *testing.T) {
	path := newLedger(t, 1)
	l := mustOpen(t, path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1"})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Append finished while another held the ledger's lock: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Append did not finish after the lock was released")
	}
}

func TestSymlinkRefused(t *testing.T) {
	t.Run("Open, Read, Verify", func(t *testing.T) {
		target := newLedger(t, 2)
		link := filepath.Join(t.TempDir(), "ledger.jsonl")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := ledger.Open(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Open: %v", err)
		}
		if _, err := ledger.Read(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Read: %v", err)
		}
		if r := ledger.Verify(link); r.Problem == nil || !strings.Contains(r.String(), "symbolic link") {
			t.Errorf("Verify: %v", r)
		}
		if _, err := ledger.RepairTorn(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("RepairTorn: %v", err)
		}
	})
	t.Run("Append after the file became a link", func(t *testing.T) {
		path := newLedger(t, 2)
		l := mustOpen(t, path)
		target := path + ".real"
		if err := os.Rename(path, target); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		before := readFile(t, target)
		if _, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1"}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Append through a link: %v", err)
		}
		if !bytes.Equal(readFile(t, target), before) {
			t.Error("Append wrote through the link")
		}
	})
	t.Run("Append to a new ledger where a dangling link stands", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "ledger.jsonl")
		l := mustOpen(t, path)
		target := filepath.Join(dir, "elsewhere")
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(ledger.Entry{Kind: ledger.KindPlanCreated, Run: "run-1"}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Append through a dangling link: %v", err)
		}
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Append created the link's target: %v", err)
		}
	})
}

func TestAppendRefusesBadEntries(t *testing.T) {
	tests := []struct {
		name string
		e    ledger.Entry
		msg  string
	}{
		{"an unknown kind", ledger.Entry{Kind: "goal_teleported", Run: "run-1"}, `unknown entry kind "goal_teleported"`},
		{"no kind", ledger.Entry{Run: "run-1"}, `unknown entry kind ""`},
		{"no run id", ledger.Entry{Kind: ledger.KindCheckpoint}, "no run id"},
		{"another run", ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-2"}, `belongs to run "run-1"; refusing an entry of run "run-2"`},
		{"data that is not JSON", ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1", Data: json.RawMessage("{oops")}, "cannot encode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := newLedger(t, 1)
			before := readFile(t, path)
			l := mustOpen(t, path)
			if _, err := l.Append(tc.e); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Append: %v; want %q", err, tc.msg)
			}
			if !bytes.Equal(readFile(t, path), before) || l.Len() != 1 {
				t.Error("a refused entry changed the ledger")
			}
		})
	}
	t.Run("an unknown kind does not create the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.jsonl")
		l := mustOpen(t, path)
		if _, err := l.Append(ledger.Entry{Kind: "goal_teleported", Run: "run-1"}); err == nil {
			t.Error("unknown kind appended")
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the file was created: %v", err)
		}
	})
}

func TestEveryKnownKindAppends(t *testing.T) {
	kinds := []string{
		ledger.KindPlanCreated, ledger.KindPlanAccepted, ledger.KindGoalStarted, ledger.KindEvidenceCaptured,
		ledger.KindCriterionPassed, ledger.KindCriterionFailed, ledger.KindCriterionBlocked,
		ledger.KindGoalCompleted, ledger.KindGoalFailed, ledger.KindGoalBlocked,
		ledger.KindSteeringAccepted, ledger.KindSteeringRejected, ledger.KindCheckpoint,
		ledger.KindReviewVerdict, ledger.KindCancelled, ledger.KindFinalGate, ledger.KindResumed,
	}
	l := mustOpen(t, filepath.Join(t.TempDir(), "ledger.jsonl"))
	for _, k := range kinds {
		if !ledger.KnownKind(k) {
			t.Errorf("KnownKind(%q) = false", k)
		}
		if _, err := l.Append(ledger.Entry{Kind: k, Run: "run-1"}); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if ledger.KnownKind("goal_teleported") {
		t.Error("KnownKind accepts an unknown kind")
	}
}

func TestUnknownKindOnDiskAccepted(t *testing.T) {
	path := newLedger(t, 2)
	ls := rechain(t, lines(t, path), func(i int, e *ledger.Entry) {
		if i == 2 {
			e.Kind = "written_by_a_newer_ultra"
		}
	})
	writeFile(t, path, join(ls))
	l, err := ledger.Open(path)
	if err != nil {
		t.Fatalf("Open of a ledger with a newer kind: %v", err)
	}
	if got := l.Entries()[1].Kind; got != "written_by_a_newer_ultra" {
		t.Errorf("kind read as %q", got)
	}
	if w, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1"}); err != nil || w.Prev != hash(ls[1]) {
		t.Errorf("Append after it: %+v, %v", w, err)
	}
}

// With Sign set, every entry carries a MAC of its unsigned encoding, and
// what is read back yields the very bytes that were signed.
func TestSignedEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	l := mustOpen(t, path)
	l.Now = clock()
	var signed [][]byte
	l.Sign = func(b []byte) (string, error) {
		signed = append(signed, append([]byte(nil), b...))
		return fmt.Sprintf("mac-%d", len(signed)), nil
	}
	for _, text := range []string{"one <&> \u2028", "two"} {
		if _, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1", Text: text, Data: json.RawMessage(`{"goals": "x"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := ledger.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if e.MAC != fmt.Sprintf("mac-%d", i+1) {
			t.Fatalf("entry %d MAC %q", i+1, e.MAC)
		}
		u, err := ledger.Unsigned(e)
		if err != nil || string(u) != string(signed[i]) {
			t.Fatalf("entry %d: unsigned %s, signed %s (%v)", i+1, u, signed[i], err)
		}
	}
	if v := ledger.Verify(path); v.Problem != nil {
		t.Fatal(v.Problem)
	}
}
