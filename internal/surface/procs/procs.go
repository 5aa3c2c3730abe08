// Package procs is what every surface (the TUI, the HTTP API and web
// page, the ACP agent) reads and does outside itself: it follows runs in
// the repository's store, and acts only by running ultra's own commands,
// each in its own process that outlives the surface. The command line is
// the one implementation of every action, with its checks; no surface
// keeps private state.
package procs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/tasks"
)

// Processes is what a surface reads and does outside itself: the store
// of the repository, and the ultra program at Program run in Dir.
type Processes struct {
	Store   *store.Store
	Program string
	Dir     string
	// Logs is where each command's output is written (a file per
	// command; the commands outlive the TUI, so not a pipe).
	Logs string
	Env  []string
}

// spawned numbers the commands this process starts, whatever Processes
// starts them (a fleet's worker makes one per job): with the time and
// the pid it makes each log's name new.
var spawned atomic.Int64

// Row is the run's row with its status as every command shows it
// (agent.ShownStatus): a run whose process is gone is interrupted. Its
// heartbeat is not read again here: the TUI reads the runtime row beside
// it (Runtime) and judges a silent live process by it (Model.live).
func (p *Processes) Row(ctx context.Context, id string) (*store.Run, error) {
	row, err := p.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	row.Status = agent.ShownStatus(row)
	return row, nil
}

func (p *Processes) EventsAfter(ctx context.Context, id string, seq int64, limit int) ([]store.StoredEvent, error) {
	return p.Store.EventsAfter(ctx, id, seq, limit)
}

func (p *Processes) Runtime(ctx context.Context, id string) (store.Runtime, error) {
	return p.Store.RuntimeOf(ctx, id)
}

// spawn starts ultra with args in its own session (a terminal's hangup
// or the surface's end does not reach it), stdin empty, output to a file
// (and its errors to a second one when split).
func (p *Processes) spawn(args []string, split bool) (*exec.Cmd, string, string, error) {
	if err := os.MkdirAll(p.Logs, 0o700); err != nil {
		return nil, "", "", err
	}
	// A link in its place (a repository can commit one) is refused: the
	// chmod and the files would land wherever it points.
	if fi, err := os.Lstat(p.Logs); err != nil || !fi.IsDir() {
		return nil, "", "", fmt.Errorf("%s is not a folder of ultra's state (a link?): remove it", p.Logs)
	}
	_ = os.Chmod(p.Logs, 0o700)
	base := filepath.Join(p.Logs, fmt.Sprintf("%s-%d-%d", time.Now().UTC().Format("20060102-150405"), os.Getpid(), spawned.Add(1)))
	// New files, never through a link.
	open := func(path string) (*os.File, error) {
		return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	}
	out, errPath := base+".log", ""
	f, err := open(out)
	if err != nil {
		return nil, "", "", err
	}
	defer f.Close()
	cmd := exec.Command(p.Program, args...)
	cmd.Dir = p.Dir
	cmd.Stdout, cmd.Stderr = f, f
	if split {
		errPath = base + ".err.log"
		ef, err := open(errPath)
		if err != nil {
			os.Remove(out)
			return nil, "", "", err
		}
		defer ef.Close()
		cmd.Stderr = ef
	}
	cmd.Env = p.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		os.Remove(out)
		if errPath != "" {
			os.Remove(errPath)
		}
		return nil, "", "", err
	}
	return cmd, out, errPath, nil
}

// finish waits for cmd and reads what it wrote to out.
func finish(cmd *exec.Cmd, out string) (string, int) {
	err := cmd.Wait()
	b, _ := os.ReadFile(out)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return string(b) + err.Error(), 1
	}
	_ = os.Remove(out)
	return string(b), code
}

func (p *Processes) Exec(ctx context.Context, args []string) (string, int) {
	cmd, out, _, err := p.spawn(args, false)
	if err != nil {
		return err.Error(), 1
	}
	return finish(cmd, out)
}

// Read runs `ultra ARGS` to its end, as Exec does (in its own process,
// which finishes its work even when the caller goes away), and returns
// its standard output and its errors apart: a --json command's output
// stays JSON whatever it warns of.
func (p *Processes) Read(ctx context.Context, args []string) (string, string, int) {
	cmd, out, errPath, err := p.spawn(args, true)
	if err != nil {
		return "", err.Error(), 1
	}
	text, code := finish(cmd, out)
	b, _ := os.ReadFile(errPath)
	_ = os.Remove(errPath)
	return text, string(b), code
}

// EventsSince reads every run's events after place row (the web surface's
// stream of everything).
func (p *Processes) EventsSince(ctx context.Context, row int64, limit int) ([]store.StoredEvent, error) {
	return p.Store.EventsSince(ctx, row, limit)
}

// LastRow is the place of the latest event of any run.
func (p *Processes) LastRow(ctx context.Context) (int64, error) { return p.Store.LastRow(ctx) }

// LastSeq is the number of the run's latest event.
func (p *Processes) LastSeq(ctx context.Context, id string) (int64, error) {
	return p.Store.LastSeq(ctx, id)
}

// Start reads the command's JSON lines until one names the run.
func (p *Processes) Start(ctx context.Context, args []string) (string, func() (string, int), error) {
	cmd, out, _, err := p.spawn(args, false)
	if err != nil {
		return "", nil, err
	}
	exited := make(chan struct{})
	var text string
	var code int
	go func() { text, code = finish(cmd, out); close(exited) }()
	wait := func() (string, int) { <-exited; return text, code }
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if id := runIn(out); id != "" {
			return id, wait, nil
		}
		select {
		case <-exited:
			if id := runOf(text); id != "" {
				return id, wait, nil
			}
			return "", wait, fmt.Errorf("ultra %s: %s", strings.Join(args, " "), FirstLines(text, 12))
		case <-ctx.Done():
			return "", wait, ctx.Err()
		case <-tick.C:
		}
	}
}

// runIn is the run named by the first event in the file at path.
func runIn(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if id := runOf(sc.Text()); id != "" {
			return id
		}
	}
	return ""
}

// runOf finds the run of the first JSON event line in text.
func runOf(text string) string {
	for _, l := range strings.Split(text, "\n") {
		var e struct {
			Run string `json:"run"`
		}
		if strings.HasPrefix(l, "{") && json.Unmarshal([]byte(l), &e) == nil && e.Run != "" {
			return e.Run
		}
	}
	return ""
}

// MaxArg is the longest text a surface passes to ultra's command as one
// argument (a task, a question, a prompt): the kernel takes none over
// 128 KiB, and a longer one is refused by size before it is tried.
const MaxArg = 100 << 10

// FirstLines keeps what a person reads of a command's output: its lines
// that are not events.
func FirstLines(text string, n int) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(l, "{") {
			continue
		}
		keep = append(keep, l)
		if len(keep) == n {
			break
		}
	}
	return strings.Join(keep, "\n")
}

func (p *Processes) Tasks(ctx context.Context, all bool) ([]tasks.Row, error) {
	args := []string{"tasks", "--json"}
	if all {
		args = append(args, "--all")
	}
	out, code := p.Exec(ctx, args)
	if code != 0 {
		return nil, fmt.Errorf("ultra tasks: %s", strings.TrimSpace(out))
	}
	var v struct {
		Tasks []tasks.Row `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return nil, fmt.Errorf("ultra tasks --json: %v", err)
	}
	return v.Tasks, nil
}
