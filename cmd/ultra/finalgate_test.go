package main

import (
	"bytes"
	"testing"

	"github.com/ultra-dev/ultra/internal/goal/ledger"
)

func TestPrintFinalGate(t *testing.T) {
	for _, c := range []struct {
		name    string
		entries []ledger.Entry
		want    string
	}{
		{"no final gate yet", []ledger.Entry{{Seq: 1, Kind: ledger.KindGoalStarted, Text: "G001"}}, ""},
		{"kept", []ledger.Entry{
			{Seq: 7, Kind: ledger.KindFinalGate, Text: "pass: every criterion"},
			{Seq: 8, Kind: ledger.KindCheckpoint, Text: "committed abc"},
			{Seq: 9, Kind: ledger.KindCleanupStarted, Text: "cleanup pass 1 from abc; it may edit: a.go"},
			{Seq: 12, Kind: ledger.KindCleanupCommitted, Text: "committed def: a.go"},
			{Seq: 13, Kind: ledger.KindReviewVerdict, Text: "round 1: APPROVE"},
		}, "\nfinal gate:\n  #7 final gate: pass: every criterion\n  #9 cleanup started: cleanup pass 1 from abc; it may edit: a.go\n" +
			"  #12 cleanup committed: committed def: a.go\n  #13 review verdict: round 1: APPROVE\n"},
		{"reverted", []ledger.Entry{{Seq: 3, Kind: ledger.KindCleanupReverted, Text: "reverted to abc (a.go): it broke the tests: TestX"}},
			"\nfinal gate:\n  #3 cleanup reverted: reverted to abc (a.go): it broke the tests: TestX\n"},
	} {
		var b bytes.Buffer
		printFinalGate(&b, c.entries)
		if b.String() != c.want {
			t.Errorf("%s: got\n%q\nwant\n%q", c.name, b.String(), c.want)
		}
	}
}
