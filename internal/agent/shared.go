package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/goal/ledger"
	"github.com/ultra-dev/ultra/internal/store"
)

// A fleet's run shares its records through the store (Options.Snapshots):
// its ledger's lines, goals.json and brief, which live in its worktree,
// and its gate decisions and baseline, which live in its state directory.
// Each saved step writes what is new in the step's own transaction, with
// the worktree's snapshot, so the store never holds records the snapshot
// a take-over starts from does not: the lines a machine wrote after its
// last saved step are never shared, and are written once, by the machine
// that goes on. Other machines read a run's records from there
// (ViewShared); the machine taking a run over gets its decisions back
// (restoreShared).

// sharedHeads is what of the run's records the store holds.
type sharedHeads struct {
	known    bool // read from the store (once per process)
	ledger   int  // lines
	gate     int  // the last decision's number
	baseline bool
	goals    string // the digests of the goals.json and brief shared
	brief    string
}

// sharedRecords are the run's records the store does not hold yet, and
// what it holds once the step that carries them is saved.
func (r *runner) sharedRecords() ([]store.Record, sharedHeads) {
	h := r.shared
	if !h.known {
		heads, err := r.o.Store.RecordHeads(context.Background(), r.row.ID)
		if err != nil {
			r.emit(event.Warning, event.WarningData{Message: "the run's records could not be shared with the fleet: " + err.Error()})
			return nil, r.shared
		}
		_, base := heads[store.RecordBaseline]
		h = sharedHeads{known: true, ledger: heads[store.RecordLedger], gate: heads[store.RecordGate], baseline: base}
	}
	now := r.o.Now()
	var recs []store.Record
	add := func(kind string, n int, b []byte) {
		recs = append(recs, store.Record{Kind: kind, N: n, Body: b, At: now})
	}
	if g := r.st.Goals; g != nil && r.row.Workdir != "" {
		rec := g.records()
		// The worktree is the model's to write: only the lines ultra
		// wrote (up to the head it recorded, which must be there) are
		// shared, and goals.json and the brief only as the ledger
		// recorded them.
		lines, _ := ledger.Lines(goalsPath(r.row.Workdir, rec.Ledger()))
		lines = lines[:ownLines(lines, g.LedgerSeq, g.LedgerHash)]
		for i := h.ledger; i < len(lines); i++ {
			add(store.RecordLedger, i+1, lines[i])
		}
		h.ledger = max(h.ledger, len(lines))
		var joined []byte
		for _, l := range lines {
			joined = append(append(joined, l...), '\n')
		}
		entries, _ := ledger.Scan(rec.Ledger(), joined)
		for _, f := range []struct {
			kind, path, want string
			had              *string
		}{{store.RecordGoals, rec.Goals(), goalsRecordedDigest(entries), &h.goals}, {store.RecordBrief, rec.Brief(), briefRecordedDigest(entries), &h.brief}} {
			b, err := os.ReadFile(goalsPath(r.row.Workdir, f.path))
			if d := goal.Digest(b); err == nil && d == f.want && d != *f.had {
				add(f.kind, 0, b)
				*f.had = d
			}
		}
	}
	runDir := RunDir(r.o.StateRoot, r.row.ID)
	for _, n := range gatefile.Numbers(runDir) {
		if n <= h.gate {
			continue
		}
		b, err := os.ReadFile(gatefile.Path(runDir, n))
		if err != nil {
			break // shared in order, from here at the next step
		}
		add(store.RecordGate, n, b)
		h.gate = n
	}
	if !h.baseline {
		if b, err := os.ReadFile(gatefile.BaselinePath(runDir)); err == nil {
			add(store.RecordBaseline, 0, b)
			h.baseline = true
		}
	}
	return recs, h
}

// ownLines is how many of a ledger's lines ultra wrote, given the head it
// recorded (seq, the sha256 of line seq): seq when the lines hold that
// head, else none (the file is not what ultra wrote).
func ownLines(lines [][]byte, seq int, hash string) int {
	if seq < 1 || seq > len(lines) {
		return 0
	}
	if ledger.LineHash(lines[seq-1]) != hash {
		return 0
	}
	return seq
}

