package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// suite writes a Go module of pkgs packages with tests tests each; the
// first test of package 0 fails until fixed.
func suite(b testing.TB, pkgs, tests int) string {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/bench\n\ngo 1.22\n"), 0o644)
	for p := range pkgs {
		pd := filepath.Join(dir, fmt.Sprintf("p%02d", p))
		os.MkdirAll(pd, 0o755)
		os.WriteFile(filepath.Join(pd, "p.go"), []byte(fmt.Sprintf("package p%02d\n\nfunc Sum(n int) int {\n\ts := 0\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s\n}\n", p)), 0o644)
		src := fmt.Sprintf("package p%02d\n\nimport \"testing\"\n", p)
		for i := range tests {
			want := 4950
			if p == 0 && i == 0 {
				want = 1 // the failing test
			}
			src += fmt.Sprintf("\nfunc TestSum%d(t *testing.T) {\n\tfor range 20000 {\n\t\t_ = Sum(100)\n\t}\n\tif Sum(100) != %d {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n", i, want)
		}
		os.WriteFile(filepath.Join(pd, "p_test.go"), []byte(src), 0o644)
	}
	return dir
}

// BenchmarkReverify compares re-verification after a one-line change with
// a full run of the suite: when the failing test still fails, only it runs
// (failed-first, early stop); when the fix works, it runs and then the full
// suite does.
func BenchmarkReverify(b *testing.B) {
	ctx := context.Background()
	v := verify.New()
	dir := suite(b, 20, 10)
	req := verify.Request{Dir: dir, LogDir: b.TempDir()}
	first, _, err := judgeVerification(ctx, v, req, dir, nil, gate.Input{N: 1}, nil)
	if err != nil || first.Status != gate.Fail || len(first.Failing) != 1 {
		b.Fatalf("setup: %v %+v", err, first)
	}
	b.Run("full-suite", func(b *testing.B) {
		for b.Loop() {
			if d, _, _ := judgeVerification(ctx, v, req, dir, nil, gate.Input{N: 2}, nil); d.Status != gate.Fail || d.Focused {
				b.Fatal(d.Status)
			}
		}
	})
	b.Run("failed-first-still-failing", func(b *testing.B) {
		for b.Loop() {
			if d, _, _ := judgeVerification(ctx, v, req, dir, nil, gate.Input{N: 2}, &first); d.Status != gate.Fail || !d.Focused {
				b.Fatal(d.Status, d.Focused)
			}
		}
	})
	fixed := filepath.Join(dir, "p00", "p_test.go")
	src, _ := os.ReadFile(fixed)
	os.WriteFile(fixed, []byte(string(src[:0])+replaceOnce(string(src), "!= 1 {", "!= 4950 {")), 0o644)
	b.Run("failed-first-fixed", func(b *testing.B) {
		for b.Loop() {
			if d, _, _ := judgeVerification(ctx, v, req, dir, nil, gate.Input{N: 2}, &first); d.Status != gate.Pass {
				b.Fatal(d.Status, d.Reasons)
			}
		}
	})
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

// BenchmarkContainedVerify is the cost of the gate's containment on a
// small project: the same full verification run plainly in the worktree,
// and hermetically (a clean checkout of the tree, tests in the sandbox).
// Compare the medians (go test -bench ContainedVerify -count 5).
func BenchmarkContainedVerify(b *testing.B) {
	// Fresh results in both (the gate's default): a person's GOFLAGS
	// without -count=1 would let go test replay cached results.
	b.Setenv("GOFLAGS", "-count=1")
	ctx := context.Background()
	dir := suite(b, 3, 5)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatal(err, string(out))
		}
	}
	tree, err := workspace.TreeHash(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	v := verify.New()
	o := Options{StateRoot: b.TempDir(), Ultra: filepath.Join(b.TempDir(), "ultra")}
	if out, err := exec.Command("go", "build", "-o", o.Ultra, "../../cmd/ultra").CombinedOutput(); err != nil {
		b.Fatal(err, string(out))
	}
	runDir := RunDir(o.StateRoot, "bench")
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if res, err := v.Verify(ctx, verify.Request{Dir: dir, LogDir: b.TempDir()}); err != nil || res.Failed != 1 {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("contained", func(b *testing.B) {
		if st := o.sandboxStatus(); !st.Available {
			b.Skip(st.Problem)
		}
		for b.Loop() {
			req, cleanup, err := o.hermetic(ctx, runDir, dir, nil, tree, verify.Request{LogDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			res, err := v.Verify(ctx, req)
			cleanup()
			if err != nil || res.Failed != 1 {
				b.Fatal(err, res)
			}
		}
	})
}

// BenchmarkReverifyContained is BenchmarkReverify as the gate runs it: a
// checkout of the tree, the tests in the sandbox, Go test binaries under
// Landlock (the gate cache off: every iteration runs). The goal is a
// still-failing re-verification within 25% of the full suite's time on a
// project of 20 packages; compare the medians:
//
//	go test ./internal/agent -run '^$' -bench ReverifyContained -count 6
func BenchmarkReverifyContained(b *testing.B) {
	b.Setenv("GOFLAGS", "-count=1")
	ctx := context.Background()
	dir := suite(b, 20, 10)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatal(err, string(out))
		}
	}
	o := Options{StateRoot: b.TempDir(), Ultra: filepath.Join(b.TempDir(), "ultra"), Verifier: verify.New(), NoGateCache: true}
	if st := o.sandboxStatus(); !st.Available {
		b.Skip(st.Problem)
	}
	if out, err := exec.Command("go", "build", "-o", o.Ultra, "../../cmd/ultra").CombinedOutput(); err != nil {
		b.Fatal(err, string(out))
	}
	runDir := RunDir(o.StateRoot, "bench")
	judge := func(b *testing.B, last *gate.Decision) gate.Decision {
		tree, err := workspace.TreeHash(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		d, _, err := o.judgeHermetic(ctx, runDir, dir, nil, true, verify.Request{LogDir: b.TempDir()}, gate.Input{Tree: tree, N: 2}, last, nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	first := judge(b, nil)
	if first.Status != gate.Fail || len(first.Failing) != 1 {
		b.Fatalf("setup: %+v", first)
	}
	b.Run("full-suite", func(b *testing.B) {
		for b.Loop() {
			if d := judge(b, nil); d.Status != gate.Fail || d.Focused {
				b.Fatal(d.Status)
			}
		}
	})
	b.Run("failed-first-still-failing", func(b *testing.B) {
		for b.Loop() {
			if d := judge(b, &first); d.Status != gate.Fail || !d.Focused {
				b.Fatal(d.Status, d.Focused)
			}
		}
	})
}
