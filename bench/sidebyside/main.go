// Command sidebyside runs ultra and other coding agents on the same task,
// each against the same scripted model, and prints what each run cost:
// wall time, CPU, peak memory, model requests and the bytes sent to the
// model, with the ratios ultra/peer.
//
//	go run ./bench/sidebyside -n 5 -delay 200 -agents ultra,claude,opencode
//
// The task is BenchmarkFullCycle's (e2e/cycle_bench_test.go): a small Go
// project of four packages and 17 tests, one failing until Add adds. Every
// run starts from a new git repository. The model is ultra's scripted
// server (internal/llm/scripted), in this process, answering every request
// after -delay milliseconds; each agent has a script of its own, written in
// its own tools (ultra: read, goals, edit, verify, review; Claude Code:
// Read, Glob, Edit, Bash; opencode: read, glob, edit, bash), since each
// names them differently. Requests for another model than the main one
// (the titles and summaries an agent asks of its small model) are answered
// from a second script and counted apart.
//
// Peers are looked up on the PATH (claude, opencode); one that is missing
// is skipped with the reason. -agents takes name=path to give a binary.
// ultra is built from this module unless given as ultra=path. Each agent
// runs once unmeasured first (caches, the peers' first-run set-up), then -n
// times, the agents taking turns. Nothing here runs in CI: it is a main
// package without tests. docs/performance.md ("Side by side with other
// agents") has the figures and how the peers are pointed at the server.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ultra-dev/ultra/internal/llm/scripted"
)

// The model names the agents are given: the main one, and the small one
// for their side requests.
const (
	mainModel = "scripted"
	sideModel = "scripted-small"
)

// prompt is the task every agent is given.
const prompt = "Add in calc/calc.go subtracts instead of adding, so TestAdd fails. Fix it and check with go test ./..."

