package ledger_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
)

// benchEntry is a typical evidence entry.
func benchEntry() ledger.Entry {
	return ledger.Entry{
		Kind: ledger.KindEvidenceCaptured, Run: "run-20250304-050607", Goal: "G001-login", Criterion: "G001-C1",
		Digest:   strings.Repeat("ab", 32),
		Evidence: []goal.EvidenceFile{{Name: "stdout", Path: ".ultra/evidence/G001-C1/1/stdout.txt", SHA256: strings.Repeat("cd", 32), Bytes: 1234}},
		Text:     "G001-C1 passed: exit 0, stdout matched",
	}
}

// BenchmarkAppend appends to one ledger: lock, staleness check, one
// write(2) and an fsync per entry.
func BenchmarkAppend(b *testing.B) {
	l := mustOpen(b, filepath.Join(b.TempDir(), "ledger.jsonl"))
	e := benchEntry()
	for b.Loop() {
		if _, err := l.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify10k verifies a 10,000-entry ledger from disk.
func BenchmarkVerify10k(b *testing.B) {
	const n = 10000
	path := filepath.Join(b.TempDir(), "ledger.jsonl")
	e := benchEntry()
	var ls [][]byte
	for i := 1; i <= n; i++ {
		e.Seq = i
		e.Time = t0.Add(time.Duration(i) * time.Second)
		line, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		ls = append(ls, line)
	}
	file := join(rechain(b, ls, nil)) // prev hashes filled in
	writeFile(b, path, file)
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		if r := ledger.Verify(path); r.Problem != nil || r.Entries != n {
			b.Fatal(r)
		}
	}
}
