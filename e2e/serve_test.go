package e2e

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// server is a running `ultra serve` and what its event stream brought.
type server struct {
	url, token string
	code       string // the one-time code of the address it printed

	mu   sync.Mutex
	evs  []map[string]any
	ids  []string
	errs []string
}

// serveIn starts ultra serve in dir on a free port and reads the line it
// prints: the page's address with the token.
func serveIn(t *testing.T, dir string, env []string) *server {
	t.Helper()
	cmd := execCmd(dir, env, ultraBin, "serve", "--addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("ultra serve printed no line: %v\n%s", err, stderr.String())
	}
	u, code, ok := strings.Cut(strings.TrimSpace(line), "/?code=")
	if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") || len(code) != 32 {
		t.Fatalf("ultra serve's line: %q", line)
	}
	// The installation's token is in ultra's per-user state.
	state := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	b, err := os.ReadFile(filepath.Join(state, "ultra", "serve.token"))
	if err != nil || len(strings.TrimSpace(string(b))) != 64 {
		t.Fatalf("the token file: %q %v", b, err)
	}
	return &server{url: u, token: strings.TrimSpace(string(b)), code: code}
}

// call makes an API request with the token and decodes its JSON answer.
func (s *server) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	code, b := s.raw(t, method, path, body, s.token)
	var v map[string]any
	if strings.HasPrefix(strings.TrimSpace(b), "{") {
		if err := json.Unmarshal([]byte(b), &v); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	}
	if v == nil {
		v = map[string]any{"text": b}
	}
	return code, v
}

func (s *server) raw(t *testing.T, method, path, body, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// follow reads the stream at path (from after last) in the background
// into s.evs, until the test ends or stop is called.
func (s *server) follow(t *testing.T, path, last string) (stop func()) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		id := ""
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "id: "):
				id = l[4:]
			case strings.HasPrefix(l, "data: "):
				var e map[string]any
				s.mu.Lock()
				if err := json.Unmarshal([]byte(l[6:]), &e); err != nil {
					s.errs = append(s.errs, l)
				} else {
					s.evs, s.ids = append(s.evs, e), append(s.ids, id)
				}
				s.mu.Unlock()
			}
		}
	}()
	stop = func() { resp.Body.Close(); <-done }
	t.Cleanup(stop)
	return stop
}

func (s *server) events() ([]map[string]any, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.evs...), append([]string(nil), s.ids...)
}

