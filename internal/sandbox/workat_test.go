package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ultra-dev/ultra/internal/proc"
)

// movedWorld is newWorld with a checkout in the hidden state (as the
// gate's is) and an empty directory there to show it at (WorkAt).
func movedWorld(t *testing.T, name string) (world, Layout) {
	w := newWorld(t)
	tree := filepath.Join(w.state, "runs", name, "tree")
	at := filepath.Join(w.state, "checkout")
	for _, d := range []string{tree + "/sub", at} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(tree+"/id.txt", []byte(name), 0o644)
	os.WriteFile(tree+"/.env", []byte("TOKEN=in-the-tree"), 0o644)
	return w, Layout{Work: tree, WorkAt: at, Hide: []string{w.state, w.secret, tree + "/.env"}, Home: w.home, Tmp: w.tmp}
}

// runIn runs script in the sandbox of l with dir (a host path) as the
// working directory the wrapper is given.
func runIn(t *testing.T, st Status, l Layout, dir, script string) proc.Result {
	t.Helper()
	sb := &proc.Sandbox{Wrap: st.Wrapper(l.Policy()), Env: l.Env}
	opts := proc.Options{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=/root"}, Timeout: 20 * time.Second}
	sb.Apply(&opts)
	res, err := proc.Shell(context.Background(), script, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A work tree shown at WorkAt: the command works there (the working
// directory it was given moves along), its writes land in the host's
// work tree, the host path of the tree and the rest of the state stay
// hidden, what is hidden inside the tree stays hidden, and the host's
// mount point stays empty.
func TestSandboxWorkAt(t *testing.T) {
	st := needSandbox(t)
	w, l := movedWorld(t, "r1")
	res := runIn(t, st, l, filepath.Join(l.Work, "sub"), strings.Join([]string{
		"echo PWD:$(pwd -P)", "echo ENV:$PWD",
		"echo made > made.txt", "echo top > ../top.txt",
		"echo ID:$(cat ../id.txt)",
		"cat ../.env; echo x > ../.env",
		"ls -A " + l.Work + " 2>&1 | sed s/^/HOSTPATH:/",
		"ls -A " + w.state + " | sed s/^/STATE:/",
		"cat " + w.state + "/ultra.db",
		"echo x > " + w.state + "/planted",
		"true",
	}, "; "))
	out := res.Output
	for _, want := range []string{"PWD:" + l.WorkAt + "/sub\n", "ENV:" + l.WorkAt + "/sub\n", "ID:r1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(l.Work, "sub", "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("the write did not land in the host's work tree: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(l.Work, "top.txt")); err != nil || string(b) != "top\n" {
		t.Errorf("the write did not land in the host's work tree: %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(l.Work, ".env")); string(b) != "TOKEN=in-the-tree" || strings.Contains(out, "in-the-tree") {
		t.Errorf("a path hidden in the work tree was readable or written (%q):\n%s", b, out)
	}
	if strings.Contains(out, "HOSTPATH:id.txt") || strings.Contains(out, "STATE:ultra.db") || strings.Contains(out, "\ndb") {
		t.Errorf("the state (or the tree at its host path) was visible:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(w.state, "planted")); err == nil {
		t.Error("the command wrote the hidden state")
	}
	if ents, err := os.ReadDir(l.WorkAt); err != nil || len(ents) != 0 {
		t.Errorf("the host's mount point is not an empty directory: %v, %v", ents, err)
	}
}

// Sandboxes that run at once each show their own work tree at the same
// WorkAt.
func TestSandboxWorkAtConcurrent(t *testing.T) {
	st := needSandbox(t)
	_, l1 := movedWorld(t, "one")
	_, l2 := movedWorld(t, "two")
	l2.WorkAt = l1.WorkAt // two trees, one place
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i, l := range []Layout{l1, l2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = runIn(t, st, l, l.Work, "cat id.txt; sleep 0.5; echo; cat id.txt; echo; pwd -P").Output
		}()
	}
	wg.Wait()
	for i, name := range []string{"one", "two"} {
		if want := name + "\n" + name + "\n" + l1.WorkAt + "\n"; outs[i] != want {
			t.Errorf("sandbox %d printed %q, want %q", i, outs[i], want)
		}
	}
}

// WorkAt need not lie in a hidden directory: an empty directory of the
// host's read-only root is a mount point too.
func TestSandboxWorkAtOnTheRoot(t *testing.T) {
	st := needSandbox(t)
	w, l := movedWorld(t, "r")
	l.WorkAt = filepath.Join(w.outside, "mnt")
	if err := os.Mkdir(l.WorkAt, 0o755); err != nil {
		t.Fatal(err)
	}
	res := runIn(t, st, l, l.Work, "pwd -P; cat id.txt; echo; echo x > made.txt && echo wrote")
	if want := l.WorkAt + "\nr\nwrote\n"; res.Output != want {
		t.Fatalf("printed %q, want %q", res.Output, want)
	}
	if _, err := os.Stat(filepath.Join(l.Work, "made.txt")); err != nil {
		t.Fatal(err)
	}
}
