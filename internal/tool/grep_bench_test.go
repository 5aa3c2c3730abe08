//go:build unix

package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The search benchmarks run grep and glob on a large real tree, the Go
// toolchain's own source (GOROOT/src, ~11k files, ~160 MB), copied once
// into a git repository under the user's cache directory (or the tree
// named by ULTRA_BENCH_TREE, which must be a git work tree), and run
// ripgrep on the same tree with equivalent flags. Each case checks first
// that both find the same files. Reported per op: ns/op (wall), cpu-ms/op
// (user+sys: for ultra the test process and its git child, for rg the rg
// process) and, from one extra run, peak-MiB (ultra: the Go runtime's
// memory in use, sampled every millisecond; rg: its maximum RSS).
//
//	go test ./internal/tool/ -run '^$' -bench 'Grep|Glob' -count 5

// searchCase is one benchmarked search: the grep (or glob) arguments and
// the ripgrep arguments that find the same files.
type searchCase struct {
	name string
	args map[string]any
	rg   []string
}

var grepBenchCases = []searchCase{
	{"literal", obj{"pattern": "ErrUnexpectedEOF"}, []string{"-l", "-e", "ErrUnexpectedEOF"}},
	{"regex", obj{"pattern": `func \(\w+ \*\w+\) Close\(\)`}, []string{"-l", "-e", `func \(\w+ \*\w+\) Close\(\)`}},
	{"ignorecase", obj{"pattern": "unexpected eof", "-i": true}, []string{"-l", "-i", "-e", "unexpected eof"}},
	{"globfilter", obj{"pattern": "Parallel", "glob": "*_test.go"}, []string{"-l", "-g", "*_test.go", "-e", "Parallel"}},
	{"content", obj{"pattern": "ErrShortWrite", "output_mode": "content", "head_limit": 100000}, []string{"-n", "-e", "ErrShortWrite"}},
}

var globBenchCase = searchCase{"glob", obj{"pattern": "**/*_test.go"}, []string{"--files", "-g", "*_test.go"}}

// rgBaseArgs make ripgrep search what ultra searches: hidden files too,
// .git never, no ignore files but git's, no config file, files up to
// maxGrepFileSize.
var rgBaseArgs = []string{"--no-config", "--hidden", "-g", "!.git", "--no-ignore-dot", "--max-filesize", "32M", "--color", "never"}

var (
	benchTreeOnce sync.Once
	benchTreeDir  string
	benchTreeErr  error
)

// benchTree returns the benchmark tree, making it on first use.
func benchTree(b *testing.B) string {
	benchTreeOnce.Do(func() { benchTreeDir, benchTreeErr = makeBenchTree() })
	if benchTreeErr != nil {
		b.Skipf("no benchmark tree: %v", benchTreeErr)
	}
	return benchTreeDir
}

func makeBenchTree() (string, error) {
	if d := os.Getenv("ULTRA_BENCH_TREE"); d != "" {
		return filepath.EvalSymlinks(d)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return "", err
	}
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "ultra-bench", "gosrc-"+runtime.Version())
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); err == nil {
		return filepath.EvalSymlinks(dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(src, tmp); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		cmd := exec.Command("git", append([]string{"-c", "core.autocrlf=false"}, args...)...)
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(dir)
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(t, to)
		case d.Type().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			fi, _ := in.Stat()
			out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o200)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
			return os.Chtimes(to, fi.ModTime(), fi.ModTime())
		}
		return nil
	})
}