// waitEvent waits for an event of the stream that ok accepts.
func (s *server) waitEvent(t *testing.T, what string, d time.Duration, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		evs, _ := s.events()
		for _, e := range evs {
			if ok(e) {
				return e
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	evs, _ := s.events()
	var types []string
	for _, e := range evs {
		types = append(types, fmt.Sprint(e["type"], "/", data(e)["state"], data(e)["status"]))
	}
	t.Fatalf("no %s within %s; the stream had: %v", what, d, types)
	return nil
}

func modelFlags(m *model) string {
	return fmt.Sprintf(`"provider": "openai", "base-url": %q, "model": "scripted"`, m.url)
}

// A run started through the API goes to its end as one started on the
// command line does: the stream of everything shows it, its status, goals
// and diff come from the same commands, and it records the web surface.
func TestServeStartsARunToItsEnd(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	s.follow(t, "/api/events", "")
	m := newModel(t, fixSteps()...)
	code, v := s.call(t, "POST", "/api/runs", `{"task": "fix calc", "flags": {`+modelFlags(m)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, v)
	}
	id := v["run"].(string)
	fin := s.waitEvent(t, "the run's end", 3*time.Minute, func(e map[string]any) bool {
		return e["run"] == id && e["type"] == "run_finished"
	})
	if data(fin)["status"] != "complete" {
		t.Fatalf("the run ended %v", data(fin))
	}
	evs, ids := s.events()
	started := evs[0]
	if started["type"] != "run_started" || data(started)["axes"].(map[string]any)["surface"] != "web" {
		t.Errorf("first event %v", started)
	}
	// Every event once, in the store's order; each run's seqs in order.
	seen, last := map[string]bool{}, map[string]float64{}
	for i, e := range evs {
		if seen[ids[i]] {
			t.Fatalf("event id %s twice", ids[i])
		}
		seen[ids[i]] = true
		r := e["run"].(string)
		if e["seq"].(float64) != last[r]+1 {
			t.Fatalf("run %s: seq %v after %v", r, e["seq"], last[r])
		}
		last[r] = e["seq"].(float64)
	}
	if code, st := s.call(t, "GET", "/api/runs/"+id, ""); code != 200 || st["phase"] != "complete" {
		t.Errorf("status: %d %v", code, st)
	}
	if code, g := s.call(t, "GET", "/api/runs/"+id+"/goals", ""); code != 200 || !strings.Contains(fmt.Sprint(g), "calc") {
		t.Errorf("goals: %d %v", code, g)
	}
	if code, g := s.call(t, "GET", "/api/runs/"+id+"/gate", ""); code != 200 || !strings.Contains(fmt.Sprint(g), "PASS") {
		t.Errorf("gate: %d %v", code, g)
	}
	if code, d := s.call(t, "GET", "/api/runs/"+id+"/diff", ""); code != 200 || !strings.Contains(d["text"].(string), "+\treturn a + b") {
		t.Errorf("diff: %d %v", code, d)
	}
	// The run's own stream, from the middle, is the rest of its events.
	s2 := &server{url: s.url, token: s.token}
	s2.follow(t, "/api/runs/"+id+"/events", "3")
	s2.waitEvent(t, "the run's end on its own stream", 10*time.Second, func(e map[string]any) bool { return e["type"] == "run_finished" })
	evs2, ids2 := s2.events()
	if len(evs2) != int(last[id])-3 || ids2[0] != "4" {
		t.Errorf("the run's stream after 3: %d events from id %s, want %d from 4", len(evs2), ids2[0], int(last[id])-3)
	}
	// Landing goes through the API too.
	if code, r := s.call(t, "POST", "/api/runs/"+id+"/land", ""); code != 200 || r["exit"].(float64) != 0 {
		t.Fatalf("land: %d %v", code, r)
	}
	if got := readFile(t, filepath.Join(dir, "calc", "calc.go")); !strings.Contains(got, "return a + b") {
		t.Errorf("after land the checkout has:\n%s", got)
	}
}

// A call that waits for a person under manual control is released by an
// approval given through the API, and a denial's reason reaches the
// model; cancel ends the run.
func TestServeApprovals(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	s.follow(t, "/api/events", "")
	m := newModel(t,
		calls(call("read", map[string]any{"file_path": "calc/calc.go"})),
		calls(call("bash", map[string]any{"command": "wc -l calc/calc.go"})),
		step{"text": "waiting", "delay_ms": 20000},
	)
	code, v := s.call(t, "POST", "/api/runs", `{"task": "fix calc", "flags": {"control": "manual", `+modelFlags(m)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, v)
	}
	id := v["run"].(string)
	s.waitEvent(t, "the read waiting", time.Minute, func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "read"
	})
	if code, a := s.call(t, "GET", "/api/approvals", ""); code != 200 || !strings.Contains(fmt.Sprint(a), id) {
		t.Errorf("approvals: %d %v", code, a)
	}
	if code, r := s.call(t, "POST", "/api/runs/"+id+"/approve", `{}`); code != 200 && code != 202 {
		t.Fatalf("approve: %d %v", code, r)
	}
	s.waitEvent(t, "the read's result", time.Minute, func(e map[string]any) bool {
		return e["type"] == "tool_result" && data(e)["tool"] == "read"
	})
	s.waitEvent(t, "the bash call waiting", time.Minute, func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "waiting" && data(e)["tool"] == "bash"
	})
	if code, r := s.call(t, "POST", "/api/runs/"+id+"/deny", `{"args": ["no notes today"]}`); code != 200 && code != 202 {
		t.Fatalf("deny: %d %v", code, r)
	}
	s.waitEvent(t, "the denial", time.Minute, func(e map[string]any) bool {
		return e["type"] == "approval" && data(e)["state"] == "denied"
	})
	deadline := time.Now().Add(time.Minute)
	for len(m.srv.Requests()) < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if reqs := m.srv.Requests(); len(reqs) < 3 || !strings.Contains(string(reqs[2].Body), "no notes today") {
		t.Fatalf("the model did not read the denial's reason")
	}
	if regexp.MustCompile(`[0-9]+ calc/calc\.go`).Match(m.srv.Requests()[2].Body) {
		t.Errorf("the denied command ran")
	}
	if code, r := s.call(t, "POST", "/api/runs/"+id+"/cancel", `{"flags": {"reason": "done here"}}`); code != 200 {
		t.Fatalf("cancel: %d %v", code, r)
	}
	s.waitEvent(t, "the run's end", time.Minute, func(e map[string]any) bool {
		return e["run"] == id && e["type"] == "run_finished" && data(e)["status"] == "cancelled"
	})
}

