package agent

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/sandbox"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
)

// The run's next bash sandbox waits while the model thinks; a change of
// profile kills it (the next call gets the new profile's sandbox, with
// the network), and nothing of it is left once the run ends.
func TestBashSpareFollowsTheRun(t *testing.T) {
	if st := sandbox.Probe(); !st.Available {
		t.Skip(st.Problem)
	}
	evs, sink := collect()
	var o Options
	var during []int
	var netLines string
	p := &stubProvider{keep: true, next: func(n int, req llm.Request) *llm.Response {
		switch n {
		case 1:
			return callsOf(tc("bash", `{"command":"echo one"}`))
		case 2:
			// A person steers to trusted: the next call must not take the
			// spare made for the normal profile.
			during = append(during, waitBwrap(1))
			if _, err := o.Store.AddRequest(context.Background(), store.Request{Run: (*evs)[0].Run, Kind: store.ReqSteer,
				Axes: map[string]string{"permission_profile": "trusted"}, Scope: axes.ScopeNow, Who: "person", Reason: "test"}); err != nil {
				t.Error(err)
			}
			return callsOf(tc("bash", `{"command":"grep -c : /proc/net/dev"}`))
		case 3:
			// The old spare is gone, the new profile's is there.
			during = append(during, waitBwrap(1))
			for _, m := range req.Messages {
				if m.Role == llm.RoleTool {
					netLines = m.Content
				}
			}
			return callsOf(tc("bash", `{"command":"true"}`))
		}
		return &llm.Response{Text: "idle"}
	}}
	o, dir := setup(t, p, stubVerifier{verify.StatusPass}, sink)
	o.MaxIdle = 1
	if _, err := Start(context.Background(), o, Spec{Task: "t", Repo: dir, Workdir: dir, Axes: axes.Default}); err != nil {
		t.Fatal(err)
	}
	if left := waitBwrap(0); left != 0 {
		t.Errorf("%d bubblewrap processes outlived the run", left)
	}
	if len(during) != 2 || during[0] != 1 || during[1] != 1 {
		t.Errorf("bubblewrap processes while the model thought: %v, want [1 1]", during)
	}
	// Without the network /proc/net/dev lists lo alone.
	if n, _ := strconv.Atoi(strings.Fields(netLines + " x")[0]); n < 2 {
		t.Errorf("after the steer to trusted the call had no network: %q", netLines)
	}
}

// waitBwrap waits up to 10 s for this process to have want bubblewrap
// children and returns how many it has.
func waitBwrap(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := bwrapChildren()
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func bwrapChildren() int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(b), ')'); err == nil && i > 0 {
			f := strings.Fields(string(b)[i+1:])
			if strings.HasSuffix(string(b)[:i], "(bwrap") && len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
				n++
			}
		}
	}
	return n
}
