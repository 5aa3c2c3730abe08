package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/goal"
)

// The desktop channel: the program under test runs on a private X server
// (Xvfb, no TCP, its display number chosen by the server among those free
// in the check's /tmp), xdotool gives it input, ImageMagick's import takes
// the screenshots and tesseract reads the screen's text.
//
// Every check plays its steps up to three times, each on a new X server
// that is stopped (with everything on it) before the next starts:
//
//  1. the control on an empty desktop: the same steps with no program
//     started. What the screen shows then is the X server's alone;
//     expectations it meets prove nothing about the program.
//  2. the check itself: the program, then the steps.
//  3. the control without the input: the program again, its input steps
//     (click, click_at, type, key) replaced by a pause as long as each took
//     in the check, each wait_text as long as it took in the check and a
//     second more, expect_text as in the check. When every
//     expect after the first input is met anyway, the program shows it
//     whatever the input: the check cannot tell the input worked. Run only
//     when the check passed and has an expect after an input.
//
// A control that meets every expect it judges is a failed assertion, as
// tmux's echo control is.

// DesktopTool is a program the desktop channel needs.
type DesktopTool struct {
	Name    string // the program: Xvfb, xdotool, import, tesseract
	Package string // the Debian package that has it
	Path    string // where it is, "" when missing
}

// DesktopTools finds the desktop channel's programs in PATH.
func DesktopTools() []DesktopTool {
	ts := []DesktopTool{{Name: "Xvfb", Package: "xvfb"}, {Name: "xdotool", Package: "xdotool"},
		{Name: "import", Package: "imagemagick"}, {Name: "tesseract", Package: "tesseract-ocr"}}
	for i := range ts {
		ts[i].Path, _ = exec.LookPath(ts[i].Name)
	}
	return ts
}

// DesktopMissing says which of the desktop channel's programs are missing
// here and how to install them, or "".
func DesktopMissing() string { return desktopMissing(DesktopTools()) }

