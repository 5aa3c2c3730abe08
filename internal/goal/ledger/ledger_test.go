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

func TestChainVerifies(t *testing.T) {
	path := newLedger(t, 12)
	ls := lines(t, path)
	for i := 1; i < len(ls); i++ {
		var e ledger.Entry
		if err := json.Unmarshal(ls[i], &e); err != nil {
			t.Fatal(err)
		}
		if e.Prev != hash(ls[i-1]) || e.Seq != i+1 {
			t.Fatalf("line %d: seq %d prev %s; want seq %d and the previous line's hash", i+1, e.Seq, e.Prev, i+1)
		}
	}
	r := ledger.Verify(path)
	if r.Problem != nil || r.Entries != 12 || r.HeadSeq != 12 || r.Head != hash(ls[11]) {
		t.Fatalf("Verify = %+v; want intact, 12 entries, head %s", r, hash(ls[11]))
	}
	if want := "intact: 12 entries, head " + hash(ls[11])[:12] + "…"; r.String() != want {
		t.Errorf("String() = %q, want %q", r.String(), want)
	}
	missing := ledger.Verify(filepath.Join(t.TempDir(), "none.jsonl"))
	if missing.Problem != nil || missing.Entries != 0 || missing.String() != "intact: empty" {
		t.Errorf("missing ledger: %+v %q; want intact and empty", missing, missing.String())
	}
}

func TestBrokenChainDetected(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, ls [][]byte) [][]byte
		line   int
		fault  ledger.Fault
		msg    string
	}{
		{"a byte of a middle line edited", func(t *testing.T, ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte(`"step 3"`), []byte(`"step X"`), 1)
			return ls
		}, 4, ledger.FaultPrev, "line 4: prev hash does not match line 3 (edited by hand?)"},
		{"a middle line deleted", func(t *testing.T, ls [][]byte) [][]byte {
			return append(ls[:2:2], ls[3:]...)
		}, 3, ledger.FaultSeq, "line 3: seq is 4, want 3"},
		{"two lines swapped", func(t *testing.T, ls [][]byte) [][]byte {
			ls[2], ls[3] = ls[3], ls[2]
			return ls
		}, 3, ledger.FaultSeq, "line 3: seq is 4, want 3"},
		{"a line duplicated", func(t *testing.T, ls [][]byte) [][]byte {
			return append(ls[:3:3], ls[2:]...)
		}, 4, ledger.FaultSeq, "line 4: seq is 3, want 4"},
		{"a middle line cut short", func(t *testing.T, ls [][]byte) [][]byte {
			ls[2] = ls[2][:20]
			return ls
		}, 3, ledger.FaultJSON, "line 3: not a valid entry"},
		{"a middle line not an object", func(t *testing.T, ls [][]byte) [][]byte {
			ls[1] = []byte("null")
			return ls
		}, 2, ledger.FaultJSON, "line 2: not a valid entry: not a JSON object"},
		{"the last line of the wrong type", func(t *testing.T, ls [][]byte) [][]byte {
			ls[5] = bytes.Replace(ls[5], []byte(`"seq":6`), []byte(`"seq":"6"`), 1)
			return ls
		}, 6, ledger.FaultJSON, "line 6: not a valid entry"},
		{"a blank line inserted", func(t *testing.T, ls [][]byte) [][]byte {
			return append(ls[:2:2], append([][]byte{{}}, ls[2:]...)...)
		}, 3, ledger.FaultJSON, "line 3: not a valid entry"},
		{"another run's line, chain recomputed", func(t *testing.T, ls [][]byte) [][]byte {
			return rechain(t, ls, func(i int, e *ledger.Entry) {
				if i == 5 {
					e.Run = "run-2"
				}
			})
		}, 5, ledger.FaultRun, `line 5: run id "run-2" differs from "run-1" on line 1`},
		{"the first line given a prev, chain recomputed", func(t *testing.T, ls [][]byte) [][]byte {
			ls = rechain(t, ls, nil)
			var e ledger.Entry
			_ = json.Unmarshal(ls[0], &e)
			e.Prev = strings.Repeat("0", 64)
			ls[0], _ = json.Marshal(e)
			return ls
		}, 1, ledger.FaultPrev, "line 1: prev hash is not empty on the first line"},
		{"a kind removed, chain recomputed", func(t *testing.T, ls [][]byte) [][]byte {
			return rechain(t, ls, func(i int, e *ledger.Entry) {
				if i == 2 {
					e.Kind = ""
				}
			})
		}, 2, ledger.FaultEntry, "line 2: entry has no kind"},
		{"CR LF line endings", func(t *testing.T, ls [][]byte) [][]byte {
			for i := range ls {
				ls[i] = append(ls[i], '\r')
			}
			return ls
		}, 1, ledger.FaultEntry, "line 1: line ends in CR LF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := newLedger(t, 6)
			bad := join(tc.mutate(t, lines(t, path)))
			writeFile(t, path, bad)

			l, err := ledger.Open(path)
			var be *ledger.BrokenError
			if !errors.As(err, &be) {
				t.Fatalf("Open: %v; want a *BrokenError", err)
			}
			if be.Line != tc.line || be.Fault != tc.fault || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Open: line %d fault %q: %v; want line %d fault %q, %q", be.Line, be.Fault, err, tc.line, tc.fault, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "ledger "+path+" line ") {
				t.Errorf("message %q does not name the ledger and line", err)
			}
			if l == nil || l.Len() != tc.line-1 {
				t.Fatalf("Open returned %v; want a ledger of the %d intact entries", l, tc.line-1)
			}
			if _, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1"}); !errors.As(err, &be) {
				t.Errorf("Append on a broken ledger: %v; want it refused with the *BrokenError", err)
			}
			if r := ledger.Verify(path); !errors.As(r.Problem, &be) || be.Line != tc.line || r.Entries != tc.line-1 || r.String() != r.Problem.Error() {
				t.Errorf("Verify = %+v; want the *BrokenError at line %d", r, tc.line)
			}
			if got, err := ledger.Read(path); !errors.As(err, &be) || len(got) != tc.line-1 {
				t.Errorf("Read = %d entries, %v; want %d and the *BrokenError", len(got), err, tc.line-1)
			}
			if !bytes.Equal(readFile(t, path), bad) {
				t.Error("the broken file was changed")
			}
		})
	}
}

