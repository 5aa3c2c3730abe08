package agent

import "sync"

// warmWaits are the checks started beside a verification (ahead) that
// wait for the gate's warm step (goWarm) of the tree they check: it
// compiles the tree into the build cache at the path every checkout of
// the repository is seen at (checkoutAt), so that the checks' go
// commands, started after it, compile nothing the gate compiles. Keyed
// by the run's directory and the tree.
var warmWaits = struct {
	sync.Mutex
	m map[string]chan struct{}
}{m: map[string]chan struct{}{}}

// awaitWarm is closed once warmed(runDir, tree) is called.
func awaitWarm(runDir, tree string) <-chan struct{} {
	warmWaits.Lock()
	defer warmWaits.Unlock()
	k := runDir + "\x00" + tree
	ch, ok := warmWaits.m[k]
	if !ok {
		ch = make(chan struct{})
		warmWaits.m[k] = ch
	}
	return ch
}

// warmed says the gate's warm step of tree in runDir is over (or that
// there will be none): what waits for it goes on.
func warmed(runDir, tree string) {
	warmWaits.Lock()
	defer warmWaits.Unlock()
	k := runDir + "\x00" + tree
	if ch, ok := warmWaits.m[k]; ok {
		close(ch)
		delete(warmWaits.m, k)
	}
}
