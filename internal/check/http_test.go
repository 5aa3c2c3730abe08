package check

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
)

// startPy is the start command of serverPy on port, with extra words
// (ignore-term, a marker) on its command line.
func startPy(t *testing.T, port int, extra ...string) string {
	return fmt.Sprintf("exec %s server.py %d %s", python(t), port, strings.Join(extra, " "))
}

func TestHTTPPass(t *testing.T) {
	dir := serverDir(t)
	port := freePort(t)
	m := marker(t)
	r := newRunner(t, dir)
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: startPy(t, port, m), Port: port, Path: "/health", ExpectStatus: 200, ExpectBody: "^ok$",
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	if want := `http GET /health → 200 OK; expect_status 200 ✓; expect_body "^ok$" ✓`; res.Summary != want {
		t.Errorf("summary %q, want %q", res.Summary, want)
	}
	b := string(evidence(t, r, res, "http.txt"))
	wantIn(t, "http.txt", b, ">>> request\nGET /health HTTP/1.1", "<<< response", " 200 OK\n", "Content-Type: text/plain", "\n\nok\n", "serving on "+strconv.Itoa(port))
	wantIn(t, "receipt", res.Receipt, "server pgid", "port "+strconv.Itoa(port), "server (SIGTERM)", "port "+strconv.Itoa(port)+" free", "leftovers: none")
	noneLeft(t, m)
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
		c.Close()
		t.Errorf("port %d still takes connections after the check", port)
	}
}

func TestHTTPPostHeadersBody(t *testing.T) {
	dir := serverDir(t)
	port := freePort(t)
	r := newRunner(t, dir)
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: startPy(t, port), Port: port, Method: "POST", Path: "/echo", Headers: map[string]string{"X-Test": "hdr"},
		Body: "abc", ExpectStatus: 201, ExpectBody: "^ABC hdr$",
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
}

func TestHTTPWrongStatus(t *testing.T) {
	dir := serverDir(t)
	port := freePort(t)
	r := newRunner(t, dir)
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: startPy(t, port), Port: port, Path: "/missing", ExpectStatus: 200,
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, "http GET /missing → 404 Not Found")
	wantIn(t, "reason", res.Reason, "expect_status 200 ✗ got 404")
	if want := "fail http: expect_status want 200 got 404"; res.Signature != want {
		t.Errorf("signature %q, want %q", res.Signature, want)
	}
}

func TestHTTPExpectJSON(t *testing.T) {
	dir := serverDir(t)
	port := freePort(t)
	r := newRunner(t, dir)
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: startPy(t, port), Port: port, Path: "/json", ExpectStatus: 200,
		ExpectJSON: map[string]string{"user.name": "^ada$", "user.tags.1": "^y$", "n": "^3$", "user.tags": `^\["x","y"\]$`},
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionPass)
	wantIn(t, "summary", res.Summary, `expect_json user.tags.1 "^y$" ✓`)

	port = freePort(t)
	r2 := newRunner(t, dir)
	res = r2.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: startPy(t, port), Port: port, Path: "/json",
		ExpectJSON: map[string]string{"user.email": ".", "user.name": "^bob$", "user.tags.7": "."},
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "summary", res.Summary, `expect_json user.email "." ✗ got no key "email"`, `expect_json user.name "^bob$" ✗ got ada`, `expect_json user.tags.7 "." ✗ got no index "7" in an array of 2`)
}

func TestHTTPServerNeverListens(t *testing.T) {
	m := marker(t)
	port := freePort(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: "echo booting; exec -a " + m + " sleep 60", Port: port, ExpectStatus: 200, TimeoutSeconds: 2,
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, fmt.Sprintf("waiting for port %d to take connections", port), "booting")
	if d := res.Duration; d > 7*time.Second {
		t.Errorf("a 2 s check took %s", d)
	}
	noneLeft(t, m)
}

func TestHTTPServerExitsFirst(t *testing.T) {
	port := freePort(t)
	r := newRunner(t, t.TempDir())
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: "echo 'cannot bind: config missing' >&2; exit 4", Port: port, ExpectStatus: 200,
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionFail)
	wantIn(t, "reason", res.Reason, "the server ended (exit 4) first: cannot bind: config missing")
}

func TestHTTPPortTakenBefore(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	r := newRunner(t, serverDir(t))
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{Start: startPy(t, port), Port: port, ExpectStatus: 200}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "already takes connections")
}

// A server that ignores SIGTERM: killed with SIGKILL, named in the
// receipt, and the check is blocked although its assertions held.
func TestHTTPServerIgnoresSIGTERM(t *testing.T) {
	dir := serverDir(t)
	port := freePort(t)
	m := marker(t)
	r := newRunner(t, dir)
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: startPy(t, port, "ignore-term", m), Port: port, Path: "/health", ExpectStatus: 200,
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "summary", res.Summary, "expect_status 200 ✓")
	for _, s := range []string{res.Reason, res.Receipt} {
		wantIn(t, "reason and receipt", s, "server ignored SIGTERM; killed with SIGKILL")
	}
	wantIn(t, "receipt", res.Receipt, "server (SIGKILL after ignoring SIGTERM)", fmt.Sprintf("port %d free", port))
	noneLeft(t, m)
}

// A server that daemonizes a helper (its own session, out of the
// server's group): the supervisor finds it, kills it, and the check is
// blocked.
func TestHTTPServerDaemonizes(t *testing.T) {
	dir := serverDir(t)
	port := freePort(t)
	m := marker(t)
	r := newRunner(t, dir)
	res := r.Run(context.Background(), crit(goal.ChannelHTTP, goal.Check{
		Start: "setsid nohup bash -c 'exec -a " + m + " sleep 1000' >/dev/null 2>&1 & " + startPy(t, port, m),
		Port:  port, Path: "/health", ExpectStatus: 200, ExpectBody: "ok",
	}))
	logResult(t, res)
	wantStatus(t, res, goal.CriterionBlocked)
	wantIn(t, "reason", res.Reason, "daemonized")
	wantIn(t, "receipt", res.Receipt, "daemonized", "server (SIGTERM)")
	noneLeft(t, m)
}
