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
		calls(call("review", map[string]any{"verdict": "APPROVE", "architecture": map[string]any{"status": "CLEAR"}})),
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