// runRG runs ripgrep in dir and returns its output and resource use.
func runRG(rg, dir string, args []string) ([]byte, *syscall.Rusage, error) {
	cmd := exec.Command(rg, append(slices.Clone(rgBaseArgs), args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // no match
	}
	var ru *syscall.Rusage
	if cmd.ProcessState != nil {
		ru, _ = cmd.ProcessState.SysUsage().(*syscall.Rusage)
	}
	return out.Bytes(), ru, err
}

func rusageCPU(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return cpuOf(&ru)
}

func cpuOf(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the CPU time of this process and its waited-for children.
func processCPU() time.Duration {
	return rusageCPU(syscall.RUSAGE_SELF) + rusageCPU(syscall.RUSAGE_CHILDREN)
}

// peakGoMemory runs f while sampling the memory the Go runtime holds from
// the OS (mapped, not released), and returns the highest sample in MiB.
func peakGoMemory(f func()) float64 {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var peak uint64
	sample := func() {
		metrics.Read(samples)
		if v := samples[0].Value.Uint64() - samples[1].Value.Uint64(); v > peak {
			peak = v
		}
	}
	runtime.GC()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	sample()
	return float64(peak) / (1 << 20)
}

// grepFileSet runs grep with no output limit and returns the files it
// found: the paths of files_with_matches and count modes, or the file
// part of content lines.
func grepFileSet(tb testing.TB, env *Env, args map[string]any) []string {
	a := map[string]any{"head_limit": 1 << 30}
	for k, v := range args {
		a[k] = v
	}
	a["output_mode"] = "files_with_matches"
	raw, _ := json.Marshal(a)
	r := Grep{}.Run(context.Background(), env, raw)
	if r.IsError {
		tb.Fatalf("grep: %s", r.Output)
	}
	var files []string
	for i, l := range strings.Split(r.Output, "\n") {
		if i == 0 || l == "" {
			continue
		}
		if strings.HasPrefix(l, "[") {
			break
		}
		files = append(files, l)
	}
	slices.Sort(files)
	return files
}

// rgFileSet is the files ripgrep's output names.
func rgFileSet(out []byte, content bool) []string {
	seen := map[string]bool{}
	var files []string
	for _, l := range strings.Split(string(out), "\n") {
		if l == "" {
			continue
		}
		if content {
			l, _, _ = strings.Cut(l, ":")
		}
		l = strings.TrimPrefix(l, "./")
		if !seen[l] {
			seen[l] = true
			files = append(files, l)
		}
	}
	slices.Sort(files)
	return files
}

func sameFiles(tb testing.TB, what string, ultra, rg []string) {
	if slices.Equal(ultra, rg) {
		return
	}
	var onlyU, onlyR []string
	for _, f := range ultra {
		if _, ok := slices.BinarySearch(rg, f); !ok {
			onlyU = append(onlyU, f)
		}
	}
	for _, f := range rg {
		if _, ok := slices.BinarySearch(ultra, f); !ok {
			onlyR = append(onlyR, f)
		}
	}
	tb.Errorf("%s: ultra and rg found different files: %d vs %d; only ultra: %.10q; only rg: %.10q", what, len(ultra), len(rg), onlyU, onlyR)
}

func benchEnv(b *testing.B, dir string) *Env {
	env, err := NewEnv(dir, "")
	if err != nil {
		b.Fatal(err)
	}
	return env
}

// benchUltra times run and reports CPU and peak memory.
func benchUltra(b *testing.B, run func()) {
	run() // warm the page cache
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		run()
	}
	cpu := processCPU() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	peak := peakGoMemory(run)
	b.ReportMetric(peak, "peak-MiB")
	if peak > maxSearchMiB {
		b.Errorf("peak memory %.1f MiB, over the goal of %d MiB", peak, maxSearchMiB)
	}
}

// maxSearchMiB is the goal for the memory one search holds at its peak.
const maxSearchMiB = 64

func benchRG(b *testing.B, rg, dir string, args []string) {
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		_, ru, err := runRG(rg, dir, args)
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuOf(ru)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	if mib, ok := rgPeakMiB(rg, dir, args); ok {
		b.ReportMetric(mib, "peak-MiB")
	}
}

// rgPeakMiB measures ripgrep's maximum RSS with GNU time. (The rusage
// of a child of this process is no good: it counts the test process's
// own RSS, which the child starts from.)
func rgPeakMiB(rg, dir string, args []string) (float64, bool) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0, false
	}
	f, err := os.CreateTemp("", "rg-time-")
	if err != nil {
		return 0, false
	}
	f.Close()
	defer os.Remove(f.Name())
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", f.Name(), rg}, append(slices.Clone(rgBaseArgs), args...)...)...)
	cmd.Dir = dir
	cmd.Stdout = io.Discard
	_ = cmd.Run()
	out, err := os.ReadFile(f.Name())
	var kb float64
	if err != nil {
		return 0, false
	}
	ls := strings.Split(strings.TrimSpace(string(out)), "\n") // "Command exited with non-zero status 1" may come first
	if _, err := fmt.Sscan(ls[len(ls)-1], &kb); err != nil {
		return 0, false
	}
	return kb / 1024, true
}

func BenchmarkGrep(b *testing.B) {
	dir := benchTree(b)
	env := benchEnv(b, dir)
	rg, rgErr := exec.LookPath("rg")
	for _, c := range grepBenchCases {
		raw, _ := json.Marshal(c.args)
		b.Run(c.name, func(b *testing.B) {
			if rgErr == nil {
				out, _, err := runRG(rg, dir, c.rg)
				if err != nil {
					b.Fatalf("rg: %v", err)
				}
				sameFiles(b, c.name, grepFileSet(b, env, c.args), rgFileSet(out, c.args["output_mode"] == "content"))
			}
			b.Run("ultra", func(b *testing.B) {
				benchUltra(b, func() {
					if r := (Grep{}).Run(context.Background(), env, raw); r.IsError {
						b.Fatal(r.Output)
					}
				})
			})
			b.Run("rg", func(b *testing.B) {
				if rgErr != nil {
					b.Skip("rg (ripgrep) is not installed: no comparison")
				}
				benchRG(b, rg, dir, c.rg)
			})
		})
	}
}

func BenchmarkGlob(b *testing.B) {
	dir := benchTree(b)
	env := benchEnv(b, dir)
	c := globBenchCase
	raw, _ := json.Marshal(c.args)
	if rg, err := exec.LookPath("rg"); err == nil {
		out, _, err := runRG(rg, dir, c.rg)
		if err != nil {
			b.Fatalf("rg: %v", err)
		}
		rp, _ := resolvePath(env, ".")
		g, _ := compileGlob(strings.TrimPrefix(c.args["pattern"].(string), "**/"), true)
		found, err := globFiles(context.Background(), rp, g)
		if err != nil {
			b.Fatal(err)
		}
		var files []string
		for _, f := range found {
			files = append(files, f.rel)
		}
		slices.Sort(files)
		sameFiles(b, "glob", files, rgFileSet(out, false))
		if r := (Glob{}).Run(context.Background(), env, raw); r.Data["count"] != len(files) {
			b.Fatalf("glob found %v files, want %d", r.Data["count"], len(files))
		}
	}
	b.Run("ultra", func(b *testing.B) {
		benchUltra(b, func() {
			if r := (Glob{}).Run(context.Background(), env, raw); r.IsError {
				b.Fatal(r.Output)
			}
		})
	})
	b.Run("rg", func(b *testing.B) {
		rg, err := exec.LookPath("rg")
		if err != nil {
			b.Skip("rg (ripgrep) is not installed: no comparison")
		}
		benchRG(b, rg, dir, c.rg)
	})
}