// briefRecordedDigest is the brief's digest the plan recorded ("" when
// none did).
func briefRecordedDigest(entries []ledger.Entry) string {
	for _, e := range entries {
		var d struct {
			Brief *string `json:"brief"`
		}
		if e.Kind == ledger.KindPlanCreated && json.Unmarshal(e.Data, &d) == nil && d.Brief != nil {
			return *d.Brief
		}
	}
	return ""
}

// restoreShared puts in runDir, on the machine taking run over, the gate
// decisions and baseline its steps shared: what it verified before its
// machine died is not verified again, and the decisions' numbers go on.
// The files are the signed ones the other machine wrote (the fleet's
// machines sign with one key); one already here is left as it is.
func restoreShared(ctx context.Context, st *store.Store, run, runDir string) error {
	for _, kind := range []string{store.RecordGate, store.RecordBaseline} {
		recs, err := st.Records(ctx, run, kind)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			path := gatefile.BaselinePath(runDir)
			if kind == store.RecordGate {
				path = gatefile.Path(runDir, rec.N)
			}
			if err := writeShared(path, rec.Body); err != nil {
				return fmt.Errorf("run %s's %s: %w", run, filepath.Base(path), err)
			}
		}
	}
	return nil
}

// writeShared writes a record's bytes read-only at path, unless a file is
// there already.
func writeShared(path string, b []byte) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o444)
}

// ErrNoShared is returned by ViewShared for a run whose steps shared no
// records.
var ErrNoShared = errors.New("no records of the run are in the shared store")

// ViewShared rebuilds under root (a directory of this machine's own;
// what an earlier view left there goes) the records of a fleet's run that another machine
// drives, from what its steps shared: its gate decisions and baseline in
// RunDir(root, id), its goals.json, brief and ledger in a directory laid
// out as its worktree. It returns the run's row with that directory as
// its Workdir, for the commands that only read a run's records (status,
// goals, ledger, gate show); the records there verify with the fleet's
// key, which signed them.
func ViewShared(ctx context.Context, st *store.Store, root string, row *store.Run) (*store.Run, error) {
	heads, err := st.RecordHeads(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	shown := false
	for _, k := range []string{store.RecordLedger, store.RecordGate, store.RecordBaseline, store.RecordGoals, store.RecordBrief} {
		_, ok := heads[k]
		shown = shown || ok
	}
	if !shown {
		return nil, ErrNoShared
	}
	key, err := st.Secret(ctx, store.SecretGateKey, func() ([]byte, error) {
		return nil, errors.New("the fleet has no gate key: no worker of it has started")
	})
	if err != nil {
		return nil, err
	}
	runDir, work := RunDir(root, row.ID), filepath.Join(root, "work", row.ID)
	if err := os.RemoveAll(work); err != nil {
		return nil, err
	}
	// The decisions go, not the directory: a command holding the run's
	// lock there (ultra land) keeps it.
	old, _ := filepath.Glob(filepath.Join(runDir, "gate-*.json"))
	for _, p := range append(old, gatefile.BaselinePath(runDir)) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := restoreShared(ctx, st, row.ID, runDir); err != nil {
		return nil, err
	}
	rec := RecordsOf(row)
	lines, err := st.Records(ctx, row.ID, store.RecordLedger)
	if err != nil {
		return nil, err
	}
	var b []byte
	for _, l := range lines {
		b = append(append(b, l.Body...), '\n')
	}
	files := map[string][]byte{rec.Ledger(): b}
	for kind, path := range map[string]string{store.RecordGoals: rec.Goals(), store.RecordBrief: rec.Brief()} {
		recs, err := st.Records(ctx, row.ID, kind)
		if err != nil {
			return nil, err
		}
		if len(recs) == 1 {
			files[path] = recs[0].Body
		}
	}
	for rel, body := range files {
		if err := writeShared(goalsPath(work, rel), body); err != nil {
			return nil, err
		}
	}
	gatefile.Trust(root, key)
	view := *row
	view.Workdir = work
	return &view, nil
}

// DrivenHere reports whether row's run is (or was last) driven on this
// machine: it has no runtime row, or its runtime names this host.
func DrivenHere(ctx context.Context, st *store.Store, row *store.Run) bool {
	rt, err := st.RuntimeOf(ctx, row.ID)
	if err != nil || rt.Host == "" {
		return true
	}
	return rt.Host == Hostname()
}
