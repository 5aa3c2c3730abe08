package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxBody bounds the request bodies the server reads.
const maxBody = 64 << 20

// exhausted is the message of answers given after the last step.
const exhausted = "script exhausted"

// Server answers Chat Completions requests from a script. It is an
// http.Handler; Serve and ListenAndServe run it on their own. It is safe
// for concurrent use; concurrent requests take steps in arrival order.
type Server struct {
	mu      sync.Mutex
	script  *Script
	main    cursor   // where the script's own steps stand
	lanes   []cursor // where each lane stands
	calls   int      // tool call ids handed out
	log     []LoggedRequest
	logPath string
}

// NewServer returns a server answering from s, which should be valid
// (LoadScript and ParseScript validate; call Script.Validate on scripts
// built in code). A nil script answers every request as exhausted. When
// logPath is not empty every request is appended to that file as a JSON
// line.
func NewServer(s *Script, logPath string) *Server {
	if s == nil {
		s = &Script{}
	}
	return &Server{script: s, logPath: logPath}
}

// SetScript validates sc, replaces the script with it and starts it from
// its first step. The request log and tool call numbering go on.
func (s *Server) SetScript(sc *Script) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.main, s.lanes = sc, cursor{}, nil
	return nil
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []LoggedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]LoggedRequest, len(s.log))
	copy(out, s.log)
	return out
}

// ServeHTTP routes a request; see the package documentation.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := func(method string, h func(http.ResponseWriter, *http.Request)) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": use "+method, 0)
			return
		}
		h(w, r)
	}
	switch r.URL.Path {
	case "/v1/chat/completions", "/chat/completions":
		route(http.MethodPost, s.chat)
	case "/v1/messages", "/messages":
		route(http.MethodPost, s.messages) // Anthropic Messages, see anthropic.go
	case "/v1/models", "/models":
		route(http.MethodGet, s.models)
	case "/_requests":
		route(http.MethodGet, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.Requests()) })
	case "/_script":
		route(http.MethodPost, s.replaceScript)
	default:
		writeError(w, http.StatusNotFound, "no route for "+r.URL.Path, 0)
	}
}

// wire is one API's side of a request: how its body is read and how its
// errors and answers are written.
type wire struct {
	// decode parses the body, fills the log entry and returns the chat
	// view of the request (for usage estimates) and whether it streams.
	decode func(body []byte, e *LoggedRequest) (req *chatRequest, stream bool, err error)
	fail   func(w http.ResponseWriter, status int, msg string, retryAfter int)
	write  func(ctx context.Context, w http.ResponseWriter, a *answer, req *chatRequest, stream bool)
}

// serve answers one request with the next step of the script, logging it;
// a malformed request takes no step.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, api wire) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		api.fail(w, http.StatusBadRequest, "reading the request: "+err.Error(), 0)
		return
	}
	entry := LoggedRequest{Time: time.Now(), Path: r.URL.Path, Body: rawBody(body), Step: -1, Lane: -1}
	req, stream, reqErr := api.decode(body, &entry)

	s.mu.Lock()
	steps, cur := s.script.Steps, &s.main
	if lane := s.laneOf(entry.FirstUser); lane >= 0 {
		steps, cur, entry.Lane = s.script.Lanes[lane].Steps, &s.lanes[lane], lane
	}
	index, step := cur.peek(steps)
	if reqErr != nil {
		index = -1
	}
	entry.N, entry.Step = len(s.log)+1, index
	if err := s.appendLog(entry); err != nil {
		s.mu.Unlock()
		api.fail(w, http.StatusInternalServerError, "scripted: "+err.Error(), 0)
		return
	}
	s.log = append(s.log, entry)
	var a *answer
	if index >= 0 {
		cur.advance(steps)
		a = s.answer(step, req, entry.N, len(body))
	} else if reqErr == nil && s.script.OnExhausted == ExhaustedText {
		a = s.answer(Step{Text: exhausted}, req, entry.N, len(body))
	}
	s.mu.Unlock()

	switch {
	case reqErr != nil:
		api.fail(w, http.StatusBadRequest, "the request body is not JSON: "+reqErr.Error(), 0)
		return
	case a == nil:
		api.fail(w, http.StatusInternalServerError, exhausted, 0)
		return
	}
	if !sleep(r.Context(), time.Duration(step.DelayMS)*time.Millisecond) {
		return
	}
	if step.Status != 0 {
		api.fail(w, step.Status, step.Error, step.RetryAfter)
		return
	}
	api.write(r.Context(), w, a, req, stream)
}

