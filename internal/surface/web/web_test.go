package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/store"
)

const token = "0123456789abcdef0123456789abcdef0123456789abcdef"

// fakeCommands records the ultra commands the server runs.
type fakeCommands struct {
	mu   sync.Mutex
	argv [][]string
	// out is what a command prints, by its first word; code its exit.
	out  map[string]string
	code map[string]int
}

func (f *fakeCommands) record(args []string) (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.argv = append(f.argv, slices.Clone(args))
	return f.out[args[0]], f.code[args[0]]
}

func (f *fakeCommands) Read(ctx context.Context, args []string) (string, string, int) {
	out, code := f.record(args)
	return out, "", code
}

func (f *fakeCommands) Start(ctx context.Context, args []string) (string, func() (string, int), error) {
	out, code := f.record(args)
	if code != 0 {
		return "", func() (string, int) { return out, code }, fmt.Errorf("no run")
	}
	return "20261129-010101-abcdef", func() (string, int) { return "", 0 }, nil
}

func (f *fakeCommands) last() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.argv) == 0 {
		return nil
	}
	return f.argv[len(f.argv)-1]
}

// storeEvents is Events over a real store.
type storeEvents struct{ *store.Store }

func (s storeEvents) Row(ctx context.Context, id string) (*store.Run, error) {
	return s.GetRun(ctx, id)
}

const runA = "20261129-010101-abcdef"

func newStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "ultra.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now()
	for _, id := range []string{runA, "20261129-020202-bbbbbb"} {
		r := &store.Run{ID: id, Task: "t", Repo: "/r", Workdir: "/r", Phase: "planning", Status: "running",
			Axes: axes.Default, State: json.RawMessage(`{}`), CreatedAt: now, UpdatedAt: now}
		if err := st.CreateRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func appendEvent(t testing.TB, st *store.Store, run string, seq int64) {
	t.Helper()
	if err := st.AppendEvent(context.Background(), run, seq, time.Now(), "assistant_text", "building", json.RawMessage(fmt.Sprintf(`{"text":"e%d"}`, seq))); err != nil {
		t.Fatal(err)
	}
}

func newServer(t *testing.T, st *store.Store, fc *fakeCommands, o Options) *httptest.Server {
	t.Helper()
	o.Events, o.Commands, o.Token = storeEvents{st}, fc, token
	if o.RunFlags == nil {
		o.RunFlags = map[string]bool{"mode": true, "max-turns": true, "include-uncommitted": false, "output": true}
	}
	o.ChatFlags = map[string]bool{"model": true}
	ts := httptest.NewServer(New(o).Handler())
	t.Cleanup(ts.Close)
	return ts
}

func do(t *testing.T, ts *httptest.Server, method, path, body string, auth bool) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if auth {
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

// Every API operation refuses a request without the token, or with a
// wrong one, and runs nothing.
func TestEveryOperationNeedsTheToken(t *testing.T) {
	st := newStore(t)
	fc := &fakeCommands{}
	ts := newServer(t, st, fc, Options{})
	s := New(Options{Events: storeEvents{st}, Commands: fc, Token: token})
	for _, rt := range s.routes {
		if rt.open {
			continue // the trade of a one-time code: TestOneTimeCode
		}
		path := strings.ReplaceAll(rt.path, "{id}", runA)
		for _, hdr := range []string{"", "Bearer wrong", "Bearer " + token[:len(token)-1], "Basic " + token, token} {
			req, _ := http.NewRequest(rt.method, ts.URL+path, strings.NewReader("{}"))
			if hdr != "" {
				req.Header.Set("Authorization", hdr)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with Authorization %q: %d, want 401", rt.method, path, hdr, resp.StatusCode)
			}
		}
	}
	if len(fc.argv) != 0 {
		t.Errorf("requests without the token ran %q", fc.argv)
	}
	// The page and the OpenAPI document hold no secret.
	for _, p := range []string{"/", "/openapi.json", "/app.js"} {
		if code, _ := do(t, ts, "GET", p, "", false); code != 200 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
}

// Every command the web surface offers has an operation, and the
// operation runs the argv the command table gives its slash form: the
// API, the TUI and the command line drive runs the same way.
func TestCommandParity(t *testing.T) {
	st := newStore(t)
	fc := &fakeCommands{}
	ts := newServer(t, st, fc, Options{})
	s := New(Options{Events: storeEvents{st}, Commands: fc, Token: token})
	served := map[string]bool{}
	for _, rt := range s.routes {
		served[rt.command] = true
	}
	for _, c := range command.Table {
		if !c.On(command.Web) {
			continue
		}
		if !served[c.Name] && pageOnly[c.Name] == "" {
			t.Errorf("/%s is on the web surface but has no API operation and no page-only reason", c.Name)
		}
	}
	cases := []struct {
		path, body, line string
	}{
		{"/api/runs/" + runA + "/approve", `{"flags":{"call":"call_3","for-run":true}}`, "/approve --call call_3 --for-run"},
		{"/api/runs/" + runA + "/approve", `{"flags":{"autonomous":true,"permission-profile":"trusted"}}`, "/approve --autonomous --permission-profile trusted"},
		{"/api/runs/" + runA + "/deny", `{"args":["not","the","lockfile"]}`, "/deny not the lockfile"},
		{"/api/runs/" + runA + "/mode", `{"args":["plan"],"flags":{"scope":"now"}}`, "/mode plan --scope now"},
		{"/api/runs/" + runA + "/steer", `{"flags":{"model-mode":"deep","manual":true}}`, "/steer --model-mode deep --manual"},
		{"/api/runs/" + runA + "/pause", ``, "/pause"},
		{"/api/runs/" + runA + "/stop", `{"flags":{"reason":"lunch"}}`, "/stop --reason lunch"},
		{"/api/runs/" + runA + "/cancel", `{}`, "/cancel"},
		{"/api/runs/" + runA + "/land", `{}`, "/land"},
		{"/api/runs/" + runA + "/undo", `{"flags":{"to-last-green":true}}`, "/undo --to-last-green"},
		{"/api/runs/" + runA + "/resume", `{"args":["try","again"]}`, "/resume try again"},
		{"/api/runs/" + runA + "/resume", `{"args":["more"],"flags":{"max-turns":10,"max-wall":"30m"}}`, "/resume more --max-turns 10 --max-wall 30m"},
		{"/api/runs/" + runA + "/deny", `{"args":["no"],"flags":{"for-run":true}}`, "/deny no --for-run"},
		{"/api/commands/doctor", `{"args":["fix"],"flags":{"dry-run":true}}`, "/doctor fix --dry-run"},
		{"/api/commands/review", `{"flags":{"base":"main"}}`, "/review --base main"},
	}
	for _, c := range cases {
		code, body := do(t, ts, "POST", c.path, c.body, true)
		if code != 200 && code != 202 {
			t.Errorf("POST %s %s: %d %s", c.path, c.body, code, body)
			continue
		}
		inv, err := command.Parse(c.line)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := inv.CLIArgs(runA)
		got := fc.last()
		if command.PrintsEvents(want) && inv.Cmd.Drives {
			want = append([]string{want[0], "--output", "jsonl"}, want[1:]...)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("POST %s %s ran %q; the slash form %q runs %q", c.path, c.body, got, c.line, want)
		}
	}
}

// Bad input is refused with a message that names the problem, and runs
// nothing.
func TestBadInput(t *testing.T) {
	st := newStore(t)
	fc := &fakeCommands{}
	ts := newServer(t, st, fc, Options{})
	cases := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/api/runs", `{"task": "x", "flags": {"mdoe": "plan"}}`, 400, `ultra run has no flag --mdoe`},
		{"POST", "/api/runs", `{"task": "x", "flags": {"output": "human"}}`, 400, `the API chooses how ultra run prints`},
		{"POST", "/api/runs", `{"task": "x", "flags": {"include-uncommitted": "maybe"}}`, 400, `is a switch`},
		{"POST", "/api/runs", `{"task": "x", "flags": {"mode": ["plan"]}}`, 400, `flag "mode" is a list`},
		{"POST", "/api/runs", `{"task": "x", "tsak": "y"}`, 400, `unknown field "tsak"`},
		{"POST", "/api/runs", `{"task": 3}`, 400, `field "task" of the body is a number, where a string is needed`},
		{"POST", "/api/runs", `{"task": "x"`, 400, `the body`},
		{"POST", "/api/runs", ``, 400, `no JSON body`},
		{"POST", "/api/runs", `{"task":"a"}{"task":"b"}`, 400, `more than one JSON value`},
		{"POST", "/api/chats", `{"question": "  "}`, 400, `field "question" is empty`},
		{"POST", "/api/chats", `{"question": "q", "session": "--rm"}`, 400, `not a session id`},
		{"POST", "/api/runs/" + runA + "/approve", `{"flags": {"for-run": true, "read-only": true}}`, 400, `two answers`},
		{"POST", "/api/runs/" + runA + "/steer", `{}`, 400, `nothing to change`},
		{"POST", "/api/runs/" + runA + "/mode", `{"args": ["party"]}`, 400, `"party" is not a work mode`},
		{"POST", "/api/runs/" + runA + "/approve", `{"flags": {"callz": "x"}}`, 400, `unknown flag --callz`},
		{"POST", "/api/runs/20261129-999999-ffffff/pause", `{}`, 404, `no run 20261129-999999-ffffff`},
		{"POST", "/api/runs/--rm/pause", `{}`, 400, `is not a run id`},
		{"GET", "/api/runs/" + runA + "/events?after=x", ``, 400, `the after parameter is "x"`},
		{"GET", "/api/events?after=-4", ``, 400, `the after parameter is "-4"`},
		{"GET", "/api/runs/" + runA + "/diff?sttat", ``, 400, `unknown parameter "sttat": GET /api/runs/{id}/diff takes these: stat, name-status`},
		{"GET", "/api/tasks?lmit=1", ``, 400, `unknown parameter "lmit"`},
		{"POST", "/api/runs/" + runA + "/aprove", `{}`, 404, `no operation POST /api/runs/` + runA + `/aprove`},
		{"GET", "/api/nope", ``, 404, `GET /openapi.json lists them`},
		{"POST", "/api/runs", `[]`, 400, `the body is an array, where a JSON object is needed`},
		{"POST", "/api/runs", `{"task": "` + strings.Repeat("x", 120<<10) + `"}`, 400, `field "task" is 122880 bytes: a task is at most 102400`},
		{"POST", "/api/runs", `{"task": "` + strings.Repeat("x", 2<<20) + `"}`, 400, `the body is 2097164 bytes: at most 1048576`},
		{"POST", "/api/runs", `{"task": "x", "flags": {"dir": "/tmp"}}`, 400, `ultra serve works in its own repository`},
	}
	for _, c := range cases {
		code, body := do(t, ts, c.method, c.path, c.body, true)
		var e apiError
		_ = json.Unmarshal([]byte(body), &e)
		if code != c.code || !strings.Contains(e.Error, c.want) {
			t.Errorf("%s %s %.200s: %d %.300s, want %d and %q", c.method, c.path, c.body, code, body, c.code, c.want)
		}
	}
	if len(fc.argv) != 0 {
		t.Errorf("bad requests ran %q", fc.argv)
	}
}

// A command's exit code becomes the status: usage errors are 400, a
// refusal in the run's state 409; the output says why.
func TestCommandOutcome(t *testing.T) {
	st := newStore(t)
	fc := &fakeCommands{out: map[string]string{"land": "ultra land: the tip is not green", "status": `{"id":"x"}`, "runs": "not json"},
		code: map[string]int{"land": 3}}
	ts := newServer(t, st, fc, Options{})
	code, body := do(t, ts, "POST", "/api/runs/"+runA+"/land", `{}`, true)
	if code != 409 || !strings.Contains(body, `"exit":3`) || !strings.Contains(body, "not green") {
		t.Errorf("a refused land: %d %s", code, body)
	}
	if code, body = do(t, ts, "GET", "/api/runs/"+runA[:12], ``, true); code != 200 || strings.TrimSpace(body) != `{"id":"x"}` {
		t.Errorf("status: %d %s", code, body)
	}
	if got := fc.last(); strings.Join(got, " ") != "status "+runA+" --json" {
		t.Errorf("a run prefix ran %q", got)
	}
	if code, body = do(t, ts, "GET", "/api/runs", ``, true); code != 500 || !strings.Contains(body, "printed no JSON") {
		t.Errorf("a command that prints no JSON: %d %s", code, body)
	}
	code, body = do(t, ts, "POST", "/api/runs", `{"task":"fix it","flags":{"mode":"plan","max-turns":3,"include-uncommitted":true}}`, true)
	if code != 201 || !strings.Contains(body, runA) {
		t.Errorf("start: %d %s", code, body)
	}
	if got := strings.Join(fc.last(), " "); got != "run --output jsonl --include-uncommitted --max-turns=3 --mode=plan -- fix it" {
		t.Errorf("start ran %q", got)
	}
}

// sse reads a stream's events: each one's id and its event's run and seq.
type sse struct {
	resp *http.Response
	sc   *bufio.Scanner
}

type got struct {
	id       string
	run      string
	seq      int64
	comments int
}

func openStream(t *testing.T, url, last string) *sse {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sse{resp: resp, sc: bufio.NewScanner(resp.Body)}
}

// next reads up to the next event, counting the comment lines before it.
func (s *sse) next(t *testing.T) got {
	t.Helper()
	var g got
	for s.sc.Scan() {
		l := s.sc.Text()
		switch {
		case strings.HasPrefix(l, ":"):
			g.comments++
		case strings.HasPrefix(l, "id: "):
			g.id = l[4:]
		case strings.HasPrefix(l, "data: "):
			var e struct {
				Run string `json:"run"`
				Seq int64  `json:"seq"`
			}
			if err := json.Unmarshal([]byte(l[6:]), &e); err != nil {
				t.Fatalf("data %q: %v", l, err)
			}
			g.run, g.seq = e.Run, e.Seq
		case l == "" && g.id != "":
			return g
		}
	}
	t.Fatalf("the stream ended: %v", s.sc.Err())
	return g
}

// A run's stream sends every event after Last-Event-ID, then each new one
// as it is stored; a client that reconnects with the last id it got
// receives every event exactly once.
func TestRunStreamResumes(t *testing.T) {
	st := newStore(t)
	ts := newServer(t, st, &fakeCommands{}, Options{})
	for i := int64(1); i <= 5; i++ {
		appendEvent(t, st, runA, i)
		appendEvent(t, st, "20261129-020202-bbbbbb", i)
	}
	s := openStream(t, ts.URL+"/api/runs/"+runA[:15]+"/events", "2")
	var seqs []int64
	for i := 0; i < 3; i++ {
		g := s.next(t)
		if g.run != runA || g.id != fmt.Sprint(g.seq) {
			t.Fatalf("event %+v", g)
		}
		seqs = append(seqs, g.seq)
	}
	// New events arrive as they are stored.
	go func() {
		for i := int64(6); i <= 300; i++ {
			appendEvent(t, st, runA, i)
		}
	}()
	for len(seqs) < 150 {
		seqs = append(seqs, s.next(t).seq)
	}
	// The connection drops; the client comes back with the last id.
	s.resp.Body.Close()
	s = openStream(t, ts.URL+"/api/runs/"+runA+"/events", fmt.Sprint(seqs[len(seqs)-1]))
	for len(seqs) < 298 {
		seqs = append(seqs, s.next(t).seq)
	}
	for i, q := range seqs {
		if q != int64(i+3) {
			t.Fatalf("event %d has seq %d: %v", i, q, seqs)
		}
	}
}

// The stream of everything numbers events by their place in the store,
// across runs, and resumes the same way.
func TestAllEventsStream(t *testing.T) {
	st := newStore(t)
	ts := newServer(t, st, &fakeCommands{}, Options{})
	appendEvent(t, st, runA, 1)
	appendEvent(t, st, "20261129-020202-bbbbbb", 1)
	appendEvent(t, st, runA, 2)
	s := openStream(t, ts.URL+"/api/events", "")
	a, b, c := s.next(t), s.next(t), s.next(t)
	if a.run != runA || b.run != "20261129-020202-bbbbbb" || c.run != runA || c.seq != 2 {
		t.Fatalf("order: %+v %+v %+v", a, b, c)
	}
	s.resp.Body.Close()
	appendEvent(t, st, "20261129-020202-bbbbbb", 2)
	s = openStream(t, ts.URL+"/api/events", b.id)
	if g := s.next(t); g.id != c.id || g.seq != 2 || g.run != runA {
		t.Fatalf("after %s: %+v", b.id, g)
	}
	if g := s.next(t); g.run != "20261129-020202-bbbbbb" || g.seq != 2 {
		t.Fatalf("then: %+v", g)
	}
}

// An idle stream sends heartbeats.
func TestHeartbeat(t *testing.T) {
	st := newStore(t)
	ts := newServer(t, st, &fakeCommands{}, Options{Heartbeat: 20 * time.Millisecond})
	s := openStream(t, ts.URL+"/api/runs/"+runA+"/events", "")
	time.Sleep(100 * time.Millisecond)
	appendEvent(t, st, runA, 1)
	if g := s.next(t); g.seq != 1 || g.comments < 2 {
		t.Fatalf("after 100ms idle: %+v (want 2 or more heartbeats before the event)", g)
	}
}

// A client that stops reading is dropped once a write waits longer than
// the write timeout; the server holds no more than a page for it
// meanwhile, and the stream's watch stops when the last client leaves.
func TestStuckClientIsDropped(t *testing.T) {
	st := newStore(t)
	s := New(Options{Events: storeEvents{st}, Commands: &fakeCommands{}, Token: token, WriteTimeout: 200 * time.Millisecond})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	big := strings.Repeat("x", 60000)
	for i := int64(1); i <= 200; i++ {
		if err := st.AppendEvent(context.Background(), runA, i, time.Now(), "assistant_text", "", json.RawMessage(`{"text":"`+big+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/runs/"+runA+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Never read: the server's writes fill the socket and block.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.hub.mu.Lock()
		n := s.hub.clients
		s.hub.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a client that reads nothing is still served after 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Storing goes on regardless.
	appendEvent(t, st, runA, 201)
}

// The OpenAPI document lists every operation, each with a unique id, and
// every schema it refers to exists.
func TestOpenAPIDocument(t *testing.T) {
	st := newStore(t)
	ts := newServer(t, st, &fakeCommands{}, Options{})
	code, body := do(t, ts, "GET", "/openapi.json", "", false)
	if code != 200 {
		t.Fatal(code)
	}
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
		Comp    struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	s := New(Options{Events: storeEvents{st}, Commands: &fakeCommands{}, Token: token})
	ids := map[string]bool{}
	for _, rt := range s.routes {
		op := doc.Paths[docPath(rt.path)][strings.ToLower(rt.method)]
		if op == nil {
			t.Errorf("%s %s is not in the document", rt.method, rt.path)
			continue
		}
		id, _ := op["operationId"].(string)
		if id == "" || ids[id] {
			t.Errorf("%s %s: operationId %q empty or repeated", rt.method, rt.path, id)
		}
		ids[id] = true
	}
	for _, ref := range strings.Split(body, `"$ref":"#/components/schemas/`)[1:] {
		name := ref[:strings.Index(ref, `"`)]
		if doc.Comp.Schemas[name] == nil {
			t.Errorf("the document refers to schema %s, which it lacks", name)
		}
	}
	if !strings.Contains(body, `"x-ultra-command":"/approve"`) {
		t.Errorf("the approve operation does not name its command")
	}
}

// Evidence files are served from the run's evidence folder only: images
// as images, everything else as sandboxed plain text (a page a check
// captured never runs as the API's origin), never through a link.
func TestEvidence(t *testing.T) {
	st := newStore(t)
	root := t.TempDir()
	dir := filepath.Join(root, runA, "G001", "G001-C1", "final")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png := "\x89PNG\r\n\x1a\n0000"
	os.WriteFile(filepath.Join(dir, "screenshot.png"), []byte(png), 0o644)
	os.WriteFile(filepath.Join(dir, "page.html"), []byte("<script>alert(1)</script>"), 0o644)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("the key"), 0o644)
	os.Symlink(secret, filepath.Join(dir, "link.txt"))
	os.Symlink(filepath.Dir(secret), filepath.Join(root, runA, "G002"))
	ts := newServer(t, st, &fakeCommands{}, Options{EvidenceRoot: root})
	get := func(p string) (int, http.Header, string) {
		req, _ := http.NewRequest("GET", ts.URL+"/api/runs/"+runA+"/evidence/"+p, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	// A run whose evidence folder is a link is served nothing through it.
	os.Symlink(filepath.Join(root, runA), filepath.Join(root, "20261129-020202-bbbbbb"))
	req, _ := http.NewRequest("GET", ts.URL+"/api/runs/20261129-020202-bbbbbb/evidence/G001/G001-C1/final/screenshot.png", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 404 {
		t.Errorf("evidence through a linked run folder: %v %v", resp, err)
	}
	if code, h, b := get("G001/G001-C1/final/screenshot.png"); code != 200 || h.Get("Content-Type") != "image/png" || b != png {
		t.Errorf("the screenshot: %d %s %q", code, h.Get("Content-Type"), b)
	}
	if code, h, _ := get("G001/G001-C1/final/page.html"); code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") ||
		!strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("a captured page: %d %v", code, h)
	}
	for _, p := range []string{"G001/G001-C1/final/link.txt", "G002/secret", "G001/../../" + runA + "/G001/G001-C1/final/page.html", "G001/G001-C1/final/nope.png", "G001/G001-C1"} {
		if code, _, b := get(p); code == 200 || strings.Contains(b, "the key") {
			t.Errorf("%s: %d %q", p, code, b)
		}
	}
}

// ?after=latest starts a stream at the end: an event without data says
// where, and only events stored after it come.
func TestStreamFromLatest(t *testing.T) {
	st := newStore(t)
	ts := newServer(t, st, &fakeCommands{}, Options{})
	appendEvent(t, st, runA, 1)
	appendEvent(t, st, runA, 2)
	lastSeq, lastRow := int64(2), "2"
	for i, path := range []string{"/api/events?after=latest", "/api/runs/" + runA + "/events?after=latest"} {
		s := openStream(t, ts.URL+path, "")
		g := s.next(t)
		want := lastRow
		if i == 1 {
			want = fmt.Sprint(lastSeq)
		}
		if g.run != "" || g.id != want {
			t.Fatalf("%s: the first block is %+v, want an id %s without an event", path, g, want)
		}
		lastSeq++
		appendEvent(t, st, runA, lastSeq)
		if e := s.next(t); e.seq != lastSeq {
			t.Fatalf("%s: after the start came %+v", path, e)
		}
		lastRow = fmt.Sprint(lastSeq)
	}
}

// A one-time code buys one session token, once; a wrong code buys
// nothing; a session token opens the API, and is no code.
func TestOneTimeCode(t *testing.T) {
	st := newStore(t)
	fc := &fakeCommands{out: map[string]string{"tasks": `{"tasks":[]}`}}
	s := New(Options{Events: storeEvents{st}, Commands: fc, Token: token, TokenFile: "/x/serve.token"})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	c := s.NewCode()
	trade := func(code string) (int, string) {
		resp, err := http.Post(ts.URL+"/api/session", "application/json", strings.NewReader(`{"code":"`+code+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := trade(c[:31] + "x"); code != 401 || !strings.Contains(b, "/x/serve.token") {
		t.Errorf("a wrong code: %d %s", code, b)
	}
	code, b := trade(c)
	var sess Session
	json.Unmarshal([]byte(b), &sess)
	if code != 201 || len(sess.Token) != 64 {
		t.Fatalf("the code: %d %s", code, b)
	}
	if code, _ := trade(c); code != 401 {
		t.Errorf("the code twice: %d", code)
	}
	if code, _ := trade(sess.Token); code != 401 {
		t.Errorf("a session token as a code: %d", code)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+sess.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the session token: %v %v", resp, err)
	}
	resp.Body.Close()
}

// On loopback, a request naming another host (a rebound name of another
// site) is refused before anything else.
func TestHosts(t *testing.T) {
	st := newStore(t)
	fc := &fakeCommands{}
	s := New(Options{Events: storeEvents{st}, Commands: fc, Token: token, Hosts: []string{"127.0.0.1:7433", "localhost:7433"}})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for host, want := range map[string]int{"127.0.0.1:7433": 200, "LOCALHOST:7433": 200, "evil.example:7433": 421, "127.0.0.1:80": 421} {
		req, _ := http.NewRequest("GET", ts.URL+"/openapi.json", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}
