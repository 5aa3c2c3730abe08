package agent

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
)

func TestProcessOf(t *testing.T) {
	host, _ := os.Hostname()
	// A process that exited and was reaped: its pid is free.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	// One killed and not reaped yet: a zombie, which kill(pid, 0) still finds.
	z := exec.Command("sleep", "60")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	z.Process.Kill()
	defer z.Wait()
	for i := 0; i < 100 && !zombie(z.Process.Pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	cases := []struct {
		name string
		pid  int
		rt   *store.Runtime
		want tasks.Process
	}{
		{"this process", os.Getpid(), nil, tasks.ProcessAlive},
		{"reaped", gone.Process.Pid, nil, tasks.ProcessDead},
		{"killed, not reaped", z.Process.Pid, nil, tasks.ProcessDead},
		{"no pid", 0, nil, tasks.ProcessDead},
		{"pid from the runtime row", 0, &store.Runtime{PID: os.Getpid(), Host: host}, tasks.ProcessAlive},
		{"another machine's", gone.Process.Pid, &store.Runtime{PID: gone.Process.Pid, Host: host + "-elsewhere"}, tasks.ProcessUnknown},
	}
	for _, c := range cases {
		if got := ProcessOf(c.pid, c.rt); got != c.want {
			t.Errorf("%s: ProcessOf = %v, want %v", c.name, got, c.want)
		}
	}
}
