package ledger_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/goal/ledger"
)

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

// Lines are the intact lines' exact bytes, without a torn last line, and
// Scan reads them back as the file reads.
func TestLinesAreTheIntactLines(t *testing.T) {
	path := newLedger(t, 3)
	whole := readFile(t, path)
	writeFile(t, path, append(append([]byte{}, whole...), []byte(`{"seq":4,"ki`)...))
	lines, err := ledger.Lines(path)
	var torn *ledger.TornError
	if !errors.As(err, &torn) {
		t.Fatalf("torn ledger: %v", err)
	}
	if len(lines) != 3 || !bytes.Equal(join(lines), whole) {
		t.Fatalf("lines %q, want the 3 whole lines of %q", lines, whole)
	}
	entries, err := ledger.Scan("shared", join(lines))
	if err != nil || len(entries) != 3 || entries[2].Seq != 3 {
		t.Fatalf("scan: %d entries, %v", len(entries), err)
	}
	if _, err := ledger.Scan("shared", bytes.Replace(join(lines), []byte(`"seq":2`), []byte(`"seq":5`), 1)); err == nil {
		t.Fatal("a changed line scanned clean")
	}
}