// desktopMissing says which desktop tools are missing and how to install
// them, or "".
func desktopMissing(ts []DesktopTool) string {
	var names, pkgs []string
	for _, t := range ts {
		if t.Path == "" {
			names, pkgs = append(names, t.Name), append(pkgs, t.Package)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("%s not found: apt-get install %s", strings.Join(names, ", "), strings.Join(pkgs, " "))
}

const (
	// xStart bounds the X server's start.
	xStart = 10 * time.Second
	// controlSettle is how long the empty-desktop control lets each step
	// take effect before it reads the screen.
	controlSettle = 300 * time.Millisecond
	// controlSlack is how much longer than the check the control without
	// the input waits for an expect (the screen is read about every
	// 0.5 s).
	controlSlack = time.Second
)

// desk is one X server of a desktop check and the tools that drive it.
type desk struct {
	s       *sup
	tools   map[string]string
	display string // ":N"
	server  *program
	prog    *program
	dir     string // where the captures go
	n       int    // captures taken
	log     *strings.Builder
	began   time.Time
}

// desktopRun is what one play of the steps found.
type desktopRun struct {
	all   bool            // every expect judged was met
	judge int             // expects judged
	took  []time.Duration // each step's time
	last  *screen
}

// desktop runs the desktop check: the empty-desktop control, the check,
// the control without the input.
func (s *sup) desktop(ctx context.Context) {
	c := s.in.Check
	ts := DesktopTools()
	tools := map[string]string{}
	for _, t := range ts {
		if p := s.in.Desktop[t.Name]; p != "" {
			t.Path = p
		}
		tools[t.Name] = t.Path
	}
	var log strings.Builder
	var shots []artifact
	s.render = append(s.render, func() {
		s.rep.Artifacts = append(s.rep.Artifacts, artifact{Name: "desktop-actions.txt", Data: []byte(log.String())})
		s.rep.Artifacts = append(s.rep.Artifacts, shots...)
	})
	if why := desktopMissing(ts); why != "" {
		s.block(why, "")
		return
	}
	// Only the check's own display is named to what it starts.
	var base []string
	for _, kv := range s.env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "DISPLAY" && k != "XAUTHORITY" && k != "WAYLAND_DISPLAY" {
			base = append(base, kv)
		}
	}
	s.env = base
	w, h := goal.DesktopSize(c)
	shot := func(name string, sc *screen) {
		if sc != nil && len(sc.png) > 0 {
			shots = append(shots, artifact{Name: name, Data: sc.png})
			fmt.Fprintf(&log, "screenshot: %s (%d bytes)\n", name, len(sc.png))
		}
	}

	fmt.Fprintf(&log, "=== control: the same steps on an empty desktop (no program)\n")
	d, ok := s.openDesk(ctx, tools, w, h, "", &log)
	if !ok {
		return
	}
	ctl := d.play(ctx, nil, &shots)
	shot("desktop-control-empty.png", ctl.last)
	if !s.closeDesk(d) || s.outOfTime(ctx, "in the control on an empty desktop") {
		return
	}
	if ctl.all && ctl.judge > 0 {
		s.rep.Observed = fmt.Sprintf("desktop %dx%d: the empty desktop met every expect", w, h)
		s.rep.Assertions = append(s.rep.Assertions, assertion{Name: "control (the same steps on an empty desktop)", Want: "meets no expect",
			Got: "every expect is met by a desktop with no program on it"})
		return
	}

	fmt.Fprintf(&log, "\n=== check: the program, then the steps\n")
	d, ok = s.openDesk(ctx, tools, w, h, c.Start, &log)
	if !ok {
		return
	}
	run := d.play(ctx, []time.Duration{}, &shots)
	shot("desktop.png", run.last)
	if !s.closeDesk(d) || s.outOfTime(ctx, "in the check's steps") || s.rep.Blocked != "" {
		return
	}
	failed := false
	for _, a := range s.rep.Assertions {
		failed = failed || !a.OK
	}
	ran := len(run.took) // the steps done
	if failed && ran < len(c.Steps) {
		ran++ // and the one that failed
	}
	s.rep.Observed = fmt.Sprintf("desktop %dx%d: %d of %d steps run", w, h, ran, len(c.Steps))
	first := -1
	for i, st := range c.Steps {
		if goal.DesktopInput(st) {
			first = i
			break
		}
	}
	after := false
	for i, st := range c.Steps {
		after = after || (i > first && st.WaitText != "")
	}
	after = first >= 0 && (after || c.ExpectText != "")
	if failed || !after {
		if !failed {
			fmt.Fprintf(&log, "\n=== control without the input: not run (no expect follows an input step)\n")
		}
		return
	}

	fmt.Fprintf(&log, "\n=== control: the program without the input (each input step replaced by a pause as long as it took)\n")
	d, ok = s.openDesk(ctx, tools, w, h, c.Start, &log)
	if !ok {
		return
	}
	idle := d.play(ctx, run.took, &shots)
	shot("desktop-control-idle.png", idle.last)
	if !s.closeDesk(d) || s.outOfTime(ctx, "in the control without the input") {
		return
	}
	if idle.all && idle.judge > 0 {
		s.rep.Assertions = append(s.rep.Assertions, assertion{Name: "control (the program without the input steps)", Want: "meets no expect after an input",
			Got: "every expect after an input is met without the input: the program shows it by itself"})
	}
}

// outOfTime blocks the check when its time ran out: what a desktop showed
// until then decides nothing (a control cut short proves nothing either
// way).
func (s *sup) outOfTime(ctx context.Context, doing string) bool {
	if ctx.Err() == nil {
		return false
	}
	s.timedOut(doing, "")
	return true
}

// openDesk starts an X server and, when start is set, the program on it.
func (s *sup) openDesk(ctx context.Context, tools map[string]string, w, h int, start string, log *strings.Builder) (*desk, bool) {
	dir, err := s.tempDir("ultra-check-desktop-")
	if err != nil {
		s.block("creating the desktop's directory", err.Error())
		return nil, false
	}
	d := &desk{s: s, tools: tools, dir: dir, log: log, began: time.Now()}
	// -displayfd 1: the server picks a free display and prints its number.
	d.server, err = s.start("X server", fmt.Sprintf("exec %s -displayfd 1 -nolisten tcp -noreset -screen 0 %dx%dx24",
		shellQuote(tools["Xvfb"]), w, h))
	if err != nil {
		s.block("the X server did not start", err.Error())
		return d, false
	}
	end := time.Now().Add(xStart)
	for {
		if out := d.server.stdout.String(); strings.HasSuffix(out, "\n") {
			n, err := strconv.Atoi(strings.TrimSpace(out))
			if err != nil {
				s.block("the X server printed no display number", excerpt(out, 80))
				return d, false
			}
			d.display = ":" + strconv.Itoa(n)
			break
		}
		if d.server.done() || time.Now().After(end) || ctx.Err() != nil {
			if ctx.Err() != nil {
				s.timedOut("starting the X server", "")
			} else {
				s.block(fmt.Sprintf("the X server did not start within %s", xStart), d.server.outputTail(300))
			}
			return d, false
		}
		time.Sleep(pollEvery)
	}
	s.rep.Started = append(s.rep.Started, fmt.Sprintf("Xvfb display %s (%dx%d, no TCP)", d.display, w, h))
	fmt.Fprintf(log, "X server: Xvfb %s %dx%d (pgid %d)\n", d.display, w, h, d.server.pid)
	if start == "" {
		return d, true
	}
	env := s.env
	s.env = append(append([]string(nil), env...), "DISPLAY="+d.display)
	d.prog, err = s.start("program", start)
	s.env = env
	if err != nil {
		s.block("the program did not start", err.Error())
		return d, false
	}
	fmt.Fprintf(log, "$ DISPLAY=%s %s -c %s (pgid %d)\n", d.display, s.shell, strconv.Quote(start), d.prog.pid)
	return d, true
}

// closeDesk stops the program and the X server, then finds what outlived
// them (a leftover). It reports whether the check may go on.
func (s *sup) closeDesk(d *desk) bool {
	if d == nil {
		return false
	}
	if d.prog != nil {
		s.stop(d.prog)
		fmt.Fprintf(d.log, "program stopped: %s\n", orRunning(d.prog.status()))
	}
	if d.server != nil {
		s.stop(d.server)
		sock := filepath.Join("/tmp/.X11-unix", "X"+strings.TrimPrefix(d.display, ":"))
		gone := ""
		if d.display != "" {
			if _, err := os.Lstat(sock); errors.Is(err, os.ErrNotExist) {
				gone = "; its socket is gone"
			} else {
				s.leftover(leftover{What: "the X server's socket " + sock + " is still there after it stopped"})
			}
		}
		fmt.Fprintf(d.log, "X server %s stopped%s\n", d.display, gone)
	}
	fmt.Fprintf(d.log, "this desktop took %s (%d screen captures)\n", time.Since(d.began).Round(time.Millisecond), d.n)
	before := len(s.rep.Leftovers)
	s.sweep()
	if len(s.rep.Leftovers) > before {
		fmt.Fprintf(d.log, "leftovers after this desktop: %d (killed)\n", len(s.rep.Leftovers)-before)
	}
	return len(s.rep.Leftovers) == 0
}

// play runs the check's steps on d and judges its expects. took nil: the
// empty-desktop control (input steps are tried once, each expect read
// once after controlSettle). took empty: the check itself (it records
// each step's time; a failed step or expect is an assertion and ends the
// play). took full: the control without the input (each input step is a
// pause of its time in the check; only the expects after the first input
// are judged).
func (d *desk) play(ctx context.Context, took []time.Duration, shots *[]artifact) desktopRun {
	s, c, log := d.s, d.s.in.Check, d.log
	control, idle := took == nil, len(took) > 0
	run := desktopRun{all: true}
	judge := func(name, pattern string, sc *screen) {
		a := matches(name, pattern, sc.text)
		fmt.Fprintf(log, "%s\n", renderAssertion(a))
		run.judge++
		run.all = run.all && a.OK
		if !control && !idle {
			s.rep.Assertions = append(s.rep.Assertions, a)
		}
	}
	began := time.Now()
	inputSeen := false
	for i, st := range c.Steps {
		stepBegan := time.Now()
		what := desktopStepText(st)
		if idle && goal.DesktopInput(st) {
			inputSeen = true
			time.Sleep(took[i])
			fmt.Fprintf(log, "step %d %s → skipped (paused %s)\n", i+1, what, took[i].Round(time.Millisecond))
			continue
		}
		var err error
		switch {
		case st.Click != "":
			var sc *screen
			sc, err = d.find(ctx, st.Click, !control)
			if err == nil {
				err = d.xdo("mousemove", "--sync", strconv.Itoa(sc.x), strconv.Itoa(sc.y), "click", "1")
				what += fmt.Sprintf(" at (%d, %d)", sc.x, sc.y)
			}
		case st.ClickAt != nil:
			err = d.xdo("mousemove", "--sync", strconv.Itoa(st.ClickAt.X), strconv.Itoa(st.ClickAt.Y), "click", "1")
		case st.Type != nil:
			err = d.xdo("type", "--delay", "20", "--", st.Type.Text)
		case st.Key != "":
			err = d.xdo(append([]string{"key", "--delay", "20", "--"}, strings.Fields(st.Key)...)...)
		case st.Screenshot && control:
			// Nothing keeps it, and the empty desktop shows nothing new.
		case st.Screenshot:
			var sc *screen
			if sc, err = d.capture(); err == nil && !idle {
				name := fmt.Sprintf("desktop-step%d.png", i+1)
				*shots = append(*shots, artifact{Name: name, Data: sc.png})
				what += " → " + name
			}
		case st.WaitText != "":
			if idle && !inputSeen {
				// Before any input the control waits as the check did,
				// judging nothing.
				_, _ = d.waitText(ctx, st.WaitText, stepTimeout)
				fmt.Fprintf(log, "step %d %s → waited (not judged: before any input)\n", i+1, what)
				continue
			}
			wait := stepTimeout
			switch {
			case control:
				time.Sleep(controlSettle)
				wait = 0
			case idle:
				// The same time from the program's start as the check took
				// to see it, and a little more: what did not come from the
				// input shows by then here too.
				wait = min(stepTimeout, took[i]+controlSlack)
			}
			sc, err := d.waitText(ctx, st.WaitText, wait)
			if err != nil {
				fmt.Fprintf(log, "step %d %s → reading the screen failed: %v\n", i+1, what, err)
				s.block(fmt.Sprintf("step %d: reading the screen failed", i+1), err.Error())
				return run
			}
			run.last = sc
			fmt.Fprintf(log, "step %d %s (+%s): ", i+1, what, time.Since(began).Round(time.Millisecond))
			judge(fmt.Sprintf("step %d wait_text", i+1), st.WaitText, sc)
			if !run.all && !control {
				// The check failed, or the control found an expect the
				// program does not meet by itself: the rest cannot change
				// the outcome.
				d.notRun(i + 1)
				return run
			}
			if !idle {
				run.took = append(run.took, time.Since(stepBegan))
			}
			continue
		}
		if ctx.Err() != nil {
			fmt.Fprintf(log, "step %d %s → the check's time ran out\n", i+1, what)
			s.timedOut(fmt.Sprintf("at desktop step %d (%s)", i+1, what), "")
			return run
		}
		if err != nil {
			fmt.Fprintf(log, "step %d %s → failed (+%s): %v\n", i+1, what, time.Since(began).Round(time.Millisecond), err)
			if control || idle {
				continue
			}
			s.rep.Assertions = append(s.rep.Assertions, assertion{Name: fmt.Sprintf("step %d %s", i+1, desktopStepText(st)), Want: "done", Got: excerpt(err.Error(), 160)})
			run.all = false
			d.notRun(i + 1)
			return run
		}
		fmt.Fprintf(log, "step %d %s → ok (+%s)\n", i+1, what, time.Since(began).Round(time.Millisecond))
		if control {
			time.Sleep(controlSettle)
		}
		if !idle {
			run.took = append(run.took, time.Since(stepBegan))
		}
	}
	sc, err := d.capture()
	if err != nil {
		fmt.Fprintf(log, "reading the screen at the end failed: %v\n", err)
		s.block("reading the screen at the end failed", err.Error())
		return run
	}
	run.last = sc
	fmt.Fprintf(log, "--- screen text at the end\n%s", withNewline(sc.text))
	if c.ExpectText != "" {
		judge("expect_text", c.ExpectText, sc)
	}
	return run
}

// notRun logs the steps after step n as not run.
func (d *desk) notRun(n int) {
	for j := n; j < len(d.s.in.Check.Steps); j++ {
		fmt.Fprintf(d.log, "step %d: not run\n", j+1)
	}
}

// find reads the screen until it shows text (wait: up to a step's time;
// else once) and returns the screen with the point at the text's middle.
func (d *desk) find(ctx context.Context, text string, wait bool) (*screen, error) {
	end := time.Now().Add(stepTimeout)
	for {
		sc, err := d.capture()
		if err != nil {
			return nil, err
		}
		if x, y, ok := sc.locate(text); ok {
			sc.x, sc.y = x, y
			return sc, nil
		}
		if !wait || ctx.Err() != nil || time.Now().After(end) {
			return nil, fmt.Errorf("%s is not on the screen; it shows: %s", strconv.Quote(text), excerpt(sc.text, 120))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitText reads the screen until pattern matches its text or wait is
// over (0: once).
func (d *desk) waitText(ctx context.Context, pattern string, wait time.Duration) (*screen, error) {
	re := regexp.MustCompile("(?m)" + pattern) // validated
	end := time.Now().Add(wait)
	for {
		sc, err := d.capture()
		if err != nil || re.MatchString(sc.text) || ctx.Err() != nil || time.Now().After(end) {
			return sc, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// xdo runs xdotool on the desktop.
func (d *desk) xdo(args ...string) error {
	_, err := d.tool("xdotool", args...)
	return err
}

// tool runs one of the desktop's tools on its display, within a step's
// time.
func (d *desk) tool(name string, args ...string) ([]byte, error) {
	cctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, d.tools[name], args...)
	cmd.Env = append(append([]string(nil), d.s.env...), "DISPLAY="+d.display)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", name, args[0], err, excerpt(stderr.String(), 200))
	}
	return stdout.Bytes(), nil
}

// desktopStepText is a step as the action log names it.
func desktopStepText(st goal.Step) string {
	switch {
	case st.Click != "":
		return "click " + strconv.Quote(st.Click)
	case st.ClickAt != nil:
		return fmt.Sprintf("click_at (%d, %d)", st.ClickAt.X, st.ClickAt.Y)
	case st.Type != nil:
		return "type " + strconv.Quote(st.Type.Text)
	case st.Key != "":
		return "key " + strconv.Quote(st.Key)
	case st.WaitText != "":
		return "wait_text " + strconv.Quote(st.WaitText)
	case st.Screenshot:
		return "screenshot"
	}
	return "(no action)"
}

// shellQuote quotes s for the shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