// A hostile model whose commands can reach the API (a network profile
// shares the host's loopback) finds the port but not the token: it can
// neither read, nor approve another run's waiting call, nor start a run.
// Checked by what the model received and by the other run's state.
func TestServeIsClosedToTheModel(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	env, home := withBrowserHome(t, ultraEnv(t))
	s := serveIn(t, dir, env)
	s.follow(t, "/api/events", "")
	// The person opened the page: the browser keeps its address (with the
	// code, now spent) in its history, and the page's session token in its
	// session storage, both on disk in the home folder.
	code, v := s.raw(t, "POST", "/api/session", `{"code": "`+s.code+`"}`, "")
	var sess struct{ Token string }
	if json.Unmarshal([]byte(v), &sess); code != 201 {
		t.Fatalf("trading the code: %d %s", code, v)
	}
	profile := filepath.Join(home, ".config", "chromium", "Default")
	must(t, os.MkdirAll(filepath.Join(profile, "Session Storage"), 0o700))
	must(t, os.WriteFile(filepath.Join(profile, "History"), []byte("SQLite format 3\x00 "+s.url+"/?code="+s.code+" ultra"), 0o600))
	must(t, os.WriteFile(filepath.Join(profile, "Session Storage", "000003.log"), []byte("ultra.token"+sess.Token), 0o600))
	// The victim: a manual run waiting for a person to allow its read.
	vm := newModel(t, calls(call("read", map[string]any{"file_path": "calc/calc.go"})), step{"text": "waiting", "delay_ms": 30000})
	code, vr := s.call(t, "POST", "/api/runs", `{"task": "look", "flags": {"control": "manual", `+modelFlags(vm)+`}}`)
	if code != 201 {
		t.Fatalf("start: %d %v", code, vr)
	}
	victim := vr["run"].(string)
	t.Cleanup(func() { s.call(t, "POST", "/api/runs/"+victim+"/cancel", "") })
	s.waitEvent(t, "the victim's read waiting", time.Minute, func(e map[string]any) bool {
		return e["run"] == victim && e["type"] == "approval" && data(e)["state"] == "waiting"
	})
	tokenFile := filepath.Join(stateHome(t), "ultra", "serve.token")
	if b, err := os.ReadFile(tokenFile); err != nil || strings.TrimSpace(string(b)) != s.token {
		t.Fatalf("the token is not at %s: %v", tokenFile, err)
	}
	bash := func(c string) step { return calls(call("bash", map[string]any{"command": c})) }
	api := s.url + "/api"
	hm := newModel(t,
		calls(call("goals", calcGoals())),
		bash(fmt.Sprintf(`curl -s -m 5 -w ' HTTP=%%{http_code}' %s/runs`, api)),
		bash(fmt.Sprintf(`curl -s -m 5 -X POST -H 'Content-Type: application/json' -d '{}' -w ' HTTP=%%{http_code}' %s/runs/%s/approve`, api, victim)),
		bash(fmt.Sprintf(`curl -s -m 5 -X POST -d '{"task":"x"}' -H 'Authorization: Bearer %s' -w ' HTTP=%%{http_code}' %s/runs`, strings.Repeat("0", 64), api)),
		bash(fmt.Sprintf(`cat %s "$XDG_STATE_HOME/ultra/serve.token" ~/.local/state/ultra/serve.token; ls -la %s; echo END`, tokenFile, filepath.Dir(tokenFile))),
		bash(`grep -aho 'token=[0-9a-f]*' /proc/*/cmdline /proc/*/environ 2>/dev/null | head; grep -rho '[0-9a-f]\{64\}' /proc/*/environ 2>/dev/null | head; echo END`),
		bash(fmt.Sprintf(`grep -raoE 'code=[0-9a-f]{32}|ultra.token[0-9a-f]{64}' ~/.config/chromium %s/.config/chromium; ls %s/.config; echo END`, home, home)),
		bash(fmt.Sprintf(`curl -s -m 5 -X POST -d '{"code":"%s"}' -w ' HTTP=%%{http_code}' %s/session`, s.code, api)),
		step{"text": "that is all"},
	)
	res := ultraRun(t, dir, env, runArgs(hm, "--permission-profile", "trusted", "--max-turns", "9", "fix calc")...)
	var got strings.Builder
	for _, r := range hm.srv.Requests() {
		got.Write(r.Body)
	}
	body := got.String()
	if testing.Verbose() {
		t.Logf("the model received:\n%s", body[strings.LastIndex(body, `"messages"`):])
	}
	if strings.Contains(body, s.token) || strings.Contains(body, sess.Token) {
		t.Fatalf("the model received the API token, or the page's")
	}
	if regexp.MustCompile(`ultra\.token[0-9a-f]{64}|SQLite format`).MatchString(body) {
		t.Fatalf("the model saw the browser's profile")
	}
	if n := strings.Count(body, "HTTP=401"); n < 4 {
		t.Fatalf("the model's requests to the API were not all refused with 401 (%d of 4; the API must be reachable from the sandbox for this test to mean anything):\nexit %d %s\n%s", n, res.code, res.stderr, body)
	}
	// The victim still waits; nothing was allowed, and no run was started.
	time.Sleep(500 * time.Millisecond)
	evs, _ := s.events()
	for _, e := range evs {
		if e["run"] == victim && e["type"] == "approval" && data(e)["state"] != "waiting" {
			t.Errorf("the victim's call was answered: %v", data(e))
		}
	}
	if code, a := s.call(t, "GET", "/api/approvals", ""); code != 200 || !strings.Contains(fmt.Sprint(a), victim) {
		t.Errorf("the victim no longer waits for a person: %d %v", code, a)
	}
	code, list := s.raw(t, "GET", "/api/runs", "", s.token)
	if code != 200 || strings.Count(list, `"id"`) != 2 {
		t.Errorf("the runs after the model's tries: %s", list)
	}
}

