package gatefile

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/gate"
)

func TestWriteReadOnce(t *testing.T) {
	dir := t.TempDir()
	if ds, err := Read(dir + "/missing"); err != nil || ds != nil || Next(ds) != 1 {
		t.Fatal(ds, err)
	}
	for _, n := range []int{2, 1, 10} {
		if _, err := Write(dir, gate.Decision{Schema: 1, N: n, Status: gate.Fail, Time: time.Unix(int64(n), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := Read(dir)
	if err != nil || len(ds) != 3 || ds[0].N != 1 || ds[2].N != 10 || Next(ds) != 11 {
		t.Fatalf("%+v %v", ds, err)
	}
	if _, err := Write(dir, gate.Decision{N: 2, Status: gate.Pass}); err == nil || !strings.Contains(err.Error(), "never rewritten") {
		t.Fatalf("rewrite allowed: %v", err)
	}
	fi, _ := os.Stat(Path(dir, 1))
	if fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("gate file is writable: %v", fi.Mode())
	}
	os.WriteFile(dir+"/gate-11.json", []byte("{not json"), 0o644)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "gate-11.json") {
		t.Fatalf("corrupt file not reported: %v", err)
	}
}

func TestBaseline(t *testing.T) {
	dir := t.TempDir()
	if b, err := ReadBaseline(dir); b != nil || err != nil {
		t.Fatal(b, err)
	}
	if err := WriteBaseline(dir, gate.Baseline{Tree: "x", Evaluated: true, Executed: 3}); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBaseline(dir)
	if err != nil || b.Tree != "x" || b.Executed != 3 {
		t.Fatal(b, err)
	}
}