func main() {
	n := flag.Int("n", 5, "measured runs per agent")
	delay := flag.Int("delay", 200, "milliseconds the model takes for each answer")
	agentList := flag.String("agents", "ultra,claude,opencode", "agents to run, comma-separated; name=path gives the binary")
	warmup := flag.Int("warmup", 1, "unmeasured runs per agent before the measured ones")
	timeout := flag.Duration("timeout", 5*time.Minute, "time limit of one run")
	verbose := flag.Bool("v", false, "print every run")
	keep := flag.Bool("keep", false, "keep the repositories, homes and outputs of the runs, and print where")
	flag.Parse()
	if err := run(*n, *warmup, time.Duration(*delay)*time.Millisecond, *agentList, *timeout, *verbose, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

func run(n, warmup int, delay time.Duration, agentList string, timeout time.Duration, verbose, keep bool) error {
	if n < 1 {
		return errors.New("-n must be at least 1")
	}
	root, err := os.MkdirTemp("", "ultra-sidebyside-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "runs kept in", root)
	} else {
		defer os.RemoveAll(root)
	}
	goEnv, err := goCaches()
	if err != nil {
		return err
	}

	m := &meter{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	host := "http://" + ln.Addr().String()

	specs := strings.Split(agentList, ",")
	for _, spec := range specs {
		if name, _, _ := strings.Cut(strings.TrimSpace(spec), "="); agents[name].command == "" {
			return fmt.Errorf("unknown agent %q (known: ultra, claude, opencode)", name)
		}
	}
	var results []*agentResult
	for _, spec := range specs {
		name, bin, _ := strings.Cut(strings.TrimSpace(spec), "=")
		a := agents[name]
		if bin == "" && name == "ultra" {
			if bin, err = buildUltra(root); err != nil {
				return err
			}
		} else if bin == "" {
			if bin, err = exec.LookPath(a.command); err != nil {
				fmt.Printf("%s: skipped: %s is not on the PATH (%s)\n", name, a.command, a.install)
				continue
			}
		}
		version := agentVersion(bin)
		if name == "ultra" && !strings.Contains(spec, "=") {
			version += " " + moduleCommit()
		}
		home := filepath.Join(root, name, "home")
		if err := makeHome(home); err != nil {
			return err
		}
		env := append(baseEnv(home, goEnv), a.env(host, home)...)
		if a.setup != nil {
			if err := a.setup(host, home); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", name, version)
		results = append(results, &agentResult{name: name, version: version, agent: a, bin: bin, env: env})
	}

	// Round after round, each agent once per round: a load that comes and
	// goes on the machine falls on every agent alike.
	for i := range warmup + n {
		for _, res := range results {
			if res.failure != "" {
				continue
			}
			dir, err := makeRepo(filepath.Join(root, res.name, fmt.Sprintf("run%d", i)))
			if err != nil {
				return err
			}
			r, err := oneRun(m, res.agent, res.bin, host, dir, res.env, delay, timeout)
			if err != nil {
				res.failure = fmt.Sprintf("run %d: %v", i+1, err)
				fmt.Printf("%s: failed: %s\n", res.name, res.failure)
				continue
			}
			label := " (warm-up)"
			if i >= warmup {
				res.runs = append(res.runs, r)
				label = ""
			}
			if verbose {
				fmt.Fprintf(os.Stderr, "  %s run %d%s: %s\n", res.name, i+1, label, r)
			}
		}
	}
	fmt.Println()
	report(os.Stdout, results, n, delay)
	return nil
}

// agent is how one agent is run against the scripted model.
type agent struct {
	command string // its name on the PATH
	install string // how to install it, for the skip message
	// steps are the main model's answers for a run in the repository dir.
	steps func(dir string) []map[string]any
	// args are the command line after the binary (host is
	// http://127.0.0.1:PORT).
	args func(host string) []string
	// env is what points it at the server (host is http://127.0.0.1:PORT)
	// and keeps it off the user's settings.
	env func(host, home string) []string
	// setup writes its configuration into its home, once.
	setup func(host, home string) error
}

var agents = map[string]agent{
	"ultra": {
		command: "ultra",
		steps:   ultraSteps,
		args: func(host string) []string {
			return []string{"run", "--output", "jsonl", "--provider", "openai", "--base-url", host + "/v1", "--model", mainModel, prompt}
		},
		env: func(string, string) []string { return nil },
	},
	"claude": {
		command: "claude",
		install: "npm install -g @anthropic-ai/claude-code",
		steps:   claudeSteps,
		args: func(string) []string {
			return []string{"-p", prompt, "--model", mainModel, "--allowedTools", "Read,Glob,Edit,Bash", "--permission-mode", "acceptEdits"}
		},
		env: func(host, home string) []string {
			return []string{
				"ANTHROPIC_BASE_URL=" + host, "ANTHROPIC_API_KEY=dummy",
				"ANTHROPIC_SMALL_FAST_MODEL=" + sideModel, "ANTHROPIC_DEFAULT_HAIKU_MODEL=" + sideModel,
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
			}
		},
	},
	"opencode": {
		command: "opencode",
		install: "npm install -g opencode-ai",
		steps:   opencodeSteps,
		args: func(string) []string {
			return []string{"run", "-m", "scripted/" + mainModel, prompt}
		},
		env: func(host, home string) []string {
			return []string{"OPENCODE_CONFIG=" + filepath.Join(home, "opencode.json")}
		},
		setup: func(host, home string) error {
			cfg := map[string]any{
				"$schema": "https://opencode.ai/config.json",
				"provider": map[string]any{"scripted": map[string]any{
					"npm":     "@ai-sdk/openai-compatible",
					"name":    "Scripted",
					"options": map[string]any{"baseURL": host + "/v1", "apiKey": "dummy"},
					"models":  map[string]any{mainModel: map[string]any{"name": mainModel}, sideModel: map[string]any{"name": sideModel}},
				}},
				"model":       "scripted/" + mainModel,
				"small_model": "scripted/" + sideModel,
				"autoupdate":  false,
				"share":       "disabled",
				"permission":  map[string]any{"edit": "allow", "bash": "allow"},
			}
			b, _ := json.MarshalIndent(cfg, "", "  ")
			return os.WriteFile(filepath.Join(home, "opencode.json"), b, 0o644)
		},
	},
}

func call(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

func calls(cs ...map[string]any) map[string]any { return map[string]any{"tool_calls": cs} }

// ultraSteps is BenchmarkFullCycle's script (e2e's fixSteps): look, propose
// the goal with three criteria, edit, verify, approve.
func ultraSteps(string) []map[string]any {
	crit := func(model, scenario string, check map[string]any) map[string]any {
		return map[string]any{"scenario": scenario, "user_model": model, "channel": "command", "check": check, "expected_evidence": "what the check prints"}
	}
	goals := map[string]any{"goals": []any{map[string]any{
		"title": "Add adds", "objective": "Add adds, shown by its criteria",
		"criteria": []any{
			crit("happy", "Add adds, as its test shows", map[string]any{"run": "go test -count=1 -run '^TestAdd$' ./calc", "expect_exit": 0}),
			crit("edge", "no subtraction is left in Add", map[string]any{"run": "grep -q 'return a - b' calc/calc.go", "expect_exit": 1}),
			crit("regression", "both tests are still there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2\\s*$"}),
		},
	}}}
	return []map[string]any{
		calls(call("read", map[string]any{"file_path": "calc/calc.go"}), call("glob", map[string]any{"pattern": "**/*_test.go"})),
		calls(call("goals", goals)),
		calls(call("edit", map[string]any{"file_path": "calc/calc.go", "old_string": "return a - b", "new_string": "return a + b"})),
		calls(call("phase", map[string]any{"to": "verifying"})),
		calls(call("verify", map[string]any{})),
		calls(call("review", map[string]any{"verdict": "APPROVE"})),
	}
}

// claudeSteps is the same work in Claude Code's tools, which take
// absolute paths: look, edit, run the tests, report.
func claudeSteps(dir string) []map[string]any {
	return peerSteps(dir, tools{"Read", "Glob", "Edit", "Bash", "file_path", "old_string", "new_string"})
}

// opencodeSteps is the same work in opencode's tools.
func opencodeSteps(dir string) []map[string]any {
	return peerSteps(dir, tools{"read", "glob", "edit", "bash", "filePath", "oldString", "newString"})
}

// tools are a peer's names for its tools and their arguments.
type tools struct{ read, glob, edit, bash, file, old, new string }

// peerSteps is a peer's script for a run in dir: read calc.go and list the
// tests, edit, run go test, report.
func peerSteps(dir string, t tools) []map[string]any {
	file := filepath.Join(dir, "calc", "calc.go")
	return []map[string]any{
		calls(call(t.read, map[string]any{t.file: file}), call(t.glob, map[string]any{"pattern": "**/*_test.go"})),
		calls(call(t.edit, map[string]any{t.file: file, t.old: "return a - b", t.new: "return a + b"})),
		calls(call(t.bash, map[string]any{"command": "go test ./...", "description": "Run the tests"})),
		{"text": "Add now adds; go test ./... passes."},
	}
}

// meter is the model server: it counts the requests and their bytes and
// hands each to the main or the side script.
type meter struct {
	mu         sync.Mutex
	main, side *scripted.Server
	c          counts
}

// counts are one run's requests to the model.
type counts struct {
	requests, sideRequests int      // chat requests to the main and the small model
	bytes, sideBytes       int64    // their bodies
	other                  []string // the requests to other endpoints: "METHOD PATH"
}

func (m *meter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var head struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &head)
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions") || strings.HasSuffix(r.URL.Path, "/messages")
	m.mu.Lock()
	srv := m.main
	switch {
	case !chat:
		m.c.other = append(m.c.other, r.Method+" "+r.URL.Path)
	case head.Model == sideModel:
		m.c.sideRequests++
		m.c.sideBytes += int64(len(body))
		srv = m.side
	default:
		m.c.requests++
		m.c.bytes += int64(len(body))
	}
	m.mu.Unlock()
	if srv == nil {
		http.Error(w, "no run", http.StatusServiceUnavailable)
		return
	}
	srv.ServeHTTP(w, r)
}

// start gives the meter the scripts of a new run and zeroes its counts.
func (m *meter) start(steps []map[string]any, delay time.Duration) error {
	for _, s := range steps {
		s["delay_ms"] = delay.Milliseconds()
	}
	main, err := newScripted(map[string]any{"model": mainModel, "steps": steps})
	if err != nil {
		return err
	}
	side, err := newScripted(map[string]any{"model": sideModel, "steps": []any{
		map[string]any{"text": "Fix Add in calc", "delay_ms": delay.Milliseconds(), "repeat": 1000},
	}})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.main, m.side, m.c = main, side, counts{}
	m.mu.Unlock()
	return nil
}

// finish returns the run's counts and checks that the agent took every
// step of its script, and no more.
func (m *meter) finish(steps int) (counts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := -1
	for _, e := range m.main.Requests() {
		if e.Step < 0 {
			return m.c, fmt.Errorf("request %d came after the script's %d answers", e.N, steps)
		}
		last = e.Step
	}
	if last != steps-1 {
		return m.c, fmt.Errorf("the agent stopped after %d of its script's %d answers", last+1, steps)
	}
	return m.c, nil
}

func newScripted(script map[string]any) (*scripted.Server, error) {
	b, err := json.Marshal(script)
	if err != nil {
		return nil, err
	}
	s, err := scripted.ParseScript(b)
	if err != nil {
		return nil, err
	}
	return scripted.NewServer(s, ""), nil
}

// runResult is one measured run.
type runResult struct {
	wall time.Duration
	usage
	counts
	answers int
}

func (r runResult) String() string {
	s := fmt.Sprintf("wall %s, cpu %s (agent %s), rss %s (tree %s), %d+%d requests, %s+%s sent",
		ms(r.wall), ms(r.cpu), ms(r.agentCPU), mib(r.hwm), mib(r.treeRSS), r.requests, r.sideRequests, kb(r.bytes), kb(r.sideBytes))
	if len(r.other) > 0 {
		s += ", also " + strings.Join(r.other, ", ")
	}
	return s
}

// oneRun runs the agent once in dir and checks the fix is there.
func oneRun(m *meter, a agent, bin, host, dir string, env []string, delay, timeout time.Duration) (runResult, error) {
	steps := a.steps(dir)
	if err := m.start(steps, delay); err != nil {
		return runResult{}, err
	}
	args := a.args(host)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, append(slices.Clone(env), "PWD="+dir) // opencode takes its directory from PWD
	out, err := os.Create(filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".out"))
	if err != nil {
		return runResult{}, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return runResult{}, err
	}
	done := make(chan struct{})
	seen := make(chan usage, 1)
	go func() { seen <- sample(cmd.Process.Pid, done) }()
	werr := cmd.Wait()
	wall := time.Since(start)
	close(done)
	r := runResult{wall: wall, usage: <-seen, answers: len(steps)}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind
	c, serr := m.finish(len(steps))
	r.counts = c
	switch {
	case werr != nil:
		return r, fmt.Errorf("%v\n%s", werr, tail(out.Name()))
	case serr != nil:
		return r, fmt.Errorf("%v\n%s", serr, tail(out.Name()))
	}
	if !fixed(dir) {
		return r, fmt.Errorf("no fix in the work tree or any commit\n%s", tail(out.Name()))
	}
	return r, nil
}

// usage is what a sampler saw of an agent's process tree.
type usage struct {
	hwm      int64         // KiB: the agent process's own peak (VmHWM)
	treeRSS  int64         // KiB: the largest sum of the tree's resident sizes at one sample
	cpu      time.Duration // user + system of every process seen in the tree
	agentCPU time.Duration // the agent process's alone
}

// sample watches the process tree under pid every 10 ms until done. It
// walks /proc rather than trusting wait4: a sandboxed command's inner
// processes (bubblewrap's PID namespace) are reaped by init, not by the
// agent, so their CPU never reaches the agent's rusage. A process's CPU is
// its last sample's, so the last 10 ms of each process, and processes
// shorter than that, are missed.
func sample(pid int, done <-chan struct{}) usage {
	var u usage
	cpu := map[string]int64{} // "pid start" → clock ticks
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		procs := readProcs()
		var rss int64
		for _, p := range procs {
			if p.pid == pid {
				u.agentCPU = time.Duration(p.ticks) * time.Second / clockTicks
			}
			if p.pid == pid || p.under(pid, procs) {
				cpu[p.key] = max(cpu[p.key], p.ticks)
				rss += p.rssKiB
			} else if _, seen := cpu[p.key]; seen { // left the tree (its parent exited), still running
				cpu[p.key] = max(cpu[p.key], p.ticks)
			}
		}
		u.treeRSS = max(u.treeRSS, rss)
		u.hwm = max(u.hwm, hwm(pid))
		select {
		case <-done:
			var ticks int64
			for _, t := range cpu {
				ticks += t
			}
			u.cpu = time.Duration(ticks) * time.Second / clockTicks
			return u
		case <-t.C:
		}
	}
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ).
const clockTicks = 100

// proc is one line of /proc/PID/stat, in part.
type proc struct {
	pid, ppid int
	key       string // pid and start time: a process, even once its pid is reused
	ticks     int64  // utime + stime
	rssKiB    int64
}

// under reports whether p descends from pid.
func (p proc) under(pid int, procs map[int]proc) bool {
	for hops, q := 0, p; hops < 64; hops++ {
		if q.ppid == pid {
			return true
		}
		parent, ok := procs[q.ppid]
		if !ok {
			return false
		}
		q = parent
	}
	return false
}

var pageKiB = int64(os.Getpagesize() / 1024)

// readProcs reads every process's stat.
func readProcs() map[int]proc {
	out := map[int]proc{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name, in parentheses, may hold spaces: fields are
		// counted after its closing one (field 3, the state, comes first).
		end := bytes.LastIndexByte(b, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 22 {
			continue
		}
		num := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
		out[pid] = proc{pid: pid, ppid: int(num(4)), key: e.Name() + " " + f[22-3], ticks: num(14) + num(15), rssKiB: num(24) * pageKiB}
	}
	return out
}

// hwm is the process's peak resident size so far (VmHWM, KiB), or 0.
func hwm(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// fixed reports whether Add adds in the work tree or in any commit (ultra
// commits the fix on its run's branch, the peers leave it in the tree).
func fixed(dir string) bool {
	if b, err := os.ReadFile(filepath.Join(dir, "calc", "calc.go")); err == nil && bytes.Contains(b, []byte("return a + b")) {
		return true
	}
	revs, err := exec.Command("git", "-C", dir, "rev-list", "--all").Output()
	if err != nil {
		return false
	}
	args := append([]string{"-C", dir, "grep", "-q", "return a + b"}, strings.Fields(string(revs))...)
	return exec.Command("git", append(args, "--", "calc/calc.go")...).Run() == nil
}

// tail is the end of an agent's output, for a failure.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// project is BenchmarkFullCycle's project: calc, whose TestAdd fails until
// Add adds, and three packages with passing tests (17 tests in all).
func project() map[string]string {
	files := map[string]string{
		"go.mod":            "module example.com/calc\n\ngo 1.21\n",
		"calc/calc.go":      "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n",
	}
	for i := range 3 {
		p := fmt.Sprintf("util%d", i)
		files[p+"/"+p+".go"] = fmt.Sprintf("package %s\n\nfunc Double(n int) int { return 2 * n }\n", p)
		files[p+"/"+p+"_test.go"] = fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tfor i := 0; i < 1000; i++ {\n\t\tif Double(i) != i+i {\n\t\t\tt.Fatal(i)\n\t\t}\n\t}\n}\n\nfunc TestTable(t *testing.T) {\n\tfor _, c := range []int{1, 2, 3} {\n\t\tt.Run(\"case\", func(t *testing.T) {\n\t\t\tif Double(c) != 2*c {\n\t\t\t\tt.Fatal(c)\n\t\t\t}\n\t\t})\n\t}\n}\n", p)
	}
	return files
}

// makeRepo writes the project into a new git repository at dir.
func makeRepo(dir string) (string, error) {
	for name, body := range project() {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir, nil
}

// makeHome makes an agent's home: its own configuration, state and
// caches, with Go's telemetry off.
func makeHome(home string) error {
	tel := filepath.Join(home, ".config", "go", "telemetry")
	if err := os.MkdirAll(tel, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(tel, "mode"), []byte("off\n"), 0o644)
}

// baseEnv is every agent's environment: the caller's, without model or
// agent settings, with home as HOME and the caller's Go caches, so that
// every agent's go test finds the same warm build cache.
func baseEnv(home string, goEnv []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains([]string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "PWD", "GOCACHE", "GOMODCACHE", "GOPATH"}, name) {
			continue
		}
		skip := false
		for _, p := range []string{"OPENAI_", "ANTHROPIC_", "CLAUDE_", "OPENCODE_", "ULTRA_"} {
			skip = skip || strings.HasPrefix(name, p)
		}
		if !skip {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"NO_COLOR=1")
	return append(env, goEnv...)
}

// goCaches are the caller's Go cache settings, as environment entries.
func goCaches() ([]string, error) {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 3 {
		return nil, fmt.Errorf("go env: %q", out)
	}
	return []string{"GOCACHE=" + vals[0], "GOMODCACHE=" + vals[1], "GOPATH=" + vals[2]}, nil
}

// moduleDir is the root of this module's checkout.
func moduleDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", errors.New("run me inside ultra's module, or give ultra=PATH in -agents")
	}
	return filepath.Dir(mod), nil
}

// buildUltra builds ultra from this module into dir/bin.
func buildUltra(dir string) (string, error) {
	src, err := moduleDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bin", "ultra")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ultra")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building ultra: %v\n%s", err, out)
	}
	return bin, nil
}