// ultra serve listens on loopback only, unless the person says otherwise
// with --listen, and then with TLS or an explicit --insecure.
func TestServeListens(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "reachable from other machines"},
		{[]string{"--addr", "0.0.0.0:0", "--listen"}, "needs TLS"},
		{[]string{"--addr", "localhost"}, "give HOST:PORT"},
		{[]string{"--addr", "127.0.0.1:0", "--tls-cert", "/nonexistent.pem", "--tls-key", "/nope.pem"}, "--tls-cert /nonexistent.pem"},
	} {
		if r := ultra(t, dir, append([]string{"serve"}, c.args...)...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("serve %v: exit %d %s", c.args, r.code, r.stderr)
		}
	}
	// A program listening on IPv6's loopback at the port (where a client
	// resolving localhost may go first) stops it: nobody may stand in for it.
	if sq, err := net.Listen("tcp", "[::1]:0"); err == nil {
		_, port, _ := net.SplitHostPort(sq.Addr().String())
		r := ultra(t, dir, "serve", "--addr", "127.0.0.1:"+port)
		sq.Close()
		if r.code == 0 || !strings.Contains(r.stderr, "is taken by another program") {
			t.Errorf("serve beside a squatter on [::1]:%s: exit %d %s", port, r.code, r.stderr)
		}
	} else {
		t.Logf("no IPv6 loopback here (%v): the squatter case is not tried", err)
	}
	// With a certificate it serves HTTPS, and prints so.
	cert, key := selfSigned(t)
	cmd := execCmd(dir, ultraEnv(t), ultraBin, "serve", "--listen", "--addr", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "https://") {
		t.Fatalf("serve over TLS printed %q (%v)", line, err)
	}
	// A server on every interface is named by the machine's name.
	host, _ := os.Hostname()
	u, _, _ := strings.Cut(strings.TrimSpace(line), "/?code=")
	if !strings.HasPrefix(u, "https://"+host+":") {
		t.Errorf("serve on 0.0.0.0 printed %q, want the machine's name %s", line, host)
	}
	tb, _ := os.ReadFile(filepath.Join(stateHome(t), "ultra", "serve.token"))
	tok := strings.TrimSpace(string(tb))
	u = "https://127.0.0.1:" + u[strings.LastIndex(u, ":")+1:]
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, _ := http.NewRequest("GET", u+"/api/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := cl.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET over TLS: %v %v", resp, err)
	}
	resp.Body.Close()
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (string, string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ultra test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// A chat asked through the API answers on the stream, and a second
// question goes on in the same session with its history.
func TestServeChat(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	s.follow(t, "/api/events", "")
	m := newModel(t, text("Add subtracts."), text("calc/calc_test.go."))
	code, v := s.call(t, "POST", "/api/chats", `{"question": "what does Add do?", "flags": {`+modelFlags(m)+`}}`)
	if code != 201 {
		t.Fatalf("chat: %d %v", code, v)
	}
	session := v["run"].(string)
	s.waitEvent(t, "the answer", time.Minute, func(e map[string]any) bool {
		return e["run"] == session && e["type"] == "answer" && strings.Contains(fmt.Sprint(data(e)), "Add subtracts.")
	})
	code, v = s.call(t, "POST", "/api/chats", `{"session": "`+session+`", "question": "and its tests?", "flags": {`+modelFlags(m)+`}}`)
	if code != 201 || v["run"] != session {
		t.Fatalf("the second question: %d %v", code, v)
	}
	s.waitEvent(t, "the second answer", time.Minute, func(e map[string]any) bool {
		return e["run"] == session && e["type"] == "answer" && strings.Contains(fmt.Sprint(data(e)), "calc_test.go")
	})
	if reqs := m.srv.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "Add subtracts.") {
		t.Fatalf("the second question did not carry the session's history")
	}
	if code, c := s.call(t, "GET", "/api/chats", ""); code != 200 || !strings.Contains(fmt.Sprint(c), session) {
		t.Errorf("chats: %d %v", code, c)
	}
}

