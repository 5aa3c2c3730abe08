package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
)

// sessions are the page's way in. The address ultra serve prints carries
// a one-time code, not the installation's token: a browser keeps every
// address it opens in its history, on disk, and a code in there is spent.
// The page trades the code for a session token that lives in this
// server's memory only and dies with it.
type sessions struct {
	mu     sync.Mutex
	codes  map[string]bool
	tokens map[string]bool
}

func random() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// NewCode makes a one-time code for the page's address.
func (s *Server) NewCode() string {
	c := random()[:32]
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	s.sess.codes[c] = true
	return c
}

// session checks a token against the live session tokens.
func (s *sessions) valid(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			return true
		}
	}
	return false
}

// SessionCode is the body of POST /api/session.
type SessionCode struct {
	Code string `json:"code"`
}

// Session is its answer: the token of the page's requests.
type Session struct {
	Token string `json:"token"`
}

// session trades a one-time code for a session token; the code is spent
// whether or not the trade succeeds.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	var b SessionCode
	if err := decode(r, &b); err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	code := strings.TrimSpace(b.Code)
	s.sess.mu.Lock()
	ok := false
	for c := range s.sess.codes {
		if subtle.ConstantTimeCompare([]byte(c), []byte(code)) == 1 {
			ok = true
			delete(s.sess.codes, c)
		}
	}
	tok := ""
	if ok {
		tok = random()
		s.sess.tokens[tok] = true
	}
	s.sess.mu.Unlock()
	if !ok {
		w.Header().Set("Connection", "close")
		s.fail(w, http.StatusUnauthorized, "this code is spent or was never given: each code opens one page once. Start ultra serve again for a new one, or paste the token from "+s.o.TokenFile)
		return
	}
	writeJSON(w, http.StatusCreated, Session{Token: tok})
}

// Code is the answer of POST /api/codes: a one-time code, and the page's
// address (from the server's root) that carries it.
type Code struct {
	Code string `json:"code"`
	Path string `json:"path"`
}

// newCode makes a one-time code for opening the page in another browser.
func (s *Server) newCode(w http.ResponseWriter, r *http.Request) {
	c := s.NewCode()
	writeJSON(w, http.StatusCreated, Code{Code: c, Path: "/?code=" + c})
}
