package gocache

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary is also the cache program, for the go command the
// tests start.
func TestMain(m *testing.M) {
	if os.Getenv("GOCACHE_TEST_SERVE") == "1" {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

func TestServeProtocol(t *testing.T) {
	read, write := t.TempDir(), t.TempDir()
	action := sha256.Sum256([]byte("action"))
	other := sha256.Sum256([]byte("other"))
	body := []byte("compiled")
	output := sha256.Sum256(body)
	// The read layer holds one entry, as the go command writes them.
	if _, err := put(read, action[:], output[:], body); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, read)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.Encode(request{ID: 1, Command: "get", ActionID: action[:]})
	enc.Encode(request{ID: 2, Command: "get", ActionID: other[:]})
	enc.Encode(request{ID: 3, Command: "put", ActionID: other[:], OutputID: output[:], BodySize: int64(len(body))})
	enc.Encode(body) // the body: a base64 JSON string
	enc.Encode(request{ID: 4, Command: "get", ActionID: other[:]})
	enc.Encode(request{ID: 5, Command: "close"})
	var out bytes.Buffer
	if err := Serve(&in, &out, []string{read}, write); err != nil {
		t.Fatal(err)
	}
	var rs []response
	dec := json.NewDecoder(&out)
	for dec.More() {
		var r response
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if len(rs) != 6 || strings.Join(rs[0].KnownCommands, ",") != "get,put,close" {
		t.Fatalf("responses %+v", rs)
	}
	if r := rs[1]; r.Miss || !strings.HasPrefix(r.DiskPath, read) || r.Size != int64(len(body)) || !bytes.Equal(r.OutputID, output[:]) {
		t.Fatalf("a hit in the read layer: %+v", r)
	}
	if !rs[2].Miss {
		t.Fatalf("a miss: %+v", rs[2])
	}
	if r := rs[3]; r.Err != "" || !strings.HasPrefix(r.DiskPath, write) {
		t.Fatalf("put: %+v", r)
	}
	if r := rs[4]; r.Miss || !strings.HasPrefix(r.DiskPath, write) {
		t.Fatalf("a hit in the write layer: %+v", r)
	}
	if b, _ := os.ReadFile(rs[4].DiskPath); !bytes.Equal(b, body) {
		t.Fatalf("stored %q", b)
	}
	if after := snapshot(t, read); after != before {
		t.Fatal("the read layer changed")
	}
}

// The go command builds through the program: what is missing from the
// person's cache is compiled and stored in the private layer; the
// person's cache does not change.
func TestGoBuildsThroughTheProgram(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "m.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built\") }\n"), 0o644)
	person, store := t.TempDir(), t.TempDir()
	// The person's cache, as the go command fills it.
	run := func(extra ...string) string {
		cmd := exec.Command(goBin, "run", ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), append([]string{"GOCACHE=" + person, "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local"}, extra...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go run %v: %v\n%s", extra, err, out)
		}
		return string(out)
	}
	run()
	before := snapshot(t, person)
	os.WriteFile(filepath.Join(mod, "m.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built again\") }\n"), 0o644)
	env := append(Env(self, store), "GOCACHE_TEST_SERVE=1")
	if out := run(env...); !strings.Contains(out, "built again") {
		t.Fatalf("go run through the program printed %q", out)
	}
	if after := snapshot(t, person); after != before {
		t.Fatal("the person's cache changed")
	}
	n := 0
	filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, "-a") {
			n++
		}
		return nil
	})
	if n == 0 {
		t.Fatal("nothing was stored in the program's own layer")
	}
}

// snapshot lists a directory's files with their sizes and contents' hash.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + string(sum[:4]) + "\n")
		return nil
	})
	return b.String()
}