func TestTornLastLineDetected(t *testing.T) {
	full := lines(t, newLedger(t, 4))
	intact := join(full[:3])
	tests := []struct {
		name   string
		tail   []byte
		line   int
		reason string
	}{
		{"half a line", full[3][:len(full[3])/2], 4, "no newline at the end"},
		{"a whole line without its newline", full[3], 4, "no newline at the end"},
		{"a line that is not JSON", []byte("{\"seq\":4,\"ti\n"), 4, "not valid JSON"},
		{"zeroes after a crash", make([]byte, 16), 4, "no newline at the end"},
		{"a blank last line", []byte("\n"), 4, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.jsonl")
			torn := append(append([]byte{}, intact...), tc.tail...)
			writeFile(t, path, torn)

			l, err := ledger.Open(path)
			var te *ledger.TornError
			if !errors.As(err, &te) {
				t.Fatalf("Open: %v; want a *TornError", err)
			}
			if te.Line != tc.line || te.Offset != int64(len(intact)) || te.Bytes != len(tc.tail) || te.Reason != tc.reason {
				t.Errorf("TornError %+v; want line %d, offset %d, %d bytes, %q", te, tc.line, len(intact), len(tc.tail), tc.reason)
			}
			if !strings.Contains(err.Error(), "line 4: torn last line") || !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("message %q", err)
			}
			if l == nil || l.Len() != 3 {
				t.Fatalf("Open returned %v; want the 3 intact entries", l)
			}
			if _, err := l.Append(ledger.Entry{Kind: ledger.KindCheckpoint, Run: "run-1"}); !errors.As(err, &te) {
				t.Errorf("Append on a torn ledger: %v; want it refused", err)
			}
			if r := ledger.Verify(path); !errors.As(r.Problem, &te) || r.Entries != 3 || r.HeadSeq != 3 || r.Head != hash(full[2]) {
				t.Errorf("Verify = %+v; want the *TornError after 3 intact entries", r)
			}
			if !bytes.Equal(readFile(t, path), torn) {
				t.Error("the torn file was changed (its tail dropped?)")
			}
		})
	}
	t.Run("the only line", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.jsonl")
		writeFile(t, path, full[0][:7])
		_, err := ledger.Open(path)
		var te *ledger.TornError
		if !errors.As(err, &te) || te.Line != 1 || te.Offset != 0 || te.Bytes != 7 || !strings.Contains(err.Error(), "back to empty") {
			t.Errorf("Open: %v; want line 1 torn at offset 0", err)
		}
	})
}

