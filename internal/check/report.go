package check

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ultra-dev/ultra/internal/goal"
)

// The supervisor's protocol. Runner writes one input to the supervisor's
// stdin and closes it; the supervisor reads all of it before it starts
// anything, then writes one envelope to the report pipe and exits 0.
//
// The report pipe is a descriptor of its own (ReportFD), not stdout:
// bubblewrap's init process inside the sandbox keeps stdin, stdout and
// stderr open and can be reached through /proc/1/fd by the programs under
// test, but it closes every other descriptor; the supervisor holds the
// only write end in the sandbox, and it is not dumpable. The envelope's
// MAC, an HMAC-SHA256 of the report's exact bytes under the input's key,
// covers the rest: a program that still reaches the pipe (uncontained, as
// root) can garble the report, which blocks the check, but cannot forge
// one that Runner accepts.

// input is what Runner tells the supervisor.
type input struct {
	Key      []byte       `json:"key"`      // the MAC key; never leaves the supervisor's memory
	ReportFD int          `json:"reportFd"` // the report pipe's descriptor in the supervisor
	Channel  goal.Channel `json:"channel"`
	Check    goal.Check   `json:"check"`
	Timeout  int          `json:"timeout"`            // seconds, for the scenario
	Tmux     string       `json:"tmux,omitempty"`     // tmux program
	Chromium string       `json:"chromium,omitempty"` // browser program
	// Desktop are the desktop channel's programs by name (Xvfb,
	// xdotool, import, tesseract), as Runner found them.
	Desktop map[string]string `json:"desktop,omitempty"`
}

// envelope is what the supervisor writes to the report pipe.
type envelope struct {
	Report json.RawMessage `json:"report"`
	MAC    []byte          `json:"mac"`
}

// report is what the supervisor observed. Runner decides the status from
// it alone.
type report struct {
	Channel goal.Channel `json:"channel"`
	// Blocked says why the check could not be judged (timeout, a program
	// that could not start, a missing tool), stably (for the failure
	// signature); "" when it could. BlockedDetail adds what changes from
	// run to run (output, errors).
	Blocked       string `json:"blocked,omitempty"`
	BlockedDetail string `json:"blockedDetail,omitempty"`
	// Observed is one line: what ultra saw ("exit 0", "GET / → 200 OK").
	Observed   string      `json:"observed"`
	Assertions []assertion `json:"assertions"`
	Artifacts  []artifact  `json:"artifacts"`
	Started    []string    `json:"started"`
	Stopped    []string    `json:"stopped"`
	Ports      []portState `json:"ports,omitempty"`
	Leftovers  []leftover  `json:"leftovers,omitempty"`
}

// assertion is one expectation and what ultra found.
type assertion struct {
	Name string `json:"name"` // expect_status, step 2 expect, …
	Want string `json:"want"`
	Got  string `json:"got"`
	OK   bool   `json:"ok"`
}

// artifact is one evidence file's content.
type artifact struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// portState is whether a port the check used was free again at the end.
type portState struct {
	Port int  `json:"port"`
	Free bool `json:"free"`
}

// leftover is something that outlived its stop.
type leftover struct {
	What string `json:"what"`           // stable: no pid
	Pid  int    `json:"pid,omitempty"`  // the process, when it is one
	Comm string `json:"comm,omitempty"` // its command name
}

func (l leftover) String() string {
	switch {
	case l.Pid != 0 && l.Comm != "":
		return fmt.Sprintf("%s (pid %d, %s)", l.What, l.Pid, l.Comm)
	case l.Comm != "":
		return fmt.Sprintf("%s (%s)", l.What, l.Comm)
	}
	return l.What
}

// stable is the leftover without its pid, for failure signatures.
func (l leftover) stable() string {
	if l.Comm != "" {
		return l.What + " (" + l.Comm + ")"
	}
	return l.What
}

// seal wraps a report in its envelope.
func seal(key []byte, r *report) ([]byte, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return json.Marshal(envelope{Report: body, MAC: m.Sum(nil)})
}

// maxReport bounds the supervisor's stdout (a full-page screenshot in
// base64 is the bulk of it).
const maxReport = 48 << 20

// errNoReport is a report pipe that holds nothing at all.
var errNoReport = errors.New("no report")

// open reads the report pipe's content: exactly one envelope whose MAC
// is right, nothing before or after it.
func open(key, out []byte) (*report, error) {
	if len(out) == 0 {
		return nil, errNoReport
	}
	if len(out) >= maxReport {
		return nil, fmt.Errorf("the report is larger than %d bytes", maxReport)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var env envelope
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("the report does not decode: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("something besides the report was written to the report pipe (tampered with?)")
	}
	m := hmac.New(sha256.New, key)
	m.Write(env.Report)
	if !hmac.Equal(m.Sum(nil), env.MAC) {
		return nil, errors.New("the report's MAC is wrong: it is not the supervisor's (forged?)")
	}
	var r report
	if err := json.Unmarshal(env.Report, &r); err != nil {
		return nil, fmt.Errorf("the report does not decode: %v", err)
	}
	return &r, nil
}
