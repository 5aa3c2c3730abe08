package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// hostileProbe is a command a fleet's run's model sends first: it looks
// for the worker's clone's state (where the run's gate decisions are) and
// plants a file named like a decision there and in the run's records.
const hostileProbe = `python3 - <<'PY'
import glob, os, subprocess
c = os.path.dirname(subprocess.check_output(['git', 'rev-parse', '--path-format=absolute', '--git-common-dir']).decode().strip())
print('CLONE', c, os.listdir(c))
for d in glob.glob(c + '/.ultra/state/runs/*/') + glob.glob('.ultra/runs/*/'):
    try:
        open(d + 'gate-99.json', 'w').write('{"n":99,"status":"pass"}'); print('PLANTED', d)
    except Exception as e: print('NOPLANT', d, e)
for p in [os.environ.get('XDG_STATE_HOME', ''), os.path.expanduser('~/.local/state/ultra')]:
    try: print('STATE', p, os.listdir(p))
    except Exception as e: print('NOSTATE', p, e)
try:
    os.rename('.ultra', '.ultra-moved'); print('MOVED'); os.rename('.ultra-moved', '.ultra')
except Exception as e: print('NOMOVE', e)
try:
    os.symlink('/tmp', '.ultra/runs/linked'); print('LINKED')
except Exception as e: print('NOLINK', e)
for p in glob.glob('.ultra/runs/*/ledger.jsonl'):
    try:
        os.link(p, 'ledger-hardlink'); print('HARDLINKED', p)
    except Exception as e: print('NOHARDLINK', p, e)
PY
echo PROBE-END`

// hostileForge rewrites, keeping its length, the text of the first line
// of the run's ledger once the step wrote more than one: a line ultra
// wrote in this step, not yet shared.
const hostileForge = `python3 - <<'PY'
import glob, re
for p in glob.glob('.ultra/runs/*/ledger.jsonl'):
    ls = open(p, 'rb').read().split(b'\n')
    print('LEDGER', len(ls) - 1)
    if len(ls) - 1 >= 2:
        ls[0] = re.sub(rb'"text":"([^"]*)"', lambda m: b'"text":"' + b'F' * len(m.group(1)) + b'"', ls[0])
        open(p, 'wb').write(b'\n'.join(ls))
        print('FORGED')
PY
echo FORGE-END`

// A fleet's run whose model rewrites a ledger line ultra wrote in the
// same answer (before the step shares it), plants files named like gate
// decisions in its records and in the clone's state, renames .ultra and
// links into it: none of it reaches the shared store. Another machine
// reads only the decisions and ledger ultra recorded, which verify, and
// the run completes. The ledger cannot be hard-linked into the worktree.
func TestFleetHostileForgedRecordsNeverShared(t *testing.T) {
	steps := fleetSteps()
	lane := append([]step{}, steps...)
	// The goals call and, in the same answer, the forge; the edit and,
	// in the same answer, the probe.
	lane[1] = calls(lane[1]["tool_calls"].([]map[string]any)[0], call("bash", map[string]any{"command": hostileForge}))
	lane[2] = calls(lane[2]["tool_calls"].([]map[string]any)[0], call("bash", map[string]any{"command": hostileProbe}))
	f := newFleetWith(t, 1, func(int) []step { return lane })
	_, out := startFleetWorker(t, f.machine(t), 1)
	id := f.submit(t, 1)
	f.waitTask(t, id, "complete", 3*time.Minute, out)
	gates := f.sharedGates(t, id)
	if len(gates) == 0 || slices.Contains(gates, 99) {
		t.Fatalf("the shared decisions: %v", gates)
	}
	r := ultraRun(t, t.TempDir(), f.env, "goals", "ledger", id, "--json")
	var shared []struct{ Text string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &shared) != nil {
		t.Fatalf("ledger on another machine: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, e := range shared {
		if strings.Contains(e.Text, "FFFF") {
			t.Fatalf("a forged ledger line is shared: %q", e.Text)
		}
	}
	// What the probe did inside the sandbox reached nothing outside it: a
	// file planted in the clone's state went to the empty directory that
	// hides it, and the records cannot be hard-linked out (another mount).
	probed := false
	for _, q := range f.model.srv.Requests() {
		for _, out := range toolResults(t, q) {
			if !strings.Contains(out, "PROBE-END") || probed {
				continue
			}
			probed = true
			if !strings.Contains(out, "NOHARDLINK") || strings.Contains(out, "HARDLINKED") {
				t.Fatalf("the ledger was hard-linked (or not tried):\n%s", out)
			}
			planted := 0
			for _, line := range strings.Split(out, "\n") {
				if d, ok := strings.CutPrefix(line, "PLANTED "); ok {
					planted++
					if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
						t.Fatalf("the probe planted in %s, which is no directory on the host: %v", d, err)
					}
					if _, err := os.Stat(filepath.Join(d, "gate-99.json")); err == nil {
						t.Fatalf("a file planted in %s reached the disk", d)
					}
				}
			}
			if planted == 0 {
				t.Fatalf("the probe planted nowhere (the check would prove nothing):\n%s", out)
			}
		}
	}
	if !probed {
		t.Fatal("the probe's output never reached the model")
	}
	if r := ultraRun(t, t.TempDir(), f.env, "goals", "ledger", id, "--verify"); r.code != 0 {
		t.Fatalf("ledger --verify on another machine: %d %s %s", r.code, r.stdout, r.stderr)
	}
}
