package procs

import (
	"context"
	"os/exec"
	"sync"
	"testing"
)

// Commands started at once, each by a Processes of its own (a fleet's
// worker makes one per job) writing to one folder, each get a log of
// their own: none fails to start for a name another took.
func TestLogNamesAreNew(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	logs := t.TempDir()
	var wg sync.WaitGroup
	outs := make([]string, 8)
	codes := make([]int, 8)
	for i := range outs {
		wg.Go(func() {
			p := &Processes{Program: sh, Dir: logs, Logs: logs}
			outs[i], codes[i] = p.Exec(context.Background(), []string{"-c", "echo ran"})
		})
	}
	wg.Wait()
	for i := range outs {
		if codes[i] != 0 || outs[i] != "ran\n" {
			t.Errorf("command %d: exit %d, %q", i, codes[i], outs[i])
		}
	}
}