func TestRepairTorn(t *testing.T) {
	full := lines(t, newLedger(t, 4))
	intact := join(full[:3])
	tail := full[3][:25]

	t.Run("saves the tail and cuts it off", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "ledger.jsonl")
		writeFile(t, path, append(append([]byte{}, intact...), tail...))
		saved, err := ledger.RepairTorn(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(saved, path+".torn-") || !strings.HasSuffix(saved, "Z") {
			t.Errorf("saved to %s; want %s.torn-<UTC time>", saved, path)
		}
		if got := readFile(t, saved); !bytes.Equal(got, tail) {
			t.Errorf("saved %q, want the torn bytes %q", got, tail)
		}
		if got := readFile(t, path); !bytes.Equal(got, intact) {
			t.Errorf("ledger after repair:\n%s\nwant the 3 intact lines", got)
		}
		if r := ledger.Verify(path); r.Problem != nil || r.Entries != 3 {
			t.Errorf("after repair Verify = %v", r)
		}
		l := mustOpen(t, path)
		if w, err := l.Append(ledger.Entry{Kind: ledger.KindResumed, Run: "run-1"}); err != nil || w.Seq != 4 {
			t.Errorf("Append after repair: %+v, %v", w, err)
		}
	})

	refusals := []struct {
		name    string
		content []byte
		msg     string
	}{
		{"an intact ledger", intact, "is not torn"},
		{"a broken line before the torn tail", append(join([][]byte{full[0], full[2]}), tail...), "line 2: seq is 3, want 2"},
	}
	for _, tc := range refusals {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ledger.jsonl")
			writeFile(t, path, tc.content)
			saved, err := ledger.RepairTorn(path)
			if err == nil || saved != "" || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("RepairTorn = %q, %v; want a refusal saying %q", saved, err, tc.msg)
			}
			if !bytes.Equal(readFile(t, path), tc.content) {
				t.Error("the ledger was changed")
			}
			if m, _ := filepath.Glob(path + ".torn-*"); len(m) != 0 {
				t.Errorf("a refused repair saved %v", m)
			}
		})
	}
	t.Run("refuses a missing ledger", func(t *testing.T) {
		if _, err := ledger.RepairTorn(filepath.Join(t.TempDir(), "none.jsonl")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("RepairTorn of a missing file: %v", err)
		}
	})
}

func TestVerifyHead(t *testing.T) {
	path := newLedger(t, 5)
	ls := lines(t, path)
	l := mustOpen(t, path)
	seq, head := l.Head()
	if seq != 5 || head != hash(ls[4]) {
		t.Fatalf("Head() = %d, %s", seq, head)
	}
	for i := 1; i <= 5; i++ {
		if err := ledger.VerifyHead(path, i, hash(ls[i-1])); err != nil {
			t.Errorf("VerifyHead(%d) of an intact ledger: %v", i, err)
		}
	}

	t.Run("a chain recomputed after an edit", func(t *testing.T) {
		forged := rechain(t, ls, func(i int, e *ledger.Entry) {
			if i == 2 {
				e.Text = "not what happened"
			}
		})
		writeFile(t, path, join(forged))
		if r := ledger.Verify(path); r.Problem != nil {
			t.Fatalf("the forged chain should verify on its own (else this test proves nothing): %v", r)
		}
		err := ledger.VerifyHead(path, seq, head)
		var he *ledger.HeadError
		if !errors.As(err, &he) || he.Seq != 5 || he.Want != head || he.Got != hash(forged[4]) {
			t.Fatalf("VerifyHead: %v; want a *HeadError for line 5", err)
		}
		if !strings.Contains(err.Error(), "line 5: hash "+hash(forged[4])[:12]) || !strings.Contains(err.Error(), "recomputed") {
			t.Errorf("message %q", err)
		}
		if err := ledger.VerifyHead(path, 1, hash(ls[0])); err != nil {
			t.Errorf("line 1 was not touched, yet VerifyHead(1): %v", err)
		}
		if err := ledger.VerifyHead(path, 3, hash(ls[2])); err == nil {
			t.Error("VerifyHead(3) missed the recomputed line 3")
		}
	})
	t.Run("lines removed from the end", func(t *testing.T) {
		writeFile(t, path, join(ls[:3]))
		err := ledger.VerifyHead(path, seq, head)
		var he *ledger.HeadError
		if !errors.As(err, &he) || he.Entries != 3 || he.Got != "" {
			t.Fatalf("VerifyHead: %v; want a *HeadError saying the ledger is shorter", err)
		}
		if !strings.Contains(err.Error(), "has 3 entries, but entry 5 was recorded") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("a broken chain", func(t *testing.T) {
		writeFile(t, path, join(append(ls[:1:1], ls[2:]...)))
		var be *ledger.BrokenError
		if err := ledger.VerifyHead(path, 1, hash(ls[0])); !errors.As(err, &be) {
			t.Errorf("VerifyHead of a broken ledger: %v; want the *BrokenError", err)
		}
	})
	t.Run("no seq", func(t *testing.T) {
		writeFile(t, path, join(ls))
		if err := ledger.VerifyHead(path, 0, ""); err == nil {
			t.Error("VerifyHead(0) accepted")
		}
	})
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