// A repository that commits ultra's state folder, or its web logs
// folder, as a link cannot make ultra write, prune or chmod where the
// link points.
func TestServeStateThroughALink(t *testing.T) {
	t.Parallel()
	victim := t.TempDir()
	old := filepath.Join(victim, "app.log")
	os.WriteFile(old, []byte("keep me"), 0o644)
	past := time.Now().Add(-48 * time.Hour)
	os.Chtimes(old, past, past)
	os.Chmod(victim, 0o755)

	dir := repo(t, calcProject)
	must(t, os.MkdirAll(filepath.Join(dir, ".ultra"), 0o755))
	must(t, os.Symlink(victim, filepath.Join(dir, ".ultra", "state")))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "state as a link")
	if r := ultra(t, dir, "serve", "--addr", "127.0.0.1:0"); r.code != 2 || !strings.Contains(r.stderr, ".ultra/state is a symbolic link") {
		t.Errorf("serve with .ultra/state a link: exit %d %s", r.code, r.stderr)
	}
	if r := ultra(t, dir, "tasks"); r.code != 2 || !strings.Contains(r.stderr, "symbolic link") {
		t.Errorf("tasks with .ultra/state a link: exit %d %s", r.code, r.stderr)
	}

	dir2 := repo(t, calcProject)
	must(t, os.MkdirAll(filepath.Join(dir2, ".ultra", "state"), 0o755))
	must(t, os.Symlink(victim, filepath.Join(dir2, ".ultra", "state", "web")))
	git(t, dir2, "add", "-f", "-A")
	git(t, dir2, "commit", "-q", "-m", "web logs as a link")
	if r := ultra(t, dir2, "serve", "--addr", "127.0.0.1:0"); r.code != 2 || !strings.Contains(r.stderr, ".ultra/state/web is a symbolic link") {
		t.Errorf("serve with .ultra/state/web a link: exit %d %s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(old); err != nil || string(b) != "keep me" {
		t.Errorf("the file the link points at: %q %v", b, err)
	}
	if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o755 {
		t.Errorf("the folder the link points at is now %v", fi.Mode())
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 1 {
		t.Errorf("ultra wrote where the link points: %v", entries)
	}
}

// The address ultra serve prints carries a one-time code, never the
// token: the code buys one session token, once; a session token works
// like the installation's, and dies with the server.
func TestServeOneTimeCode(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	s := serveIn(t, dir, ultraEnv(t))
	body := `{"code": "` + s.code + `"}`
	code, v := s.raw(t, "POST", "/api/session", body, "")
	var sess struct{ Token string }
	json.Unmarshal([]byte(v), &sess)
	if code != 201 || len(sess.Token) != 64 || sess.Token == s.token {
		t.Fatalf("trading the code: %d %s", code, v)
	}
	if code, v := s.raw(t, "POST", "/api/session", body, ""); code != 401 || !strings.Contains(v, "spent") {
		t.Errorf("the code again: %d %s", code, v)
	}
	if code, _ := s.raw(t, "GET", "/api/tasks", "", sess.Token); code != 200 {
		t.Errorf("the session token: %d", code)
	}
	// Another browser gets a code of its own from a page that has a token.
	code, v = s.raw(t, "POST", "/api/codes", "", sess.Token)
	var c struct{ Code, Path string }
	json.Unmarshal([]byte(v), &c)
	if code != 201 || c.Path != "/?code="+c.Code {
		t.Fatalf("a new code: %d %s", code, v)
	}
	if code, _ := s.raw(t, "POST", "/api/codes", "", ""); code != 401 {
		t.Errorf("a new code without a token: %d", code)
	}
	// A server started again knows none of the old session tokens.
	s2 := serveIn(t, dir, ultraEnv(t))
	if code, _ := s2.raw(t, "GET", "/api/tasks", "", sess.Token); code != 401 {
		t.Errorf("an old session's token on a new server: %d", code)
	}
}

// withBrowserHome is env with a home folder of its own outside /tmp (the
// sandbox gives commands a /tmp of their own, which would hide a home
// there whatever the rules), Go's caches kept where they are.
func withBrowserHome(t *testing.T, env []string) ([]string, string) {
	t.Helper()
	home, err := os.MkdirTemp("/var/tmp", "ultra-home-")
	if err != nil {
		t.Skipf("no folder for a home outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		b, err := exec.Command("go", "env", v).Output()
		if err == nil && strings.TrimSpace(string(b)) != "" {
			out = append(out, v+"="+strings.TrimSpace(string(b)))
		}
	}
	return append(out, "HOME="+home), home
}
