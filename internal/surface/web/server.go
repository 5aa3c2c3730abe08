// Package web is ultra's HTTP surface: a JSON API over the same commands
// every other surface runs (the command table, carried out by the ultra
// program itself), the events of the store as Server-Sent Events with
// resumption, an OpenAPI document made from the same routes, and the web
// page. It keeps no state of its own: what it shows it reads from the
// store, what it does it does by running ultra's commands. Every API
// request carries the installation's bearer token.
package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/store"
)

// Events is what the server reads of the store.
type Events interface {
	Row(ctx context.Context, id string) (*store.Run, error)
	EventsAfter(ctx context.Context, id string, seq int64, limit int) ([]store.StoredEvent, error)
	EventsSince(ctx context.Context, row int64, limit int) ([]store.StoredEvent, error)
	LastRow(ctx context.Context) (int64, error)
	LastSeq(ctx context.Context, id string) (int64, error)
}

// Commands runs ultra's own commands (procs.Processes).
type Commands interface {
	// Read runs `ultra ARGS` to its end: what it printed on stdout and
	// on stderr, and its exit code.
	Read(ctx context.Context, args []string) (stdout, stderr string, code int)
	// Start runs a command that starts or drives a run and returns once
	// the run is known, with a wait for the command's end.
	Start(ctx context.Context, args []string) (run string, wait func() (string, int), err error)
}

// Options configure a Server.
type Options struct {
	Events   Events
	Commands Commands
	// Token is the installation's bearer token, which every API request
	// must carry (or a session token the page got for a one-time code);
	// TokenFile is where it is kept, for messages.
	Token, TokenFile string
	// RunFlags and ChatFlags are the flags of ultra run and ultra chat
	// a request may pass, each with whether it takes a value.
	RunFlags, ChatFlags map[string]bool
	// Heartbeat is how often an idle event stream sends a comment line
	// (default 15s); Poll how often the store is looked at for new
	// events while someone streams them (default 10ms); WriteTimeout how
	// long a client may take to accept a write before it is dropped
	// (default 30s).
	Heartbeat, Poll, WriteTimeout time.Duration
	// Hosts, when set, are the only Host headers served (the loopback
	// names of the address): a page of another site that rebinds its own
	// name to 127.0.0.1 gets nothing.
	Hosts []string
	// EvidenceRoot holds the runs' evidence, a folder per run
	// (.ultra/state/evidence).
	EvidenceRoot string
	// Project names the repository on the page, Root is its path;
	// Version is ultra's.
	Project, Root, Version string
}

// Server is the HTTP surface of one repository.
type Server struct {
	o      Options
	hub    *hub
	routes []route
	mux    *http.ServeMux
	sess   sessions
}

// New makes the server of o.
func New(o Options) *Server {
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 10 * time.Millisecond
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	s := &Server{o: o, hub: newHub(o.Events, o.Poll), mux: http.NewServeMux(),
		sess: sessions{codes: map[string]bool{}, tokens: map[string]bool{}}}
	s.routes = s.api()
	for _, rt := range s.routes {
		h := s.known(rt)
		if rt.open {
			s.mux.Handle(rt.method+" "+rt.path, h)
			continue
		}
		s.mux.Handle(rt.method+" "+rt.path, s.authorized(h.ServeHTTP))
	}
	// Any other path under /api is no operation: say so, in JSON.
	none := func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, http.StatusNotFound, "no operation "+r.Method+" "+r.URL.Path+": GET /openapi.json lists them (a command on a run is POST /api/runs/RUN/NAME, with NAME a slash command's)")
	}
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		s.mux.HandleFunc(m+" /api/", none)
	}
	s.mux.HandleFunc("GET /openapi.json", s.openapi)
	s.page(s.mux)
	return s
}

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// The page's address carries the token until the page moves it
		// out of the address bar: no referrer leaves with it.
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		if len(s.o.Hosts) > 0 && !slices.Contains(s.o.Hosts, strings.ToLower(r.Host)) {
			h.Set("Connection", "close")
			s.fail(w, http.StatusMisdirectedRequest, "this server answers to "+strings.Join(s.o.Hosts, ", ")+", not to "+r.Host)
			return
		}
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		s.mux.ServeHTTP(w, r)
	})
}

// authorized lets a request through only with the bearer token. The
// token travels in a header, never a cookie: a page of another site
// cannot make a browser send it.
func (s *Server) authorized(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got = strings.TrimSpace(got)
		installation := s.o.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.o.Token)) == 1
		if !ok || got == "" || !installation && !s.sess.valid(got) {
			h := w.Header()
			h.Set("WWW-Authenticate", `Bearer realm="ultra"`)
			// A client without the token gets nothing more on this
			// connection: it cannot hold it open for free.
			h.Set("Connection", "close")
			s.fail(w, http.StatusUnauthorized, "this API needs a token as the header Authorization: Bearer TOKEN: the installation's, in "+s.o.TokenFile+", or the page's from its one-time code")
			return
		}
		next(w, r)
	})
}

// apiError is every error's body.
type apiError struct {
	Error string `json:"error"`
	// Exit is the exit code of the ultra command that failed, when one did.
	Exit int `json:"exit,omitempty"`
}

func (s *Server) fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// SetHosts sets the Host headers served (Options.Hosts), once the
// addresses are known.
func (s *Server) SetHosts(hosts []string) { s.o.Hosts = hosts }

// known refuses a query parameter the operation does not take: a typo
// (?sttat) is named, not ignored.
func (s *Server) known(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name := range r.URL.Query() {
			ok := false
			var names []string
			for _, q := range rt.query {
				ok = ok || q.name == name
				names = append(names, q.name)
			}
			if !ok {
				takes := "no parameters"
				if len(names) > 0 {
					takes = "these: " + strings.Join(names, ", ")
				}
				s.fail(w, http.StatusBadRequest, fmt.Sprintf("unknown parameter %q: %s %s takes %s", name, rt.method, rt.path, takes))
				return
			}
		}
		rt.handle(w, r)
	})
}
