package check

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/proc"
	"github.com/ultra-dev/ultra/internal/sandbox"
)

// The checks below run with Runner.Sandbox returning a bubblewrap sandbox
// (own user, PID and network namespaces): the supervisor runs inside, next
// to the programs under test.

func TestContainedCommand(t *testing.T) {
	dir := t.TempDir()
	r := containedRunner(t, dir)
	// Inside, the PID namespace is the sandbox's own (the supervisor is a
	// low pid) and the directory under judgement is writable.
	res := r.Run(context.Background(), crit(goal.ChannelCommand, goal.Check{
		Run:          "test -d . && touch made-inside && cat /proc/sys/kernel/ns_last_pid && ls /proc | grep -c '^[0-9]'",
		ExpectStdout: `^[0-9]{1,2}\n[0-9]{1,2}\n$`,
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "receipt", res.Receipt, "(sandboxed)")
	// Nothing in the environment tells the program it is being checked.
	res = containedRunner(t, t.TempDir()).Run(context.Background(), crit(goal.ChannelCommand, goal.Check{Run: "env | grep -c '^ULTRA_CHECK'", ExpectStdout: `^0\n$`, ExpectExit: intp(1)}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
}

// The server listens inside the sandbox's own network namespace, on a port
// the host has taken for itself: unreachable from the host, reachable by
// the supervisor, and the check passes. Nothing the check sends reaches
// the host's listener on that port.
func TestContainedHTTP(t *testing.T) {
	dir := serverDir(t)
	py := python(t)
	r := containedRunner(t, dir)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	port := host.Addr().(*net.TCPAddr).Port
	var hits atomic.Int32
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: fmt.Sprintf("exec %s server.py %d", py, port), Port: port, Path: "/health", ExpectStatus: 200, ExpectBody: "^ok$",
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	if n := hits.Load(); n != 0 {
		t.Errorf("the host's listener on port %d got %d connections: the check's traffic left the sandbox", port, n)
	}
	if !strings.Contains(res.Receipt, fmt.Sprintf("port %d free", port)) {
		t.Errorf("receipt: %s", res.Receipt)
	}

	// The same check uncontained meets the host's listener and refuses to
	// talk to it.
	u := newRunner(t, dir)
	res = u.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: fmt.Sprintf("exec %s server.py %d", py, port), Port: port, Path: "/health", ExpectStatus: 200,
	}))
	wantStatus(t, res, goal.CriterionBlocked)
}

// Contained too, a daemonized helper is found by the supervisor (the
// subreaper inside the sandbox) and makes the check blocked.
func TestContainedDaemonLeftover(t *testing.T) {
	dir := serverDir(t)
	r := containedRunner(t, dir)
	port := freePort(t)
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: fmt.Sprintf("setsid nohup sleep 1000 >/dev/null 2>&1 & exec %s server.py %d", python(t), port),
		Port:  port, Path: "/health", ExpectStatus: 200,
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "daemonized")
}

func TestContainedTmux(t *testing.T) {
	needTmux(t)
	r := containedRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelTmux, goal.Check{
		Start: upper(marker(t)),
		Steps: []goal.Step{{Keys: "contained Enter", Expect: "CONTAINED"}},
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "receipt", res.Receipt, "(sandboxed)", "has-session fails")
}

func TestContainedBrowser(t *testing.T) {
	needChromium(t)
	dir := pageDir(t)
	r := containedRunner(t, dir)
	port := freePort(t)
	c := pageCheck(t, port, marker(t))
	c.Steps = []goal.Step{{Click: "#btn"}, {WaitText: "Clicked!"}}
	c.ExpectText = "Clicked!"
	res := r.Run(context.Background(), crit(goal.ChannelBrowser, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "receipt", res.Receipt, "(sandboxed)", "profile removed")
	evidence(t, r, res, "browser.png")
}

// Without Unix sockets chromium cannot start: the check is blocked and
// says what the sandbox lacks.
func TestContainedBrowserNoUnixSockets(t *testing.T) {
	needChromium(t)
	dir := pageDir(t)
	r := containedRunner(t, dir)
	st := sandbox.Probe()
	sb := r.Sandbox
	r.Sandbox = func(ch goal.Channel) (*proc.Sandbox, error) {
		s, err := sb(ch)
		if err != nil {
			return nil, err
		}
		return &proc.Sandbox{Wrap: st.Wrapper(sandbox.Layout{Work: dir, Home: t.TempDir(), Tmp: t.TempDir(), NoUnixSockets: true, Deps: []sandbox.Bind{{Src: testExe(t), Path: testExe(t)}}}.Policy()), Env: s.Env}, nil
	}
	port := freePort(t)
	c := pageCheck(t, port, marker(t))
	c.ExpectText = "Not clicked"
	res := r.Run(context.Background(), crit(goal.ChannelBrowser, c))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "cannot create Unix sockets")
}