// moduleCommit names the commit of this module's checkout, "+" marking
// uncommitted changes.
func moduleCommit() string {
	src, err := moduleDir()
	if err != nil {
		return ""
	}
	out, err := exec.Command("git", "-C", src, "describe", "--always", "--dirty=+", "--abbrev=7").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// agentVersion is the first line of `BIN --version`.
func agentVersion(bin string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "version unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// agentResult is one agent's measured runs.
type agentResult struct {
	name, version string
	agent         agent
	bin           string
	env           []string
	runs          []runResult
	failure       string
}

// summary holds the medians of an agent's runs.
type summary struct {
	wall, own, cpu     time.Duration
	agentCPU           time.Duration
	hwm, treeRSS       int64
	requests, sideReqs int
	bytes, sideBytes   int64
	answers            int
}

func summarize(runs []runResult, delay time.Duration) summary {
	med := func(f func(runResult) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	s := summary{
		wall:      time.Duration(med(func(r runResult) float64 { return float64(r.wall) })),
		cpu:       time.Duration(med(func(r runResult) float64 { return float64(r.cpu) })),
		agentCPU:  time.Duration(med(func(r runResult) float64 { return float64(r.agentCPU) })),
		hwm:       int64(med(func(r runResult) float64 { return float64(r.hwm) })),
		treeRSS:   int64(med(func(r runResult) float64 { return float64(r.treeRSS) })),
		requests:  int(med(func(r runResult) float64 { return float64(r.requests) })),
		sideReqs:  int(med(func(r runResult) float64 { return float64(r.sideRequests) })),
		bytes:     int64(med(func(r runResult) float64 { return float64(r.bytes) })),
		sideBytes: int64(med(func(r runResult) float64 { return float64(r.sideBytes) })),
		answers:   runs[0].answers,
	}
	s.own = s.wall - time.Duration(s.answers)*delay
	return s
}

// report prints the table of medians and the ratios of ultra to each peer.
func report(w io.Writer, results []*agentResult, n int, delay time.Duration) {
	fmt.Fprintf(w, "medians of %d runs, model answers after %d ms each\n\n", n, delay.Milliseconds())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	row("agent", "version", "wall", "model wait", "wall - wait", "cpu", "agent cpu", "peak RSS", "tree RSS", "requests", "sent")
	sums := map[string]summary{}
	for _, r := range results {
		if len(r.runs) < n {
			continue
		}
		s := summarize(r.runs, delay)
		sums[r.name] = s
		row(r.name, r.version, ms(s.wall), ms(time.Duration(s.answers)*delay), ms(s.own), ms(s.cpu), ms(s.agentCPU),
			mib(s.hwm), mib(s.treeRSS),
			plus(strconv.Itoa(s.requests), s.sideReqs, strconv.Itoa(s.sideReqs)), plus(kb(s.bytes), s.sideReqs, kb(s.sideBytes)))
	}
	if u, ok := sums["ultra"]; ok {
		for _, r := range results {
			p, ok := sums[r.name]
			if !ok || r.name == "ultra" {
				continue
			}
			row("ultra/"+r.name, "",
				ratio(float64(u.wall), float64(p.wall)), ratio(float64(u.answers), float64(p.answers)),
				ratio(float64(u.own), float64(p.own)), ratio(float64(u.cpu), float64(p.cpu)),
				ratio(float64(u.agentCPU), float64(p.agentCPU)),
				ratio(float64(u.hwm), float64(p.hwm)), ratio(float64(u.treeRSS), float64(p.treeRSS)),
				ratio(float64(u.requests+u.sideReqs), float64(p.requests+p.sideReqs)),
				ratio(float64(u.bytes+u.sideBytes), float64(p.bytes+p.sideBytes)))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, `
wall: start to exit. model wait: the answers of its script times the delay.
cpu: user+system of every process of the agent's tree, the tests included,
sampled every 10 ms; agent cpu: the agent process's alone. peak RSS: the
agent process's own (VmHWM); tree RSS: the largest sum of the tree's
resident sizes at one sample.
requests, sent: chat requests and their body bytes, main model+small model.`)
}

func plus(main string, side int, sideText string) string {
	if side == 0 {
		return main
	}
	return main + "+" + sideText
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

func kb(b int64) string { return fmt.Sprintf("%.1f kB", float64(b)/1000) }
