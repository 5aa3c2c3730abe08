// Package gocache is the Go build cache of everything ultra contains:
// a cache program for the go command (GOCACHEPROG) that reads the
// person's build cache, never writes it, and keeps what the go command
// stores in a layer of its own that ends with the sandbox.
//
// Inside ultra's sandboxes the person's cache is read-only: nothing the
// model's code runs (a test, a criterion's program, a Makefile) can plant
// a compiled package or a test result there for a later compilation or
// gate to read. A go command that finds the cache read-only compiles what
// is missing, but some of its steps (cgo, the race detector's runtime)
// fail when they cannot store their output; through this program every
// store succeeds, into the private layer, and the person's cache stays
// as it was.
//
// The layers have the go command's own disk layout
// (cmd/go/internal/cache): an action's entry in DIR/aa/<action>-a, one
// line "v1 <action> <output> <size> <time>", its output in
// DIR/oo/<output>-d.
package gocache

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Arg is the argument that starts ultra as the cache program.
const Arg = "__gocacheprog"

// WriteEnv names the directory the program stores into.
const WriteEnv = "ULTRA_GOCACHE_WRITE"

// request is the go command's cacheprog.Request as it arrives.
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

// response is cacheprog.Response.
type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// Serve answers the go command's requests from in on out until it says
// close (or in ends): gets from write first, then from each of read in
// order; puts into write.
func Serve(in io.Reader, out io.Writer, read []string, write string) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(r response) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	layers := append([]string{write}, read...)
	for {
		var req request
		if err := dec.Decode(&req); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading a request: %w", err)
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("reading the body of request %d: %w", req.ID, err)
			}
		}
		res := response{ID: req.ID}
		switch req.Command {
		case "get":
			get(layers, req.ActionID, &res)
		case "put":
			if p, err := put(write, req.ActionID, req.OutputID, body); err != nil {
				res.Err = err.Error()
			} else {
				res.DiskPath = p
			}
		case "close":
			return send(res)
		default:
			res.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := send(res); err != nil {
			return err
		}
	}
}

// entrySize is the length of an action entry line, its newline included.
const entrySize = 2 + 1 + 64 + 1 + 64 + 1 + 20 + 1 + 20 + 1

func file(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

// get looks the action up in each layer; the first whole entry whose
// output is on disk with its size answers.
func get(layers []string, action []byte, res *response) {
	res.Miss = true
	if len(action) != sha256.Size {
		return
	}
	for _, dir := range layers {
		b, err := os.ReadFile(file(dir, action, "a"))
		if err != nil || len(b) != entrySize || !strings.HasPrefix(string(b), "v1 ") {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) != 5 || f[1] != hex.EncodeToString(action) {
			continue
		}
		out, err1 := hex.DecodeString(f[2])
		size, err2 := strconv.ParseInt(f[3], 10, 64)
		nano, err3 := strconv.ParseInt(f[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || len(out) != sha256.Size {
			continue
		}
		p := file(dir, out, "d")
		if fi, err := os.Stat(p); err != nil || fi.Size() != size {
			continue
		}
		t := time.Unix(0, nano)
		res.Miss, res.OutputID, res.Size, res.Time, res.DiskPath = false, out, size, &t, p
		return
	}
}

// put stores body as output of action in dir and returns the output's
// path.
func put(dir string, action, output, body []byte) (string, error) {
	if len(action) != sha256.Size || len(output) != sha256.Size {
		return "", fmt.Errorf("put: an action and an output id of %d bytes are needed", sha256.Size)
	}
	p := file(dir, output, "d")
	if err := writeFile(p, body); err != nil {
		return "", err
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", action, output, len(body), time.Now().UnixNano())
	if err := writeFile(file(dir, action, "a"), []byte(entry)); err != nil {
		return "", err
	}
	return p, nil
}

// writeFile writes b to p as a whole (a temporary file renamed over it).
func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// Main is ultra's main as the cache program: the layers from GOCACHE
// (read-only) and WriteEnv.
func Main() int {
	write := os.Getenv(WriteEnv)
	if write == "" {
		fmt.Fprintln(os.Stderr, "ultra's Go cache program: "+WriteEnv+" names no directory to store into")
		return 2
	}
	var read []string
	if c := os.Getenv("GOCACHE"); c != "" && c != "off" {
		read = append(read, c)
	}
	if err := Serve(os.Stdin, os.Stdout, read, write); err != nil {
		fmt.Fprintln(os.Stderr, "ultra's Go cache program:", err)
		return 1
	}
	return 0
}

// Env is what makes the go command use ultra's program as its cache:
// program is ultra's own, write the directory it stores into.
func Env(program, write string) []string {
	return []string{"GOCACHEPROG=" + strconv.Quote(program) + " " + Arg, WriteEnv + "=" + write}
}