// chatWire is the Chat Completions side.
var chatWire = wire{
	decode: func(body []byte, e *LoggedRequest) (*chatRequest, bool, error) {
		var req chatRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return &req, false, err
		}
		req.summarize(e)
		return &req, req.Stream, nil
	},
	fail: writeError,
	write: func(ctx context.Context, w http.ResponseWriter, a *answer, req *chatRequest, stream bool) {
		if stream {
			a.writeStream(ctx, w, req.StreamOptions.IncludeUsage)
			return
		}
		a.writeJSON(w)
	},
}

// chat answers one completion request with the next step.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) { s.serve(w, r, chatWire) }

// cursor is where one list of steps stands.
type cursor struct {
	pos  int // index of the next step
	used int // answers the step at pos has given
}

// laneOf is the index of the first lane whose match the first user
// message contains, or -1. The caller holds s.mu.
func (s *Server) laneOf(firstUser string) int {
	if len(s.lanes) < len(s.script.Lanes) {
		s.lanes = append(s.lanes, make([]cursor, len(s.script.Lanes)-len(s.lanes))...)
	}
	for i, l := range s.script.Lanes {
		if firstUser != "" && strings.Contains(firstUser, l.Match) {
			return i
		}
	}
	return -1
}

// peek returns the index and step of steps answering the next request,
// or -1 when they are exhausted. The caller holds s.mu.
func (c *cursor) peek(steps []Step) (int, Step) {
	if c.pos >= len(steps) {
		return -1, Step{}
	}
	return c.pos, steps[c.pos]
}

// advance uses one answer of the current step. The caller holds s.mu.
func (c *cursor) advance(steps []Step) {
	c.used++
	if c.used >= steps[c.pos].times() {
		c.pos, c.used = c.pos+1, 0
	}
}

// answer makes step concrete for request number n. The caller holds s.mu.
func (s *Server) answer(step Step, req *chatRequest, n, bodyLen int) *answer {
	a := &answer{
		id:        "chatcmpl-scripted-" + strconv.Itoa(n),
		model:     req.Model,
		created:   time.Now().Unix(),
		text:      step.Text,
		thinking:  step.Thinking,
		finish:    step.FinishReason,
		chunkSize: step.ChunkSize,
		chunkGap:  time.Duration(step.ChunkDelayMS) * time.Millisecond,
		truncate:  step.Truncate,
	}
	if a.model == "" {
		a.model = s.modelName()
	}
	size := len(step.Text)
	for _, tc := range step.ToolCalls {
		s.calls++
		c := call{id: "call_" + strconv.Itoa(s.calls), name: tc.Name, args: tc.arguments()}
		a.calls = append(a.calls, c)
		size += len(c.name) + len(c.args)
	}
	if a.finish == "" {
		a.finish = "stop"
		if len(a.calls) > 0 {
			a.finish = "tool_calls"
		}
	}
	if u := step.Usage; u != nil {
		a.usage = newUsage(u.PromptTokens, u.CompletionTokens, u.CachedTokens)
	} else {
		a.usage = newUsage(int64(bodyLen/4), int64(max(size/4, 1)), 0)
	}
	return a
}

// modelName is the script's model name. The caller holds s.mu.
func (s *Server) modelName() string {
	if s.script.Model != "" {
		return s.script.Model
	}
	return "scripted"
}

// appendLog writes one log line when the server has a log file. The
// caller holds s.mu, which keeps lines in request order.
func (s *Server) appendLog(e LoggedRequest) error {
	if s.logPath == "" {
		return nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("request log: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("request log: %w", err)
	}
	return nil
}

// models lists the script's models (its one model by default).
func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	names := s.script.Models
	if len(names) == 0 {
		names = []string{s.modelName()}
	}
	s.mu.Unlock()
	data := []any{}
	for _, name := range names {
		data = append(data, map[string]any{"id": name, "object": "model", "created": 0, "owned_by": "ultra"})
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// replaceScript installs the script in the request body.
func (s *Server) replaceScript(w http.ResponseWriter, r *http.Request) {
	var sc *Script
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err == nil {
		sc, err = ParseScript(body)
	}
	if err == nil {
		err = s.SetScript(sc)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "script: "+err.Error(), 0)
		return
	}
	writeJSON(w, map[string]any{"ok": true, "steps": len(sc.Steps)})
}

func writeJSON(w http.ResponseWriter, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// Serve answers requests arriving on ln until ctx ends, then shuts down,
// giving requests in flight a moment to finish. It returns nil after a
// shutdown asked for by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(stop); err != nil {
		_ = hs.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ListenAndServe listens on the TCP address addr ("127.0.0.1:0" picks a
// free port), calls ready (when not nil) with the base URL to give OpenAI
// clients, e.g. "http://127.0.0.1:41234/v1", then serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(baseURL string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(BaseURL(ln.Addr()))
	}
	return s.Serve(ctx, ln)
}

// BaseURL is the OpenAI base URL of a server listening on addr.
func BaseURL(addr net.Addr) string {
	return "http://" + addr.String() + "/v1"
}
